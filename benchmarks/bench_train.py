"""Memory and CPU of a GRPO step: the project's step (training/train.py) against bare TRL on identical
shapes, in TRL's settings, each arm in its own process.

    python benchmarks/bench_train.py                       # sim-routing scaled to a shared 2-core machine: 2 x 2
    python benchmarks/bench_train.py --num_generations 8   # the recipe's 2 questions x 8 (bare TRL peaks ~10.5 GiB)
    python benchmarks/bench_train.py --num_generations 8 --device cuda   # the same on a CUDA GPU
    python benchmarks/bench_train.py --num_generations 8 --bare_arms bare_trl_micro_gc   # TRL's checkpointing

Every arm trains the recipe's model (its top layers, as the recipe says) on the recipe's first prompts with
the same seed, generation batch, completion length and learning rate, with no format warm-up, no exploring
groups (they force some rollouts' first worker by design) and no form anchor:
- project: `training.train.main` on the recipe (its conductor reward and divergence guard, completion-only
  log-probs, the loss in the recipe's micro-batches, one prompt pass per question) with
  `checkpoint_trained_layers` (the same gradients, half the trained layers' activations),
  `trim_heap_each_step` (the heap's free pages returned before each step's generation) and no form anchor
  (it adds its own update);
- bare TRL (a peer's settings): `GRPOTrainer` with TRL 1.16's defaults (every position scored
  on a CPU, every rollout encoding its prompt) and a constant reward; `bare_trl` runs the whole generation
  batch in one loss pass (batch 16), `bare_trl_micro` in the recipe's own micro-batches (2 x 8), what a TRL
  user who watches memory runs, and `bare_trl_micro_gc` (on request: `--bare_arms`) the same with TRL's own
  memory option `gradient_checkpointing=True` (it recomputes every layer's activations, frozen ones included).
The untrained model writes no parseable workflow, so every arm's rewards are flat and none updates the
weights: the same updates (none), and the completions of every step must be identical (asserted).
Each arm runs with ONE thread (CPU-seconds hold on a shared machine). Measured per arm: peak RSS (the child
process's ru_maxrss) and per step the CPU-seconds of generation, reward, loss forward and backward, and the
step's kernel time (ru_stime), from the first callback's step begin to the last one's step end (every
callback's work counts); the table gives the median of steps 2..n (step 1 warms up). The ratios are the
project's against each bare arm and against the peer's best setting (the lower peak, the faster step of the
arms run); the goals (issue 42) are against the best: peak RSS <= 0.5x and CPU-s/step <= 0.5x.
With `--device cuda` all arms train on the GPU (`--use_cpu false`) and the figures are GPU ones: peak
memory is `torch.cuda.max_memory_allocated`, phases and steps are wall-seconds (the GPU synchronized
at each reading), and the arms run side by side so that all see the same load on the GPU;
completions that differ between the arms are counted in a note, not an error (CUDA kernels may round
differently at the arms' different batch shapes, and sampling then diverges).
"""

from __future__ import annotations

import argparse
import functools
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

GOALS = {"peak_rss": 0.5, "cpu_s": 0.5}  # against the peer's best setting (issue 42)
PHASES = ("generation", "reward", "loss_forward", "backward")
QUESTIONS = 2  # per step, as in sim-routing
# per device: the table's memory and time columns, the ratio names (CPU: the goals)
MEASURES = {
    "cpu": {"memory": "peak RSS (GiB)", "time": "CPU-s/step", "ratios": ("peak_rss", "cpu_s"),
            "unit": "1 thread, CPU-seconds"},
    "cuda": {"memory": "peak GPU memory (GiB)", "time": "wall s/step", "ratios": ("peak_gpu", "wall_s"),
             "unit": "1 CPU thread, wall-seconds with the GPU synchronized"},
}  # fmt: skip


def cuda_wall() -> float:
    """Wall-clock seconds once the GPU has finished what was queued (its kernels run asynchronously)."""
    import torch

    torch.cuda.synchronize()
    return time.perf_counter()


