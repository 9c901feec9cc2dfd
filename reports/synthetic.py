"""Hand-built Inspect logs (Inspect's own `EvalLog` objects, written with `write_eval_log`)
for the tests and the report benchmark: no model runs. `record` builds a sample's
`metadata["conductor"]` in the layout of `solvers.conducting.summary`.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from pathlib import Path

from inspect_ai.log import (
    EvalConfig,
    EvalDataset,
    EvalLog,
    EvalPlan,
    EvalPlanStep,
    EvalSample,
    EvalSpec,
    write_eval_log,
)
from inspect_ai.model import ModelUsage
from inspect_ai.scorer import Score

from tasks.catalog import benchmark


def step(index: int, worker: int, model: str, visible: Sequence[int] = (), subtask: str = "Solve it.", **more) -> dict:
    usage = more.pop("usage", {"input_tokens": 100, "output_tokens": 50, "cost": 0.001})
    return {
        "index": index,
        "worker": worker,
        "model": model,
        "subtask": subtask,
        "visible": list(visible),
        "output": "",
        "usage": usage,
        "latency": 0.1,
        "error": more.pop("error", None),
        "round": more.pop("round", None),
        "fallback": None,
    }


def record(
    method: str,
    workers: Sequence[str],
    steps: Sequence[dict],
    *,
    conductor: str | None = None,
    settings: dict | None = None,
    cost: float | None = 0.001,
    tokens: tuple[int, int] = (100, 50),
    parsed: bool = True,
) -> dict:
    """A sample's `metadata["conductor"]`, as `solvers.conducting.summary` stores it."""
    agent = len(steps)
    own = int(conductor is not None)
    return {
        "method": method,
        "parsed": parsed,
        "rejection": None if parsed else "no_lists",
        "steps": agent,
        "agent_calls": agent,
        "conductor_calls": own,
        "calls": agent + own,
        "format_retries": 0,
        "recursions": 0,
        "fallbacks": 0,
        "input_tokens": tokens[0],
        "output_tokens": tokens[1],
        "worker_cost_usd": cost,
        "conductor_cost_usd": 0.0 if cost is not None else None,
        "cost_usd": cost,
        "conductor": conductor,
        "workers": list(workers),
        "pool_indices": list(range(len(workers))),
        "round": {"depth": 0, "conductor": conductor, "steps": list(steps)},
        "settings": settings or {},
    }


def sample(
    sid: str,
    epoch: int,
    value: str | float | None,
    meta: dict | None,
    *,
    error: str | None = None,
    scorer: str = "choice_letter",
) -> EvalSample:
    tokens = (meta or {}).get("input_tokens", 10), (meta or {}).get("output_tokens", 5)
    return EvalSample(
        id=sid,
        epoch=epoch,
        input=f"question {sid}",
        target="A",
        scores=None if value is None else {scorer: Score(value=value)},
        metadata={"conductor": meta} if meta else {},
        model_usage={
            "m": ModelUsage(input_tokens=tokens[0], output_tokens=tokens[1], total_tokens=tokens[0] + tokens[1])
        },
        error=None if error is None else {"message": error, "traceback": "", "traceback_ansi": ""},
    )


def write_log(
    directory: Path,
    task: str,
    solver: str,
    solver_args: dict,
    samples: Sequence[EvalSample],
    *,
    model: str = "none/none",
    roles: dict | None = None,
    epochs: int = 1,
    total: int | None = None,
    status: str = "success",
    metadata: dict | None = None,
    created: str = "2026-01-01T00:00:00+00:00",
) -> Path:
    """Write one eval log holding `samples`; `total` = the samples the eval meant to run (default:
    the distinct ids given; more ids are made up to reach it: samples missing from the log). The file is
    named by number, task and solver, other characters than letters, digits, `_ . -` written `_`."""
    ids: list = list(dict.fromkeys(s.id for s in samples))
    ids += [f"missing_{i}" for i in range(max(0, (total or 0) - len(ids)))]
    number = len(list(directory.glob("*.eval"))) if directory.is_dir() else 0
    declared = benchmark(task)
    spec = EvalSpec(
        created=created,
        task=task,
        task_id=f"{task}-{number}",
        run_id=f"synthetic-{number}",
        task_file=f"tasks/{declared.file if declared else task}.py",
        solver=solver,
        solver_args=solver_args,
        model=model,
        model_roles=roles,
        config=EvalConfig(epochs=epochs),
        dataset=EvalDataset(name=task, samples=total or len(ids), sample_ids=ids),
        metadata=metadata,
    )
    plan = EvalPlan(steps=[EvalPlanStep(solver=solver, params=solver_args, params_passed=solver_args)])
    log = EvalLog(eval=spec, plan=plan, status=status, samples=list(samples))
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / (re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{number:05d}_{task}_{solver}")[:120] + ".eval")
    write_eval_log(log, str(path))
    return path


def generated(directory: Path, samples: int, seed: int = 0) -> list[Path]:
    """Logs with `samples` samples in all: a conductor and baselines on four tasks, a
    simulated pool, random workflows (1-5 steps), scores and costs (for the benchmark)."""
    rng = random.Random(seed)
    workers = ["sim/math-strong", "sim/choice-strong", "sim/mediocre", "sim/premium"]
    runs: list[tuple[str, dict, str | None]] = [("conductor", {"pool": "sim"}, "local/smollm2-135m")]
    runs += [("single_worker", {"pool": "sim", "worker": w}, None) for w in range(len(workers))]
    runs += [("mixture_of_agents", {"pool": "sim"}, None)]
    tasks = ["math500", "mmlu", "gpqa_diamond", "aime2025"]
    per_log = max(1, samples // (len(runs) * len(tasks)))
    paths = []
    for task in tasks:
        for solver, args, conductor in runs:
            rows = []
            for i in range(per_log):
                n = rng.randint(1, 5) if solver != "single_worker" else 1
                steps = [
                    step(j, w := rng.randrange(len(workers)), workers[w], rng.sample(range(j), rng.randint(0, j)))
                    for j in range(n)
                ]
                meta = record(
                    solver,
                    workers,
                    steps,
                    conductor=conductor,
                    cost=rng.random() / 100,
                    tokens=(rng.randint(50, 2000), rng.randint(10, 800)),
                )
                rows.append(sample(f"{task}_{i:05d}", 1 + i % 2, rng.choice("CI"), meta))
            paths.append(write_log(directory, task, solver, args, rows, epochs=2))
    return paths
