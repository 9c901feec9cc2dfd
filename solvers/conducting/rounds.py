"""A conductor round: the conductor writes a workflow, the workers run it, a recursive call
writes a nested round. `conduct` generates and runs; `run_completion` runs a completion generated
elsewhere (a training rollout); `continue_round` is the conductor called as a worker."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageUser, GenerateConfig, Model
from inspect_ai.util import LimitExceededError, span

from solvers import prompts
from solvers.conducting.settings import Settings
from solvers.executor import (
    RECURSION_BUDGET,
    RoundRecord,
    Turn,
    Usage,
    Worker,
    constrained_config,
    execute_workflow,
    final_answer,
    output_usage,
)
from solvers.grammar import Constraint, answer_constraint, workflow_constraint
from solvers.prompts import QuestionMode
from solvers.team import CONDUCTOR_MAX_TOKENS, Conductor
from solvers.workflow import ParseResult, Workflow, parse_workflow
from workers.clean_errors import guard_errors

# grammar bounds for constrained (local) models; their exact worst case sets max_tokens
SUBTASK_CHARS = 160
ANSWER_TEXT_CHARS = 200


@dataclass
class Budget:
    """Recursive conductor calls left for one sample."""

    left: int


CONDUCTOR_ERROR = "conductor_error"  # the conductor's own generate call raised
NO_SUBTASK = "Solve the question."  # -S subtasks=fixed: every step's subtask
NO_SUBTASK_RESTATED = "Solve this question:\n\n{question}"  # the same, for a step that cannot see the question


def conductor_messages(
    question: str, descriptions: Sequence[str], settings: Settings, self_id: int | None = None
) -> list[ChatMessage]:
    """The exact conductor prompt of a root round (one user message); `self_id` offers the
    conductor itself as Model `self_id` (recursion). Training builds its prompts with it."""
    text = prompts.conductor_prompt(
        question,
        descriptions,
        settings.max_steps,
        self_id=self_id,
        few_shot=settings.few_shot,
        access=settings.access,
        question_mode=settings.question,
    )
    return [ChatMessageUser(content=text)]


def offers_conductor(settings: Settings, depth: int, budget_left: int) -> bool:
    """Whether a round at `depth` offers the conductor as a worker (recursion left)."""
    return depth < settings.max_depth and budget_left > 0


async def conduct(
    question: str,
    lead: Conductor,
    workers: Sequence[Worker],
    settings: Settings,
    depth: int = 0,
    budget: Budget | None = None,
    conversation: list[ChatMessage] | None = None,
    previous: Turn | None = None,
) -> RoundRecord:
    """One conductor round: generate a workflow (resampled on a format failure up to
    `format_retries` times), then `run_completion`. A nested round (depth > 0) continues the
    conductor's `conversation`; `previous` is the turn of the step before the call. A failing
    conductor call is the named rejection `conductor_error`, never an exception."""
    budget = budget if budget is not None else Budget(settings.max_recursions)
    offers_self = offers_conductor(settings, depth, budget.left)
    offered = len(workers) + offers_self
    if conversation is None:
        conversation = conductor_messages(
            question, [w.description for w in workers], settings, len(workers) if offers_self else None
        )
    nested = previous is not None or depth > 0
    record = RoundRecord(depth=depth, conductor=lead.name)
    async with span(f"conductor round {depth}", type="conductor_round"):
        constraint = (
            workflow_constraint(
                offered,
                settings.max_steps,
                max_subtask_chars=SUBTASK_CHARS,
                max_reasoning_chars=settings.reasoning_chars,
                allow_empty=nested,
                access=settings.access,
            )
            if lead.grammar
            else None
        )
        config = conductor_config(lead.model, constraint)
        for _ in range(1 + settings.format_retries):
            start = time.perf_counter()
            try:
                output = await guard_errors(lead.model).generate(conversation, config=config)
            except LimitExceededError:
                raise
            except Exception as error:  # a dead conductor is a rejected round, not a crashed sample
                return _conductor_failed(record, conversation, error, time.perf_counter() - start)
            latency = time.perf_counter() - start
            usage = output_usage(output, lead.price)
            parsed = _parse(output.completion, offered, settings, nested)
            record.attempts.append(_attempt(output.completion, parsed, usage, latency))
            record.usage.add(usage)
            record.latency += latency
            if parsed.ok:
                break
        return await run_completion(
            output.completion,
            question,
            workers,
            settings,
            lead,
            depth=depth,
            budget=budget,
            conversation=conversation,
            previous=previous,
            record=record,
        )


async def run_completion(
    completion: str,
    question: str,
    workers: Sequence[Worker],
    settings: Settings,
    lead: Conductor | None = None,
    *,
    depth: int = 0,
    budget: Budget | None = None,
    conversation: list[ChatMessage] | None = None,
    previous: Turn | None = None,
    record: RoundRecord | None = None,
    conductor_name: str = "policy",
) -> RoundRecord:
    """Everything after the conductor's generation: parse and validate `completion`, run the
    workflow on `workers`, recurse, pick the answer. The `conductor` solver's round is
    generation + this; the training reward calls it with a rollout's completion.

    Without `lead` (a completion generated elsewhere, e.g. a training rollout) the conductor
    is not offered as a worker, so naming it is `unknown_worker`. `conversation` is the
    conductor's context (default: `conductor_messages`), continued by a recursive call;
    `record` is a round already holding this completion's generation attempts (the solver's).
    A worker failure is a recorded failed step, never an exception (`on_error="continue"`).
    """
    budget = budget if budget is not None else Budget(settings.max_recursions)
    offers_self = lead is not None and offers_conductor(settings, depth, budget.left)
    nested = previous is not None or depth > 0
    if record is None:
        record = RoundRecord(depth=depth, conductor=lead.name if lead else conductor_name)
        parsed = _parse(completion, len(workers) + offers_self, settings, nested)
        record.attempts.append(_attempt(completion, parsed, None, 0.0))
    else:
        parsed = _parse(completion, len(workers) + offers_self, settings, nested)
    if depth and conversation is not None:
        record.conversation = [{"role": m.role, "content": m.text} for m in conversation[1:]]
    record.completion = completion
    if not parsed.ok:
        record.rejection = parsed.reason
        record.rejection_message = parsed.error.message if parsed.error else None
        return record
    workflow = parsed.workflow
    record.workflow = workflow.to_dict()
    if workflow.keeps_answer:
        record.answer = previous[1] if previous else None
        return record
    if settings.subtasks == "fixed":
        workflow = fixed_subtasks(workflow, question, settings.question)
    if conversation is None:
        self_id = len(workers) if offers_self else None
        conversation = conductor_messages(question, [w.description for w in workers], settings, self_id)

    async def recurse(before: Turn | None) -> RoundRecord:
        assert lead is not None  # only offered with a lead
        return await continue_round(question, lead, workers, settings, conversation, completion, before, depth, budget)

    record.steps = await execute_workflow(
        workflow,
        question,
        workers,
        on_error=settings.on_error,
        step_timeout=settings.step_timeout,
        recurse=recurse if offers_self else None,
        concurrent=settings.concurrent,
        question_mode=settings.question,
        prior=previous,
    )
    record.answer = final_answer(record.steps)
    return record


async def continue_round(
    question: str,
    lead: Conductor,
    workers: Sequence[Worker],
    settings: Settings,
    conversation: list[ChatMessage],
    completion: str,
    before: Turn | None,
    depth: int,
    budget: Budget,
) -> RoundRecord:
    """The conductor called as a worker by a round at `depth`: its `conversation` continues
    with its own `completion` and the recursion turn showing `before`'s response, and it
    writes a nested round (depth + 1). Spends one recursive call of `budget`."""
    if budget.left <= 0:
        return RoundRecord(
            depth=depth + 1,
            conductor=None,
            rejection=RECURSION_BUDGET,
            rejection_message=f"-S max_recursions={settings.max_recursions} recursive calls already made",
        )
    budget.left -= 1
    can_recurse = offers_conductor(settings, depth + 1, budget.left)
    turn = prompts.recursion_turn(before[1] if before else None, settings.max_steps, can_recurse, len(workers))
    tail = [ChatMessageAssistant(content=completion), ChatMessageUser(content=turn)]
    return await conduct(question, lead, workers, settings, depth + 1, budget, [*conversation, *tail], before)


def fixed_subtasks(workflow: Workflow, question: str, question_mode: QuestionMode) -> Workflow:
    """The "no subtasks" ablation (-S subtasks=fixed): every step gets the same fixed
    instruction; a step that would not see the question (question="first": not the first
    step of its round and not reading step 0) gets it restated in that instruction."""

    def sees_question(i: int) -> bool:
        return question_mode == "every" or i == 0 or 0 in workflow.visible(i)

    texts = tuple(
        NO_SUBTASK if sees_question(i) else NO_SUBTASK_RESTATED.format(question=question) for i in range(len(workflow))
    )
    return replace(workflow, subtasks=texts)


def _parse(completion: str, offered: int, settings: Settings, nested: bool) -> ParseResult:
    return parse_workflow(completion, range(offered), settings.max_steps, nested, settings.access)


def _attempt(completion: str, parsed: ParseResult, usage: Usage | None, latency: float) -> dict:
    """One conductor generation as recorded in `RoundRecord.attempts`."""
    return {
        "completion": completion,
        "rejection": parsed.reason,
        "rejection_message": parsed.error.message if parsed.error else None,
        "input_tokens": usage.input_tokens if usage else 0,
        "output_tokens": usage.output_tokens if usage else 0,
        "cost": usage.cost if usage else None,
        "latency": latency,
    }


def _conductor_failed(
    record: RoundRecord, conversation: list[ChatMessage], error: Exception, latency: float
) -> RoundRecord:
    """Record a conductor generation that raised as the round's rejection."""
    message = f"{type(error).__name__}: {error}"[:2000]
    record.attempts.append(
        {
            "completion": "",
            "rejection": CONDUCTOR_ERROR,
            "rejection_message": message,
            "input_tokens": 0,
            "output_tokens": 0,
            "cost": None,
            "latency": latency,
        }  # fmt: skip
    )
    if record.depth and not record.conversation:
        record.conversation = [{"role": m.role, "content": m.text} for m in conversation[1:]]
    record.latency += latency
    record.rejection, record.rejection_message = CONDUCTOR_ERROR, message
    return record


def conductor_config(model: Model, constraint: Constraint | None) -> GenerateConfig:
    """The conductor's per-call config: the grammar if any, and the paper's 1024-token budget
    when neither the model's config nor the grammar sets one."""
    config = constrained_config(model, constraint)
    if config.max_tokens is None and model.config.max_tokens is None:
        config = config.merge(GenerateConfig(max_tokens=CONDUCTOR_MAX_TOKENS))
    return config


def answer_constraint_for(choices: Sequence[str] | None, answer_format: str | None = None) -> Constraint | None:
    """The final step's `ANSWER:` grammar for grammar-capable workers: restricted to the
    choice letters of a multiple-choice question; none where the answer is code
    (`answer_format == "code"`)."""
    if answer_format == "code":
        return None
    letters = [chr(ord("A") + i) for i in range(len(choices))] if choices else None
    return answer_constraint(letters, max_text_chars=ANSWER_TEXT_CHARS)
