"""Inspect sandbox type `bwrap` (tasks: `sandbox="bwrap"`, users: `--sandbox bwrap`)
and `InspectSandboxRunner`, the `CodeRunner` over `inspect_ai.util.sandbox()`.

Each sample gets one sandbox uid for its whole life and a work dir it owns (created in
sample_init, removed in sample_cleanup or, for leftovers, task_cleanup); when the harness
is root the work dir is a tmpfs capped in bytes and inodes, and one memory cgroup caps all
the sample's processes together (sandboxes/cgroup.py). Every exec() is a fresh bwrap
sandbox (see sandboxes/bwrap.py) with that dir mounted writable at /sandbox as its cwd,
the caller's `env` on top of a minimal environment (never the harness's), and Inspect's
`timeout` (TimeoutError when it expires) and output limit (OutputLimitExceededError).
write_file/read_file work through directory fds, never follow links and refuse
non-regular files (sandboxes/workdir.py). Processes do not survive an exec.
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import stat
import tempfile
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal, overload

from inspect_ai.util import (
    ExecResult as InspectExecResult,
)
from inspect_ai.util import (
    OutputLimitExceededError,
    SandboxEnvironment,
    SandboxEnvironmentConfigType,
    SandboxEnvironmentLimits,
    concurrency,
    sandboxenv,
)
from inspect_ai.util._sandbox.environment import SandboxUserUnsupportedError
from pydantic import BaseModel

from sandboxes import workdir
from sandboxes.bwrap import SANDBOX_DIR, Limits, UidLease, check_bwrap, kill_uid, lease_uid, run_bwrap
from sandboxes.cgroup import MemoryCgroup
from sandboxes.runner import ExecResult

__all__ = ["BwrapSandboxConfig", "BwrapSandboxEnvironment", "InspectSandboxRunner"]

_DIR_PREFIX = "inspect-bwrap-"


class BwrapSandboxConfig(BaseModel, frozen=True):
    """Optional config: `sandbox=("bwrap", BwrapSandboxConfig(memory_bytes=...))`.

    None fields keep `Limits()` defaults; output is capped at Inspect's
    MAX_EXEC_OUTPUT_SIZE (10 MiB, env INSPECT_SANDBOX_MAX_EXEC_OUTPUT_SIZE).
    """

    memory_bytes: int | None = None
    cpu_seconds: float | None = None
    file_size_bytes: int | None = None
    open_files: int | None = None
    processes: int | None = None
    tmp_bytes: int | None = None
    workdir_bytes: int | None = None
    """Size of the work dir's tmpfs (root harness only)."""
    workdir_inodes: int = 65536
    """Files and directories the work dir's tmpfs can hold (root harness only)."""
    sandbox_memory_bytes: int | None = None
    """Memory of all the sample's processes together, tmpfs pages included (a memory cgroup,
    root harness only; default: memory_bytes). Without one the bound is processes x memory_bytes."""
    default_timeout: float = 3600.0
    """Wall limit of an exec() given no timeout (a sandbox never runs unbounded)."""
    max_concurrent_execs: int | None = None
    """Concurrent execs across samples (default: the CPUs this process may use)."""
    extra_ro: tuple[str, ...] = ()
    """Host directories mounted read-only at their own path."""


def _config(config: SandboxEnvironmentConfigType | None) -> BwrapSandboxConfig:
    if isinstance(config, BwrapSandboxConfig):
        return config
    if config is None:
        return BwrapSandboxConfig()
    if isinstance(config, BaseModel):
        return BwrapSandboxConfig(**config.model_dump())
    raise ValueError(f"the bwrap sandbox takes a BwrapSandboxConfig, not {config!r}")


def _limits(cfg: BwrapSandboxConfig) -> Limits:
    overrides = {
        k: getattr(cfg, k)
        for k in (
            "memory_bytes",
            "cpu_seconds",
            "file_size_bytes",
            "open_files",
            "processes",
            "tmp_bytes",
            "workdir_bytes",
            "sandbox_memory_bytes",
        )
        if getattr(cfg, k) is not None
    }
    return replace(Limits(), **overrides)


def _cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return os.cpu_count() or 1


