"""The report's plots (matplotlib, each saved as PNG and SVG), from logged evals and training runs.

Eval plots take the reports frame (one row per log, sample and epoch; columns of
`reports.records` plus task, paper_column, sample_id, epoch, score, error, log) and are drawn
per pool: a simulated pool's plots are titled SIMULATION, a local pool's LOCAL; no plot
puts them beside the paper's numbers. `eval_plots` draws:

- accuracy vs USD per question and vs agent calls per question, one point per method (Fig. 5);
  a method's point averages its per-benchmark means over the benchmarks it ran;
- worker selection, steps per workflow (Fig. 8), share of strategies (`solvers.strategy`) and
  worker selection inside recursive rounds (Fig. 10; only when some sample recursed) per
  benchmark: stacked share bars, one panel per method whose value varies or whose workflows a
  conductor model wrote (a fixed single worker carries no information), `PANELS` a figure;
- one sample's root workflow as a graph (nodes: steps with their worker; edges: what a step saw).

`training_plots` reads training run directories (rollouts.jsonl and run_info.json, written by
training/train.py): reward, parse rate and accuracy per GRPO step, worker share per step (overall
and per domain), steps per workflow per domain (Figs. 3, 7, 8, 9), and the reward and parse rate
of several runs overlaid when they trained on the same pool.

Text from logs (model names, subtasks, labels) is clipped and drawn as plain text (no mathtext).
Figures are built without pyplot (no global state; nothing to close).
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib
import matplotlib.patches
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, MaxNLocator

from reports.records import pool_kind, short
from reports.run_files import read_run_info
from reports.safe_text import writable, writable_data
from solvers.strategy import STRATEGIES
from workers.redact import pool_label

LABEL_CHARS = 48  # log-derived text per label in a plot
LEGEND_CHARS = 72  # per method in the Fig. 5 legend (method options make labels long)
SUBTASK_CHARS = 60  # subtask text per node of a workflow graph
MAX_BARS = 40  # benchmarks per bar chart
MARKERS = "osD^v<>P"  # with 10 colours: 80 methods per scatter before a style repeats
PANELS = 8  # methods per figure of a distribution (more go to further figures)
ARC = -0.25  # curvature of an edge that skips layers (drawn above the boxes it passes)
SVG_RC = {"svg.fonttype": "none", "svg.hashsalt": "conductor-bench"}  # text as text; stable ids
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class Plot:
    """One saved figure: its files, what it shows, and the logs (or run dirs) it was drawn from."""

    name: str
    title: str
    caption: str
    png: Path
    svg: Path
    pool: str = ""
    sources: tuple[str, ...] = ()


def plain(text: object, limit: int = LABEL_CHARS) -> str:
    """Log text for a plot: writable (`reports.safe_text`), control characters dropped, clipped, `$`
    escaped (no mathtext)."""
    s = _CONTROL.sub(" ", writable(str(text)))
    if len(s) > limit:
        s = s[: limit - 1] + "…"
    return s.replace("$", r"\$")  # every $ escaped: matplotlib never enters math mode


def wrapped(text: object, width: int, max_lines: int = 3) -> str:
    """Log text for a plot (`plain`), wrapped at word boundaries to `width` characters a line, at most
    `max_lines` lines (then `…`): a long label is shown whole, on more lines, not cut."""
    lines = textwrap.wrap(
        _CONTROL.sub(" ", writable(str(text))), width, max_lines=max_lines, placeholder=" …", break_on_hyphens=False
    )
    return "\n".join(plain(line, width) for line in lines)


def fitted_title(text: str, fig: Figure, fontsize: float) -> str:
    """A title's lines wrapped to the figure's width (about 0.55 em a character), never wider than it."""
    chars = max(20, int(fig.get_figwidth() * 72 / (0.6 * fontsize)))
    return "\n".join(textwrap.fill(line, chars) for line in text.split("\n"))


def pool_title(pool: str, kind: str, setting: str = "") -> str:
    """The title prefix of a pool's plots: SIMULATION / MIXED / LOCAL / the API pool's setting."""
    if kind == "simulated":
        return f"SIMULATION (pool {plain(pool)}: simulated workers, not comparable to the paper)"
    if kind == "mixed":
        return f"MIXED (pool {plain(pool)}: simulated and real workers, not comparable to the paper)"
    if kind == "local":
        return f"LOCAL (pool {plain(pool)}: small local models, not comparable to the paper)"
    return f"pool {plain(pool)}" + (f" ({setting})" if setting else "")


# ----------------------------------------------------------------------------- eval plots


def eval_plots(frame: pd.DataFrame, out_dir: str | Path, *, sample: Mapping | None = None) -> list[Plot]:
    """Every eval plot of `frame`, per pool, written under `out_dir`; `sample` picks the workflow
    drawn (keys log, sample_id, epoch; default: `pick_sample`)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    plots: list[Plot] = []
    if frame.empty:
        return plots
    for pool, group in frame.groupby("pool", sort=True):
        kind = str(group["pool_kind"].iloc[0])
        setting = str(group["setting"].iloc[0] or "")
        head = pool_title(str(pool), kind, setting)
        stem = f"{_slug(pool)}"
        plots.append(_accuracy_cost(group, out, stem, head, str(pool)))
        plots += _distributions(group, out, stem, head, str(pool))
    chosen = _find(frame, sample) if sample else pick_sample(frame)
    if chosen is not None:
        kind = str(chosen["pool_kind"])
        head = pool_title(str(chosen["pool"]), kind, str(chosen["setting"] or ""))
        plots.append(_workflow(chosen, out, head))
    return plots


