"""Data-parallel training with 2 processes (torchrun, accelerate's MULTI_CPU mode over gloo): a
format warm-up and 2 GRPO steps of the tiny model over the simulated pool. Each rollout is scored
on one process and logged once; run files, log lines and the final model are written once, by the
main process; both processes hold identical weights after the warm-up and after GRPO."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from installed import needs
from test_training_train import TINY_RECIPE, data_args
from training_fixtures import data_files, tiny_model
from waits import run_command

from training.parallel import check_same_weights, launch_problem, weights_digest

pytestmark = needs("trl")

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).parents[1] / "training_dp_driver.py"  # rewards 0, 1, 0, 1, ...: GRPO steps move the weights
PER_DEVICE = 4  # TINY_RECIPE's per_device_train_batch_size: each process scores its own 4 rollouts a step


def torchrun(argv: list[str], tmp: Path, script: Path = ROOT / "training" / "train.py") -> subprocess.CompletedProcess:
    """training/train.py (or a `script` calling its main) on 2 processes, as docs/training.md launches it on a CPU."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "XDG_DATA_HOME": str(tmp / "xdg"), "PYTHONUNBUFFERED": "1"}
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
               str(script), *argv]  # fmt: skip
    return run_command(command, cwd=ROOT, env=env)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("dp")
    recipe = root / "tiny.yaml"
    recipe.write_text(TINY_RECIPE)
    argv = [str(recipe), "--model_name_or_path", tiny_model(root / "model"), *data_args(data_files(root))]
    out = root / "run"
    done = torchrun([*argv, "--output_dir", str(out), "--format_warmup_steps", "2"], root, DRIVER)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-6000:]
    return {"out": out, "log": done.stdout + done.stderr, "argv": argv, "root": root}


@pytest.mark.slow
def test_each_rollout_is_scored_on_one_process_and_logged_once(run):
    rows = [json.loads(line) for line in (run["out"] / "rollouts.jsonl").read_text().splitlines()]
    assert len(rows) == 2 * 2 * PER_DEVICE  # 2 steps x 2 processes x 4 rollouts: TRL's global generation batch
    for step in (0, 1):
        by_process = [sum(r["step"] == step and r["process"] == p for r in rows) for p in range(2)]
        assert by_process == [PER_DEVICE, PER_DEVICE]  # each process scored its own slice, once
    assert not list(run["out"].glob("rollouts.rank*"))


def test_run_files_logs_and_the_model_are_written_once(run):
    out, log = run["out"], run["log"]
    for line in ("training.train run:", "training.train format warm-up:", "training.train saved"):
        assert log.count(line) == 1, line
    metrics = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in metrics if "reward" in m] == [1, 2]
    models = sorted(str(p.relative_to(out)) for p in out.rglob("*.safetensors"))
    assert models == ["checkpoint-2/model.safetensors", "model.safetensors", "warmup/model.safetensors"]
    info = json.loads((out / "run_info.json").read_text())
    assert info["global_step"] == 2 and info["processes"] == 2
    assert info["generations_per_step"] == 2 * PER_DEVICE
    assert info["warmup"]["examples"] == 2 * PER_DEVICE * 2  # warm-up steps x per-device batch x processes


def test_both_processes_hold_the_saved_weights(run):
    """Each process digests its own parameters after the warm-up and after GRPO; the main process
    records them; the saved final model has the same digest."""
    from transformers import AutoModelForCausalLM

    info = json.loads((run["out"] / "run_info.json").read_text())
    warmup, final = info["warmup"]["weights_sha256"], info["weights_sha256"]
    assert len(warmup) == len(final) == 2 and len(set(warmup)) == 1 and len(set(final)) == 1
    assert warmup[0] != final[0]  # GRPO changed the weights (lr 1e-3, rewards with variance), alike on both
    saved = AutoModelForCausalLM.from_pretrained(run["out"])
    assert weights_digest(saved) == final[0]
    assert weights_digest(AutoModelForCausalLM.from_pretrained(run["out"] / "warmup")) == warmup[0]


@pytest.mark.slow
def test_a_used_output_dir_is_moved_aside_once(run):
    """Two processes, one claim: the earlier run is moved aside by the main process only."""
    root, used = run["root"], run["root"] / "used"
    shutil.copytree(run["out"], used)  # the other tests keep reading the first run
    again = torchrun([*run["argv"], "--output_dir", str(used), "--max_steps", "1", "--save_strategy", "no"], root)
    assert again.returncode != 0 and "not empty" in again.stderr
    assert not list(root.glob("used.replaced-*"))
    fresh = torchrun([*run["argv"], "--output_dir", str(used), "--max_steps", "1", "--save_strategy", "no",
                      "--overwrite_output_dir", "true"], root)  # fmt: skip
    assert fresh.returncode == 0, fresh.stderr[-4000:]
    [old] = root.glob("used.replaced-*")
    assert (old / "warmup").is_dir() and not (used / "warmup").exists()
    rows = (used / "rollouts.jsonl").read_text().splitlines()
    assert len(rows) == 2 * PER_DEVICE  # the new run's one step only


def test_digests_that_differ_stop_the_run():
    assert check_same_weights(["a", "a"], "GRPO") == ["a", "a"]
    with pytest.raises(SystemExit, match=r"GRPO: the 2 processes hold different weights \(process 1"):
        check_same_weights(["a", "b"], "GRPO")


def test_accelerate_cpu_launch_of_several_processes_is_refused():
    """`accelerate launch --cpu --num_processes 2` without mpirun starts ONE process (its CPU launcher
    is MPI's); it sets MASTER_ADDR and ACCELERATE_USE_CPU but no world size. Refused, naming torchrun."""
    launched = {"ACCELERATE_USE_CPU": "True", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500"}
    assert "torchrun --nproc_per_node" in launch_problem(launched)
    assert launch_problem({**launched, "WORLD_SIZE": "2", "RANK": "0"}) is None  # torchrun
    assert launch_problem({**launched, "OMPI_COMM_WORLD_SIZE": "2"}) is None  # mpirun
    assert launch_problem({"ACCELERATE_USE_CPU": "True"}) is None  # accelerate launch --cpu, one process
    assert launch_problem({}) is None


def test_a_gathering_rollout_log_writes_at_flush_what_gather_returns(tmp_path):
    """Rows wait for the step's end; each flush is one `gather` on every process (even with nothing
    held); the main process writes every process's rows, the others nothing."""
    from types import SimpleNamespace

    from training.parallel import gather_rows
    from training.rollouts import RolloutLog, read_rollouts

    calls: list[list] = []

    def main_of_two(rows):  # what the main process gets: its rows, then process 1's
        calls.append(list(rows))
        return [*rows, {"n": 9}]

    path = tmp_path / "rollouts.jsonl"
    log = RolloutLog(path, gather=main_of_two)
    log.write([{"n": 1}])
    log.write([{"n": 2}])
    assert not path.exists()
    log.flush()
    log.flush()
    assert calls == [[{"n": 1}, {"n": 2}], []] and [r["n"] for r in read_rollouts(path)] == [1, 2, 9, 9]
    replica = RolloutLog(tmp_path / "replica.jsonl", gather=lambda rows: [])
    replica.write([{"n": 3}])
    replica.flush()
    assert not (tmp_path / "replica.jsonl").exists()
    assert gather_rows(SimpleNamespace(world_size=1)) is None  # one process: rows are written at once
