"""The routing diagnostic: cosines of worker-choice gradients within and across question forms."""

from __future__ import annotations

import pytest
from training_fixtures import data_files, tiny_model

from experiments.sim_routing.coupling import coupling, decision_prefix


def test_coupling_of_known_gradients():
    torch = pytest.importorskip("torch")
    x, y = torch.tensor([1.0, 0.0]), torch.tensor([0.0, 1.0])
    same = coupling({"math": [x, x], "mmlu": [x, 2 * x]})
    assert same == pytest.approx({"within": 1.0, "across": 1.0, "mean_gradients": 1.0})
    apart = coupling({"math": [x, x], "mmlu": [y, y]})
    assert apart == pytest.approx({"within": 1.0, "across": 0.0, "mean_gradients": 0.0})


def test_decision_prefixes_end_where_the_worker_is_chosen():
    assert decision_prefix("P ", "choice", "lists") == "P The question is multiple choice.\nmodel_id = ["
    assert decision_prefix("P ", "math", "worker") == "P The question asks for a value: "
    with pytest.raises(ValueError, match="layout must be one of lists, worker"):
        decision_prefix("P", "math", "other")


def test_coupling_runs_on_a_tiny_model(tmp_path):
    pytest.importorskip("trl")
    from experiments.sim_routing.coupling import main

    recipe = tmp_path / "tiny.yaml"
    recipe.write_text("pool: sim\nmixture: math=4,mmlu=4\nsubstitute: ''\nfew_shot: none\ndtype: float32\n"
                      "use_cpu: true\nreport_to: none\n")  # fmt: skip
    files = data_files(tmp_path)
    argv = [str(recipe), "--model_name_or_path", tiny_model(tmp_path / "model"), "--output_dir", str(tmp_path / "o"),
            "--per_domain", "2", *[a for k, v in files.items() for a in (f"--{k}", v)]]  # fmt: skip
    out = main(argv)
    assert set(out) == {"lists", "worker"}
    for values in out.values():
        assert set(values) == {"within", "across", "mean_gradients"}
        assert all(-1.0 <= v <= 1.0 + 1e-6 for v in values.values())
        assert values["across"] < 1.0 - 1e-6  # different prompts, different gradients
