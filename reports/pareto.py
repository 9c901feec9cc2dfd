"""The accuracy-cost Pareto front across a pool's methods (pandas; no Inspect import).

A method's point is its accuracy and USD per question (`reports.plots.method_points`: the mean over
the benchmarks it ran of each benchmark's mean). Only methods that ran every benchmark of the pool
and whose cost is known are compared; a compared method is on the front when no other compared
method is at least as accurate and at most as costly, and better in one of the two. The others
say why they are not compared.
"""

from __future__ import annotations

import pandas as pd

from reports.plots import method_points

COLUMNS = ["pool", "row", "benchmarks", "accuracy", "usd", "agent_calls", "front", "dominated_by"]


def dominated_by(points: pd.DataFrame, label: str) -> str | None:
    """The most accurate point that dominates `label` (columns accuracy, cost), None when none does."""
    me = points.loc[label]
    better = points[
        (points["accuracy"] >= me["accuracy"])
        & (points["cost"] <= me["cost"])
        & ((points["accuracy"] > me["accuracy"]) | (points["cost"] < me["cost"]))
    ]
    return None if better.empty else str(better["accuracy"].idxmax())


def front_labels(points: pd.DataFrame) -> list[str]:
    """The labels on the front among `points` (columns accuracy, cost; all compared), most accurate first."""
    return [
        str(label)
        for label in points.sort_values("accuracy", ascending=False).index
        if dominated_by(points, label) is None
    ]


def front_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per pool, every row with its point and whether it is on the front (`COLUMNS`)."""
    out = []
    for pool, group in frame.groupby("pool", sort=True) if len(frame) else ():
        points = method_points(group)
        benchmarks = group["task"].nunique()
        compared = points[(points["tasks"] == benchmarks) & points["cost"].notna()]
        for label, p in points.sort_values("accuracy", ascending=False).iterrows():
            if p["tasks"] != benchmarks:
                front, by = f"not compared: ran {int(p['tasks'])} of {benchmarks} benchmarks", None
            elif pd.isna(p["cost"]):
                front, by = "not compared: cost unknown", None
            else:
                by = dominated_by(compared, label)
                front = "no" if by else "yes"
            out.append(
                {
                    "pool": pool,
                    "row": label,
                    "benchmarks": int(p["tasks"]),
                    "accuracy": p["accuracy"],
                    "usd": p["cost"],
                    "agent_calls": p["calls"],
                    "front": front,
                    "dominated_by": by or "",
                }
            )
    return pd.DataFrame(out, columns=COLUMNS)


def readable(table: pd.DataFrame) -> pd.DataFrame:
    """Text cells for markdown and the page."""
    if table.empty:
        return table
    return pd.DataFrame(
        {
            "row": table["row"],
            "benchmarks": table["benchmarks"],
            "accuracy %": table["accuracy"].map("{:.1f}".format),
            "USD per question": table["usd"].map(lambda v: "unknown" if pd.isna(v) else f"{v:.5f}"),
            "agent calls": table["agent_calls"].map(lambda v: "—" if pd.isna(v) else f"{v:.2f}"),
            "on the front": table["front"],
            "dominated by": table["dominated_by"],
        }
    )
