"""Workflow diagnostics in the report, from logged samples (the rules: `solvers.diagnostics`, shared
with the training metrics).

Per sample (`sample_features`, read with the frame): the root round's `round_features`, the final
answer and the answer of the step it was shown judged right or wrong by the sample's scorer's check
(`scorers.checks.CHECKS`; other scorers, e.g. code, leave "better"/"worse" unknown: "changed").
Per pool, row and benchmark, and over all the row's benchmarks (`diagnostics_table`): `summarize`'s
copy rate, single-step and single-worker shares, verify/refine share, answer-change shares and the
worker-choice entropy of that benchmark (domain), in bits.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pandas as pd

from reports.paired import ALL
from scorers.checks import CHECKS
from solvers.diagnostics import prior_output, round_features, summarize

COLUMNS = [
    "pool",
    "row",
    "benchmark",
    "samples",
    "steps",
    "copy_rate",
    "single_step_share",
    "single_worker_share",
    "verify_refine_share",
    "answer_compared",
    "answer_changed_share",
    "answer_better_share",
    "answer_worse_share",
    "worker_entropy",
]
SHARES = [
    "copy_rate",
    "single_step_share",
    "single_worker_share",
    "verify_refine_share",
    "answer_changed_share",
    "answer_better_share",
    "answer_worse_share",
]


def input_text(value: str | Sequence) -> str:
    """A sample's input as the conductor saw it (Inspect's `TaskState.input_text`): the text, or the text
    of the last user message."""
    if isinstance(value, str):
        return value
    return next((m.text for m in reversed(value) if m.role == "user"), "")


def judged(check_name: str | None, output: str | None, target: str) -> bool | None:
    """Whether `output` is right by the named scorer's check; None when unknown (no check, no output)."""
    check = CHECKS.get(check_name or "")
    return None if check is None or output is None else bool(check(output, target).correct)


def sample_features(meta: Mapping | None, question: str, target: str, scorer: str | None) -> dict | None:
    """`round_features` of a logged sample's root round (None without a record or a workflow)."""
    round_ = (meta or {}).get("round")
    if not round_ or not round_.get("steps"):
        return None
    last = round_["steps"][-1]
    final = None if last.get("error") else last.get("output")
    return round_features(
        round_,
        question,
        final_correct=judged(scorer, final, target),
        prior_correct=judged(scorer, prior_output(round_), target),
    )


def diagnostics_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per pool, row (method) and benchmark, then "all": the summarized diagnostics (`COLUMNS`, shares in %)."""
    if frame.empty or "diag" not in frame:
        return pd.DataFrame(columns=COLUMNS)
    data = frame[frame["diag"].map(lambda d: isinstance(d, Mapping))]
    out = []
    for (pool, label), rows in data.groupby(["pool", "label"], sort=True):
        parts = [(str(b), g) for b, g in rows.groupby("paper_column", sort=True)]
        for benchmark, part in parts + ([(ALL, rows)] if len(parts) > 1 else []):
            features = [{**d, "domain": benchmark} for d in part["diag"]]
            summary = summarize(features)
            out.append(
                {
                    "pool": pool,
                    "row": label,
                    "benchmark": benchmark,
                    "samples": len(features),
                    "steps": sum(f["steps"] for f in features) / len(features),
                    **{k: 100 * summary[k] if k in summary else math.nan for k in SHARES},
                    "answer_compared": int(summary.get("answer_compared", 0)),
                    "worker_entropy": summary.get(f"worker_entropy/{benchmark}", math.nan),
                }
            )
    return pd.DataFrame(out, columns=COLUMNS)


def readable(table: pd.DataFrame) -> pd.DataFrame:
    """Text cells for markdown and the page ("—" where nothing was counted)."""
    if table.empty:
        return table

    def fmt(spec: str):  # noqa: ANN202
        return lambda v: "—" if pd.isna(v) else spec.format(v)

    return pd.DataFrame(
        {
            "row": table["row"],
            "benchmark": table["benchmark"],
            "samples": table["samples"],
            "steps": table["steps"].map(fmt("{:.2f}")),
            "copy %": table["copy_rate"].map(fmt("{:.1f}")),
            "one step %": table["single_step_share"].map(fmt("{:.1f}")),
            "one worker %": table["single_worker_share"].map(fmt("{:.1f}")),
            "verify/refine %": table["verify_refine_share"].map(fmt("{:.1f}")),
            "answer compared": table["answer_compared"],
            "changed %": table["answer_changed_share"].map(fmt("{:.1f}")),
            "better %": table["answer_better_share"].map(fmt("{:.1f}")),
            "worse %": table["answer_worse_share"].map(fmt("{:.1f}")),
            "worker entropy (bits)": table["worker_entropy"].map(fmt("{:.2f}")),
        }
    )
