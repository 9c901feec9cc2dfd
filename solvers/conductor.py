"""The `conductor` solver: a conductor model writes a workflow, the workers run it.

    inspect eval tasks/gpqa.py --solver conductor
    inspect eval tasks/gpqa.py --solver conductor -S pool=paper -S max_depth=1 \\
        --model-role conductor=vllm/path/to/ckpt

The whole workflow (every round and step, with tokens, cost and latency) is stored in the
sample's metadata under "conductor" and summarised in the transcript.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Literal

from inspect_ai.log import transcript
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageUser,
    GenerateConfig,
    Model,
    ModelOutput,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import LimitExceededError, span

from solvers import prompts
from solvers.executor import (
    RECURSION_BUDGET,
    ErrorPolicy,
    RoundRecord,
    Turn,
    Usage,
    Worker,
    constrained_config,
    execute_workflow,
    final_answer,
    output_usage,
    worker_config,
)
from solvers.few_shot import FEW_SHOT_SETS, set_access
from solvers.grammar import Constraint, answer_constraint, workflow_constraint
from solvers.options import checked_options
from solvers.prompts import QUESTION_MODES, QuestionMode
from solvers.team import (
    CONDUCTOR_MAX_TOKENS,
    Conductor,
    Overrides,
    eval_conductor,
    register_eval_prices,
    resolve_team,
    resolved_pool,
    role_workers,
    sample_subset,
)
from solvers.workflow import (
    ACCESS_SCHEMES,
    DEFAULT_MAX_STEPS,
    AccessScheme,
    ParseResult,
    Workflow,
    parse_workflow,
)
from startup.options import is_int, need_option
from workers.clean_errors import guard_errors
from workers.provider_settings import sdk_settings
from workers.redact import model_secrets, redact_config, redact_round, redact_text

SubtaskMode = Literal["written", "fixed"]
SUBTASK_MODES = ("written", "fixed")

# grammar bounds for constrained (local) models; their exact worst case sets max_tokens
SUBTASK_CHARS = 160
REASONING_CHARS = 160
ANSWER_TEXT_CHARS = 200


@dataclass(frozen=True)
class Settings:
    """Solver options (validated by `check_settings`); the defaults are the paper's method."""

    max_steps: int = DEFAULT_MAX_STEPS
    max_depth: int = 0
    max_recursions: int = 1
    few_shot: str = "ood"
    access: AccessScheme = "binary"
    question: QuestionMode = "first"
    format_retries: int = 0
    reasoning_chars: int = REASONING_CHARS
    on_error: ErrorPolicy = "continue"
    step_timeout: float | None = None
    concurrent: bool = True
    subtasks: SubtaskMode = "written"
    replace_workers: str | None = None


