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

SETTINGS = ("The paper's constrained/unconstrained split does not apply here: each table shows this pool's runs "
            "on its benchmarks.")
NOTE_SIM = ("Simulated workers answer from the answer key with per-profile accuracy (workers/simulation.py): "
            "these numbers test the harness, they say nothing about real models or the paper. " + SETTINGS)
NOTE_MIXED = ("Some of this pool's workers are simulated (answering from the answer key, workers/simulation.py), "
              "some are real models: these numbers test the harness, they are not comparable to the paper's. "
              + SETTINGS)
NOTE_LOCAL = ("Small local models (CPU): these numbers prove the plumbing; they are not comparable to the paper's. "
              + SETTINGS)
KIND_NOTES = {"simulated": NOTE_SIM, "mixed": NOTE_MIXED, "local": NOTE_LOCAL}
PAPER_ROWS_NOTE = (" '↳ paper' rows: the paper's numbers for the method and worker slot above, run with the "
                   "paper's API models: reference only.")
CELL_NOTE = ("Cells: accuracy % as mean ± standard error of the mean clustered by question (the epochs of a "
             "question are repeated measures, not independent samples: Miller 2024, 'Adding Error Bars to Evals', "
             "arXiv:2411.00640; Inspect's stderr(cluster=...); with one epoch the usual standard error over "
             "samples; no ± with one question), n = samples x epochs, errored samples counted wrong and shown as "
             "'err', 'missing' = samples the logs meant to run but do "
             "not hold. tokens / usd / agent_calls: per question over the table's benchmarks (usd 'unknown' "
             "when a price is missing, never 0); cost_adjusted = accuracy / (USD per question in cents), the "
             "paper's definition. avg '(k of n)': over the benchmarks present. Rows '↳ paper: ...' hold the "
             "paper's numbers for the row above (same method and worker slot), for reference; 'note' says what a "
             "row is when its name does not.")


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


def build(log_dir: str | Path, out: str | Path, *, training: Sequence[str | Path] = (), embed: bool = False,
          progress: Callable[[str], None] | None = None, command: str = "") -> Report:
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
    page = html.write_page(out / "index.html", sections(built, drawn, trained, frame, out, where, command, found),
                           title="conductor-bench report", intro=intro(frame, log_dir), embed=embed,
                           banner=banner(frame))
    lap("page")
    say(f"wrote {page} ({len(built)} tables, {len(drawn) + len(trained)} plots)")
    return Report(out, page, built, drawn + trained, len(frame), timings)


def load_samples_missing(log_dir: str | Path, say: Callable[[str], None]) -> pd.DataFrame:
    say(f"no log dir {log_dir}: building the page with the paper's numbers only")
    from reports.frame import COLUMNS

    return pd.DataFrame(columns=COLUMNS)


def empty_listing(log_dir: str) -> str:
    return ("# Missing cells\n\nNo logs were found. Run the matrix first, e.g.\n\n```\n"
            f"python -m solvers.matrix --tasks gpqa,math500 --pool local --limit 2 --log-dir {shlex.quote(log_dir)}\n"
            "```\n\nor `nox -s reproduce_tables` (runs the evals, then builds).\n")


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
        lines.append("'paper' columns: the paper's numbers (reports/paper_reference.csv).")
    if b.spec.note:
        lines.append(b.spec.note)
    if b.missing:
        lines.append(f"{len(b.missing)} cell(s) without samples ('—'): see missing.md for the commands.")
    return " ".join(lines)


