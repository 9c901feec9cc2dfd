"""Memory and CPU of a GRPO step: the project's step (training/train.py) against bare TRL on identical
shapes, each arm in its own process.

    python benchmarks/bench_train.py                       # sim-routing scaled to a shared 2-core machine: 2 x 2
    python benchmarks/bench_train.py --num_generations 8   # the recipe's 2 questions x 8 (bare TRL peaks ~10.5 GiB)

Both arms train the recipe's model (its top layers, as the recipe says) on the recipe's first prompts with
the same seed, generation batch, completion length and learning rate, with no format warm-up:
- project: `training.train.main` on the recipe as committed (its conductor reward and divergence guard,
  completion-only log-probs, the loss in the recipe's micro-batches, one prompt pass per question);
- bare TRL: `GRPOTrainer` with TRL 1.16's defaults (every position scored on a CPU, the whole generation
  batch in one loss pass, every rollout encoding its prompt) and a constant reward.
The untrained model writes no parseable workflow, so both arms' rewards are flat and neither updates the
weights: the same updates (none), and the completions of every step must be identical (asserted).
Each arm runs with ONE thread (CPU-seconds hold on a shared machine). Measured per arm: peak RSS (the child
process's ru_maxrss) and per step the CPU-seconds of generation, reward, loss forward and backward; the
table gives the median of steps 2..n (step 1 warms up). Goals: peak RSS <= 0.35x and CPU-s/step <= 0.8x.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GOALS = {"peak_rss": 0.35, "cpu_s": 0.8}
PHASES = ("generation", "reward", "loss_forward", "backward")
QUESTIONS = 2  # per step, as in sim-routing


class PhaseClock:
    """CPU-seconds of each phase, per optimizer step, and the generated token ids of every step."""

    def __init__(self) -> None:
        self.steps: list[dict] = []
        self.completions: list[list[list[int]]] = []
        self.started = 0.0

    def begin_step(self) -> None:
        self.steps.append(dict.fromkeys(PHASES, 0.0))
        self.completions.append([])
        self.started = time.process_time()

    def end_step(self) -> None:
        self.steps[-1]["step"] = time.process_time() - self.started

    def timed(self, phase: str, function):  # noqa: ANN001, ANN201 - wraps any method
        clock = self

        def wrapper(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
            started = time.process_time()
            try:
                result = function(*args, **kwargs)
            finally:
                clock.steps[-1][phase] += time.process_time() - started
            if phase == "generation":
                clock.completions[-1].extend(list(map(list, result[0])))
            return result

        return wrapper


def instrument(clock: PhaseClock) -> None:
    """Time TRL's phases in this process (both arms alike): its generation and reward methods (TRL
    1.16's names), the loss (`compute_loss`), the backward pass (`Accelerator.backward`), the step."""
    from accelerate import Accelerator
    from transformers import TrainerCallback
    from trl import GRPOTrainer

    class Steps(TrainerCallback):
        def on_step_begin(self, args, state, control, **kwargs):  # noqa: ANN001, ANN201
            clock.begin_step()

        def on_step_end(self, args, state, control, **kwargs):  # noqa: ANN001, ANN201
            clock.end_step()

    init = GRPOTrainer.__init__

    def init_with_clock(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        init(self, *args, **kwargs)
        self.add_callback(Steps())

    GRPOTrainer.__init__ = init_with_clock
    GRPOTrainer._generate_single_turn = clock.timed("generation", GRPOTrainer._generate_single_turn)
    GRPOTrainer._calculate_rewards = clock.timed("reward", GRPOTrainer._calculate_rewards)
    GRPOTrainer.compute_loss = clock.timed("loss_forward", GRPOTrainer.compute_loss)
    Accelerator.backward = clock.timed("backward", Accelerator.backward)


def shape_args(recipe: str, steps: int, generations: int, out: Path) -> list[str]:
    return [recipe, "--num_generations", str(generations), "--max_steps", str(steps), "--output_dir", str(out),
            "--save_strategy", "no", "--format_warmup_steps", "0", "--logging_steps", "1"]  # fmt: skip


def project_arm(argv: list[str], generations: int) -> None:
    from training.train import main, parse

    micro = parse(argv)[1].per_device_train_batch_size  # the recipe's micro-batch, over the same generation batch
    main([*argv, "--gradient_accumulation_steps", str(max(1, QUESTIONS * generations // micro))])


def bare_trl_arm(argv: list[str], generations: int) -> None:
    """TRL's GRPOTrainer as a new user runs it: same model, prompts, seed and batch, a constant reward."""
    from trl import GRPOTrainer

    from training.train import build_dataset, constant_reward, freeze_below, load_model, parse, settings_of

    batch = str(QUESTIONS * generations)
    script, config, model_args = parse([*argv, "--per_device_train_batch_size", batch, "--gradient_accumulation_steps",
                                        "1", "--reward", "constant"])  # fmt: skip
    dataset, _ = build_dataset(script, settings_of(script))
    model, tokenizer = load_model(model_args, config)
    if script.train_top_layers:
        freeze_below(model, script.train_top_layers)
    GRPOTrainer(model=model, reward_funcs=[constant_reward], args=config, train_dataset=dataset,
                processing_class=tokenizer).train()  # fmt: skip


def run_child(args: argparse.Namespace) -> None:
    import torch

    torch.set_num_threads(1)
    clock = PhaseClock()
    instrument(clock)
    argv = shape_args(args.recipe, args.steps, args.num_generations, Path(args.workdir) / args.arm)
    (project_arm if args.arm == "project" else bare_trl_arm)(argv, args.num_generations)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    Path(args.json).write_text(json.dumps({"steps": clock.steps, "completions": clock.completions, "peak": peak}))


def run_arm(arm: str, args: argparse.Namespace, workdir: Path) -> dict:
    """One arm in a fresh process with one thread; its JSON and peak RSS (the child's ru_maxrss)."""
    out = workdir / f"{arm}.json"
    command = [sys.executable, __file__, "--arm", arm, "--json", str(out), "--workdir", str(workdir), "--recipe",
               args.recipe, "--steps", str(args.steps), "--num_generations", str(args.num_generations)]  # fmt: skip
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, stderr = child.communicate()
    if child.returncode:
        raise SystemExit(f"bench arm {arm} failed (exit {child.returncode}):\n{stderr.decode()[-3000:]}")
    result = json.loads(out.read_text())
    result["arm"] = arm
    return result


def median_step(result: dict) -> dict:
    timed = result["steps"][1:] or result["steps"]
    return {key: statistics.median(step[key] for step in timed) for key in ("step", *PHASES)}


def report(arms: list[dict], args: argparse.Namespace) -> None:
    bare, ours = arms
    if ours["completions"] != bare["completions"]:
        pairs = zip(sum(ours["completions"], []), sum(bare["completions"], []), strict=True)
        differing = sum(a != b for a, b in pairs)
        raise SystemExit(f"the arms generated different completions ({differing} differ): not the same shapes")
    rollouts = len(bare["completions"][0])
    print(f"\nGRPO step, {args.recipe}: {QUESTIONS} questions x {args.num_generations} rollouts = {rollouts}"
          f" completions per step, {args.steps} steps per arm, 1 thread, CPU-seconds (median of steps 2..n);"
          " completions identical in every step")  # fmt: skip
    print("| arm | peak RSS (GiB) | CPU-s/step | generation | reward | loss forward | backward |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    medians = [median_step(arm) for arm in arms]
    for arm, median in zip(arms, medians, strict=True):
        phases = " | ".join(f"{median[p]:.1f}" for p in PHASES)
        print(f"| {arm['arm']} | {arm['peak'] / 2**30:.2f} | {median['step']:.1f} | {phases} |")
    ratios = {"peak_rss": ours["peak"] / bare["peak"], "cpu_s": medians[1]["step"] / medians[0]["step"]}
    for key, ratio in ratios.items():
        print(f"project / bare TRL, {key}: {ratio:.2f}x ({'meets' if ratio <= GOALS[key] else 'misses'}"
              f" the goal <= {GOALS[key]}x)")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--recipe", default="training/recipes/sim-routing.yaml")
    ap.add_argument("--steps", type=int, default=3, help="GRPO steps per arm (the first warms up)")
    ap.add_argument("--num_generations", type=int, default=2, help="rollouts per question (the recipe's: 8)")
    ap.add_argument("--arm", choices=("project", "bare_trl"), help=argparse.SUPPRESS)
    ap.add_argument("--json", help=argparse.SUPPRESS)
    ap.add_argument("--workdir", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.arm:
        run_child(args)
        return
    with tempfile.TemporaryDirectory(prefix="bench-train-") as tmp:
        arms = [run_arm(arm, args, Path(tmp)) for arm in ("bare_trl", "project")]
    report(arms, args)


if __name__ == "__main__":
    main()
