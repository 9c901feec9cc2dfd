"""Train a router on a pool's per-question outcomes (training splits; validation apart).

    python -m solvers.routers.train router_dc --pool sim --task math500
    python -m solvers.routers.train mas_router --pool sim --task math500,gsm8k --iterations 20
    python -m solvers.routers.train router_dc --pool local --task math500 --train-items 4 --val-items 2 --runs 1

The paper's RouterDC setting is 500 training questions run 5 times each (the defaults);
MASRouter's is batch 256, validation every 5 iterations, early stop at a 10% drop. Worker
answers and MASRouter's workflow executions are cached (`outcomes`), so a second training
reuses them. The router is written to `--out` (default: the file the solvers load for that
pool) with its training summary; the summary is also printed as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict, fields

from solvers.baselines import seeded  # run r of an outcome samples with seed r, so runs differ
from solvers.conducting import answer_constraint_for
from solvers.executor import Worker, execute_workflow, final_answer
from solvers.routers import mas_router as mas
from solvers.routers import router_dc as dc
from solvers.routers.data import Item, check_item, check_tasks, load_items
from solvers.routers.features import featurize, source_from_option
from solvers.routers.outcomes import (
    JsonlCache,
    accuracy_table,
    collect_outcomes,
    outcome_cache,
    router_cache_dir,
    worker_key,
)
from solvers.routers.solvers import default_router_file
from solvers.team import pool_workers
from workers.pools import load_pool
from workers.providers import any_simulated


def answer_key_for(workers: Sequence[Worker]):
    """The simulated pool's answer key per item (None for pools without `sim/` workers)."""
    if not any_simulated(w.name for w in workers):
        return None
    from workers.sim_provider import answer_key

    def context(item: Item) -> AbstractContextManager:
        return answer_key(
            target=item.target, domain=item.domain, check=item.check, choices=item.choices,
            item_id=f"{item.task}/{item.item_id}",
        )  # fmt: skip

    return context


def items_for(tasks: list[str], split: str, total: int, seed: int) -> list[Item]:
    """`total` items split evenly over the tasks (the first tasks get the remainder)."""
    share, extra = divmod(total, len(tasks))
    return [it for i, task in enumerate(tasks) for it in load_items(task, split, share + (i < extra), seed)]


def workers_for(pool: str):
    def workers(item: Item) -> list[Worker]:
        return pool_workers(pool, answer_constraint=answer_constraint_for(item.choices), task=item.task)

    return workers


async def collect(pool: str, items: list[Item], runs: int, concurrency: int, timeout: float | None) -> dict:
    """Every pool worker on every item, `runs` times (cached); a report of what ran."""
    name, resolve = load_pool(pool).name, workers_for(pool)
    report = await collect_outcomes(
        items, lambda item, run: [seeded(w, run) for w in resolve(item)], name, outcome_cache(name), runs=runs,
        max_concurrency=concurrency, step_timeout=timeout, key_context=answer_key_for(resolve(items[0])),
    )  # fmt: skip
    return asdict(report)


async def train_router_dc(args: argparse.Namespace, config: dc.DCConfig) -> dict:
    tasks = check_tasks(args.task.split(","))
    train_items = items_for(tasks, "train", args.train_items, args.seed)
    val_items = items_for(tasks, "validation", args.val_items, args.seed)
    report = await collect(args.pool, train_items + val_items, args.runs, args.max_concurrency, args.step_timeout)
    name = load_pool(args.pool).name
    workers = workers_for(args.pool)(train_items[0])
    keys = [worker_key(slot, w) for slot, w in enumerate(workers)]
    cache = outcome_cache(name)
    scores, kept = accuracy_table(train_items, keys, name, cache, args.runs)
    val_scores, val_kept = accuracy_table(val_items, keys, name, cache, args.runs)
    source = source_from_option(args.embeddings)
    x = featurize([it.question for it in kept], source)
    x_val = featurize([it.question for it in val_kept], source)
    router = dc.train(x, scores, x_val, val_scores, [w.name for w in workers], source, config)
    router.info.update({"pool": name, "tasks": tasks, "train_items": len(kept), "val_items": len(val_kept),
                        "runs": args.runs, "outcomes": report})  # fmt: skip
    out = args.out or default_router_file("router_dc", args.pool)
    dc.save(router, out)
    return {"file": str(out), **{k: v for k, v in router.info.items() if k != "history"}}


def plan_key(plan: mas.Plan, workers: Sequence[Worker]) -> str:
    workflow = mas.plan_workflow(plan).to_dict()
    return json.dumps({**workflow, "workers": [workers[i].name for i in workflow["model_id"]]}, sort_keys=True)


def executor(pool: str, items: list[Item], cache: JsonlCache, concurrency: int, timeout: float | None):
    """MASRouter's `execute(item index, plan)`: run the plan's workflow (cached by plan)."""
    name, resolve = load_pool(pool).name, workers_for(pool)
    limit = asyncio.Semaphore(concurrency)
    key_context = answer_key_for(resolve(items[0])) if items else None

    async def execute(index: int, plan: mas.Plan) -> tuple[bool, float | None]:
        item = items[index]
        workers = resolve(item)
        key = {"pool": name, "task": item.task, "item": item.item_id, "plan": plan_key(plan, workers)}
        if (hit := cache.get(**key)) is not None:
            return bool(hit["correct"]), hit["cost"]
        async with limit:
            with key_context(item) if key_context else nullcontext():
                steps = await execute_workflow(
                    mas.plan_workflow(plan), item.prompt, workers, step_timeout=timeout, question_mode="every"
                )
        answer = final_answer(steps)
        correct = bool(check_item(item, answer).correct)
        costs = [s.usage.cost for s in steps]
        cost = None if None in costs else float(sum(costs))
        if all(s.ok for s in steps):
            cache.put({**key, "correct": correct, "cost": cost, "calls": len(steps)})
        return correct, cost

    return execute


