"""Test-time baselines on the conductor's executor, records and metadata layout.

    inspect eval tasks/gpqa.py --solver single_worker -S worker=1
    inspect eval tasks/math500.py --solver self_reflection -S worker=0 -S rounds=5
    inspect eval tasks/mmlu.py --solver consensus -S worker=2 -S samples=5
    inspect eval tasks/math500.py --solver mixture_of_agents -S seed=0
    inspect eval tasks/math500.py --solver smoothie -S mode=dependent -S embeddings=local
    inspect eval tasks/gsm8k.py --solver smoothie -S pool=local -S samples_per_worker=2
    inspect eval tasks/math500.py --solver random_workflow -S seed=0

Every model call is a recorded step (`solvers.executor.run_step` or `execute_workflow`), so
the sample's `metadata["conductor"]` has the conductor's headline keys (calls, tokens, cost,
the round with its steps) plus `method` (the solver's name), `settings` (its options) and
`selection` (how the answer was picked). There is no conductor call (`conductor` is None).
A step that gets the benchmark prompt alone (the paper's single-model setting: no subtask
line) records the subtask PROMPT_ALONE.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from copy import copy

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageUser, GenerateConfig
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import span

from solvers import consensus as voting
from solvers import moa, reflection
from solvers import smoothie as smoothing
from solvers.conducting import Settings, check_generation, check_settings, fixed_subtasks
from solvers.conductor import finish_sample, sample_answer_constraint
from solvers.executor import (
    ErrorPolicy,
    RoundRecord,
    StepRecord,
    Worker,
    WorkerError,
    execute_workflow,
    final_answer,
    run_step,
)
from solvers.options import check_worker_option, checked_options
from solvers.random_workflow import random_workflow as draw_workflow
from solvers.team import current_task_name, resolve_workers
from solvers.workflow import DEFAULT_MAX_STEPS
from startup.options import OptionError, is_int, need_option
from workers.embeddings import embedding_source

PROMPT_ALONE = "(the benchmark prompt alone)"
CHECK_OPTIONS = ("auto", *voting.CHECK_KINDS)


@solver
@checked_options
def single_worker(
    worker: int = 0,
    pool: str | None = None,
    temperature: float | None = None,
    max_tokens: int | None = None,
    on_error: ErrorPolicy = "continue",
    step_timeout: float | None = None,
) -> Solver:
    """One pool member answers the benchmark prompt alone (Model `worker` of the pool)."""
    options = baseline_options(locals())
    check_worker_option(worker, pool)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        chosen = _member(sample_workers(state, pool, temperature, max_tokens), worker)
        return await answer_alone(state, chosen, worker, "single_worker", options)

    return solve


@solver
@checked_options
def self_reflection(
    worker: int = 0,
    rounds: int = 5,
    stop: str = "unchanged",
    check: str = "auto",
    pool: str | None = None,
    temperature: float | None = None,
    max_tokens: int | None = None,
    on_error: ErrorPolicy = "continue",
    step_timeout: float | None = None,
) -> Solver:
    """Model `worker` answers, then revises its answer up to `rounds` times with every earlier
    attempt in its conversation; `stop`: "unchanged" ends when a revision states the previous
    attempt's answer (by the task's check, `check`), "never" runs every round."""
    options = baseline_options(locals())
    check_worker_option(worker, pool)
    need_option(is_int(rounds) and rounds >= 0, "rounds", rounds, "an integer >= 0 (revisions after the first answer)")
    need_option(stop in reflection.STOP_RULES, "stop", stop, " | ".join(reflection.STOP_RULES))
    need_option(check in CHECK_OPTIONS, "check", check, " | ".join(CHECK_OPTIONS))

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        chosen = _member(sample_workers(state, pool, temperature, max_tokens), worker)
        kind, letters = _check_kind(check, state)
        steps: list[StepRecord] = []
        attempts: list[str] = []
        stopped = "rounds"
        for r in range(rounds + 1):
            messages = _messages(reflection.conversation(state.input_text, attempts))
            subtask = PROMPT_ALONE if r == 0 else reflection.REVISE_SUBTASK
            step = await ask(r, 0, chosen, messages, subtask, list(range(r)), step_timeout)
            steps.append(step)
            if not step.ok:
                stopped = "error"
                break
            attempts.append(step.output)
            if r and stop == "unchanged":
                if await asyncio.to_thread(reflection.unchanged, attempts[-2], attempts[-1], kind, letters):
                    stopped = "unchanged"
                    break
        raise_failed(steps, on_error)
        record = fixed_round(steps, [[]] + [["all"]] * (len(steps) - 1))
        record.answer = attempts[-1] if attempts else None
        answers = [voting.read_answer(a, kind, letters) for a in attempts]
        selection = {"check": kind, "answers": answers, "stopped": stopped, "revisions": max(0, len(attempts) - 1)}
        return finish_baseline(state, record, [chosen], [worker], "self_reflection", options, selection)

    return solve


@solver
@checked_options
def consensus(
    worker: int = 0,
    samples: int = 5,
    check: str = "auto",
    pool: str | None = None,
    temperature: float | None = None,
    max_tokens: int | None = None,
    on_error: ErrorPolicy = "continue",
    step_timeout: float | None = None,
) -> Solver:
    """`samples` independent answers of Model `worker` to the benchmark prompt alone; the
    majority answer wins, two answers being equal when the task's check (`check`) says so;
    a tie goes to the answer given first (rules: `solvers.consensus`)."""
    options = baseline_options(locals())
    check_worker_option(worker, pool)
    need_option(is_int(samples) and samples >= 1, "samples", samples, "an integer >= 1")
    need_option(check in CHECK_OPTIONS, "check", check, " | ".join(CHECK_OPTIONS))

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        chosen = _member(sample_workers(state, pool, temperature, max_tokens), worker)
        kind, letters = _check_kind(check, state)
        prompt = [ChatMessageUser(content=state.input_text)]
        steps = list(
            await asyncio.gather(*(ask(i, 0, chosen, prompt, PROMPT_ALONE, [], step_timeout) for i in range(samples)))
        )
        raise_failed(steps, on_error)
        outputs = [s.output if s.ok else None for s in steps]
        vote = await asyncio.to_thread(voting.majority, outputs, kind, letters)
        record = fixed_round(steps, [[]] * samples)
        record.answer = outputs[vote.chosen] if vote.chosen is not None else None
        selection = {
            "check": kind,
            "answers": vote.answers,
            "groups": vote.groups,
            "votes": [len(g) for g in vote.groups],
            "chosen_step": vote.chosen,
            "tie": vote.tie,
        }
        return finish_baseline(state, record, [chosen], [worker], "consensus", options, selection)

    return solve


@solver
@checked_options
def mixture_of_agents(
    seed: int = 0,
    aggregator: int | None = None,
    pool: str | None = None,
    temperature: float | None = None,
    max_tokens: int | None = None,
    on_error: ErrorPolicy = "continue",
    step_timeout: float | None = None,
) -> Solver:
    """Every pool member answers the benchmark prompt alone (one proposer layer), then one
    member aggregates the answers: drawn at random per sample with `seed`, or pool index
    `aggregator` when given (n + 1 calls on n workers)."""
    options = baseline_options(locals())
    need_option(is_int(seed), "seed", seed, "an integer")
    need_option(
        aggregator is None or (is_int(aggregator) and aggregator >= 0), "aggregator", aggregator, "a pool index"
    )

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        workers = sample_workers(state, pool, temperature, max_tokens)
        steps = await _propose(state, workers, step_timeout)
        drawn = aggregator is None
        lead = moa.draw_aggregator(len(workers), seed, _key(state)) if drawn else aggregator
        _member(workers, lead)
        shown = [i for i, s in enumerate(steps) if s.ok]  # the proposals in the prompt, as recorded
        text = moa.aggregate_prompt(state.input_text, [steps[i].output for i in shown])
        n = len(workers)
        message = [ChatMessageUser(content=text)]
        steps.append(await ask(n, lead, workers[lead], message, moa.AGGREGATE_SUBTASK, shown, step_timeout))
        raise_failed(steps, on_error)
        record = fixed_round(steps, [[]] * n + [["all"]])
        record.answer = final_answer(record.steps)
        selection = {"aggregator": lead, "drawn": drawn, "seed": seed, "proposals": sum(s.ok for s in steps[:-1])}
        return finish_baseline(state, record, workers, list(range(n)), "mixture_of_agents", options, selection)

    return solve


@solver
@checked_options
def smoothie(
    mode: str = "dependent",
    embeddings: str = "local",
    embeddings_base_url: str | None = None,
    samples_per_worker: int = 1,
    pool: str | None = None,
    temperature: float | None = None,
    max_tokens: int | None = None,
    on_error: ErrorPolicy = "continue",
    step_timeout: float | None = None,
) -> Solver:
    """Every pool member answers the benchmark prompt alone, `samples_per_worker` times (at its
    temperature; sample s > 0 with seed s + its configured seed); every answer is a candidate
    (3 or more needed: a pool of 2 needs samples_per_worker=2; like the Smoothie paper's
    multi-prompt setting, several generations of one model are separate candidates). The
    candidate whose embedding agrees best with the others' (Smoothie's weights,
    `solvers.smoothie`) is the answer. `mode`: "dependent" fits on each question's outputs alone; "independent"
    fits one set of weights over the task, online: on every question of this task answered so
    far in this eval, this one included (the paper fits once over the finished test set,
    which one sample cannot see; run with --max-samples 1 for a reproducible order).
    `embeddings`: hash[:dim], local[:model] (llama.cpp, offline) or an embedding model name at
    an OpenAI-compatible endpoint (`embeddings_base_url`); see `workers.embeddings`."""
    options = baseline_options(locals())
    need_option(mode in smoothing.MODES, "mode", mode, " | ".join(smoothing.MODES))
    need_option(
        is_int(samples_per_worker) and samples_per_worker >= 1, "samples_per_worker", samples_per_worker,
        "an integer >= 1 (answers drawn from each worker)",
    )  # fmt: skip
    try:
        source = embedding_source(embeddings, embeddings_base_url)
    except (ValueError, OSError, RuntimeError) as error:  # RuntimeError: a missing model package
        raise OptionError(f"invalid solver option -S embeddings={embeddings!r}: {error}") from error
    fitted: dict[str, list[list[list[float]]]] = {}  # task -> questions' output embeddings

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        workers = sample_workers(state, pool, temperature, max_tokens)
        _check_candidates(workers, samples_per_worker)
        candidates = [(w, s) for w in range(len(workers)) for s in range(samples_per_worker)]
        prompt = [ChatMessageUser(content=state.input_text)]
        calls = (
            ask(i, w, _sample(workers[w], s), prompt, PROMPT_ALONE, [], step_timeout)
            for i, (w, s) in enumerate(candidates)
        )
        steps = list(await asyncio.gather(*calls))
        raise_failed(steps, on_error)
        vectors = await asyncio.to_thread(source.embed, [s.output if s.ok else "" for s in steps])
        history = [vectors]
        if mode == "independent":
            history = fitted.setdefault(current_task_name() or "", [])
            history.append(vectors)
        result = smoothing.fit(list(history))
        record = fixed_round(steps, [[]] * len(steps))
        record.answer = steps[result.chosen].output if steps[result.chosen].ok else None
        selection = {
            "mode": mode,
            "embeddings": source.name,
            "samples_per_worker": samples_per_worker,
            "candidates": [list(c) for c in candidates],  # step i = [worker, sample]
            "chosen_step": result.chosen,
            "chosen_worker": candidates[result.chosen][0],
            "deltas": result.deltas,
            "weights": result.weights,
            "fit_questions": result.samples,
        }
        return finish_baseline(state, record, workers, list(range(len(workers))), "smoothie", options, selection)

    return solve


@solver
@checked_options
def random_workflow(
    seed: int = 0,
    max_steps: int = DEFAULT_MAX_STEPS,
    pool: str | None = None,
    temperature: float | None = None,
    max_tokens: int | None = None,
    on_error: ErrorPolicy = "continue",
    step_timeout: float | None = None,
) -> Solver:
    """A random valid workflow over the pool, drawn per sample with `seed` (1..`max_steps`
    steps, random workers and access, the fixed "solve the question" subtask of the
    no-subtasks ablation), run by the executor: the sanity floor."""
    options = baseline_options(locals())
    need_option(is_int(seed), "seed", seed, "an integer")
    need_option(is_int(max_steps) and max_steps >= 1, "max_steps", max_steps, "an integer >= 1")

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        workers = sample_workers(state, pool, temperature, max_tokens)
        workflow = draw_workflow(len(workers), max_steps, seed, _key(state))
        workflow = fixed_subtasks(workflow, state.input_text, "first")
        steps = await execute_workflow(
            workflow, state.input_text, workers, on_error=on_error, step_timeout=step_timeout, question_mode="first"
        )
        record = RoundRecord(depth=0, conductor=None, workflow=workflow.to_dict(), steps=steps)
        record.answer = final_answer(steps)
        selection = {"seed": seed, "steps": len(workflow)}
        return finish_baseline(state, record, workers, list(range(len(workers))), "random_workflow", options, selection)

    return solve


# ---------------------------------------------------------------- shared glue


def baseline_options(options: dict) -> dict:
    """Validate the options every baseline shares; return all options for the record."""
    check_settings(Settings(on_error=options["on_error"], step_timeout=options["step_timeout"]))
    check_generation(max_tokens=options["max_tokens"], temperature=options["temperature"])
    return dict(options)


def sample_workers(
    state: TaskState, pool: str | None, temperature: float | None, max_tokens: int | None
) -> list[Worker]:
    """The pool's workers for this sample (its answer grammar applied)."""
    return resolve_workers(pool, temperature, max_tokens, sample_answer_constraint(state))


