"""Inspect solvers for the trained routers (`-S router_file=...`, default: the file the
training command writes for that pool).

    inspect eval tasks/math500.py --solver router_dc -S pool=sim
    inspect eval tasks/math500.py --solver mas_router -S pool=sim -S router_file=mas.json

`router_dc` sends the benchmark prompt alone to the worker its router picks (recorded like
`single_worker`); `mas_router` runs its router's multi-agent plan as a workflow on the
shared executor. Both store the conductor's metadata layout with `method` and a `router`
entry (file, choice, scores or plan).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from inspect_ai.solver import Generate, Solver, TaskState, solver

from solvers.baselines import answer_alone, baseline_options, finish_baseline, sample_workers
from solvers.executor import ErrorPolicy, RoundRecord, Worker, execute_workflow, final_answer
from solvers.options import checked_options
from solvers.routers.features import featurize
from solvers.routers.mas_router import MASRouter, plan_workflow
from solvers.routers.outcomes import router_cache_dir
from solvers.routers.router_dc import RouterDC
from solvers.team import current_task_name
from startup.options import OptionError, need_option
from tasks.catalog import benchmark
from workers.pools import DEFAULT_POOL, load_pool


def default_router_file(kind: str, pool: str | None) -> Path:
    """Where `python -m solvers.routers.train <kind> --pool <pool>` saves by default."""
    return router_cache_dir(load_pool(pool or DEFAULT_POOL).name) / f"{kind}.json"


def load_router(kind: str, router_file: str | None, pool: str | None) -> RouterDC | MASRouter:
    """The trained router of `kind` from `router_file` (default: the pool's trained file)."""
    need_option(router_file is None or isinstance(router_file, str), "router_file", router_file, "a path")
    path = Path(router_file) if router_file else default_router_file(kind, pool)
    train = f"python -m solvers.routers.train {kind} --pool {pool or DEFAULT_POOL} --task math500 --out {path}"
    if not path.is_file():
        raise OptionError(f"{kind}: router file {path} not found; train it first: `{train}` (or -S router_file=<file>)")
    try:
        data = json.loads(path.read_text())
    except ValueError as error:
        raise OptionError(f"{kind}: router file {path} is not JSON ({error}); retrain it: `{train}`") from error
    return (RouterDC if kind == "router_dc" else MASRouter).from_dict(data)


def check_pool(kind: str, trained: list[str], workers: list[Worker]) -> None:
    names = [w.name for w in workers]
    if names != trained:
        raise ValueError(
            f"{kind}: the router was trained for workers {trained} but the pool has {names}; "
            "use the pool it was trained on (-S pool=...) or retrain it for this pool"
        )


def query_text(state: TaskState) -> str:
    """What a router embeds: the bare question when the task keeps it, else the prompt."""
    return str(state.metadata.get("question") or state.input_text)


def sample_domain(state: TaskState) -> str:
    """MASRouter's role set for the running sample: code, multiple choice, RLPR or math (the
    domain its benchmark declares; math for a task no file declares)."""
    declared = benchmark(current_task_name())
    domain = declared.domain if declared is not None else "math"
    if state.metadata.get("answer_format") == "code" or domain == "lcb":
        return "lcb"
    if state.choices or state.metadata.get("choices"):
        return "mmlu"
    return domain


@solver
@checked_options
def router_dc(
    router_file: str | None = None,
    pool: str | None = None,
    temperature: float | None = None,
    max_tokens: int | None = None,
    on_error: ErrorPolicy = "continue",
    step_timeout: float | None = None,
) -> Solver:
    """RouterDC: the trained router picks one worker, which answers the benchmark prompt alone."""
    options = baseline_options(locals())  # checked, and recorded as the sample's "settings"
    router = load_router("router_dc", router_file, pool)
    assert isinstance(router, RouterDC)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        workers = sample_workers(state, pool, temperature, max_tokens)
        check_pool("router_dc", router.workers, workers)
        features = await asyncio.to_thread(featurize, [query_text(state)], router.source)
        similarities = router.similarities(features)[0]
        choice = int(similarities.argmax())
        state = await answer_alone(state, workers[choice], choice, "router_dc", options)
        state.metadata["conductor"]["router"] = {
            "file": router_file or str(default_router_file("router_dc", pool)),
            "choice": choice,
            "similarities": [round(float(s), 5) for s in similarities],
            "source": router.source,
        }
        return state

    return solve


@solver
@checked_options
def mas_router(
    router_file: str | None = None,
    pool: str | None = None,
    temperature: float | None = None,
    max_tokens: int | None = None,
    on_error: ErrorPolicy = "continue",
    step_timeout: float | None = None,
) -> Solver:
    """MASRouter: the trained cascade picks a collaboration mode, roles and a worker per role;
    the plan runs as a workflow (every step shown the question)."""
    options = baseline_options(locals())  # checked, and recorded as the sample's "settings"
    router = load_router("mas_router", router_file, pool)
    assert isinstance(router, MASRouter)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        workers = sample_workers(state, pool, temperature, max_tokens)
        check_pool("mas_router", router.workers, workers)
        domain = sample_domain(state)
        features = await asyncio.to_thread(featurize, [query_text(state)], router.source)
        plan = router.greedy(features[0], domain)
        workflow = plan_workflow(plan)
        record = RoundRecord(depth=0, conductor=None, workflow=workflow.to_dict())
        record.steps = await execute_workflow(
            workflow, state.input_text, workers, on_error=on_error, step_timeout=step_timeout, question_mode="every"
        )
        record.answer = final_answer(record.steps)
        finish_baseline(state, record, workers, list(range(len(workers))), "mas_router", options)
        state.metadata["conductor"]["router"] = {
            "file": router_file or str(default_router_file("mas_router", pool)),
            "domain": domain,
            "plan": plan.to_dict(),
            "source": router.source,
        }
        return state

    return solve