def method_points(frame: pd.DataFrame) -> pd.DataFrame:
    """Per method label: mean accuracy (%), USD and agent calls per question, averaged over the
    benchmarks it ran (each benchmark's mean first); cost NaN when any of its costs is unknown."""
    rows = frame.assign(
        correct=_correct(frame),
        cost=pd.to_numeric(frame["cost_usd"], errors="coerce"),
        calls=pd.to_numeric(frame["agent_calls"], errors="coerce"),
    )
    per_task = rows.groupby(["label", "task"], sort=True).agg(
        accuracy=("correct", "mean"),
        cost=("cost", "mean"),
        cost_known=("cost", lambda c: bool(c.notna().all())),
        calls=("calls", "mean"),
        n=("correct", "size"),
    )
    per_task.loc[~per_task["cost_known"], "cost"] = np.nan
    points = per_task.groupby(level="label").agg(
        accuracy=("accuracy", "mean"),
        cost=("cost", lambda c: c.mean() if c.notna().all() else np.nan),
        calls=("calls", "mean"),
        tasks=("n", "size"),
        n=("n", "sum"),
    )
    points["accuracy"] *= 100
    return points


def _correct(frame: pd.DataFrame) -> pd.Series:
    """1.0 per correct sample; a sample without a score (error, no answer) counts as wrong."""
    return pd.to_numeric(frame["score"], errors="coerce").fillna(0.0).clip(0.0, 1.0)


def _accuracy_cost(group: pd.DataFrame, out: Path, stem: str, head: str, pool: str) -> Plot:
    points = method_points(group)
    families = [method_family(group, label) for label in points.index]
    points = points.assign(family=families).sort_values(["family", "accuracy"], ascending=[True, False], kind="stable")
    all_tasks = group["task"].nunique()
    fig = Figure(figsize=(11, 4.6), dpi=100, layout="constrained")
    axes = fig.subplots(1, 2, sharey=True)
    missing_cost = []
    styles = dict(zip(points.index, method_styles(list(points["family"])), strict=True))
    missing_cost = [plain(label) for label in points.index[~np.isfinite(points["cost"])]]
    for ax, x in zip(axes, ("cost", "calls"), strict=True):
        _scatter_spots(ax, points[np.isfinite(points[x])], x, styles)
    _draw_front(axes[0], points[(points["tasks"] == all_tasks) & points["cost"].notna()])
    costs = points["cost"].dropna()
    if len(costs) > 1 and costs.min() > 0 and costs.max() / costs.min() > 20:
        axes[0].set_xscale("log")  # costs over orders of magnitude
    else:
        axes[0].xaxis.set_major_locator(MaxNLocator(5))
    axes[0].xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.3g}"))
    axes[0].set_ylabel("accuracy (%)")
    axes[1].set_xlabel("agent calls per question")
    notes = ["cost unknown: " + ", ".join(missing_cost)[:200]] if missing_cost else []
    if len(costs) and not costs.any():
        notes.append("every known cost is 0 USD (no prices for this pool's models)")
    scale = " (log scale)" if axes[0].get_xscale() == "log" else ""
    notes = [textwrap.fill(n, 70, max_lines=3, placeholder=" …") for n in notes]
    axes[0].set_xlabel("\n".join([f"USD per question{scale}", *notes]))
    for ax in axes:
        ax.grid(alpha=0.3)
    marks = {
        label: "" if p["tasks"] == all_tasks else f" * {int(p['tasks'])}/{all_tasks} benchmarks"
        for label, p in points.iterrows()
    }
    front, front_label = axes[0].get_legend_handles_labels()
    proxies = [
        Line2D(
            [],
            [],
            ls="",
            marker=styles[label]["marker"],
            ms=7,
            color=styles[label]["color"],
            mfc="none" if styles[label].get("facecolors") == "none" else styles[label]["color"],
        )
        for label in points.index
    ]
    fig.legend(
        front + proxies,
        front_label + [plain(label, LEGEND_CHARS) + marks[label] for label in points.index],
        loc="outside right center",
        fontsize=7,
        ncols=1 + len(points) // 25,
        title="colour: method, marker: its variant; rings: methods at one spot",
        title_fontsize=7,
    )
    fig.suptitle(f"{head}\naccuracy vs cost and vs agent calls (mean over benchmarks)", fontsize=9)
    caption = (
        f"One point per method: the mean over the benchmarks it ran of each benchmark's accuracy, "
        f"USD and agent calls per question; {all_tasks} benchmark(s), {len(group)} sample-epochs. "
        "A sample without a score counts as wrong; a method with any unknown cost has no cost point; "
        "* marks a method that ran only some of the benchmarks; the dashed line joins the accuracy-cost "
        "Pareto front of the methods that ran all of them (reports/pareto.py)."
    )
    return _save(fig, out, f"{stem}-accuracy-cost", head, caption, pool, group)


