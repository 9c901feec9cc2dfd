"""LiveCodeBench test driver: runs INSIDE the sandbox as `python3 lcb_driver.py`.

Mirrors the official grader rule by rule: LiveCodeBench/LiveCodeBench at commit
28fef95ea8c9f7a547c8329f2cd3d32b92c1fa24 (lcb_runner/evaluation/testing_util.py,
last changed in 16de2a1; compute_code_generation_metrics.py). Standard library only;
the check copies this file and verdict_channel.py into the sandbox.

Split so that the candidate cannot forge the verdict:

* the trusted parent (this file, started isolated as `python3 -I`, non-dumpable, working
  directory `/`, nothing the candidate can write on its import path: scorers/verdict_channel.py
  `seal_parent`; holds the nonce and the expected outputs) reads `{"nonce", "fn_name",
  "timeout", "tests": [{"input", "output"}]}` on stdin, starts ONE child for the whole
  problem and compares what it sends back;
* the child (`--child`) is the official grading process: `sys.set_int_max_str_digits
  (50000)`, stdin/stdout on /dev/null, the official reliability guard, then the
  program assembled as officially (stdin problems: a final `__main__` guard
  unwrapped, imports hoisted, the rest wrapped in `wrapped_function`; functional
  problems: the module with one `Solution()`), loaded once under the per-test alarm;
  for each test input it receives it runs the program (stdin problems: under the
  official stdin mocks, stdout captured) under `signal.alarm`-style limits and sends
  back the output, the result (plain data, scorers/verdict_channel.py) or the error;
* the parent stops at the first failure; a child that ends (os._exit, SystemExit
  from a functional call, a crash) or exceeds the official global limit
  `(timeout + 1) * n_tests + 5` s fails the whole problem with results `[-2]`, as the
  official pipeline records it (`evaluate_generations_by_problem`).

Verdict, last stdout line `<nonce> <json>`: {"passed", "n_tests", "n_run", "results"
(official codes: true pass, -2 wrong answer (false for a functional one), -3 time
limit, -4 runtime/compile error),
"status", "first_failure"}.
"""

from __future__ import annotations

import ast
import json
import os
import runpy
import select
import signal
import subprocess
import sys
import tempfile
import time
from decimal import Decimal
from typing import Any

DRIVER = os.path.abspath(__file__)
if __name__ == "__main__":  # in the sandbox, run isolated: verdict_channel.py beside it, read from source
    _channel = runpy.run_path(os.path.join(os.path.dirname(DRIVER), "verdict_channel.py"))
    decode, encode, seal_parent = _channel["decode"], _channel["encode"], _channel["seal_parent"]
else:  # imported by the harness (tests)
    from scorers.verdict_channel import decode, encode, seal_parent

IMPORT_STRING = (
    "from string import *\nfrom re import *\nfrom datetime import *\nfrom collections import *\n"
    "from heapq import *\nfrom bisect import *\nfrom copy import *\nfrom math import *\n"
    "from random import *\nfrom statistics import *\nfrom itertools import *\nfrom functools import *\n"
    "from operator import *\nfrom io import *\nfrom sys import *\nfrom json import *\n"
    "from builtins import *\nfrom typing import *\nimport string\nimport re\nimport datetime\n"
    "import collections\nimport heapq\nimport bisect\nimport copy\nimport math\nimport random\n"
    "import statistics\nimport itertools\nimport functools\nimport operator\nimport io\nimport sys\n"
    "import json\nsys.setrecursionlimit(50000)\n"
)

SOLUTION_FILE = "solution.py"
WRONG_ANSWER, TIME_LIMIT, RUNTIME_ERROR = -2, -3, -4
PROCESS_FAILED = -2  # official: the pipeline's result when the grading process yields nothing
MAX_MESSAGE = 64 << 20  # a reply (captured output) larger than this fails the problem
INT_MAX_STR_DIGITS = 50000

# official reliability_guard (testing_util.py): set to None / blocked; `exit` stays usable
GUARD_NONE = {
    "builtins": ("quit", "help"),
    "os": ("kill", "system", "putenv", "remove", "removedirs", "rmdir", "fchdir", "setuid", "fork",
           "forkpty", "killpg", "rename", "renames", "truncate", "replace", "unlink", "fchmod",
           "fchown", "chmod", "chown", "chroot", "lchflags", "lchmod", "lchown", "getcwd", "chdir"),
    "shutil": ("rmtree", "move", "chown"),
    "subprocess": ("Popen",),
}  # fmt: skip
GUARD_MODULES = ("ipdb", "joblib", "resource", "psutil", "tkinter")


