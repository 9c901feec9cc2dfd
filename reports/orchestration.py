"""Does orchestration pay? Per pool: the oracle gap, paired comparisons, the accuracy-cost Pareto front
and workflow diagnostics, as tables (markdown + CSV under `tables/`) and a plot of the paired differences.

Each table's CSV holds the numbers (`reports.oracle`, `reports.paired`, `reports.pareto`,
`reports.diagnostics`); its markdown and the page show them as text. A simulated pool's tables are
headed SIMULATION like the paper tables (`reports.tables.pool_heading`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from reports import diagnostics, oracle, paired, pareto, routing
from reports.csv_safe import write_csv
from reports.plots import Plot, pool_title, save_figure, wrapped
from reports.safe_text import write_text
from reports.tables import markdown, md_text, pool_heading, pool_slug

NOTES = {
    "oracle": "Oracle: per question, the best single worker on that question (from the single_worker logs); "
    "best single: the single worker with the highest accuracy on these questions. Gaps in percentage "
    "points on the questions each row ran that every single worker ran (reports/oracle.py).",
    "paired": f"Each pair on the samples both ran (same question and epoch): a - b in points with a "
    f"{paired.CONFIDENCE:.0%} percentile bootstrap CI ({paired.RESAMPLES} resamples, paired), and the "
    "exact McNemar test of the discordant samples (only a right vs only b right). A conductor row is "
    "always side a.",
    "pareto": "Accuracy (mean over benchmarks) vs USD per question; on the front: no other compared row is at "
    "least as accurate and at most as costly. Rows that ran only some benchmarks or lack a price are "
    "not compared.",
    "routing": "The router benchmarks' numbers, per benchmark, from each row's accuracy and USD per question. "
    "Both take the non-decreasing convex hull of (cost, accuracy) points (the upper envelope, flat after "
    "its most accurate point: what mixing the points at random per question reaches at each cost). "
    "AIQ (RouterBench, Hu et al. 2024): the area under the hull of the row's point and the single "
    "workers' over the benchmark's cost range (cheapest to costliest priced point), divided by that "
    "range: accuracy averaged over the costs; the zero router (single workers alone) and the oracle "
    "router (per question the cheapest right single worker) bound it. APGR (RouteLLM, Ong et al. "
    "2024): (area under the hull of weak, row and strong - weak's area) / (strong's - weak's) over "
    "the costs from the weak model's to the strong's; weak = the cheapest single worker, strong = the "
    "most accurate; 0.5 = mixing the two at random, 1 = the strong model's accuracy at the weak's "
    "cost; '—' without a gap. Sources: " + routing.SOURCES + " Definitions: reports/routing.py.",
    "diagnostics": "Root workflows only. copy: steps whose subtask only restates the question; one step / one "
    "worker: workflows of a single step / a single worker model; verify/refine: the strategy rule "
    "of solvers/strategy.py; changed: the final answer differs from that of the latest step the "
    "final step saw (better: wrong -> right, worse: right -> wrong, by the scorer's check); worker "
    "entropy: of the worker models over all steps, in bits (0 = always one worker).",
}
TITLES = {
    "oracle": "Oracle gap: every row against the oracle and the best single worker",
    "paired": "Paired comparisons on the same samples",
    "pareto": "Accuracy-cost Pareto front",
    "routing": "AIQ and APGR (the router benchmarks' summary numbers)",
    "diagnostics": "Workflow diagnostics",
}
BUILDERS = {
    "oracle": (oracle.oracle_table, oracle.readable),
    "paired": (paired.paired_table, paired.readable),
    "pareto": (pareto.front_table, pareto.readable),
    "routing": (routing.router_table, routing.readable),
    "diagnostics": (diagnostics.diagnostics_table, diagnostics.readable),
}
MAX_PLOTTED = 40  # pairs per plot
LABEL_LINE = 80  # characters per line of a pair's label (wrapped, not cut)


@dataclass(frozen=True)
class Analysis:
    """One analysis table of one pool: the numbers, the text shown, the files written."""

    kind: str  # a key of TITLES
    pool: str
    pool_kind: str  # simulated | mixed | local | api | unknown
    setting: str
    heading: str
    data: pd.DataFrame
    shown: pd.DataFrame
    logs: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"{self.kind}-{pool_slug(self.pool)}"


def analyses(frame: pd.DataFrame) -> list[Analysis]:
    """Every analysis of every pool in the frame (a pool without single workers has no oracle table)."""
    out = []
    for kind, (build, read) in BUILDERS.items():
        table = build(frame)
        for pool, data in table.groupby("pool", sort=True):
            rows = frame[frame["pool"] == pool]
            pool_kind, setting = str(rows["pool_kind"].iloc[0]), str(rows["setting"].iloc[0] or "")
            head = pool_heading(str(pool), pool_kind, setting)
            shown = read(data.drop(columns="pool").reset_index(drop=True))
            out.append(
                Analysis(
                    kind,
                    str(pool),
                    pool_kind,
                    setting,
                    f"{TITLES[kind]} — {head}",
                    data.reset_index(drop=True),
                    shown,
                    tuple(sorted(set(rows["log"]))),
                )
            )
    return out


def write(found: list[Analysis], out: Path) -> str:
    """Write each analysis as tables/<name>.md and .csv; return their markdown, for tables.md."""
    parts = []
    for a in found:
        text = f"## {md_text(a.heading)}\n\n{md_text(NOTES[a.kind])}\n\n{markdown(a.shown)}"
        write_text(out / "tables" / f"{a.name}.md", text)
        write_csv(a.data, out / "tables" / f"{a.name}.csv")
        parts.append(text)
    return "\n".join(parts)


def paired_plot(a: Analysis, out: Path) -> Plot | None:
    """The paired differences of one pool with their CIs (pooled over benchmarks where a pair has
    several), in the table's order; at most MAX_PLOTTED pairs."""
    data = a.data
    several = data.groupby(["a", "b"])["benchmark"].transform("size") > 1
    rows = data[(data["benchmark"] == paired.ALL) | ~several].head(MAX_PLOTTED)
    if rows.empty:
        return None
    labels = [
        wrapped(f"{r.a} − {r.b} ({r.benchmark}, n={r.n}, p={r.mcnemar_p:.2g})", LABEL_LINE) for r in rows.itertuples()
    ]
    spans = np.cumsum([0.0] + [0.2 + 0.13 * label.count("\n") for label in labels])  # a row per label, its lines
    fig = Figure(figsize=(10, 1.3 + spans[-1] + 0.12 * len(rows)), dpi=100, layout="constrained")
    ax = fig.subplots()
    y = [-(spans[i] + spans[i + 1]) / 2 for i in range(len(rows))]
    err = [(rows["difference"] - rows["ci_low"]).fillna(0), (rows["ci_high"] - rows["difference"]).fillna(0)]
    ax.errorbar(rows["difference"], y, xerr=err, fmt="o", color="tab:blue", capsize=3)
    ax.axvline(0, color="grey", lw=1)
    ax.set_yticks(y, labels, fontsize=7)
    ax.set_ylim(-spans[-1] - 0.1, 0.1)
    ax.set_xlabel(f"a − b, accuracy in points\n({paired.CONFIDENCE:.0%} bootstrap CI; p: exact McNemar)")
    ax.grid(alpha=0.3, axis="x")
    head = pool_title(a.pool, a.pool_kind, a.setting)
    fig.suptitle(f"{head}\npaired differences on the same samples", fontsize=9)
    name = f"{pool_slug(a.pool)}-paired"
    png, svg = save_figure(fig, out, name)
    caption = (
        NOTES["paired"] + f" {len(rows)} of {len(data)} comparisons shown (over all benchmarks where a "
        "pair ran several)."
    )
    return Plot(name, head, caption, png, svg, a.pool, a.logs)