def method_family(frame: pd.DataFrame, label: str) -> str:
    """What a plot colours a row by: its solver (the matrix's `context_5x` apart from `single_worker`),
    else the first word of its label."""
    first = frame[frame["label"] == label].iloc[0]
    if first.get("matrix_base") == "context_5x":
        return "context_5x"
    if isinstance(first.get("solver"), str) and first["solver"]:
        return first["solver"]
    return re.split(r"[\s(\[]", str(label), maxsplit=1)[0]


def method_styles(families: Sequence[str]) -> list[dict]:
    """A scatter style per method: one colour per solver (family), a marker per variant within it, so
    that a legend of many rows reads by method (with more than 10 solvers, colours come round again
    with filled/hollow markers apart)."""
    cmap = matplotlib.colormaps["tab10"]
    order = list(dict.fromkeys(families))
    seen: dict[str, int] = {}
    styles = []
    for family in families:
        n = seen[family] = seen.get(family, -1) + 1
        f = order.index(family)
        colour = cmap(f % 10)
        styles.append(
            {
                "color": colour,
                "marker": MARKERS[n % len(MARKERS)],
                "s": 42,
                "zorder": 3,
                "edgecolors": colour,
                **({"facecolors": "none"} if f // 10 % 2 else {}),
            }
        )
    return styles


def _scatter_spots(ax, points: pd.DataFrame, x: str, styles: Mapping[str, dict]) -> None:  # noqa: ANN001
    """One marker per method; methods at the same spot (e.g. a simulated 5x context and its single worker)
    after the first are drawn as growing hollow markers in their colours around it, so none hides another."""
    spots = points[[x, "accuracy"]].round(9)
    for _, same in spots.groupby([x, "accuracy"], sort=False):
        for k, label in enumerate(same.index):
            style = (
                styles[label]
                if k == 0
                else {
                    **styles[label],
                    "facecolors": "none",
                    "linewidths": 1.3,
                    "s": styles[label]["s"] * (1 + 1.6 * k),
                    "zorder": 2,
                }
            )
            ax.scatter(points.at[label, x], points.at[label, "accuracy"], **style)


def _draw_front(ax, compared: pd.DataFrame) -> None:  # noqa: ANN001
    """The accuracy-cost Pareto front of the methods that ran every benchmark (`reports.pareto`), as a step line."""
    from reports.pareto import front_labels  # reports.pareto builds on method_points

    front = compared.loc[front_labels(compared)].sort_values("cost") if len(compared) else compared
    if len(front) > 1:
        ax.step(
            front["cost"],
            front["accuracy"],
            where="post",
            color="grey",
            ls="--",
            lw=1,
            zorder=2,
            label="Pareto front (methods on every benchmark)",
        )


def worker_shares_by_task(rows: pd.DataFrame, column: str = "step_models") -> pd.DataFrame | None:
    """Benchmark x worker model: share of executed worker steps (the models listed in `column`);
    None when no step ran (or the frame has no such column)."""
    if column not in rows:
        return None
    models = rows[["task", column]].explode(column).dropna()
    if models.empty:
        return None
    return pd.crosstab(models["task"], models[column].map(short), normalize="index")


def nested_worker_shares_by_task(rows: pd.DataFrame) -> pd.DataFrame | None:
    """Benchmark x worker model over the steps inside recursive rounds only (Fig. 10)."""
    return worker_shares_by_task(rows, "nested_step_models")


def steps_by_task(rows: pd.DataFrame) -> pd.DataFrame | None:
    """Benchmark x number of root steps: share of samples; None when no sample records steps."""
    steps = pd.to_numeric(rows["steps"], errors="coerce")
    data = rows.assign(steps=steps).dropna(subset=["steps"])
    if data.empty:
        return None
    shares = pd.crosstab(data["task"], data["steps"].astype(int), normalize="index")
    return shares.rename(columns=lambda n: f"{n} step" + ("" if n == 1 else "s"))


def strategies_by_task(rows: pd.DataFrame) -> pd.DataFrame | None:
    """Benchmark x strategy (solvers.strategy order): share of samples."""
    shares = pd.crosstab(rows["task"], rows["strategy"])
    order = [s for s in STRATEGIES if s in shares.columns] + [s for s in shares.columns if s not in STRATEGIES]
    return shares[order].div(shares.sum(axis=1), axis=0)


def _strategy_order(name: str) -> tuple[int, str]:
    return (STRATEGIES.index(name) if name in STRATEGIES else len(STRATEGIES), name)


# name, table, order of its categories, what it shows, x label, caption
DISTRIBUTIONS = (
    (
        "workers",
        worker_shares_by_task,
        str,
        "worker selection per benchmark",
        "share of executed worker steps",
        "Share of the executed worker steps (nested rounds included) each worker model took, per benchmark.",
    ),
    (
        "steps",
        steps_by_task,
        lambda c: int(c.split()[0]),
        "steps per workflow per benchmark (Fig. 8)",
        "share of samples",
        "Share of each benchmark's samples by the number of steps of the recorded root workflow.",
    ),
    (
        "strategies",
        strategies_by_task,
        _strategy_order,
        "strategy per benchmark",
        "share of samples",
        "Share of each benchmark's samples by the strategy of the recorded root workflow (rule: solvers/strategy.py).",
    ),
    (
        "workers-recursive",
        nested_worker_shares_by_task,
        str,
        "worker selection inside recursive rounds (Fig. 10)",
        "share of worker steps in recursive rounds",
        "Share of the worker steps inside recursive rounds (the conductor calling itself) each worker model took.",
    ),
)


def shown(rows: pd.DataFrame, table: pd.DataFrame | None) -> bool:
    """Whether a method gets a panel: its value varies, or a conductor model wrote its workflows
    (a conductor that always does the same is a finding; a fixed single worker is not)."""
    return table is not None and (table.shape[1] > 1 or bool(rows["conductor_model"].notna().any()))


def _distributions(group: pd.DataFrame, out: Path, stem: str, head: str, pool: str) -> list[Plot]:
    """Per distribution: one panel per method `shown`, PANELS panels a figure."""
    plots = []
    labels = {label: rows for label, rows in group.groupby("label", sort=True)}
    for name, build, order, what, xlabel, caption in DISTRIBUTIONS:
        tables = [(label, t) for label, rows in labels.items() if shown(rows, t := build(rows))]
        chunks = [tables[i : i + PANELS] for i in range(0, len(tables), PANELS)]
        for i, chunk in enumerate(chunks):
            part = f" ({i + 1}/{len(chunks)})" if len(chunks) > 1 else ""
            fig = _panels(
                chunk, sorted({c for _, t in tables for c in t.columns}, key=order), xlabel, f"{head}\n{what}{part}"
            )
            rows = pd.concat([labels[label] for label, _ in chunk])
            suffix = f"-{i + 1}" if len(chunks) > 1 else ""
            plots.append(_save(fig, out, f"{stem}-{name}{suffix}", f"{head}: {what}{part}", caption, pool, rows))
    return plots


def _panels(tables: Sequence[tuple[str, pd.DataFrame]], categories: list, xlabel: str, title: str) -> Figure:
    """One panel per (method label, benchmark x category shares): horizontal stacked bars, one
    per benchmark; a category has the same colour in every panel and every figure of a kind."""
    colors = _colors(categories)
    cols = 1 if len(tables) == 1 else 2
    rows = -(-len(tables) // cols)
    height = max(0.3 * max(len(t) for _, t in tables) + 1.0, 1.6)
    fig = Figure(figsize=(5.5 * cols + 2.6, height * rows + 0.9), dpi=100, layout="constrained")
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False).ravel())
    for ax, (label, shares) in zip(axes, tables, strict=False):
        shares = shares.iloc[:MAX_BARS]
        y = np.arange(len(shares))
        left = np.zeros(len(shares))
        for col in [c for c in categories if c in shares.columns]:
            values = shares[col].to_numpy(dtype=float)
            ax.barh(y, values, left=left, color=colors[col])
            left += values
        ax.set_yticks(y, [plain(t) for t in shares.index])
        ax.invert_yaxis()
        ax.set_xlim(0, 1)
        ax.tick_params(labelsize=8)
        ax.set_title(plain(label, 80), fontsize=8)
    for ax in axes[len(tables) :]:
        ax.set_axis_off()
    handles = [matplotlib.patches.Patch(color=colors[c], label=plain(c)) for c in categories]
    fig.legend(handles=handles, loc="outside right center", fontsize=7)
    fig.supxlabel(xlabel, fontsize=8)
    fig.suptitle(title, fontsize=9)
    return fig