async def train_mas_router(args: argparse.Namespace, config: mas.MASConfig) -> dict:
    tasks = check_tasks(args.task.split(","))
    train_items = items_for(tasks, "train", args.train_items, args.seed)
    val_items = items_for(tasks, "validation", args.val_items, args.seed)
    name = load_pool(args.pool).name
    cache = JsonlCache(router_cache_dir(name) / "executions.jsonl", ("pool", "task", "item", "plan"))
    source = source_from_option(args.embeddings)
    x = featurize([it.question for it in train_items], source)
    x_val = featurize([it.question for it in val_items], source)
    workers = [w.name for w in workers_for(args.pool)(train_items[0])]
    run = executor(args.pool, train_items, cache, args.max_concurrency, args.step_timeout)
    run_val = executor(args.pool, val_items, cache, args.max_concurrency, args.step_timeout)
    router = await mas.train(
        x,
        [it.domain for it in train_items],
        run,
        x_val,
        [it.domain for it in val_items],
        run_val,
        workers,
        source,
        config,
    )
    router.info.update({"pool": name, "tasks": tasks, "train_items": len(train_items), "val_items": len(val_items)})
    out = args.out or default_router_file("mas_router", args.pool)
    mas.save(router, out)
    return {"file": str(out), **{k: v for k, v in router.info.items() if k != "history"},
            "val_history": [h for h in router.info["history"] if "val_accuracy" in h]}  # fmt: skip


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m solvers.routers.train", description=__doc__.split("\n\n")[0])
    p.add_argument("kind", choices=("router_dc", "mas_router"))
    p.add_argument("--pool", default="local", help="bundled pool name or pool YAML (default: local)")
    p.add_argument(
        "--task", default="math500", help="comma-separated: math500, gsm8k, rlpr, mmlu (training splits only)"
    )
    p.add_argument("--train-items", type=int, default=500, help="training questions in all (paper: 500)")
    p.add_argument("--val-items", type=int, default=100, help="validation questions (model selection)")
    p.add_argument("--runs", type=int, default=5, help="runs of each worker per question (router_dc; paper: 5)")
    p.add_argument("--embeddings", default=None, help="query embedding source: hashed_ngrams (default) or a "
                   "workers.embeddings spec (local, hash:512, an embedding model name)")  # fmt: skip
    p.add_argument("--out", default=None, help="router file (default: the file the solver loads for the pool)")
    p.add_argument("--max-concurrency", type=int, default=8)
    p.add_argument("--step-timeout", type=float, default=None, help="seconds per worker call")
    p.add_argument("--seed", type=int, default=0)
    defaults: dict[str, list[str]] = {}
    for cls, kind in ((dc.DCConfig, "router_dc"), (mas.MASConfig, "mas_router")):
        for f in fields(cls):
            if f.name != "seed":
                defaults.setdefault(f.name, []).append(f"{kind} default {f.default}")
    types = {f.name: type(f.default) for cls in (dc.DCConfig, mas.MASConfig) for f in fields(cls)}
    for name, helps in defaults.items():
        p.add_argument("--" + name.replace("_", "-"), type=types[name], default=None, help="; ".join(helps))
    return p


ZERO_ALLOWED = ("sample_weight", "cost_rate", "early_stop_drop")


def config_from(args: argparse.Namespace, cls: type) -> object:
    given = {
        f.name: getattr(args, f.name) for f in fields(cls) if f.name != "seed" and getattr(args, f.name) is not None
    }
    for name, value in given.items():
        if value < 0 or (value == 0 and name not in ZERO_ALLOWED):
            floor = ">= 0" if name in ZERO_ALLOWED else "> 0"
            raise ValueError(f"--{name.replace('_', '-')}={value}: expected a number {floor}")
    return cls(**{**given, "seed": args.seed})


def main(argv: Sequence[str] | None = None, echo: bool = True) -> dict:
    """Train, save and return the summary (printed as JSON with `echo`; it is saved in the router file too)."""
    args = parser().parse_args(argv)
    for name in ("train_items", "val_items", "runs", "max_concurrency"):
        if getattr(args, name) < 1:
            raise SystemExit(f"--{name.replace('_', '-')} must be >= 1")
    import workers._registry  # noqa: F401  (registers the local and sim providers)

    if args.kind == "router_dc":
        summary = asyncio.run(train_router_dc(args, config_from(args, dc.DCConfig)))
    else:
        summary = asyncio.run(train_mas_router(args, config_from(args, mas.MASConfig)))
    if echo:
        print(json.dumps(summary, indent=1, default=str))
    return summary


if __name__ == "__main__":
    try:
        main()
    except ValueError as error:
        sys.exit(f"error: {error}")
