"""Per-question worker outcomes: each pool worker answers each training question `runs`
times; every answer is scored by the task's own check and cached on disk.

Cache: `$CONDUCTOR_BENCH_CACHE/routers/<pool>/outcomes.jsonl` (default root
~/.cache/conductor-bench), one JSON line per outcome keyed by (pool, worker slot and model,
task, item, run). A cached outcome is never requested again; a failed call is not cached,
so the next collection retries it. The same cache file type holds MASRouter's workflow
executions (`executions.jsonl`, keyed by the plan).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from inspect_ai.model import ChatMessageUser

from solvers.executor import StepRecord, Worker, run_step
from solvers.routers.data import Item, check_item

KEY_FIELDS = ("pool", "worker", "task", "item", "run")
KeyContext = Callable[[Item], AbstractContextManager]  # e.g. the simulated pool's answer key


def router_cache_dir(pool: str) -> Path:
    """Where a pool's outcomes and executions are cached."""
    from tasks.sources import cache_dir

    safe = re.sub(r"[^A-Za-z0-9._-]", "_", pool)[:100]
    return cache_dir() / "routers" / safe


class JsonlCache:
    """An append-only JSON-lines file read into a dict keyed by `fields`."""

    def __init__(self, path: Path, fields: Sequence[str] = KEY_FIELDS) -> None:
        self.path, self.fields = path, tuple(fields)
        self.records: dict[tuple, dict] = {}
        if path.exists():
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                    self.records[self.key(record)] = record
                except (ValueError, KeyError, TypeError) as error:
                    raise ValueError(
                        f"router cache {path} line {number} is not a cache record ({error}); "
                        "delete that line or the file to rebuild it"
                    ) from error

    def key(self, record: dict) -> tuple:
        return tuple(record[f] for f in self.fields)

    def get(self, **key: object) -> dict | None:
        return self.records.get(tuple(key[f] for f in self.fields))

    def put(self, record: dict) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a") as f:
            f.write(json.dumps(record, sort_keys=True) + "\n")
        self.records[self.key(record)] = record


def outcome_cache(pool: str) -> JsonlCache:
    return JsonlCache(router_cache_dir(pool) / "outcomes.jsonl")


def worker_key(slot: int, worker: Worker) -> str:
    """A worker's cache identity: its pool slot and model name."""
    return f"{slot}:{worker.name}"


@dataclass
class CollectReport:
    requested: int = 0
    cached: int = 0
    ran: int = 0
    failed: int = 0


async def collect_outcomes(
    items: Sequence[Item],
    workers_for: Callable[[Item, int], Sequence[Worker]],
    pool: str,
    cache: JsonlCache,
    runs: int = 5,
    max_concurrency: int = 4,
    step_timeout: float | None = None,
    key_context: KeyContext | None = None,
) -> CollectReport:
    """Fill the cache with every (worker, item, run) outcome it lacks, `max_concurrency` calls
    at a time. `workers_for(item, run)` gives the pool's workers for that item (its answer
    grammar) and run (its sampling seed); `key_context(item)` wraps each call (the simulated
    pool's answer key)."""
    report = CollectReport()
    limit = asyncio.Semaphore(max_concurrency)

    async def one(item: Item, slot: int, worker: Worker, run: int) -> None:
        step = StepRecord(0, slot, worker.name, "(the benchmark prompt alone)", [])
        async with limit:
            with key_context(item) if key_context else nullcontext():
                messages = [ChatMessageUser(content=item.prompt)]
                await run_step(step, messages, worker, worker.answer_constraint, step_timeout)
        if step.error:
            report.failed += 1
            return
        result = check_item(item, step.output)
        report.ran += 1
        cache.put(
            {
                "pool": pool,
                "worker": worker_key(slot, worker),
                "task": item.task,
                "item": item.item_id,
                "run": run,
                "correct": bool(result.correct),
                "answer": result.extracted,
                "input_tokens": step.usage.input_tokens,
                "output_tokens": step.usage.output_tokens,
                "cost": step.usage.cost,
            }  # fmt: skip
        )

    jobs = []
    for item in items:
        for run in range(runs):
            for slot, worker in enumerate(workers_for(item, run)):
                report.requested += 1
                key = {"pool": pool, "worker": worker_key(slot, worker), "task": item.task, "item": item.item_id}
                if cache.get(**key, run=run) is not None:
                    report.cached += 1
                else:
                    jobs.append(one(item, slot, worker, run))
    await asyncio.gather(*jobs)
    return report


def accuracy_table(
    items: Sequence[Item], worker_keys: Sequence[str], pool: str, cache: JsonlCache, runs: int
) -> tuple[np.ndarray, list[Item]]:
    """Per item, each worker's accuracy over its cached runs (the RouterDC score vector);
    items some worker has no cached run for are dropped. Returns (scores, kept items)."""
    rows, kept = [], []
    for item in items:
        row = []
        for key in worker_keys:
            found = [cache.get(pool=pool, worker=key, task=item.task, item=item.item_id, run=r) for r in range(runs)]
            marks = [bool(f["correct"]) for f in found if f is not None]
            row.append(sum(marks) / len(marks) if marks else None)
        if None not in row:
            rows.append(row)
            kept.append(item)
    return np.array(rows, dtype=float).reshape(len(rows), len(worker_keys)), kept
