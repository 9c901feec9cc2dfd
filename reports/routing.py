"""The router benchmarks' summary numbers, AIQ (RouterBench) and APGR (RouteLLM), per pool and benchmark
(pandas + numpy; no Inspect import).

Both read a method as a point (USD per question, accuracy %) on one benchmark and measure the area
under a *non-decreasing convex hull*: the upper concave envelope of a set of points, flat after its
most accurate point (what mixing the methods at random per question reaches at each cost; a costlier
but less accurate point never lowers it). The curve is 0 below its cheapest point and flat up to the
end of the range.

- AIQ, "average improvement in quality" (Hu et al. 2024, RouterBench, arXiv:2403.12031, sec. 3.2;
  `evaluation/AIQ.py` of withmartian/routerbench): the area under the hull divided by the cost range,
  i.e. the accuracy averaged over the costs from the cheapest to the costliest point of the benchmark.
  RouterBench sweeps a router's parameter; our methods are one point each, so a row's hull is its
  point with the single workers (its point mixed at random with them, as RouterBench's zero router
  mixes models). The zero router (the single workers alone) and the oracle router (per question the
  cheapest single worker that is right, else the cheapest) bound it on the same range.
- APGR, "average performance gap recovered" (Ong et al. 2024, RouteLLM, arXiv:2406.18665, sec. 3;
  `routellm/evals/evaluate.py`): PGR = (accuracy − weak) / (strong − weak), averaged over the cost
  thresholds from the weak model's cost to the strong model's: the area under the hull of the weak
  point, the row's point and the strong point over [weak cost, strong cost], less the weak model's
  area, over the strong's less the weak's. Weak: the cheapest single worker on the benchmark; strong:
  the most accurate (ties: the cheaper). Random mixing of the two scores 0.5, the strong model's
  accuracy at the weak model's cost 1.0; a row costlier than the strong model counts only through its
  random mixes with the weak model that cost no more than the strong one.
Rows and single workers need a known price; the cost range of AIQ runs from the cheapest to the
costliest priced point of the benchmark (rows, single workers, the oracle).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import pandas as pd

from reports.oracle import SINGLE
from reports.tables import dedupe

ZERO, ORACLE = "zero router (single workers mixed at random)", "oracle router (cheapest right single worker)"
COLUMNS = ["pool", "benchmark", "row", "accuracy", "usd", "aiq", "apgr", "weak", "strong"]
SOURCES = (
    "AIQ: Hu et al. 2024, RouterBench (arXiv:2403.12031), evaluation/AIQ.py of withmartian/routerbench; "
    "APGR: Ong et al. 2024, RouteLLM (arXiv:2406.18665), routellm/evals/evaluate.py of lm-sys/RouteLLM."
)


def hull(points: Iterable[tuple[float, float]]) -> np.ndarray:
    """The non-decreasing convex hull of (cost, accuracy) points: the upper concave envelope up to its
    most accurate point (ties in cost: the most accurate), as an (m, 2) array sorted by cost."""
    best: dict[float, float] = {}
    for x, y in points:
        best[float(x)] = max(float(y), best.get(float(x), -math.inf))
    upper: list[tuple[float, float]] = []
    for x, y in sorted(best.items()):
        while len(upper) >= 2 and _not_below(upper[-2], upper[-1], (x, y)):
            upper.pop()
        upper.append((x, y))
    top = max(range(len(upper)), key=lambda i: (upper[i][1], -i))  # the first most accurate point
    return np.array(upper[: top + 1], dtype=float)


def _not_below(a: tuple[float, float], b: tuple[float, float], c: tuple[float, float]) -> bool:
    """Whether b lies on or under the segment a-c (so it is not a corner of the upper envelope)."""
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]) >= 0


def area(curve: np.ndarray, low: float, high: float) -> float:
    """The area under `curve` (a `hull`) over [low, high]: 0 before its first point, flat after its last."""
    start = max(low, float(curve[0, 0]))
    if high <= start:
        return 0.0
    inside = curve[(curve[:, 0] > start) & (curve[:, 0] < high), 0]
    grid = np.concatenate([[start], inside, [high]])
    return float(np.trapezoid(np.interp(grid, curve[:, 0], curve[:, 1]), grid))


def aiq(points: Iterable[tuple[float, float]], low: float, high: float) -> float:
    """RouterBench's AIQ of the hull of `points` on [low, high]: its mean accuracy over the cost range."""
    return area(hull(points), low, high) / (high - low) if high > low else math.nan


def apgr(row: tuple[float, float], weak: tuple[float, float], strong: tuple[float, float]) -> float:
    """RouteLLM's APGR of a row (cost, accuracy) between the weak and the strong model's points: the
    share of the weak-to-strong gap recovered, averaged over the costs from the weak's to the strong's;
    NaN when the two cost or score the same."""
    (low, weak_acc), (high, strong_acc) = weak, strong
    if high <= low or strong_acc == weak_acc:
        return math.nan
    recovered = area(hull([weak, row, strong]), low, high) - weak_acc * (high - low)
    return recovered / ((strong_acc - weak_acc) * (high - low))


