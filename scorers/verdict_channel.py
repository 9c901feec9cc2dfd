"""Helpers shared by the trusted in-sandbox drivers (standard library only).

The drivers (scorers/humaneval_driver.py, scorers/lcb_driver.py, scorers/bcb_driver.py)
are copied into the sandbox next to this file and load it. Design: the verdict is decided
in a trusted parent process that the candidate's process cannot touch:

* `not_dumpable()`: the parent sets PR_SET_DUMPABLE=0 before it starts any child, so
  same-uid children cannot ptrace it, read /proc/<parent>/mem or open its fds;
* `seal_parent()` (HumanEval, LiveCodeBench, BigCodeBench): the parent runs isolated (`TRUSTED_PYTHON`,
  `python3 -I`) from `/`, and refuses to run while anything on its import path is a
  folder the candidate (same uid) could change: code it imports later (a task's `check`
  imports lazily) can only be read-only code;
* the nonce that tags the verdict line lives only in the parent's memory; children
  never inherit the parent's stdout;
* values cross between processes as tagged JSON (`encode`/`decode`) that decodes only
  to plain built-in data: a candidate cannot send an object whose `__eq__` lies.
"""

from __future__ import annotations

import json
import math
import os
import stat
import sys
from typing import Any

MAX_DEPTH = 60
MAX_ITEMS = 1_000_000
TRUSTED_PYTHON = ("python3", "-I")
"""How a trusted driver is started: isolated (no script folder, working directory, user site
or PYTHON* variable on its import path)."""


def not_dumpable() -> bool:
    """PR_SET_DUMPABLE=0 on this process; True when it took effect."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0) == 0  # PR_SET_DUMPABLE = 4
    except (OSError, AttributeError):
        return False


def changeable(path: str) -> bool:
    """True when this process could alter what `path` names: the path is writable to this
    process or owned by it, or a folder above it lets this process replace the entry below it
    (writable and owned by it, or writable without the sticky bit, or writable with the sticky
    bit while that entry is missing or its own), on a read-write file system. A sticky,
    world-writable /tmp above a read-only mount is therefore no way in."""
    path = os.path.abspath(path)
    below: os.stat_result | None = None  # the entry under `path` on the way up (None: missing)
    first = True
    while True:
        try:
            st, fs = os.stat(path), os.statvfs(path)
        except OSError:  # missing, or not ours to look at: counted as missing (the safe side)
            st = None
        if st is not None and not fs.f_flag & os.ST_RDONLY:
            if st.st_uid == os.geteuid():
                return True
            if os.access(path, os.W_OK):
                sticky = st.st_mode & stat.S_ISVTX
                if first or not sticky or below is None or below.st_uid == os.geteuid():
                    return True
        parent = os.path.dirname(path)
        if parent == path:
            return False
        below, path, first = st, parent, False


def seal_parent() -> str:
    """Make this process the trusted parent, before any candidate code runs: not dumpable,
    working directory `/`, and a RuntimeError (no verdict) unless it runs isolated and nothing
    on its import path is `changeable`. Returns the former working directory (the run's)."""
    not_dumpable()
    run_dir = os.getcwd()
    os.chdir("/")
    if not sys.flags.isolated:
        raise RuntimeError(f"the trusted driver must run isolated: start it as `{' '.join(TRUSTED_PYTHON)} <driver>`")
    exposed = [p for p in ["/", *sys.path] if changeable(p)]
    if exposed:
        raise RuntimeError(
            f"the trusted driver's import path holds {exposed}, which the code under test could change; "
            "mount the Python installation read-only and run the sandbox as a user that owns none of it"
        )
    return run_dir


class Opaque:
    """A value that could not cross the channel faithfully: equal only to itself."""

    def __init__(self, type_name: str, text: str) -> None:
        self.type_name, self.text = type_name, text

    def __eq__(self, other: object) -> bool:
        return other is self

    def __ne__(self, other: object) -> bool:
        return other is not self

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"<{self.type_name}: {self.text}>"


def _numpy_scalar(value: Any) -> Any:
    module = type(value).__module__ or ""
    if module.startswith("numpy") and getattr(value, "shape", None) == () and hasattr(value, "item"):
        item = value.item()
        if type(item) in (bool, int, float, complex, str):
            return item
    return None


def encode(value: Any, depth: int = 0, budget: list[int] | None = None) -> Any:
    """`value` as JSON-able tagged data. Exact built-in types only (a subclass may
    override `__eq__`); numpy scalars become their Python value; the rest is opaque."""
    budget = budget if budget is not None else [MAX_ITEMS]
    budget[0] -= 1
    if depth > MAX_DEPTH or budget[0] < 0:
        return {"o": "too_deep_or_large", "r": ""}
    t = type(value)
    if value is None or t in (bool, int, str):
        return value
    if t is float:
        return value if math.isfinite(value) else {"f": repr(value)}
    if t is list:
        return [encode(v, depth + 1, budget) for v in value]
    if t is tuple:
        return {"t": [encode(v, depth + 1, budget) for v in value]}
    if t is dict:
        return {"d": [[encode(k, depth + 1, budget), encode(v, depth + 1, budget)] for k, v in value.items()]}
    if t in (set, frozenset):
        return {"s" if t is set else "fs": [encode(v, depth + 1, budget) for v in value]}
    if t is complex:
        return {"c": [encode(value.real), encode(value.imag)]}
    if t is bytes:
        return {"b": value.hex()}
    scalar = _numpy_scalar(value)
    if scalar is not None:
        return encode(scalar, depth, budget)
    return {"o": t.__name__[:80], "r": ""}


def decode(data: Any) -> Any:
    """Inverse of `encode`; builds only built-in values (and `Opaque`)."""
    if data is None or type(data) in (bool, int, str, float):
        return data
    if type(data) is list:
        return [decode(v) for v in data]
    if type(data) is not dict or len(data) != 1 and "o" not in data:
        raise ValueError("malformed value on the verdict channel")
    tag, payload = next(iter(data.items()))
    if tag == "f":
        return float(payload)
    if tag == "t":
        return tuple(decode(v) for v in payload)
    if tag == "d":
        return {decode(k): decode(v) for k, v in payload}
    if tag == "s":
        return {decode(v) for v in payload}
    if tag == "fs":
        return frozenset(decode(v) for v in payload)
    if tag == "c":
        return complex(decode(payload[0]), decode(payload[1]))
    if tag == "b":
        return bytes.fromhex(payload)
    if tag == "o":
        return Opaque(str(payload), str(data.get("r", "")))
    raise ValueError(f"unknown tag {tag!r} on the verdict channel")


def dumps(value: Any) -> str:
    return json.dumps(encode(value), separators=(",", ":"))


def loads(line: str) -> Any:
    return decode(json.loads(line))