def _member(workers: Sequence[Worker], index: int) -> Worker:
    if not 0 <= index < len(workers):
        raise ValueError(f"worker index {index} is not in the pool (0..{len(workers) - 1})")
    return workers[index]


def seeded(worker: Worker, seed: int) -> Worker:
    """The worker sampling with `seed` (its other settings kept)."""
    model = copy(worker.model)
    model.config = worker.model.config.merge(GenerateConfig(seed=seed))
    return Worker(model, worker.name, worker.description, worker.price, worker.answer_constraint)


def _sample(worker: Worker, sample: int) -> Worker:
    """The worker drawing its `sample`-th answer: sample 0 as configured, later ones re-seeded."""
    return seeded(worker, (worker.model.config.seed or 0) + sample) if sample else worker


def _check_candidates(workers: Sequence[Worker], per_worker: int) -> None:
    """Smoothie's triplets need 3+ candidates; several samples of a greedy worker would be one."""
    count = len(workers) * per_worker
    if count < smoothing.MIN_VOTERS:
        fix = -(-smoothing.MIN_VOTERS // len(workers))
        raise ValueError(
            f"smoothie needs at least {smoothing.MIN_VOTERS} candidate outputs (it compares each with two others); "
            f"the pool has {len(workers)} worker(s) x samples_per_worker={per_worker} = {count}; use "
            f"-S samples_per_worker={fix}, a larger pool or --model-role workers=a,b,c"
        )
    greedy = [w.name for w in workers if w.model.config.temperature == 0]
    if per_worker > 1 and greedy:
        raise ValueError(
            f"-S samples_per_worker={per_worker} draws several answers per worker, but {', '.join(greedy)} "
            "sample(s) at temperature 0 (identical answers); set -S temperature=0.7 or use samples_per_worker=1"
        )


def _key(state: TaskState) -> str:
    return f"{state.sample_id}/{state.epoch}"


def _check_kind(check: str, state: TaskState) -> tuple[str, str]:
    choices = state.choices or state.metadata.get("choices") or []
    kind = check
    if check == "auto":
        kind = voting.auto_check(current_task_name(), len(choices), state.metadata.get("answer_format"))
    return kind, voting.letters_for(len(choices))


def _messages(turns: list[tuple[str, str]]) -> list[ChatMessage]:
    return [ChatMessageUser(content=t) if role == "user" else ChatMessageAssistant(content=t) for role, t in turns]


async def ask(
    index: int,
    worker_index: int,
    worker: Worker,
    messages: list[ChatMessage],
    subtask: str,
    visible: list[int],
    step_timeout: float | None,
) -> StepRecord:
    """One recorded call in its own transcript span (with the worker's answer grammar)."""
    step = StepRecord(index, worker_index, worker.name, subtask, visible)
    async with span(f"step {index}: Model {worker_index}", type="workflow_step"):
        await run_step(step, messages, worker, worker.answer_constraint, step_timeout)
    return step


async def _propose(state: TaskState, workers: Sequence[Worker], step_timeout: float | None) -> list[StepRecord]:
    """Every worker answers the benchmark prompt alone, concurrently."""
    prompt = [ChatMessageUser(content=state.input_text)]
    calls = (ask(i, i, w, prompt, PROMPT_ALONE, [], step_timeout) for i, w in enumerate(workers))
    return list(await asyncio.gather(*calls))


async def answer_alone(state: TaskState, chosen: Worker, index: int, method: str, options: dict) -> TaskState:
    """Pool member `index` (`chosen`) answers the benchmark prompt alone: one recorded step, the
    sample finished as `method` (`options` holds the solver's on_error and step_timeout)."""
    prompt = [ChatMessageUser(content=state.input_text)]
    step = await ask(0, 0, chosen, prompt, PROMPT_ALONE, [], options["step_timeout"])
    raise_failed([step], options["on_error"])
    record = fixed_round([step], [[]])
    record.answer = final_answer(record.steps)
    return finish_baseline(state, record, [chosen], [index], method, options)


def raise_failed(steps: Sequence[StepRecord], on_error: str) -> None:
    failed = next((s for s in steps if not s.ok), None)
    if failed is not None and on_error == "fail":
        raise WorkerError(f"step {failed.index} ({failed.model}) failed: {failed.error}")


def fixed_round(steps: list[StepRecord], access: list[list]) -> RoundRecord:
    """A round without a conductor call, its fixed workflow written in the paper's lists."""
    workflow = {"model_id": [s.worker for s in steps], "subtasks": [s.subtask for s in steps], "access_list": access}
    return RoundRecord(depth=0, conductor=None, workflow=workflow, steps=steps)


def finish_baseline(
    state: TaskState,
    record: RoundRecord,
    workers: Sequence[Worker],
    chosen: list[int],
    method: str,
    options: dict,
    selection: dict | None = None,
) -> TaskState:
    state = finish_sample(state, record, workers, chosen, method=method)
    state.metadata["conductor"]["settings"] = options
    if selection is not None:
        state.metadata["conductor"]["selection"] = selection
    return state
