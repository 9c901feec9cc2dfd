"""The form line a seed's rollouts wrote before their worker, per domain and stretch of steps: how
many rollouts named the question's form rightly ("asks for a value" on MATH, "is multiple choice"
on MMLU: training/warmup.py's `FORMS`), how many named another, how many wrote none, and how many
groups (one question at one step) wrote more than one line.

    python -m experiments.seeds.form_lines runs/seeds-cpu-shared-line [--every 5]
    python -m experiments.seeds.form_lines runs/seeds-cpu-shared-line --held-out

Reads each `seed-S/rollouts.jsonl` of a seed sweep's run folder (the runs, not the results folder); with
`--held-out`, the held-out evals in its `logs/` instead: the line each trained conductor wrote on each
held-out question (an eval whose conductor is another model, a warm-up one for instance, counts under that
model's folder name).
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


HELD_OUT = {"math500": "math", "mmlu": "mmlu"}  # the held-out evals' tasks and the domain each stands for


def held_out_lines(logs: Path) -> pd.DataFrame:
    """Per conductor (its model's folder name) and domain: held-out questions per named form, from each
    sample's conductor completion (`metadata["conductor"]["round"]["completion"]`)."""
    from inspect_ai.log import read_eval_log

    rows = []
    for path in sorted(logs.glob("*.eval")):
        log = read_eval_log(str(path))
        conductor = (log.eval.model_roles or {}).get("conductor")
        if conductor is None or log.eval.task not in HELD_OUT:
            continue  # a single worker's eval, or another task
        for sample in log.samples or []:
            record = (sample.metadata or {}).get("conductor") or {}
            completion = (record.get("round") or {}).get("completion")
            rows.append({"conductor": Path(conductor.model).name, "domain": HELD_OUT[log.eval.task],
                         "line": line_of(completion if isinstance(completion, str) else None)})  # fmt: skip
    frame = pd.DataFrame(rows, columns=["conductor", "domain", "line"])
    out = []
    for (conductor, domain), part in frame.groupby(["conductor", "domain"]):
        right = RIGHT[domain]
        out.append(
            {
                "conductor": conductor,
                "domain": domain,
                "questions": len(part),
                "right form": int((part["line"] == right).sum()),
                "other form": int(((part["line"] != right) & (part["line"] != "none")).sum()),
                "no line": int((part["line"] == "none").sum()),
            }
        )
    return pd.DataFrame(out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="a seed sweep's run folder (seed-S/rollouts.jsonl)")
    parser.add_argument("--every", type=int, default=5, help="steps per row")
    parser.add_argument("--held-out", action="store_true", help="the held-out evals' lines (<folder>/logs)")
    args = parser.parse_args(argv)
    if args.held_out:
        table = held_out_lines(args.folder / "logs")
        if table.empty:
            raise SystemExit(f"error: {args.folder / 'logs'} has no held-out eval of a conductor (math500, mmlu)")
        print(markdown(table))
        return
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
