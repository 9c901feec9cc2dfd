"""One output_dir holds one run: a fresh run refuses a non-empty one (its logs would append to the
old run's), unless it resumes or `--overwrite_output_dir true` moves the old run aside."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from installed import needs
from test_training_train import TINY_RECIPE, data_args
from training_fixtures import data_files, tiny_model

from training.train import main

pytestmark = needs("trl")

OLD_ROW = {"step": 1, "reward": 0.123, "old_run": True}


@pytest.fixture
def setup(tmp_path):
    recipe = tmp_path / "tiny.yaml"
    recipe.write_text(TINY_RECIPE)
    out = tmp_path / "run"
    out.mkdir()
    (out / "metrics.jsonl").write_text(json.dumps(OLD_ROW) + "\n")  # an earlier run's log
    (out / "rollouts.jsonl").write_text(json.dumps({**OLD_ROW, "completion": "old"}) + "\n")
    argv = [str(recipe), "--output_dir", str(out), "--max_steps", "1", "--save_strategy", "no",
            *data_args(data_files(tmp_path))]  # fmt: skip
    return {"argv": argv, "out": out, "root": tmp_path}


def test_a_fresh_run_refuses_a_non_empty_output_dir(setup):
    out = setup["out"]
    before = {p.name: p.read_text() for p in out.iterdir()}
    with pytest.raises(SystemExit, match=f"{out}.*not empty.*--overwrite_output_dir true.*--resume_from_checkpoint"):
        main([*setup["argv"], "--model_name_or_path", tiny_model(setup["root"] / "model")])
    assert {p.name: p.read_text() for p in out.iterdir()} == before  # nothing written, nothing moved


def test_a_dry_run_checks_the_output_dir_too(setup):
    with pytest.raises(SystemExit, match="not empty"):
        main([*setup["argv"], "--dry_run", "true"])
    info = main([*setup["argv"], "--dry_run", "true", "--overwrite_output_dir", "true"])
    assert info["dry_run"] and (setup["out"] / "metrics.jsonl").is_file()  # a dry run moves nothing


@pytest.mark.slow
def test_overwrite_moves_the_old_run_aside_and_logs_only_the_new_one(setup):
    out = setup["out"]
    info = main([*setup["argv"], "--model_name_or_path", tiny_model(setup["root"] / "model"),
                 "--overwrite_output_dir", "true"])  # fmt: skip
    assert info["global_step"] == 1
    [old] = setup["root"].glob("run.replaced-*")
    assert info["replaced"] == [str(old)]
    assert json.loads((old / "metrics.jsonl").read_text()) == OLD_ROW  # kept, out of the way
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert rows and not any(r.get("old_run") for r in rows)
    rollouts = [json.loads(line) for line in (out / "rollouts.jsonl").read_text().splitlines()]
    assert len(rollouts) == 4 and not any(r.get("old_run") for r in rollouts)


def test_a_rollout_log_outside_the_output_dir_is_one_run_too(setup, tmp_path):
    log = tmp_path / "elsewhere.jsonl"
    log.write_text(json.dumps(OLD_ROW) + "\n")
    fresh = [a if a != str(setup["out"]) else str(tmp_path / "new") for a in setup["argv"]]
    with pytest.raises(SystemExit, match=f"{log}.*not empty"):
        main([*fresh, "--dry_run", "true", "--rollout_log", str(log)])


def test_an_empty_output_dir_is_fresh(tmp_path, setup):
    empty = tmp_path / "empty"
    empty.mkdir()
    argv = [a if a != str(setup["out"]) else str(empty) for a in setup["argv"]]
    assert main([*argv, "--dry_run", "true"])["dry_run"]


def test_a_resumed_run_may_use_its_own_output_dir(setup):
    """Resuming is the one way back into a used output_dir (the resume path moves re-run steps aside)."""
    with pytest.raises(SystemExit, match="resume_from_checkpoint: no checkpoint"):  # past the output_dir check
        main([*setup["argv"], "--model_name_or_path", tiny_model(setup["root"] / "model"),
              "--resume_from_checkpoint", "true"])  # fmt: skip


def test_output_dir_conflicts_are_found_by_a_pure_function(tmp_path):
    from training.output_dir import old_run_paths

    out = tmp_path / "out"
    assert old_run_paths(out, None) == []
    out.mkdir()
    assert old_run_paths(out, None) == []
    (out / "x").write_text("")
    inside = str(out / "rollouts.jsonl")
    assert old_run_paths(out, inside) == [out]
    assert old_run_paths(Path(tmp_path / "fresh"), str(out / "x")) == []  # an empty log is no run
