"""`nox -s gpu_check`: the table logic on crafted metrics, the no-GPU exit and the dry run (CI)."""

import math
import sys
from pathlib import Path

import pytest
from waits import run_command

from experiments import gpu_check

ROOT = Path(__file__).resolve().parents[2]


def test_step_rows_compute_speed_and_flag_non_finite_steps():
    metrics = [
        {"step": 1, "loss": 0.1, "grad_norm": 2.0, "reward": 0.5, "conductor/parse_rate": 0.75,
         "completions/mean_length": 100.0, "step_wall_s": 4.0},
        {"step": 2, "loss": float("nan"), "grad_norm": float("nan"), "reward": 0.0,
         "completions/mean_length": 50.0, "step_wall_s": 0.0},
        {"step": 2, "train_runtime": 9.0, "train_loss": 0.1},  # the end-of-training summary
    ]  # fmt: skip
    rows = gpu_check.step_rows(metrics, generations_per_step=32)
    assert [r["step"] for r in rows] == [1, 2]
    assert rows[0]["gen_tok_per_s"] == pytest.approx(100 * 32 / 4.0)
    assert rows[0]["finite"] and rows[0]["parse_rate"] == 0.75
    assert rows[1]["gen_tok_per_s"] is None and not rows[1]["finite"]
    problems = gpu_check.verdict(rows, [])
    assert problems == ["step 2: loss or grad norm not finite (nan)"]
    table = gpu_check.render(rows, 0.4, ["PASS"])
    assert "| 1 | 4 | 800 | 0.5 | 0.75 | 2 | True |" in table
    assert "GSM8K accuracy of the trained conductor: 0.400 (n=5)" in table


def test_verdict_fails_without_steps_or_on_a_failed_stage():
    assert gpu_check.verdict([], []) == ["no training step was logged"]
    assert gpu_check.verdict([{"step": 1, "grad_norm": 1.0, "finite": True}], ["evaluation exited with 1: x"]) == [
        "evaluation exited with 1: x"
    ]


def test_commands_carry_the_pool_steps_and_checkpoint():
    train = gpu_check.train_command("runs/g", 3, "sim", use_vllm=False)
    assert train[1:3] == ["training/train.py", gpu_check.RECIPE]
    assert ["--max_steps", "3"] == train[train.index("--max_steps") : train.index("--max_steps") + 2]
    assert "--dry_run" not in train and gpu_check.train_command("runs/g", 3, "sim", False, True)[-2:] == [
        "--dry_run", "true"]  # fmt: skip
    evaluation = gpu_check.eval_command("runs/g", "sim")
    assert evaluation[:4] == [sys.executable, "-m", "inspect_ai", "eval"]  # an image may have no `inspect` script
    assert "conductor=hf/runs/g" in evaluation


def test_the_guard_fix_runs_in_bf16_with_sdpa_on_padded_prompts_and_fails_on_a_non_finite_step():
    fix = gpu_check.train_command("runs/g/bf16-sdpa", 2, "sim", False, extra=gpu_check.FIX_ARGS)
    assert fix[fix.index("--attn_implementation") + 1] == "sdpa" and fix[fix.index("--format_warmup_steps") + 1] == "0"
    assert "--bf16" not in fix  # the recipe's own bf16
    finite = [{"step": 1, "grad_norm": 0.0, "finite": True, "loss": 0.0}]
    nan = [{"step": 1, "grad_norm": math.nan, "finite": False}]
    assert gpu_check.verdict(finite, [], finite) == []
    assert gpu_check.verdict(finite, [], nan) == ["bf16-sdpa step 1: loss or grad norm not finite (nan)"]
    assert gpu_check.verdict(finite, [], []) == ["no bf16-sdpa training step was logged"]
    rows = [{c: 1 for c in gpu_check.COLUMNS}]
    table = gpu_check.render(rows, None, ["PASS"], rows)
    assert f"{gpu_check.FIX_TITLE}:" in table and table.count("| step | step_s |") == 2
    assert "bf16" not in gpu_check.render(rows, None, ["PASS"])  # --fix_steps 0: no second table


def test_without_a_gpu_it_says_so_and_exits_0(capsys, tmp_path):
    if pytest.importorskip("torch").cuda.is_available():  # imported here: collecting stays fast
        pytest.skip("this machine has a GPU")
    assert gpu_check.main(["--out", str(tmp_path / "g")]) == 0
    assert "no CUDA GPU" in capsys.readouterr().out
    assert not (tmp_path / "g").exists()


@pytest.mark.slow
def test_dry_run_checks_the_recipe_on_any_machine(tmp_path):
    done = run_command(
        [sys.executable, "-m", "experiments.gpu_check", "--dry_run", "--out", str(tmp_path / "g")],
        cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "-m inspect_ai eval tasks/gsm8k.py" in done.stdout and "--attn_implementation sdpa" in done.stdout
    assert '"dry_run": true' in done.stdout and '"recipe": "gpu-small"' in done.stdout


def test_cell_formats_non_finite_values():
    assert gpu_check._cell(math.inf) == "inf" and gpu_check._cell(None) == ""
