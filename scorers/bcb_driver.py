"""BigCodeBench driver: runs INSIDE the sandbox as `python3 bcb_driver.py <limit>`.

Mirrors the official harness (bigcodebench 0.2.5, `eval/__init__.py:unsafe_execute`
and `eval/utils.py`): `safe_environment()` (process functions replaced: kill/killpg
only for itself and the processes it started, `os.system`/`subprocess.*`/`os.popen`
pretend success for kill commands, `os.exec*` do nothing, `Popen` starts a new
session), a temporary working directory, `reliability_guard` (TZ=UTC, thread and
TensorFlow variables, `exit`/`quit` disabled, figures closed), the solution and the
task's tests exec'd as ONE module `__test__` (with `sys`, `os`, `environ`), I/O and
subprocess output swallowed, `TestCases` run under `limit` seconds. Pass = the module
loads and the run has no failure and no error (skips pass).

The tests must run in the solution's process, so the verdict is protected in layers:

* a trusted parent (non-dumpable, holds the nonce, the only writer of the verdict
  line) starts the test process (`--child`) and reads its report through a pipe;
  the child never sees the nonce or the parent's stdout;
* the parent counts the tests itself (`TestCases` methods in the task's test source)
  and requires one report per test, a final report, and a normal end;
* the child snapshots the unittest machinery, builtins, `numpy.testing` /
  `pandas.testing`, its own reporting code and the loaded `TestCases` (objects and
  code objects) before the solution runs, and re-checks after every test; any change,
  a trace/profile/monitoring hook, or a skip the test source does not ask for
  (`SkipTest` raised by the solution) is reported as tampering, which fails.

Residual risk: a solution written against this driver can still forge a pass from
inside the test process (e.g. find the report pipe and write the protocol itself, or
return an object whose `__eq__` always says True). The official harness has none of
these checks.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import importlib.util
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import types
import unittest

try:  # in the sandbox this file sits next to verdict_channel.py
    from verdict_channel import not_dumpable
except ImportError:  # imported by the harness (tests)
    from scorers.verdict_channel import not_dumpable

MARK = "@@BCB_VERDICT@@"
SOLUTION, TESTS = "bcb_solution.py", "bcb_tests.py"
OUTPUT_CAP = 65536


# --------------------------------------------------------------------------- official environment


class TimeoutException(Exception):
    pass


class _Sink(io.StringIO):
    """Official `WriteOnlyStringIO` (reading raises), size-capped."""

    def write(self, s):
        if self.tell() < OUTPUT_CAP:
            super().write(s[: OUTPUT_CAP - self.tell()])
        return len(s)

    def read(self, *a, **k):
        raise OSError

    readline = readlines = read

    def readable(self, *a, **k):
        return False


class _RedirectStdin(contextlib._RedirectStream):
    _stream = "stdin"


@contextlib.contextmanager
def swallow_subprocess_output():
    popen, run = subprocess.Popen, subprocess.run

    def pipes(kwargs):
        if kwargs.get("capture_output"):
            kwargs.pop("stdout", None)
            kwargs.pop("stderr", None)
        else:
            kwargs.setdefault("stdout", subprocess.PIPE)
            kwargs.setdefault("stderr", subprocess.PIPE)
        return kwargs

    subprocess.Popen = lambda *a, **k: popen(*a, **pipes(k))
    subprocess.run = lambda *a, **k: run(*a, **pipes(k))
    try:
        yield
    finally:
        subprocess.Popen, subprocess.run = popen, run


@contextlib.contextmanager
def swallow_io():
    sink = _Sink()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), _RedirectStdin(sink):
        with swallow_subprocess_output():
            yield


_SAFE_NAMES = {
    os: ("kill", "killpg", "system", "popen", "execv", "execvp", "execvpe"),
    subprocess: ("call", "check_output", "run", "Popen"),
}


@contextlib.contextmanager
def safe_environment():
    """Official `safe_environment`, rule by rule (messages go to the swallowed stdout)."""
    saved = {(m, n): getattr(m, n) for m, names in _SAFE_NAMES.items() for n in names}
    kill, killpg, system, popen = os.kill, os.killpg, os.system, os.popen
    call, check_output, run, Popen = subprocess.call, subprocess.check_output, subprocess.run, subprocess.Popen
    me, my_group = os.getpid(), os.getpgid(os.getpid())
    children: list[int] = []

    def safe_kill(pid, sig):
        try:
            os.getpgid(pid)
            if pid == me or pid in children:
                kill(pid, sig)
            else:
                print(f"Prevented attempt to kill PID {pid} with signal {sig}")
        except ProcessLookupError:
            pass

    def safe_killpg(pgid, sig):
        if pgid == my_group or pgid in {os.getpgid(pid) for pid in children}:
            killpg(pgid, sig)
        else:
            print(f"Prevented attempt to kill PGID {pgid} with signal {sig}")

    def safe_system(command):
        print(f"Intercepted system command: {command}")
        return 0 if "kill" in command else system(command)

    def safe_call(command, *args, **kwargs):
        print(f"Intercepted subprocess call: {command}")
        return 0 if "kill" in command else call(command, *args, **kwargs)

    def safe_check_output(command, *args, **kwargs):
        print(f"Intercepted command: {command}")
        return b"" if "ps" in command else check_output(command, *args, **kwargs)

    def safe_run(*args, **kwargs):
        print(f"Intercepted subprocess run command: {args}")
        if "kill" in args[0]:
            return subprocess.CompletedProcess(args, 0, b"", b"")
        return run(*args, **kwargs)

    class SafePopen(Popen):
        def __init__(self, *args, **kwargs):
            print(f"Intercepted Popen command: {args}")
            kwargs["preexec_fn"] = os.setsid
            super().__init__(*args, **kwargs)
            children.append(self.pid)

        def communicate(self, *args, **kwargs):
            try:
                return super().communicate(*args, **kwargs)
            except subprocess.TimeoutExpired:
                print("Timeout expired, intercepted and returning None")
                return None, None

        def kill(self):
            print(f"Intercepted kill call for PID {self.pid}")
            safe_kill(self.pid, signal.SIGTERM)

        def terminate(self):
            print(f"Intercepted terminate call for PID {self.pid}")
            safe_kill(self.pid, signal.SIGTERM)

    def safe_popen(command):
        print(f"Intercepted os.popen command: {command}")
        return popen("echo Intercepted") if "kill" in command else popen(command)

    def safe_exec(*args, **kwargs):
        print(f"Intercepted exec command: {args}")

    os.kill, os.killpg, os.system, os.popen = safe_kill, safe_killpg, safe_system, safe_popen
    os.execv = os.execvp = os.execvpe = safe_exec
    subprocess.call, subprocess.check_output, subprocess.run = safe_call, safe_check_output, safe_run
    subprocess.Popen = SafePopen
    try:
        yield
    finally:
        for pid in children:
            with contextlib.suppress(Exception):
                kill(pid, signal.SIGKILL)
        for (module, name), value in saved.items():
            setattr(module, name, value)


def reliability_guard():
    """Official `reliability_guard` without rlimits (the sandbox caps memory)."""
    import faulthandler

    os.environ.update(TZ="UTC", OMP_NUM_THREADS="1", TF_CPP_MIN_LOG_LEVEL="3", TF_ENABLE_ONEDNN_OPTS="0")
    time.tzset()
    faulthandler.disable()
    builtins.exit = None
    builtins.quit = None
    if importlib.util.find_spec("matplotlib") is not None:
        os.environ.setdefault("MPLBACKEND", "Agg")
        with contextlib.suppress(Exception):
            import matplotlib.pyplot as plt

            plt.close("all")


# --------------------------------------------------------------------------- integrity

WATCHED = ("unittest", "unittest.case", "unittest.result", "unittest.suite", "unittest.loader",
           "unittest.runner", "unittest.util", "unittest.signals", "contextlib",
           "numpy.testing", "numpy.testing._private.utils", "pandas.testing", "pandas._testing")  # fmt: skip


_DESCRIPTORS = (staticmethod, classmethod, property)


def _cell(cell):
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return None


def _fingerprint(obj, depth=0):
    """Identity of an object, its code and defaults; for classes, of every member."""
    fn = getattr(obj, "__func__", obj)
    if isinstance(fn, types.FunctionType):
        cells = tuple(id(_cell(c)) for c in fn.__closure__ or ())
        return (id(fn), id(fn.__code__), id(fn.__defaults__), id(fn.__kwdefaults__), cells)
    if isinstance(obj, type) and depth == 0:  # methods only: unittest keeps state on classes
        members = [(k, v) for k, v in vars(obj).items() if callable(v) or isinstance(v, _DESCRIPTORS)]
        return (id(obj), tuple((k, _fingerprint(v, 1)) for k, v in members))
    if isinstance(obj, _DESCRIPTORS):
        return (id(obj), _fingerprint(getattr(obj, "__func__", getattr(obj, "fget", None)), 1))
    return id(obj)


def snapshot(namespaces):
    """{label: {name: fingerprint}} of modules/classes/dicts."""
    shot = {}
    for label, space in namespaces.items():
        members = space if isinstance(space, dict) else vars(space)
        shot[label] = {
            k: _fingerprint(v)
            for k, v in list(members.items())
            if k not in ("__dict__", "__weakref__")
            and not isinstance(v, types.ModuleType)  # submodules are watched by their own name
            and (not isinstance(space, type) or callable(v) or isinstance(v, _DESCRIPTORS))
        }
    return shot


def changes(before, namespaces):
    after = snapshot(namespaces)
    found = []
    for label, members in before.items():
        now = after.get(label, {})
        for name in sorted(set(members) | set(now)):
            old, new = members.get(name), now.get(name)
            if old == new:
                continue
            if _is_class_print(old) and _is_class_print(new) and old[0] == new[0]:
                a, b = dict(old[1]), dict(new[1])
                found += [f"{label}.{name}.{k}" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
            else:
                found.append(f"{label}.{name}")
    return list(dict.fromkeys(found))


def _is_class_print(value):
    return isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], tuple)


def hooks():
    """Trace/profile/monitoring hooks (they can rewrite a test's control flow)."""
    found = []
    if sys.gettrace() is not None:
        found.append("sys.settrace")
    if sys.getprofile() is not None:
        found.append("sys.setprofile")
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is not None:
        found += [f"sys.monitoring tool {i}" for i in range(6) if monitoring.get_tool(i) is not None]
    return found


# --------------------------------------------------------------------------- test source (trusted)


def expected_tests(test_source):
    """{test method name: may_skip} of `TestCases` in the task's test source."""
    tree = ast.parse(test_source)
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "TestCases":
            class_skips = any("skip" in ast.dump(d).lower() for d in node.decorator_list)
            return {
                item.name: class_skips or "skip" in ast.dump(item).lower()
                for item in node.body
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and item.name.startswith("test")
            }
    return {}


# --------------------------------------------------------------------------- child (runs the solution)


def _missing_module(exc):
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, ModuleNotFoundError):
            return exc.name or str(exc)
        exc = exc.__cause__ or exc.__context__
    return None


