"""Security battery for the bwrap runner: hostile programs, run for real.

Needs bubblewrap (`apt-get install -y bubblewrap`); without it these fail with the
self-check's message rather than skip, so CI cannot silently lose the battery.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from waits import ROOMY_S, WAIT_S

from sandboxes.bwrap import BwrapRunner, Limits, check_bwrap

MiB = 1024**2
SECRET_NAME = "CONDUCTOR_BENCH_TEST_SECRET"
SECRET = "sk-test-do-not-leak-5f1c2a"
PROJECT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def runner() -> BwrapRunner:
    check_bwrap()
    return BwrapRunner(Limits(processes=256, output_bytes=4 * MiB, tmp_bytes=16 * MiB, workdir_bytes=16 * MiB))


MAIN = f"main{os.getpid()}.py"  # this test process's programs, told apart from other harnesses' sandboxes


async def py(runner: BwrapRunner, src: str, *, timeout: float = ROOMY_S, stdin: str | None = None, files=None):
    return await runner.run(
        ["python3", MAIN], files={MAIN: textwrap.dedent(src), **(files or {})}, stdin=stdin, timeout=timeout
    )


def sandbox_pids(marker: str = MAIN) -> list[int]:
    """Live processes whose cmdline holds `marker` (default: the programs `py` runs).

    Not "every process of a sandbox uid": other harnesses on the machine run sandboxes too."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = [ln for ln in Path(f"/proc/{name}/status").read_text().splitlines() if ln.startswith("State:")]
        except OSError:
            continue
        if state and "Z" in state[0]:
            continue
        if marker in cmd:
            found.append(int(name))
    return found


async def outliving(marker: str = MAIN, wait: float = WAIT_S) -> list[int]:
    """`sandbox_pids(marker)` once they are gone or `wait` seconds have passed (killed processes
    take a moment to go, longer on a busy machine; this ends as soon as they have)."""
    deadline = time.monotonic() + wait
    while (pids := sandbox_pids(marker)) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return pids


# ---------------------------------------------------------------- basics


async def test_runs_as_unprivileged_uid_with_files_and_stdin(runner):
    r = await py(
        runner,
        """
        import os, sys
        print(os.getuid(), os.getgid(), os.getgroups())
        print(open("data/in.txt").read())
        print(sys.stdin.read().upper())
        """,
        stdin="hello stdin",
        files={"data/in.txt": "nested file"},
    )
    assert r.ok, r
    uid, gid, groups = r.stdout.splitlines()[0].split(" ", 2)
    # as root the sandbox drops all groups; a normal user's own groups cannot be dropped in a
    # user namespace and show, unmapped, as the overflow gid
    assert int(uid) != 0 and int(gid) != 0 and groups in (("[]",) if os.geteuid() == 0 else ("[]", "[65534]"))
    assert "nested file" in r.stdout and "HELLO STDIN" in r.stdout


async def test_exit_code_and_stderr(runner):
    r = await py(runner, "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)")
    assert (r.returncode, r.stdout, r.stderr, r.timed_out, r.ok) == (3, "out\n", "err\n", False, False)


async def test_fresh_workdir_each_call(runner):
    await py(runner, "open('left.txt', 'w').write('x')")
    r = await py(runner, "import os; print(sorted(os.listdir('.')))")
    assert r.stdout.strip() == f"[{MAIN!r}]"


async def test_host_filesystem_hidden(runner):
    r = await py(
        runner,
        f"""
        import os
        project = {str(PROJECT)!r}
        # a venv inside the project (.nox/) is mounted read-only, so the path may exist;
        # no project file may be visible
        print([p for p in ("pyproject.toml", "tasks", "solvers", ".git") if os.path.exists(os.path.join(project, p))])
        print(os.path.exists("/root/.ssh"), os.path.exists("/home"))
        """,
    )
    assert r.stdout.splitlines() == ["[]", "False False"], r


