"""Training curves of a run directory: reward, parse rate and accuracy per GRPO step (PNG, SVG, CSV).

    python -m experiments.curves runs/cpu-smoke --out experiments/cpu_smoke/results/curves

Reads the run's rollout log (`rollouts.jsonl`, one line per rollout, written by the reward)
and `run_info.json`; a run on the simulated pool is titled SIMULATION, on the local pool local.
`<stem>-routing.csv/.png/.svg`: per GRPO step and domain, each worker's share of the executed
worker steps (the worker-selection distribution per domain over training; plotted as a
moving average over `--window` steps).
`<stem>-credit.csv`: per domain and final worker, the rollouts, mean reward and summed GRPO
advantage (`training.rollouts.credit_by_domain`: which way the reward pushed each choice).
The computation and drawing are `reports.plots` (`per_step`, `curves_figure`,
`domain_worker_shares`, `routing_figure`), which the report page also uses (`training_plots`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from reports.csv_safe import write_csv
from reports.plots import (
    PLOT_FIELDS,
    curves_figure,
    domain_worker_shares,
    per_step,
    read_run,
    routing_figure,
    run_title,
    save_figure,
)
from training.rollouts import credit_by_domain


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path, help="a training output_dir")
    ap.add_argument("--out", type=Path, help="file stem of the PNG, SVG and CSV (default: <run>/curves)")
    ap.add_argument("--window", type=int, default=10, help="moving-average steps of the routing plot")
    args = ap.parse_args(argv)
    try:
        rollouts, info = read_run(args.run, PLOT_FIELDS)
    except (FileNotFoundError, ValueError) as err:
        raise SystemExit(str(err)) from None
    table = per_step(rollouts)
    if table.empty:
        raise SystemExit(f"{args.run}/rollouts.jsonl has no rollouts")
    stem = args.out or args.run / "curves"
    stem.parent.mkdir(parents=True, exist_ok=True)
    title = run_title(args.run, info)
    csv = stem.parent / f"{stem.name}.csv"
    write_csv(table, csv)
    png, svg = save_figure(curves_figure(table, title), stem.parent, stem.name)
    print(f"wrote {png}, {svg} and {csv}")
    shares = domain_worker_shares(rollouts)
    if not shares.empty:
        csv = stem.parent / f"{stem.name}-routing.csv"
        write_csv(shares, csv)
        png, svg = save_figure(routing_figure(shares, title, args.window), stem.parent, f"{stem.name}-routing")
        print(f"wrote {png}, {svg} and {csv}")
    credit = pd.DataFrame(credit_by_domain(rollouts.to_dict("records")))
    if not credit.empty:
        csv = stem.parent / f"{stem.name}-credit.csv"
        write_csv(credit, csv)
        print(credit.to_string(index=False))
        print(f"wrote {csv}")


if __name__ == "__main__":
    main()
