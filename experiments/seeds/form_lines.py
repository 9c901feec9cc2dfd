"""The form line a seed's rollouts wrote before their worker, per domain and stretch of steps: how
many rollouts named the question's form rightly ("asks for a value" on MATH, "is multiple choice"
on MMLU: training/warmup.py's `FORMS`), how many named another, how many wrote none, and how many
groups (one question at one step) wrote more than one line.

    python -m experiments.seeds.form_lines runs/seeds-cpu-shared-line [--every 5]

Reads each `seed-S/rollouts.jsonl` of a seed sweep's run folder (the runs, not the results folder).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

from reports.tables import markdown
from training.warmup import FORMS

LINES = {"value": FORMS["math"].rstrip("."), "choice": FORMS["choice"].rstrip(".")}
RIGHT = {"math": "value", "mmlu": "choice"}  # the line each domain's questions should get


def line_of(completion: str | None) -> str:
    """Which form the completion's first line names: "value", "choice" or "none"."""
    first = (completion or "").split("\n", 1)[0]
    return next((name for name, line in LINES.items() if first.startswith(line)), "none")


def read_rollouts(run: Path) -> pd.DataFrame:
    rows = [json.loads(line) for line in (run / "rollouts.jsonl").read_text().splitlines() if line.strip()]
    frame = pd.DataFrame(rows, columns=["step", "item_id", "domain", "completion"])
    frame["line"] = frame["completion"].map(line_of)
    return frame


def form_table(frame: pd.DataFrame, every: int) -> pd.DataFrame:
    """Per domain and stretch of `every` steps (labelled by the steps it holds): rollouts per named form,
    and groups of mixed lines."""
    frame = frame[frame["domain"].isin(RIGHT)].assign(stretch=frame["step"] // every)
    rows = []
    for (domain, _), part in frame.groupby(["domain", "stretch"]):
        right = RIGHT[domain]
        lines_per_group = part.groupby(["step", "item_id"])["line"].nunique()
        rows.append(
            {
                "domain": domain,
                "steps": f"{part['step'].min()}-{part['step'].max()}",
                "rollouts": len(part),
                "right form": int((part["line"] == right).sum()),
                "other form": int(((part["line"] != right) & (part["line"] != "none")).sum()),
                "no line": int((part["line"] == "none").sum()),
                "groups": len(lines_per_group),
                "groups of mixed lines": int((lines_per_group > 1).sum()),
            }
        )
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="a seed sweep's run folder (seed-S/rollouts.jsonl)")
    parser.add_argument("--every", type=int, default=5, help="steps per row")
    args = parser.parse_args(argv)
    runs = sorted(p.parent for p in args.folder.glob("seed-*/rollouts.jsonl"))
    if not runs:
        raise SystemExit(f"error: {args.folder} has no seed-S/rollouts.jsonl (name a seed sweep's run folder)")
    if args.every < 1:
        raise SystemExit("error: --every must be at least 1")
    for run in runs:
        print(f"\n{run.name}\n")
        print(markdown(form_table(read_rollouts(run), args.every)))


if __name__ == "__main__":
    main()