def kernel_seconds() -> float:
    """CPU-seconds this process has spent in the kernel (page faults, for one)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_stime


class PhaseClock:
    """Seconds of each phase (`now`: CPU-seconds by default), per optimizer step, the step's kernel
    seconds (`kernel`), and the generated token ids of every step."""

    def __init__(self, now=time.process_time, kernel=kernel_seconds) -> None:  # noqa: ANN001 - clock functions
        self.now, self.kernel = now, kernel
        self.steps: list[dict] = []
        self.completions: list[list[list[int]]] = []
        self.started = self.kernel_started = 0.0

    def begin_step(self) -> None:
        self.steps.append(dict.fromkeys(PHASES, 0.0))
        self.completions.append([])
        self.started, self.kernel_started = self.now(), self.kernel()

    def end_step(self) -> None:
        self.steps[-1]["step"] = self.now() - self.started
        self.steps[-1]["kernel"] = self.kernel() - self.kernel_started

    def timed(self, phase: str, function):  # noqa: ANN001, ANN201 - wraps any method
        clock = self

        def wrapper(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
            started = clock.now()
            try:
                result = function(*args, **kwargs)
            finally:
                clock.steps[-1][phase] += clock.now() - started
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

    class StepBegins(TrainerCallback):
        def on_step_begin(self, args, state, control, **kwargs):  # noqa: ANN001, ANN201
            clock.begin_step()

    class StepEnds(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):  # noqa: ANN001, ANN201
            clock.end_step()

    init = GRPOTrainer.__init__

    def init_with_clock(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        init(self, *args, **kwargs)
        self.callback_handler.callbacks.insert(0, StepBegins())  # a step's time includes every callback's
        self.add_callback(StepEnds())

    GRPOTrainer.__init__ = init_with_clock
    GRPOTrainer._generate_single_turn = clock.timed("generation", GRPOTrainer._generate_single_turn)
    GRPOTrainer._calculate_rewards = clock.timed("reward", GRPOTrainer._calculate_rewards)
    GRPOTrainer.compute_loss = clock.timed("loss_forward", GRPOTrainer.compute_loss)
    Accelerator.backward = clock.timed("backward", Accelerator.backward)


def shape_args(recipe: str, steps: int, generations: int, out: Path, device: str = "cpu") -> list[str]:
    gpu = ["--use_cpu", "false"] if device == "cuda" else []
    return [recipe, "--num_generations", str(generations), "--max_steps", str(steps), "--output_dir", str(out),
            "--save_strategy", "no", "--format_warmup_steps", "0", "--explore_workers", "0", "--explore_prefix",
            "sampled", "--form_anchor_rows", "0", "--logging_steps", "1", *gpu]  # fmt: skip


def project_arm(argv: list[str], generations: int) -> None:
    from training.options import parse
    from training.train import main

    micro = parse(argv)[1].per_device_train_batch_size  # the recipe's micro-batch, over the same generation batch
    main([*argv, "--gradient_accumulation_steps", str(max(1, QUESTIONS * generations // micro)),
          "--checkpoint_trained_layers", "true", "--trim_heap_each_step", "true"])  # fmt: skip


def bare_trl_shape(recipe_micro: int, generations: int, micro: bool, checkpointing: bool) -> list[str]:
    """A bare arm's flags: the whole generation batch in one pass, or (`micro`) the recipe's micro-batches
    over it; `checkpointing`: TRL's own `gradient_checkpointing` on (the recipe has it off)."""
    batch = recipe_micro if micro else QUESTIONS * generations
    return ["--per_device_train_batch_size", str(batch), "--gradient_accumulation_steps",
            str(QUESTIONS * generations // batch), "--gradient_checkpointing", str(checkpointing).lower()]  # fmt: skip


def bare_trl_arm(argv: list[str], generations: int, micro: bool = False, checkpointing: bool = False) -> None:
    """TRL's GRPOTrainer as a new user runs it: same model, prompts, seed and generation batch, a constant
    reward; the loss in one pass of the whole batch, or (`micro`) in the recipe's micro-batches, and
    (`checkpointing`) with TRL's `gradient_checkpointing=True`."""
    from trl import GRPOTrainer

    from training.data import build_dataset
    from training.model_prep import freeze_below, load_model
    from training.options import parse
    from training.train import settings_of
    from training.trainer import constant_reward

    shape = bare_trl_shape(parse(argv)[1].per_device_train_batch_size, generations, micro, checkpointing)
    script, config, model_args = parse([*argv, *shape, "--reward", "constant"])
    dataset, _ = build_dataset(script, settings_of(script))
    model, tokenizer = load_model(model_args, config)
    if script.train_top_layers:
        freeze_below(model, script.train_top_layers)
    GRPOTrainer(model=model, reward_funcs=[constant_reward], args=config, train_dataset=dataset,
                processing_class=tokenizer).train()  # fmt: skip


def run_child(args: argparse.Namespace) -> None:
    import torch

    torch.set_num_threads(1)
    cuda = args.device == "cuda"
    clock = PhaseClock(cuda_wall if cuda else time.process_time)
    instrument(clock)
    argv = shape_args(args.recipe, args.steps, args.num_generations, Path(args.workdir) / args.arm, args.device)
    ARMS[args.arm](argv, args.num_generations)
    peak = torch.cuda.max_memory_allocated() if cuda else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    Path(args.json).write_text(json.dumps({"steps": clock.steps, "completions": clock.completions, "peak": peak}))


ARMS = {
    "bare_trl": bare_trl_arm,
    "bare_trl_micro": functools.partial(bare_trl_arm, micro=True),
    "bare_trl_micro_gc": functools.partial(bare_trl_arm, micro=True, checkpointing=True),
    "project": project_arm,
}
NAMES = {"bare_trl": "bare TRL 1.16, batch 16", "bare_trl_micro": "bare TRL 1.16, the recipe's 2 x 8 micro-batches",
         "bare_trl_micro_gc": "bare TRL 1.16, the recipe's 2 x 8 micro-batches, `gradient_checkpointing=True`",
         "project": "project (`train.py`)"}  # fmt: skip
BARE_DEFAULT = ("bare_trl", "bare_trl_micro")  # TRL's defaults; bare_trl_micro_gc on request (--bare_arms)


def start_arm(arm: str, args: argparse.Namespace, workdir: Path) -> subprocess.Popen:
    """One arm in a fresh process with one thread (its JSON, peak and stderr in `workdir`)."""
    command = [sys.executable, __file__, "--arm", arm, "--json", str(workdir / f"{arm}.json"), "--workdir",
               str(workdir), "--recipe", args.recipe, "--steps", str(args.steps), "--num_generations",
               str(args.num_generations), "--device", args.device]  # fmt: skip
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))  # a bundle's packages stay
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONPATH": path}
    with (workdir / f"{arm}.err").open("w") as stderr:
        return subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=stderr)


