"""Text from files anyone may have written (run folders, logs), made writable as UTF-8.

JSON may carry a lone surrogate (`"\\udc80"`); Python reads it into a `str` that no UTF-8 file,
terminal or font can take, so one such value would crash every write after it (a CSV, a markdown
table, a plot's label). `writable` turns each such character into its escape, as text (`\\udc80`);
other text is returned as is. The run-folder readers apply it to everything they read
(`reports.run_files`, `reports.plots.read_run`); the markdown, CSV, HTML and plot-label writers to
every text they write, and `write_text` to a whole file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def writable(text: str) -> str:
    """`text` with every character UTF-8 cannot encode (a lone surrogate) as its `\\uXXXX` escape."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def writable_data(value: Any) -> Any:
    """Parsed JSON with every string (keys included) `writable`."""
    if isinstance(value, str):
        return writable(value)
    if isinstance(value, dict):
        return {writable_data(k): writable_data(v) for k, v in value.items()}
    if isinstance(value, list):
        return [writable_data(v) for v in value]
    return value


def write_text(path: str | Path, text: str) -> Path:
    """Write `text` to `path` as UTF-8 (whatever the locale), `writable` first; returns the path."""
    Path(path).write_text(writable(text), encoding="utf-8")
    return Path(path)