def _short(text, limit=1500):
    text = str(text)
    return text if len(text) <= limit else "..." + text[-limit:]


def _name(test):
    return test.id().split(".")[-1]


class Reporter(unittest.TestResult):
    """Collects the official result and reports each test to the parent."""

    def __init__(self, send, check):
        super().__init__()
        self.send, self.check = send, check
        self.outcome = None
        self.missing_module = None
        self.timed_out = False

    def _note(self, err):
        if self.missing_module is None:
            self.missing_module = _missing_module(err[1])
        if isinstance(err[1], TimeoutException):
            self.timed_out = True

    def startTest(self, test):
        super().startTest(test)
        self.outcome = "ok"

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.outcome = "fail"

    def addError(self, test, err):
        super().addError(test, err)
        self._note(err)
        if isinstance(test, unittest.TestCase):
            self.outcome = "error"
        else:  # setUpClass / module fixture errors
            self.send({"event": "fixture_error", "test": str(test)[:200]})

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self.outcome = "skip"

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            self.outcome = "fail" if issubclass(err[0], test.failureException) else "error"
            if self.outcome == "error":
                self._note(err)

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self.outcome = "fail"

    def stopTest(self, test):
        super().stopTest(test)
        self.send({"event": "test", "test": _name(test), "outcome": self.outcome, "tampered": self.check()})