# --------------------------------------------------------------------------- comparison (pure)


def truncate(value: Any, length: int = 300) -> str:
    s = value if isinstance(value, str) else str(value)
    if len(s) <= length:
        return s
    return s[: length // 2] + "...(truncated) ..." + s[-length // 2 :]


def stripped_lines(text: str) -> list[str]:
    """Official `get_stripped_lines`: strip the whole text, split on \\n, strip each line."""
    return [line.strip() for line in text.strip().split("\n")]


def decimal_line(line: str) -> list[Decimal] | None:
    """Whitespace-separated tokens as Decimals, or None when one is not a number."""
    try:
        return [Decimal(tok) for tok in line.split()]
    except Exception:  # noqa: BLE001 - official: any failure means "not numbers"
        return None


def compare_stdio(output: str, expected: str) -> tuple[bool, str]:
    """Official `grade_stdio` comparison: (ok, reason)."""
    got, want = stripped_lines(output), stripped_lines(expected)
    if len(got) != len(want):
        return False, "Wrong answer: mismatched output length"
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        if g == w:
            continue
        gd, wd = decimal_line(g), decimal_line(w)
        if gd is None or wd is None or gd != wd:
            return False, f"Wrong answer at output_line_idx={i}: {truncate(g)} != {truncate(w)}"
    return True, ""


def compare_functional(result: Any, expected_json: str) -> bool:
    """Official `grade_call_based`: the (plain-data) result `==` the JSON expected value."""
    return bool(result == json.loads(expected_json))


# --------------------------------------------------------------------------- program assembly (pure)


def unwrap_main_guard(code: str) -> str:
    """Official `clean_if_name`: only a LAST top-level `if __name__ == '__main__':` is
    replaced by its body (its `else` is dropped); anything else is left as is."""
    try:
        tree = ast.parse(code)
        last = tree.body[-1]
        if isinstance(last, ast.If) and ast.unparse(last.test).strip() == "__name__ == '__main__'":
            return ast.unparse(tree.body[:-1]) + "\n" + ast.unparse(last.body)  # type: ignore[arg-type]
    except Exception:  # noqa: BLE001 - official: any failure leaves the code unchanged
        pass
    return code


def wrap_program(code: str) -> str:
    """Official `make_function`: the prelude, then the top-level imports, then every other
    top-level statement inside `def wrapped_function():` (unparsed from the AST)."""
    try:
        tree = ast.parse(code)
        imports = [s for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))]
        others = [s for s in tree.body if not isinstance(s, (ast.Import, ast.ImportFrom))]
        fn = ast.FunctionDef(
            name="wrapped_function",
            args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
            body=others, decorator_list=[], lineno=-1,
        )  # fmt: skip
        return IMPORT_STRING + "\n" + ast.unparse(imports) + "\n" + ast.unparse(fn)  # type: ignore[arg-type]
    except Exception:  # noqa: BLE001 - official: the code as is
        return code


# --------------------------------------------------------------------------- child (untrusted)


class TimeoutException(Exception):  # noqa: N818 - the official name (its repr is how TLE is told)
    pass


def _on_alarm(signum: int, frame: Any) -> None:
    print("timeout occured: alarm went off")  # official; lands in the captured output
    raise TimeoutException


def reliability_guard() -> None:
    import builtins
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


class _FakeBuffer:
    """Official `MockBuffer`: read() gives all bytes, readline() always the FIRST line."""

    def __init__(self, inputs: str) -> None:
        self.inputs = inputs.encode("utf-8")

    def read(self, *args: Any) -> bytes:
        return self.inputs

    def readline(self, *args: Any) -> bytes:
        return self.inputs.split(b"\n")[0] + b"\n"