def pick_sample(frame: pd.DataFrame) -> pd.Series | None:
    """The workflow drawn by default: among recorded workflows, a correct one with the most steps
    (ties: the first by log, sample id, epoch); None when no sample has a workflow."""
    data = frame.assign(
        _steps=pd.to_numeric(frame["steps"], errors="coerce").fillna(0).to_numpy(), _ok=_correct(frame).to_numpy()
    )
    has = data[(data["graph"].astype(str).str.len() > 2).to_numpy() & (data["_steps"] > 0).to_numpy()]
    if has.empty:
        return None
    ranked = has.sort_values(
        ["_ok", "_steps", "log", "sample_id", "epoch"], ascending=[False, False, True, True, True], kind="stable"
    )
    return ranked.iloc[0]


def _find(frame: pd.DataFrame, sample: Mapping) -> pd.Series:
    match = frame
    for key in ("log", "sample_id", "epoch"):
        if key in sample:
            match = match[match[key].astype(str) == str(sample[key])]
    if match.empty:
        raise ValueError(f"no sample {dict(sample)} in the logs; fix: name a log, sample_id and epoch that exist")
    return match.iloc[0]


def layout(graph: Sequence[Mapping]) -> list[tuple[int, int]]:
    """(layer, slot) per step: a step sits one layer right of the deepest step it saw."""
    layers: list[int] = []
    for i, step in enumerate(graph):
        seen = [v for v in step.get("visible") or [] if isinstance(v, int) and 0 <= v < i]
        layers.append(1 + max((layers[v] for v in seen), default=-1))
    slots: dict[int, int] = {}
    placed = []
    for layer in layers:
        placed.append((layer, slots.get(layer, 0)))
        slots[layer] = slots.get(layer, 0) + 1
    return placed


