"""The gate's eval suite and its Inspect glue: run it, read per-sample records from the logs.

Two groups, each one `inspect_ai.eval` call per solver over the group's tasks:
- `sim`: the simulated pool (`-S pool=sim`, workers/sim_provider.py: answers decided by a
  hash of seed, item and subtask; no model runs) with the scripted conductor
  (workers/scripted_workflows.py), the conductor and the baselines, a few items per task;
- `local`: one short run of the embedded local models (regression/local-greedy.yaml:
  greedy decoding, fixed seed, 2 threads, one llama.cpp slot, samples one at a time).
Data: the tasks' pinned offline mirrors (sha256-checked; fetched once into the cache), or
`data_files` (task name -> local file, as `-T data_file=`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import Model, get_model
from inspect_ai.scorer import value_to_float
from inspect_ai.solver import SolverSpec

from regression.compare import SampleRecord, aggregate, entry_key
from solvers.batch_eval import UNWATCHED
from tasks.catalog import benchmark

HERE = Path(__file__).parent
LOCAL_POOL = HERE / "local-greedy.yaml"


@dataclass(frozen=True)
class TaskSpec:
    name: str  # a declared benchmark's name (tasks/catalog.py), as logs show it
    args: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SolverRun:
    solver: str
    args: Mapping[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """The solver's name in entry keys: its options other than the pool, e.g. `single_worker[worker=3]`."""
        shown = {k: v for k, v in self.args.items() if k != "pool"}
        return self.solver + (f"[{','.join(f'{k}={v}' for k, v in sorted(shown.items()))}]" if shown else "")


@dataclass(frozen=True)
class Group:
    name: str
    tasks: tuple[TaskSpec, ...]
    solvers: tuple[SolverRun, ...]
    limit: int
    scripted_conductor: bool  # the sim group's conductor role; the local group uses its pool's
    max_samples: int | None = None


GPQA = TaskSpec("gpqa_diamond")
SIM_TASKS = (TaskSpec("math500"), TaskSpec("gsm8k"), TaskSpec("mmlu"), GPQA)
SIM_SOLVERS = (
    SolverRun("conductor", {"pool": "sim"}),
    SolverRun("single_worker", {"pool": "sim", "worker": 0}),
    SolverRun("single_worker", {"pool": "sim", "worker": 3}),
    SolverRun("self_reflection", {"pool": "sim", "worker": 2, "rounds": 2}),
    SolverRun("consensus", {"pool": "sim", "worker": 2, "samples": 3}),
    SolverRun("mixture_of_agents", {"pool": "sim"}),
    SolverRun("smoothie", {"pool": "sim", "embeddings": "hash"}),
    SolverRun("random_workflow", {"pool": "sim"}),
)
NOT_IN_SUITE = {  # what the gate does not run yet, and why
    "router_dc, mas_router (solvers/routers)": "need a trained router file; none is committed",
}
LOCAL_SOLVERS = (SolverRun("conductor", {"pool": str(LOCAL_POOL), "max_steps": 2, "concurrent": False}),)


def default_groups(
    sim_limit: int = 8, local_limit: int = 2, data_files: Mapping[str, str] | None = None
) -> list[Group]:
    """The suite `nox -s regression` runs (`local_limit=0` leaves the local group out)."""
    tasks = tuple(_with_data(t, data_files) for t in SIM_TASKS)
    groups = [Group("sim", tasks, SIM_SOLVERS, sim_limit, scripted_conductor=True)]
    if local_limit > 0:
        local_tasks = (_with_data(GPQA, data_files),)
        groups.append(Group("local", local_tasks, LOCAL_SOLVERS, local_limit, False, max_samples=1))
    return groups


def _with_data(spec: TaskSpec, data_files: Mapping[str, str] | None) -> TaskSpec:
    path = (data_files or {}).get(spec.name)
    return TaskSpec(spec.name, {**spec.args, "data_file": path}) if path else spec


def scripted_conductor() -> Model:
    """The scripted conductor (`scripted/fixed-workflows`, workers/scripted_provider.py): the
    gate's fixed workflow per question, usage counted as characters / 4 (no tokenizer)."""
    return get_model("scripted/fixed-workflows", memoize=False)


def build_task(spec: TaskSpec):
    declared = benchmark(spec.name)
    if declared is None:
        raise ValueError(f"regression task {spec.name!r}: no task file declares it (tasks/catalog.py)")
    return declared.task()(**spec.args)


def run_group(group: Group, log_dir: str, progress: Callable[[str], None] = print) -> dict[str, dict[str, Any]]:
    """Run every solver of a group on its tasks; entry key -> {group, task, solver, ..., metrics}."""
    entries: dict[str, dict[str, Any]] = {}
    for run in group.solvers:
        progress(
            f"regression: {group.name}: {run.label} on {', '.join(t.name for t in group.tasks)} (limit {group.limit})"
        )
        roles = {"conductor": scripted_conductor()} if group.scripted_conductor else None
        logs = inspect_eval(
            [build_task(t) for t in group.tasks],
            solver=SolverSpec(run.solver, dict(run.args), dict(run.args)),  # args_passed creates it
            model=None,
            model_roles=roles,
            limit=group.limit,
            log_dir=log_dir,
            fail_on_error=False,
            max_samples=group.max_samples,
            max_tasks=1 if group.max_samples == 1 else None,
            **UNWATCHED,
        )
        for log in logs:
            task = log.eval.task.rsplit("/", 1)[-1]
            if log.status != "success":
                raise RuntimeError(
                    f"regression: {group.name}/{task}/{run.label} did not finish: {log.error or log.status}"
                )
            key = entry_key(group.name, task, run.label)
            entries[key] = {
                "group": group.name,
                "task": task,
                "solver": run.solver,
                "solver_args": {k: _shown(v) for k, v in run.args.items()},
                "limit": group.limit,
                "metrics": aggregate(sample_records(log)),
            }
    return entries


def _shown(value: Any) -> Any:
    """An option as stored in the baseline: paths inside the project relative to its root."""
    if isinstance(value, str) and value.startswith(str(HERE.parent) + "/"):
        return value[len(str(HERE.parent)) + 1 :]
    return value


def sample_records(log: EvalLog) -> list[SampleRecord]:
    """The gate's view of each logged sample: its first score as 0..1, error, metadata."""
    to_float = value_to_float()
    records = []
    for sample in log.samples or []:
        scores = list((sample.scores or {}).values())
        score = to_float(scores[0].value) if scores else None
        meta = (sample.metadata or {}).get("conductor") or {}
        records.append(SampleRecord(score=score, error=sample.error is not None, meta=meta))
    return records
