"""experiments/seeds/checkpoint_routing.py: which saved models of a run it reads, in training order."""

from __future__ import annotations

import pytest

pytest.importorskip("pandas")

from experiments.seeds.checkpoint_routing import routing_table, saved_models  # noqa: E402


def test_saved_models_are_the_warmup_then_checkpoints_by_step_then_the_final_model(tmp_path):
    for folder in ("warmup", "checkpoint-5", "checkpoint-30", "checkpoint-25", "checkpoint-x", "."):
        (tmp_path / folder).mkdir(exist_ok=True)
        (tmp_path / folder / "config.json").write_text("{}")
    labels = [label for label, _ in saved_models(tmp_path)]
    assert labels == ["warm-up", "step 5", "step 25", "step 30", "final"]


def test_a_run_without_a_final_model_or_warmup_lists_its_checkpoints_only(tmp_path):
    (tmp_path / "checkpoint-10").mkdir()
    assert [label for label, _ in saved_models(tmp_path)] == ["step 10"]


def test_only_a_label_the_run_lacks_is_refused_by_name(tmp_path):
    (tmp_path / "checkpoint-10").mkdir()
    (tmp_path / "checkpoint-10" / "config.json").write_text("{}")
    with pytest.raises(SystemExit, match="no saved model labelled 'warm-up'"):
        routing_table(tmp_path, 4, only="warm-up")


def test_a_run_naming_a_recipe_outside_the_bundled_ones_is_refused(tmp_path):
    from experiments.seeds.checkpoint_routing import prompts

    (tmp_path / "run_info.json").write_text('{"recipe": "../../etc/passwd"}')
    with pytest.raises(SystemExit, match="not one of training/recipes"):
        prompts(tmp_path, 1)
