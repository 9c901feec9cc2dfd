"""Which rows a table expects on a pool, and the exact command that fills a missing cell.

Expected rows come from the matrix runner's methods files (`solvers/matrix.yaml`,
`solvers/ablations.yaml`) built for the pool (`solvers.matrix.build_matrix`), keyed like the
logged rows (`reports.records.run_fields`). A missing cell is filled by the matrix runner
(`python -m solvers.matrix --matrix FILE --tasks T --pool P --methods M --log-dir DIR`, resumable:
it skips what is done); a logged row that no methods file produces gets the `inspect eval`
command of its own solver and options. A pool is named as the tables name it (`workers.redact.pool_label`:
a pool file by its stem, never a host path), with a note where that name is not a bundled pool. Log
text is untrusted: each name from a log is `checked` before it enters a command and every argument is
shell-quoted (`shlex.join`); a name that fails its check leaves its command out with a note that names
the field, the value and the rule.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache, partial
from pathlib import Path

import pandas as pd

from reports.records import run_fields
from reports.tables import Built, Spec, md_text
from tasks.catalog import benchmark, benchmarks

ROOT = Path(__file__).resolve().parent.parent


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
    """The task file (`tasks/<file>.py`) of a table's column: its benchmark's (by paper column or
    task name), else the column's own name."""
    declared = next((b for b in benchmarks() if b.paper_column == column), None) or benchmark(column)
    return declared.file if declared is not None else column


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
            base = next(
                m["name"]
                for m in sorted(methods, key=lambda m: -len(m["name"]))
                if run.method == m["name"] or run.method.startswith(m["name"] + "_")
            )
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


Commands = tuple[list[str], list[str]]  # (commands, notes on the commands left out)


def rerun_commands(built: Built, frame: pd.DataFrame, places: Places) -> Commands:
    """The commands that (re)make `built`'s present cells (provenance: the runner is resumable)."""
    sources = _row_sources(built, frame)
    present = built.long[(built.long["samples"] > 0) & built.long["column"].isin(built.spec.columns)]
    groups: dict[tuple, set[str]] = {}
    for label, column in zip(present["row"], present["column"], strict=True):
        if label in sources:
            groups.setdefault(sources[label], set()).add(task_file(column))
    return _commands(groups, built.pool, places)


def commands(built: Built, frame: pd.DataFrame, places: Places) -> Commands:
    """The commands that fill `built`'s missing cells (one per row source)."""
    return _commands(needs(built, frame), built.pool, places)


def _commands(groups: dict[tuple, set[str]], pool: str, places: Places) -> Commands:
    """Matrix rows with the same methods file and tasks share one command (--methods a,b). A name a
    command may not hold (`Refused`) leaves out its task, method or row with a note saying why."""
    merged: dict[tuple, list[str]] = {}
    out, notes = set(), set()
    log_dir, limit = places.get(pool, DEFAULT_PLACE)

    def attempt(make: Callable[[], str]) -> str | None:
        try:
            return make()
        except Refused as why:
            notes.add(f"command left out: {why}")
            return None

    for source, tasks in groups.items():
        allowed = tuple(t for t in sorted(tasks) if attempt(partial(checked, "task", t)))
        if not allowed:
            continue
        if source[0] == "matrix":
            if attempt(partial(checked, "matrix method", source[2])):
                merged.setdefault((source[1], allowed), []).append(source[2])
        else:
            out.add(attempt(partial(_command, source, allowed, pool, log_dir, limit)))
    for (file, tasks), methods in merged.items():
        source = ("matrix", file, ",".join(sorted(set(methods))))
        out.add(attempt(partial(_command, source, tasks, pool, log_dir, limit)))
    out -= {None}
    if out and pool not in bundled():
        notes.add(
            f"pool {pool} is not bundled: the report names a pool file by its stem, not its path; give that "
            f"file's path in place of {pool} in these commands"
        )
    return sorted(out), sorted(notes)


@lru_cache(maxsize=1)
def bundled() -> frozenset[str]:
    """The bundled pools' names (what a command's --pool / -S pool may name without a path)."""
    from workers.pools import bundled_pools

    return frozenset(bundled_pools())


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


class Refused(ValueError):
    """A name from a log that a suggested command may not hold (the command is left out)."""


# what each name from a log may be in a suggested command: (pattern, the rule in words)
NAMES = {
    "task": (re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}"), "letters, digits and _"),
    "solver": (
        re.compile(r"[A-Za-z_][A-Za-z0-9_.]{0,99}(?:/[A-Za-z_][A-Za-z0-9_.]{0,99})?"),
        "letters, digits, _ and ., one / (package/name)",
    ),
    "matrix method": (re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,99}"), "letters, digits, _ . -"),
    "option name": (re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}"), "a Python identifier"),
    "conductor model": (
        re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:@+/-]{0,199}"),
        "letters, digits and _ . : @ + / -, not starting with -",
    ),
}


