"""What `python -m reports` shows and keeps: progress and a short summary on the console; the detail
(the build's timings, warnings raised by libraries) in `<out>/report.log`, and on the console too with
`--verbose`. Without it, a run's library warnings are one line at the end: how many, and where they are."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOG_NAME = "report.log"


class Console:
    def __init__(self, out: str | Path, verbose: bool = False) -> None:
        self.log, self.verbose = Path(out) / LOG_NAME, verbose
        self.kept: list[str] = []

    def keep(self, line: str) -> None:
        """For the log file (`write_log`)."""
        self.kept.append(line)

    def say(self, line: str, err: bool = False) -> None:
        """On the console (stderr with `err`) and in the log."""
        print(line, file=sys.stderr if err else sys.stdout, flush=True)
        self.keep(line)

    def detail(self, line: str) -> None:
        """In the log; on the console with --verbose."""
        if self.verbose:
            print(line, flush=True)
        self.keep(line)

    @contextmanager
    def library_warnings(self) -> Iterator[None]:
        """Warnings raised inside the block (Python's filters still apply) go to `detail`, then one line; the
        log is written at the end when the output folder exists (a run refused before the build makes none)."""
        with warnings.catch_warnings(record=True) as caught:
            try:
                yield
            finally:
                for w in caught:
                    self.detail(warnings.formatwarning(w.message, w.category, w.filename, w.lineno).rstrip())
                if caught and not self.verbose:
                    self.say(f"{len(caught)} warning(s) from libraries, in {self.log}", err=True)
                if self.log.parent.is_dir():
                    self.log.write_text("".join(f"{line}\n" for line in self.kept), encoding="utf-8")
