"""Build the report: tables (markdown + CSV), missing cells, plots and one HTML page, from a log dir.

Output layout under `out`:
    index.html            the page (tables, plots, provenance, missing cells, the paper's numbers)
    tables.md             every table, per pool, with its heading and notes
    tables/<name>.md|csv  one table (wide: what the page shows, plus the row key)
    tables-long.csv       every cell, one line each (value, se, samples, epochs, errors, paper)
    missing.md            cells without samples and the commands that fill them
    plots/*.png|svg       `reports.plots` figures
A partial log dir builds what it has; an empty one still writes the page and the paper's numbers.
"""

from __future__ import annotations

import re
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from reports import html, missing, orchestration, plots, tables
from reports.csv_safe import write_csv
from reports.frame import load_samples
from reports.safe_text import writable, write_text

SETTINGS = (
    "The paper's constrained/unconstrained split does not apply here: each table shows this pool's runs "
    "on its benchmarks."
)
NOTE_SIM = (
    "Simulated workers answer from the answer key with per-profile accuracy (workers/simulation.py): "
    "these numbers test the harness, they say nothing about real models or the paper. " + SETTINGS
)
NOTE_MIXED = (
    "Some of this pool's workers are simulated (answering from the answer key, workers/simulation.py), "
    "some are real models: these numbers test the harness, they are not comparable to the paper's. " + SETTINGS
)
NOTE_LOCAL = (
    "Small local models (CPU): these numbers prove the plumbing; they are not comparable to the paper's. " + SETTINGS
)
KIND_NOTES = {"simulated": NOTE_SIM, "mixed": NOTE_MIXED, "local": NOTE_LOCAL}
PAPER_ROWS_NOTE = (
    " '↳ paper' rows: the paper's numbers for the same method as the row above (a conductor under a "
    "conductor, a baseline under the same baseline; never by worker slot), run with the paper's API "
    "models: reference only; a row the paper has no counterpart for says so in its note."
)
CELL_NOTE = (
    "Cells: accuracy % as mean ± standard error of the mean clustered by question (the epochs of a "
    "question are repeated measures, not independent samples: Miller 2024, 'Adding Error Bars to Evals', "
    "arXiv:2411.00640; Inspect's stderr(cluster=...); with one epoch the usual standard error over "
    "samples; no ± with one question), n = samples x epochs, errored samples counted wrong and shown as "
    "'err', 'missing' = samples the logs meant to run but do "
    "not hold. tokens / usd / agent_calls: per question over the table's benchmarks (usd 'unknown' "
    "when a price is missing, never 0); cost_adjusted = accuracy / (USD per question in cents), the "
    "paper's definition. avg '(k of n)': over the k benchmarks the row ran, and the paper's average "
    "beside or under it over the same k (where the paper prints only its average: that one, labelled "
    "'(n of n)'). Rows '↳ paper: ...' hold the paper's numbers for the same method as the row above "
    "(the paper's single workers are its named models: a simulated or local worker has no paper row), "
    "for reference; 'note' says what a row is when its name does not."
)
CELL_LEGEND = (
    "Cells: accuracy % (mean ± standard error clustered by question) over n = samples x epochs; "
    "'paper': the paper's number for the same method; [1], [2]: notes under the table."
)
PAGE_COLUMNS = {"usd": "USD", "agent_calls": "agent calls", "cost_adjusted": "cost adjusted"}  # wrap in a header
LONG_TABLE = 30  # rows: an analysis table longer than this is one line that opens


@dataclass
class Report:
    out: Path
    page: Path
    tables: list[tables.Built]
    plots: list
    samples: int
    timings: dict[str, float] = field(default_factory=dict)


_TERMINAL_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")  # C0 and C1 controls: ESC, CSI, BEL, newlines


class Progress:
    """Prints what is being done, with the seconds since the start (stderr by default). Control
    characters (a log file name's or error's terminal escapes) are printed as `?`."""

    def __init__(self, write: Callable[[str], None] | None = None) -> None:
        self.start = time.perf_counter()
        self.write = write or (lambda line: print(line, file=sys.stderr, flush=True))

    def __call__(self, line: str) -> None:
        self.write(f"[report {time.perf_counter() - self.start:6.1f}s] {_TERMINAL_CONTROL.sub('?', line)}")