def checked(field: str, value: object) -> str:
    """`value` as text when a command may hold it as `field`; else `Refused`, naming the field and the rule.
    Names must match `NAMES[field]`; other values (pool, log dir, option value) must be printable text
    on one line (a pool or log dir non-empty and not starting with -)."""
    text = str(value)
    if field in NAMES:
        pattern, rule = NAMES[field]
        ok = pattern.fullmatch(text) is not None
    elif field == "option value":
        rule, ok = "printable characters on one line", text.isprintable()
    else:
        rule = "printable characters on one line, not starting with -"
        ok = text.isprintable() and bool(text) and not text.startswith("-")
    if not ok:
        raise Refused(
            f"the log's {field} {ascii(text)[:80]} is not allowed in a command ({rule}); "
            "check the log (inspect view) and run it by hand"
        )
    return text


def _command(source: tuple, tasks: Sequence[str], pool: str, log_dir: str, limit: int | None) -> str:
    """One pasteable command line: every name from a log `checked`, every argument shell-quoted."""
    tasks = [checked("task", t) for t in tasks]
    pool, log_dir = checked("pool", pool), checked("log dir", log_dir)
    lim = ["--limit", str(int(limit))] if limit else []
    if source[0] == "matrix":
        _, file, methods = source
        matrix = [] if file == "solvers/matrix.yaml" else ["--matrix", file]
        methods = ",".join(checked("matrix method", m) for m in methods.split(","))
        return shlex.join(
            [
                "python",
                "-m",
                "solvers.matrix",
                *matrix,
                "--tasks",
                ",".join(tasks),
                "--pool",
                pool,
                "--methods",
                methods,
                *lim,
                "--log-dir",
                log_dir,
            ]
        )
    _, solver, options, conductor = source
    opts = json.loads(options or "{}")
    s_args = [
        a
        for k, v in sorted(opts.items())
        if v is not None
        for a in ("-S", f"{checked('option name', k)}={checked('option value', _plain(v))}")
    ]
    role = ["--model-role", f"conductor={checked('conductor model', conductor)}"] if conductor else []
    head = ["--solver", checked("solver", solver), "-S", f"pool={pool}", *s_args, *role, *lim, "--log-dir", log_dir]
    return " && ".join(shlex.join(["inspect", "eval", f"tasks/{t}.py", *head]) for t in tasks)


def _plain(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def incomplete(frame: pd.DataFrame) -> list[str]:
    """Markdown lines naming the logs whose eval did not finish (status other than success)."""
    if not len(frame) or "status" not in frame:
        return []
    bad = frame[frame["status"].fillna("") != "success"].groupby("log", sort=True)
    lines = [
        f"- {md_text(log)}: status {md_text(rows['status'].iloc[0])}, {len(rows)} of "
        f"{int(rows['expected'].max()) if rows['expected'].notna().any() else '?'} samples x epochs held"
        for log, rows in bad
    ]
    if not lines:
        return []
    return [
        "## Logs whose eval did not finish (rerun the same command: the matrix runner retries them)",
        "",
        *lines,
        "",
    ]


def block(found: Commands) -> list[str]:
    """Markdown lines: the commands in a code block, then a line per command left out and why."""
    cmds, notes = found
    return [*(["```", *cmds, "```"] if cmds else []), *(f"- {md_text(n)}" for n in notes), ""]


def listing(tables: Iterable[Built], frame: pd.DataFrame, places: Places) -> str:
    """Markdown: per table and pool, the missing cells and the commands that fill them (log text
    escaped: `reports.tables.md_text`)."""
    lines = [
        "# Missing cells",
        "",
        "Cells without logged samples, per table and pool, with the commands that fill them "
        "(the matrix runner is resumable: it skips what is already in the log dir).",
        "",
    ]
    merged: dict[tuple, set[str]] = {}
    for built in tables:
        if not built.missing:
            continue
        lines.append(f"## {md_text(built.heading)}")
        by_row: dict[str, list[str]] = {}
        for label, column in built.missing:
            by_row.setdefault(label, []).append(column)
        lines += [f"- {md_text(label)}: {', '.join(map(md_text, cols))}" for label, cols in by_row.items()]
        for source, tasks in needs(built, frame).items():
            merged.setdefault((built.pool, source), set()).update(tasks)
        lines += ["", *block(commands(built, frame, places))]
    if len(lines) == 4:
        lines += ["None: every expected cell has samples.", ""]
    if merged:
        found = [
            _commands({src: t for (p, src), t in merged.items() if p == pool}, pool, places)
            for pool in sorted({p for p, _ in merged})
        ]
        lines += [
            "## All commands (every table's gaps, merged per method)",
            "",
            *block(([c for f in found for c in f[0]], [n for f in found for n in f[1]])),
        ]
    lines += incomplete(frame)
    return "\n".join(lines) + "\n"