def _workflow(row: pd.Series, out: Path, head: str) -> Plot:
    graph = json.loads(row["graph"] or "[]")
    places = layout(graph)
    width = max((p[0] for p in places), default=0) + 1
    height = max((p[1] for p in places), default=0) + 1
    fig = Figure(figsize=(min(20.0, max(6.0, 2.6 * width)), min(14.0, max(2.8, 1.3 * height + 1.2))), dpi=100)
    ax = fig.subplots()
    ax.set_axis_off()
    ax.set_xlim(-0.6, width - 0.4)
    arcs = any(
        places[i][0] - places[v][0] > 1
        for i, step in enumerate(graph)
        for v in step.get("visible") or []
        if isinstance(v, int) and 0 <= v < i
    )
    ax.set_ylim(height - 0.4, -1.1 if arcs else -0.6)  # room above the boxes for arcs
    boxes = []
    for i, step in enumerate(graph):
        x, y = places[i]
        worker = f"worker {plain(step.get('worker'), 6)}: {plain(short(step.get('model')), 24)}"
        nested = " (recursive)" if step.get("nested") else ""
        text = f"step {i}{nested}\n{worker}\n{plain(step.get('subtask'), SUBTASK_CHARS)}"
        face = "#f4c7c3" if not step.get("ok", True) else ("#c9e4c5" if i == len(graph) - 1 else "#dde6f5")
        boxes.append(
            ax.text(
                x,
                y,
                _wrap(text),
                ha="center",
                va="center",
                fontsize=7,
                bbox={"boxstyle": "round,pad=0.4", "facecolor": face, "edgecolor": "0.4"},
            )
        )
    for i, step in enumerate(graph):
        for v in step.get("visible") or []:
            if isinstance(v, int) and 0 <= v < i:  # box to box: the text artists are the coordinates
                span = places[i][0] - places[v][0]  # an edge over boxes between arcs above them
                ax.annotate(
                    "",
                    xy=(0, 0.5),
                    xycoords=boxes[i],
                    xytext=(1, 0.5),
                    textcoords=boxes[v],
                    arrowprops={
                        "arrowstyle": "->",
                        "color": "0.35",
                        "shrinkA": 6,
                        "shrinkB": 6,
                        "connectionstyle": f"arc3,rad={ARC if span > 1 else 0}",
                    },
                )
    outcome = "correct" if _score(row) >= 1 else "not correct"
    title = (
        f"{head}\n{plain(row['label'], 160)} on {plain(row['task'])}, sample {plain(row['sample_id'], 24)} "
        f"epoch {row['epoch']}: {outcome}, strategy: {row['strategy']}"
    )
    ax.set_title(fitted_title(title, fig, 8), fontsize=8)
    fig.tight_layout()
    caption = (
        "One sample's root workflow: a box per step (worker index and model, subtask start), an arrow "
        "from each step a step saw; the last step (green) gives the answer, a failed step is red."
    )
    return _save(fig, out, f"{_slug(row['pool'])}-workflow", title, caption, str(row["pool"]), pd.DataFrame([row]))