class _FakeStdin:
    """Official `MockStdinWithBuffer`: read() the whole input (whatever was read before),
    readline() from a StringIO, readlines() = split on \\n; no iteration protocol."""

    def __init__(self, inputs: str) -> None:
        from io import StringIO

        self.inputs = inputs
        self._stringio = StringIO(inputs)
        self.buffer = _FakeBuffer(inputs)

    def read(self, *args: Any) -> str:
        return self.inputs

    def readline(self, *args: Any) -> str:
        return self._stringio.readline(*args)

    def readlines(self, *args: Any) -> list[str]:
        return self.inputs.split("\n")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stringio, name)


def _stdin_patches(inputs: str) -> list[Any]:
    """The official patches of `call_method`, in the order its decorator stack enters them
    (innermost first: the three method patches land on the process's real sys.stdin)."""
    from unittest.mock import mock_open, patch

    lines = iter(inputs.split("\n"))
    return [
        patch("sys.stdin.read", lambda *a: inputs),
        patch("sys.stdin.readlines", lambda *a: inputs.split("\n")),
        patch("sys.stdin.readline", lambda *a: next(lines)),
        patch("sys.stdin", _FakeStdin(inputs)),
        patch("builtins.open", mock_open(read_data=inputs)),
    ]


def _run_stdio(method: Any, inputs: str) -> str:
    """One official stdin test: output captured into a StringIO whose close() is broken
    as officially (a one-argument lambda); SystemExit ends the program normally."""
    import contextlib
    from io import StringIO

    captured = StringIO()
    captured.close = lambda x: 1  # type: ignore[assignment,method-assign]
    saved = sys.stdout
    sys.stdout = captured
    try:
        with contextlib.ExitStack() as stack:
            for p in _stdin_patches(inputs):
                stack.enter_context(p)
            try:
                method()
            except SystemExit:
                pass
    finally:
        sys.stdout = saved
    return captured.getvalue()


def _honest_eq(kind: type, base: type) -> bool:
    """True when `kind == plain base value` behaves as the base type's `==`: the subclass keeps
    the base `__eq__`, or it is a standard-library mapping whose `__eq__` defers to dict's
    against a plain dict (Counter, OrderedDict)."""
    import collections

    return kind.__eq__ is base.__eq__ or kind in (collections.Counter, collections.OrderedDict)


def _normalize(value: Any, depth: int = 0) -> Any:
    """Instances of subclasses of built-in containers/scalars whose `==` against plain data
    is the base type's (defaultdict, Counter, ...) as their base type, so they compare as
    officially; any other subclass stays as is (opaque on the channel: it fails)."""
    if depth > 60:
        return value
    for base in (dict, list, tuple, set, frozenset, int, float, str):
        if isinstance(value, base) and type(value) is not base and type(value) is not bool:
            if not _honest_eq(type(value), base):
                return value
            if base is dict:
                return {k: _normalize(v, depth + 1) for k, v in value.items()}
            if base in (list, tuple, set, frozenset):
                return base(_normalize(v, depth + 1) for v in value)
            return base(value)
    if type(value) in (list, tuple):
        return type(value)(_normalize(v, depth + 1) for v in value)
    if type(value) is dict:
        return {k: _normalize(v, depth + 1) for k, v in value.items()}
    return value


