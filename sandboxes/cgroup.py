"""Memory caps for a whole sandbox (every process of it, tmpfs pages included).

RLIMIT_AS bounds one process; a memory cgroup bounds them all together. A cgroup is
made as a child of the harness's own memory cgroup (cgroup v1 `memory` controller) or,
on cgroup v2, of its nearest ancestor that enables `memory` for its children; this
needs root. Where none can be made, `MemoryCgroup.create` returns None and the bound
is the stated one: processes x RLIMIT_AS (docs/security.md, docs/sandbox.md). Cgroups are named by the sandbox uid
they serve, so the empty ones a killed harness left behind can be swept once the uid
is free. No Inspect import here.
"""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MemoryCgroup", "join_argv", "sweep"]

_ROOT = Path("/sys/fs/cgroup")


def _own_paths() -> tuple[str | None, str | None]:
    """(v1 memory path, v2 path) of this process, from /proc/self/cgroup."""
    v1 = v2 = None
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            if "memory" in controllers.split(","):
                v1 = path
            elif controllers == "":
                v2 = path
    return v1, v2


def _parent() -> tuple[Path, str] | None:
    """Where a child memory cgroup can be made, and the limit file's name."""
    if os.geteuid() != 0:
        return None
    v1, v2 = _own_paths()
    if v1 is not None and (_ROOT / "memory" / "memory.limit_in_bytes").exists():
        return _ROOT / "memory" / v1.lstrip("/"), "memory.limit_in_bytes"
    if v2 is not None and (_ROOT / "cgroup.controllers").exists():
        parent = _ROOT / v2.lstrip("/")
        while True:  # the nearest ancestor that hands `memory` to its children
            with contextlib.suppress(OSError):
                if "memory" in (parent / "cgroup.subtree_control").read_text().split():
                    return parent, "memory.max"
            if parent == _ROOT:
                return None
            parent = parent.parent
    return None


@dataclass
class MemoryCgroup:
    """A child memory cgroup capped at `limit` bytes; processes join it by `procs`."""

    path: Path
    limit: int

    @property
    def procs(self) -> str:
        return str(self.path / "cgroup.procs")

    @classmethod
    def create(cls, limit: int, kind: str, uid: int) -> MemoryCgroup | None:
        """A fresh capped cgroup for the sandbox uid `uid` (leased by the caller), or None
        where this harness cannot make one (not root, no memory controller). Empty cgroups
        a killed harness left for this uid are removed first."""
        where = _parent()
        if where is None:
            return None
        parent, limit_file = where
        sweep(lambda u: u == uid)
        path = parent / f"conductor-bench-{kind}-{uid}-{uuid.uuid4().hex[:8]}"
        try:
            path.mkdir(mode=0o700)
        except OSError:
            return None
        try:
            (path / limit_file).write_text(str(limit))
            for no_swap in ("memory.memsw.limit_in_bytes", "memory.swap.max"):  # swap is no way out
                if (path / no_swap).exists():
                    (path / no_swap).write_text("0" if no_swap == "memory.swap.max" else str(limit))
        except OSError:
            with contextlib.suppress(OSError):
                path.rmdir()
            return None
        return cls(path, limit)

    def remove(self, deadline_s: float = 2.0) -> None:
        """Remove the cgroup once its processes are gone (they are killed before this)."""
        end = time.monotonic() + deadline_s
        while True:
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() > end:
                    return
                time.sleep(0.01)


def sweep(is_free: Callable[[int], bool]) -> None:
    """Remove the empty cgroups a killed harness left for sandbox uids no one holds now."""
    where = _parent()
    for stale in where[0].glob("conductor-bench-*-*-*") if where else ():
        uid = stale.name.split("-")[3]
        if uid.isdigit() and is_free(int(uid)):
            with contextlib.suppress(OSError):
                stale.rmdir()  # fails while it holds processes


def join_argv(cgroup: MemoryCgroup | None, argv: list[str]) -> list[str]:
    """`argv`, run from a shell that first moves itself into `cgroup` (fails closed)."""
    if cgroup is None:
        return argv
    return ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', cgroup.procs, *argv]