def _child(limit, report_fd):
    send_fd, write, dumps, exit_now = report_fd, os.write, json.dumps, os._exit

    def send(message):
        write(send_fd, (dumps(message, default=str) + "\n").encode("utf-8", "replace"))

    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, SOLUTION), encoding="utf-8") as f:
        code = f.read()
    with open(os.path.join(here, TESTS), encoding="utf-8") as f:
        tests = f.read()
    report = {"event": "done", "stage": "load", "exception": None, "exception_type": None,
              "missing_module": None, "timed_out": False, "failures": [], "errors": [], "skipped": 0,
              "tests_run": 0, "duration_s": None, "tampered": []}  # fmt: skip
    if any(lib in tests for lib in ("numpy", "pandas")):  # watch their testing helpers too
        for name in ("numpy.testing", "pandas.testing"):
            with contextlib.suppress(Exception):
                __import__(name)
    watched = {name: sys.modules[name] for name in WATCHED if sys.modules.get(name) is not None}
    watched["driver"] = sys.modules[__name__]
    watched["driver.Reporter"] = Reporter

    with safe_environment(), tempfile.TemporaryDirectory() as work:
        os.chdir(work)
        reliability_guard()
        before = snapshot(watched)

        saved_builtins = builtins.__dict__.copy()

        def check():
            # identity only (no builtin function is called) until builtins are known intact
            current, missing = builtins.__dict__, object()
            changed = [f"builtins.{k}" for k, v in saved_builtins.items() if current.get(k, missing) is not v]
            return changed or changes(before, watched) + hooks()

        watched["driver.closures"] = {"send": send, "check": check}
        before.update(snapshot({"driver.closures": watched["driver.closures"]}))

        module = types.ModuleType("__test__")
        module.__dict__.update({"__builtins__": builtins, "__file__": "__test__.py", "__package__": None,
                                "__doc__": None, "sys": sys, "os": os, "environ": os.environ})  # fmt: skip
        result = Reporter(send, check)
        start = time.monotonic()
        try:
            with swallow_io():
                exec(compile(code + "\n" + tests, "__test__.py", "exec"), module.__dict__)  # noqa: S102
                sys.modules["__test__"] = module
                cases = module.TestCases
                watched["TestCases"] = cases
                before.update(snapshot({"TestCases": cases}))
                suite = unittest.TestLoader().loadTestsFromTestCase(cases)
                send({"event": "loaded", "tests": [_name(t) for t in suite], "tampered": check()})
                report["stage"] = "run"

                def on_alarm(signum, frame):
                    raise TimeoutException("Timed out!")

                signal.signal(signal.SIGALRM, on_alarm)
                signal.setitimer(signal.ITIMER_REAL, limit)
                try:
                    suite.run(result)
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
        except BaseException as exc:  # noqa: BLE001 - load errors, SystemExit... mean fail
            report.update(exception=_short(f"{type(exc).__name__}: {exc}", 800), exception_type=type(exc).__name__,
                          missing_module=_missing_module(exc), timed_out=isinstance(exc, TimeoutException))  # fmt: skip
            if isinstance(exc, SyntaxError):
                report["exception"] = _short(f"SyntaxError: {exc.msg} (line {exc.lineno}: {(exc.text or '').strip()})")
        report["duration_s"] = round(time.monotonic() - start, 3)
        report.update(
            tests_run=result.testsRun, skipped=len(result.skipped), tampered=check(),
            failures=[[_name(t), _short(tr)] for t, tr in result.failures[:20]],
            errors=[[str(t) if not isinstance(t, unittest.TestCase) else _name(t), _short(tr)]
                    for t, tr in result.errors[:20]],
            timed_out=report["timed_out"] or result.timed_out,
            missing_module=report["missing_module"] or result.missing_module,
        )  # fmt: skip
        report["n_failures"], report["n_errors"] = len(result.failures), len(result.errors)
        send(report)
    exit_now(0)


