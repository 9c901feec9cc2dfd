"""Orchestration overhead of the workflow executor, measured side by side in one run.

1. Overhead per step: a 5-step workflow on instant scripted workers against 5 plain
   `Model.generate()` calls on the same models (target: under 1 ms added per step).
2. Latency: 4 independent steps + 1 aggregating step, each worker taking 0.2 s, run as a
   DAG against the same workflow in list order (the paper's sequential execution).
3. Workflow parsing: a paper-style completion, and the slowest adversarial completions at
   the size cap (every completion is parsed or rejected in bounded time).

    python benchmarks/bench_orchestration.py
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("XDG_DATA_HOME", tempfile.mkdtemp())
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from scripted import scripted  # noqa: E402

from solvers.executor import Worker, execute_workflow, step_messages  # noqa: E402
from solvers.workflow import MAX_COMPLETION_CHARS, Workflow, parse_workflow  # noqa: E402

QUESTION = "What is the capital of France? " * 20
STEPS = 5
PAPER_STYLE = (
    "The task needs a derivation and a check.\n" * 20
    + 'model_id = [3, 1]\nsubtasks = ["Solve it.", "Check it and answer."]\naccess_list = [[], ["all"]]\n'
)
ADVERSARIAL = {
    "prose at the cap": "x" * MAX_COMPLETION_CHARS,
    "unclosed brackets": "model_id = [\n" * (MAX_COMPLETION_CHARS // 13),
    "broken statements": "subtasks = 1 +\n" * (MAX_COMPLETION_CHARS // 16),
    "triple quotes": ('"""\nmodel_id = [0]\nsubtasks = ["a"]\naccess_list = [[]]\n' * 2000)[:MAX_COMPLETION_CHARS],
    "nested brackets": "model_id = " + "[" * 5000 + "]" * 5000,
}
CHAIN = Workflow(tuple(range(STEPS)), tuple(f"subtask {i}" for i in range(STEPS)), ((),) + ("all",) * (STEPS - 1))
FAN_IN = Workflow((0, 1, 2, 3, 4), tuple("ABCDE"), ((), (), (), (), "all"))


async def plain_calls(workers: list[Worker]) -> None:
    """The same five generations, issued back to back without the executor."""
    seen: list[tuple[str, str, bool]] = []
    for i, worker in enumerate(workers):
        output = await worker.model.generate(step_messages(QUESTION, seen, CHAIN.subtasks[i], i == 0))
        seen.append((CHAIN.subtasks[i], output.completion, i == 0))


async def timed(make, repeats: int) -> list[float]:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        await make()
        samples.append(time.perf_counter() - start)
    return samples


async def main(repeats: int = 300) -> None:
    instant = [Worker(scripted("a short answer"), f"w{i}") for i in range(STEPS)]
    # warm up both paths, then interleave rounds so machine noise hits both alike
    await plain_calls(instant)
    await execute_workflow(CHAIN, QUESTION, instant)
    plain, executor = [], []
    for _ in range(10):
        plain += await timed(lambda: plain_calls(instant), repeats // 10)
        executor += await timed(lambda: execute_workflow(CHAIN, QUESTION, instant), repeats // 10)
    p, e = statistics.median(plain), statistics.median(executor)
    print(f"## Orchestration overhead ({STEPS}-step chain, instant scripted workers, {repeats} runs each, median)\n")
    print("| path | ms per workflow | ms per step |")
    print("|---|---|---|")
    print(f"| plain Model.generate() x{STEPS} | {p * 1e3:.2f} | {p * 1e3 / STEPS:.3f} |")
    print(f"| execute_workflow | {e * 1e3:.2f} | {e * 1e3 / STEPS:.3f} |")
    print(f"| **added by the executor** | {(e - p) * 1e3:.2f} | **{(e - p) * 1e3 / STEPS:.3f}** |")

    delay = 0.2
    slow = [Worker(scripted("x", delay=delay), f"w{i}") for i in range(5)]
    dag = await timed(lambda: execute_workflow(FAN_IN, QUESTION, slow), 5)
    seq = await timed(lambda: execute_workflow(FAN_IN, QUESTION, slow, concurrent=False), 5)
    d, s = statistics.median(dag), statistics.median(seq)
    print(f"\n## Parallel workflow latency (4 independent steps + 1 aggregator, {delay} s per call, median of 5)\n")
    print("| execution | seconds | in units of one call |")
    print("|---|---|---|")
    print(f"| sequential (paper) | {s:.3f} | {s / delay:.2f} |")
    print(f"| DAG (concurrent) | {d:.3f} | {d / delay:.2f} |")
    print(f"| speed-up | {s / d:.2f}x | |")

    print(f"\n## Workflow parsing (parse_workflow, size cap {MAX_COMPLETION_CHARS} chars, median of 20)\n")
    print("| completion | chars | ms | outcome |")
    print("|---|---|---|---|")
    for name, text in {"paper-style": PAPER_STYLE, **ADVERSARIAL}.items():
        times = []
        for _ in range(20):
            start = time.perf_counter()
            result = parse_workflow(text, range(7))
            times.append(time.perf_counter() - start)
        outcome = "parsed" if result.ok else result.reason
        print(f"| {name} | {len(text)} | {statistics.median(times) * 1e3:.2f} | {outcome} |")


if __name__ == "__main__":
    asyncio.run(main())