async def test_tmp_is_size_capped(runner):
    r = await py(
        runner,
        """
        try:
            with open("/tmp/big", "wb") as f:
                for _ in range(64):
                    f.write(b"x" * 1024 * 1024)
            print("WROTE")
        except OSError as e:
            print("CAPPED", e.errno)
        """,
    )
    assert "CAPPED 28" in r.stdout, r  # ENOSPC at 16 MiB


async def test_workdir_is_size_capped(runner):
    r = await py(runner, "open('big', 'wb').write(b'x' * 64 * 1024 * 1024)")
    assert not r.ok and ("No space" in r.stderr or "File too large" in r.stderr or r.returncode), r


async def test_numpy_from_harness_venv_importable(runner):
    pytest.importorskip("numpy")
    r = await py(runner, "import numpy; print(numpy.arange(4).sum())")
    assert r.stdout.strip() == "6", r


# ---------------------------------------------------------------- (a) network


async def test_cannot_reach_harness_loopback(runner):
    connections = []

    async def on_conn(reader, writer):
        connections.append(1)
        writer.close()

    server = await asyncio.start_server(on_conn, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        r = await py(
            runner,
            f"""
            import socket
            try:
                socket.create_connection(("127.0.0.1", {port}), timeout=2)
                print("CONNECTED")
            except OSError as e:
                print("BLOCKED", type(e).__name__)
            try:
                socket.create_connection(("1.1.1.1", 53), timeout=2)
                print("INTERNET")
            except OSError as e:
                print("NO-INTERNET", type(e).__name__)
            import os
            print(sorted(os.listdir("/sys/class/net")) if os.path.exists("/sys/class/net") else "no-sys")
            """,
        )
    finally:
        server.close()
        await server.wait_closed()
    assert "BLOCKED" in r.stdout and "NO-INTERNET" in r.stdout, r
    assert "CONNECTED" not in r.stdout and "INTERNET\n" not in r.stdout
    assert connections == []


# ---------------------------------------------------------------- (b, c) environment


async def test_harness_env_invisible(runner, monkeypatch):
    monkeypatch.setenv(SECRET_NAME, SECRET)
    r = await py(
        runner,
        """
        import os
        print(dict(os.environ))
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    print(pid, open(f"/proc/{pid}/environ", "rb").read())
                except OSError as e:
                    print(pid, "unreadable", e.errno)
        """,
    )
    assert r.ok, r
    assert SECRET not in r.stdout + r.stderr and SECRET_NAME not in r.stdout
    assert "OPENAI_API_KEY" not in r.stdout


async def test_proc1_environ_has_no_secret(runner, monkeypatch):
    monkeypatch.setenv(SECRET_NAME, SECRET)
    r = await py(
        runner,
        """
        try:
            print(repr(open("/proc/1/environ", "rb").read()))
        except OSError as e:
            print("DENIED", e.errno)
        print(open("/proc/1/cmdline", "rb").read())
        """,
    )
    assert SECRET not in r.stdout + r.stderr, r


# ---------------------------------------------------------------- (d) writes


async def test_cannot_write_system_or_project(runner):
    marker = f"pwned-{os.getpid()}-{time.monotonic_ns()}"
    targets = [f"/etc/{marker}", f"{PROJECT}/{marker}", f"/usr/{marker}", f"/root/{marker}", f"/{marker}"]
    r = await py(
        runner,
        f"""
        import os
        for t in {targets!r}:
            try:
                os.makedirs(os.path.dirname(t), exist_ok=True)
                open(t, "w").write("x")
                print("WROTE", t)
            except OSError as e:
                print("DENIED", t, e.errno)
        """,
    )
    assert "WROTE" not in r.stdout, r
    for t in targets:
        assert not os.path.exists(t), t


# ---------------------------------------------------------------- (e) fork bomb


@pytest.mark.slow
async def test_fork_bomb_contained(runner):
    r = await py(
        runner,
        """
        import os, time
        n = 0
        end = time.time() + 30
        while time.time() < end:
            try:
                if os.fork() == 0:
                    n = 0
                else:
                    n += 1
            except OSError:
                time.sleep(0.01)
        """,
        timeout=3,
    )
    assert r.timed_out and not r.ok  # killed at its 3 s, not after its own 30 s of forking
    assert await outliving() == []
    again = await py(runner, "print('alive')")  # the harness carries on
    assert again.stdout == "alive\n"


async def test_thread_limit_allows_256(runner):
    r = await py(
        runner,
        """
        import threading, time
        ts = [threading.Thread(target=time.sleep, args=(0.5,)) for _ in range(200)]
        for t in ts: t.start()
        for t in ts: t.join()
        print("ok")
        """,
    )
    assert r.stdout == "ok\n", r


# ---------------------------------------------------------------- (f) memory


async def test_big_allocation_fails(runner):
    r = await py(
        runner,
        """
        try:
            b = bytearray(8 * 1024**3)
            print("ALLOCATED")
        except MemoryError:
            print("MemoryError")
        """,
    )
    assert "ALLOCATED" not in r.stdout
    assert "MemoryError" in r.stdout or not r.ok, r


# ---------------------------------------------------------------- (g) endless loop


async def test_endless_loop_killed_at_wall_timeout(runner):
    t0 = time.monotonic()
    r = await py(runner, "while True: pass", timeout=1.5)
    assert r.timed_out and r.returncode is None and not r.ok
    assert time.monotonic() - t0 > 1.4  # not before its time-out (a busy machine only adds to this)
    assert await outliving() == []


async def test_sleeping_program_killed_at_wall_timeout(runner):
    r = await py(runner, "import time; time.sleep(100)", timeout=1)
    assert r.timed_out


# ---------------------------------------------------------------- (h) orphans


ORPHAN = """
import os, sys, time
print("parent", flush=True)
if os.fork() == 0:
    if os.fork() == 0:
        os.execv("/bin/sleep", ["sleep", "{marker}"])  # holds stdout, orphaned
    os._exit(0)
{tail}
"""


async def test_double_fork_orphan_killed_when_main_exits(runner):
    marker = str(900000 + os.getpid() % 90000)
    r = await py(runner, ORPHAN.format(marker=marker, tail="time.sleep(0.3)"), timeout=ROOMY_S)
    assert not r.timed_out, "the orphan holding stdout kept run() waiting"
    assert r.stdout.startswith("parent")
    assert await outliving(marker) == []


async def test_double_fork_orphan_killed_at_timeout(runner):
    marker = str(800000 + os.getpid() % 90000)
    r = await py(runner, ORPHAN.format(marker=marker, tail="time.sleep(100)"), timeout=1.5)
    assert r.timed_out  # and run() returned, though the orphan held stdout
    assert await outliving(marker) == []


async def test_setsid_daemon_killed(runner):
    marker = str(700000 + os.getpid() % 90000)
    r = await py(
        runner,
        f"""
        import os, subprocess
        subprocess.Popen(["/bin/sleep", "{marker}"], start_new_session=True,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        print("spawned")
        """,
    )
    assert r.ok, r
    assert await outliving(marker) == []


# ---------------------------------------------------------------- (i) output flood


async def test_gigabyte_of_output_is_capped(runner):
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    r = await py(
        runner,
        """
        import sys
        chunk = b"x" * (1 << 20)
        for _ in range(1024):
            sys.stdout.buffer.write(chunk)
        """,
        timeout=ROOMY_S,
    )
    assert r.output_truncated and r.returncode is None and not r.ok
    assert not r.timed_out  # killed at the cap, not at its time-out
    assert len(r.stdout) == 4 * MiB
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024
    assert grown_mib < 200, grown_mib
    assert await outliving() == []


async def test_stderr_flood_is_capped(runner):
    r = await py(runner, "import sys\nwhile True: sys.stderr.write('e' * 65536)", timeout=ROOMY_S)
    assert r.output_truncated and len(r.stderr) == 4 * MiB


# ---------------------------------------------------------------- concurrency


async def test_concurrent_runs_are_independent(runner):
    results = await asyncio.gather(*(py(runner, f"print({i} * 2)") for i in range(8)))
    assert [r.stdout.strip() for r in results] == [str(i * 2) for i in range(8)]


def test_rejects_path_escape():
    with pytest.raises(ValueError):
        asyncio.run(BwrapRunner().run(["true"], files={"../x": "y"}, timeout=1))
    with pytest.raises(ValueError):
        asyncio.run(BwrapRunner().run(["true"], files={"/etc/x": "y"}, timeout=1))


# ---------------------------------------------------------------- harness death, self-check


def test_sandbox_dies_with_the_harness(tmp_path):
    """SIGKILL the harness mid-run: --die-with-parent takes the whole sandbox down."""
    import signal
    import subprocess
    import sys

    marker = str(600000 + os.getpid() % 90000)
    script = tmp_path / "harness.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import asyncio, sys
            sys.path.insert(0, {str(PROJECT)!r})
            from sandboxes.bwrap import BwrapRunner
            print("start", flush=True)
            asyncio.run(BwrapRunner().run(["/bin/sleep", "{marker}"], timeout=60))
            """
        )
    )
    harness = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE)
    try:
        assert harness.stdout.readline() == b"start\n"
        deadline = time.monotonic() + WAIT_S  # a wait, not a bound: it ends when the sandbox is up
        while not sandbox_pids(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sandbox_pids(marker), "the sandboxed sleep never started"
    finally:
        harness.send_signal(signal.SIGKILL)
        harness.wait()
    deadline = time.monotonic() + WAIT_S
    while sandbox_pids(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sandbox_pids(marker) == []


def test_self_check_names_the_fix(monkeypatch):
    import sandboxes.bwrap as bw

    monkeypatch.setattr(bw, "_checked", False)
    monkeypatch.setattr(bw, "_tool", lambda name: None)
    with pytest.raises(bw.BwrapUnavailableError, match="apt-get install -y bubblewrap"):
        bw.check_bwrap()
    with pytest.raises(bw.BwrapUnavailableError, match="--sandbox docker"):
        asyncio.run(BwrapRunner().run(["true"], timeout=1))  # never runs unsandboxed


def test_self_check_reports_broken_bwrap(monkeypatch):
    import sandboxes.bwrap as bw

    monkeypatch.setattr(bw, "_checked", False)
    monkeypatch.setattr(
        bw,
        "_build_argv",
        lambda *a, **k: ["/bin/sh", "-c", "echo 'No permissions to create new namespace' >&2; exit 1"],
    )
    with pytest.raises(
        bw.BwrapUnavailableError, match="No permissions to create new namespace.*unprivileged_userns_clone"
    ):
        bw.check_bwrap()


async def test_no_nested_user_namespace(runner):
    """seccomp (x86_64) refuses CLONE_NEWUSER: no 'root' inside a namespace of its own."""
    import platform

    if platform.machine() != "x86_64":
        pytest.skip("the seccomp filter is x86_64 only")
    r = await runner.run(["unshare", "-Ur", "id"], timeout=ROOMY_S)
    assert r.returncode != 0 and "uid=0" not in r.stdout, r


async def test_threads_subprocess_multiprocessing_still_work(runner):
    r = await py(
        runner,
        """
        import multiprocessing as mp, subprocess

        def sq(x):
            return x * x

        if __name__ == "__main__":
            with mp.Pool(2) as pool:
                print(pool.map(sq, range(4)))
            print(subprocess.run(["echo", "sub"], capture_output=True, text=True).stdout.strip())
        """,
    )
    assert r.stdout == "[0, 1, 4, 9]\nsub\n", r


# ---------------------------------------------------------------- kernel surface (seccomp)

X86_64_ONLY = pytest.mark.skipif(
    __import__("platform").machine() != "x86_64", reason="the seccomp filter is x86_64 only"
)

# push rbx; mov eax, 310 (i386 unshare); mov ebx, CLONE_NEWUSER; int 0x80; pop rbx; ret
INT80_UNSHARE = """
import ctypes, mmap, os
code = bytes.fromhex("53" "b836010000" "bb00000010" "cd80" "5b" "c3")
before = os.readlink("/proc/self/ns/user")
buf = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
buf.write(code)
addr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
rc = ctypes.CFUNCTYPE(ctypes.c_int)(addr)()
print("rc", rc)
print("ESCAPED" if os.readlink("/proc/self/ns/user") != before else "CONTAINED")
"""


@X86_64_ONLY
async def test_no_user_namespace_through_32bit_syscalls(runner):
    """int 0x80 (i386 numbers) and the x32 ABI cannot reach unshare(CLONE_NEWUSER)."""
    r = await py(runner, INT80_UNSHARE)
    assert "ESCAPED" not in r.stdout, r
    assert "rc -1" in r.stdout or r.returncode != 0, r  # -EPERM, or killed
    r = await py(
        runner,
        """
        import ctypes, os
        libc = ctypes.CDLL(None, use_errno=True)
        before = os.readlink("/proc/self/ns/user")
        rc = libc.syscall(0x40000000 | 272, 0x10000000)  # x32 unshare(CLONE_NEWUSER)
        print(rc, ctypes.get_errno(), os.readlink("/proc/self/ns/user") != before)
        """,
    )
    assert r.stdout.split() == ["-1", "1", "False"], r


@X86_64_ONLY
async def test_io_uring_denied(runner):
    r = await py(
        runner,
        """
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        params = ctypes.create_string_buffer(120)
        for nr, args in ((425, (4, params)), (426, (0, 0, 0, 0, None, 0)), (427, (0, 0, None, 0))):
            rc = libc.syscall(nr, *args)
            print(nr, rc, ctypes.get_errno())
        """,
    )
    assert r.stdout.split("\n")[:3] == ["425 -1 1", "426 -1 1", "427 -1 1"], r


KEYS = """
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
# keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING / KEY_SPEC_USER_KEYRING, create=0)
for spec in (-3, -4):
    print("get", spec, libc.syscall(250, 0, spec, 0), ctypes.get_errno())
if sys.argv[1:] == ["add"]:
    print("add", libc.syscall(248, b"user", b"cb-persist", b"secret", 6, -4), ctypes.get_errno())
# request_key("user", "cb-persist", NULL, 0): a key left in this uid's keyring by an earlier run
print("find", libc.syscall(249, b"user", b"cb-persist", None, 0), ctypes.get_errno())
try:
    print("proc", open("/proc/keys").read().count("\\n"), open("/proc/key-users").read().count("\\n"))
except OSError as e:
    print("proc", "unreadable", e.errno)
"""


@X86_64_ONLY
async def test_keyrings_unreachable(runner):
    """No keyctl/add_key/request_key and no /proc/keys: the harness's session keyring and any
    key a run could leave in its uid's user keyring for a later run are out of reach."""
    first = await runner.run(["python3", "k.py", "add"], files={"k.py": KEYS}, timeout=ROOMY_S)
    second = await runner.run(["python3", "k.py"], files={"k.py": KEYS}, timeout=ROOMY_S)
    for r in (first, second):
        lines = r.stdout.splitlines()
        assert r.ok and len(lines) >= 4, r
        for line in lines:
            if line.startswith(("get", "add", "find")):
                assert line.split()[-2:] == ["-1", "1"], r  # EPERM from the filter
        assert lines[-1] == "proc 0 0" or lines[-1].startswith("proc unreadable"), r


# ---------------------------------------------------------------- the Inspect sandbox's work dir


@pytest.fixture
async def sample_env():
    """One sample of the Inspect `bwrap` sandbox (sample_init .. sample_cleanup), small caps."""
    from sandboxes.inspect_bwrap import BwrapSandboxConfig, BwrapSandboxEnvironment

    check_bwrap()
    cfg = BwrapSandboxConfig(workdir_bytes=8 * MiB, workdir_inodes=1024, default_timeout=ROOMY_S)
    envs = await BwrapSandboxEnvironment.sample_init("security-test", cfg, {})
    try:
        yield envs["default"]
    finally:
        await BwrapSandboxEnvironment.sample_cleanup("security-test", cfg, envs, False)


def host_decoys(tmp_path: Path, n: int = 300) -> Path:
    """A host dir of root-only files (owner, mode and content recorded for the asserts)."""
    d = tmp_path / "host"
    d.mkdir(mode=0o700)
    for i in range(n):
        f = d / f"f{i}"
        f.write_text(f"HOST-SECRET-{i}")
        f.chmod(0o600)
    return d


def untouched(d: Path, n: int = 300) -> bool:
    me = os.getuid()
    files = sorted(p.name for p in d.iterdir())
    return files == sorted(f"f{i}" for i in range(n)) and all(
        (d / f).lstat().st_uid == me and (d / f).lstat().st_mode & 0o777 == 0o600 for f in files
    )


# Inside the sandbox: `d` flips between a real directory (holding f0..f299, `secret`) and a
# symlink to the host dir, atomically (renameat2 RENAME_EXCHANGE), for a bounded time.
SWAPPER = """
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
os.chmod(".", 0o777)  # stays usable if the host re-owns the work dir to another uid
os.mkdir("d")
os.chmod("d", 0o777)
for i in range(300):
    open(f"d/f{i}", "w").write("sandbox")
os.symlink(sys.argv[1], "dlink")
open("started", "w").write("1")
end, n = time.time() + float(sys.argv[2]), 0
while time.time() < end and n < 50_000_000:
    libc.syscall(316, -100, b"d", -100, b"dlink", 2)  # renameat2(.., RENAME_EXCHANGE)
    n += 1
print("swaps", n)
"""


async def start_swapper(env, host: Path, seconds: float):
    await env.write_file("swap.py", SWAPPER)
    task = asyncio.ensure_future(env.exec(["python3", "swap.py", str(host), str(seconds)], concurrency=False))
    deadline = time.monotonic() + WAIT_S  # a wait, not a bound: it ends when the swapper has started
    while not task.done() and time.monotonic() < deadline:
        try:
            await env.read_file("started")
            return task
        except (FileNotFoundError, PermissionError):
            await asyncio.sleep(0.02)
    raise AssertionError(await task if task.done() else f"hang guard: the swapper had not started after {WAIT_S} s")


@pytest.mark.slow
async def test_exec_never_chowns_host_files_through_swapped_symlink(sample_env, tmp_path):
    host = host_decoys(tmp_path)
    swapper = await start_swapper(sample_env, host, 4)
    for _ in range(15):  # each exec used to walk (and chown) the work dir as root
        await sample_env.exec(["true"], concurrency=False)
    r = await swapper
    assert r.success and "swaps" in r.stdout, r
    assert untouched(host)


@pytest.mark.slow
async def test_read_write_file_never_follow_swapped_symlink(sample_env, tmp_path):
    host = host_decoys(tmp_path)
    swapper = await start_swapper(sample_env, host, 4)
    leaked, i = [], 0
    while not swapper.done() and i < 600:  # bounded: the swap loop stops after 4 s
        try:
            data = await sample_env.read_file(f"d/f{i % 300}")
            if "HOST" in data:
                leaked.append(data)
        except OSError:
            pass  # refused: `d` was the link at that moment
        with contextlib.suppress(OSError):
            await sample_env.write_file(f"d/new{i}", "planted")
        await asyncio.sleep(0.001)
        i += 1
    r = await swapper
    assert r.success, r
    assert leaked == []
    assert untouched(host)
    # at rest, one of the pair is the real dir (readable), the other the link (refused)
    outcomes = []
    for name in ("d", "dlink"):
        try:
            outcomes.append(await sample_env.read_file(f"{name}/f0"))
        except (PermissionError, NotADirectoryError):
            outcomes.append("refused")
    assert sorted(outcomes) == ["refused", "sandbox"], outcomes


async def test_fifo_and_socket_refused_without_blocking(sample_env):
    make = "import os, socket; os.mkfifo('pipe'); os.mkfifo('wpipe'); socket.socket(socket.AF_UNIX).bind('sock')"
    r = await sample_env.exec(["python3", "-c", make])
    assert r.success, r
    for io in (lambda: sample_env.read_file("sock"), lambda: sample_env.write_file("sock", "x")):
        with pytest.raises(PermissionError, match="not a regular file"):
            await asyncio.wait_for(io(), WAIT_S)  # a hang guard: blocking would wait forever
    fifo = os.path.join(sample_env.directory, "pipe")

    def attempt(coro_fn):
        try:
            asyncio.run(coro_fn())
            return "done"
        except OSError as e:
            return type(e).__name__

    outcomes = []
    for fn in (lambda: sample_env.read_file("pipe"), lambda: sample_env.write_file("wpipe", "x")):
        try:
            outcomes.append(await asyncio.wait_for(asyncio.to_thread(attempt, fn), WAIT_S))
        except TimeoutError:
            for name in ("pipe", "wpipe"):  # release the stuck thread, then fail
                with contextlib.suppress(OSError):
                    os.close(os.open(os.path.join(sample_env.directory, name), os.O_RDWR | os.O_NONBLOCK))
            outcomes.append("blocked")
    assert outcomes[0] != "blocked" and outcomes[1] != "blocked", outcomes
    assert outcomes == ["PermissionError", "PermissionError"], outcomes
    assert os.path.exists(fifo)


@pytest.mark.skipif(os.geteuid() != 0, reason="the work dir is a capped tmpfs only when the harness is root")
async def test_workdir_bytes_and_inodes_capped(sample_env, tmp_path):
    r = await sample_env.exec(
        [
            "python3",
            "-c",
            textwrap.dedent(
                """
                import os
                try:
                    with open("big", "wb") as f:
                        for _ in range(16):
                            f.write(b"x" * 1024 * 1024)
                    print("WROTE")
                except OSError as e:
                    print("BYTES", e.errno)
                os.remove("big")
                n = 0
                try:
                    for n in range(10_000):
                        open(f"i{n}", "w").close()
                    print("INODES-UNCAPPED")
                except OSError as e:
                    print("INODES", e.errno, n < 1100)
                """
            ),
        ]
    )
    assert r.stdout.split("\n")[:2] == ["BYTES 28", "INODES 28 True"], r
    assert os.stat(sample_env.directory).st_dev != os.stat(tempfile.gettempdir()).st_dev  # not the host disk
    with pytest.raises(OSError):
        await sample_env.write_file("more", b"y" * 9 * MiB)  # the host side hits the same cap


# ---------------------------------------------------------------- memory of a sandbox as a whole

# Each process holds 150 MiB until released, not for a while: on a busy machine processes that each held
# for a fixed time could start so far apart that they never held at once. Released once all three have
# allocated or gone, by a line on stdin (HOLD) or a file in the work dir (HOLD_FOR_FILE).
ALLOCATE = """
import os, sys, time
try:
    b = bytearray(150 * 1024 * 1024)  # touched: the pages are really held
    for i in range(0, len(b), 4096):
        b[i] = 1
    {wait}
    print("HELD")
except MemoryError:
    print("MemoryError")
"""
HOLD = ALLOCATE.format(wait='print("READY", flush=True)\n    sys.stdin.read()')
HOLD_FOR_FILE = ALLOCATE.format(
    wait="open(sys.argv[1], 'w').close()\n    while not os.path.exists('release'):\n        time.sleep(0.02)"
)

ROOT_CGROUP = pytest.mark.skipif(
    __import__("sandboxes.cgroup", fromlist=["_parent"])._parent() is None,
    reason="no memory cgroup can be made here (not root, or no memory controller): the bound is "
    "processes x RLIMIT_AS, as docs/sandbox.md states",
)


@pytest.mark.slow
@ROOT_CGROUP
async def test_run_memory_capped_as_a_whole():
    """Three processes of one run, each within RLIMIT_AS, cannot together exceed the run's cap."""
    runner = BwrapRunner(Limits(memory_bytes=1024 * MiB, sandbox_memory_bytes=256 * MiB))
    src = (
        "import subprocess, sys\n"
        f"ps = [subprocess.Popen([sys.executable, '-c', {HOLD!r}], stdin=-1, stdout=-1, text=True) for _ in range(3)]\n"
        "print([p.stdout.readline() for p in ps])\n"  # READY, MemoryError or '' (killed): each allocated or gone
        "[p.stdin.close() for p in ps]\n"
        "print([p.stdout.read() for p in ps], [p.wait() for p in ps])\n"
    )
    r = await runner.run(["python3", "-c", src], timeout=ROOMY_S)
    assert r.stdout.count("HELD") < 3, r  # at least one was refused or OOM-killed


@pytest.mark.slow
@ROOT_CGROUP
async def test_sample_memory_capped_across_concurrent_execs():
    """Concurrent execs of one Inspect sample share one memory cap (not one per process)."""
    from sandboxes.inspect_bwrap import BwrapSandboxConfig, BwrapSandboxEnvironment

    cfg = BwrapSandboxConfig(memory_bytes=1024 * MiB, sandbox_memory_bytes=256 * MiB)
    envs = await BwrapSandboxEnvironment.sample_init("mem-test", cfg, {})
    env = envs["default"]
    try:
        execs = [
            asyncio.ensure_future(env.exec(["python3", "-c", HOLD_FOR_FILE, f"ready{i}"], concurrency=False))
            for i in range(3)
        ]
        async with asyncio.timeout(WAIT_S):  # a hang guard: each has allocated (or is gone) within seconds
            while not all(e.done() or Path(env.directory, f"ready{i}").exists() for i, e in enumerate(execs)):
                await asyncio.sleep(0.05)
        await env.write_file("release", "")
        runs = await asyncio.gather(*execs)
    finally:
        await BwrapSandboxEnvironment.sample_cleanup("mem-test", cfg, envs, False)
    assert sum("HELD" in r.stdout for r in runs) < 3, runs
    assert env.cgroup is not None and not env.cgroup.path.exists()  # removed with the sample


def run_filter(program: bytes, nr: int, arch: int = 0xC000003E, arg0: int = 0) -> int:
    """Evaluate the classic-BPF seccomp program on one syscall (the opcodes it uses)."""
    import struct

    data = struct.pack("=iIQ6Q", nr, arch, 0, arg0 & 0xFFFFFFFFFFFFFFFF, 0, 0, 0, 0, 0)
    insns = [struct.unpack_from("=HBBI", program, i) for i in range(0, len(program), 8)]
    pc = acc = 0
    for _ in range(len(insns)):  # no backward jumps in classic BPF: bounded
        code, jt, jf, k = insns[pc]
        if code == 0x20:
            acc = struct.unpack_from("=I", data, k)[0]
            pc += 1
        elif code == 0x06:
            return k
        else:
            taken = {0x15: acc == k, 0x45: bool(acc & k)}[code]
            pc += 1 + (jt if taken else jf)
    raise AssertionError("filter fell off its end")


def test_seccomp_program_decisions():
    """The filter's decision table, independent of the kernel it runs on."""
    from sandboxes.bwrap import _SECCOMP_X86_64 as prog

    allow, eperm, enosys = 0x7FFF0000, 0x00050001, 0x00050026
    assert run_filter(prog, 0) == allow  # read
    assert run_filter(prog, 56, arg0=0x3D0F00) == allow  # clone of a thread
    assert run_filter(prog, 56, arg0=0x10000000) == eperm  # clone(CLONE_NEWUSER)
    assert run_filter(prog, 272, arg0=0x20000) == allow  # unshare(CLONE_NEWNS) (fails later: no caps)
    assert run_filter(prog, 272, arg0=0x10000000 | 0x20000) == eperm
    assert run_filter(prog, 435) == enosys  # clone3: libc falls back to clone
    for nr in (248, 249, 250, 425, 426, 427):  # keyrings, io_uring
        assert run_filter(prog, nr) == eperm, nr
    assert run_filter(prog, 0x40000000 | 272, arg0=0x10000000) == eperm  # x32
    assert run_filter(prog, 0x40000000) == eperm  # x32 read
    assert run_filter(prog, 310, arch=0x40000003, arg0=0x10000000) == eperm  # i386 unshare
    assert run_filter(prog, 3, arch=0x40000003) == eperm  # any i386 syscall