def build(
    log_dir: str | Path,
    out: str | Path,
    *,
    training: Sequence[str | Path] = (),
    embed: bool = False,
    progress: Callable[[str], None] | None = None,
    command: str = "",
) -> Report:
    """Read the logs, write tables, missing cells, plots and the page (module docstring)."""
    say = progress or Progress()
    out = Path(out)
    (out / "tables").mkdir(parents=True, exist_ok=True)
    timings: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        timings[name] = now - clock
        clock = now

    frame = load_samples(log_dir, progress=say) if Path(log_dir).exists() else load_samples_missing(log_dir, say)
    say(f"{len(frame)} sample rows from {frame['log'].nunique() if len(frame) else 0} log(s)")
    lap("read logs")
    built = tables.build_tables(frame, expected=missing.expected_rows) if len(frame) else []
    where = missing.places(frame, str(log_dir))
    say(f"{len(built)} tables over {len({b.pool for b in built})} pool(s)")
    lap("tables")
    write_tables(built, out)
    found = orchestration.analyses(frame) if len(frame) else []
    with (out / "tables.md").open("a", encoding="utf-8") as text:
        text.write(writable(orchestration.write(found, out)))
    write_text(out / "missing.md", missing.listing(built, frame, where) if len(frame) else empty_listing(str(log_dir)))
    lap("write tables")
    drawn, trained = [], []
    if len(frame):
        say("drawing eval plots")
        drawn = plots.eval_plots(frame, out / "plots")
        drawn += [p for a in found if a.kind == "paired" and (p := orchestration.paired_plot(a, out / "plots"))]
    lap("eval plots")
    if training:
        say(f"drawing training plots of {len(training)} run(s)")
        trained = plots.training_plots(training, out / "plots")
    lap("training plots")
    page = html.write_page(
        out / "index.html",
        sections(built, drawn, trained, frame, out, where, command, found),
        title="conductor-bench report",
        intro=intro(frame, log_dir),
        embed=embed,
        banner=banner(frame),
    )
    lap("page")
    say(f"wrote {page} ({len(built)} tables, {len(drawn) + len(trained)} plots)")
    return Report(out, page, built, drawn + trained, len(frame), timings)


def load_samples_missing(log_dir: str | Path, say: Callable[[str], None]) -> pd.DataFrame:
    say(f"no log dir {log_dir}: building the page with the paper's numbers only")
    from reports.frame import COLUMNS

    return pd.DataFrame(columns=COLUMNS)


def empty_listing(log_dir: str) -> str:
    return (
        "# Missing cells\n\nNo logs were found. Run the matrix first, e.g.\n\n```\n"
        f"python -m solvers.matrix --tasks gpqa,math500 --pool local --limit 2 --log-dir {shlex.quote(log_dir)}\n"
        "```\n\nor `nox -s reproduce_tables` (runs the evals, then builds).\n"
    )


def shown(built: tables.Built) -> pd.DataFrame:
    return built.wide.drop(columns=["key"])


def write_tables(built: Sequence[tables.Built], out: Path) -> None:
    parts, longs = ["# Tables", "", CELL_NOTE, ""], []
    for b in built:
        write_text(out / "tables" / f"{b.name}.md", f"## {tables.md_text(b.heading)}\n\n{tables.markdown(shown(b))}")
        write_csv(b.wide, out / "tables" / f"{b.name}.csv")
        parts += [f"## {tables.md_text(b.heading)}", "", table_note(b), "", tables.markdown(shown(b))]
        longs.append(b.long)
    write_text(out / "tables.md", "\n".join(parts) + "\n")
    long = pd.concat(longs, ignore_index=True) if longs else pd.DataFrame()
    write_csv(long, out / "tables-long.csv")


def table_note(b: tables.Built) -> str:
    lines = []
    paper = b.wide["key"].str.startswith(tables.PAPER_ROW).any()
    if b.kind in KIND_NOTES:
        lines.append(KIND_NOTES[b.kind] + (PAPER_ROWS_NOTE if paper else ""))
    elif not b.comparable:
        lines.append("Not one of the paper's pools in this table's setting: no paper numbers beside these.")
    else:
        lines.append(
            "'paper': the paper's number for the same row (reports/paper_reference.csv): on the page under "
            "ours, in the markdown and CSV a '<column> paper' column."
        )
    if b.spec.note:
        lines.append(b.spec.note)
    if b.missing:
        lines.append(f"{len(b.missing)} cell(s) without samples ('—'): see missing.md for the commands.")
    return " ".join(lines)


