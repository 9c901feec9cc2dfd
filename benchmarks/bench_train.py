"""Seconds per GRPO step: the cpu-smoke recipe with the conductor reward against bare TRL
(a constant reward) on the same model, data and batch, in one run.

    python benchmarks/bench_train.py [--steps 3] [--recipe training/recipes/cpu-smoke.yaml]

Both arms run training/train.py's code path (same recipe, seeds, prompts and generation
length); only the reward differs. The conductor reward runs every rollout's workflow on
the recipe's pool. The first step of each arm (warm-up: model load, worker servers) is
left out of the median. Goal: conductor / bare <= 1.2.

cpu-smoke starts with a format warm-up (not timed; each arm runs it). To skip it, start both
arms from a saved warm-up, so completions parse and the conductor reward really runs workers:
    python benchmarks/bench_train.py --model_name_or_path runs/cpu-smoke/warmup --format_warmup_steps 0
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from training.train import main as train  # noqa: E402

GOAL = 1.2


def run_arm(recipe: str, reward: str, steps: int, root: Path, extra: list[str]) -> dict:
    out = root / reward
    info = train([recipe, "--reward", reward, "--max_steps", str(steps), "--output_dir", str(out),
                  "--save_strategy", "no", *extra])  # fmt: skip
    walls = info["step_wall_s"]
    timed = walls[1:] or walls
    return {"reward": reward, "steps": len(walls), "median_s": statistics.median(timed), "walls": walls}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--recipe", default="training/recipes/cpu-smoke.yaml")
    ap.add_argument("--steps", type=int, default=3, help="GRPO steps per arm (the first is warm-up)")
    args, extra = ap.parse_known_args()
    with tempfile.TemporaryDirectory(prefix="bench-train-") as tmp:
        arms = [run_arm(args.recipe, r, args.steps, Path(tmp), extra) for r in ("constant", "conductor")]
    bare, ours = arms
    print(f"\nGRPO step time, {args.recipe} ({args.steps} steps per arm; median of steps 2..n)")
    print("| reward | steps | median s/step | every step (s) |")
    print("|---|---:|---:|---|")
    for arm in arms:
        walls = ", ".join(f"{w:.1f}" for w in arm["walls"])
        print(f"| {arm['reward']} | {arm['steps']} | {arm['median_s']:.1f} | {walls} |")
    ratio = ours["median_s"] / bare["median_s"]
    verdict = "meets" if ratio <= GOAL else "misses"
    print(f"\nconductor / bare TRL = {ratio:.2f}x ({verdict} the goal <= {GOAL}x)")


if __name__ == "__main__":
    main()
