"""Sandboxed vs unsandboxed test-execution throughput (BwrapRunner vs a plain subprocess).

Usage: python benchmarks/bench_sandbox.py [--rounds N] [--concurrency C] [--modes bigcodebench ...]

Modes, each for both executors, in the same run:
  trivial        one `print` program per execution
  tests-separate a sum-of-numbers solution against 20 stdin/stdout cases, one execution per case
  tests-batched  the same 20 cases in ONE execution through a small driver (in order, stop at
                 the first failure: LiveCodeBench's semantics)
  humaneval      one full HumanEval check (scorers/code_humaneval.py: trusted parent + candidate
                 child, ~100 calls over the pipe for HumanEval/53)
  bigcodebench   one full BigCodeBench check (scorers/code_bcb.py: parent + test child)
"executions/s" counts test-case executions (20 per problem in the two test modes). "CPU ms" is
the CPU time (user + system) of the processes each execution starts inside the sandbox (a small
launcher reports its reaped children's rusage; bwrap's own setup is not in it): unlike a rate,
it holds on a machine that others share.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sandboxes.bwrap import BwrapRunner, Limits  # noqa: E402
from sandboxes.runner import ExecResult  # noqa: E402
from scorers.code_bcb import BCBProblem, check_bigcodebench  # noqa: E402
from scorers.code_humaneval import check_humaneval, problem_from_record  # noqa: E402

_FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
HE_PROBLEM = problem_from_record(json.loads((_FIXTURES / "humaneval_sample.jsonl").read_text().splitlines()[2]))
BCB_PROBLEM = BCBProblem.from_record(json.loads((_FIXTURES / "bcb_sample.jsonl").read_text().splitlines()[0]))

SOLUTION = "import sys\nprint(sum(int(x) for x in sys.stdin.read().split()))\n"
CASES = [(" ".join(str(i * j) for j in range(1, 50)), str(sum(i * j for j in range(1, 50)))) for i in range(20)]

DRIVER = r"""
import io, json, sys, runpy, contextlib
cases = json.load(open("cases.json"))
results = []
for stdin, expected in cases:
    sys.stdin = io.StringIO(stdin)
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_path("solution.py", run_name="__main__")
        ok = out.getvalue().strip() == expected.strip()
    except SystemExit as e:
        ok = e.code in (None, 0) and out.getvalue().strip() == expected.strip()
    except BaseException:
        ok = False
    results.append(ok)
    if not ok:
        break