def _score(row: pd.Series) -> float:
    value = pd.to_numeric(pd.Series([row.get("score")]), errors="coerce").fillna(0.0).iloc[0]
    return float(value)


def _wrap(text: str, width: int = 28) -> str:
    """Each line wrapped at word boundaries (long words broken), at most 3 lines per line."""
    lines = []
    for line in text.split("\n"):
        lines += textwrap.wrap(line, width, max_lines=3, placeholder=" …") or [""]
    return "\n".join(lines)


# ----------------------------------------------------------------------------- training plots


# the rollout fields the training plots read (training.rollouts documents them all); `assigned` and
# `first_worker_policy`: an exploring group's rollouts count as the policy's own choice (domain_worker_shares)
PLOT_FIELDS = ("step", "item_id", "reward", "parsed", "correct", "steps", "workers", "worker_names", "domain",
               "assigned", "first_worker_policy")  # fmt: skip


def read_run(run: str | Path, fields: Sequence[str] | None = None) -> tuple[pd.DataFrame, dict]:
    """A training run's rollouts (one row per rollout; only `fields` when given: the big text
    fields are not kept) and its run_info.json ({} when absent; checked: `reports.run_files`)."""
    run = Path(run)
    path = run / "rollouts.jsonl"
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing; fix: pass a training output_dir (training/train.py writes it)")
    rows = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as err:
                raise ValueError(
                    f"{path} line {number} is not JSON ({err.msg}); fix: remove the line "
                    "(a run killed while writing leaves half a line)"
                ) from None
            row = writable_data(row)  # a lone surrogate as its escape: written anywhere later (reports.safe_text)
            rows.append(row if fields is None else {k: row.get(k) for k in fields})
    return pd.DataFrame(rows), read_run_info(run)


def per_step(rollouts: pd.DataFrame | Sequence[Mapping]) -> pd.DataFrame:
    """One row per GRPO step: rollouts, mean reward, parse rate, accuracy, mean workflow steps
    (parsed rollouts; 0 when none parsed)."""
    rows = rollouts if isinstance(rollouts, pd.DataFrame) else pd.DataFrame(list(rollouts))
    if rows.empty:
        return pd.DataFrame(columns=["step", "rollouts", "reward_mean", "parse_rate", "accuracy", "steps_per_workflow"])
    data = pd.DataFrame(
        {
            "step": pd.to_numeric(rows.get("step"), errors="coerce").fillna(0).astype(int),
            "reward": pd.to_numeric(rows["reward"], errors="coerce"),
            "parsed": rows.get("parsed", False).fillna(False).astype(bool),
            "correct": rows.get("correct", False).fillna(False).astype(bool),
            "steps": pd.to_numeric(rows.get("steps", 0), errors="coerce").fillna(0),
        }
    )
    data["parsed_steps"] = data["steps"].where(data["parsed"])
    table = data.groupby("step", sort=True).agg(
        rollouts=("reward", "size"),
        reward_mean=("reward", "mean"),
        parse_rate=("parsed", "mean"),
        accuracy=("correct", "mean"),
        steps_per_workflow=("parsed_steps", "mean"),
    )
    table["steps_per_workflow"] = table["steps_per_workflow"].fillna(0.0)
    return table.reset_index()


def run_title(run: str | Path, info: Mapping) -> str:
    """A run's plot title: recipe, model, pool; SIMULATION for a simulated pool, local for the local one."""
    return f"{pool_of_run(info)} - {plain(info.get('recipe', Path(run).name))}: {plain(info.get('model', ''))}"