def sections(
    built: Sequence[tables.Built],
    drawn: Sequence,
    trained: Sequence,
    frame: pd.DataFrame,
    out: Path,
    where: missing.Places,
    command: str,
    found: Sequence[orchestration.Analysis] = (),
) -> list[html.Section]:
    """Per pool: its headline table (Table 1, or its first table with rows, after a user's own benchmarks),
    the plots, the other paper tables, the analyses (long ones folded), the tables without rows (folded);
    then the missing cells and the paper's tables (folded)."""
    result = []
    pools = list(dict.fromkeys(b.pool for b in built))
    notes = label_notes(frame)
    for pool in pools:
        mine = [b for b in built if b.pool == pool]
        kind = mine[0].kind if mine else ""
        setting = mine[0].setting if mine else ""
        paper_tables = sorted((table_on_page(b, frame, out, where, command) for b in mine), key=held_first)
        held = [t for t in paper_tables if not t.collapsed]
        first = sum(t.title.startswith(tables.OTHER_TITLE) for t in held) + 1  # a user's own benchmarks, then one
        later = held[first:] + [analysis_on_page(a, out, command, notes) for a in found if a.pool == pool]
        later += [t for t in paper_tables if t.collapsed]
        commands = tuple(dict.fromkeys(c for t in paper_tables + later for c in t.provenance.commands))
        result.append(
            html.Section(
                tables.pool_heading(pool, kind, setting),
                text=CELL_LEGEND,
                legend=CELL_NOTE,
                tables=tuple(held[:first]),
                later=tuple(later),
                plots=tuple(p for p in drawn if getattr(p, "pool", "") == pool),
                plot_commands=commands,
            )
        )
    if trained:
        result.append(
            html.Section(
                "Training runs", text="Curves from the runs' rollouts.jsonl and run_info.json.", plots=tuple(trained)
            )
        )
    gaps = (out / "missing.md").read_text(encoding="utf-8").removeprefix("# Missing cells\n")  # the section's own title
    result.append(html.Section("Missing cells", markdown=gaps))
    ref = [
        html.Table.from_frame(
            f"The paper's Table {t}",
            wide,
            files=(tables.REFERENCE,),
            provenance=html.Provenance(note="transcribed from the paper (PAPER.md)"),
            collapsed=f"{len(wide)} rows as the paper prints them",
        )
        for t, wide in tables.reference_tables()
    ]
    result.append(
        html.Section(
            "The paper's numbers (reference only; not runs of this project)",
            text="Each reproduced row above has the paper's row beside it; here the paper's tables "
            "whole. Table 2 prints 51.73 as GPT-5's OOD average, a typo: the mean of its "
            "three numbers is 51.07, as Table 8 prints.",
            tables=tuple(ref),
        )
    )
    return result


def held_first(table: html.Table) -> tuple[int, int]:
    """Page order: the benchmarks the paper does not report (a user's own task) first, then the tables
    with logged rows, then the empty ones (collapsed; after the pool's analyses)."""
    return (0 if table.title.startswith(tables.OTHER_TITLE) else 1, 1 if table.collapsed else 0)


def table_on_page(b: tables.Built, frame: pd.DataFrame, out: Path, where: missing.Places, command: str) -> html.Table:
    """One table as the page shows it, with its files and provenance (the commands that remake it): the
    rows that ran (each with the paper's row under it when there is one), the rows not run as one line;
    a table without a logged row is one line that opens. Cells and notes are laid out to fit the page
    (`page_cells`, `footnoted`)."""
    cmds, left_out = missing.rerun_commands(b, frame, where)
    note = " ".join(
        [
            "Rows: one per method key (solver and the options that differ from its defaults) and "
            "conductor model, as the logs hold them.",
            *left_out,
        ]
    )
    ran = b.wide["key"].str.startswith(tables.PAPER_ROW) | ~b.wide["row"].str.endswith(" (not run)")
    not_run = list(b.wide.loc[~ran, "row"].str.removesuffix(" (not run)"))
    text = table_note(b) + (f" Not run (see Missing cells): {', '.join(not_run)}." if not_run else "")
    held = page_cells(shown(b)[ran])
    marks: dict[str, int] = {}
    if "note" in held:
        held = held.assign(row=footnoted(held["row"], held["note"], marks)).drop(columns="note")
    return html.Table.from_frame(
        b.spec.title,
        held.rename(columns=PAGE_COLUMNS),
        note=text,
        footnotes=tuple(marks),
        files=(out / "tables" / f"{b.name}.csv", out / "tables" / f"{b.name}.md"),
        provenance=html.Provenance(logs=b.logs, commands=(*(x for x in (command,) if x), *cmds), note=note),
        row_classes=tuple("paper" if k.startswith(tables.PAPER_ROW) else "" for k in b.wide.loc[ran, "key"]),
        collapsed="" if len(held) else f"nothing logged ({len(not_run)} row(s) not run)",
    )


