"""The cost-weight sweep (experiments/cost_sweep/sweep.py): its commands (one shared warm-up), the points
and front from hand-made rows, and a tiny end-to-end run (1 GRPO step per weight, 2 questions)."""

from __future__ import annotations

import shlex

import pytest
from installed import needs
from training_fixtures import data_files, tiny_model

from experiments.cost_sweep.sweep import main, points_table, sweep_figure, sweep_title

pytestmark = needs("trl")

RECIPE = "training/recipes/sim-routing.yaml"


@pytest.mark.slow
def test_dry_run_trains_every_weight_from_one_warmup(tmp_path, capsys):
    out = tmp_path / "sweep"
    assert main([RECIPE, "--weights", "0,0.2,0.4", "--out", str(out), "--dry_run", "--max_steps", "5"]) is None
    lines = capsys.readouterr().out.splitlines()
    commands = [shlex.split(line.removeprefix("would run: ")) for line in lines if line.startswith("would run: ")]
    warmup, *runs = commands
    assert len(runs) == 3 and not (out / "warmup-run").exists()  # nothing ran
    assert warmup[warmup.index("--output_dir") + 1] == str(out / "warmup-run") and "--cost_weight" not in warmup
    for weight, run in zip(["0", "0.2", "0.4"], runs, strict=True):
        assert run[run.index("--model_name_or_path") + 1] == str(out / "warmup-run" / "warmup")
        assert run[run.index("--format_warmup_steps") + 1] == "0" and run[run.index("--cost_weight") + 1] == weight
        assert run[run.index("--output_dir") + 1] == str(out / f"cost-w{weight}") and "--max_steps" in run
    plan = lines[-1]
    assert "conductor w=0.2" in plan and "sim/premium" in plan and "first 40 each" in plan


def test_an_existing_warmup_model_replaces_the_warmup_run(tmp_path, capsys):
    warm = tmp_path / "warm"
    with pytest.raises(SystemExit, match="no model there"):
        main([RECIPE, "--warmup", str(warm), "--out", str(tmp_path / "s"), "--dry_run"])
    warm.mkdir()
    (warm / "config.json").write_text("{}")
    main([RECIPE, "--weights", "0,0.1,0.3", "--warmup", str(warm), "--out", str(tmp_path / "s"), "--dry_run"])
    commands = [shlex.split(line.removeprefix("would run: ")) for line in capsys.readouterr().out.splitlines()
                if line.startswith("would run: ")]  # fmt: skip
    assert len(commands) == 3 and all(c[c.index("--model_name_or_path") + 1] == str(warm) for c in commands)


@pytest.mark.parametrize("weights", ["0,0.5", "0,0,0.1", "a,b", ""])
def test_bad_weights_are_refused(weights, tmp_path):
    with pytest.raises(SystemExit, match="--weights"):
        main([RECIPE, "--weights", weights, "--out", str(tmp_path), "--dry_run"])


def test_points_and_front_from_rows(tmp_path):
    def rows(label, task, scores, cost):
        return [{"label": label, "task": task, "score": s, "cost_usd": cost, "agent_calls": 1} for s in scores]

    data = (
        rows("cheap", "math", [1, 0], 0.001)
        + rows("cheap", "mmlu", [0, 0], 0.001)  # 25 %
        + rows("dominated", "math", [0, 0], 0.002)
        + rows("dominated", "mmlu", [1, 0], 0.002)  # 25 %, dearer
        + rows("premium", "math", [1, 1], 0.03)
        + rows("premium", "mmlu", [1, 0], 0.03)  # 75 %
        + rows("conductor w=0.1", "math", [1, 1], 0.0005)
        + rows("conductor w=0.1", "mmlu", [1, 1], 0.0005)
    )
    found = [{"label": n, "kind": "single worker", "weight": None} for n in ("cheap", "dominated", "premium")]
    found.append({"label": "conductor w=0.1", "kind": "conductor", "weight": 0.1})
    points = points_table(data, found).set_index("label")
    assert points["accuracy"].to_dict() == {"cheap": 25.0, "conductor w=0.1": 100.0, "dominated": 25.0,
                                            "premium": 75.0}  # fmt: skip
    assert points.loc["premium", "cost"] == pytest.approx(0.03)
    assert points["on_front"].to_dict() == {
        "cheap": True,
        "conductor w=0.1": False,
        "dominated": False,
        "premium": True,
    }  # the front is the single workers' only
    fig = sweep_figure(points.reset_index(), "test")
    assert fig.axes[0].get_xscale() == "log"  # 0.0005 .. 0.03 USD
    fig.savefig(tmp_path / "plot.png")


@pytest.mark.slow
def test_tiny_sweep_end_to_end(tmp_path):
    """Warm-up once, 1 GRPO step for each of two weights, held-out evals of 2 questions each."""
    files = data_files(tmp_path)
    recipe = tmp_path / "tiny.yaml"
    recipe.write_text(
        "recipe_name: tiny-sweep\npool: sim\nmixture: math=4,mmlu=4,rlpr=0\nfew_shot: none\nworkflow_max_steps: 2\n"
        "format_warmup_steps: 1\nformat_warmup_form: true\nmax_concurrency: 4\ndtype: float32\nuse_cpu: true\n"
        "seed: 0\nmax_steps: 1\nper_device_train_batch_size: 4\nnum_generations: 2\nmax_completion_length: 8\n"
        "learning_rate: 1.0e-3\nbeta: 0.0\nlogging_steps: 1\nsave_strategy: 'no'\nreport_to: none\n"
    )
    out = tmp_path / "sweep"
    data = [a for k, v in files.items() for a in (f"--{k}", v)]
    extra = ["--model_name_or_path", tiny_model(tmp_path / "model"), *data]
    points = main([str(recipe), "--weights", "0,0.25", "--out", str(out), "--limit", "2", *extra])
    assert {"conductor w=0", "conductor w=0.25", "sim/premium", "sim/mediocre"} <= set(points["label"])
    assert (out / "cost-w0.25" / "run_info.json").is_file() and (out / "accuracy-cost.png").is_file()
    assert (out / "points.csv").read_text().count("\n") == len(points) + 1
    assert not list(out.glob("warmup-run/checkpoint-*"))  # the warm-up run saves only its warm-up


def test_the_plot_of_a_simulated_pool_says_simulation():
    assert sweep_title("sim", "always", "sim-routing", 40).startswith("SIMULATION - cost-weight sweep, pool sim")
    assert "SIMULATION" not in sweep_title("local", "always", "cpu-smoke", 40)


def test_a_bad_run_file_stops_the_sweep_before_anything_trains(tmp_path, monkeypatch):
    """A weight's run_info.json that is not JSON: named when first read, before any training ran."""
    import experiments.cost_sweep.sweep as sweep

    ran = []
    monkeypatch.setattr(sweep.subprocess, "run", lambda *a, **k: ran.append(a))
    warm = tmp_path / "warm"
    warm.mkdir()
    (warm / "config.json").write_text("{}")
    out = tmp_path / "sweep"
    (out / "cost-w0.1").mkdir(parents=True)
    (out / "cost-w0.1" / "run_info.json").write_text('{"global_step": 6')
    with pytest.raises(SystemExit, match=r"cost-w0.1/run_info.json: not JSON \(.*\); fix it or move the run folder"):
        main([RECIPE, "--weights", "0,0.1", "--warmup", str(warm), "--out", str(out)])
    assert ran == []