@solver
@checked_options
def conductor(
    pool: str | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
    max_depth: int = 0,
    max_recursions: int = 1,
    pool_size: int | None = None,
    seed: int = 0,
    temperature: float | None = None,
    max_tokens: int | None = None,
    worker_temperature: float | None = None,
    worker_max_tokens: int | None = None,
    few_shot: str | bool = "ood",
    access: str = "binary",
    question: str = "first",
    format_retries: int = 0,
    reasoning_chars: int = REASONING_CHARS,
    grammar: bool | None = None,
    on_error: ErrorPolicy = "continue",
    step_timeout: float | None = None,
    concurrent: bool = True,
    subtasks: str = "written",
    replace_workers: str | None = None,
) -> Solver:
    """Answer with a workflow written by a conductor model and run by a worker pool.

    Args:
        pool: bundled pool name or pool YAML path (default: `--model-role workers`, else `local`).
        max_steps: most steps a workflow may have (the paper uses 5).
        max_depth: recursion depth; with 1 or more the conductor is offered as a worker.
        max_recursions: recursive conductor calls per sample after the root call (the paper's bound).
        pool_size: offer a seeded random k-of-n subset of the pool to each sample.
        seed: seed of that subset.
        temperature: conductor sampling temperature.
        max_tokens: conductor generation budget (default: the pool's, else 1024 as the paper).
        worker_temperature: worker sampling temperature (overrides the pool's).
        worker_max_tokens: worker generation budget (overrides the pool's).
        few_shot: example set: ood (default), in_distribution, mixed, legacy or none
            (true means ood, false none).
        access: "binary" (["all"] or [], the paper's) or "indices" (also lists of earlier steps).
        question: "first" (only the first step gets the question, the paper's) or "every".
        format_retries: resample the conductor this many times when its output does not parse.
        reasoning_chars: length of the free-reasoning field the llama.cpp grammar allows.
        grammar: force a valid workflow with a llama.cpp grammar (default: when supported).
        on_error: "continue" past a failed step, or "fail" the sample.
        step_timeout: seconds before a worker call counts as failed.
        concurrent: run independent steps concurrently (False: in list order, as the paper).
        subtasks: "written" (the conductor's subtasks) or "fixed" (the "no subtasks" ablation:
            every step gets one fixed instruction to solve the question).
        replace_workers: an Inspect model name that runs every worker slot (the "every worker
            is one model" ablation); the slots keep their descriptions in the prompt.
    """
    settings = check_settings(
        Settings(
            max_steps=max_steps,
            max_depth=max_depth,
            max_recursions=max_recursions,
            few_shot=few_shot_name(few_shot),
            access=_lower(access),  # type: ignore[arg-type]
            question=_lower(question),  # type: ignore[arg-type]
            format_retries=format_retries,
            reasoning_chars=reasoning_chars,
            on_error=on_error,
            step_timeout=step_timeout,
            concurrent=concurrent,
            subtasks=_lower(subtasks),  # type: ignore[arg-type]
            replace_workers=replace_workers,
        )
    )
    check_generation(
        pool_size=pool_size,
        max_tokens=max_tokens,
        worker_max_tokens=worker_max_tokens,
        temperature=temperature,
        worker_temperature=worker_temperature,
    )
    need_option(is_int(seed), "seed", seed, "an integer")
    need_option(grammar is None or isinstance(grammar, bool), "grammar", grammar, "true | false (or unset: auto)")
    spec = resolved_pool(pool)  # one object for the whole eval: the option check's, the header's, every sample's
    register_eval_prices(spec, replace_workers)  # before Inspect checks that a --cost-limit eval's models have prices

    overrides = Overrides(temperature, max_tokens, grammar, worker_temperature, worker_max_tokens)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        team = resolve_team(
            spec,
            overrides,
            sample_answer_constraint(state),
            lead=eval_conductor(),
            workers=role_workers(pool, worker_temperature, worker_max_tokens),
            replace_workers=replace_workers,
        )
        chosen = sample_subset(len(team.workers), pool_size, seed, f"{state.sample_id}/{state.epoch}")
        workers = [team.workers[i] for i in chosen]
        record = await conduct(state.input_text, team.conductor, workers, settings)
        return finish_sample(state, record, workers, chosen, settings, lead=team.conductor.model)

    return solve


def few_shot_name(value: str | bool) -> str:
    """The few-shot set of a `few_shot` option (true: ood, false: none, as before)."""
    if isinstance(value, bool):
        return "ood" if value else "none"
    return str(value).strip().lower()


def _lower(value: object) -> object:
    return value.strip().lower() if isinstance(value, str) else value


