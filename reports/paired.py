"""Paired comparisons of two methods on the same samples (pandas + scipy; no Inspect import).

Two rows of a pool (methods, as the tables name them by `label`) are compared on the samples both
ran: the same (task, sample id, epoch). Per pair and benchmark, and over all the benchmarks both
ran ("all"): n paired samples, each side's accuracy, the difference (first minus second, in
percentage points) with a percentile bootstrap confidence interval of the mean paired difference
(`scipy.stats.bootstrap`, `paired=True`, fixed seed), and the exact McNemar test: a two-sided
binomial test of the discordant pairs (`scipy.stats.binomtest`, p = 0.5; p = 1 when no pair is
discordant). A sample without a score (an error) counts as wrong, as in the tables; McNemar
counts a sample as correct when its score is 1 (a partial score P = 0.5 is not correct).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd

from reports.tables import dedupe

ITEM = ["task", "sample_id", "epoch"]
ALL = "all"
CONFIDENCE = 0.95
RESAMPLES = 2000
SEED = 0
COLUMNS = [
    "pool",
    "benchmark",
    "a",
    "b",
    "n",
    "a_accuracy",
    "b_accuracy",
    "difference",
    "ci_low",
    "ci_high",
    "a_only",
    "b_only",
    "mcnemar_p",
]


def outcomes(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (pool, row label, task, sample, epoch) with `correct` in [0, 1] (NaN -> 0), the latest
    log's when a sample was rerun (`tables.dedupe`); keeps solver, key and the paper's column name."""
    if frame.empty:
        return pd.DataFrame(columns=["pool", "label", "solver", "key", "benchmark", *ITEM, "correct"])
    rows = dedupe(frame)
    correct = pd.to_numeric(rows["score"], errors="coerce").fillna(0.0).clip(0.0, 1.0)
    return rows.assign(correct=correct, benchmark=rows["paper_column"])[
        ["pool", "label", "solver", "key", "benchmark", *ITEM, "correct"]
    ].reset_index(drop=True)


def mean_difference_ci(
    a: np.ndarray, b: np.ndarray, *, confidence: float = CONFIDENCE, resamples: int = RESAMPLES, seed: int = SEED
) -> tuple[float, float]:
    """Percentile bootstrap interval of mean(a - b) over paired samples; NaN with fewer than 2 pairs."""
    if len(a) < 2:
        return math.nan, math.nan
    from scipy import stats  # here, not at the top: scipy.stats takes about 0.6 s to import

    result = stats.bootstrap(
        (a, b),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        paired=True,
        vectorized=True,
        n_resamples=resamples,
        confidence_level=confidence,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Exact McNemar p-value (two-sided) from the discordant counts; 1.0 when there are none."""
    from scipy import stats

    n = a_only + b_only
    return float(stats.binomtest(a_only, n, 0.5).pvalue) if n else 1.0


def compare(a: pd.Series, b: pd.Series, **bootstrap: float) -> dict:
    """One paired comparison of two aligned `correct` series (same samples, same order)."""
    x, y = a.to_numpy(dtype=float), b.to_numpy(dtype=float)
    low, high = mean_difference_ci(x, y, **bootstrap)
    a_only, b_only = int(((x >= 1) & (y < 1)).sum()), int(((x < 1) & (y >= 1)).sum())
    return {
        "n": len(x),
        "a_accuracy": 100 * x.mean(),
        "b_accuracy": 100 * y.mean(),
        "difference": 100 * (x - y).mean(),
        "ci_low": 100 * low,
        "ci_high": 100 * high,
        "a_only": a_only,
        "b_only": b_only,
        "mcnemar_p": mcnemar_exact(a_only, b_only),
    }


def paired_table(frame: pd.DataFrame, **bootstrap: float) -> pd.DataFrame:
    """Every pair of row labels of each pool on each benchmark they share and on all of them (`COLUMNS`);
    a conductor row is on the "a" side."""
    data = outcomes(frame)
    out = []
    for pool, rows in data.groupby("pool", sort=True):
        wide = rows.pivot_table(index=["benchmark", *ITEM], columns="label", values="correct", aggfunc="first")
        solvers = rows.drop_duplicates("label").set_index("label")["solver"]
        for a, b in itertools.combinations(sorted(wide.columns), 2):
            if solvers[b] == "conductor" and solvers[a] != "conductor":
                a, b = b, a  # the conductor on the "a" side: a positive difference means it is better
            both = wide[[a, b]].dropna()
            if both.empty:
                continue
            groups = [(str(k), g) for k, g in both.groupby(level="benchmark", sort=True)]
            for benchmark, part in groups + ([(ALL, both)] if len(groups) > 1 else []):
                out.append(
                    {"pool": pool, "benchmark": benchmark, "a": a, "b": b, **compare(part[a], part[b], **bootstrap)}
                )
    return pd.DataFrame(out, columns=COLUMNS)


def readable(table: pd.DataFrame) -> pd.DataFrame:
    """The paired table as text cells for markdown and the page (differences in points, CI, p)."""
    if table.empty:
        return table
    ci = [
        ("—" if math.isnan(lo) else f"[{lo:+.1f}, {hi:+.1f}]")
        for lo, hi in zip(table["ci_low"], table["ci_high"], strict=True)
    ]
    return pd.DataFrame(
        {
            "benchmark": table["benchmark"],
            "a": table["a"],
            "b": table["b"],
            "n": table["n"],
            "a %": table["a_accuracy"].map("{:.1f}".format),
            "b %": table["b_accuracy"].map("{:.1f}".format),
            "a - b (points)": table["difference"].map("{:+.1f}".format),
            f"{CONFIDENCE:.0%} CI": ci,
            "only a right": table["a_only"],
            "only b right": table["b_only"],
            "McNemar p": table["mcnemar_p"].map("{:.3g}".format),
        }
    )
