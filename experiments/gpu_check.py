"""GPU check: a few GRPO steps of `gpu-small` on a CUDA GPU, the trained conductor evaluated on
5 GSM8K questions, then the divergence guard's padding fix in bf16; one table (`nox -s gpu_check`).

    python -m experiments.gpu_check [--steps 4] [--fix_steps 2] [--pool sim] [--out runs/gpu-check]
    python -m experiments.gpu_check --dry_run      # plan + the recipe's dry run; any machine (CI)

Generation is vLLM colocated with training when vLLM is installed, else transformers'. The eval
runs through this interpreter (`python -m inspect_ai`: an image may have no `inspect` script).
The fix's run (`<out>/bf16-sdpa`, `FIX_ARGS`) is `gpu-small` in bf16 with SDPA attention, which
train.py makes `sdpa_padsafe` (no fully masked row, no cuDNN kernel: training/guard.py), no warm-up
and 128-token completions: the configuration whose step 1 gave `grad_norm: nan` on an H100 with plain
SDPA, with and without the padding hook (experiments/results-2026-11-27.md); it passes when every
step's grad norm is finite (a skipped update counts as a failure). Without a CUDA GPU (and without
`--dry_run`) it says so and exits 0. The table (per step: wall time, generated tokens/s,
reward, parse rate, grad norm; then the GSM8K accuracy; then the fix's steps) is printed and
written to `<out>/gpu_check.md`; the exit code is 1 when a step's loss or grad norm was not finite
or a stage failed.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

from reports.run_files import read_metrics, read_run_info
from reports.safe_text import write_text

RECIPE = "training/recipes/gpu-small.yaml"
EVAL_TASK = "tasks/gsm8k.py"
EVAL_LIMIT = 5
COLUMNS = ("step", "step_s", "gen_tok_per_s", "reward", "parse_rate", "grad_norm", "finite")
# the divergence guard's padding fix: bf16 (the recipe's), SDPA on left-padded prompts of different lengths,
# no warm-up, 128-token completions; measured on an H100 before the fix: grad_norm nan at step 1
FIX_ARGS = ("--attn_implementation", "sdpa", "--format_warmup_steps", "0", "--max_completion_length", "128")
FIX_TITLE = "bf16, SDPA attention, left-padded prompts, no warm-up (the guard's padding fix; NaN at step 1 before it)"


def train_command(out: str, steps: int, pool: str, use_vllm: bool, dry_run: bool = False,
                  extra: tuple[str, ...] = ()) -> list[str]:  # fmt: skip
    command = [sys.executable, "training/train.py", RECIPE, "--output_dir", out, "--max_steps", str(steps),
               "--pool", pool, "--use_vllm", str(use_vllm).lower(), "--save_strategy", "no",
               "--overwrite_output_dir", "true", *extra]  # a check re-run replaces the last one  # fmt: skip
    return [*command, "--dry_run", "true"] if dry_run else command


def eval_command(out: str, pool: str) -> list[str]:
    return [sys.executable, "-m", "inspect_ai", "eval", EVAL_TASK, "--solver", "conductor", "--model-role",
            f"conductor=hf/{out}", "--limit", str(EVAL_LIMIT), "-S", f"pool={pool}",
            "--log-dir", f"{out}/eval"]  # fmt: skip


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


def step_rows(metrics: list[dict], generations_per_step: int) -> list[dict]:
    """One row per optimizer step from train.py's `metrics.jsonl` (TRL's logged dicts): generated
    tokens/s is mean completion length x completions per step / the step's wall time; `finite`
    says whether the loss and the grad norm were finite numbers."""
    rows = []
    for m in metrics:
        if "grad_norm" not in m and "loss" not in m:  # the end-of-training summary line
            continue
        wall, length = m.get("step_wall_s"), m.get("completions/mean_length")
        speed = length * generations_per_step / wall if _finite(wall) and wall > 0 and _finite(length) else None
        rows.append({
            "step": m.get("step"),
            "step_s": wall,
            "gen_tok_per_s": speed,
            "reward": m.get("reward"),
            "parse_rate": m.get("conductor/parse_rate"),
            "grad_norm": m.get("grad_norm"),
            "finite": _finite(m.get("grad_norm")) and _finite(m.get("loss", 0.0)),
        })  # fmt: skip
    return rows


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3g}" if math.isfinite(value) else str(value)
    return "" if value is None else str(value)


def markdown_table(rows: list[dict], columns: tuple[str, ...] = COLUMNS) -> list[str]:
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    return lines + ["| " + " | ".join(_cell(r.get(c)) for c in columns) + " |" for r in rows]


def render(rows: list[dict], accuracy: float | None, notes: list[str], fix_rows: list[dict] | None = None) -> str:
    """The markdown table, the GSM8K accuracy, the fix's table (when it ran) and the notes."""
    acc = "not run" if accuracy is None else f"{accuracy:.3f} (n={EVAL_LIMIT})"
    lines = [*markdown_table(rows), "", f"GSM8K accuracy of the trained conductor: {acc}"]
    if fix_rows is not None:
        lines += ["", f"{FIX_TITLE}:", "", *markdown_table(fix_rows)]
    return "\n".join([*lines, "", *notes]) + "\n"