def check_settings(settings: Settings) -> Settings:
    """Reject nonsensical options at start, with the option and the fix named."""
    s = settings
    need_option(
        is_int(s.max_steps) and s.max_steps >= 1, "max_steps", s.max_steps, "an integer >= 1 (the paper uses 5)"
    )
    need_option(is_int(s.max_depth) and s.max_depth >= 0, "max_depth", s.max_depth, "an integer >= 0 (0: no recursion)")
    need_option(
        is_int(s.max_recursions) and s.max_recursions >= 0,
        "max_recursions",
        s.max_recursions,
        "an integer >= 0 (recursive calls per sample after the root call)",
    )
    need_option(s.few_shot in FEW_SHOT_SETS, "few_shot", s.few_shot, " | ".join(FEW_SHOT_SETS) + " (or true/false)")
    need_option(s.access in ACCESS_SCHEMES, "access", s.access, "binary | indices")
    need_option(s.question in QUESTION_MODES, "question", s.question, "first | every")
    need_option(
        is_int(s.format_retries) and s.format_retries >= 0, "format_retries", s.format_retries, "an integer >= 0"
    )
    need_option(
        is_int(s.reasoning_chars) and s.reasoning_chars >= 0,
        "reasoning_chars",
        s.reasoning_chars,
        "an integer >= 0 (0: no reasoning field in the grammar)",
    )
    need_option(s.on_error in ("continue", "fail"), "on_error", s.on_error, "continue | fail")
    need_option(
        s.step_timeout is None or (_is_number(s.step_timeout) and s.step_timeout > 0),
        "step_timeout",
        s.step_timeout,
        "a number of seconds > 0 (leave it unset for no timeout)",
    )
    need_option(isinstance(s.concurrent, bool), "concurrent", s.concurrent, "true | false")
    need_option(s.subtasks in SUBTASK_MODES, "subtasks", s.subtasks, "written | fixed")
    need_option(
        s.replace_workers is None or (isinstance(s.replace_workers, str) and "/" in s.replace_workers),
        "replace_workers",
        s.replace_workers,
        "an Inspect model name such as openai/gpt-5 (or unset)",
    )
    needs = set_access(s.few_shot)
    need_option(
        needs is None or needs == s.access,
        "few_shot",
        s.few_shot,
        f"a set that fits -S access={s.access} (the {s.few_shot} examples need -S access={needs})",
    )
    return settings


def check_generation(**options: float | int | None) -> None:
    """Generation options: token budgets and pool_size >= 1, temperatures >= 0 (or unset)."""
    for name, value in options.items():
        if value is None:
            continue
        if name.endswith("temperature"):
            need_option(_is_number(value) and value >= 0, name, value, "a finite number >= 0")
        else:
            need_option(is_int(value) and value >= 1, name, value, "an integer >= 1")


