"""Time bounds that hold on a busy machine: CPU seconds of this process, not wall time.

Other work on the machine delays a call but does not make it compute more, so a bound on
CPU time fails only when the code itself does more work (a quadratic scan, a backtracking
regex), never because the tests share the cores.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def cpu_seconds(call: Callable[[], T], repeat: int = 1) -> tuple[T, float]:
    """`call()`'s last result and the least CPU time (user + system) of `repeat` runs of it."""
    least = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        result = call()
        least = min(least, time.process_time() - start)
    return result, least
