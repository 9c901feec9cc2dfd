"""The `conductor` solver: a conductor model writes a workflow, the workers run it.

    inspect eval tasks/gpqa.py --solver conductor
    inspect eval tasks/gpqa.py --solver conductor -S pool=paper -S max_depth=1 \\
        --model-role conductor=vllm/path/to/ckpt

The whole workflow (every round and step, with tokens, cost and latency) is stored in the
sample's metadata under "conductor" and summarised in the transcript. This module is the Inspect
glue (options, the sample's team, its metadata and output); the round itself is the engine,
`solvers.conducting`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict

from inspect_ai.log import transcript
from inspect_ai.model import ChatMessageAssistant, Model, ModelOutput
from inspect_ai.solver import Generate, Solver, TaskState, solver

from solvers.conducting import (
    REASONING_CHARS,
    Settings,
    answer_constraint_for,
    check_generation,
    check_settings,
    conduct,
    round_secrets,
    summary,
    workflow_markdown,
)
from solvers.executor import ErrorPolicy, RoundRecord, Worker
from solvers.grammar import Constraint
from solvers.options import checked_options
from solvers.team import (
    Overrides,
    eval_conductor,
    register_eval_prices,
    resolve_team,
    resolved_pool,
    role_workers,
    sample_subset,
)
from solvers.workflow import DEFAULT_MAX_STEPS
from startup.options import is_int, need_option


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


def sample_answer_constraint(state: TaskState) -> Constraint | None:
    """The final step's `ANSWER:` grammar for the running sample (`answer_constraint_for`
    with Inspect `choices`, else `metadata["choices"]`, and `metadata["answer_format"]`)."""
    choices = state.choices or state.metadata.get("choices")
    return answer_constraint_for([str(c) for c in choices] if choices else None, state.metadata.get("answer_format"))


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
    secrets = round_secrets(workers, lead)  # once a sample: both records redact with them
    state.metadata["conductor"] = summary(record, workers, chosen, method=method, lead=lead, secrets=secrets)
    if settings is not None:
        state.metadata["conductor"]["settings"] = asdict(settings)
    transcript().info(workflow_markdown(record, secrets), source="conductor")
    answer = record.answer or ""
    model = record.conductor or workers[0].name
    state.messages.append(ChatMessageAssistant(content=answer, model=model))
    state.output = ModelOutput.from_content(model=model, content=answer)
    return state
