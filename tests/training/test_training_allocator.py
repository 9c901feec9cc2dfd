"""glibc's malloc set for training (training/allocator.py): memory a step frees is reused without page faults.
Each case runs in a fresh process (mallopt changes the process it runs in)."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest
from installed import needs

pytestmark = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's malloc only")
ROOT = Path(__file__).resolve().parents[2]

# a step's pattern: two 16 MiB blocks written, then freed (glibc's defaults trim them off the heap's top)
STEPS = """
import ctypes, json, resource, sys
from training.allocator import keep_freed_memory
done = keep_freed_memory() if sys.argv[1] == "set" else None
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
size, faults = 16 << 20, []
for _ in range(6):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    blocks = [libc.malloc(size) for _ in range(2)]
    for block in blocks:
        ctypes.memset(block, 1, size)
    for block in blocks:
        libc.free(block)
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
print(json.dumps({"done": done, "faults": faults}))
"""


def steps(mode: str, **env: str) -> dict:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("MALLOC_", "GLIBC_TUNABLES"))}
    out = subprocess.run([sys.executable, "-c", STEPS, mode], cwd=ROOT, env={**environ, **env}, check=True,
                         capture_output=True, text=True).stdout  # fmt: skip
    return json.loads(out)


def test_freed_memory_is_reused_without_page_faults():
    pages = 2 * (16 << 20) // os.sysconf("SC_PAGE_SIZE")
    default = steps("default")["faults"][2:]
    assert min(default) > pages // 2  # glibc's defaults fault the blocks in again at every step
    kept = steps("set")
    assert kept["done"] == {"M_MMAP_THRESHOLD": 32 << 20, "M_TRIM_THRESHOLD": 1 << 30, "M_TOP_PAD": 256 << 20}
    assert max(kept["faults"][1:]) < pages // 20  # after the first step the heap keeps them


def test_settings_from_the_environment_are_kept():
    done = steps("set", MALLOC_TRIM_THRESHOLD_="65536")["done"]
    assert done == {"left": "set by the environment: MALLOC_TRIM_THRESHOLD_"}


# a loss phase's pattern under the training settings: 64 blocks of 4 MiB written, every other one freed (the
# heap keeps those pages: its top is still in use), then the trim before a step's generation
TRIM = """
import ctypes, json
from training.allocator import keep_freed_memory, trim_before_generation
keep_freed_memory()
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
def anon_mib():
    line = next(line for line in open("/proc/self/status") if line.startswith("RssAnon:"))
    return int(line.split()[1]) / 1024
size = 4 << 20
blocks = [libc.malloc(size) for _ in range(64)]
for block in blocks:
    ctypes.memset(block, 1, size)
for block in blocks[::2]:
    libc.free(block)
freed = anon_mib()
trimmed = trim_before_generation()
print(json.dumps({"trimmed": trimmed, "freed": freed, "after": anon_mib()}))
"""


def test_the_trim_returns_the_heaps_free_pages():
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("MALLOC_", "GLIBC_TUNABLES"))}
    out = json.loads(subprocess.run([sys.executable, "-c", TRIM], cwd=ROOT, env=environ, check=True,
                                    capture_output=True, text=True).stdout)  # fmt: skip
    assert out["trimmed"] is True
    assert out["freed"] - out["after"] > 0.9 * 32 * 4  # the 32 freed blocks' pages (MiB) are no longer resident


@needs("transformers")
def test_the_trim_callback_trims_at_each_step_begin():
    from training.allocator import heap_trim_callback

    callback = heap_trim_callback()
    for _ in range(3):
        callback.on_step_begin(None, None, None)
    assert callback.trims == 3
