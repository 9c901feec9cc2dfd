"""Training curves of a run directory: reward and parse rate per GRPO step (PNG + CSV).

    python training/curves.py runs/cpu-smoke --out training/results/cpu-smoke

Reads the run's rollout log (`rollouts.jsonl`, one line per rollout, written by the reward)
and `run_info.json`; a run on the simulated pool is titled SIMULATION.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from training.rollouts import read_rollouts  # noqa: E402


def per_step(rollouts: list[dict]) -> list[dict]:
    """One row per step: rollouts, mean reward, parse rate, accuracy, mean workflow steps."""
    groups: dict[int, list[dict]] = defaultdict(list)
    for r in rollouts:
        groups[int(r.get("step") or 0)].append(r)
    rows = []
    for step in sorted(groups):
        rs = groups[step]
        n = len(rs)
        parsed = [r for r in rs if r.get("parsed")]
        rows.append(
            {
                "step": step,
                "rollouts": n,
                "reward_mean": sum(float(r["reward"]) for r in rs) / n,
                "parse_rate": len(parsed) / n,
                "accuracy": sum(bool(r.get("correct")) for r in rs) / n,
                "steps_per_workflow": sum(r.get("steps", 0) for r in parsed) / len(parsed) if parsed else 0.0,
            }
        )
    return rows


def plot(rows: list[dict], title: str, png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [r["step"] for r in rows]
    fig, ax = plt.subplots(figsize=(6, 3.5), dpi=100)
    ax.plot(steps, [r["reward_mean"] for r in rows], marker="o", label="reward (mean of the step's rollouts)")
    ax.plot(steps, [r["parse_rate"] for r in rows], marker="s", label="parse rate")
    ax.plot(steps, [r["accuracy"] for r in rows], marker="^", label="correct")
    ax.set_xlabel("GRPO step")
    ax.set_ylim(-0.05, 1.05)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(png)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path, help="a training output_dir")
    ap.add_argument("--out", type=Path, help="file stem of the PNG and CSV (default: <run>/curves)")
    args = ap.parse_args()
    rows = per_step(read_rollouts(args.run / "rollouts.jsonl"))
    if not rows:
        raise SystemExit(f"{args.run}/rollouts.jsonl has no rollouts")
    info_file = args.run / "run_info.json"
    info = json.loads(info_file.read_text()) if info_file.is_file() else {}
    pool = info.get("data", {}).get("pool", "?")
    title = f"{info.get('recipe', args.run.name)}: {info.get('model', '')}, pool {pool}"
    if info.get("simulated"):
        title = "SIMULATION - " + title
    stem = args.out or args.run / "curves"
    stem.parent.mkdir(parents=True, exist_ok=True)
    with open(stem.with_suffix(".csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    plot(rows, title, stem.with_suffix(".png"))
    print(f"wrote {stem.with_suffix('.png')} and {stem.with_suffix('.csv')}")


if __name__ == "__main__":
    main()
