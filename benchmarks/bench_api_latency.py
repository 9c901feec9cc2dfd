"""Throughput at API latency: does the harness keep its connections busy when every worker
call takes a while? Simulated workers (workers/sim_provider.py) wait a seeded lognormal
latency per call (`latency` median, sigma 0.6: at a 6 s median, about 2-20 s; small here so
the bench runs in a couple of minutes: the ratios, not the seconds, are the result).

1. Eval: N questions, each a 3-step chain (each step sees the ones before), through Inspect's
   `eval()` at `--max-connections C` (the conductor is scripted and instant). Achieved
   concurrency = summed call latency / wall; bound = max(longest chain, summed latency / C);
   ideal FIFO = the wall time of an overhead-free harness starting the chains in order.
2. Training reward phase: one batch of 256 rollouts, the same chain, scored by
   `ConductorReward` at the paper recipe's `max_concurrency` (64); bound as above with 64.
Goal for both: wall time within 1.2x of the bound.

    python benchmarks/bench_api_latency.py [--questions 200 --connections 16 --median 0.5]
"""

from __future__ import annotations

import argparse
import asyncio
import heapq
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import yaml

os.environ.setdefault("XDG_DATA_HOME", tempfile.mkdtemp())
os.environ.setdefault("INSPECT_LOG_DIR", tempfile.mkdtemp())
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

CHAIN = (
    'model_id = [0, 1, 3]\nsubtasks = ["Solve it.", "Check it.", "Give the final answer."]\n'
    'access_list = [[], "all", "all"]'
)
PAPER_CONCURRENCY = yaml.safe_load((ROOT / "training/recipes/paper.yaml").read_text())["max_concurrency"]
ROLLOUTS = 256  # the paper recipe's generations per optimizer step
WARM_UP = 4  # samples of an uncounted first eval
EVAL_ARMS = [  # (row name, eval() options)
    ("eval, Inspect's defaults", {}),
    ("eval, `log_realtime=False` (the project's runners: `solvers.batch_eval`)", {"log_realtime": False}),
]


class Waits:
    """The simulated workers' intended waits, summed per item (a sample or a rollout): the
    latency draw of workers/sim_provider.py, recorded as it is made; and the CPU the stand-in
    spends making its answers (`simulate`: a remote API spends it on its own machines, so it is
    taken off the harness's CPU)."""

    def __init__(self) -> None:
        from workers import sim_provider

        self.per_item: dict[str, float] = defaultdict(float)
        self.standin_cpu = 0.0
        draw, simulate = sim_provider.latency, sim_provider.simulate

        def recorded(median: float, sigma: float, seed: int, profile: str, item: str, *parts: object) -> float:
            wait = draw(median, sigma, seed, profile, item, *parts)
            self.per_item[item] += wait
            return wait

        def timed(*args: object) -> object:
            started = time.thread_time()
            try:
                return simulate(*args)
            finally:
                self.standin_cpu += time.thread_time() - started

        sim_provider.latency, sim_provider.simulate = recorded, timed

    def take(self) -> tuple[list[float], float]:
        """The chains recorded since the last take, and the stand-in's CPU seconds."""
        chains, standin = list(self.per_item.values()), self.standin_cpu
        self.per_item, self.standin_cpu = defaultdict(float), 0.0
        return chains, standin


def latency_pool(median: float, sigma: float) -> str:
    """The bundled sim pool with every worker waiting `median` seconds (lognormal)."""
    data = yaml.safe_load((ROOT / "workers/pools/sim.yaml").read_text())
    for worker in data["workers"]:
        worker["model_args"] = {"latency": median, "latency_sigma": sigma}
    path = Path(tempfile.mkdtemp()) / "sim-latency.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def bound(chains: list[float], connections: int) -> float:
    """The least wall time: the longest chain, or all the waiting spread over the connections."""
    return max(max(chains), sum(chains) / connections)


def fifo(chains: list[float], connections: int) -> float:
    """The wall time of an ideal harness (no overhead) that starts the chains in order, each
    holding one of `connections` slots for its whole chain: the tail of the last chains keeps
    it above `bound`."""
    slots = [0.0] * connections
    for chain in chains:
        heapq.heappush(slots, heapq.heappop(slots) + chain)
    return max(slots)


