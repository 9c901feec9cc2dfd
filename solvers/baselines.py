"""Baselines that share the conductor's executor, records and metadata layout.

    inspect eval tasks/gpqa.py --solver single_worker -S worker=1

A single worker gets the benchmark prompt alone (the paper's baseline: no subtask line) and
is recorded as a one-step workflow with no conductor call, so reports compare tokens, cost
and accuracy on the same footing.
"""

from __future__ import annotations

from inspect_ai.model import ChatMessageUser
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import span

from solvers.conductor import (
    Settings,
    check_generation,
    check_settings,
    finish_sample,
    is_int,
    need_option,
    sample_answer_constraint,
)
from solvers.executor import ErrorPolicy, RoundRecord, StepRecord, WorkerError, final_answer, run_step
from solvers.team import resolve_workers

PROMPT_ALONE = "(the benchmark prompt alone)"


@solver
def single_worker(
    worker: int = 0,
    pool: str | None = None,
    temperature: float | None = None,
    max_tokens: int | None = None,
    on_error: ErrorPolicy = "continue",
    step_timeout: float | None = None,
) -> Solver:
    """One pool member answers the benchmark prompt alone (Model `worker` of the pool)."""
    check_settings(Settings(on_error=on_error, step_timeout=step_timeout))
    need_option(is_int(worker) and worker >= 0, "worker", worker, "a pool index >= 0")
    check_generation(max_tokens=max_tokens, temperature=temperature)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        workers = resolve_workers(pool, temperature, max_tokens, sample_answer_constraint(state))
        if not 0 <= worker < len(workers):
            raise ValueError(f"-S worker={worker} is not in the pool (0..{len(workers) - 1})")
        chosen = workers[worker]
        step = StepRecord(0, 0, chosen.name, PROMPT_ALONE, [])
        async with span("step 0: Model 0", type="workflow_step"):
            messages = [ChatMessageUser(content=state.input_text)]
            await run_step(step, messages, chosen, chosen.answer_constraint, step_timeout)
        if step.error and on_error == "fail":
            raise WorkerError(f"{chosen.name} failed: {step.error}")
        workflow = {"model_id": [0], "subtasks": [PROMPT_ALONE], "access_list": [[]]}
        record = RoundRecord(depth=0, conductor=None, workflow=workflow, steps=[step])
        record.answer = final_answer(record.steps)
        return finish_sample(state, record, [chosen], [worker])

    return solve
