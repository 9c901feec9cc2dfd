"""Text UTF-8 cannot encode (a lone surrogate, which JSON can carry) is written as its escape by every
writer of log and run-folder text (`reports.safe_text`): markdown cells, CSV cells, HTML, plot labels, files."""

from __future__ import annotations

import pandas as pd

from reports import html, plots
from reports.csv_safe import safe_cell, write_csv
from reports.safe_text import writable, writable_data, write_text
from reports.tables import markdown, md_text

LONE = "x\udc80y"  # what json.loads('"x\\udc80y"') gives


def test_writable_escapes_only_what_utf8_cannot_encode():
    assert writable(LONE) == "x\\udc80y" and writable("\U0001f600 é ok") == "\U0001f600 é ok"
    assert writable_data({LONE: [LONE, 1, None, {"k": LONE}]}) == {
        "x\\udc80y": ["x\\udc80y", 1, None, {"k": "x\\udc80y"}]}  # fmt: skip


def test_every_writer_takes_it(tmp_path):
    frame = pd.DataFrame({"c": [LONE, "=1+" + LONE]}, dtype=object)  # pandas' own str dtype cannot even hold it
    assert md_text(LONE + "|") == "x\\\\udc80y\\|" and "| x\\\\udc80y |" in markdown(frame)
    assert safe_cell("=" + LONE) == "'=x\\udc80y" and safe_cell(3) == 3
    assert html._e(LONE + "<") == "x\\udc80y&lt;" and plots.plain(LONE + "$") == "x\\udc80y\\$"
    csv = write_csv(frame, tmp_path / "t.csv")
    assert csv.read_text(encoding="utf-8").splitlines() == ["c", "x\\udc80y", "'=1+x\\udc80y"]
    assert write_text(tmp_path / "t.md", LONE).read_text(encoding="utf-8") == "x\\udc80y"