def sections(built: Sequence[tables.Built], drawn: Sequence, trained: Sequence, frame: pd.DataFrame, out: Path,
             where: missing.Places, command: str, found: Sequence[orchestration.Analysis] = ()) -> list[html.Section]:
    result = []
    pools = list(dict.fromkeys(b.pool for b in built))
    for pool in pools:
        mine = [b for b in built if b.pool == pool]
        kind = mine[0].kind if mine else ""
        setting = mine[0].setting if mine else ""
        paper_tables = sorted((table_on_page(b, frame, out, where, command) for b in mine), key=held_first)
        page_tables = [t for t in paper_tables if not t.collapsed]
        page_tables += [analysis_on_page(a, out, command) for a in found if a.pool == pool]
        page_tables += [t for t in paper_tables if t.collapsed]
        commands = tuple(dict.fromkeys(c for t in page_tables for c in t.provenance.commands))
        result.append(html.Section(tables.pool_heading(pool, kind, setting), text=CELL_NOTE, tables=tuple(page_tables),
                                   plots=tuple(p for p in drawn if getattr(p, "pool", "") == pool),
                                   plot_commands=commands))
    if trained:
        result.append(html.Section("Training runs", text="Curves from the runs' rollouts.jsonl and run_info.json.",
                                   plots=tuple(trained)))
    gaps = (out / "missing.md").read_text(encoding="utf-8").removeprefix("# Missing cells\n")  # the section's own title
    result.append(html.Section("Missing cells", markdown=gaps))
    ref = [html.Table.from_frame(f"The paper's Table {t}", wide, files=(tables.REFERENCE,),
                                 provenance=html.Provenance(note="transcribed from the paper (PAPER.md)"),
                                 collapsed=f"{len(wide)} rows as the paper prints them")
           for t, wide in tables.reference_tables()]
    result.append(html.Section("The paper's numbers (reference only; not runs of this project)",
                               text="Each reproduced row above has the paper's row beside it; here the paper's tables "
                                    "whole. Table 2 prints 51.73 as GPT-5's OOD average, a typo: the mean of its "
                                    "three numbers is 51.07, as Table 8 prints.", tables=tuple(ref)))
    return result


def held_first(table: html.Table) -> tuple[int, int]:
    """Page order: the benchmarks the paper does not report (a user's own task) first, then the tables
    with logged rows, then the empty ones (collapsed; after the pool's analyses)."""
    return (0 if table.title.startswith(tables.OTHER_TITLE) else 1, 1 if table.collapsed else 0)


def table_on_page(b: tables.Built, frame: pd.DataFrame, out: Path, where: missing.Places,
                  command: str) -> html.Table:
    """One table as the page shows it, with its files and provenance (the commands that remake it): the
    rows that ran (each with the paper's row under it when there is one), the rows not run as one line;
    a table without a logged row is one line that opens."""
    cmds, left_out = missing.rerun_commands(b, frame, where)
    note = " ".join(["Rows: one per method key (solver and the options that differ from its defaults) and "
                     "conductor model, as the logs hold them.", *left_out])
    wide = with_notes(shown(b))
    ran = b.wide["key"].str.startswith(tables.PAPER_ROW) | ~b.wide["row"].str.endswith(" (not run)")
    not_run = list(b.wide.loc[~ran, "row"].str.removesuffix(" (not run)"))
    text = table_note(b) + (f" Not run (see Missing cells): {', '.join(not_run)}." if not_run else "")
    held = wide[ran]
    return html.Table.from_frame(
        b.spec.title, held, note=text,
        files=(out / "tables" / f"{b.name}.csv", out / "tables" / f"{b.name}.md"),
        provenance=html.Provenance(logs=b.logs, commands=(*(x for x in (command,) if x), *cmds), note=note),
        row_classes=tuple("paper" if k.startswith(tables.PAPER_ROW) else "" for k in b.wide.loc[ran, "key"]),
        collapsed="" if len(held) else f"nothing logged ({len(not_run)} row(s) not run)")


def with_notes(wide: pd.DataFrame) -> pd.DataFrame:
    """The page shows a row's note in its row cell, on a line under its name (the markdown and CSV
    keep a `note` column)."""
    if "note" not in wide:
        return wide
    rows = [f"{row}\n({note})" if note else row for row, note in zip(wide["row"], wide["note"], strict=True)]
    return wide.drop(columns="note").assign(row=rows)


def analysis_on_page(a: orchestration.Analysis, out: Path, command: str) -> html.Table:
    """An orchestration table (oracle gap, paired, Pareto, diagnostics) as the page shows it."""
    return html.Table.from_frame(
        a.heading, a.shown, note=orchestration.NOTES[a.kind],
        files=(out / "tables" / f"{a.name}.csv", out / "tables" / f"{a.name}.md"),
        provenance=html.Provenance(logs=a.logs, commands=tuple(x for x in (command,) if x)))


def intro(frame: pd.DataFrame, log_dir: str | Path) -> str:
    n_logs = frame["log"].nunique() if len(frame) else 0
    return f"Built from {n_logs} Inspect log(s) under {log_dir}: {len(frame)} samples x epochs."


def banner(frame: pd.DataFrame) -> str:
    kinds = set(frame["pool_kind"]) if len(frame) else set()
    if kinds & {"simulated", "mixed", "local"}:
        return ("Simulated, mixed and local-pool sections are labelled as such: their numbers test the harness and are "
                "never comparable to the paper's.")
    return ""
