"""experiments/gpu_session.sh (job list, gpu_small dry run); experiments/learning_table.py on crafted metrics."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from waits import run_command

from experiments import learning_table

ROOT = Path(__file__).resolve().parents[2]


def session(tmp_path, **env) -> subprocess.CompletedProcess:
    environ = {**os.environ, "OUT": str(tmp_path / "out"), "RUNS": str(tmp_path / "runs"), "PY": sys.executable,
               "XDG_DATA_HOME": str(tmp_path / "xdg"), "INSPECT_LOG_DIR": str(tmp_path / "logs"), **env}  # fmt: skip
    return run_command(["bash", "experiments/gpu_session.sh"], cwd=ROOT, env=environ)


def test_an_unknown_job_is_refused_before_anything_runs(tmp_path):
    done = session(tmp_path, JOBS="gpu_small smoke")
    assert done.returncode == 2 and "no job 'smoke' in JOBS; the jobs: seeds gpu_check bench gpu_small" in done.stdout
    assert not (tmp_path / "runs" / "nvidia-smi.txt").exists()


def test_gpu_small_beside_the_seeds_is_refused_before_anything_runs(tmp_path):
    done = session(tmp_path, JOBS="seeds gpu_small")
    assert done.returncode == 2 and "run gpu_small in a session of its own" in done.stdout
    assert not (tmp_path / "runs" / "nvidia-smi.txt").exists()


def test_collect_only_packs_what_a_running_session_has_so_far(tmp_path):
    seed = tmp_path / "runs" / "seeds" / "seed-7"
    seed.mkdir(parents=True)
    (seed / "heldout-rows.json").write_text("[]")
    (seed / "model.safetensors").write_text("weights")  # never collected
    done = session(tmp_path, COLLECT_ONLY="1")
    assert done.returncode == 0, done.stdout[-2000:]
    packed = subprocess.run(["tar", "-tzf", tmp_path / "out" / "results.tar.gz"], capture_output=True, text=True)
    assert "./seeds/seed-7/heldout-rows.json" in packed.stdout.split() and "safetensors" not in packed.stdout
    assert "- seeds: not finished" in (tmp_path / "out" / "summary.md").read_text()


@pytest.mark.slow
def test_the_gpu_small_job_dry_run_parses_25_steps_of_the_recipe(tmp_path):
    done = session(tmp_path, DRY_RUN="1", JOBS="gpu_check gpu_small", GPU_SMALL_ARGS="--attn_implementation sdpa")
    assert done.returncode == 0, done.stderr[-2000:]
    [plan] = [line for line in done.stdout.splitlines() if line.startswith("gpu_small: ")]
    assert "training/recipes/gpu-small.yaml" in plan and "--max_steps 25 --pool sim" in plan
    assert plan.split("; then ")[0].endswith("--attn_implementation sdpa")
    assert plan.endswith(f"experiments/learning_table.py {tmp_path / 'runs' / 'gpu-small'}")
    start = done.stdout.index("\n{\n")  # train.py's dry-run JSON (stderr's log lines are in the output too)
    info = json.loads(done.stdout[start : done.stdout.index("\n}\n", start) + 2])
    assert info["dry_run"] and info["recipe"] == "gpu-small" and info["max_steps"] == 25
    assert info["data"]["pool"] == "sim"
    assert not (tmp_path / "out" / "summary.md").exists()  # a dry run collects nothing


def step(n, reward, parse, **more):
    return {"step": n, "loss": 0.0, "grad_norm": 1.0, "reward": reward, "conductor/parse_rate": parse, **more}


def test_learning_rows_keep_running_means_and_the_summary_compares_first_and_last_windows():
    metrics = [step(1, 0.6, 0.8, entropy=0.5), step(2, 0.2, 0.4), step(3, 0.4, None), step(4, 1.0, 1.0),
               {"step": 4, "train_runtime": 9.0, "train_loss": 0.1}]  # fmt: skip
    rows = learning_table.learning_rows(metrics, window=2)
    assert [r["step"] for r in rows] == [1, 2, 3, 4]
    assert [r["reward_avg"] for r in rows] == pytest.approx([0.6, 0.4, 0.3, 0.7])
    assert [r["parse_avg"] for r in rows] == pytest.approx([0.8, 0.6, 0.4, 1.0])  # a missing rate is left out
    assert rows[0]["entropy"] == 0.5 and rows[1]["entropy"] is None
    assert learning_table.summary(rows, 2) == (
        "4 steps; first 2: reward 0.400, parse rate 0.600; last 2: reward 0.700, parse rate 1.000"
    )
    assert learning_table.summary([], 2) == "no training step was logged"


def test_the_table_is_written_beside_the_metrics(tmp_path, capsys):
    lines = [step(1, 0.5, 0.75, **{"completions/mean_length": 120.0}), step(2, float("nan"), 0.5)]
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(m) + "\n" for m in lines))
    assert learning_table.main([str(tmp_path), "--window", "3"]) == 0
    text = (tmp_path / "learning.md").read_text()
    assert text == capsys.readouterr().out
    assert "| 1 | 0.5 | 0.5 | 0.75 | 0.75 |  | 120 |" in text and "| 2 | nan | 0.5 | 0.5 | 0.625 |" in text
    assert text.endswith("2 steps; first 2: reward 0.500, parse rate 0.625; last 2: reward 0.500, parse rate 0.625\n")
