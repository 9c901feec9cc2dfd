"""Time bounds that hold on a busy machine: CPU seconds of the calling thread, not wall time.

Other work on the machine delays a call but does not make it compute more, so a bound on
CPU time fails only when the code itself does more work (a quadratic scan, a backtracking
regex), never because the tests share the cores. The calling thread's clock, not the
process's: threads that earlier tests left running (event loops, thread pools) would
otherwise add their CPU time to the call's.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def cpu_seconds(call: Callable[[], T], repeat: int = 1) -> tuple[T, float]:
    """`call()`'s last result and the least CPU time (user + system, this thread) of `repeat` runs of it."""
    least = float("inf")
    for _ in range(repeat):
        start = time.thread_time()
        result = call()
        least = min(least, time.thread_time() - start)
    return result, least