def points(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (pool, benchmark, row label): accuracy % and USD per question (NaN when a price is missing),
    its solver; from the deduplicated samples, an error counting as wrong."""
    rows = dedupe(frame)
    cost = pd.to_numeric(rows["cost_usd"], errors="coerce")
    data = rows.assign(
        correct=pd.to_numeric(rows["score"], errors="coerce").fillna(0.0).clip(0.0, 1.0),
        cost=cost,
        benchmark=rows["paper_column"],
    )
    grouped = data.groupby(["pool", "benchmark", "label"], sort=True)
    out = grouped.agg(
        accuracy=("correct", "mean"),
        usd=("cost", "mean"),
        solver=("solver", "first"),
        priced=("cost", lambda c: bool(c.notna().all())),
    )
    out["accuracy"] *= 100
    out.loc[~out["priced"], "usd"] = np.nan
    return out.drop(columns="priced").reset_index()


def oracle_point(frame: pd.DataFrame, singles: list[str]) -> tuple[float, float] | None:
    """RouterBench's oracle on one pool's benchmark: per question the cheapest single worker that is
    right (the cheapest when none is), on the questions every single worker ran; (USD, accuracy %)."""
    data = dedupe(frame[frame["label"].isin(singles)])
    data = data.assign(
        correct=pd.to_numeric(data["score"], errors="coerce").fillna(0.0).clip(0.0, 1.0),
        cost=pd.to_numeric(data["cost_usd"], errors="coerce"),
    )
    per = data.groupby(["sample_id", "label"]).agg(correct=("correct", "mean"), cost=("cost", "mean"))
    per = per.unstack("label").dropna()
    if per.empty:
        return None
    correct, cost = per["correct"][singles], per["cost"][singles]
    best = correct.max(axis=1)
    chosen = cost.where(correct.eq(best, axis=0)).min(axis=1)
    return float(chosen.mean()), float(100 * best.mean())


def router_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per pool and benchmark with priced single workers: every priced row's AIQ and APGR, the zero and
    the oracle router's AIQ (`COLUMNS`; accuracy and AIQ in %, APGR a share)."""
    if frame.empty:
        return pd.DataFrame(columns=COLUMNS)
    out = []
    found = points(frame)
    for (pool, benchmark), group in found.groupby(["pool", "benchmark"], sort=True):
        priced = group.dropna(subset=["usd"])
        singles = priced[priced["solver"] == SINGLE]
        if singles.empty:
            continue
        mine = frame[(frame["pool"] == pool) & (frame["paper_column"] == benchmark)]
        top = oracle_point(mine, list(singles["label"]))
        base = list(zip(singles["usd"], singles["accuracy"], strict=True))
        every = [*zip(priced["usd"], priced["accuracy"], strict=True), *([top] if top else [])]
        low, high = min(x for x, _ in every), max(x for x, _ in every)
        weak = min(base, key=lambda p: (p[0], -p[1]))
        strong = min(base, key=lambda p: (-p[1], p[0]))
        names = dict(zip(base, singles["label"], strict=True))
        common = {"pool": pool, "benchmark": benchmark, "weak": names[weak], "strong": names[strong]}
        for r in priced.itertuples():
            point = (r.usd, r.accuracy)
            out.append(
                {
                    **common,
                    "row": r.label,
                    "accuracy": r.accuracy,
                    "usd": r.usd,
                    "aiq": aiq([*base, point], low, high),
                    "apgr": apgr(point, weak, strong),
                }
            )
        out.append(
            {
                **common,
                "row": ZERO,
                "accuracy": math.nan,
                "usd": math.nan,
                "aiq": aiq(base, low, high),
                "apgr": math.nan,
            }
        )
        if top:
            out.append(
                {
                    **common,
                    "row": ORACLE,
                    "accuracy": top[1],
                    "usd": top[0],
                    "aiq": aiq([*base, top], low, high),
                    "apgr": apgr(top, weak, strong),
                }
            )
    return pd.DataFrame(out, columns=COLUMNS)


def readable(table: pd.DataFrame) -> pd.DataFrame:
    """Text cells for markdown and the page."""
    if table.empty:
        return table
    num = lambda fmt: lambda v: "—" if pd.isna(v) else fmt.format(v)  # noqa: E731
    return pd.DataFrame(
        {
            "benchmark": table["benchmark"],
            "row": table["row"],
            "accuracy %": table["accuracy"].map(num("{:.1f}")),
            "USD per question": table["usd"].map(num("{:.5f}")),
            "AIQ %": table["aiq"].map(num("{:.1f}")),
            "APGR": table["apgr"].map(num("{:.2f}")),
            "weak": table["weak"],
            "strong": table["strong"],
        }
    )
