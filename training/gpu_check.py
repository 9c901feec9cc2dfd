"""GPU check: a few GRPO steps of `gpu-small` on a CUDA GPU, the trained conductor evaluated on
5 GSM8K questions, one table (`nox -s gpu_check`).

    python training/gpu_check.py [--steps 4] [--pool sim] [--out runs/gpu-check]
    python training/gpu_check.py --dry_run      # plan + the recipe's dry run; any machine (CI)

Generation is vLLM colocated with training when vLLM is installed, else transformers'. Without
a CUDA GPU (and without `--dry_run`) it says so and exits 0. The table (per step: wall time,
generated tokens/s, reward, parse rate, grad norm; then the GSM8K accuracy) is printed and
written to `<out>/gpu_check.md`; the exit code is 1 when a step's loss or grad norm was not
finite or a stage failed.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from reports.run_files import read_metrics, read_run_info  # noqa: E402

RECIPE = "training/recipes/gpu-small.yaml"
EVAL_TASK = "tasks/gsm8k.py"
EVAL_LIMIT = 5
COLUMNS = ("step", "step_s", "gen_tok_per_s", "reward", "parse_rate", "grad_norm", "finite")


def train_command(out: str, steps: int, pool: str, use_vllm: bool, dry_run: bool = False) -> list[str]:
    command = [sys.executable, "training/train.py", RECIPE, "--output_dir", out, "--max_steps", str(steps),
               "--pool", pool, "--use_vllm", str(use_vllm).lower(), "--save_strategy", "no",
               "--overwrite_output_dir", "true"]  # a check re-run replaces the last one  # fmt: skip
    return [*command, "--dry_run", "true"] if dry_run else command


def eval_command(out: str, pool: str) -> list[str]:
    return ["inspect", "eval", EVAL_TASK, "--solver", "conductor", "--model-role", f"conductor=hf/{out}",
            "--limit", str(EVAL_LIMIT), "-S", f"pool={pool}", "--log-dir", f"{out}/eval"]  # fmt: skip


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


def render(rows: list[dict], accuracy: float | None, notes: list[str]) -> str:
    """The markdown table and a verdict line."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(_cell(r[c]) for c in COLUMNS) + " |" for r in rows]
    acc = "not run" if accuracy is None else f"{accuracy:.3f} (n={EVAL_LIMIT})"
    lines += ["", f"GSM8K accuracy of the trained conductor: {acc}", *notes]
    return "\n".join(lines) + "\n"


def verdict(rows: list[dict], failures: list[str]) -> list[str]:
    """Why the check fails (empty: it passed)."""
    problems = list(failures)
    if not rows:
        problems.append("no training step was logged")
    problems += [f"step {r['step']}: loss or grad norm not finite ({r['grad_norm']})" for r in rows if not r["finite"]]
    return problems


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
    parser.add_argument("--pool", default="sim", help="worker pool (sim: no worker model runs; local: the GGUFs)")
    parser.add_argument("--out", default="runs/gpu-check", help="output dir of the run, its eval and the table")
    parser.add_argument("--dry_run", action="store_true", help="plan and check the recipe; needs no GPU")
    args = parser.parse_args(argv)
    use_vllm = importlib.util.find_spec("vllm") is not None
    import torch

    if args.dry_run:
        print(f"gpu_check dry run: generation by {'vLLM colocate' if use_vllm else 'transformers'}; would run")
        print("$", " ".join(eval_command(args.out, args.pool)), "(after training)")
        failures: list[str] = []
        _run(train_command(args.out, args.steps, args.pool, use_vllm, dry_run=True), failures, "recipe dry run")
        return 1 if failures else 0
    if not torch.cuda.is_available():
        print("gpu_check: no CUDA GPU on this machine; nothing run (use --dry_run to check the plan)")
        return 0
    out, failures = Path(args.out), []
    rows: list[dict] = []
    accuracy = None
    if _run(train_command(args.out, args.steps, args.pool, use_vllm), failures, "training"):
        info = read_run_info(out, required=["generations_per_step"])
        rows = step_rows(read_metrics(out), info["generations_per_step"])
        if _run(eval_command(args.out, args.pool), failures, "evaluation"):
            accuracy = eval_accuracy(out / "eval")
    problems = verdict(rows, failures)
    device = f"{torch.cuda.get_device_name(0)}, generation: {'vLLM colocate' if use_vllm else 'transformers'}"
    notes = [f"device: {device}", "PASS" if not problems else "FAIL: " + "; ".join(problems)]
    table = render(rows, accuracy, notes)
    out.mkdir(parents=True, exist_ok=True)
    (out / "gpu_check.md").write_text(table)
    print(table)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
