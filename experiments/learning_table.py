"""Whether a GRPO run learns: one row per step of its `metrics.jsonl` (reward and parse rate, each with
its running mean over `--window` steps, since with 2 questions a step one step's reward is mostly which
questions were drawn), beside what tells a degrading run apart (token entropy, mean completion length,
the share cut at `max_completion_length`, the share of groups without reward spread, grad norm,
learning rate), then the first and the last window's means.

    python experiments/learning_table.py <run dir> [--window 5]

Prints the table and writes it to `<run dir>/learning.md` (`experiments/gpu_session.sh`'s `gpu_small` job).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from experiments.gpu_check import markdown_table  # noqa: E402
from reports.run_files import read_metrics  # noqa: E402
from reports.safe_text import write_text  # noqa: E402

FIELDS = {  # column: the metrics.jsonl key (TRL's, and the conductor reward's parse rate)
    "reward": "reward",
    "parse_rate": "conductor/parse_rate",
    "entropy": "entropy",
    "mean_len": "completions/mean_length",
    "cut": "completions/clipped_ratio",
    "no_spread": "frac_reward_zero_std",
    "grad_norm": "grad_norm",
    "lr": "learning_rate",
}
COLUMNS = ("step", "reward", "reward_avg", "parse_rate", "parse_avg", "entropy", "mean_len", "cut", "no_spread",
           "grad_norm", "lr")  # fmt: skip


def _mean(values: list) -> float | None:
    finite = [v for v in values if isinstance(v, int | float) and math.isfinite(v)]
    return sum(finite) / len(finite) if finite else None


def learning_rows(metrics: list[dict], window: int) -> list[dict]:
    """One row per optimizer step (the end-of-training summary line has no reward and is left out);
    `reward_avg` / `parse_avg`: the mean over this step and the `window - 1` before it."""
    steps = [m for m in metrics if "reward" in m]
    rows = []
    for i, m in enumerate(steps):
        row = {"step": m.get("step"), **{column: m.get(key) for column, key in FIELDS.items()}}
        recent = steps[max(0, i - window + 1) : i + 1]
        row["reward_avg"] = _mean([r.get("reward") for r in recent])
        row["parse_avg"] = _mean([r.get(FIELDS["parse_rate"]) for r in recent])
        rows.append(row)
    return rows


def summary(rows: list[dict], window: int) -> str:
    """The first and the last `window` steps' mean reward and parse rate."""
    if not rows:
        return "no training step was logged"

    def means(part: list[dict]) -> str:
        reward, parse = _mean([r["reward"] for r in part]), _mean([r["parse_rate"] for r in part])
        return f"reward {_fmt(reward)}, parse rate {_fmt(parse)}"

    first, last = rows[:window], rows[-window:]
    return f"{len(rows)} steps; first {len(first)}: {means(first)}; last {len(last)}: {means(last)}"


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def render(run: Path, window: int) -> str:
    rows = learning_rows(read_metrics(run), window)
    return "\n".join([*markdown_table(rows, COLUMNS), "", summary(rows, window)]) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a training/train.py output dir (its metrics.jsonl)")
    parser.add_argument("--window", type=int, default=5, help="steps in a running mean")
    args = parser.parse_args(argv)
    if args.window < 1:
        parser.error("--window must be >= 1")
    text = render(args.run, args.window)
    write_text(args.run / "learning.md", text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
