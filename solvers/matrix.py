"""The baselines matrix: every method of `solvers/matrix.yaml` on the chosen tasks as one
Inspect eval-set (resumable: a rerun retries what failed and skips what is done).

    python -m solvers.matrix --tasks gsm8k,math500 --pool local --limit 2 --log-dir logs/baselines
    nox -s baselines -- --tasks gpqa,math500 --pool sim --limit 20 --log-dir DIR

Trained routers whose file is missing are trained first (`solvers.routers.train`, on the
training splits of the chosen tasks that have one, else math500). A method that needs more
candidate outputs than the pool has workers (smoothie: 3) draws several answers per worker
(`-S samples_per_worker=k`, label suffix `_k<k>`). A method whose solver is not registered,
or that needs more workers than the pool has, is reported, not run.
`build_matrix` is pure: the runs for given arguments.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

MATRIX_FILE = Path(__file__).with_name("matrix.yaml")
METHOD_KEYS = {"name", "solver", "options", "pool_options", "per_worker", "min_workers", "min_outputs", "trained"}
SAMPLES_OPTION = "samples_per_worker"  # how a min_outputs method gets enough outputs from a small pool


@dataclass(frozen=True)
class Run:
    """One eval of the set: a task with one method's solver and options."""

    task: str
    method: str
    solver: str
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class Matrix:
    runs: list[Run]
    missing: list[str]  # methods whose solver is not registered
    skipped: list[str]  # methods the pool cannot run (too few workers)
    trained: list[str]  # solver names of trained routers among the runs


def load_matrix(path: Path = MATRIX_FILE) -> dict:
    data = yaml.safe_load(path.read_text())
    for number, method in enumerate(data.get("methods") or [], 1):
        unknown = set(method) - METHOD_KEYS
        if unknown or "name" not in method or "solver" not in method:
            raise ValueError(
                f"{path}: method {number} ({method.get('name')!r}) needs name and solver; unknown keys "
                f"{sorted(unknown)} (allowed: {', '.join(sorted(METHOD_KEYS))})"
            )
    return data


def build_matrix(
    methods: Sequence[dict],
    tasks: Sequence[str],
    pool: str,
    pool_size: int,
    registered: set[str],
    only: Sequence[str] | None = None,
) -> Matrix:
    """Every (task, method) run for a pool of `pool_size` workers; `only` keeps those methods."""
    if only:
        unknown = sorted(set(only) - {m["name"] for m in methods})
        if unknown:
            raise ValueError(f"unknown method(s) {unknown}; the matrix has {', '.join(m['name'] for m in methods)}")
    runs, missing, skipped, trained = [], [], [], []
    for method in methods:
        name, solver = method["name"], method["solver"]
        if only and name not in only:
            continue
        if solver not in registered:
            missing.append(f"{name}: solver {solver!r} is not registered (not implemented in this checkout)")
            continue
        if pool_size < method.get("min_workers", 1):
            skipped.append(f"{name}: needs at least {method['min_workers']} workers; pool {pool} has {pool_size}")
            continue
        base = {**(method.get("options") or {}), **(method.get("pool_options") or {}).get(pool, {}), "pool": pool}
        per_worker_samples = samples_needed(method.get("min_outputs", 1), pool_size)
        if per_worker_samples > 1:  # e.g. smoothie on a 2-worker pool: 2 answers each
            base[SAMPLES_OPTION] = per_worker_samples
            name = f"{name}_k{per_worker_samples}"
        variants = (
            [(f"{name}_w{i}", {**base, "worker": i}) for i in range(pool_size)]
            if method.get("per_worker")
            else [(name, base)]
        )
        runs += [Run(task, label, solver, options) for task in tasks for label, options in variants]
        if method.get("trained") and solver not in trained:
            trained.append(solver)
    return Matrix(runs, missing, skipped, trained)