@sandboxenv(name="bwrap")
class BwrapSandboxEnvironment(SandboxEnvironment):
    """Local, isolated code execution with bubblewrap (no Docker engine needed)."""

    _live_dirs: dict[str, set[str]] = {}  # task name -> work dirs not yet removed

    def __init__(
        self,
        directory: str,
        cfg: BwrapSandboxConfig,
        task_name: str = "",
        lease: UidLease | None = None,
        cgroup: MemoryCgroup | None = None,
    ) -> None:
        super().__init__()
        self.directory = directory
        self.task_name = task_name
        self.cfg = cfg
        self.limits = _limits(cfg)
        self.lease = lease or lease_uid()
        self.uid = self.lease.uid
        self.cgroup = cgroup

    @classmethod
    def create(cls, cfg: BwrapSandboxConfig, task_name: str = "") -> BwrapSandboxEnvironment:
        """A fresh work dir owned by a freshly leased uid; when root, a capped tmpfs and a
        memory cgroup for all the sample's processes."""
        lease = lease_uid()
        directory = tempfile.mkdtemp(prefix=_DIR_PREFIX)
        limits = _limits(cfg)
        try:
            if os.geteuid() == 0:
                workdir.mount_tmpfs(directory, size=limits.workdir_bytes, inodes=cfg.workdir_inodes, uid=lease.uid)
        except BaseException:
            os.rmdir(directory)
            lease.release()
            raise
        cap = limits.sandbox_memory_bytes or limits.memory_bytes
        cgroup = MemoryCgroup.create(cap, "sample", lease.uid)
        return cls(directory, cfg, task_name, lease, cgroup)

    # ---- lifecycle

    @classmethod
    def config_deserialize(cls, config: dict[str, Any]) -> BaseModel:
        return BwrapSandboxConfig(**config)

    @classmethod
    async def task_init(cls, task_name: str, config: SandboxEnvironmentConfigType | None) -> None:
        check_bwrap()  # fail the task up front, with the fix in the message

    @classmethod
    async def sample_init(
        cls, task_name: str, config: SandboxEnvironmentConfigType | None, metadata: dict[str, str]
    ) -> dict[str, SandboxEnvironment]:
        check_bwrap()
        env = cls.create(_config(config), task_name)
        cls._live_dirs.setdefault(task_name, set()).add(env.directory)
        return {"default": env}

    @classmethod
    async def sample_cleanup(
        cls,
        task_name: str,
        config: SandboxEnvironmentConfigType | None,
        environments: dict[str, SandboxEnvironment],
        interrupted: bool,
    ) -> None:
        for env in environments.values():
            if isinstance(env, BwrapSandboxEnvironment):
                env._remove()

    @classmethod
    async def task_cleanup(cls, task_name: str, config: SandboxEnvironmentConfigType | None, cleanup: bool) -> None:
        if cleanup:
            for d in cls._live_dirs.pop(task_name, set()):
                _remove_dir(d)

    @classmethod
    async def cli_cleanup(cls, id: str | None) -> None:
        base = Path(tempfile.gettempdir())
        for d in base.glob(f"{_DIR_PREFIX}{id or ''}*"):
            if _made_here(str(d)):
                _remove_dir(str(d))

    def _remove(self) -> None:
        if os.geteuid() == 0:
            kill_uid(self.uid)
        if self.cgroup is not None:
            self.cgroup.remove()
        _remove_dir(self.directory)
        type(self)._live_dirs.get(self.task_name, set()).discard(self.directory)
        self.lease.release()

    def default_polling_interval(self) -> float:
        return 0.2

    # ---- exec

    async def exec(
        self,
        cmd: list[str],
        input: str | bytes | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        user: str | None = None,
        timeout: int | None = None,
        timeout_retry: bool = True,
        concurrency: bool = True,
    ) -> InspectExecResult[str]:
        if user is not None and user not in ("sandbox", "nobody"):
            raise SandboxUserUnsupportedError(
                f"the bwrap sandbox runs every command as one unprivileged user, not {user!r}"
            )
        inner_cwd = self._inner_cwd(cwd)
        wall = float(timeout) if timeout is not None else self.cfg.default_timeout
        limits = replace(self.limits, output_bytes=SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE)
        ctx = (
            _concurrency("bwrap-sandbox", self.cfg.max_concurrent_execs or _cpus())
            if concurrency
            else contextlib.nullcontext()
        )
        async with ctx:
            result = await run_bwrap(
                cmd,
                limits=limits,
                timeout=wall,
                workdir=self.directory,
                stdin=input,
                env=env,
                cwd=inner_cwd,
                extra_ro=self.cfg.extra_ro,
                uid=self.uid,
                cgroup=self.cgroup,
            )
        if result.timed_out:
            raise TimeoutError(f"Command timed out after {timeout} seconds: {cmd!r}")
        if result.output_truncated:
            raise OutputLimitExceededError(
                limit_str=SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE_STR, truncated_output=result.stdout
            )
        rc = result.returncode if result.returncode is not None else 1
        return InspectExecResult(success=rc == 0, returncode=rc, stdout=result.stdout, stderr=result.stderr)

    def _inner_cwd(self, cwd: str | None) -> str:
        if cwd is None:
            return SANDBOX_DIR
        p = Path(cwd)
        if not p.is_absolute():
            p = Path(SANDBOX_DIR) / p
        return os.path.normpath(p.as_posix())

    # ---- files (host side: directory fds, no links followed, regular files only)

    def _rel(self, file: str) -> str:
        p = Path(file)
        if p.is_absolute():
            try:
                p = p.relative_to(SANDBOX_DIR)
            except ValueError:
                raise PermissionError(f"the bwrap sandbox only has files under {SANDBOX_DIR}: {file!r}") from None
        return p.as_posix()

    async def write_file(self, file: str, contents: str | bytes) -> None:
        owner = self.uid if os.geteuid() == 0 else None
        fd = workdir.open_file(self.directory, self._rel(file), write=True, owner=owner)
        data = contents.encode("utf-8") if isinstance(contents, str) else contents
        with os.fdopen(fd, "wb") as f:
            f.write(data)

    @overload
    async def read_file(self, file: str, text: Literal[True] = True) -> str: ...

    @overload
    async def read_file(self, file: str, text: Literal[False]) -> bytes: ...

    async def read_file(self, file: str, text: bool = True) -> str | bytes:
        fd = workdir.open_file(self.directory, self._rel(file), write=False)
        with os.fdopen(fd, "rb") as f:
            if os.fstat(f.fileno()).st_size > SandboxEnvironmentLimits.MAX_READ_FILE_SIZE:
                raise OutputLimitExceededError(SandboxEnvironmentLimits.MAX_READ_FILE_SIZE_STR, None)
            data = f.read(SandboxEnvironmentLimits.MAX_READ_FILE_SIZE + 1)
        if len(data) > SandboxEnvironmentLimits.MAX_READ_FILE_SIZE:
            raise OutputLimitExceededError(SandboxEnvironmentLimits.MAX_READ_FILE_SIZE_STR, None)
        if text:
            return data.decode("utf-8")  # newlines preserved (no universal-newline translation)
        return data