def _child(mode: str, solution: str, fn_name: str, timeout: float) -> None:
    requests = os.fdopen(os.dup(0), "rb")
    replies = os.dup(1)
    sink = os.open(os.devnull, os.O_RDWR)
    os.dup2(sink, 0)
    os.dup2(sink, 1)
    sys.stdin = open(os.devnull)  # noqa: SIM115 - as in the official multiprocessing child
    write, exit_now = os.write, os._exit

    def send(message: dict[str, Any]) -> None:
        data = (json.dumps(message, separators=(",", ":")) + "\n").encode("utf-8", "surrogatepass")
        view = memoryview(data)
        while view:
            view = view[write(replies, view) :]

    def fail_code(e: BaseException) -> int:
        return TIME_LIMIT if "timeoutexception" in repr(e).lower() else RUNTIME_ERROR

    with open(solution, encoding="utf-8") as f:
        code = f.read()
    sys.set_int_max_str_digits(INT_MAX_STR_DIGITS)
    signal.signal(signal.SIGALRM, _on_alarm)
    reliability_guard()

    from types import ModuleType

    code = wrap_program(unwrap_main_guard(code)) if mode == "stdio" else IMPORT_STRING + "\n\n" + code
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:  # official compile_code: the module runs under the per-test alarm
        module = ModuleType("tmp_sol", "")
        exec(code, module.__dict__)  # noqa: S102
        target: Any = module.Solution() if "class Solution" in code else module
        name = "wrapped_function" if mode == "stdio" else fn_name
        method = getattr(target, name) if hasattr(target, name) else None
    except Exception as e:  # noqa: BLE001 - official: an error while testing -> [-4]
        signal.setitimer(signal.ITIMER_REAL, 0)
        send({"load_error": f"Error during testing: {e!r}"[:1000]})
        exit_now(0)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    if method is None:
        send({"load_error": f"no callable {name!r} in the program"})
        exit_now(0)
    send({"loaded": True})
    while True:
        line = requests.readline()
        if not line:
            exit_now(0)
        inputs = json.loads(line)["input"]
        try:
            if mode == "stdio":
                signal.setitimer(signal.ITIMER_REAL, timeout)
                output = _run_stdio(method, inputs)
                signal.setitimer(signal.ITIMER_REAL, 0)
                reply: dict[str, Any] = {"output": output}
            else:
                args = [json.loads(a) for a in inputs.split("\n")]
                signal.setitimer(signal.ITIMER_REAL, timeout)
                prediction = method(*args)
                signal.setitimer(signal.ITIMER_REAL, 0)
                if isinstance(prediction, tuple):  # official: a tuple counts as a list
                    prediction = list(prediction)
                reply = {"result": encode(_normalize(prediction))}
        except Exception as e:  # noqa: BLE001 - official: timeout -> -3, anything else -> -4
            signal.setitimer(signal.ITIMER_REAL, 0)
            reply = {"error_code": fail_code(e), "error": repr(e)[:1000]}
        send(reply)


# --------------------------------------------------------------------------- parent (trusted)


class _ChildGone(Exception):
    """The grading process ended, broke the protocol or ran past the global limit."""


class Channel:
    """Line-delimited JSON to and from the child, bounded by one global deadline."""

    def __init__(self, proc: subprocess.Popen, deadline: float) -> None:
        self.proc, self.deadline, self._buffer = proc, deadline, bytearray()
        os.set_blocking(proc.stdin.fileno(), False)  # type: ignore[union-attr]

    def _wait(self, fd: int, writing: bool) -> None:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise _ChildGone("global timeout")
        r, w, _ = select.select([] if writing else [fd], [fd] if writing else [], [], left)
        if not r and not w:
            raise _ChildGone("global timeout")

    def send(self, message: dict[str, Any]) -> None:
        fd = self.proc.stdin.fileno()  # type: ignore[union-attr]
        view = memoryview((json.dumps(message) + "\n").encode("utf-8", "surrogatepass"))
        while view:
            self._wait(fd, writing=True)
            try:
                view = view[os.write(fd, view) :]
            except BlockingIOError:
                continue
            except OSError as e:
                raise _ChildGone("the grading process ended") from e

    def receive(self) -> dict[str, Any]:
        fd = self.proc.stdout.fileno()  # type: ignore[union-attr]
        end = self._buffer.find(b"\n")
        while end < 0:
            self._wait(fd, writing=False)
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise _ChildGone("the grading process ended")
            start = len(self._buffer)
            self._buffer += chunk  # bytearray: amortised linear
            if len(self._buffer) > MAX_MESSAGE:
                raise _ChildGone("reply too large")
            end = self._buffer.find(b"\n", start)
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 1]
        message = json.loads(line.decode("utf-8", "surrogatepass"))
        if not isinstance(message, dict):
            raise _ChildGone("malformed reply")
        return message


def global_limit(n_tests: int, timeout: float) -> float:
    """Official whole-problem limit: (timeout + 1) * n_tests + 5 seconds."""
    return (timeout + 1) * n_tests + 5


