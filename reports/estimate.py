"""What the paper's tables cost on real pools: the commands that fill them and a USD estimate.

For each command (the matrix runner on an API pool, `REAL_RUNS`), every run it would make
(`solvers.matrix.build_matrix`: per-worker methods once per worker) is priced as

    questions x [agent calls x (input tokens x input price + output tokens x output price)]

per benchmark, where

- agent calls per question and input tokens per call come from a simulated run of the same
  method on the same benchmark (the same prompts and workflows; the simulation counts a
  token per 4 characters, and its input tokens include the conductor's prompt); a conductor
  ablation without a simulated run of its own takes the conductor's;
- output tokens per call are `EXPECTED_OUTPUT_TOKENS` (the paper's Table 5: its 5x consensus
  rows on MMLU spent 1412.8, 1658.4 and 1376.3 tokens per question over 5 calls, about 300 a
  call) in the constrained setting, and each worker's `max_tokens` (an upper bound) otherwise;
- prices are the pool file's (USD per million tokens) for the worker a run uses, the mean over
  the pool's workers for a method that uses several;
- conductor calls are counted, not priced (the paper's conductor is a self-hosted 7B model);
- questions are the benchmarks' test sets (each one's declared `paper_questions`, `questions`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from tasks.catalog import task_file

EXPECTED_OUTPUT_TOKENS = 300  # per worker call, constrained setting (module docstring: paper Table 5)
_VARIANT = re.compile(r"_(w|k)\d{1,4}$")


def questions(file: str) -> int:
    """The questions of the test set the paper's tables run, of the benchmark of `tasks/<file>.py`."""
    declared = task_file(file)
    count = declared.paper_questions if declared is not None else None
    if count is None:
        raise KeyError(f"tasks/{file}.py declares no paper_questions: the estimate has no test-set size for it")
    return count


@dataclass(frozen=True)
class RealRun:
    """One matrix-runner command on an API pool."""

    pool: str
    setting: str  # constrained | unconstrained
    tables: str
    methods: tuple[str, ...] = ()  # empty: every method of the methods file
    matrix: str = "matrix.yaml"  # a methods file beside solvers/matrix.py

    def argv(self, tasks: Sequence[str]) -> list[str]:
        argv = ["python", "-m", "solvers.matrix", "--tasks", ",".join(tasks), "--pool", self.pool]
        argv += ["--methods", ",".join(self.methods)] if self.methods else []
        argv += ["--matrix", f"solvers/{self.matrix}"] if self.matrix != "matrix.yaml" else []
        return argv + ["--log-dir", f"logs/paper/{self.pool}"]


REAL_RUNS = (
    RealRun("paper-constrained", "constrained", "Tables 2/8, 5, 6, 7, Fig. 5"),
    RealRun("paper-constrained", "constrained", "Tables 4, 9", (), "ablations.yaml"),
    RealRun("paper", "unconstrained", "Tables 1, 3", ("conductor", "single_worker")),
)


def per_call(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean agent calls, conductor calls and input tokens per call, per (matrix method, task),
    from a run's report frame (`reports.frame.load_samples`)."""
    rows = frame[frame["matrix_method"].astype(str) != ""].copy()
    rows["base"] = rows["matrix_method"].astype(str).map(lambda m: _VARIANT.sub("", _VARIANT.sub("", m)))
    rows["conductor_calls"] = rows["calls"] - rows["agent_calls"]
    grouped = rows.groupby(["base", "task"])[["agent_calls", "conductor_calls", "calls", "input_tokens"]].sum()
    return pd.DataFrame({
        "agent_calls": grouped["agent_calls"] / rows.groupby(["base", "task"]).size(),
        "conductor_calls": grouped["conductor_calls"] / rows.groupby(["base", "task"]).size(),
        "input_per_call": grouped["input_tokens"] / grouped["calls"].where(grouped["calls"] > 0),
    })  # fmt: skip


@dataclass
class Estimate:
    usd: float
    worker_calls: float
    conductor_calls: float
    not_estimated: list[str]  # runs without a simulated counterpart


def estimate(usage: pd.DataFrame, runs: Sequence, workers: Sequence, tasks: Sequence[str], setting: str) -> Estimate:
    """USD and calls of the matrix runs `runs` (`solvers.matrix.Run`) on a pool's `workers`
    (`workers.pools.ModelSpec`, priced) over the full test sets of `tasks` (module docstring)."""
    budgets = [int((w.config or {}).get("max_tokens") or 0) for w in workers]
    total, agent, conductor, missing = 0.0, 0.0, 0.0, []
    for run in runs:
        if run.task not in tasks:
            continue
        declared = task_file(run.task)
        task = declared.name if declared is not None else run.task
        key = (_VARIANT.sub("", _VARIANT.sub("", run.method)), task)
        if key not in usage.index and run.solver == "conductor":  # an ablation: the conductor's calls
            key = ("conductor", task)
        if key not in usage.index:
            missing.append(f"{run.method} on {run.task}")
            continue
        stats, n = usage.loc[key], questions(run.task)
        index = run.options.get("worker")
        chosen = [index] if index is not None else range(len(workers))
        if any(workers[i].price is None for i in chosen):
            missing.append(f"{run.method} on {run.task} (a worker without a price)")
            continue
        input_per_call = 0.0 if pd.isna(stats["input_per_call"]) else float(stats["input_per_call"])
        per_call = sum(
            workers[i].price.cost(input_per_call, EXPECTED_OUTPUT_TOKENS if setting == "constrained" else budgets[i])
            for i in chosen
        ) / len(chosen)  # fmt: skip
        total += n * stats["agent_calls"] * per_call
        agent += n * stats["agent_calls"]
        conductor += n * stats["conductor_calls"]
    return Estimate(total, agent, conductor, missing)


def report_lines(frame: pd.DataFrame, tasks: Sequence[str]) -> list[str]:
    """The real-pool commands with their estimates, as printable lines (module docstring)."""
    from solvers.matrix import MATRIX_FILE, build_matrix, load_matrix, registered_solvers
    from workers.pools import load_pool

    usage = per_call(frame)
    registered = registered_solvers()
    lines = [f"Fill the paper's tables with real pools (questions: {', '.join(f'{t} {questions(t)}' for t in tasks)};",
             "needs the providers' API keys and `pip install -e \".[api]\"`; resumable):"]  # fmt: skip
    for real in REAL_RUNS:
        pool = load_pool(real.pool)
        methods = load_matrix(MATRIX_FILE.with_name(real.matrix))["methods"]
        built = build_matrix(methods, tasks, real.pool, len(pool.workers), registered, list(real.methods) or None)
        cost = estimate(usage, built.runs, pool.workers, tasks, real.setting)
        bound = "expected" if real.setting == "constrained" else "at most (every call its max_tokens)"
        lines.append(f"  {shlex.join(real.argv(tasks))}")
        lines.append(f"    {real.tables}; {len(built.runs)} evals; {cost.worker_calls:,.0f} worker calls, "
                     f"{cost.conductor_calls:,.0f} conductor calls (self-hosted, not priced); "
                     f"USD {bound}: {cost.usd:,.0f}")  # fmt: skip
        if cost.not_estimated:
            lines.append(f"    not in the estimate (no simulated run): {', '.join(cost.not_estimated)}")
    lines.append("  then: python -m reports reproduce --logs logs/paper")
    lines.append(
        "  (estimate: reports/estimate.py; calls and prompt tokens per call from the logs just read, "
        f"{EXPECTED_OUTPUT_TOKENS} output tokens a call from the paper's Table 5, the pool files' prices)"
    )
    return lines
