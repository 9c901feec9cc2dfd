"""What a seed's training shows about its fate: per seed and domain, the held-out share of the
domain's best worker, its share among the policy's own training rollouts early and late, and how
much the OTHER domain's specialist moved with it (the cross-domain coupling of the worker choice).

    python -m experiments.seeds.fate experiments/seeds/results-gpu [--early 5]

Reads `seeds.csv` and every `seed-S/curves-routing.csv` of a seed sweep's results folder (an assigned first
worker counts as the policy's own probabilities there: reports.plots.domain_worker_shares); a seed the table
lists as not evaluated has training shares and no held-out ones.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pandas as pd

from experiments.sim_routing.proxy import BEST as SPECIALIST
from experiments.sim_routing.proxy import WORKERS
from reports.tables import markdown

BEST = {domain: WORKERS[i] for domain, i in SPECIALIST.items()}  # the simulated pool's specialists
BENCH = {"math": "worker MATH-500", "mmlu": "worker MMLU"}
OTHER = {"math": "mmlu", "mmlu": "math"}


def heldout_share(chosen: str, worker: str) -> float:
    """The share of `worker` in a seed table's "worker ..." cell ("math-strong 0.95, premium 0.05")."""
    found = re.search(rf"(?:^|, ){re.escape(worker)} ([0-9.]+)", str(chosen))
    return float(found.group(1)) if found else 0.0


def seed_fate(curves: pd.DataFrame, early: int) -> dict:
    """Per domain: the best worker's training share over the first and last `early` steps, and the
    correlation across steps of the other domain's specialist's share in both domains."""
    curves = curves.fillna(0.0)
    shares = {d: curves[curves["domain"] == d].set_index("step") for d in BEST}
    steps = shares["math"].index.intersection(shares["mmlu"].index)
    out = {}
    for domain, best in BEST.items():
        column = f"sim/{best}"
        series = shares[domain][column] if column in shares[domain] else pd.Series(0.0, index=shares[domain].index)
        out[f"{domain} early"] = float(series.iloc[:early].mean())
        out[f"{domain} late"] = float(series.iloc[-early:].mean())
        rival = f"sim/{BEST[OTHER[domain]]}"
        if rival in shares[domain] and rival in shares[OTHER[domain]] and len(steps) > 2:
            here, there = shares[domain].loc[steps, rival], shares[OTHER[domain]].loc[steps, rival]
            out[f"{domain} coupling"] = float(here.corr(there)) if here.std() and there.std() else float("nan")
        else:
            out[f"{domain} coupling"] = float("nan")
    return out


def fate_table(folder: Path, early: int = 5) -> pd.DataFrame:
    seeds = pd.read_csv(folder / "seeds.csv")
    rows = []
    for _, seed in seeds.iterrows():
        curves = folder / f"seed-{seed['seed']}" / "curves-routing.csv"
        row = {"seed": seed["seed"]}
        evaluated = seed.get("status", "ok") == "ok"  # a seed not trained or evaluated has no held-out shares
        for domain, best in BEST.items():
            row[f"{domain} held-out"] = heldout_share(seed[BENCH[domain]], best) if evaluated else float("nan")
        row["routes both"] = all(row[f"{d} held-out"] >= 0.9 for d in BEST) if evaluated else None
        if curves.is_file():
            row.update(seed_fate(pd.read_csv(curves), early))
        rows.append(row)
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="a seed sweep's results folder (seeds.csv, seed-S/)")
    parser.add_argument("--early", type=int, default=5, help="steps averaged at the start and at the end")
    args = parser.parse_args(argv)
    if not (args.folder / "seeds.csv").is_file():
        raise SystemExit(f"error: {args.folder} has no seeds.csv: name a seed sweep's results folder")
    print(markdown(fate_table(args.folder, args.early).round(2)))


if __name__ == "__main__":
    main()