def _is_number(value: object) -> bool:
    """A finite int or float (not a bool): NaN and infinity are no setting."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


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


def sample_answer_constraint(state: TaskState) -> Constraint | None:
    """The final step's `ANSWER:` grammar for the running sample (`answer_constraint_for`
    with Inspect `choices`, else `metadata["choices"]`, and `metadata["answer_format"]`)."""
    choices = state.choices or state.metadata.get("choices")
    return answer_constraint_for([str(c) for c in choices] if choices else None, state.metadata.get("answer_format"))


def answer_constraint_for(choices: Sequence[str] | None, answer_format: str | None = None) -> Constraint | None:
    """The final step's `ANSWER:` grammar for grammar-capable workers: restricted to the
    choice letters of a multiple-choice question; none where the answer is code
    (`answer_format == "code"`)."""
    if answer_format == "code":
        return None
    letters = [chr(ord("A") + i) for i in range(len(choices))] if choices else None
    return answer_constraint(letters, max_text_chars=ANSWER_TEXT_CHARS)


def finish_sample(
    state: TaskState,
    record: RoundRecord,
    workers: Sequence[Worker],
    chosen: list[int],
    settings: Settings | None = None,
    *,
    method: str = "conductor",
    lead: Model | None = None,
) -> TaskState:
    """Store the round in the sample (metadata, transcript) and make its answer the output;
    `settings` (the conductor's options in force) are stored with it, `method` names the
    solver (a baseline passes its own name), `lead` is the conductor's model (None: none called)."""
    state.metadata["conductor"] = summary(record, workers, chosen, method=method, lead=lead)
    if settings is not None:
        state.metadata["conductor"]["settings"] = asdict(settings)
    transcript().info(workflow_markdown(record, round_secrets(workers, lead)), source="conductor")
    answer = record.answer or ""
    model = record.conductor or workers[0].name
    state.messages.append(ChatMessageAssistant(content=answer, model=model))
    state.output = ModelOutput.from_content(model=model, content=answer)
    return state


def summary(record: RoundRecord, workers: Sequence[Worker], chosen: list[int], *, method: str = "conductor",
            lead: Model | None = None) -> dict:  # fmt: skip
    """Sample metadata: headline numbers for reports (worker and conductor cost and calls
    apart, as the paper counts them; a cost is None when a price is unknown), then the
    full round tree. Worker configs and error texts are redacted (`workers.redact`): a record
    never holds a header value, a body string or a credential the workers or the conductor
    (`lead`) were given."""
    workers_used, conducting = record.worker_usage(), record.conductor_usage()
    total = record.total_usage()
    rounds = list(record.rounds())
    return {
        "method": method,
        "parsed": record.rejection is None,
        "rejection": record.rejection,
        "steps": len(record.steps),
        "agent_calls": record.agent_calls(),
        "conductor_calls": record.conductor_calls(),
        "calls": record.calls(),
        "format_retries": sum(max(0, len(r.attempts) - 1) for r in rounds),
        "recursions": sum(1 for r in rounds[1:] if not r.refused),
        "recursions_refused": sum(1 for r in rounds if r.refused),
        "fallbacks": sum(1 for r in rounds for s in r.steps if s.fallback),
        "input_tokens": total.input_tokens,
        "output_tokens": total.output_tokens,
        "worker_cost_usd": workers_used.cost,
        "conductor_cost_usd": conducting.cost,
        "cost_usd": total.cost,
        "conductor": record.conductor,
        "workers": [w.name for w in workers],
        "worker_configs": [redact_config(worker_config(w)) for w in workers],  # as each provider receives it
        "worker_sdk": [sdk_settings(w.name, w.model.config.model_dump(), w.model.model_args) for w in workers],
        "pool_indices": chosen,
        "round": redact_round(record.to_dict(), round_secrets(workers, lead)),
    }


def round_secrets(workers: Sequence[Worker], lead: Model | None) -> list[str]:
    """What the round's models were given that may be a credential (`workers.redact.model_secrets`)."""
    return model_secrets([w.model for w in workers] + ([lead] if lead is not None else []))


def workflow_markdown(record: RoundRecord, secrets: Sequence[str] = ()) -> str:
    """A readable account of a round (and its nested rounds) for the transcript; its error texts
    redacted (`workers.redact.redact_text`, with the round's `secrets`)."""
    lines = []
    for turn in record.conversation:
        shown = turn["content"] if turn["role"] == "user" else turn["content"][:1500]
        lines.append(f"*{turn['role']} turn continuing the conductor's conversation:*\n```\n{shown[:3000]}\n```")
    for number, attempt in enumerate(record.attempts[:-1]):
        lines.append(f"Round {record.depth} attempt {number} rejected ({attempt['rejection']}); resampled.")
    if record.rejection:
        return "\n\n".join(
            [
                *lines,
                f"**Round {record.depth}: workflow rejected** ({record.rejection}): "
                f"{redact_text(record.rejection_message or '', secrets)}\n\n```\n{record.completion[:2000]}\n```",
            ]
        )
    lines += [
        f"**Round {record.depth}** ({record.conductor}): {len(record.steps)} step(s)",
        "",
        "| step | worker | sees | subtask | tokens in/out | latency s | error |",
        "|---|---|---|---|---|---|---|",
    ]
    nested = []
    for s in record.steps:
        subtask = s.subtask.replace("|", "\\|").replace("\n", " ")[:120]
        note = redact_text(s.error, secrets) if s.error else (f"fallback: {s.fallback}" if s.fallback else "")
        sees = f"previous response, {s.visible}" if s.shown_previous else str(s.visible)
        lines.append(
            f"| {s.index} | Model {s.worker} ({s.model}) | {sees} | {subtask} | "
            f"{s.usage.input_tokens}/{s.usage.output_tokens} | {s.latency:.2f} | {note} |"
        )
        if s.round:
            nested.append(workflow_markdown(s.round, secrets))
    if record.workflow and not record.steps:
        lines.append("(three empty lists: the previous answer is kept)")
    return "\n".join([*lines, *nested])
