"""CSV files safe to open in a spreadsheet: no cell of log text is a formula (CSV injection).

A cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return is run as a formula by
Excel, LibreOffice and Google Sheets (`=HYPERLINK(...)`, DDE). Per the OWASP guidance such a text
cell gets a leading `'`, which the spreadsheet shows as text. Numbers stay numbers: numeric cells
are never touched, and a text cell that is a plain number (`-0.05`, `+1e-3`) is left as is.
Every CSV the project writes goes through `write_csv`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd

from reports.safe_text import writable

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")  # linear: no nested repeats


def safe_cell(value: Any) -> Any:
    """`value`, with a leading `'` when it is text a spreadsheet would read as a formula; text is
    made writable (`reports.safe_text`: a lone surrogate becomes its escape)."""
    if not isinstance(value, str):
        return value
    value = writable(value)
    return "'" + value if value.startswith(FORMULA_START) and not _NUMBER.fullmatch(value) else value


def safe_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of `frame` with every text cell and column name made safe (numeric columns as they are)."""
    out = frame.rename(columns=lambda c: safe_cell(str(c)))
    for i in range(out.shape[1]):
        column = out.iloc[:, i]
        if not pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column):
            out.isetitem(i, column.map(safe_cell))
    return out


def write_csv(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write `frame` (index dropped) as a spreadsheet-safe CSV; returns the path."""
    safe_frame(frame).to_csv(path, index=False, encoding="utf-8")
    return Path(path)
