"""Training curves of a run directory: reward, parse rate and accuracy per GRPO step (PNG, SVG, CSV).

    python training/curves.py runs/cpu-smoke --out training/results/cpu-smoke

Reads the run's rollout log (`rollouts.jsonl`, one line per rollout, written by the reward)
and `run_info.json`; a run on the simulated pool is titled SIMULATION, on the local pool local.
The computation and drawing are `reports.plots` (`per_step`, `curves_figure`), which the report
page also uses (with the worker-share and steps-per-workflow plots: `training_plots`).
`<stem>-routing.csv/.png`: per GRPO step and domain, each worker's share of the executed
worker steps (the worker-selection distribution per domain over training; plotted as a
moving average over `--window` steps).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from reports.plots import curves_figure, per_step, read_run, run_title, save_figure  # noqa: E402


def domain_worker_shares(rows: pd.DataFrame) -> pd.DataFrame:
    """Columns step, domain, then one per worker name: that worker's share of the step's executed
    worker steps in rollouts of that domain (rows only where the domain had worker steps)."""
    if rows.empty or not {"worker_names", "domain", "step"} <= set(rows):
        return pd.DataFrame()
    named = rows[["step", "domain", "worker_names"]].explode("worker_names").dropna()
    if named.empty:
        return pd.DataFrame()
    table = pd.crosstab([named["step"].astype(int), named["domain"].astype(str)],
                        named["worker_names"].astype(str), normalize="index")  # fmt: skip
    return table.reset_index()


def routing_figure(shares: pd.DataFrame, title: str, window: int) -> Figure:
    """One panel per domain: each worker's share, trailing mean over `window` logged steps."""
    domains = sorted(shares["domain"].unique())
    workers = [c for c in shares.columns if c not in ("step", "domain")]
    fig = Figure(figsize=(6, 2.4 * len(domains) + 0.6), dpi=100)
    axes = fig.subplots(len(domains), 1, squeeze=False)[:, 0]
    for ax, domain in zip(axes, domains, strict=True):
        part = shares[shares["domain"] == domain].sort_values("step")
        for i, worker in enumerate(workers):
            ax.plot(part["step"], part[worker].rolling(window, min_periods=1).mean(), color=f"C{i}", label=worker)
        ax.set_ylim(-0.05, 1.05)
        ax.set_ylabel(f"{domain}: share", fontsize=8)
        ax.grid(alpha=0.3)
    axes[0].set_title(f"{title}\nworker choice per domain ({window}-step moving average)", fontsize=9)
    axes[0].legend(fontsize=7, ncol=2)
    axes[-1].set_xlabel("GRPO step")
    fig.tight_layout()
    return fig


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path, help="a training output_dir")
    ap.add_argument("--out", type=Path, help="file stem of the PNG, SVG and CSV (default: <run>/curves)")
    ap.add_argument("--window", type=int, default=10, help="moving-average steps of the routing plot")
    args = ap.parse_args(argv)
    try:
        rollouts, info = read_run(args.run)
    except FileNotFoundError as err:
        raise SystemExit(str(err)) from None
    table = per_step(rollouts)
    if table.empty:
        raise SystemExit(f"{args.run}/rollouts.jsonl has no rollouts")
    stem = args.out or args.run / "curves"
    stem.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(stem.with_suffix(".csv"), index=False)
    png, svg = save_figure(curves_figure(table, run_title(args.run, info)), stem.parent, stem.name)
    print(f"wrote {png}, {svg} and {stem.with_suffix('.csv')}")
    shares = domain_worker_shares(rollouts)
    if not shares.empty:
        routing = stem.with_name(stem.name + "-routing")
        shares.to_csv(routing.with_suffix(".csv"), index=False)
        fig = routing_figure(shares, run_title(args.run, info), args.window)
        fig.savefig(routing.with_suffix(".png"))
        print(f"wrote {routing.with_suffix('.png')} and {routing.with_suffix('.csv')}")


if __name__ == "__main__":
    main()
