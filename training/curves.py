"""Training curves of a run directory: reward, parse rate and accuracy per GRPO step (PNG, SVG, CSV).

    python training/curves.py runs/cpu-smoke --out training/results/cpu-smoke

Reads the run's rollout log (`rollouts.jsonl`, one line per rollout, written by the reward)
and `run_info.json`; a run on the simulated pool is titled SIMULATION, on the local pool local.
The computation and drawing are `reports.plots` (`per_step`, `curves_figure`), which the report
page also uses (with the worker-share and steps-per-workflow plots: `training_plots`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from reports.plots import curves_figure, per_step, read_run, run_title, save_figure  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path, help="a training output_dir")
    ap.add_argument("--out", type=Path, help="file stem of the PNG, SVG and CSV (default: <run>/curves)")
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


if __name__ == "__main__":
    main()