print(json.dumps(results))
"""


class PlainRunner:
    """Unsandboxed baseline: the same python, a fresh temp dir, no isolation at all."""

    async def run(self, command, *, files=None, stdin=None, timeout) -> ExecResult:
        # the checks' default command (also under the CPU launcher): this interpreter, not a PATH shim
        command = [sys.executable if part == "python3" else part for part in command]
        with tempfile.TemporaryDirectory() as d:
            for rel, content in (files or {}).items():
                Path(d, rel).write_text(content)
            proc = await asyncio.create_subprocess_exec(
                *command,
                cwd=d,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            out, err = await asyncio.wait_for(proc.communicate((stdin or "").encode()), timeout)
            return ExecResult(proc.returncode, out.decode(), err.decode())


async def trivial(runner) -> int:
    r = await runner.run([sys.executable, "-c", "print('hello')"], timeout=10)
    assert r.ok and r.stdout == "hello\n", r
    return 1


async def separate(runner) -> int:
    for stdin, expected in CASES:
        r = await runner.run([sys.executable, "solution.py"], files={"solution.py": SOLUTION}, stdin=stdin, timeout=6)
        assert r.ok and r.stdout.strip() == expected, r
    return len(CASES)


async def batched(runner) -> int:
    files = {"solution.py": SOLUTION, "driver.py": DRIVER, "cases.json": json.dumps(CASES)}
    r = await runner.run([sys.executable, "driver.py"], files=files, timeout=(6 + 1) * len(CASES) + 5)
    assert r.ok and json.loads(r.stdout) == [True] * len(CASES), r
    return len(CASES)


async def humaneval(runner) -> int:
    r = await check_humaneval("```python\ndef add(x, y):\n    return x + y\n```", HE_PROBLEM, runner)
    assert r.correct and HE_PROBLEM.entry_point == "add", r
    return 1


async def bigcodebench(runner) -> int:
    r = await check_bigcodebench(f"```python\n{BCB_PROBLEM.reference_program}\n```", BCB_PROBLEM, runner, 30)
    assert r.correct, r
    return 1


CPU_MARK = "@@BENCH_CPU@@"
LAUNCHER = (  # runs the command, then reports its reaped processes' CPU seconds on stderr
    "import resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[1:]).returncode\n"
    "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    f"sys.stderr.write('\\n{CPU_MARK}%f\\n' % (u.ru_utime + u.ru_stime))\n"
    "sys.exit(code)\n"
)


class CpuCounting:
    """A runner that starts each command under LAUNCHER and adds up the CPU seconds it reports."""

    def __init__(self, inner) -> None:
        self.inner, self.cpu = inner, 0.0

    async def run(self, command, *, files=None, stdin=None, timeout) -> ExecResult:
        result = await self.inner.run(["python3", "-c", LAUNCHER, *command], files=files, stdin=stdin, timeout=timeout)
        head, mark, tail = result.stderr.rpartition(CPU_MARK)
        if mark:
            self.cpu += float(tail.split()[0])
            result = dataclasses.replace(result, stderr=head.rstrip("\n"))
        return result


async def measure(runner, fn, rounds: int, concurrency: int) -> tuple[float, float]:
    """(executions per second, CPU ms of the executions' processes per execution)."""
    await fn(runner)  # warm-up (self-check, page cache)
    sem = asyncio.Semaphore(concurrency)

    async def one() -> int:
        async with sem:
            return await fn(runner)

    t0, cpu0 = time.perf_counter(), runner.cpu
    n = sum(await asyncio.gather(*(one() for _ in range(rounds))))
    return n / (time.perf_counter() - t0), 1000 * (runner.cpu - cpu0) / n


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=40, help="problems (or trivial programs) per mode")
    ap.add_argument("--repeats", type=int, default=2, help="interleaved repetitions; the best counts")
    ap.add_argument("--concurrency", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--modes", nargs="+", choices=[m[0] for m in MODES], help="only these modes (default: all)")
    args = ap.parse_args()
    plain, bw = CpuCounting(PlainRunner()), CpuCounting(BwrapRunner(Limits()))
    rows = []
    # the code checks' trusted drivers refuse to judge where the code under test could change
    # their import path (scorers/verdict_channel.py seal_parent): an unsandboxed run as root is
    # such a place, so those two rows are measured in the sandbox only
    for key, name, fn, scale, plain_too in MODES:
        if args.modes and key not in args.modes:
            continue
        rounds = max(2, int(args.rounds * scale))
        base, sand = ((0.0, 0.0) if plain_too else None), (0.0, 0.0)
        for _ in range(args.repeats):  # interleaved; best rate of each, with its CPU time
            if plain_too:
                base = max(base, await measure(plain, fn, rounds, args.concurrency))
            sand = max(sand, await measure(bw, fn, rounds, args.concurrency))
        rows.append((key, name, base, sand))
    py = sys.version.split()[0]
    print(f"python {py}, {os.cpu_count()} CPUs, concurrency {args.concurrency}, best of {args.repeats}\n")
    print("| mode | unsandboxed exec/s | bwrap exec/s | bwrap / unsandboxed | bwrap CPU ms per exec |")
    print("|---|---:|---:|---:|---:|")
    for _, name, base, sand in rows:
        if base is None:
            print(f"| {name} | n/a (refuses to judge) | {sand[0]:.1f} | | {sand[1]:.0f} |")
        else:
            print(f"| {name} | {base[0]:.1f} | {sand[0]:.1f} | {sand[0] / base[0]:.2f} | {sand[1]:.1f} |")
    found = {key: row for key, *row in rows}
    if "tests-batched" in found and "tests-separate" in found:
        ratio = found["tests-batched"][2][0] / found["tests-separate"][1][0]
        print(f"\nbatched bwrap vs separate unsandboxed: {ratio:.1f}x")


MODES = (  # key, row name, function, rounds per --rounds, also measured unsandboxed
    ("trivial", "trivial (print)", trivial, 4, True),
    ("tests-separate", "20 tests, separate executions", separate, 0.5, True),
    ("tests-batched", "20 tests, batched in one sandbox", batched, 2, True),
    ("humaneval", "HumanEval check (parent + child driver)", humaneval, 1, False),
    ("bigcodebench", "BigCodeBench check (parent + child driver)", bigcodebench, 1, False),
)


if __name__ == "__main__":
    asyncio.run(main())