def verdict(rows: list[dict], failures: list[str], fix_rows: list[dict] | None = None) -> list[str]:
    """Why the check fails (empty: it passed): a failed stage, a run without steps, a non-finite step."""
    problems = list(failures)
    for what, run in (("", rows), ("bf16-sdpa ", fix_rows)):
        if run is None:
            continue
        if not run:
            problems.append(f"no {what}training step was logged")
        problems += [f"{what}step {r['step']}: loss or grad norm not finite ({r['grad_norm']})"
                     for r in run if not r["finite"]]  # fmt: skip
    return problems


def run_rows(out: Path) -> list[dict]:
    """`step_rows` of a finished train.py run in `out` (its run_info.json and metrics.jsonl)."""
    info = read_run_info(out, required=["generations_per_step"])
    metrics = read_metrics(out)
    return step_rows(metrics, int(info["generations_per_step"]))


def eval_accuracy(log_dir: Path) -> float | None:
    from inspect_ai.log import list_eval_logs, read_eval_log

    logs = list_eval_logs(str(log_dir))
    if not logs:
        return None
    log = read_eval_log(logs[0], header_only=True)
    if log.status != "success" or not log.results or not log.results.scores:
        return None
    metric = log.results.scores[0].metrics.get("accuracy")
    return None if metric is None else float(metric.value)


def _run(command: list[str], failures: list[str], what: str) -> bool:
    print("$", " ".join(command), flush=True)
    code = subprocess.run(command).returncode
    if code:
        failures.append(f"{what} exited with {code}: {' '.join(command)}")
    return code == 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=4, help="GRPO steps (after the recipe's format warm-up)")
    parser.add_argument("--fix_steps", type=int, default=2, help="GRPO steps of the bf16 SDPA run (0: not run)")
    parser.add_argument("--pool", default="sim", help="worker pool (sim: no worker model runs; local: the GGUFs)")
    parser.add_argument("--out", default="runs/gpu-check", help="output dir of the run, its eval and the table")
    parser.add_argument("--dry_run", action="store_true", help="plan and check the recipe; needs no GPU")
    args = parser.parse_args(argv)
    use_vllm = importlib.util.find_spec("vllm") is not None
    import torch

    if args.dry_run:
        print(f"gpu_check dry run: generation by {'vLLM colocate' if use_vllm else 'transformers'}; would run")
        print("$", " ".join(eval_command(args.out, args.pool)), "(after training)")
        fix = train_command(f"{args.out}/bf16-sdpa", args.fix_steps, args.pool, use_vllm, extra=FIX_ARGS)
        print("$", " ".join(fix), "(then)" if args.fix_steps else "(not run: --fix_steps 0)")
        failures: list[str] = []
        _run(train_command(args.out, args.steps, args.pool, use_vllm, dry_run=True), failures, "recipe dry run")
        return 1 if failures else 0
    if not torch.cuda.is_available():
        print("gpu_check: no CUDA GPU on this machine; nothing run (use --dry_run to check the plan)")
        return 0
    out, failures = Path(args.out), []
    rows: list[dict] = []
    fix_rows: list[dict] | None = None
    accuracy = None
    if _run(train_command(args.out, args.steps, args.pool, use_vllm), failures, "training"):
        rows = run_rows(out)
        if _run(eval_command(args.out, args.pool), failures, "evaluation"):
            accuracy = eval_accuracy(out / "eval")
    if args.fix_steps:
        fix_out = f"{args.out}/bf16-sdpa"
        fix_ran = _run(
            train_command(fix_out, args.fix_steps, args.pool, use_vllm, extra=FIX_ARGS), failures, "bf16-sdpa"
        )
        fix_rows = run_rows(Path(fix_out)) if fix_ran else []
    problems = verdict(rows, failures, fix_rows)
    device = f"{torch.cuda.get_device_name(0)}, generation: {'vLLM colocate' if use_vllm else 'transformers'}"
    notes = [f"device: {device}", "PASS" if not problems else "FAIL: " + "; ".join(problems)]
    table = render(rows, accuracy, notes, fix_rows)
    out.mkdir(parents=True, exist_ok=True)
    write_text(out / "gpu_check.md", table)
    print(table)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
