"""The held-out protocol of the training sweeps (experiments/sim_routing), shared by
`experiments/cost_sweep/sweep.py` and `experiments/seeds/sweep.py`: the first `limit` MATH-500 and MMLU
`split=test` questions (the recipe's `math500_file` / `mmlu_file` if set), generation seed `seed`;
a trained conductor with the recipe's prompt options; every pool member alone (`single_worker`).

`evaluate` runs one method in this process and returns a row per sample; `eval_command` is the
same evaluation of one conductor as `inspect eval` command lines, for reproducing a row by hand;
`python -m experiments.heldout RECIPE [train.py overrides] --label L --run DIR --rows FILE ...`
(`process_command`) evaluates one trained conductor in a process of its own, the rows written to FILE
as JSON: the sweeps run several side by side (each on the GPU, or a share of the cores).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from tasks.catalog import benchmark

BASELINE = "single worker"


def eval_tasks(script: Any) -> list:
    """The held-out benchmarks: MATH-500 and MMLU split=test (fresh Task objects)."""
    from tasks.math500 import math500
    from tasks.mmlu import mmlu

    args = task_args(script)
    return [math500(**args["math500"]), mmlu(**args["mmlu"])]


def task_args(script: Any) -> dict[str, dict]:
    """Per benchmark (Inspect task name), its task arguments in the protocol (None left out)."""
    args = {"math500": {"data_file": script.math500_file}, "mmlu": {"split": "test", "data_file": script.mmlu_file}}
    return {task: {k: v for k, v in given.items() if v is not None} for task, given in args.items()}


def conductor_options(script: Any, config: Any, temperature: float) -> dict:
    """The `conductor` solver's options for a model trained with this recipe (its pool, few_shot,
    workflow_max_steps, access, question and max_completion_length) at `temperature`."""
    return dict(pool=script.pool, few_shot=script.few_shot, max_steps=script.workflow_max_steps,
                access=script.access, question=script.question, max_tokens=config.max_completion_length,
                temperature=temperature)  # fmt: skip


def conductor_method(label: str, run: Path, options: Mapping[str, Any]) -> dict:
    """A trained conductor (the model saved in `run`) as a method: label, kind, solver, model roles."""
    from solvers.conductor import conductor

    return {"label": label, "kind": "conductor", "solver": conductor(**options), "roles": {"conductor": f"hf/{run}"}}


def single_workers(pool: str) -> list[dict]:
    """Every member of `pool` alone, as methods labelled with the worker's model name."""
    from solvers.baselines import single_worker
    from workers.pools import load_pool

    return [{"label": worker.model, "kind": BASELINE, "solver": single_worker(worker=i, pool=pool), "roles": {}}
            for i, worker in enumerate(load_pool(pool).workers)]  # fmt: skip


def sample_rows(label: str, task: str, samples: Iterable[Any]) -> list[dict]:
    """A row per logged sample: label, task, score (a float; None without a score), worker cost,
    agent calls and `workers_used` (the short names of the workers its workflow ran, nested
    rounds included, sorted; empty when no workflow ran)."""
    from inspect_ai.scorer import value_to_float

    from reports.records import short
    from solvers.strategy import step_models

    to_float, rows = value_to_float(), []
    for sample in samples:
        meta = (sample.metadata or {}).get("conductor") or {}
        score = next(iter(sample.scores.values()), None) if sample.scores else None
        rows.append({"label": label, "task": task, "score": to_float(score.value) if score is not None else None,
                     "cost_usd": meta.get("worker_cost_usd"), "agent_calls": meta.get("agent_calls"),
                     "workers_used": sorted({short(m) for m in step_models(meta.get("round"))})})  # fmt: skip
    return rows


def evaluate(method: dict, tasks: list, log_dir: Path, limit: int, seed: int) -> list[dict]:
    """One method on the held-out tasks (fresh ones: `eval_tasks`), logs in `log_dir`: `sample_rows`."""
    from inspect_ai import eval as inspect_eval

    from solvers.batch_eval import UNWATCHED
    from solvers.eval_status import eval_problems

    logs = inspect_eval(tasks, solver=method["solver"], model_roles=method["roles"] or None, limit=limit,
                        seed=seed, log_dir=str(log_dir), **UNWATCHED)  # fmt: skip
    problems = eval_problems(logs)
    if problems:
        raise SystemExit("\n".join(f"error: {method['label']} on {line}" for line in problems))
    return [row for log in logs for row in sample_rows(method["label"], log.eval.task, log.samples or [])]


def cli_value(value: Any) -> str:
    """An option value as Inspect's `-S` / `-T` read it back (YAML): booleans lower case."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def eval_command(script: Any, options: Mapping[str, Any], run: Path, limit: int, seed: int) -> str:
    """`evaluate` of the conductor saved in `run` as `inspect eval` command lines (one per
    benchmark, joined by `&&`), ready to paste into a shell."""
    solver = [a for k, v in options.items() if v is not None for a in ("-S", f"{k}={cli_value(v)}")]
    commands = []
    for task, args in task_args(script).items():
        targs = [a for k, v in args.items() for a in ("-T", f"{k}={cli_value(v)}")]
        file = f"tasks/{benchmark(task).file}.py"
        commands.append(shlex.join(["inspect", "eval", file, *targs, "--solver", "conductor", *solver,
                                    "--model-role", f"conductor=hf/{run}", "--limit", str(limit),
                                    "--seed", str(seed)]))  # fmt: skip
    return " && ".join(commands)


def process_command(recipe: str, extra: Iterable[str], label: str, run: Path, limit: int, seed: int,
                    temperature: float, log_dir: Path, rows: Path) -> list[str]:  # fmt: skip
    """This module's command line (through this interpreter) evaluating the conductor saved in `run`."""
    return [sys.executable, "-m", "experiments.heldout", recipe, *extra, "--label", label, "--run", str(run),
            "--limit", str(limit), "--eval_seed", str(seed), "--eval_temperature", str(temperature),
            "--log_dir", str(log_dir), "--rows", str(rows)]  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    """Evaluate one trained conductor (the recipe's options, `train.py` overrides after it) and write
    its `sample_rows` as JSON."""
    ap = argparse.ArgumentParser(description="the held-out protocol for one trained conductor", allow_abbrev=False)
    ap.add_argument("recipe", help="the recipe the conductor was trained with (its prompt options)")
    ap.add_argument("--label", required=True, help="the method's label in the rows")
    ap.add_argument("--run", type=Path, required=True, help="the training run whose saved model is evaluated")
    ap.add_argument("--limit", type=int, default=40, help="held-out questions per benchmark")
    ap.add_argument("--eval_seed", type=int, default=0, help="generation seed of the evals")
    ap.add_argument("--eval_temperature", type=float, default=0.1, help="conductor temperature")
    ap.add_argument("--log_dir", type=Path, required=True, help="where Inspect writes the logs")
    ap.add_argument("--rows", type=Path, required=True, help="the JSON file of the rows, one per sample")
    args, extra = ap.parse_known_args(argv)
    from training.options import parse

    script, config, _ = parse([args.recipe, *extra])
    method = conductor_method(args.label, args.run, conductor_options(script, config, args.eval_temperature))
    rows = evaluate(method, eval_tasks(script), args.log_dir, args.limit, args.eval_seed)
    args.rows.write_text(json.dumps(rows))


if __name__ == "__main__":
    main()
