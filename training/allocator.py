"""glibc's malloc set for a training process: freed memory is kept for the next step, not faulted in again.

A GRPO step on the CPU allocates and frees the same tensors every step (activations, logits, the
generation cache). With glibc's defaults, freed memory at the top of the heap beyond the trim
threshold goes back to the kernel and blocks over the (adaptive) mmap threshold are mapped and
unmapped each time, so every step faults the same pages in again: ~20% of a sim-routing run's CPU
was kernel time (89 million minor page faults). `keep_freed_memory()` sets, with `mallopt`, at the
start of training (training/train.py):
- M_MMAP_THRESHOLD 32 MiB: glibc's own ceiling for its adaptive threshold; blocks below it come from
  the heap (a higher one let aligned blocks fragment the heap: its RSS grew with every step);
- M_TRIM_THRESHOLD 1 GiB and M_TOP_PAD 256 MiB: the heap keeps what a step freed for the next one.
Peak RSS stays the step's own (what a step frees, the next reuses). A process started with glibc's
MALLOC_*_ variables or GLIBC_TUNABLES keeps those; other C libraries are left as they are.

What the heap keeps is also what raises the peak: a step's peak is its generation (the key/value cache,
mapped apart from the heap), while the heap still holds the pages the last loss phase freed.
`trim_before_generation` (`heap_trim_callback`, option `trim_heap_each_step`) hands those back with
`malloc_trim(0)` once per step, before its generation: the loss phase faults them in once per step, not
once per tensor as a low mmap threshold would (docs/benchmarks.md).
"""

from __future__ import annotations

import ctypes
import functools
import os
import platform

M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD = -1, -2, -3  # glibc's malloc.h
SETTINGS = {"M_MMAP_THRESHOLD": (M_MMAP_THRESHOLD, 32 << 20), "M_TRIM_THRESHOLD": (M_TRIM_THRESHOLD, 1 << 30),
            "M_TOP_PAD": (M_TOP_PAD, 256 << 20)}  # fmt: skip
ENVIRONMENT = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_",
               "GLIBC_TUNABLES")  # fmt: skip


@functools.cache
def _glibc() -> ctypes.CDLL | None:
    """This process's C library when it is glibc on Linux (looked up once: `libc_ver` reads the interpreter's file)."""
    return ctypes.CDLL(None) if platform.system() == "Linux" and platform.libc_ver()[0] == "glibc" else None


def keep_freed_memory() -> dict:
    """Set glibc's malloc thresholds in this process (module docstring). Returns what was done, for
    run_info.json: the settings in bytes, or why none were set."""
    if _glibc() is None:
        return {"left": f"not glibc ({platform.system()} {platform.libc_ver()[0] or 'libc'})"}
    if named := [name for name in ENVIRONMENT if name in os.environ]:
        return {"left": f"set by the environment: {', '.join(named)}"}
    mallopt = _glibc().mallopt
    refused = [name for name, (param, value) in SETTINGS.items() if mallopt(param, value) != 1]
    if refused:
        return {"left": f"mallopt refused {', '.join(refused)}"}
    return {name: value for name, (_, value) in SETTINGS.items()}


def trim_before_generation() -> bool:
    """Return the heap's free pages to the kernel (glibc's `malloc_trim(0)`); False where that is not glibc."""
    libc = _glibc()
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True


def heap_trim_callback():  # noqa: ANN201 - a transformers TrainerCallback, imported here
    """A TrainerCallback trimming the heap at each optimizer step's start (before the step's generation)."""
    from transformers import TrainerCallback

    class HeapTrim(TrainerCallback):
        def __init__(self) -> None:
            self.trims = 0

        def on_step_begin(self, args, state, control, **kwargs):  # noqa: ANN001, ANN201
            self.trims += trim_before_generation()

    return HeapTrim()
