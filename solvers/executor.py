"""Run a validated workflow on Inspect models as a DAG.

A step waits only for the steps it can see, so independent steps run concurrently; the
last step's response is the answer. What a step is shown (`question_mode`): "first" (the
paper's) gives the first step the question and its subtask, and every later step the
(subtask, response) turns of the steps it sees (step 0's turn with the question in it),
then its own subtask; "every" (the project's earlier behaviour) puts the question in the
first turn of every step's conversation (see `solvers.prompts.step_turns`).

A worker error or timeout becomes a recorded failed step (policy "continue": later steps
go on without it; "fail": the sample fails with a `WorkerError`), never a crashed eval.
Every step is recorded with its worker, subtask, what it was shown (`visible`,
`shown_previous`: taken from the very turns its messages are built from), output, tokens,
cost, latency and error, and runs in its own transcript span.
Steps naming the conductor itself are delegated to `recurse` (a nested round, which gets
the response of the step before it); a nested round without an answer falls back to that
response and the step records the fallback.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Literal

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageUser,
    GenerateConfig,
    Model,
    ModelOutput,
)
from inspect_ai.util import LimitExceededError, span

from solvers.grammar import Constraint
from solvers.prompts import QuestionMode, step_turns
from solvers.workflow import Workflow
from workers.clean_errors import guard_errors
from workers.client_secrets import client_settings
from workers.pools import Price
from workers.provider_errors import describe_error, describe_length_refusal
from workers.provider_settings import effective_config, provider_changes

ErrorPolicy = Literal["continue", "fail"]
logger = logging.getLogger(__name__)
RECURSION_BUDGET = "recursion_budget"  # a conductor step refused: the sample's recursive calls are spent


@dataclass(frozen=True)
class Worker:
    """A pool member ready to call: the model and what it costs."""

    model: Model
    name: str
    description: str = ""
    price: Price | None = None
    answer_constraint: Constraint | None = None  # llama.cpp grammar for a final step, if supported


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = 0.0

    def add(self, other: Usage) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cost = None if self.cost is None or other.cost is None else self.cost + other.cost


@dataclass
class StepRecord:
    """What one workflow step did. `visible`: the steps of its round whose turns it was shown
    (for a conductor step, the one its recursion turn shows); `shown_previous`: it was also
    shown the previous response (a nested round's "all" step, or its first conductor step)."""

    index: int
    worker: int
    model: str
    subtask: str
    visible: list[int]
    output: str = ""
    usage: Usage = field(default_factory=Usage)
    latency: float = 0.0
    error: str | None = None
    round: RoundRecord | None = None  # set when the step was a nested conductor round
    config: dict | None = None  # the worker's generate config as its provider receives it
    fallback: str | None = None  # why a conductor step kept the previous response
    shown_previous: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def recursed(self) -> bool:
        """A conductor step whose nested round called the conductor (not refused by the budget)."""
        return self.round is not None and not self.round.refused


@dataclass
class RoundRecord:
    """One conductor round: its attempts (a format retry adds one), the parsed workflow and
    the executed steps. `conversation` holds, for a nested round, the turns that continue
    the conductor's conversation (its earlier completion, then the recursion turn)."""

    depth: int
    conductor: str | None  # None: no conductor call (a baseline's fixed workflow)
    completion: str = ""
    workflow: dict | None = None
    rejection: str | None = None
    rejection_message: str | None = None
    steps: list[StepRecord] = field(default_factory=list)
    answer: str | None = None
    usage: Usage = field(default_factory=Usage)  # the conductor's own generations, all attempts
    latency: float = 0.0
    attempts: list[dict] = field(default_factory=list)  # every conductor generation of this round
    conversation: list[dict] = field(default_factory=list)

    @property
    def refused(self) -> bool:
        """A conductor step's round that never called the conductor: the recursion budget was spent."""
        return self.rejection == RECURSION_BUDGET

    def rounds(self) -> Iterator[RoundRecord]:
        """This round and every nested round (refused ones included), depth first."""
        yield self
        for step in self.steps:
            if step.round:
                yield from step.round.rounds()

    def worker_usage(self) -> Usage:
        """Every worker step, nested rounds included."""
        total = Usage()
        for step in self.steps:
            total.add(step.round.worker_usage() if step.round else step.usage)
        return total

    def conductor_usage(self) -> Usage:
        """Every conductor generation, nested rounds and format retries included."""
        total = Usage(self.usage.input_tokens, self.usage.output_tokens, self.usage.cost)
        for step in self.steps:
            if step.round:
                total.add(step.round.conductor_usage())
        return total

    def total_usage(self) -> Usage:
        """Conductor plus every step, nested rounds included."""
        total = self.conductor_usage()
        total.add(self.worker_usage())
        return total

    def agent_calls(self) -> int:
        """Worker calls (the paper's agent calls), nested rounds included."""
        return sum(s.round.agent_calls() if s.round else 1 for s in self.steps)

    def conductor_calls(self) -> int:
        """Conductor generations, nested rounds and format retries included."""
        own = len(self.attempts) if self.attempts else int(self.conductor is not None)
        return own + sum(s.round.conductor_calls() for s in self.steps if s.round)

    def calls(self) -> int:
        """All model calls: conductor and workers."""
        return self.agent_calls() + self.conductor_calls()

    def to_dict(self) -> dict:
        return asdict(self)


class WorkerError(RuntimeError):
    """A workflow step failed and the error policy is "fail"."""


Turn = tuple[str, str, bool]  # (subtask, response, whether its prompt carried the question)
Recurse = Callable[[Turn | None], Awaitable[RoundRecord]]


async def execute_workflow(
    workflow: Workflow,
    question: str,
    workers: Sequence[Worker],
    *,
    on_error: ErrorPolicy = "continue",
    step_timeout: float | None = None,
    recurse: Recurse | None = None,
    concurrent: bool = True,
    question_mode: QuestionMode = "first",
    prior: Turn | None = None,
) -> list[StepRecord]:
    """Run every step as soon as the steps it sees are done; return the step records.

    `concurrent=False` runs the steps one after another in list order, as the paper does
    (same results, higher latency). `prior` (a recursive round) is the previous final
    message, also shown to the steps whose access is "all".
    Worker ids equal to `len(workers)` are the conductor itself: such a step waits for the
    step before it and calls `recurse` with that step's turn.
    """
    records = [
        StepRecord(i, w, _worker_name(w, workers), workflow.subtasks[i], []) for i, w in enumerate(workflow.model_ids)
    ]
    tasks: list[asyncio.Task[None]] = []
    last = len(workflow) - 1

    def turn(j: int) -> Turn:
        return (records[j].subtask, records[j].output, j == 0)

    async def run(i: int) -> None:
        record = records[i]
        recursive = record.worker == len(workers)
        access = workflow.visible(i)
        waits_for = set(access)
        if i and (recursive or not concurrent):
            waits_for.add(i - 1)
        await asyncio.gather(*(tasks[j] for j in sorted(waits_for)))
        failed = [j for j in access if not records[j].ok]
        if failed and on_error == "fail":
            record.error = f"skipped: it sees failed step(s) {failed}"
            return
        sees_prior = prior is not None and (i == 0 if recursive else workflow.sees_all(i))
        sources = shown_sources(i, access, [r.ok for r in records], recursive=recursive, sees_prior=sees_prior)
        shown = [turn(j) if j is not None else prior for j in sources]
        record.visible = [j for j in sources if j is not None]
        record.shown_previous = None in sources
        async with span(f"step {i}: Model {record.worker}", type="workflow_step"):
            if recursive:
                await run_recursion(record, shown[0] if shown else None, recurse)
                return
            messages = step_messages(question, shown, record.subtask, i == 0, question_mode)
            worker = workers[record.worker]
            constraint = worker.answer_constraint if i == last else None
            await run_step(record, messages, worker, constraint, step_timeout)

    for i in range(len(workflow)):
        tasks.append(asyncio.create_task(run(i)))
    await asyncio.gather(*tasks)
    if on_error == "fail" and (failed := [r for r in records if not r.ok]):
        raise WorkerError(f"workflow step {failed[0].index} ({failed[0].model}) failed: {failed[0].error}")
    return records


def shown_sources(
    i: int, access: Sequence[int], ok: Sequence[bool], *, recursive: bool, sees_prior: bool
) -> list[int | None]:
    """Where the turns step `i` is shown come from, in order: indices of its round's steps, None
    for the previous response. A conductor step's recursion turn shows one response: the step
    before it (a round's first step: the previous response); a failed step is never shown."""
    if recursive:
        return ([i - 1] if ok[i - 1] else []) if i else ([None] if sees_prior else [])
    return [None] * sees_prior + [j for j in access if ok[j]]


async def run_step(
    record: StepRecord,
    messages: list[ChatMessage],
    worker: Worker,
    constraint: Constraint | None,
    step_timeout: float | None,
) -> None:
    """Call one worker and record its output, usage, latency and any error."""
    config = constrained_config(worker.model, constraint)
    record.config = worker_config(worker)
    start = time.perf_counter()
    try:
        output = await asyncio.wait_for(guard_errors(worker.model).generate(messages, config=config), step_timeout)
    except LimitExceededError:
        raise
    except TimeoutError:
        record.error = f"timed out after {step_timeout} s (raise -S step_timeout or lower the worker's max_tokens)"
    except Exception as error:  # a worker's failure is data, not a crash
        record.error = describe_error(error, worker.name)
    else:
        record.output = output.completion
        record.usage = output_usage(output, worker.price)
        if output.error:
            record.error = output.error
        elif output.stop_reason == "model_length" and output.usage is None:  # refused, not answered
            record.output, record.error = "", describe_length_refusal(worker.name, output.completion)
    record.latency = time.perf_counter() - start


async def run_recursion(record: StepRecord, previous: Turn | None, recurse: Recurse | None) -> None:
    """A conductor step: a nested round; without an answer it keeps the previous response."""
    if recurse is None:
        record.error = "the conductor was named as a worker but recursion is disabled"
        return
    start = time.perf_counter()
    nested = await recurse(previous)
    record.round = nested
    record.latency = time.perf_counter() - start
    if nested.answer is not None:
        record.output = nested.answer
        return
    why = nested.rejection or "its last step failed"
    if previous is None:
        record.error = f"nested round gave no answer ({why}) and there is no previous response to keep"
        return
    record.output = previous[1]
    record.fallback = f"nested round gave no answer ({why}); the previous response is kept"


def step_messages(
    question: str,
    seen: Sequence[Turn],
    subtask: str,
    first: bool = True,
    question_mode: QuestionMode = "first",
) -> list[ChatMessage]:
    """The chat messages a step's worker receives (`first`: it is its round's first step)."""
    if question_mode == "every":
        # the earlier behaviour: the first turn of the conversation carries the question
        seen = [(s, r, k == 0) for k, (s, r, _) in enumerate(seen)]
        first = not seen
    return [
        ChatMessageUser(content=text) if role == "user" else ChatMessageAssistant(content=text)
        for role, text in step_turns(question, seen, subtask, first)
    ]


_warned: set[tuple[str, str]] = set()


def worker_config(worker: Worker) -> dict:
    """The worker's generate config as its provider receives it (`workers.provider_settings`),
    with the headers and body fields its client sends (`workers.client_secrets`; records redact
    them); a setting the provider drops is logged once per worker and process."""
    config = worker.model.config.model_dump(exclude_none=True)
    for change in provider_changes(worker.name, config):
        if (worker.name, change.field) not in _warned:
            _warned.add((worker.name, change.field))
            logger.warning(f"worker {worker.name}: pool setting {change.describe()}")
    return {**effective_config(worker.name, config), **client_settings(worker.model.model_args, config)}


def constrained_config(model: Model, constraint: Constraint | None) -> GenerateConfig:
    """A per-call config asking a llama.cpp server for a grammar (keeping the model's
    extra_body), with a token budget large enough that the output is never cut short."""
    if constraint is None:
        return GenerateConfig()
    return GenerateConfig(
        extra_body={**(model.config.extra_body or {}), "grammar": constraint.grammar},
        max_tokens=max(constraint.max_tokens, model.config.max_tokens or 0),
    )


def output_usage(output: ModelOutput, price: Price | None) -> Usage:
    """Tokens and cost of one generation (cost None when the price is unknown). Input tokens
    are the whole prompt: Inspect reports prompt-cache reads and writes apart from
    `input_tokens` (llama.cpp's prompt cache, OpenAI's cached tokens), so they are added back
    and priced as input (an upper bound where a provider discounts cache reads)."""
    usage = output.usage
    cached = (usage.input_tokens_cache_read or 0) + (usage.input_tokens_cache_write or 0) if usage else 0
    tokens_in = usage.input_tokens + cached if usage else 0
    tokens_out = usage.output_tokens if usage else 0
    return Usage(tokens_in, tokens_out, price.cost(tokens_in, tokens_out) if price else None)


def final_answer(records: Sequence[StepRecord]) -> str | None:
    """The last step's response, or None when it failed."""
    return records[-1].output if records and records[-1].ok else None


def _worker_name(worker: int, workers: Sequence[Worker]) -> str:
    return workers[worker].name if worker < len(workers) else "conductor"
