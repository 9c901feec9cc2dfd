"""RLPR: general-domain reasoning questions with reference answers (the Conductor paper's
fourth in-domain benchmark).

Yu et al., "RLPR: Extrapolating RLVR to General Domains without Verifiers", arXiv:2506.18254.
The data is RLPR's training set, openbmb/RLPR-Train-Dataset (about 77.7k WebInstruct-verified
questions filtered with GPT-4.1); the Conductor paper split it into 46,620 train and 15,540
test items (60% / 20%) but did not publish the split. This task applies this project's
seeded 60/20/20 train/validation/test split (tasks/splits.py, ranked by a hash of the
question text): comparable to the paper's numbers in expectation only.

    inspect eval tasks/rlpr.py --limit 200 --model-role grader=openai/gpt-4.1
    inspect eval tasks/rlpr.py -T data_file=my_rlpr.jsonl -T judge=rule

Grading follows RLPR's own evaluation (scorers/rlpr.py): the final answer is checked
against the reference by rule first, then by a judge model bound to the `grader` role.
Records: RLPR's verl format (`prompt` chat messages, `reward_model.ground_truth`,
`ability`) or flat `question`/`problem` + `answer` fields.
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.solver import generate

from scorers.rlpr import check_mode, rlpr_grader
from tasks.catalog import RLPR, Benchmark, register
from tasks.common import build_dataset, check_filter, checked_task, norm_name, parse_filter
from tasks.splits import check_split, hash_split

BENCHMARK = register(
    Benchmark(
        "rlpr",
        "rlpr",
        domain="rlpr",
        answer="math",
        sources=RLPR,
        paper_column="RLPR",
        router_samples=lambda split: rlpr(split=split).dataset,
    )
)
SPLIT_SALT = "conductor-bench/rlpr-split/v1:"
INSTRUCTION = (
    "Think step by step, then give your final answer on the last line in the form "
    '"ANSWER: <answer>", stating only the final answer (a value with its unit, an '
    "expression, or a short phrase)."
)


class RecordError(ValueError):
    """An RLPR record without a usable question or reference answer."""


def record_to_sample(record: dict[str, Any]) -> Sample:
    """An RLPR row (verl format or flat question/answer) -> Sample."""
    question, answer = _question(record), _answer(record)
    if not question or not answer:
        missing = "question" if not question else "reference answer"
        raise RecordError(
            f"rlpr record has no {missing} (fields: {', '.join(sorted(map(str, record)))}); "
            "give `prompt` (chat messages) and `reward_model.ground_truth`, or `question` and `answer`"
        )
    extra = record.get("extra_info") if isinstance(record.get("extra_info"), dict) else {}
    index = extra.get("index", record.get("id"))
    return Sample(
        id=f"rlpr_{index}" if index is not None else None,
        input=f"{question}\n\n{INSTRUCTION}",
        target=answer,
        metadata={"question": question, "ability": str(record.get("ability") or "")},
    )


def _question(record: dict[str, Any]) -> str:
    for key in ("question", "problem"):
        if isinstance(record.get(key), str) and record[key].strip():
            return record[key].strip()
    prompt = record.get("prompt")
    if isinstance(prompt, str):
        return prompt.strip()
    if isinstance(prompt, list):  # chat messages: the last user turn holds the question
        users = [m.get("content") for m in prompt if isinstance(m, dict) and m.get("role") == "user"]
        if users and isinstance(users[-1], str):
            return users[-1].strip()
    return ""


def _answer(record: dict[str, Any]) -> str:
    reward = record.get("reward_model")
    for value in (
        record.get("answer"),
        reward.get("ground_truth") if isinstance(reward, dict) else None,
        record.get("ground_truth"),
    ):
        if value is not None and str(value).strip():
            return str(value).strip()
    return ""


@task
@checked_task
def rlpr(
    split: str | None = None,
    judge: str = "auto",
    ability: str | None = None,
    data_file: str | None = None,
    source: str | None = None,
    shuffle: bool = False,
    seed: int = 0,
) -> Task:
    """RLPR.

    Args:
        split: "test" (default for the hub data), "train", "validation" or "all": this
            project's seeded 60/20/20 split. A user `data_file` is taken whole unless a
            split is named.
        judge: "auto" (rule, then the `grader` role if bound), "judge" (the judge decides
            every answer, RLPR's protocol; needs --model-role grader=...) or "rule".
        ability: keep only these subjects (the records' `ability`), comma separated.
        data_file: a local jsonl/json/csv file of RLPR records.
        source: force a declared source kind ("hub").
        shuffle: shuffle sample order (with `seed`).
        seed: shuffle seed.
    """
    chosen = split or ("all" if data_file else "test")
    check_split("rlpr", chosen)
    grader = rlpr_grader(check_mode(judge))
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
        splits = hash_split((s.metadata["question"] for s in dataset), SPLIT_SALT)
        dataset = dataset.filter(lambda s: splits[s.metadata["question"]] == chosen)
    wanted = parse_filter(ability)  # after the split, so filters never move items across it
    if wanted:
        check_filter("ability", wanted, "rlpr", list(dataset))
        dataset = dataset.filter(lambda s: norm_name(s.metadata["ability"]) in wanted)
    return Task(dataset=dataset, solver=generate(), scorer=grader)