# --------------------------------------------------------------------------- parent (trusted)


def _read_reports(fd, deadline):
    """Report lines from the child until its final report, EOF or the deadline:
    (messages, timed_out)."""
    import select

    buffer, messages = b"", []
    while True:
        left = deadline - time.monotonic()
        ready = select.select([fd], [], [], left)[0] if left > 0 else []
        if not ready:
            return messages, True
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return messages, False
        buffer += chunk
        if len(buffer) > (32 << 20):
            return messages + [{"event": "garbage"}], False
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            try:
                message = json.loads(line)
            except ValueError:
                message = None
            messages.append(message if isinstance(message, dict) else {"event": "garbage"})
            if messages[-1].get("event") == "done":
                return messages, False


def judge(messages, expected, returncode, timed_out):
    # returncode only explains a missing report: after its report the child is killed
    """The verdict from the child's reports, checked against the task's own test list."""
    verdict = {"stage": "load", "tests_run": 0, "failures": 0, "errors": 0, "skipped": 0,
               "failing_tests": [], "first_failure": None, "missing_module": None, "timed_out": timed_out,
               "exception": None, "exception_type": None, "duration_s": None, "integrity": []}  # fmt: skip
    problems = verdict["integrity"]
    done = [m for m in messages if m.get("event") == "done"]
    loaded = [m for m in messages if m.get("event") == "loaded"]
    reports = [m for m in messages if m.get("event") == "test"]
    for m in messages:
        problems += [str(t) for t in m.get("tampered") or [] if str(t) not in problems]
    if any(m.get("event") == "garbage" for m in messages):
        problems.append("unreadable report")
    if len(done) != 1 or len(loaded) > 1 or messages[-1:] != done[:1]:
        if not timed_out:
            verdict["exception"] = f"the test process ended without a complete report (exit {returncode})"
            verdict["exception_type"] = "Crash"
        if len(done) > 1 or len(loaded) > 1:
            problems.append("duplicate reports")
        return verdict
    final = done[0]
    for key in ("stage", "missing_module", "exception", "exception_type", "duration_s", "skipped", "tests_run"):
        verdict[key] = final.get(key)
    verdict["timed_out"] = timed_out or bool(final.get("timed_out"))
    issues = (final.get("failures") or []) + (final.get("errors") or [])
    verdict.update(failures=final.get("n_failures", 0), errors=final.get("n_errors", 0),
                   failing_tests=[str(i[0]) for i in issues][:20],
                   first_failure=_short(f"{issues[0][0]}: {issues[0][1]}") if issues else None)  # fmt: skip
    if final.get("exception") is None:
        listed = loaded[0].get("tests", []) if loaded else []
        outcomes = {}
        for r in reports:
            if r.get("test") in outcomes:
                problems.append(f"test {r.get('test')} reported twice")
            outcomes[r.get("test")] = r.get("outcome")
        missing = [t for t in expected if t not in listed or t not in outcomes]
        if missing:
            problems.append(f"tests not run: {missing[:5]}")
        if len(outcomes) != (final.get("tests_run") or 0):
            problems.append("report count differs from the tests run")
        bad = [t for t, o in outcomes.items() if o in ("fail", "error")]
        if len(bad) > (verdict["failures"] or 0) + (verdict["errors"] or 0):
            problems.append("failing tests missing from the final report")
        skips = [t for t, o in outcomes.items() if o == "skip" and not expected.get(t, False)]
        if skips:
            problems.append(f"skip raised outside the test's own skip rules: {skips[:5]}")
    return verdict


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "--child":
        _child(float(sys.argv[2]), int(sys.argv[3]))
        return
    not_dumpable()
    out, write = os.dup(1), os.write
    nonce = sys.stdin.readline().strip()
    limit = float(sys.argv[1])
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, TESTS), encoding="utf-8") as f:
        expected = expected_tests(f.read())
    read_end, write_end = os.pipe()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--child", repr(limit), str(write_end)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
            pass_fds=(write_end,), start_new_session=True,
        )  # fmt: skip
        os.close(write_end)
        messages, timed_out = _read_reports(read_end, time.monotonic() + limit + 1)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        returncode = proc.wait()
        err.seek(0)
        sys.stderr.write(err.read()[-4000:].decode("utf-8", "replace"))
    verdict = judge(messages, expected, returncode if not timed_out else 0, timed_out)
    verdict["nonce"] = nonce
    write(out, ("\n" + MARK + json.dumps(verdict, default=str) + "\n").encode("utf-8", "replace"))


if __name__ == "__main__":
    main()
