"""Say at task start what runs, and warn when a task has no sample to run (issue 32.3, `--limit 0`).

With `--solver conductor` and no `--model`, Inspect's eval header and the log's `eval.model`
read `none/none`: the conductor comes from the pool file (or `--model-role conductor`), and the
header shows only the eval model and the `-T` options. This Inspect hook prints one line on
stderr when a project task starts with a solver that takes a `pool` (once per process for the same line:
a run of many tasks, such as the regression gate's, says it once),

    conductor local/smollm2-135m conducting pool local

and records the same in the log's eval metadata (`conductor`, `pool`; `inspect view` shows it
with the task's info). It changes nothing that runs: the eval model and the roles stay as the
user gave them (an `eval_retry` of the log reruns the same thing). What to name comes from
the layer that knows pools: `workers.eval_header` hands `describe_with` its `what_ran`.

The hook reports on the project's tasks only (`tasks.common.checked_task` names them with
`report_on`), whatever else the process evaluates. It is registered when the first project task loads,
as Inspect takes hooks defined beside tasks; not through the Inspect entry point, since Inspect
then announces it on stdout in every process that makes a model (tools, servers, tests).

The header itself is drawn before any hook or solver code runs, from the task's model; no
public Inspect API changes it. The metadata is written by adding it to `TaskStart.spec`, the
live spec Inspect writes the log from when the task ends (Inspect documents no copy there);
tests/startup/test_eval_header.py fails if the log stops showing it. `inspect eval` exits 0 whatever
its tasks did, and a hook cannot change that (Inspect catches hook exceptions), so an empty
task gets a warning only; `python -m solvers.eval_status` exits non-zero on its log.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from inspect_ai.hooks import Hooks, RunEnd, TaskStart, hooks
from inspect_ai.log import EvalLog, EvalPlan, EvalSpec
from inspect_ai.util import display_type

Describer = Callable[[EvalSpec, EvalPlan], dict[str, str]]
_reported_tasks: set[str] = set()
_describers: list[Describer] = []
_said: set[str] = set()  # header lines already printed: tasks of one run with the same conductor and pool say it once


def report_on(task_name: str) -> None:
    """Say what runs, and warn on no sample, when the task `task_name` starts (the first call
    registers the hook with Inspect)."""
    if not _reported_tasks:
        hooks(name="conductor_bench_header", description="names the conductor and pool at task start")(EvalHeader)
    _reported_tasks.add(task_name)


def describe_with(describer: Describer) -> None:
    """Name what runs with `describer`: `{"conductor": ..., "pool": ...}`, or {} for nothing."""
    if describer not in _describers:
        _describers.append(describer)


NO_EVAL_MODEL = "none/none"


def header_line(ran: dict[str, str], eval_model: str, header_shown: bool = True) -> str:
    """The console line naming who conducts and which pool works, and why Inspect's header
    reads `none/none` when no `--model` was given (when the header is shown: not under `--display none`)."""
    line = (
        f"conductor {ran['conductor']} conducting pool {ran['pool']}" if "conductor" in ran else f"pool {ran['pool']}"
    )
    if eval_model == NO_EVAL_MODEL and header_shown:
        line += f" (Inspect's header shows the eval model, {NO_EVAL_MODEL}: no --model was given)"
    return line


def no_samples_warning(spec: EvalSpec) -> str | None:
    """The warning for a task that starts with no sample to run (None when it has some)."""
    if spec.dataset.sample_ids != []:
        return None
    cause = "--limit 0" if spec.config.limit == 0 else f"--limit {spec.config.limit} / --sample-id"
    return (
        f"warning: {spec.task} has no sample to run: {cause} selects none of its {spec.dataset.samples}; "
        "fix: --limit N with N >= 1 (or no --limit for all). The eval still ends as a success (exit 0)."
    )


def no_model_error(spec: EvalSpec, plan: EvalPlan) -> str | None:
    """The error for Inspect's `generate()` (a task's own solver) run without an eval model,
    which Inspect reports only in the log under `--display none` (None otherwise)."""
    if spec.model != NO_EVAL_MODEL or not any(step.solver == "generate" for step in plan.steps):
        return None
    return (
        f"error: {spec.task} runs its solver generate() on the eval model and no --model was given; fix: "
        "--model <provider>/<model> (e.g. openai/gpt-5), or --solver conductor for the offline conductor"
    )


def failed_line(log: EvalLog) -> str | None:
    """One line for a task that ended in error (every display shows it, `--display none` too)."""
    if log.status != "error":
        return None
    message = (log.error.message if log.error else "").strip().splitlines() or ["no error message"]
    return f"error: {log.eval.task} failed: {message[-1][:300]}; the log: {log.location}"


class EvalHeader(Hooks):
    async def on_task_start(self, data: TaskStart) -> None:
        if data.spec.task not in _reported_tasks:
            return
        ran = {k: v for describe in _describers for k, v in describe(data.spec, data.plan).items()}
        if ran:
            data.spec.metadata = {**(data.spec.metadata or {}), **ran}
            line = header_line(ran, data.spec.model, display_type() != "none")
            if line not in _said:
                _said.add(line)
                print(line, file=sys.stderr, flush=True)
        for problem in (no_samples_warning(data.spec), no_model_error(data.spec, data.plan)):
            if problem:
                print(problem, file=sys.stderr, flush=True)

    async def on_run_end(self, data: RunEnd) -> None:
        for log in data.logs:
            if log.eval.task in _reported_tasks and (line := failed_line(log)):
                print(line, file=sys.stderr, flush=True)
