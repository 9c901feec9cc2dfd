"""BigCodeBench: 1140 practical Python tasks with library calls (hard subset: 148).

Zhuo et al., BigCodeBench: Benchmarking Code Generation with Diverse Function Calls
and Complex Instructions, arXiv:2406.15877. Prompts, sanitizing and the pass rule
follow the official harness (see scorers/code_bcb.py): pass = the task's unittest
`TestCases` run has no failure and no error.

    inspect eval tasks/bigcodebench.py --model openai/gpt-5     # complete, hard (148): the paper's set
    inspect eval tasks/bigcodebench.py -T split=instruct -T subset=full
    inspect eval tasks/bigcodebench.py -T prefill=true          # official response prefill (open models)
    inspect eval tasks/bigcodebench.py -T calibrate=true        # + the `sanitize --calibrate` script's rule
    inspect eval tasks/bigcodebench.py -T data_file=bcb.jsonl -T sandbox=docker

Many tasks import third-party libraries (pandas, numpy, matplotlib, requests,
sklearn, ...). The default `bwrap` sandbox sees only what the harness's Python has
installed; a missing library fails the task with the reason "environment: missing
module X" (counted as a fail, as officially, but visible in the score explanation and
metadata). For faithful numbers use the docker sandbox and its BigCodeBench image.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageUser
from inspect_ai.solver import generate

import sandboxes.inspect_bwrap  # noqa: F401 (registers the `bwrap` sandbox type)
from sandboxes.compose import task_sandbox
from scorers.code_bcb import DEFAULT_TIMEOUT, RESPONSE_PREFILL, BCBProblem, build_prompt, check_split, check_subset
from scorers.code_scorers import bigcodebench_scorer
from tasks.catalog import BIGCODEBENCH, BIGCODEBENCH_HARD, BIGCODEBENCH_VERSION, Benchmark, register
from tasks.common import build_dataset, checked_task
from tasks.sources import HubSource, Source


def sources_for(subset: str = "hard", version: str = BIGCODEBENCH_VERSION) -> tuple[Source, ...]:
    """The declared sources of a subset; `version` picks the hub split (v0.1.0_hf ... v0.1.4)."""
    declared = BIGCODEBENCH_HARD if check_subset(subset) == "hard" else BIGCODEBENCH
    if version == BIGCODEBENCH_VERSION:
        return declared
    return tuple(replace(s, split=version) if isinstance(s, HubSource) else s for s in declared)


BENCHMARK = register(
    Benchmark("bigcodebench", "bigcodebench", domain="lcb", answer="code", sources=sources_for(), paper_column="BCB")
)


def record_to_sample(
    record: dict[str, Any], split: str = "complete", subset: str = "hard", prefill: bool = False
) -> Sample:
    """An official-format row -> Sample (input: the official prompt of `split`).

    With `prefill`, the input ends with the official assistant prefill (a sentence and
    an opened python fence) that the model continues, as the official harness does for
    open models; the scorer sanitizes the continuation. The target is the reference
    program (complete_prompt + canonical_solution), for reading only; the scorer runs
    the task's tests, rebuilt from the metadata.
    """
    problem = BCBProblem.from_record(record)
    prompt = build_prompt(problem, split)
    messages: str | list[ChatMessage] = prompt
    if prefill:
        messages = [ChatMessageUser(content=prompt), ChatMessageAssistant(content=RESPONSE_PREFILL)]
    return Sample(
        id=problem.task_id,
        input=messages,
        target=problem.reference_program,
        metadata={**problem.to_metadata(), "split": split, "subset": subset, "answer_format": "code"},
    )


@task
@checked_task
def bigcodebench(
    split: str = "complete",
    subset: str = "hard",
    data_file: str | None = None,
    source: str | None = None,
    version: str = BIGCODEBENCH_VERSION,
    timeout: float = DEFAULT_TIMEOUT,
    sandbox: str = "bwrap",
    calibrate: bool = False,
    prefill: bool = False,
    shuffle: bool = False,
    seed: int = 0,
) -> Task:
    """BigCodeBench.

    Args:
        split: "complete" (continue the code prompt) or "instruct" (natural-language
            instruction ending with the code to start from).
        subset: "hard" (148 tasks, the default: the paper's test set) or "full"
            (1140). Picks the hub dataset; a `data_file` is used as given.
        data_file: a local jsonl/json file in the official format (task_id,
            complete_prompt, instruct_prompt, code_prompt, test, entry_point, ...).
        source: force a declared source kind ("hub").
        version: dataset version (a split of the hub dataset), default v0.1.4.
        timeout: per-task time limit in seconds (official default 240).
        sandbox: Inspect sandbox type the tests run in ("bwrap", "docker", ...).
        calibrate: also apply the separate `sanitize --calibrate` script's rule (a fenced
            body-only answer gets the prompt inserted). Off by default: the official
            generate-then-evaluate pipeline (the paper's and leaderboard's numbers) sanitizes
            the answer as is; the code prompt and a `pass` stub go first either way.
        prefill: end the input with the official assistant prefill (for open models
            served so that they continue it; off by default).
        shuffle: shuffle sample order (with `seed`).
        seed: shuffle seed.
    """
    check_split(split)
    check_subset(subset)
    dataset = build_dataset(
        f"bigcodebench_{subset}",
        sources_for(subset, version),
        lambda r: record_to_sample(r, split=split, subset=subset, prefill=prefill),
        data_file=data_file,
        source=source,
        shuffle=shuffle,
        seed=seed,
    )
    return Task(
        dataset=dataset,
        solver=generate(),
        scorer=bigcodebench_scorer(timeout=timeout, calibrate=calibrate),
        sandbox=task_sandbox(sandbox, "compose.bigcodebench.yaml"),
    )
