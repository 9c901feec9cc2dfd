"""Training and validation questions for the routers (never the test split).

Tasks with training data and where it comes from:
- math500: the task's own seeded split (`-T split=train` / `validation`; 300 / 100 items).
- rlpr: the task's own seeded split (hub data or a local file).
- gsm8k: the GSM8K *train* file (7473 items; the task evaluates the 1319 test items), cut
  by the same hash rule into train / validation (its "test" fifth is left unused).
- mmlu: the only offline copy is MMLU's test set; the train / validation parts of the
  task's seeded split (`-T split=...`), the one the conductor's training uses. Evaluate a
  trained method with `-T split=test`.
Each item carries the bare question (router features), the benchmark prompt (what a single
worker is sent), the target and the name of the task's own pure check.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from inspect_ai.dataset import Sample

from scorers.checks import CheckResult, check_choice, check_math, check_numeric

ROUTER_SPLITS = ("train", "validation")
GSM8K_TRAIN_SALT = "conductor-bench/gsm8k-train-router-split/v1:"


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


def _math500(split: str) -> list[Sample]:
    from tasks.math500 import math500

    return list(math500(split=split).dataset)


def _rlpr(split: str) -> list[Sample]:
    from tasks.rlpr import rlpr

    return list(rlpr(split=split).dataset)


def _mmlu(split: str) -> list[Sample]:
    from tasks.mmlu import mmlu

    return list(mmlu(split=split).dataset)


def _gsm8k(split: str) -> list[Sample]:
    from tasks.catalog import GSM8K_TRAIN
    from tasks.common import build_dataset
    from tasks.gsm8k import record_to_sample
    from tasks.splits import hash_split

    samples = list(build_dataset("gsm8k_train", GSM8K_TRAIN, record_to_sample))
    cut = hash_split((s.metadata["question"] for s in samples), GSM8K_TRAIN_SALT)
    return [s for s in samples if cut[s.metadata["question"]] == split]


# task -> (sample loader for "train" | "validation", check name, domain)
TRAINING_DATA: dict[str, tuple[Callable[[str], list[Sample]], str, str]] = {
    "math500": (_math500, "math", "math"),
    "gsm8k": (_gsm8k, "numeric", "math"),
    "rlpr": (_rlpr, "math", "rlpr"),
    "mmlu": (_mmlu, "choice", "mmlu"),
}


def check_tasks(tasks: list[str]) -> list[str]:
    unknown = [t for t in tasks if t not in TRAINING_DATA]
    if unknown or not tasks:
        raise ValueError(
            f"no router training data for task(s) {unknown or tasks}; routers train on "
            f"{', '.join(TRAINING_DATA)} (their training splits; test items are never used)"
        )
    return tasks


def load_items(task: str, split: str, limit: int | None = None, seed: int = 0) -> list[Item]:
    """Up to `limit` items of `task`'s router `split` ("train" or "validation"), in a seeded
    order (the same items for the same arguments on every machine)."""
    check_tasks([task])
    if split not in ROUTER_SPLITS:
        raise ValueError(f"router split must be one of {ROUTER_SPLITS}, got {split!r} (the test split is held out)")
    loader, check, domain = TRAINING_DATA[task]
    samples = sorted(loader(split), key=lambda s: str(s.id))
    random.Random(f"{seed}/{task}/{split}").shuffle(samples)
    return [_item(task, s, check, domain) for s in samples[:limit]]


def _item(task: str, sample: Sample, check: str, domain: str) -> Item:
    metadata = sample.metadata or {}
    prompt = sample.input if isinstance(sample.input, str) else sample.input[-1].text
    choices = tuple(metadata["choices"]) if metadata.get("choices") else None
    target = sample.target if isinstance(sample.target, str) else sample.target[0]
    return Item(task, str(sample.id), str(metadata.get("question") or prompt), prompt, target, check, domain, choices)