def _judge_one(reply: dict[str, Any], test: dict[str, str], functional: bool) -> dict[str, Any] | None:
    """None when the test passed, else the failure (official codes and messages)."""
    base = {"inputs": truncate(test["input"]), "expected": truncate(test["output"])}
    if "error_code" in reply:
        code = TIME_LIMIT if reply["error_code"] == TIME_LIMIT else RUNTIME_ERROR
        return {**base, "error_code": code, "error": str(reply.get("error", "")),
                "error_message": "Time Limit Exceeded" if code == TIME_LIMIT else "Runtime Error",
                "status": "timeout" if code == TIME_LIMIT else "runtime_error"}  # fmt: skip
    if functional:
        result = decode(reply["result"])
        if compare_functional(result, test["output"]):
            return None
        return {**base, "error_code": WRONG_ANSWER, "error_message": "Wrong Answer", "result": False,
                "status": "wrong_answer", "output": truncate(repr(result))}  # fmt: skip
    output = str(reply["output"])
    ok, why = compare_stdio(output, test["output"])
    if ok:
        return None
    return {**base, "error_code": WRONG_ANSWER, "error_message": why, "status": "wrong_answer",
            "output": truncate(output)}  # fmt: skip


def judge(tests: list[dict[str, str]], fn_name: str | None, timeout: float, run_dir: str) -> dict[str, Any]:
    """Run the tests in order in one grading child started in `run_dir`, stop at the first failure."""
    verdict: dict[str, Any] = {"passed": False, "n_tests": len(tests), "n_run": 0, "results": [],
                               "status": "passed", "first_failure": None}  # fmt: skip
    mode = "functional" if fn_name else "stdio"
    cmd = [sys.executable, DRIVER, "--child", mode, SOLUTION_FILE, fn_name or "", repr(timeout)]
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, cwd=run_dir, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                start_new_session=True)  # fmt: skip
        channel = Channel(proc, time.monotonic() + global_limit(len(tests), timeout))
        try:
            first = channel.receive()
            if "load_error" in first:
                verdict.update(status="compile_error", results=[RUNTIME_ERROR],
                               first_failure={"error_code": RUNTIME_ERROR,
                                              "error_message": str(first["load_error"])})  # fmt: skip
                return verdict
            for i, test in enumerate(tests):
                channel.send({"input": test["input"]})
                reply = channel.receive()
                verdict["n_run"] = i + 1
                try:
                    failure = _judge_one(reply, test, mode == "functional")
                except Exception as e:  # noqa: BLE001 - official: an error while grading -> [-4]
                    verdict.update(status="runtime_error", results=[RUNTIME_ERROR],
                                   first_failure={"error_code": RUNTIME_ERROR, "error_message": repr(e)})  # fmt: skip
                    return verdict
                if failure is None:
                    verdict["results"].append(True)
                    continue
                # official: a functional wrong answer is recorded as False, the rest by code
                verdict["results"].append(failure.pop("result", failure["error_code"]))
                verdict["status"] = failure.pop("status")
                verdict["first_failure"] = {"index": i, **failure}
                return verdict
        except (_ChildGone, ValueError, KeyError) as e:
            why = str(e)
            status = "process_exit"
            if "global timeout" in why or "too large" in why:
                status = "global_timeout" if "global timeout" in why else "output_too_large"
            err.seek(0)
            verdict.update(status=status, results=[PROCESS_FAILED],
                           first_failure={"error_code": PROCESS_FAILED, "error_message": str(e),
                                          "error": err.read(4000).decode("utf-8", "replace")[-1500:]})  # fmt: skip
            return verdict
        finally:
            try:  # the whole process group: a solution's own children die too
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            proc.wait()
    verdict["passed"] = True
    return verdict


def main() -> None:
    if len(sys.argv) >= 6 and sys.argv[1] == "--child":
        _child(sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]))
        return
    run_dir = seal_parent()  # raises (no verdict) unless the candidate can reach nothing this process imports
    out, write = os.dup(1), os.write
    request = json.loads(sys.stdin.read())
    nonce = request.pop("nonce")
    try:
        verdict = judge(request["tests"], request.get("fn_name"), float(request.get("timeout", 6)), run_dir)
    except Exception as ex:  # noqa: BLE001 - report, never crash silently
        verdict = {"passed": False, "status": "harness_error", "n_tests": len(request.get("tests", [])),
                   "n_run": 0, "results": [], "first_failure": {"error_message": repr(ex)}}  # fmt: skip
    write(out, ("\n" + nonce + " " + json.dumps(verdict) + "\n").encode("utf-8", "replace"))


if __name__ == "__main__":
    main()
