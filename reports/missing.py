"""Which rows a table expects on a pool, and the exact command that fills a missing cell.

Expected rows come from the matrix runner's methods files (`solvers/matrix.yaml`,
`solvers/ablations.yaml`) built for the pool (`solvers.matrix.build_matrix`), keyed like the
logged rows (`reports.records.run_fields`). A missing cell is filled by the matrix runner
(`python -m solvers.matrix --matrix FILE --tasks T --pool P --methods M --log-dir DIR`, resumable:
it skips what is done); a logged row that no methods file produces gets the `inspect eval`
command of its own solver and options.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pandas as pd

from reports.records import PAPER_COLUMNS, run_fields
from reports.tables import Built, Spec

ROOT = Path(__file__).resolve().parent.parent
TASK_FILES = {"gpqa_diamond": "gpqa"}  # Inspect task name -> tasks/<file>.py where they differ
COLUMN_TASKS = {column: task for task, column in PAPER_COLUMNS.items()}


Places = Mapping[str, tuple[str, "int | None"]]  # pool -> (its log dir, its --limit)
DEFAULT_PLACE = ("logs/reproduce", None)


def places(frame: pd.DataFrame, log_dir: str) -> dict[str, tuple[str, int | None]]:
    """Per pool: the directory most of its logs sit in (a command adds to that eval-set) and the
    most distinct samples one method ran on one task there (the --limit the commands repeat)."""
    out: dict[str, tuple[str, int | None]] = {}
    if not len(frame):
        return out
    for pool, rows in frame.groupby("pool"):
        parents = rows["log"].map(lambda p: str(Path(p).parent)).value_counts()
        limit = int(rows.groupby(["key", "task"])["sample_id"].nunique().max())
        out[str(pool)] = (str(parents.index[0]) if len(parents) else log_dir, limit)
    return out


def task_file(column: str) -> str:
    task = COLUMN_TASKS.get(column, column)
    return TASK_FILES.get(task, task)


@dataclass(frozen=True)
class Expected:
    key: str
    label: str
    file: str  # methods file, relative to the project root
    method: str  # the methods file's method name (what --methods takes)


@lru_cache(maxsize=32)
def expected_runs(pool: str) -> tuple[Expected, ...]:
    """Every row the methods files give on `pool` (empty when the pool cannot be loaded here)."""
    from reports.frame import solver_defaults
    from solvers.matrix import build_matrix, load_matrix, registered_solvers

    try:
        from workers.pools import load_pool

        workers = [w.model for w in load_pool(pool).workers]
    except Exception:  # noqa: BLE001  (a pool file of another machine: no expectations)
        return ()
    out: list[Expected] = []
    registered = registered_solvers()  # a solver this checkout lacks is not expected (the runner skips it)
    for file in ("solvers/matrix.yaml", "solvers/ablations.yaml"):
        methods = load_matrix(ROOT / file)["methods"]
        matrix = build_matrix(methods, ["task"], pool, len(workers), registered)
        for run in matrix.runs:
            base = next(m["name"] for m in sorted(methods, key=lambda m: -len(m["name"]))
                        if run.method == m["name"] or run.method.startswith(m["name"] + "_"))
            fields = run_fields(run.solver, run.options, None, solver_defaults(run.solver), workers, None)
            out.append(Expected(fields["key"], fields["label"], file, base))
    return tuple(out)


def expected_rows(spec: Spec, pool: str) -> list[tuple[str, str]]:
    """(key, label) of the rows `spec` expects on `pool` (its methods files' methods)."""
    rows = []
    for file, names in spec.expected:
        for e in expected_runs(pool):
            if e.file == file and ("*" in names or e.method in names) and spec.rows(e.key):
                rows.append((e.key, e.label))
    return list(dict.fromkeys(rows))


def needs(built: Built, frame: pd.DataFrame) -> dict[tuple, set[str]]:
    """How to run each row with missing cells -> the task files it lacks."""
    by_label = _row_sources(built, frame) if built.missing else {}
    groups: dict[tuple, set[str]] = {}
    for label, column in built.missing:
        if label in by_label:
            groups.setdefault(by_label[label], set()).add(task_file(column))
    return groups


def rerun_commands(built: Built, frame: pd.DataFrame, places: Places) -> list[str]:
    """The commands that (re)make `built`'s present cells (provenance: the runner is resumable)."""
    sources = _row_sources(built, frame)
    present = built.long[(built.long["samples"] > 0) & built.long["column"].isin(built.spec.columns)]
    groups: dict[tuple, set[str]] = {}
    for label, column in zip(present["row"], present["column"], strict=True):
        if label in sources:
            groups.setdefault(sources[label], set()).add(task_file(column))
    return _commands(groups, built.pool, places)


def commands(built: Built, frame: pd.DataFrame, places: Places) -> list[str]:
    """The commands that fill `built`'s missing cells (one per row source)."""
    return _commands(needs(built, frame), built.pool, places)


def _commands(groups: dict[tuple, set[str]], pool: str, places: Places) -> list[str]:
    """Matrix rows with the same methods file and tasks share one command (--methods a,b)."""
    merged: dict[tuple, list[str]] = {}
    out = set()
    log_dir, limit = places.get(pool, DEFAULT_PLACE)
    for source, tasks in groups.items():
        if source[0] == "matrix":
            merged.setdefault((source[1], tuple(sorted(tasks))), []).append(source[2])
        else:
            out.add(_command(source, sorted(tasks), pool, log_dir, limit))
    for (file, tasks), methods in merged.items():
        out.add(_command(("matrix", file, ",".join(sorted(set(methods)))), tasks, pool, log_dir, limit))
    return sorted(out)


def _row_sources(built: Built, frame: pd.DataFrame) -> dict[str, tuple]:
    """Row label -> how to run it: ("matrix", file, method) or ("eval", solver, options, conductor)."""
    known: dict[str, Expected] = {}
    for e in expected_runs(built.pool):  # the first methods file that has a key or method wins
        known.setdefault(e.key, e)
    rows = frame[frame["pool"] == built.pool] if len(frame) else frame
    out = {}
    for label, key in zip(built.wide["row"], built.wide["key"], strict=True):
        logged = rows[rows["key"] == key] if len(rows) else rows
        if len(logged) and logged["matrix_base"].iloc[0]:
            base = logged["matrix_base"].iloc[0]
            file = next((e.file for e in known.values() if e.method == base), "solvers/matrix.yaml")
            out[label] = ("matrix", file, base)
        elif key in known:
            out[label] = ("matrix", known[key].file, known[key].method)
        elif len(logged):
            first = logged.iloc[0]
            conductor = first["conductor_model"] if isinstance(first["conductor_model"], str) else ""
            out[label] = ("eval", first["solver"], first["options"], conductor)
    return out


def _command(source: tuple, tasks: Sequence[str], pool: str, log_dir: str, limit: int | None) -> str:
    lim = [f"--limit {limit}"] if limit else []
    if source[0] == "matrix":
        _, file, method = source
        matrix = [] if file == "solvers/matrix.yaml" else [f"--matrix {file}"]
        parts = ["python -m solvers.matrix", *matrix, f"--tasks {','.join(tasks)}", f"--pool {shlex.quote(pool)}",
                 f"--methods {method}", *lim, f"--log-dir {shlex.quote(log_dir)}"]
        return " ".join(parts)
    _, solver, options, conductor = source
    opts = json.loads(options or "{}")
    s_args = [f"-S {k}={shlex.quote(_plain(v))}" for k, v in sorted(opts.items()) if v is not None]
    role = [f"--model-role conductor={shlex.quote(conductor)}"] if conductor else []
    return " && ".join(
        " ".join(["inspect eval", f"tasks/{t}.py", f"--solver {solver}", f"-S pool={shlex.quote(pool)}", *s_args,
                  *role, *lim, f"--log-dir {shlex.quote(log_dir)}"])
        for t in tasks
    )


def _plain(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def incomplete(frame: pd.DataFrame) -> list[str]:
    """Markdown lines naming the logs whose eval did not finish (status other than success)."""
    if not len(frame) or "status" not in frame:
        return []
    bad = frame[frame["status"].fillna("") != "success"].groupby("log", sort=True)
    lines = [f"- {log}: status {rows['status'].iloc[0]}, {len(rows)} of "
             f"{int(rows['expected'].max()) if rows['expected'].notna().any() else '?'} samples x epochs held"
             for log, rows in bad]
    if not lines:
        return []
    return ["## Logs whose eval did not finish (rerun the same command: the matrix runner retries them)", "",
            *lines, ""]


def listing(tables: Iterable[Built], frame: pd.DataFrame, places: Places) -> str:
    """Markdown: per table and pool, the missing cells and the commands that fill them."""
    lines = ["# Missing cells", "",
             "Cells without logged samples, per table and pool, with the commands that fill them "
             "(the matrix runner is resumable: it skips what is already in the log dir).", ""]
    merged: dict[tuple, set[str]] = {}
    for built in tables:
        if not built.missing:
            continue
        lines.append(f"## {built.heading}")
        by_row: dict[str, list[str]] = {}
        for label, column in built.missing:
            by_row.setdefault(label, []).append(column)
        lines += [f"- {label}: {', '.join(cols)}" for label, cols in by_row.items()]
        for source, tasks in needs(built, frame).items():
            merged.setdefault((built.pool, source), set()).update(tasks)
        lines += ["", "```", *commands(built, frame, places), "```", ""]
    if len(lines) == 4:
        lines += ["None: every expected cell has samples.", ""]
    if merged:
        lines += ["## All commands (every table's gaps, merged per method)", "", "```"]
        for pool in sorted({p for p, _ in merged}):
            lines += _commands({src: t for (p, src), t in merged.items() if p == pool}, pool, places)
        lines += ["```", ""]
    lines += incomplete(frame)
    return "\n".join(lines) + "\n"