HEADER = (
    "| phase | chains | concurrency | summed latency s | bound s | ideal FIFO s | wall s | wall / bound | "
    "wall / ideal FIFO | process CPU s | stand-in CPU s | harness CPU ms per chain |\n"
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
)


def row(name: str, chains: list[float], standin: float, connections: int, wall: float, cpu: float) -> str:
    """One table row; harness CPU = the process's CPU less the stand-in's, per chain."""
    least, ideal = bound(chains, connections), fifo(chains, connections)
    return (f"| {name} | {len(chains)} | {connections} | {sum(chains):.1f} | {least:.2f} | {ideal:.2f} | "
            f"{wall:.2f} | {wall / least:.2f}x | {wall / ideal:.2f}x | {cpu:.2f} | {standin:.2f} | "
            f"{1000 * (cpu - standin) / len(chains):.1f} |")  # fmt: skip


def eval_run(pool: str, waits: Waits, questions: int, connections: int, **options: object) -> tuple:
    """(per-sample chain of call latencies, stand-in CPU seconds, wall seconds, CPU seconds) of one eval."""
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import includes
    from scripted import scripted

    from solvers.conductor import conductor

    samples = [Sample(input=f"What is {i} + 1?", target=str(i + 1), id=i, metadata={"domain": "math"})
               for i in range(questions)]  # fmt: skip
    task = Task(dataset=samples, solver=conductor(pool=pool), scorer=includes())
    started, cpu = time.perf_counter(), time.process_time()
    [log] = eval(task, model_roles={"conductor": scripted(CHAIN)}, max_connections=connections, display="none",
                 **options)  # fmt: skip
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    if log.status != "success":
        raise SystemExit(f"eval failed: {log.error}")
    for sample in log.samples:
        steps = sample.metadata["conductor"]["round"]["steps"]
        if len(steps) != 3 or any(s["error"] for s in steps):
            raise SystemExit(f"sample {sample.id} did not run its 3 steps: {sample.metadata['conductor']['round']}")
    return *waits.take(), wall, cpu


def reward_run(pool: str, waits: Waits, rollouts: int, concurrency: int) -> tuple:
    """(per-rollout chain of call latencies, stand-in CPU seconds, wall seconds, CPU seconds) of one reward batch."""
    from training.rewards import ConductorReward

    reward = ConductorReward(pool, max_concurrency=concurrency)
    rows = [{"question": f"What is {i} + 1?", "target": str(i + 1), "check": "numeric", "choices": None,
             "pool_indices": [0, 1, 2, 3], "domain": "math", "item_id": f"q{i}"} for i in range(rollouts)]  # fmt: skip
    started, cpu = time.perf_counter(), time.process_time()
    scored = asyncio.run(reward.score([CHAIN] * rollouts, rows))
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    if any(r.record is None or any(s.error for s in r.record.steps) for r in scored):
        raise SystemExit("a rollout failed: " + str(next(r.error for r in scored if r.error)))
    return *waits.take(), wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--median", type=float, default=0.5, help="median seconds per worker call")
    parser.add_argument("--sigma", type=float, default=0.6)
    args = parser.parse_args()
    pool = latency_pool(args.median, args.sigma)
    print(f"3-step chains on simulated workers, lognormal latency (median {args.median} s, sigma {args.sigma})\n")
    print(HEADER)
    n, c, waits = args.questions, args.connections, Waits()
    eval_run(pool, waits, WARM_UP, c)  # imports and first-call set-up, counted in no arm
    for name, options in EVAL_ARMS:
        chains, standin, wall, cpu = eval_run(pool, waits, n, c, **options)
        print(row(name, chains, standin, c, wall, cpu), flush=True)
    chains, standin, wall, cpu = reward_run(pool, waits, ROLLOUTS, PAPER_CONCURRENCY)
    print(row("training reward", chains, standin, PAPER_CONCURRENCY, wall, cpu))


if __name__ == "__main__":
    main()