def _made_here(path: str) -> bool:
    """A work dir of this harness's account: a directory (not a link) it owns, or a mount point
    (only root mounts); never another account's entry that merely has the prefix."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and (st.st_uid == os.geteuid() or os.path.ismount(path))


def _remove_dir(directory: str) -> None:
    workdir.unmount(directory)
    shutil.rmtree(directory, ignore_errors=True)


def _concurrency(name: str, n: int) -> contextlib.AbstractAsyncContextManager[object]:
    return concurrency(name, n)


class InspectSandboxRunner:
    """`CodeRunner` over the current sample's Inspect sandbox (bwrap, docker, ...).

    Each run gets its own fresh subdirectory (`.runs/<id>/`, relative to the
    sandbox's working dir) holding `files`, used as cwd. Timeouts and output
    overflow come back as ExecResult flags, never as exceptions.
    """

    def __init__(self, sandbox_name: str | None = None, *, user: str | None = None) -> None:
        self.sandbox_name = sandbox_name
        self.user = user

    async def run(
        self,
        command: list[str],
        *,
        files: dict[str, str] | None = None,
        stdin: str | None = None,
        timeout: float,
    ) -> ExecResult:
        from inspect_ai.util import sandbox

        sb = sandbox(self.sandbox_name) if self.sandbox_name else sandbox()
        run_dir = f".runs/{uuid.uuid4().hex[:12]}"
        if not files:
            await sb.write_file(f"{run_dir}/.keep", "")  # creates the directory
        for rel, content in (files or {}).items():
            if Path(rel).is_absolute() or ".." in Path(rel).parts:
                raise ValueError(f"sandbox file paths must be relative: {rel!r}")
            await sb.write_file(f"{run_dir}/{rel}", content)
        try:
            r = await sb.exec(
                command,
                input=stdin,
                cwd=run_dir,
                user=self.user,
                timeout=max(1, math.ceil(timeout)),
                timeout_retry=False,
            )
        except TimeoutError:
            return ExecResult(returncode=None, stdout="", stderr="", timed_out=True)
        except OutputLimitExceededError as e:
            return ExecResult(returncode=None, stdout=e.truncated_output or "", stderr="", output_truncated=True)
        return ExecResult(returncode=r.returncode, stdout=r.stdout, stderr=r.stderr)
