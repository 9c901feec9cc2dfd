"""Logs from others cannot inject into the report's commands, markdown, CSVs or page.

Hand-made malicious logs (solver, option, task, pool, conductor and matrix-method names holding shell
syntax, spreadsheet formulas and markdown) go through `python -m reports build`; the commands of
missing.md and of the page are then pasted into bash (with `python` and `inspect` as stubs that record
their arguments) and every CSV, markdown table and list is checked cell by cell.
"""

from __future__ import annotations

import csv
import html
import itertools
import re
from pathlib import Path

import pandas as pd
import pytest
from test_reports_plots import rollout, write_run
from waits import run_command

from reports import synthetic as syn
from reports.__main__ import main

SIM = ["sim/math-strong", "sim/choice-strong", "sim/mediocre", "sim/premium"]
SOLVER = "single_worker; touch F; #"
OPTION = "x$(touch G)"
VALUE = "a`touch H`'\n\"$(touch V)"
CONDUCTOR = "local/x;touch C"
METHOD = "conductor;touch M"
TASK = "evil;touch T"
QUOTED = "a b'c\"$(touch Q)`touch R`"  # a valid option's value: quoted, never refused
FORMULA = '=HYPERLINK("http://x","y")'
POOL = FORMULA + "\n## injected pool"
MD_TASK = "x|y\n## injected task [click](javascript:alert(1))<img src=x onerror=alert(1)>"
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # OWASP: a cell starting so is a formula
TOUCHED = ("F", "G", "H", "V", "C", "M", "T", "Q", "R")


def meta(solver: str, worker: int = 0, conductor: str | None = None) -> dict:
    return syn.record(solver, SIM, [syn.step(0, worker, SIM[worker])], conductor=conductor)


def write_logs(d: Path) -> None:
    m = meta(SOLVER, conductor=CONDUCTOR)
    syn.write_log(d, "math500", SOLVER, {"pool": "sim", OPTION: VALUE, "note": FORMULA}, [syn.sample("q0", 1, "C", m)])
    syn.write_log(
        d,
        "math500",
        "conductor",
        {"pool": "sim"},
        [syn.sample("q0", 1, "C", meta("conductor"))],
        metadata={"matrix_method": METHOD},
    )
    syn.write_log(d, TASK, "single_worker", {"pool": "sim", "worker": 0}, [syn.sample("t0", 1, "C", meta("sw"))])
    syn.write_log(d, "gsm8k", "single_worker", {"pool": "sim", "worker": 1}, [syn.sample("g0", 1, "I", meta("sw", 1))])
    syn.write_log(
        d,
        "math500",
        "single_worker",
        {"pool": "sim", "worker": 2, "tag": QUOTED},
        [syn.sample("q0", 1, "C", meta("single_worker", 2))],
    )
    syn.write_log(d, "-2+3", "@SUM(1)", {"pool": POOL}, [syn.sample("s0", 1, "C", meta("@SUM(1)", 0, "local/@x"))])
    syn.write_log(
        d,
        MD_TASK,
        "sw|[x](javascript:alert(1))",
        {"pool": "sim"},
        [syn.sample("m0", 1, "C", meta("sw|[x](javascript:alert(1))"))],
    )


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("injection")
    write_logs(root / "logs")
    assert main(["build", "--logs", str(root / "logs"), "--out", str(root / "out")]) == 0
    return root / "out"


def fenced(markdown: str) -> list[str]:
    """The contents of the markdown's ``` blocks."""
    return re.findall(r"^```\n(.*?)^```$", markdown, flags=re.S | re.M)


def page_commands(page: str) -> list[str]:
    return [
        html.unescape(c)
        for c in re.findall(r"<li><code>(.*?)</code></li>", page, flags=re.S)
        if html.unescape(c).startswith(("python ", "inspect "))
    ]


def paste(script: str, tmp: Path) -> list[list[str]]:
    """Run `script` in bash as a user pasting it would, with `python` and `inspect` stubs that record
    their arguments; returns the recorded argument lists."""
    stubs = tmp / "bin"
    stubs.mkdir(exist_ok=True)
    for name in ("python", "inspect"):
        (stubs / name).write_text(f'#!/bin/bash\nprintf "%s\\0" {name} "$@" >> "$ARGV"\nprintf "\\n" >> "$ARGV"\n')
        (stubs / name).chmod(0o755)
    record = tmp / "argv"
    run_command(
        ["/bin/bash", "-c", script],
        cwd=tmp,
        check=False,
        env={"PATH": f"{stubs}:/usr/bin:/bin", "ARGV": str(record)},
    )
    text = record.read_text() if record.exists() else ""
    return [line.split("\0")[:-1] for line in text.split("\0\n") if line]