_CELL = re.compile(r"^(.*?) \((n=.*)\)$")  # `61.11 ± 11.11 (n=6x3, 1 err)`, `54.17 ± 10.33 (3 of 7)`
_PARTIAL = re.compile(r"^(.*?) (\(\d+ of \d+\))$")


def page_cells(wide: pd.DataFrame) -> pd.DataFrame:
    """The page's cells: a number's counts on lines under it (`61.11 ± 11.11` / `n=6x3`) and the paper's
    number of a `<column> paper` column on a line under ours (`paper 96`), that column dropped: a table of
    seven benchmarks fits the page (the markdown and CSV keep the one-line cells and the columns)."""
    out = wide.copy()
    for column in wide.columns:
        if column in ("row", "note"):
            continue
        cells = out[column].astype(object)
        out[column] = [_two_lines(c) if isinstance(c, str) else c for c in cells]
    for column in [c for c in wide.columns if f"{c} paper" in wide.columns]:
        paper = out.pop(f"{column} paper")
        out[column] = [f"{ours}\npaper {p}" if p else ours for ours, p in zip(out[column], paper, strict=True)]
    return out


def _two_lines(text: str) -> str:
    """`61.11 ± 11.11 (n=6x3, 1 err)` -> the number, then each count on a line of its own."""
    found = _CELL.match(text) or _PARTIAL.match(text)
    return "\n".join([found[1], *found[2].split(", ")]) if found else text


def footnoted(labels: Sequence[str], notes: Sequence[str], marks: dict[str, int]) -> list[str]:
    """Each label with a mark per part of its note (`; ` between parts): `label [1][2]`; `marks` numbers
    each distinct note once (its keys, in order, are the footnotes)."""
    out = []
    for label, note in zip(labels, notes, strict=True):
        numbers = [marks.setdefault(part, len(marks) + 1) for part in str(note or "").split("; ") if part]
        out.append(str(label) + (" " + "".join(f"[{n}]" for n in numbers) if numbers else ""))
    return out


def label_notes(frame: pd.DataFrame) -> dict[tuple[str, str], str]:
    """(pool, row label) -> what the row is when its name does not say it (`tables.row_note`)."""
    if not len(frame):
        return {}
    first = frame.drop_duplicates(["pool", "label"])
    models = first["conductor_model"] if "conductor_model" in first else [None] * len(first)
    return {
        (str(p), str(label)): tables.row_note(str(k), str(kind), m if isinstance(m, str) else "")
        for p, label, k, kind, m in zip(
            first["pool"], first["label"], first["key"], first["pool_kind"], models, strict=True
        )
    }


def analysis_on_page(
    a: orchestration.Analysis, out: Path, command: str, notes: dict[tuple[str, str], str] | None = None
) -> html.Table:
    """An orchestration table (oracle gap, paired, Pareto, diagnostics) as the page shows it: the rows
    that are not what their name says (a scripted conductor) marked, with the note under the table; one
    longer than LONG_TABLE rows folded."""
    shown, marks = a.shown, {}
    for column in ("row", "a", "b"):
        if column in shown:
            labels = shown[column].astype(str)
            shown = shown.assign(
                **{column: footnoted(labels, [(notes or {}).get((a.pool, x), "") for x in labels], marks)}
            )
    return html.Table.from_frame(
        orchestration.TITLES[a.kind],
        shown,
        note=orchestration.NOTES[a.kind],
        footnotes=tuple(marks),
        files=(out / "tables" / f"{a.name}.csv", out / "tables" / f"{a.name}.md"),
        provenance=html.Provenance(logs=a.logs, commands=tuple(x for x in (command,) if x)),
        collapsed=f"{len(shown)} rows" if len(shown) > LONG_TABLE else "",
    )


def intro(frame: pd.DataFrame, log_dir: str | Path) -> str:
    n_logs = frame["log"].nunique() if len(frame) else 0
    return f"Built from {n_logs} Inspect log(s) under {log_dir}: {len(frame)} samples x epochs."


def banner(frame: pd.DataFrame) -> str:
    kinds = set(frame["pool_kind"]) if len(frame) else set()
    if kinds & {"simulated", "mixed", "local"}:
        return (
            "Simulated, mixed and local-pool sections are labelled as such: their numbers test the harness and are "
            "never comparable to the paper's."
        )
    return ""