def curves_figure(table: pd.DataFrame, title: str) -> Figure:
    """Reward, parse rate and accuracy per GRPO step."""
    fig = Figure(figsize=(6, 3.5), dpi=100)
    ax = fig.subplots()
    every = max(1, len(table) // 30)  # markers stay readable on long runs
    ax.plot(table["step"], table["reward_mean"], marker="o", markevery=every, label="mean reward")
    ax.plot(table["step"], table["parse_rate"], marker="s", markevery=every, label="parse rate")
    ax.plot(table["step"], table["accuracy"], marker="^", markevery=every, label="correct")
    ax.set_xlabel("GRPO step")
    ax.set_ylim(-0.05, 1.05)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def worker_shares(rows: pd.DataFrame) -> pd.DataFrame:
    """Per GRPO step (index) and worker (columns): share of that step's executed worker steps."""
    if rows.empty or "worker_names" not in rows:
        return pd.DataFrame()
    named = rows[["step", "worker_names"]].explode("worker_names").dropna()
    if named.empty:
        return pd.DataFrame()
    return pd.crosstab(named["step"].astype(int), named["worker_names"].astype(str), normalize="index")


def domain_worker_shares(rows: pd.DataFrame) -> pd.DataFrame:
    """Columns step, domain, then one per worker name: that worker's share of the step's worker
    choices in rollouts of that domain (rows only where the domain had some). A free rollout counts
    each executed worker step once. A rollout whose first worker was assigned (`assigned`,
    training/explore.py) is exploration, not routing: it counts as the policy's own probability of
    each worker where the worker was forced (`first_worker_policy`, one unit), or not at all."""
    if rows.empty or not {"worker_names", "domain", "step"} <= set(rows):
        return pd.DataFrame()
    assigned = rows["assigned"].notna() if "assigned" in rows else pd.Series(False, index=rows.index)
    named = rows.loc[~assigned, ["step", "domain", "worker_names"]].explode("worker_names").dropna()
    choices = [named.rename(columns={"worker_names": "worker"}).assign(weight=1.0)]
    if "first_worker_policy" in rows:
        policy = rows.loc[assigned, ["step", "domain", "first_worker_policy"]].dropna()
        choices += [
            pd.DataFrame({"step": step, "domain": domain, "worker": list(probs), "weight": list(probs.values())})
            for step, domain, probs in policy.itertuples(index=False)
            if isinstance(probs, dict) and probs
        ]
    long = pd.concat(choices, ignore_index=True)
    if long.empty:
        return pd.DataFrame()
    table = long.pivot_table(
        index=[long["step"].astype(int), long["domain"].astype(str)],
        columns=long["worker"].astype(str),
        values="weight",
        aggfunc="sum",
        fill_value=0.0,
    )
    table = table.div(table.sum(axis=1), axis=0)
    table.columns.name = "worker_names"
    return table.reset_index()


def routing_figure(shares: pd.DataFrame, title: str, window: int = 10) -> Figure:
    """One panel per domain: each worker's share per GRPO step, trailing mean over `window` steps."""
    if window < 1:
        raise ValueError(f"window must be >= 1 step, got {window}")
    domains = sorted(shares["domain"].unique())
    workers = [c for c in shares.columns if c not in ("step", "domain")]
    colors = _colors(workers)
    fig = Figure(figsize=(7.5, 2.2 * len(domains) + 0.9), dpi=100, layout="constrained")
    axes = fig.subplots(len(domains), 1, squeeze=False, sharex=True)[:, 0]
    for ax, domain in zip(axes, domains, strict=True):
        part = shares[shares["domain"] == domain].sort_values("step")
        for worker in workers:
            ax.plot(
                part["step"],
                part[worker].rolling(window, min_periods=1).mean(),
                color=colors[worker],
                label=plain(worker),
            )
        ax.set_ylim(-0.05, 1.05)
        ax.set_ylabel(f"{plain(domain, 16)}: share", fontsize=8)
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel("GRPO step")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside right center", fontsize=7)
    fig.suptitle(f"{title}\nworker choice per domain ({window}-step moving average)", fontsize=9)
    return fig


def domain_steps(rows: pd.DataFrame) -> pd.DataFrame:
    """Per GRPO step (index) and domain (columns): mean workflow steps of parsed rollouts."""
    if rows.empty or "domain" not in rows:
        return pd.DataFrame()
    parsed = rows[rows["parsed"].fillna(False).astype(bool)]
    if parsed.empty:
        return pd.DataFrame()
    return parsed.pivot_table(index="step", columns="domain", values="steps", aggfunc="mean").sort_index()


def training_plots(runs: Iterable[str | Path], out_dir: str | Path, *, window: int = 10) -> list[Plot]:
    """Every training plot of the run directories, written under `out_dir` (`window`: GRPO steps
    of the routing plot's moving average)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    plots: list[Plot] = []
    by_pool: dict[str, dict[str, pd.DataFrame]] = {}  # pool title -> run dir -> per-step table
    for run in runs:
        rows, info = read_run(run, PLOT_FIELDS)
        table = per_step(rows)
        if table.empty:
            raise ValueError(f"{Path(run) / 'rollouts.jsonl'} has no rollouts; fix: train for at least one step")
        title = run_title(run, info)
        name = f"train-{_slug(Path(run).name)}"
        source = (str(run),)
        by_pool.setdefault(pool_of_run(info), {})[str(run)] = table
        plots.append(
            _save_run(
                curves_figure(table, title),
                out,
                f"{name}-curves",
                title,
                "Mean reward, parse rate and share correct of each GRPO step's rollouts.",
                source,
            )
        )
        shares = worker_shares(rows)
        if not shares.empty:
            fig = _area(shares, "share of executed worker steps", f"{title}\nworker selection over training")
            plots.append(
                _save_run(
                    fig,
                    out,
                    f"{name}-workers",
                    title,
                    "Share of each GRPO step's executed worker steps per pool worker.",
                    source,
                )
            )
        routing = domain_worker_shares(rows)
        if not routing.empty:
            plots.append(
                _save_run(
                    routing_figure(routing, title, window),
                    out,
                    f"{name}-routing",
                    title,
                    f"Each worker's share of the executed worker steps per domain, {window}-step moving average.",
                    source,
                )
            )
        steps = domain_steps(rows)
        if not steps.empty:
            fig = _lines(steps, "mean steps per workflow (parsed)", f"{title}\nsteps per workflow over training")
            plots.append(
                _save_run(
                    fig,
                    out,
                    f"{name}-steps",
                    title,
                    "Mean workflow length of the parsed rollouts per GRPO step and domain.",
                    source,
                )
            )
    for pool, tables in by_pool.items():
        if len(tables) > 1:  # runs are compared only with runs on the same pool
            title = f"{pool}: training runs compared"
            plots.append(
                _save_run(
                    _compare(tables, title),
                    out,
                    f"train-compare-{_slug(pool)}",
                    title,
                    "Mean reward and parse rate per GRPO step of each run on this pool.",
                    tuple(tables),
                )
            )
    return plots


def pool_of_run(info: Mapping) -> str:
    """The pool a run trained on, labelled: SIMULATION / local / the pool's name."""
    data = info.get("data") or {}
    pool = plain(pool_label(str(data.get("pool") or (info.get("script") or {}).get("pool") or "unknown")))
    kind = pool_kind([str(m) for m in data.get("pool_workers") or []])
    if info.get("simulated") or data.get("simulated") or kind == "simulated":
        return f"SIMULATION (pool {pool})"
    return f"LOCAL (pool {pool})" if kind == "local" or pool == "local" else f"pool {pool}"


def _compare(tables: Mapping[str, pd.DataFrame], title: str) -> Figure:
    fig = Figure(figsize=(10, 3.6), dpi=100, layout="constrained")
    axes = fig.subplots(1, 2, sharex=True)
    for run, table in tables.items():
        marker = "o" if len(table) <= 60 else None
        for ax, col in zip(axes, ("reward_mean", "parse_rate"), strict=True):
            ax.plot(table["step"], table[col], marker=marker, label=plain(Path(run).name, 60))
    for ax, name in zip(axes, ("mean reward", "parse rate"), strict=True):
        ax.set_xlabel("GRPO step")
        ax.set_ylabel(name)
        ax.grid(alpha=0.3)
    axes[1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.suptitle(title, fontsize=9)
    return fig


def _area(shares: pd.DataFrame, ylabel: str, title: str) -> Figure:
    fig = Figure(figsize=(7, 3.6), dpi=100)
    ax = fig.subplots()
    colors = _colors(shares.columns)
    ax.stackplot(
        shares.index.to_numpy(),
        *[shares[c].to_numpy(dtype=float) for c in shares.columns],
        labels=[plain(c) for c in shares.columns],
        colors=[colors[c] for c in shares.columns],
    )
    ax.set_xlabel("GRPO step")
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 1)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    return fig


def _lines(frame: pd.DataFrame, ylabel: str, title: str) -> Figure:
    fig = Figure(figsize=(7, 3.6), dpi=100)
    ax = fig.subplots()
    for col in frame.columns:
        marker = "o" if len(frame) <= 60 else None
        ax.plot(frame.index.to_numpy(), frame[col].to_numpy(dtype=float), marker=marker, label=plain(col, 80))
    ax.set_xlabel("GRPO step")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------------- files


def _colors(keys: Iterable) -> dict:
    cmap = matplotlib.colormaps["tab20" if len(list(keys)) > 10 else "tab10"]
    keys = list(keys)
    return {k: cmap(i % cmap.N) for i, k in enumerate(keys)}


def _slug(text: object) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", str(text))[:60].strip("_.") or "x"


def save_figure(fig: Figure, out: Path, name: str) -> tuple[Path, Path]:
    """Write `fig` as out/name.png and out/name.svg (SVG text kept as text, stable ids)."""
    png, svg = out / f"{name}.png", out / f"{name}.svg"
    fig.savefig(png, metadata={"Software": None})
    with matplotlib.rc_context(SVG_RC):
        fig.savefig(svg, metadata={"Date": None, "Creator": None})
    return png, svg


def _save(fig: Figure, out: Path, name: str, title: str, caption: str, pool: str, rows: pd.DataFrame) -> Plot:
    png, svg = save_figure(fig, out, name)
    logs = tuple(sorted(str(v) for v in rows["log"].dropna().unique())) if "log" in rows else ()
    return Plot(name, title, caption, png, svg, pool, logs)


def _save_run(fig: Figure, out: Path, name: str, title: str, caption: str, sources: tuple[str, ...]) -> Plot:
    png, svg = save_figure(fig, out, name)
    return Plot(name, title, caption, png, svg, "", sources)