def finish_arm(arm: str, child: subprocess.Popen, workdir: Path) -> dict:
    """Wait for an arm's process: its JSON and peak (a CPU arm's ru_maxrss, a GPU arm's peak allocated)."""
    if child.wait():
        stderr = (workdir / f"{arm}.err").read_text()[-3000:]
        raise SystemExit(f"bench arm {arm} failed (exit {child.returncode}):\n{stderr}")
    result = json.loads((workdir / f"{arm}.json").read_text())
    result["arm"] = arm
    return result


def run_arms(args: argparse.Namespace, workdir: Path) -> list[dict]:
    """The chosen bare TRL arms, then the project: one after the other on a CPU (each has the cores it is timed
    on); side by side on a GPU, so the arms share the GPU alike (its memory figures are per process)."""
    arms = [*dict.fromkeys(args.bare_arms), "project"]
    if args.device == "cpu":
        return [finish_arm(arm, start_arm(arm, args, workdir), workdir) for arm in arms]
    children = [start_arm(arm, args, workdir) for arm in arms]
    return [finish_arm(arm, child, workdir) for arm, child in zip(arms, children, strict=True)]


def median_step(result: dict) -> dict:
    timed = result["steps"][1:] or result["steps"]
    return {key: statistics.median(step.get(key, 0.0) for step in timed) for key in ("step", *PHASES, "kernel")}


