"""Calls and tokens per question of every test-time baseline against the conductor, on the
simulated pool (`-S pool=sim`: SIMULATED workers, made-up prices; the conductor is the
embedded SmolLM2-135M with its grammar). One run, printed as a markdown table.

The questions are generated here (sums with a numeric answer, domain math; four-choice
questions, domain mmlu), so the run is offline. Accuracy is the simulator's (workers answer
correctly with their profile's probability); it says nothing about real models. Smoothie
uses the hashed bag-of-words embeddings (`hash`), which costs no model call. The trained
routers are first trained on the sim pool at a bench size (ROUTER_TRAINING, math500 + mmlu
training splits; worker outcomes cached as `solvers.routers.train` always does) into a
temporary file.

    python benchmarks/bench_baselines.py [--questions 12] [--skip-conductor] [--skip-routers]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("XDG_DATA_HOME", tempfile.mkdtemp())
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from inspect_ai import Task, eval  # noqa: E402
from inspect_ai.dataset import Sample  # noqa: E402
from inspect_ai.solver import SolverSpec  # noqa: E402

from scorers.inspect_scorers import choice_letter, numeric_match  # noqa: E402

PREMIUM = 3  # sim/premium, the strongest worker of the sim pool
SHOWN = ("worker", "mode", "samples", "rounds")  # options named in the table
METHODS: list[tuple[str, dict]] = [
    ("single_worker", {"worker": PREMIUM}),
    ("self_reflection", {"worker": PREMIUM, "rounds": 5}),
    ("consensus", {"worker": PREMIUM, "samples": 5}),
    ("mixture_of_agents", {"seed": 0}),
    ("smoothie", {"mode": "dependent", "embeddings": "hash"}),
    ("smoothie", {"mode": "independent", "embeddings": "hash"}),
    ("random_workflow", {"seed": 0}),
    ("router_dc", {}),
    ("mas_router", {}),
    ("conductor", {}),
]
ROUTERS = ("router_dc", "mas_router")
ROUTER_TRAINING = ["--pool", "sim", "--task", "math500,mmlu", "--train-items", "200", "--val-items", "50",
                   "--runs", "2", "--iterations", "10", "--batch-size", "64"]  # fmt: skip


def math_samples(n: int) -> list[Sample]:
    return [
        Sample(
            input=f"What is {17 * i + 3} + {29 * i + 11}? End with a line 'ANSWER: <number>'.",
            target=str(46 * i + 14),
            id=f"sum{i}",
            metadata={"domain": "math", "check": "numeric"},
        )
        for i in range(n)
    ]


def choice_samples(n: int) -> list[Sample]:
    samples = []
    for i in range(n):
        options = [f"{i + k} kg" for k in range(4)]
        listing = "\n".join(f"{letter}) {text}" for letter, text in zip("ABCD", options, strict=True))
        samples.append(
            Sample(
                input=f"Which mass is listed as option {'ABCD'[i % 4]}?\n{listing}\nEnd with 'ANSWER: <letter>'.",
                choices=options,
                target="ABCD"[i % 4],
                id=f"choice{i}",
                metadata={"domain": "mmlu", "check": "choice"},
            )
        )
    return samples


def run(method: str, options: dict, questions: int, log_dir: str) -> dict:
    half = max(1, questions // 2)
    tasks = [
        Task(dataset=math_samples(half), scorer=numeric_match(), name="bench_math"),
        Task(dataset=choice_samples(half), scorer=choice_letter(), name="bench_choice"),
    ]
    args = {"pool": "sim", **options}
    start = time.perf_counter()
    logs = eval(tasks, solver=SolverSpec(method, args, args), display="none", log_dir=log_dir, max_tasks=1)
    wall = time.perf_counter() - start
    metas, correct = [], 0
    for log in logs:
        if log.status != "success":
            raise RuntimeError(f"{method} {options}: {log.error}")
        for sample in log.samples:
            metas.append(sample.metadata["conductor"])
            correct += next(iter(sample.scores.values())).value == "C"
    n = len(metas)
    costs = [m["cost_usd"] for m in metas]
    return {
        "method": method + "".join(f" {k}={v}" for k, v in options.items() if k in SHOWN),
        "questions": n,
        "agent": sum(m["agent_calls"] for m in metas) / n,
        "conductor": sum(m["conductor_calls"] for m in metas) / n,
        "in": sum(m["input_tokens"] for m in metas) / n,
        "out": sum(m["output_tokens"] for m in metas) / n,
        "cost": None if None in costs else sum(costs) / n,
        "accuracy": correct / n,
        "wall": wall,
    }


def train_routers(folder: Path) -> dict[str, dict]:
    """Each router trained on the sim pool into `folder`; the solver options that load it."""
    from solvers.routers import train

    options = {}
    for kind in ROUTERS:
        start = time.perf_counter()
        summary = train.main([kind, *ROUTER_TRAINING, "--out", str(folder / f"{kind}.json")])
        print(f"{kind}: trained in {time.perf_counter() - start:.1f} s, validation accuracy "
              f"{summary['val_accuracy']:.3f}", flush=True)  # fmt: skip
        options[kind] = {"router_file": summary["file"]}
    return options


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=12, help="questions per method (half math, half choice)")
    parser.add_argument("--skip-conductor", action="store_true", help="leave out the (slow, CPU) conductor row")
    parser.add_argument("--skip-routers", action="store_true", help="leave out the trained routers (and training)")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as log_dir:
        routers = {} if args.skip_routers else train_routers(Path(log_dir))
        for method, options in METHODS:
            if (method == "conductor" and args.skip_conductor) or (method in ROUTERS and args.skip_routers):
                continue
            rows.append(run(method, {**options, **routers.get(method, {})}, args.questions, log_dir))
    print("\nBaselines on the SIMULATED pool (-S pool=sim), per question; simulated accuracy and made-up prices\n")
    print("| method | questions | agent calls | conductor calls | tokens in | tokens out | USD (sim prices) "
          "| sim accuracy | wall s |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        cost = "n/a" if r["cost"] is None else f"{r['cost']:.5f}"
        print(
            f"| {r['method']} | {r['questions']} | {r['agent']:.2f} | {r['conductor']:.2f} | {r['in']:.0f} | "
            f"{r['out']:.0f} | {cost} | {r['accuracy']:.2f} | {r['wall']:.1f} |"
        )


if __name__ == "__main__":
    main()
