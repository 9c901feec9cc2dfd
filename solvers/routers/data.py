"""Training and validation questions for the routers (never the test split).

The tasks with training data are the benchmarks that declare `router_samples` (tasks/catalog.py):
- math500, rlpr, mmlu: the task's own seeded split (`-T split=train` / `validation`); MMLU's
  only offline copy is its test set, cut by the split the conductor's training uses (evaluate a
  trained method with `-T split=test`).
- gsm8k: the GSM8K *train* file, cut by the same hash rule into train / validation.
Each item carries the bare question (router features), the benchmark prompt (what a single
worker is sent), the target and the name of the task's own pure check.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from inspect_ai.dataset import Sample

from scorers.checks import CheckResult, check_choice, check_math, check_numeric
from tasks.catalog import benchmark, benchmarks

ROUTER_SPLITS = ("train", "validation")


@dataclass(frozen=True)
class Item:
    """One question a router trains or validates on."""

    task: str
    item_id: str
    question: str
    prompt: str
    target: str
    check: str  # "math" | "numeric" | "choice"
    domain: str  # the simulated pool's domain: "math" | "mmlu" | "rlpr" | "lcb"
    choices: tuple[str, ...] | None = None


def check_item(item: Item, completion: str | None) -> CheckResult:
    """Score a completion with the task's own pure check."""
    if item.check == "choice":
        letters = "ABCDEFGHIJ"[: len(item.choices)] if item.choices else "ABCD"
        return check_choice(completion, item.target, letters)
    return {"math": check_math, "numeric": check_numeric}[item.check](completion or "", item.target)


def trainable() -> list[str]:
    """The tasks routers train on: each benchmark that declares its `router_samples`."""
    return [b.name for b in benchmarks() if b.router_samples is not None]


def check_tasks(tasks: list[str]) -> list[str]:
    unknown = [t for t in tasks if t not in trainable()]
    if unknown or not tasks:
        raise ValueError(
            f"no router training data for task(s) {unknown or tasks}; routers train on "
            f"{', '.join(trainable())} (their training splits; test items are never used)"
        )
    return tasks


def load_items(task: str, split: str, limit: int | None = None, seed: int = 0) -> list[Item]:
    """Up to `limit` items of `task`'s router `split` ("train" or "validation"), in a seeded
    order (the same items for the same arguments on every machine)."""
    check_tasks([task])
    if split not in ROUTER_SPLITS:
        raise ValueError(f"router split must be one of {ROUTER_SPLITS}, got {split!r} (the test split is held out)")
    declared = benchmark(task)
    assert declared is not None and declared.router_samples is not None  # check_tasks
    samples = sorted(declared.router_samples(split), key=lambda s: str(s.id))
    random.Random(f"{seed}/{task}/{split}").shuffle(samples)
    return [_item(task, s, declared.answer, declared.domain) for s in samples[:limit]]


def _item(task: str, sample: Sample, check: str, domain: str) -> Item:
    metadata = sample.metadata or {}
    prompt = sample.input if isinstance(sample.input, str) else sample.input[-1].text
    choices = tuple(metadata["choices"]) if metadata.get("choices") else None
    target = sample.target if isinstance(sample.target, str) else sample.target[0]
    return Item(task, str(sample.id), str(metadata.get("question") or prompt), prompt, target, check, domain, choices)
