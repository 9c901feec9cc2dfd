"""Logged evals as one pandas frame: a row per (log, sample, epoch), read with `inspect_ai.analysis`.

`load_samples(log_dir)` reads every Inspect log under a directory with `samples_df` and custom
columns (the eval's task, plan, metadata and roles; the sample's score, error and the
`metadata["conductor"]` record turned into flat numbers by `reports.records.sample_fields`), then
adds the row identity of `reports.records.run_fields` per log. Score rule: the first scorer's
value through Inspect's `value_to_float` (C = 1, I = 0, P = 0.5), NaN when the sample errored or
holds no score; the tables and plots count NaN as wrong and report errors apart.
`load_training(run_dir)` reads a training run (rollouts.jsonl, run_info.json) with
`reports.plots.read_run`.
"""

from __future__ import annotations

import inspect
import json
import math
import re
import sys
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from urllib.parse import unquote

import pandas as pd

from reports.diagnostics import input_text, sample_features
from reports.records import paper_column, run_fields, sample_fields

_VARIANT = re.compile(r"_(w|k)\d{1,4}$")  # matrix labels: consensus_w2, smoothie_independent_k2


def _task(log) -> str:  # noqa: ANN001
    return str(log.eval.task).rsplit("/", 1)[-1]


def _plan(log) -> str:  # noqa: ANN001
    """The solver step of the plan: name, all parameters, the ones passed (JSON)."""
    steps = [s for s in (log.plan.steps if log.plan else []) if s.solver]
    if not steps:
        return json.dumps({"solver": log.eval.solver, "params": log.eval.solver_args or {}, "passed": None})
    step = steps[-1]
    return json.dumps({"solver": step.solver, "params": step.params, "passed": step.params_passed}, default=str)


def _expected(log) -> int | None:  # noqa: ANN001
    """Samples x epochs the eval meant to run (None when the header does not say)."""
    ids = log.eval.dataset.sample_ids
    epochs = log.eval.config.epochs or 1
    return len(ids) * epochs if ids is not None else None


def _score(sample) -> float:  # noqa: ANN001
    from inspect_ai.scorer import value_to_float

    if sample.error or not sample.scores:
        return math.nan
    value = next(iter(sample.scores.values())).value
    try:
        return float(value_to_float()(value))
    except (TypeError, ValueError):
        return math.nan


def _fields(sample) -> str:  # noqa: ANN001
    usage = {k: u.model_dump() for k, u in (sample.model_usage or {}).items()}
    fields = sample_fields((sample.metadata or {}).get("conductor"), usage)
    meta = (sample.metadata or {}).get("conductor") or {}
    fields["pool_indices"] = list(meta.get("pool_indices") or [])
    target = sample.target[0] if isinstance(sample.target, list) and sample.target else sample.target
    scorer = next(iter(sample.scores), None) if sample.scores else None
    fields["diag"] = sample_features(meta, input_text(sample.input), str(target or ""), scorer)
    return json.dumps(fields, default=str)


def _columns() -> list:
    from inspect_ai.analysis import EvalColumn, SampleColumn

    return [
        EvalColumn("eval_id", path="eval.eval_id", required=True),
        EvalColumn("log", path=lambda log: log.location, required=True),
        EvalColumn("created", path="eval.created", required=True),
        EvalColumn("status", path="status"),
        EvalColumn("task", path=_task, required=True),
        EvalColumn("plan", path=_plan),
        EvalColumn("eval_meta", path=lambda log: json.dumps(log.eval.metadata or {}, default=str)),
        EvalColumn("model", path="eval.model"),
        EvalColumn(
            "roles",
            path=lambda log: json.dumps({k: v.model for k, v in (log.eval.model_roles or {}).items()}, default=str),
        ),
        EvalColumn("expected", path=_expected),
        SampleColumn("id", path="id", required=True, type=str),  # Inspect owns "sample_id"
        SampleColumn("epoch", path="epoch", required=True),
        SampleColumn("score", path=_score, full=True),
        SampleColumn("error", path=lambda s: s.error.message if s.error else None, full=True),
        SampleColumn("fields", path=_fields, full=True),
    ]


def read_frame(log_dir: str | Path, *, progress: Callable[[str], None] | None = None) -> pd.DataFrame:
    """The raw rows of every log under `log_dir` (Inspect's `samples_df`)."""
    from inspect_ai.analysis import samples_df
    from inspect_ai.log import list_eval_logs

    logs = list_eval_logs(str(log_dir), recursive=True)
    if progress:
        progress(f"reading {len(logs)} log(s) under {log_dir}")
    if not logs:
        return pd.DataFrame()

    def read(paths: list) -> tuple[pd.DataFrame, list]:
        return samples_df(
            paths,
            columns=_columns(),
            full=True,
            strict=False,
            quiet=not sys.stderr.isatty(),  # its progress bar
            exclude_fields={"messages", "events", "store", "attachments"},
        )

    try:
        frame, errors = read(logs)
    except Exception:  # noqa: BLE001  (one unreadable file, e.g. an eval still writing: skip it, keep the rest)
        readable = [log for log in logs if _readable(log, progress)]
        if not readable:
            return pd.DataFrame()
        frame, errors = read(readable)
    for error in errors[:20]:
        if progress:
            progress(f"warning: {error}")
    return frame


def _readable(log, progress: Callable[[str], None] | None) -> bool:  # noqa: ANN001
    from inspect_ai.log import read_eval_log

    try:
        read_eval_log(log, header_only=True)
        return True
    except Exception as error:  # noqa: BLE001
        if progress:
            progress(f"skipping unreadable log {log.name}: {type(error).__name__}: {str(error)[:200]}")
        return False