def differing_completions(bare: dict, ours: dict) -> int:
    """How many completions the arms generated differently, over every step."""
    pairs = zip(sum(ours["completions"], []), sum(bare["completions"], []), strict=True)
    return sum(a != b for a, b in pairs)


def report(arms: list[dict], args: argparse.Namespace) -> None:
    *bares, ours = arms
    measures, rollouts = MEASURES[args.device], len(ours["completions"][0])
    differing = max(differing_completions(bare, ours) for bare in bares)
    same = "completions identical in every step"
    if differing:
        if args.device == "cpu":
            pairs = {f"project/{bare['arm']}": differing_completions(bare, ours) for bare in bares}
            raise SystemExit(f"the arms generated different completions ({differing} differ; {pairs}): not the same"
                             " shapes")  # fmt: skip
        same = f"up to {differing} of {rollouts * len(ours['completions'])} completions differ between the arms"
    print(f"\nGRPO step, {args.recipe}, {args.device}: {QUESTIONS} questions x {args.num_generations} rollouts ="
          f" {rollouts} completions per step, {args.steps} steps per arm, {measures['unit']} (median of steps"
          f" 2..n); {same}")  # fmt: skip
    print(f"| arm | {measures['memory']} | {measures['time']} | generation | reward | loss forward | backward |"
          " kernel |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    medians = [median_step(arm) for arm in arms]
    digits = 1 if args.device == "cpu" else 3
    for arm, median in zip(arms, medians, strict=True):
        phases = " | ".join(f"{median[p]:.{digits}f}" for p in (*PHASES, "kernel"))
        print(f"| {NAMES.get(arm['arm'], arm['arm'])} | {arm['peak'] / 2**30:.2f} | {median['step']:.{digits}f} |"
              f" {phases} |")  # fmt: skip
    memory, seconds = measures["ratios"]
    for bare, median in zip(bares, medians, strict=False):
        ratios = {memory: ours["peak"] / bare["peak"], seconds: medians[-1]["step"] / median["step"]}
        print(f"project / {bare['arm']}: " + ", ".join(f"{key} {ratio:.2f}x" for key, ratio in ratios.items()))
    best = {memory: ours["peak"] / min(bare["peak"] for bare in bares),
            seconds: medians[-1]["step"] / min(median["step"] for median in medians[:-1])}  # fmt: skip
    for key, ratio in best.items():
        goal = f" ({'meets' if ratio <= GOALS[key] else 'misses'} the goal <= {GOALS[key]}x)" if key in GOALS else ""
        print(f"project / the peer's best setting, {key}: {ratio:.2f}x{goal}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--recipe", default="training/recipes/sim-routing.yaml")
    ap.add_argument("--steps", type=int, default=3, help="GRPO steps per arm (the first warms up)")
    ap.add_argument("--num_generations", type=int, default=2, help="rollouts per question (the recipe's: 8)")
    ap.add_argument("--device", choices=tuple(MEASURES), default="cpu", help="where both arms train (cuda: a GPU)")
    bare = [arm for arm in ARMS if arm != "project"]
    ap.add_argument("--bare_arms", nargs="+", choices=bare, default=BARE_DEFAULT, metavar="ARM",
                    help=f"the bare TRL arms the project is compared with (of {', '.join(bare)};"
                    f" default: {' '.join(BARE_DEFAULT)})")  # fmt: skip
    ap.add_argument("--arm", choices=tuple(ARMS), help=argparse.SUPPRESS)
    ap.add_argument("--json", help=argparse.SUPPRESS)
    ap.add_argument("--workdir", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.steps < 2 or args.num_generations < 2:
        ap.error("--steps and --num_generations must be >= 2 (step 1 warms up; GRPO compares rollouts)")
    if args.device == "cuda" and not args.arm:
        import torch

        if not torch.cuda.is_available():
            raise SystemExit("--device cuda: no CUDA GPU on this machine; drop --device cuda to bench on the CPU")
    if args.arm:
        run_child(args)
        return
    with tempfile.TemporaryDirectory(prefix="bench-train-") as tmp:
        arms = run_arms(args, Path(tmp))
    report(arms, args)


if __name__ == "__main__":
    main()
