"""Run untrusted code under bubblewrap, directly (no Inspect import here).

`BwrapRunner(limits).run(command, files=, stdin=, timeout=)` implements `CodeRunner`:
each call gets a fresh, size-capped tmpfs working directory (/sandbox) holding
`files`, an empty network namespace (loopback only), its own pid namespace, an
empty environment (nothing of the harness's, /proc/1/environ included), a
read-only root with a read-only view of the system and of the Python
installation, a size-capped tmpfs /tmp, an unprivileged uid (a fresh one per
concurrent run when the harness is root), rlimits (CPU, address space, file
size, open files, processes), optionally a memory cgroup for the whole run, and
a seccomp filter (x86_64: native syscalls only, no new user namespaces, no
keyrings, no io_uring; /proc/keys hidden). Output is capped; on timeout or
overflow the sandbox's whole pid namespace is killed, orphans included.

`run_bwrap(...)` is the shared machinery: the Inspect sandbox type
(sandboxes/inspect_bwrap.py) calls it with a persistent work dir, the uid that
owns it and the sample's memory cgroup instead.

Requires bubblewrap (`apt-get install -y bubblewrap`) and, when not root,
unprivileged user namespaces. There is no unsandboxed fallback: `check_bwrap()`
raises `BwrapUnavailableError` naming the problem and the fix.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import math
import os
import platform
import shutil
import signal
import stat
import struct
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sandboxes.cgroup import MemoryCgroup, join_argv, sweep
from sandboxes.runner import ExecResult

__all__ = [
    "BwrapRunner",
    "BwrapUnavailableError",
    "Limits",
    "SANDBOX_DIR",
    "UidLease",
    "check_bwrap",
    "kill_uid",
    "lease_uid",
    "private_dir",
    "run_bwrap",
]

SANDBOX_DIR = "/sandbox"
"""Where the working directory appears inside the sandbox (the command's cwd)."""

_MiB = 1024**2
_GiB = 1024**3


@dataclass(frozen=True)
class Limits:
    """Resource limits of one sandboxed command (all inherited by its children).

    `cpu_seconds=None` means "the wall timeout, rounded up, plus 1" per process.
    `processes` is RLIMIT_NPROC of the sandbox uid (threads count). `output_bytes`
    caps each of stdout and stderr; beyond it the sandbox is killed and the result
    marked `output_truncated`. `tmp_bytes` caps the tmpfs /tmp (and /dev/shm);
    `workdir_bytes` caps the tmpfs working directory. `sandbox_memory_bytes`, when set,
    caps the memory of all the sandbox's processes together, tmpfs pages included, where
    a memory cgroup can be made (root; sandboxes/cgroup.py); otherwise the bound is
    `processes` x `memory_bytes`. Off by default for one-shot runs: joining a cgroup v1
    costs ~14 ms per run (measured); the Inspect sandbox always sets it.
    """

    cpu_seconds: float | None = None
    memory_bytes: int = 4 * _GiB
    file_size_bytes: int = 256 * _MiB
    open_files: int = 1024
    processes: int = 512
    tmp_bytes: int = 512 * _MiB
    workdir_bytes: int = 512 * _MiB
    output_bytes: int = 16 * _MiB
    sandbox_memory_bytes: int | None = None


class BwrapUnavailableError(RuntimeError):
    """bubblewrap cannot sandbox on this machine; the message names the fix."""


# ---------------------------------------------------------------------------
# self-check

_FIXES = (
    "Fix: install bubblewrap (`apt-get install -y bubblewrap`); when not running as root, "
    "enable unprivileged user namespaces (`sysctl -w kernel.unprivileged_userns_clone=1` on "
    "Debian/Ubuntu kernels, `sysctl -w user.max_user_namespaces=15000`, and on Ubuntu 24.04+ "
    "`sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`); inside a container, allow "
    "namespaces (e.g. `--security-opt seccomp=unconfined --cap-add SYS_ADMIN`); or use the "
    "Docker sandbox (`--sandbox docker`). Code is never run unsandboxed."
)

_checked: bool = False


def _is_root() -> bool:
    return os.geteuid() == 0


def _tool(name: str) -> str | None:
    for d in ("/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin"):
        p = os.path.join(d, name)
        if os.access(p, os.X_OK):
            return p
    return shutil.which(name)


def _read_int(path: str) -> int | None:
    try:
        return int(Path(path).read_text().strip())
    except (OSError, ValueError):
        return None


def check_bwrap() -> None:
    """Raise BwrapUnavailableError unless a trivial sandbox can start (cached once it can)."""
    global _checked
    if _checked:
        return
    if sys.platform != "linux":
        raise BwrapUnavailableError(f"The bwrap sandbox needs Linux (this is {sys.platform}). {_FIXES}")
    missing = [t for t in ("bwrap", "prlimit") + (("setpriv",) if _is_root() else ()) if _tool(t) is None]
    if missing:
        raise BwrapUnavailableError(f"Missing program(s) {', '.join(missing)} for the bwrap sandbox. {_FIXES}")
    problems = []
    if not _is_root():
        if _read_int("/proc/sys/kernel/unprivileged_userns_clone") == 0:
            problems.append("kernel.unprivileged_userns_clone is 0 (user namespaces disabled)")
        if _read_int("/proc/sys/user/max_user_namespaces") == 0:
            problems.append("user.max_user_namespaces is 0 (user namespaces disabled)")
    import subprocess

    with tempfile.TemporaryDirectory(prefix="bwrap-check-") as d:
        sfd = _seccomp_fd()
        argv = _build_argv(
            ["true"], Limits(), timeout=5, workdir=d, files=None, uid=_alloc_probe_uid(), extra_ro=(), seccomp_fd=sfd
        )
        try:
            proc = subprocess.run(
                argv,
                env=_base_env({}),
                capture_output=True,
                timeout=30,
                cwd="/",
                pass_fds=[sfd] if sfd is not None else [],
            )
            rc, err = proc.returncode, proc.stderr.decode(errors="replace").strip()
        except (OSError, subprocess.TimeoutExpired) as e:
            rc, err = -1, str(e)
        finally:
            if sfd is not None:
                os.close(sfd)
    if rc != 0:
        detail = "; ".join(problems + [f"bwrap exited {rc}: {err[-500:]}"])
        raise BwrapUnavailableError(f"The bwrap sandbox does not work here ({detail}). {_FIXES}")
    _checked = True


# ---------------------------------------------------------------------------
# uids: one per concurrent sandbox (root mode), locked across processes with flock on
# `{slot}.lock` files in a directory only root can use (never under a world-writable TMPDIR,
# where another account could plant a link or a directory at those names)

_UID_BASE = 200_000
_UID_SLOTS = 4096
_STATE_DIR = ("/run", "conductor-bench-bwrap-uids")  # (parent, name)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def private_dir(parent: str, name: str) -> int:
    """An fd on the directory `parent/name`, made mode 0700 if absent, opened without following
    links. Raises BwrapUnavailableError (naming the path and the fix) unless `parent` is a
    root-owned directory no one else can write and `name` a root-owned 0700 directory."""
    path = os.path.join(parent, name)
    try:
        pfd = os.open(parent, _DIR_FLAGS)
    except OSError as error:
        raise _state_error(parent, f"cannot be opened as a directory ({error.strerror})", "") from None
    try:
        st = os.fstat(pfd)
        if st.st_uid != 0 or st.st_mode & 0o022:
            raise _state_error(parent, "is writable by accounts other than root", "")
        try:
            os.mkdir(name, 0o700, dir_fd=pfd)
            made = True
        except FileExistsError:
            made = False
        try:
            fd = os.open(name, _DIR_FLAGS, dir_fd=pfd)
        except OSError as error:  # ELOOP: a link; ENOTDIR: a file
            raise _state_error(path, f"is not a directory ({error.strerror})", path) from None
    except OSError as error:
        raise _state_error(parent, f"cannot hold the sandbox's state ({error.strerror})", "") from None
    finally:
        os.close(pfd)
    if made:
        os.fchmod(fd, 0o700)  # whatever the umask
    st = os.fstat(fd)
    if st.st_uid != 0 or stat.S_IMODE(st.st_mode) != 0o700:
        os.close(fd)
        raise _state_error(path, f"is owned by uid {st.st_uid} with mode {stat.S_IMODE(st.st_mode):04o}", path)
    return fd


def _state_error(path: str, problem: str, remove: str) -> BwrapUnavailableError:
    fix = (
        f"remove it (`rm -rf {remove}`; the harness makes it again, root-owned with mode 0700)"
        if remove
        else f"run the harness where {path} is a directory owned by root that only root can write, "
        "as on a standard Linux system"
    )
    return BwrapUnavailableError(f"The sandbox's uid lock directory is not private: {path} {problem}. Fix: {fix}.")


@dataclass
class UidLease:
    uid: int
    fd: int | None = None

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _alloc_probe_uid() -> int:
    return _UID_BASE + _UID_SLOTS  # only used for the self-check (`true` leaves nothing behind)


_next_slot = 0
_swept = False


def _lock(locks: int, slot: int) -> int | None:
    """An fd holding slot's lock in the lock dir `locks` (an fd), or None: another holds it."""
    fd = os.open(f"{slot}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=locks)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return fd
    except OSError:
        os.close(fd)
        return None


def _uid_free(locks: int, uid: int) -> bool:
    fd = _lock(locks, uid - _UID_BASE)
    if fd is not None:
        os.close(fd)
    return fd is not None


def lease_uid() -> UidLease:
    """A uid no other live sandbox (of any harness process on this machine) uses."""
    global _next_slot, _swept
    if not _is_root():
        return UidLease(uid=65534)  # inside a user namespace; rlimits count against the caller
    locks = private_dir(*_STATE_DIR)
    try:
        if not _swept:  # once per harness process: what a killed one left behind
            _swept = True
            sweep(lambda uid: _UID_BASE <= uid < _UID_BASE + _UID_SLOTS and _uid_free(locks, uid))
        for i in range(_UID_SLOTS):
            slot = (_next_slot + i) % _UID_SLOTS
            fd = _lock(locks, slot)
            if fd is not None:
                _next_slot = (slot + 1) % _UID_SLOTS
                return UidLease(uid=_UID_BASE + slot, fd=fd)
    finally:
        os.close(locks)
    raise RuntimeError(f"all {_UID_SLOTS} sandbox uids are in use")


def _pids_of_uid(uid: int) -> list[int]:
    pids = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid:
                    pids.append(int(name))
            except OSError:
                pass
    return pids


def kill_uid(uid: int, deadline_s: float = 2.0) -> None:
    """SIGKILL every process running as the sandbox uid (root mode only)."""
    end = time.monotonic() + deadline_s
    while True:
        pids = _pids_of_uid(uid)
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        if time.monotonic() > end:
            return
        time.sleep(0.01)


# ---------------------------------------------------------------------------
# command line


def _python_roots() -> list[str]:
    """Directories of the harness's Python (interpreter + venv packages) to mount read-only."""
    roots = []
    for p in (sys.base_prefix, sys.prefix, sys.exec_prefix):
        p = os.path.abspath(p)
        if p in ("/", "/usr") or p.startswith("/usr/"):
            continue
        if p not in roots and os.path.isdir(p):
            roots.append(p)
    return roots


def _python_bin_dirs() -> list[str]:
    dirs = []
    for p in (os.path.dirname(os.path.abspath(sys.executable)), os.path.join(sys.prefix, "bin")):
        if p not in dirs and os.path.isdir(p):
            dirs.append(p)
    return dirs


_ETC = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "alternatives",
    "localtime",
    "timezone",
    "zoneinfo",
    "ssl",
    "ca-certificates",
    "ca-certificates.conf",
    "mime.types",
    "nsswitch.conf",
    "host.conf",
    "hosts",
    "protocols",
    "services",
    "passwd",
    "group",
    "fonts",
    "matplotlibrc",
    "python3",
    "python3.11",
)


def _base_env(extra: Mapping[str, str]) -> dict[str, str]:
    path = ":".join([*_python_bin_dirs(), "/usr/local/bin", "/usr/bin", "/bin"])
    env = {
        "PATH": path,
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONIOENCODING": "utf-8",
        "PYTHONHASHSEED": "0",
        "MPLBACKEND": "Agg",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
    env.update(extra)
    return env


def _parents(path: str) -> list[str]:
    parts = Path(path).parts[1:-1]
    return ["/" + "/".join(parts[: i + 1]) for i in range(len(parts))]


def _build_argv(
    command: Sequence[str],
    limits: Limits,
    *,
    timeout: float,
    workdir: str | None,
    files: list[tuple[str, int]] | None,
    uid: int,
    extra_ro: Sequence[str],
    cwd: str = SANDBOX_DIR,
    seccomp_fd: int | None = None,
) -> list[str]:
    bwrap = _tool("bwrap") or "bwrap"
    a = [
        bwrap,
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        "--hostname",
        "sandbox",
    ]
    if seccomp_fd is not None:
        a += ["--seccomp", str(seccomp_fd)]
    if _is_root():
        # privileged bwrap: keep only what setpriv needs to drop to the sandbox uid
        a += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        a += ["--unshare-user", "--uid", str(uid), "--gid", str(uid), "--disable-userns"]
    # system, read-only
    a += ["--ro-bind", "/usr", "/usr"]
    for d in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(d):
            a += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            a += ["--ro-bind", d, d]
    a += ["--dir", "/etc"]
    for name in _ETC:
        a += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    a += ["--proc", "/proc", "--dev", "/dev"]
    for name in ("keys", "key-users"):  # the keyrings (and their owners) a process can see
        a += ["--ro-bind", "/dev/null", f"/proc/{name}"]
    a += ["--perms", "1777", "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp"]
    a += ["--perms", "1777", "--size", str(limits.tmp_bytes), "--tmpfs", "/dev/shm"]
    # Python, read-only, at its own path; parents world-searchable (pyenv under /root)
    made: set[str] = {"/", "/usr", "/etc", "/tmp", "/proc", "/dev"}
    for root in [*_python_roots(), *extra_ro]:
        for parent in _parents(root):
            if parent not in made:
                a += ["--perms", "0755", "--dir", parent]
                made.add(parent)
        a += ["--ro-bind", root, root]
        made.add(root)
    # working directory
    if workdir is not None:
        a += ["--bind", workdir, SANDBOX_DIR]
    else:
        a += ["--perms", "0777", "--size", str(limits.workdir_bytes), "--tmpfs", SANDBOX_DIR]
        made_dirs: set[str] = set()
        for rel, fd in files or []:
            dest = f"{SANDBOX_DIR}/{rel}"
            for parent in _parents(dest):
                if parent.startswith(SANDBOX_DIR + "/") and parent not in made_dirs:
                    a += ["--perms", "0777", "--dir", parent]
                    made_dirs.add(parent)
            a += ["--perms", "0666", "--file", str(fd), dest]
    a += ["--remount-ro", "/", "--chdir", cwd]  # the root itself (mount points, /etc) is read-only
    # drop privileges, then limits, then the command
    cpu = limits.cpu_seconds if limits.cpu_seconds is not None else math.ceil(timeout) + 1
    if _is_root():
        a += [
            "--",
            _tool("setpriv") or "setpriv",
            f"--reuid={uid}",
            f"--regid={uid}",
            "--clear-groups",
            "--no-new-privs",
            "--inh-caps=-all",
            "--bounding-set=-all",
        ]
    else:
        a += ["--"]
    a += [
        _tool("prlimit") or "prlimit",
        f"--cpu={max(1, math.ceil(cpu))}",
        f"--as={limits.memory_bytes}",
        f"--fsize={limits.file_size_bytes}",
        f"--nofile={limits.open_files}",
        f"--nproc={limits.processes}",
        "--core=0",
        "--",
        *command,
    ]
    return a


# ---------------------------------------------------------------------------
# seccomp (x86_64; elsewhere bwrap runs without it): native x86_64 syscalls only (the
# i386 `int 0x80` entry and the x32 ABI are refused), no new user namespaces, no
# keyrings (the harness's session keyring, or a key a run leaves in its uid's user
# keyring for a later run), no io_uring (a large kernel attack surface).


def _bpf(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


_LD_ABS, _JEQ, _JSET, _RET = 0x20, 0x15, 0x45, 0x06
_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000
_EPERM, _ENOSYS = 1, 38
_AUDIT_ARCH_X86_64 = 0xC000003E
_X32_BIT = 0x40000000
_CLONE_NEWUSER = 0x10000000
_NR_CLONE, _NR_UNSHARE, _NR_CLONE3 = 56, 272, 435
_DENIED = {
    "add_key": 248,
    "request_key": 249,
    "keyctl": 250,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
}


def _seccomp_program() -> bytes:
    """The classic-BPF filter; each rule jumps to one of the returns at the end."""
    rules = [(_JEQ, nr, "eperm") for nr in sorted(_DENIED.values())]
    rules += [(_JEQ, _NR_CLONE3, "enosys"), (_JEQ, _NR_UNSHARE, "flags"), (_JEQ, _NR_CLONE, "flags")]
    head = [
        ("ld", 4),  # arch
        ("arch",),  # != x86_64 -> eperm (i386 int 0x80 lands here)
        ("ld", 0),  # syscall nr
        ("x32",),  # nr & 0x40000000 -> eperm
        *rules,
        ("ret", _ALLOW),
    ]
    tail = {  # label -> instructions
        "flags": [("ld", 16), ("newuser",), ("ret", _ALLOW)],  # args[0] low 32 bits
        "eperm": [("ret", _ERRNO | _EPERM)],
        "enosys": [("ret", _ERRNO | _ENOSYS)],  # clone3: libc falls back to clone
    }
    where, pos = {}, len(head)
    for label, body in tail.items():
        where[label] = pos
        pos += len(body)
    out = []

    def to(label: str, i: int) -> int:
        return where[label] - i - 1

    for i, ins in enumerate([*head, *(ins for body in tail.values() for ins in body)]):
        op = ins[0]
        if op == "ld":
            out.append(_bpf(_LD_ABS, 0, 0, ins[1]))
        elif op == "ret":
            out.append(_bpf(_RET, 0, 0, ins[1]))
        elif op == "arch":
            out.append(_bpf(_JEQ, 0, to("eperm", i), _AUDIT_ARCH_X86_64))
        elif op == "x32":
            out.append(_bpf(_JSET, to("eperm", i), 0, _X32_BIT))
        elif op == "newuser":
            out.append(_bpf(_JSET, to("eperm", i), 0, _CLONE_NEWUSER))
        else:
            out.append(_bpf(op, to(ins[2], i), 0, ins[1]))
    return b"".join(out)


_SECCOMP_X86_64 = _seccomp_program()


def _seccomp_fd() -> int | None:
    """A memfd holding the filter for `bwrap --seccomp`, or None off x86_64."""
    if platform.machine() != "x86_64":
        return None
    return _memfd("seccomp", _SECCOMP_X86_64)


# ---------------------------------------------------------------------------
# running


def _safe_rel(path: str) -> str:
    p = Path(path)
    if p.is_absolute() or not p.parts or any(part in ("..", "") for part in p.parts):
        raise ValueError(f"sandbox file paths must be relative and inside the work dir: {path!r}")
    return p.as_posix()


def _memfd(name: str, data: bytes) -> int:
    fd = os.memfd_create(name[-200:] or "f", 0)  # no CLOEXEC: inherited via pass_fds anyway
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


@dataclass
class _Capture:
    cap: int
    buf: bytearray = field(default_factory=bytearray)
    overflow: bool = False


async def _pump(stream: asyncio.StreamReader, cap: _Capture, on_overflow: asyncio.Event) -> None:
    while True:
        chunk = await stream.read(1 << 16)
        if not chunk:
            return
        if cap.overflow:
            continue  # keep draining (discarding) so the pipe closes once the sandbox is killed
        room = cap.cap - len(cap.buf)
        if len(chunk) > room:
            cap.buf += chunk[:room]
            cap.overflow = True
            on_overflow.set()
        else:
            cap.buf += chunk


async def _feed(stdin: asyncio.StreamWriter | None, data: bytes | None) -> None:
    if stdin is None:
        return
    try:
        if data:
            stdin.write(data)
            await stdin.drain()
    except (BrokenPipeError, ConnectionResetError):
        pass
    finally:
        with contextlib.suppress(Exception):
            stdin.close()


def _kill(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


async def run_bwrap(
    command: Sequence[str],
    *,
    limits: Limits,
    timeout: float,
    files: Mapping[str, str | bytes] | None = None,
    workdir: str | None = None,
    stdin: str | bytes | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str = SANDBOX_DIR,
    extra_ro: Sequence[str] = (),
    uid: int | None = None,
    cgroup: MemoryCgroup | None = None,
) -> ExecResult:
    """Run `command` in a fresh bwrap sandbox and return what it did.

    With `workdir` (a host directory) it is bind-mounted writable at /sandbox and
    `files` must be None (write them there first); without it /sandbox is a fresh
    tmpfs holding `files`. `env` is added to the minimal environment. `uid` (from
    `lease_uid()`, held by the caller) runs the command as that uid, which must own
    `workdir` (the host never re-owns it); without it a uid is leased for this run.
    `cgroup` (held by the caller) holds the sandbox's processes; without it one capped at
    `limits.sandbox_memory_bytes` (when set) is made for this run where possible.
    """
    if not command:
        raise ValueError("empty command")
    if workdir is not None and files:
        raise ValueError("give files or workdir, not both")
    if workdir is not None and uid is None and _is_root():
        raise ValueError("a work dir needs the uid that owns it: pass uid=lease_uid().uid, held while it lives")
    check_bwrap()
    lease = UidLease(uid=uid) if uid is not None else lease_uid()
    fds: list[int] = []
    proc: asyncio.subprocess.Process | None = None
    own_cgroup = None
    try:
        if cgroup is None and limits.sandbox_memory_bytes is not None:
            cgroup = own_cgroup = MemoryCgroup.create(limits.sandbox_memory_bytes, "run", lease.uid)
        seccomp_fd = _seccomp_fd()
        if seccomp_fd is not None:
            fds.append(seccomp_fd)
        file_fds = []
        for rel, content in (files or {}).items():
            data = content.encode() if isinstance(content, str) else content
            file_fds.append((_safe_rel(rel), _memfd(rel, data)))
            fds.append(file_fds[-1][1])
        argv = _build_argv(
            command,
            limits,
            timeout=timeout,
            workdir=workdir,
            files=file_fds,
            uid=lease.uid,
            extra_ro=extra_ro,
            cwd=cwd,
            seccomp_fd=seccomp_fd,
        )
        data = stdin.encode() if isinstance(stdin, str) else stdin
        proc = await asyncio.create_subprocess_exec(
            *join_argv(cgroup, argv),
            stdin=asyncio.subprocess.PIPE if data else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=_base_env(env or {}),
            cwd="/",
            start_new_session=True,
            pass_fds=fds,
            limit=1 << 16,
        )
        for fd in fds:
            os.close(fd)
        fds = []
        out, err = _Capture(limits.output_bytes), _Capture(limits.output_bytes)
        overflow = asyncio.Event()
        assert proc.stdout is not None and proc.stderr is not None
        work = asyncio.gather(
            _pump(proc.stdout, out, overflow),
            _pump(proc.stderr, err, overflow),
            _feed(proc.stdin, data),
            proc.wait(),
        )
        overflow_wait = asyncio.ensure_future(overflow.wait())
        timed_out = False
        try:
            done, _ = await asyncio.wait({work, overflow_wait}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            if work not in done:
                timed_out = not overflow.is_set()
                _kill(proc)
        finally:
            overflow_wait.cancel()
            if proc.returncode is None:
                _kill(proc)
            # the namespace is gone once bwrap is: pipes hit EOF promptly
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(work), 10)
            if not work.done():
                work.cancel()
        truncated = out.overflow or err.overflow
        rc = proc.returncode
        return ExecResult(
            returncode=None if (timed_out or truncated) else rc,
            stdout=out.buf.decode("utf-8", errors="replace"),
            stderr=err.buf.decode("utf-8", errors="replace"),
            timed_out=timed_out,
            output_truncated=truncated,
        )
    finally:
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        if proc is not None and proc.returncode is None:
            _kill(proc)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(proc.wait(), 10)
        if _is_root() and uid is None:  # a caller's uid may have other commands running
            await asyncio.to_thread(kill_uid, lease.uid) if _pids_of_uid(lease.uid) else None
        if own_cgroup is not None:
            await asyncio.to_thread(own_cgroup.remove)
        lease.release()


class BwrapRunner:
    """`CodeRunner` that runs each command in a fresh bubblewrap sandbox.

    `extra_ro` adds host directories mounted read-only at their own path (e.g. a
    data folder); the harness's Python (interpreter and venv packages) is always
    mounted, and `python3`/`python` resolve to it.
    """

    def __init__(self, limits: Limits | None = None, *, extra_ro: Sequence[str] = ()) -> None:
        self.limits = limits or Limits()
        self.extra_ro = tuple(os.path.abspath(p) for p in extra_ro)

    async def run(
        self,
        command: list[str],
        *,
        files: dict[str, str] | None = None,
        stdin: str | None = None,
        timeout: float,
    ) -> ExecResult:
        return await run_bwrap(
            command, limits=self.limits, timeout=timeout, files=files, stdin=stdin, extra_ro=self.extra_ro
        )