def samples_needed(outputs: int, pool_size: int) -> int:
    """Answers per worker so that the pool gives at least `outputs` candidates."""
    return max(1, -(-outputs // pool_size))


def registered_solvers() -> set[str]:
    """Names of the solvers registered with Inspect (the project's included)."""
    from inspect_ai._util.registry import registry_find, registry_info

    import solvers._registry  # noqa: F401  (registers the project's solvers)

    return {registry_info(obj).name for obj in registry_find(lambda info: info.type == "solver")}


def task_function(name: str):  # noqa: ANN201
    """The @task of tasks/<name>.py (e.g. gpqa -> gpqa_diamond)."""
    from inspect_ai._util.registry import is_registry_object

    try:
        module = importlib.import_module(f"tasks.{name}")
    except ModuleNotFoundError as error:
        raise ValueError(
            f"no task file tasks/{name}.py; use the file name of a bundled task (gsm8k, gpqa, ...)"
        ) from error
    found = [
        obj
        for obj in vars(module).values()
        if is_registry_object(obj, type="task") and getattr(obj, "__module__", None) == module.__name__
    ]
    if len(found) != 1:
        raise ValueError(f"tasks/{name}.py defines {len(found)} tasks; expected one")
    return found[0]


def router_training_args(settings: dict, pool: str) -> list[str]:
    """The training command's flags for a pool (its own entry, else `default`)."""
    chosen = settings.get(pool) or settings.get("default") or {}
    return [item for key, value in chosen.items() for item in (f"--{key}", str(value))]


def train_missing_routers(trained: Sequence[str], tasks: Sequence[str], pool: str, training: dict) -> list[str]:
    """Train each router whose default file is missing; the summaries' lines."""
    from solvers.routers import train
    from solvers.routers.data import trainable
    from solvers.routers.solvers import default_router_file

    lines = []
    train_tasks = [t for t in tasks if t in trainable()] or ["math500"]
    for kind in trained:
        path = default_router_file(kind, pool)
        if path.is_file():
            lines.append(f"{kind}: using {path}")
            continue
        argv = [kind, "--pool", pool, "--task", ",".join(train_tasks), *router_training_args(training, pool)]
        print(f"training {kind}: python -m solvers.routers.train {' '.join(argv)}", flush=True)
        summary = train.main(argv, echo=False)  # one line below; the file keeps it all
        lines.append(f"{kind}: trained {summary['file']} (validation accuracy {summary['val_accuracy']:.3f})")
    return lines


def eval_tasks(runs: Sequence[Run]) -> list:
    from inspect_ai import task_with
    from inspect_ai._util.registry import registry_create

    def one(run: Run):  # noqa: ANN202
        made = task_function(run.task)()
        metadata = {**(made.metadata or {}), "matrix_method": run.method}  # e.g. consensus_w2, for reports
        return task_with(made, solver=registry_create("solver", run.solver, **run.options), metadata=metadata)

    return [one(run) for run in runs]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m solvers.matrix", description=__doc__.split("\n\n")[0])
    p.add_argument("--tasks", required=True, help="comma-separated task files: gsm8k,math500,gpqa,mmlu,...")
    p.add_argument("--pool", default="local", help="bundled pool name or pool YAML (default: local)")
    p.add_argument("--limit", type=int, default=None, help="samples per task")
    p.add_argument("--epochs", type=int, default=None, help="epochs per sample (reports show mean +- SE over them)")
    p.add_argument("--log-dir", default="logs/baselines", help="the eval-set's log directory (rerun to resume)")
    p.add_argument("--methods", default=None, help="comma-separated subset of the matrix's method names")
    p.add_argument("--model", default=None, help="eval model (the conductor when no conductor role is given)")
    p.add_argument("--model-role", action="append", default=[], help="role=model, e.g. conductor=openai/gpt-5")
    p.add_argument("--max-tasks", type=int, default=None, help="evals run in parallel")
    p.add_argument("--display", default=None, help="Inspect display: full, rich, plain, none (none: a progress line "
                   "per quarter of the evals)")  # fmt: skip
    p.add_argument("--matrix", default=str(MATRIX_FILE), help="the methods file")
    p.add_argument("--dry-run", action="store_true", help="print the runs and stop")
    return p


def refuse_mistakes(args: argparse.Namespace) -> None:
    """Raise ValueError, with one line saying what to give, for a count, task file, pool or method the runner
    cannot run (before anything is printed or run: `python -m reports reproduce` checks with it too)."""
    from workers.pools import load_pool

    if args.epochs is not None and args.epochs < 1:
        raise ValueError(f"--epochs {args.epochs}: give an integer >= 1")
    if args.limit is not None and args.limit < 0:  # 0 runs evals that score no sample: said, exit 1
        raise ValueError(f"--limit {args.limit}: give an integer >= 1")
    for name in task_names(args):
        task_function(name)
    load_pool(args.pool)
    names = [m["name"] for m in load_matrix(Path(args.matrix))["methods"]]
    if unknown := sorted(set(method_names(args) or []) - set(names)):
        raise ValueError(f"unknown method(s) {unknown}; the matrix has {', '.join(names)}")


def task_names(args: argparse.Namespace) -> list[str]:
    return [t.strip() for t in args.tasks.split(",") if t.strip()]


def method_names(args: argparse.Namespace) -> list[str] | None:
    return [m.strip() for m in args.methods.split(",")] if args.methods else None


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    refuse_mistakes(args)
    from workers.pools import load_pool

    data = load_matrix(Path(args.matrix))
    tasks = task_names(args)
    pool = load_pool(args.pool)
    matrix = build_matrix(
        data["methods"], tasks, args.pool, len(pool.workers), registered_solvers(), method_names(args)
    )
    print(f"{len(matrix.runs)} evals: {len(tasks)} task(s) x methods on pool {pool.name} ({len(pool.workers)} workers)")
    for line in [*(f"NOT RUN (missing) {m}" for m in matrix.missing), *(f"NOT RUN (pool) {m}" for m in matrix.skipped)]:
        print(line)
    if args.dry_run:
        for run in matrix.runs:
            print(f"  {run.task:12} {run.method:24} {run.solver} {run.options}")
        return 2 if matrix.missing else 0
    from inspect_ai import eval_set

    from solvers.eval_status import eval_problems
    from solvers.matrix_progress import Quarters, follow

    roles = dict(role.split("=", 1) for role in args.model_role)
    with follow(Quarters()) if args.display == "none" else nullcontext():  # Inspect draws nothing: a line a quarter
        for line in train_missing_routers(matrix.trained, tasks, args.pool, data.get("router_training") or {}):
            print(line)
        success, logs = eval_set(
            eval_tasks(matrix.runs),
            log_dir=args.log_dir,
            model=args.model,
            model_roles=roles or None,
            limit=args.limit,
            epochs=args.epochs,
            max_tasks=args.max_tasks,
            display=args.display,
        )
    print(f"eval-set {'complete' if success else 'INCOMPLETE (rerun the same command to retry)'}: {args.log_dir}")
    for line in [*(f"NOT RUN (missing) {m}" for m in matrix.missing), *(f"NOT RUN (pool) {m}" for m in matrix.skipped)]:
        print(line)
    problems = eval_problems(logs)
    for line in problems:
        print(f"FAILED {line}")
    return 0 if success and not matrix.missing and not problems else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ValueError as error:
        sys.exit(f"error: {error}")
