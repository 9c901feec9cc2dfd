"""Progress of the matrix runner under `--display none`, where Inspect draws nothing: a line as each
quarter of a run's evals ends (with how many ended in error), instead of Inspect's block per eval.
An eval that fails is also named on its own line (`startup.eval_header`).

An Inspect hook, registered the first time `follow` is called; it counts only while a `Quarters`
is followed, so other evals of the process are not counted. Each run of the eval-set (a resumed set
runs only what is not done; a retry runs what failed) is counted on its own. Inspect's own notice of
the hooks it found (a few lines, once per process) stays: hushing it takes a private Inspect function.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from inspect_ai.hooks import Hooks, RunStart, TaskEnd, hooks

_followed: list[Quarters] = []
_registered: list[type[Hooks]] = []


class Quarters:
    """Counts a run's evals as they end and says so when a quarter of them has ended."""

    def __init__(self, write: Callable[[str], None] | None = None) -> None:
        self.write = write or (lambda line: print(line, flush=True))
        self.begin(0)

    def begin(self, total: int) -> None:
        self.total, self.ended, self.failed = total, 0, 0
        self.marks = {math.ceil(total * q / 4) for q in range(1, 5)}
        self.start = time.monotonic()

    def end(self, status: str) -> None:
        self.ended += 1
        self.failed += status != "success"
        if self.ended in self.marks:
            minutes, seconds = divmod(int(time.monotonic() - self.start), 60)
            failed = f", {self.failed} ended in error" if self.failed else ""
            self.write(f"evals ended: {self.ended}/{self.total}{failed} ({minutes} min {seconds:02d} s)")


class MatrixProgress(Hooks):
    def enabled(self) -> bool:
        return bool(_followed)

    async def on_run_start(self, data: RunStart) -> None:
        for quarters in _followed:
            quarters.begin(len(data.task_names))

    async def on_task_end(self, data: TaskEnd) -> None:
        for quarters in _followed:
            quarters.end(data.log.status)


@contextmanager
def follow(quarters: Quarters) -> Iterator[Quarters]:
    """Count the evals that end inside the block in `quarters`."""
    if not _registered:
        description = "one line per quarter of the matrix's evals"
        _registered.append(hooks(name="conductor_bench_matrix_progress", description=description)(MatrixProgress))
    _followed.append(quarters)
    try:
        yield quarters
    finally:
        _followed.remove(quarters)