@pytest.mark.slow
def test_pasted_commands_run_no_injected_command(out, tmp_path):
    blocks = fenced((out / "missing.md").read_text())
    page = (out / "index.html").read_text()
    scripts = blocks + page_commands(page)
    assert blocks and len(scripts) > len(blocks)
    calls = []
    for i, script in enumerate(scripts):
        (tmp_path / str(i)).mkdir()
        calls += paste(script, tmp_path / str(i))
        assert not [t for t in TOUCHED if (tmp_path / str(i) / t).exists()], script
    assert calls and all(c[0] in ("python", "inspect") for c in calls)
    # the valid row with a shell-looking option value runs with that exact value as one argument
    assert any(f"tag={QUOTED}" in c for c in calls if c[0] == "inspect")
    # nothing from a refused name reaches a command's arguments
    assert not [
        a for c in calls for a in c if any(bad in a for bad in ("touch", "HYPERLINK", "SUM")) and a != f"tag={QUOTED}"
    ]
    # the page shows log text as text (no markup from the logs)
    assert "<img src=x" not in page and "&lt;img src=x" in page and 'href="javascript' not in page


def test_refused_names_are_named_with_the_rule(out):
    text = (out / "missing.md").read_text()
    notes = [line for line in text.splitlines() if line.startswith("- command left out")]
    assert notes, text
    joined = "\n".join(notes)
    for field in ("solver", "option name", "matrix method", "task", "pool"):
        assert f"{field} " in joined, (field, joined)
    assert all("allowed" in n for n in notes)
    assert not any(line.startswith("- command left out") for b in fenced(text) for line in b.splitlines())


def cells(path: Path) -> list[str]:
    with path.open(newline="") as f:
        return [c for row in csv.reader(f) for c in row]


def is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def test_every_csv_cell_is_spreadsheet_safe(out):
    files = [out / "tables-long.csv", *sorted((out / "tables").glob("*.csv"))]
    everything = [c for f in files for c in cells(f)]
    assert any(FORMULA in c for c in everything) and any("@SUM(1)" in c for c in everything)
    bad = [c for c in everything if c.startswith(FORMULA_START) and not is_number(c)]
    assert not bad, bad[:5]
    long = pd.read_csv(out / "tables-long.csv")
    assert long["se"].dtype == float and long["samples"].dtype == int  # numbers stay numbers


def test_csv_safe_keeps_numbers_numbers_and_quotes_formulas():
    from reports.csv_safe import safe_frame

    frame = pd.DataFrame({"x": [-0.05, 1.5], "n": [-3, 4], "t": ["-0.05", "-1+2"], "=h": ["\tx", "@a"]})
    safe = safe_frame(frame)
    assert safe["x"].tolist() == [-0.05, 1.5] and safe["n"].tolist() == [-3, 4] and safe["n"].dtype == frame["n"].dtype
    assert safe["t"].tolist() == ["-0.05", "'-1+2"] and safe["'=h"].tolist() == ["'\tx", "'@a"]


def test_training_curve_csvs_are_spreadsheet_safe(tmp_path):
    from experiments.curves import main as curves

    names = ("=cmd|' /C calc'!A0", "+SUM(1)")
    run = write_run(tmp_path / "run", [rollout(s, names=names, domain="@evil") for s in range(3)])
    curves([str(run), "--out", str(tmp_path / "c" / "curves")])
    files = sorted((tmp_path / "c").glob("*.csv"))
    assert len(files) == 3
    everything = [c for f in files for c in cells(f)]
    assert "'@evil" in everything and "'=cmd|' /C calc'!A0" in everything
    assert not [c for c in everything if c.startswith(FORMULA_START) and not is_number(c)]


def unescaped_pipes(line: str) -> int:
    return len(re.findall(r"(?<!\\)\|", line))


def test_markdown_tables_and_lists_keep_their_shape(out):
    texts = {p.name: p.read_text() for p in [out / "tables.md", out / "missing.md", *(out / "tables").glob("*.md")]}
    for name, text in texts.items():
        lines = text.splitlines()
        for i, line in enumerate(lines):
            assert not line.startswith("## injected"), (name, line)
            if line.startswith("|---"):
                width = unescaped_pipes(lines[i - 1])
                rows = list(itertools.takewhile(lambda row: row.startswith("|"), lines[i + 1 :]))
                assert all(unescaped_pipes(row) == width for row in rows), (name, lines[i - 1], rows)
        assert not re.search(r"(?<!\\)(\]\(javascript|<img)", text), name  # no link, no HTML
    assert "x\\|y" in texts["tables.md"]  # the task is shown, escaped


def test_progress_lines_carry_no_terminal_escapes(tmp_path, capsys):
    logs = tmp_path / "logs"
    syn.write_log(
        logs,
        "math500",
        "single_worker",
        {"pool": "sim", "worker": 0},
        [syn.sample("q0", 1, "C", meta("single_worker"))],
    )
    (logs / "9_\x1b]0;owned\x07\x1b[2J\x9b31m.eval").write_bytes(b"not a zip")  # a name that retitles, clears
    assert main(["build", "--logs", str(logs), "--out", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err
    assert "skipping unreadable log" in err and "owned" in err
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", err), ascii(err)
