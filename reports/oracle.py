"""The oracle and every method's gap to it and to the best single worker (pandas; no Inspect import).

Per pool and benchmark, from the single-worker logs (rows of the `single_worker` solver, one per
worker): a question's score per row is its mean correctness over epochs (an error counts as
wrong). The questions compared are those every single worker ran. The oracle answers a question
as well as the best single worker on that very question (the maximum over the workers); the
best single worker is the one with the highest accuracy on those questions. Each method is
measured on the questions it ran among them, and so are the oracle and the best single worker
beside it (same questions, paired): `vs oracle` and `vs best single` are the method's accuracy
minus theirs, in percentage points. "all" pools every benchmark's questions (the best single
worker there is the best over all of them, one worker).
"""

from __future__ import annotations

import pandas as pd

from reports.paired import ALL, outcomes

SINGLE = "single_worker"
COLUMNS = [
    "pool",
    "benchmark",
    "row",
    "questions",
    "accuracy",
    "best_single",
    "best_single_accuracy",
    "oracle",
    "vs_oracle",
    "vs_best_single",
]


def question_scores(frame: pd.DataFrame) -> pd.DataFrame:
    """A frame indexed by (pool, benchmark, sample_id), one column per row label: the question's mean
    correctness over epochs (NaN where the row did not run it)."""
    data = outcomes(frame)
    return data.pivot_table(index=["pool", "benchmark", "sample_id"], columns="label", values="correct", aggfunc="mean")


def gaps(scores: pd.DataFrame, singles: list[str], benchmark: str) -> list[dict]:
    """Gap rows of one pool's benchmark (or all, pooled): `scores` holds its questions, one column per row."""
    covered = scores.dropna(subset=singles)
    if covered.empty:
        return []
    oracle = covered[singles].max(axis=1)
    best = covered[singles].mean().idxmax()  # ties: the first in label order
    out = []
    for label in scores.columns:
        ran = covered[label].dropna()
        if ran.empty:
            continue
        accuracy, top, best_accuracy = (
            100 * ran.mean(),
            100 * oracle[ran.index].mean(),
            100 * covered.loc[ran.index, best].mean(),
        )
        out.append(
            {
                "benchmark": benchmark,
                "row": label,
                "questions": len(ran),
                "accuracy": accuracy,
                "best_single": best,
                "best_single_accuracy": best_accuracy,
                "oracle": top,
                "vs_oracle": accuracy - top,
                "vs_best_single": accuracy - best_accuracy,
            }
        )
    return out


def oracle_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Every pool with single-worker logs: per benchmark and "all", every row's gaps (`COLUMNS`)."""
    if frame.empty:
        return pd.DataFrame(columns=COLUMNS)
    scores = question_scores(frame)
    solver_of = frame.drop_duplicates("label").set_index("label")["solver"]
    out = []
    for pool, part in scores.groupby(level="pool", sort=True):
        part = part.droplevel("pool").dropna(axis=1, how="all")
        singles = sorted(c for c in part.columns if solver_of.get(c) == SINGLE)
        if not singles:
            continue
        benchmarks = sorted(set(part.index.get_level_values("benchmark")))
        rows = [r for b in benchmarks for r in gaps(part.xs(b, level="benchmark"), singles, b)]
        if len(benchmarks) > 1:
            rows += gaps(part.dropna(subset=singles), singles, ALL)
        out += [{"pool": pool, **r} for r in rows]
    return pd.DataFrame(out, columns=COLUMNS)


def readable(table: pd.DataFrame) -> pd.DataFrame:
    """Text cells for markdown and the page (accuracies in %, gaps in points)."""
    if table.empty:
        return table
    pct, pts = "{:.1f}".format, "{:+.1f}".format
    return pd.DataFrame(
        {
            "benchmark": table["benchmark"],
            "row": table["row"],
            "questions": table["questions"],
            "accuracy %": table["accuracy"].map(pct),
            "oracle %": table["oracle"].map(pct),
            "vs oracle": table["vs_oracle"].map(pts),
            "best single": table["best_single"],
            "best single %": table["best_single_accuracy"].map(pct),
            "vs best single": table["vs_best_single"].map(pts),
        }
    )