def load_samples(log_dir: str | Path, *, progress: Callable[[str], None] | None = None) -> pd.DataFrame:
    """One row per (log, sample, epoch) with the columns of CONTRACTS.md item 7 (module docstring)."""
    raw = read_frame(log_dir, progress=progress)
    if raw.empty:
        return pd.DataFrame(columns=COLUMNS)
    raw = raw.drop(columns=[c for c in ("sample_id", "eval_id_") if c in raw]).rename(columns={"id": "sample_id"})
    fields = pd.DataFrame([json.loads(f) for f in raw["fields"]], index=raw.index)
    recorded_method = fields.pop("method")
    frame = pd.concat([raw.drop(columns=["fields"]), fields], axis=1)
    ident = {log: identity(group, recorded_method.loc[group.index]) for log, group in frame.groupby("log", sort=False)}
    ident_frame = pd.DataFrame([ident[log] for log in frame["log"]], index=frame.index)
    frame = pd.concat([frame, ident_frame], axis=1)
    frame["paper_column"] = frame["task"].map(paper_column)
    score = pd.to_numeric(frame["score"], errors="coerce")
    frame["score"] = score.to_numpy(dtype=float, na_value=math.nan)  # plain float: NaN, never pd.NA
    frame["error"] = frame["error"].where(frame["error"].notna(), None)
    frame["created"] = frame["created"].astype(str)
    frame["log"] = frame["log"].map(_shown_path)
    return frame.reset_index(drop=True)


@lru_cache(maxsize=4096)
def _shown_path(location: str) -> str:
    """A log's location as shown: relative to the working directory when under it, else as is."""
    path = unquote(location[len("file://") :]) if location.startswith("file://") else location
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return path


def identity(group: pd.DataFrame, recorded_method: pd.Series) -> dict:
    """The row identity of one log's samples: solver, options that differ from its defaults, pool."""
    plan = json.loads(group["plan"].iloc[0] or "{}")
    meta = json.loads(group["eval_meta"].iloc[0] or "{}")
    roles = json.loads(group["roles"].iloc[0] or "{}")
    solver = plan.get("solver") or next((m for m in recorded_method if m), None)
    params = dict(plan.get("params") or {})
    defaults = solver_defaults(solver)
    passed = plan.get("passed")
    if defaults is None and passed is not None:
        params = dict(passed)  # unknown solver: what was passed is what differs
    pool_map: dict[int, str] = {}
    for indices, names in zip(group["pool_indices"], group["workers"], strict=True):
        pool_map.update(zip(indices or range(len(names or [])), names or [], strict=False))
    workers = [pool_map[i] for i in sorted(pool_map)] if pool_map else []
    if pool_map and sorted(pool_map) != list(range(len(pool_map))):
        workers = [pool_map.get(i, "") for i in range(max(pool_map) + 1)]  # "": a slot no sample used
    conductors = [c for c in group["conductor_model"] if isinstance(c, str) and c]
    # the conductor role only names the conductor when no sample recorded who conducted (a baseline
    # records conductor None and ignores the role)
    conductor = conductors[0] if conductors else (None if group["recorded"].any() else roles.get("conductor"))
    fields = run_fields(solver, params, None, defaults, workers, conductor, solver)
    if fields["conductor_short"]:
        fields["label"] += f" [conductor {fields['conductor_short']}]"
    matrix = meta.get("matrix_method")
    fields["matrix_method"] = matrix or ""
    fields["matrix_base"] = _VARIANT.sub("", _VARIANT.sub("", matrix)) if matrix else ""
    fields["solver"] = solver or "unknown"
    fields["options"] = json.dumps({k: v for k, v in params.items() if k != "pool"}, sort_keys=True, default=str)
    return fields


@lru_cache(maxsize=64)
def _signature_defaults(solver: str) -> tuple | None:
    try:
        from inspect_ai._util.registry import registry_lookup

        import conductor_model._registry  # noqa: F401  (registers the project's solvers and providers)

        obj = registry_lookup("solver", solver)
    except Exception:  # noqa: BLE001  (a report must build without the solver's code)
        return None
    if obj is None:
        return None
    params = inspect.signature(obj).parameters.items()
    return tuple((k, p.default) for k, p in params if p.default is not inspect.Parameter.empty)


def solver_defaults(solver: str | None) -> dict | None:
    """The registered solver's keyword defaults (None when it is not importable here)."""
    found = _signature_defaults(solver) if solver else None
    return dict(found) if found is not None else None


def load_training(run_dir: str | Path) -> tuple[pd.DataFrame, dict]:
    """A training run's rollouts (one row each) and run_info (`reports.plots.read_run`)."""
    from reports.plots import read_run

    return read_run(run_dir)


COLUMNS = [
    "method",
    "key",
    "label",
    "pool",
    "pool_kind",
    "setting",
    "conductor_short",
    "matrix_method",
    "matrix_base",
    "solver",
    "options",
    "recorded",
    "parsed",
    "steps",
    "agent_calls",
    "calls",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "conductor_model",
    "workers",
    "strategy",
    "step_models",
    "nested_step_models",
    "graph",
    "settings",
    "pool_indices",
    "diag",
    "task",
    "paper_column",
    "epoch",
    "sample_id",
    "score",
    "error",
    "log",
    "eval_id",
    "created",
    "status",
    "model",
    "expected",
]
