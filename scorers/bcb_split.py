"""BigCodeBench with the tests and the answer in separate processes (the driver's "split" mode).

The trusted parent (scorers/bcb_driver.py `main`) starts the TEST process first: it makes
itself non-dumpable (no same-uid ptrace, /proc/<pid>/mem or fd access), turns catchable
signals into no-ops, reads the task's test source and prompt from the parent (the parent
has removed the test file from the run folder, so the answer cannot read it) and reports
"sealed". Only then does the parent start the ANSWER process, which loads the solution and
serves calls, while the test process runs the prompt (the task's imports, constants and the
entry point's signature) and the tests as the module `__test__`, the entry point replaced by
a stub, reports "loaded", waits for the answer's load and runs the tests.

A call crosses as plain data (scorers/bcb_values.py): the stub sends the arguments, the
working directory, the environment and the `random`/`numpy.random` states; the answer
process runs the function and sends back its value or exception, what it printed and
warned, the random states and the new contents of list/dict/set/array arguments (and of
in-memory `io` buffers, with their position). The test
process builds every value it gets with its own code, so a value's methods, dispatch hooks
and wildcards are the libraries' own; an object that is not data arrives as an opaque
stand-in equal only to itself. Matplotlib's figures, axes and artists in a value, and
pyplot's current figure, cross as a pickle the test process loads with a restricted unpickler
(scorers/bcb_figures.py: allow-listed library classes and reconstructors only); figures the
tests close are closed in the answer's process before its next call. The answer's process never holds the tests, their
assertions, the report pipe or the unittest machinery: nothing it does there changes what
the tests compare. If it dies, lies about the protocol or sends what cannot be decoded, the
run fails ("crash"). The parent's `judge` then decides as for the shared mode.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import functools
import io
import json
import os
import signal
import sys
import threading
import time
import types
import unittest
import warnings

MAX_MESSAGE = 256 << 20  # bytes of one call's reply
_os_write, _os_read, _getcwd, _dumps, _loads = os.write, os.read, os.getcwd, json.dumps, json.loads  # tests patch them
KEEP_SIGNALS = ("SIGKILL", "SIGSTOP", "SIGCHLD", "SIGCONT", "SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL", "SIGABRT",
                "SIGTRAP", "SIGSYS", "SIGXCPU", "SIGXFSZ", "SIGPIPE")  # fmt: skip


class AnswerLost(BaseException):
    """The answer's process is gone or broke the protocol, or a call cannot be made as data: the
    run fails whatever a test catches."""


class Unsupported(Exception):
    """A test's argument that cannot cross to the answer's process as data: the run fails (a
    test's `assertRaises(Exception)` must not take it for the answer's exception)."""


# --------------------------------------------------------------------------- shared


def top_imports(source):
    """The module-level import statements of `source` (absolute ones), one per line; "" when it
    does not parse. The official module runs the prompt, the answer and the tests as one, so
    each side gets the other's imports: the tests' go to the answer's process, the reference
    program's (the task's stand-in for the answer's) to the test process."""
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return ""
    kept = [n for n in body if isinstance(n, ast.Import) or isinstance(n, ast.ImportFrom) and n.level == 0]
    return "\n".join(ast.unparse(n) for n in kept)


def run_imports(source, namespace, compile_name):
    """Each import statement of `source` in `namespace`; one that fails is skipped."""
    for line in source.splitlines():
        with contextlib.suppress(Exception):
            exec(compile(line, compile_name, "exec"), namespace)  # noqa: S102 - task data: import statements


def _write(fd, message):
    data = _dumps(message, separators=(",", ":")).encode("utf-8", "surrogatepass") + b"\n"
    view = memoryview(data)
    while view:
        view = view[_os_write(fd, view) :]


class _Lines:
    """Newline-ended JSON messages from a pipe (None at EOF); a message over `MAX_MESSAGE` raises."""

    def __init__(self, fd):
        self.fd, self.buffer = fd, b""

    def read(self):
        while b"\n" not in self.buffer:
            chunk = _os_read(self.fd, 1 << 20)
            if not chunk:
                return None
            self.buffer += chunk
            if len(self.buffer) > MAX_MESSAGE:
                raise ValueError("message too large")
        line, _, self.buffer = self.buffer.partition(b"\n")
        return _loads(line)


def rng_state():
    """The global `random` and (when loaded) `numpy.random` states, as plain Python values."""
    state = {"random": __import__("random").getstate()}
    if "numpy" in sys.modules:
        state["numpy"] = sys.modules["numpy"].random.get_state()
    return state


def set_rng_state(state, load_numpy):
    if "random" in state:
        __import__("random").setstate(state["random"])
    if "numpy" in state and ("numpy" in sys.modules or load_numpy):
        import numpy

        numpy.random.set_state(state["numpy"])


def _environment(cwd, env):
    if cwd is not None and os.getcwd() != cwd:
        os.chdir(cwd)
    if env is not None and dict(os.environ) != env:
        os.environ.clear()
        os.environ.update(env)


WRITABLE = (list, dict, set, bytearray, io.BytesIO, io.StringIO)


def _write_back(target, value):
    """Put `value`'s contents into the test's own mutable argument `target` (same type only)."""
    if type(target) is not type(value) and not _same_array(target, value):
        return
    if isinstance(target, list | bytearray):
        target[:] = value
    elif isinstance(target, io.BytesIO | io.StringIO):  # contents and position, as the answer left them
        if value.closed:
            target.close()
        else:
            target.seek(0)
            target.truncate()
            target.write(value.getvalue())
            target.seek(value.tell())
    elif isinstance(target, dict | set):
        target.clear()
        target.update(value)
    else:
        target[...] = value


def _same_array(a, b):
    numpy = sys.modules.get("numpy")
    return numpy is not None and type(a) is type(b) is numpy.ndarray and a.shape == b.shape and a.dtype == b.dtype


def _mutable(value):
    return isinstance(value, WRITABLE) or ("numpy" in sys.modules and type(value) is sys.modules["numpy"].ndarray)


# --------------------------------------------------------------------------- the test process (trusted)


def seal_test_process(not_dumpable, fds):
    """Non-dumpable, its pipes not inherited by the tests' own child processes, and every
    catchable signal a no-op (a handler, so those children get the defaults back): the
    answer's process can neither read nor steer it. RuntimeError when it cannot be sealed."""
    if not not_dumpable():
        raise RuntimeError("the test process cannot make itself non-dumpable (prctl)")
    for fd in fds:
        os.set_inheritable(fd, False)
    for number in signal.valid_signals():
        name = signal.Signals(number).name if number in signal.Signals._value2member_map_ else ""
        if name not in KEEP_SIGNALS:
            with contextlib.suppress(OSError, ValueError, RuntimeError):
                signal.signal(number, lambda *_: None)


class AnswerLink:
    """The test process's side of the calls: the entry point's stub and the answer's hello;
    `mirrors`: the answer's pyplot figure numbers -> their copies here; `mocks`: the tests' patch
    targets and the mocks the answer's stand-ins forward to (scorers/bcb_mocks.py)."""

    def __init__(self, values, figures, request_fd, reply_fd, mocks=None):
        self.values, self.figures, self.request_fd, self.replies = values, figures, request_fd, _Lines(reply_fd)
        self.problem, self.lock, self.mirrors = None, threading.Lock(), {}
        self.mocks_module, self.mocks = mocks, None
        self.Encoder, self.Decoder = _StrictEncoder(values).__class__, values.Decoder

    def patching(self, targets):
        """Forward the answer's uses of the tests' mocks (and of these patch targets) to them."""
        self.mocks = self.mocks_module.TestSide(targets)
        self.Encoder, self.Decoder = self.mocks_module.aware(
            self.Encoder, self.values.Decoder, self.mocks.handle_of, self._mock
        )

    def _mock(self, handle):
        if type(handle) is not int or not 0 <= handle < len(self.mocks.objects):
            raise ValueError("a stand-in with no object behind it")
        return self.mocks.objects[handle][1]

    def lost(self, why):
        self.problem = self.problem or why
        raise AnswerLost(why)

    def receive(self):
        try:
            message = self.replies.read()
        except (ValueError, RecursionError, OSError) as exc:
            self.lost(f"the answer's process sent an unreadable reply ({type(exc).__name__})")
        if message is None:
            self.lost("the answer's process ended during the run")
        if type(message) is not dict:
            self.lost("the answer's process sent a malformed reply")
        return message

    def decode(self, data, figures=None):
        try:
            return self.Decoder(figures=figures).decode(data)
        except (ValueError, RecursionError, MemoryError) as exc:
            self.lost(f"the answer's process sent a value that cannot be read ({exc})")

    def closed_figures(self):
        """The answer's figures whose copies the tests have closed, and whether they closed all."""
        closed = [n for n, figure in self.mirrors.items() if not self.figures.pyplot_open(figure)]
        for number in closed:
            del self.mirrors[number]
        helpers = sys.modules.get("matplotlib._pylab_helpers")
        return closed, helpers is None or not helpers.Gcf.get_all_fig_managers()

    def load_figures(self, sent):
        """The matplotlib objects of a reply, rebuilt by the restricted unpickler; their figures
        become pyplot's here, the answer's current one current."""
        if sent is None:
            return []
        if type(sent) is not dict or type(sent.get("roots")) is not list or type(sent.get("count")) is not int:
            self.lost("the answer's process sent malformed figures")
        if sent.get("data") is None:  # they could not be pickled there: opaque here
            return [self.values.Opaque("matplotlib object")] * max(0, min(sent["count"], 10_000))
        try:
            objects = self.figures.load(sent["data"])
        except (self.figures.Refused, RecursionError, MemoryError) as exc:
            self.lost(f"the answer's process sent figures that were refused ({str(exc)[:300]})")
        roots = sent["roots"]
        if len(objects) != len(roots) + sent["count"]:
            self.lost("the answer's process sent malformed figures")
        pyplot = sys.modules.get("matplotlib.pyplot")
        for figure, number in zip(objects, roots, strict=False):
            old = self.mirrors.get(number)
            if type(number) is int and old is not figure:
                if old is not None and pyplot is not None and self.figures.pyplot_open(old):
                    pyplot.close(old)
                self.mirrors[number] = figure
        if roots and sent.get("current") is True:
            self.figures.make_current(objects[len(roots) - 1])
        return objects[len(roots) :]

    def hello(self):
        """The answer's module loaded, or its load error raised here (as the official run would)."""
        message = self.receive()
        if message.get("loaded") is True:
            return
        error = self.decode(message.get("raise"))
        if not isinstance(error, BaseException):
            self.lost("the answer's process sent a malformed hello")
        raise error

    def stub(self, name, signature_from):
        link = self

        def call(*args, **kwargs):
            with link.lock:  # one call at a time on the pipes, whatever threads the tests start
                return link.call(name, args, kwargs)

        if callable(signature_from):
            call = functools.wraps(signature_from)(call)
        return call

    def call(self, name, args, kwargs):
        if self.problem:
            raise AnswerLost(self.problem)
        encoder = self.Encoder()
        closed, close_all = self.closed_figures()
        try:
            patches = self.mocks.patches(encoder) if self.mocks else []
            request = {"patches": patches, "call": name, "args": encoder.encode(list(args)),
                       "kwargs": encoder.encode(dict(kwargs)),
                       "cwd": _getcwd(), "env": dict(os.environ), "rng": encoder.encode(rng_state()),
                       "close": closed, "close_all": close_all}  # fmt: skip
        except (Unsupported, RecursionError, ValueError, *self._unsupported()) as exc:  # the shared mode's task
            self.lost(f"{exc or 'an argument nested too deeply'}: the task's tests need the shared mode")
        self.send(request)
        reply = self.receive()
        while "fw" in reply or "fw_error" in reply:  # the answer's code uses a stand-in of the tests' mock
            self.send(self.forwarded(reply))
            reply = self.receive()
        figures = self.load_figures(reply.get("mpl"))
        self.settle(reply, args, kwargs)
        if "raise" in reply:
            error = self.decode(reply["raise"], figures)
            if not isinstance(error, BaseException):
                self.lost("the answer's process sent a malformed exception")
            raise error
        if "ok" not in reply:
            self.lost("the answer's process sent a malformed reply")
        return self.decode(reply["ok"], figures)

    def send(self, message):
        try:
            _write(self.request_fd, message)
        except OSError:
            self.lost("the answer's process ended during the run")

    def _unsupported(self):
        return (self.mocks_module.Unsupported,) if self.mocks_module else ()

    def forwarded(self, message):
        """The forwarded operation done to the tests' mock here; the run fails where it cannot be."""
        if self.mocks is None or "fw_error" in message:
            self.lost(f"the answer's process could not forward a call to the tests' mock: "
                      f"{str(message.get('fw_error'))[:300]}")  # fmt: skip
        try:
            return self.mocks.serve(message, self.Encoder(), self.Decoder())
        except self.mocks_module.Refused as exc:
            self.lost(f"the answer's code did what only the tests may do with their mock: {exc}")
        except (Unsupported, self.mocks_module.Unsupported, ValueError, RecursionError) as exc:
            self.lost(f"a mock's value cannot cross to the answer's process ({str(exc)[:300]})")

    def settle(self, reply, args, kwargs):
        """What the call did besides its value: output, warnings, random states, mutated
        arguments (the working directory and environment travel only towards the answer)."""
        out, err = reply.get("out", ""), reply.get("err", "")
        if type(out) is str and out:
            sys.stdout.write(out)
        if type(err) is str and err:
            sys.stderr.write(err)
        state = self.decode(reply.get("rng", {"d": []}))
        if type(state) is not dict:
            self.lost("the answer's process sent malformed random states")
        try:
            set_rng_state(state, load_numpy=False)
        except (TypeError, ValueError) as exc:
            self.lost(f"the answer's process sent malformed random states ({exc})")
        for category, text in self.decode(reply.get("warn", [])) or []:
            if isinstance(category, type) and issubclass(category, Warning) and type(text) is str:
                warnings.warn(text, category, stacklevel=3)
        back = self.decode(reply.get("back", {"d": []}))
        targets = {**dict(enumerate(args)), **kwargs}
        for key, value in back.items() if type(back) is dict else ():
            if key in targets and _mutable(targets[key]):
                with contextlib.suppress(Exception):
                    _write_back(targets[key], value)


def _strict(values):
    class Strict(values.Encoder):
        def opaque(self, value):
            if isinstance(value, values.Opaque):
                return super().opaque(value)
            raise Unsupported(
                f"a test argument of type {type(value).__qualname__} cannot cross to the answer's process"
            )

    return Strict


def _StrictEncoder(values):  # noqa: N802 - builds the encoder class once per codec
    cls = _STRICT.get(id(values))
    if cls is None:
        cls = _STRICT[id(values)] = _strict(values)
    return cls()


_STRICT: dict[int, type] = {}


def test_process(driver, values, figures, limit, report_fd, request_fd, reply_fd, work, mocks=None):
    """The trusted test process: runs the task's tests against the stub; reports to the parent.
    `mocks`: scorers/bcb_mocks.py, for tests that patch what the answer calls."""
    seal_test_process(driver.not_dumpable, (report_fd, request_fd, reply_fd))
    key = driver._read_key(0)
    tag = driver.line_tagger(key)
    key[:] = bytes(len(key))
    spec = json.loads(_read_all(0))
    with open(os.devnull, "rb") as null:
        os.dup2(null.fileno(), 0)

    def send(message):
        payload = _dumps(message, default=str).encode("utf-8", "replace")
        _os_write(report_fd, payload + b" " + tag(payload) + b"\n")

    send({"event": "sealed"})

    link = AnswerLink(values, figures, request_fd, reply_fd, mocks)
    report = {"event": "done", "stage": "load", "exception": None, "exception_type": None,
              "missing_module": None, "timed_out": False, "failures": [], "errors": [], "skipped": 0,
              "tests_run": 0, "duration_s": None, "tampered": []}  # fmt: skip
    result, start = driver.Reporter(), time.monotonic()
    with driver.safe_environment():
        os.chdir(work)
        driver.reliability_guard()
        module = types.ModuleType("__test__")
        namespace = module.__dict__
        namespace.update({"__builtins__": builtins, "__file__": driver.SOLUTION_FILE_NAME, "__package__": None,
                          "__doc__": None, "sys": sys, "os": os, "environ": os.environ})  # fmt: skip
        driver.report_hook(send, lambda: [], [])
        try:
            with driver.swallow_io():
                exec(compile(spec["prompt"] + "\n    pass\n", driver.SOLUTION_FILE_NAME, "exec"), namespace)  # noqa: S102
                run_imports(spec.get("imports", ""), namespace, driver.SOLUTION_FILE_NAME)
                namespace[spec["entry"]] = link.stub(spec["entry"], namespace.get(spec["entry"]))
                exec(compile(spec["tests"], driver.SOLUTION_FILE_NAME, "exec"), namespace)  # noqa: S102
                sys.modules["__test__"] = module
                if mocks is not None:  # the patch targets' values as the tests loaded them
                    link.patching(mocks.patch_targets(spec["tests"])[0])
                suite = unittest.TestLoader().loadTestsFromTestCase(namespace["TestCases"])
                sys.audit("bcb.tests", tuple(suite))
                send({"event": "loaded", "tests": [driver._name(t) for t in suite], "tampered": []})
                link.hello()
                report["stage"] = "run"
                suite.run(result)
        except BaseException as exc:  # noqa: BLE001 - load errors, SystemExit... mean fail
            report.update(exception=driver._short(f"{type(exc).__name__}: {exc}", 800),
                          exception_type=type(exc).__name__, missing_module=driver._missing_module(exc))  # fmt: skip
            if isinstance(exc, SyntaxError):
                report["exception"] = driver._short(
                    f"SyntaxError: {exc.msg} (line {exc.lineno}: {(exc.text or '').strip()})"
                )
    report["duration_s"] = round(time.monotonic() - start, 3)
    report.update(
        tests_run=result.testsRun, skipped=len(result.skipped),
        failures=[[driver._name(t), driver._short(tr)] for t, tr in result.failures[:20]],
        errors=[[str(t) if not isinstance(t, unittest.TestCase) else driver._name(t), driver._short(tr)]
                for t, tr in result.errors[:20]],
        missing_module=report["missing_module"] or result.missing_module,
        n_failures=len(result.failures), n_errors=len(result.errors),
    )  # fmt: skip
    if link.problem:
        report.update(exception=link.problem, exception_type="Crash")
    send(report)
    os._exit(0)


def _read_all(fd):
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


# --------------------------------------------------------------------------- the answer process (untrusted)


def answer_process(driver, values, figures, request_fd, reply_fd, solution_path, mocks=None):
    """Loads the solution as `__test__` (then the tests' imports, read from stdin) and serves the
    test process's calls until EOF; `mocks` (scorers/bcb_mocks.py): the tests' patches installed
    as forwarding stand-ins for each call."""
    with open(solution_path, encoding="utf-8") as f:
        code = f.read()
    test_imports = _read_all(0).decode("utf-8", "replace")
    requests = _Lines(request_fd)
    side = mocks.AnswerSide(values, functools.partial(_write, reply_fd), requests.read) if mocks else None
    encoder = side.Encoder() if side else values.Encoder()
    decoder = (side.Decoder if side else values.Decoder)(encoder.handles)
    with driver.safe_environment():
        driver.reliability_guard()
        module = types.ModuleType("__test__")
        namespace = module.__dict__
        namespace.update({"__builtins__": builtins, "__file__": driver.SOLUTION_FILE_NAME, "__package__": None,
                          "__doc__": None, "sys": sys, "os": os, "environ": os.environ})  # fmt: skip
        sys.modules["__test__"] = module
        try:
            with driver.swallow_io():
                exec(compile(code, driver.SOLUTION_FILE_NAME, "exec"), namespace)  # noqa: S102
                run_imports(test_imports, namespace, driver.SOLUTION_FILE_NAME)
            hello = {"loaded": True}
        except BaseException as exc:  # noqa: BLE001 - reported to the tests' process as the load error
            hello = {"raise": encoder.encode(exc)}
        _write(reply_fd, hello)
        while (request := requests.read()) is not None:
            _write(reply_fd, _serve(namespace, request, encoder, decoder, figures, side))
    os._exit(0)


def _serve(namespace, request, encoder, decoder, figures, side=None):
    _environment(request.get("cwd"), request.get("env"))
    set_rng_state(decoder.decode(request.get("rng")), load_numpy=True)
    figures.close_figures(request.get("close"), request.get("close_all") is True)
    args, kwargs = decoder.decode(request["args"]), decoder.decode(request["kwargs"])
    out, err = io.StringIO(), io.StringIO()
    reply, encoder.figures = {}, []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            patched = side.installed(request.get("patches"), decoder) if side else contextlib.nullcontext()
            with _capture(out, err), patched:
                value = namespace[request["call"]](*args, **kwargs)
            reply["ok"] = encoder.encode(value)
        except BaseException as exc:  # noqa: BLE001 - the test decides what an exception means
            reply["raise"] = encoder.encode(exc)
    mutable = {k: v for k, v in {**dict(enumerate(args)), **kwargs}.items() if _mutable(v)}
    reply.update(out=out.getvalue()[:65536], err=err.getvalue()[:65536], rng=encoder.encode(rng_state()),
                 warn=encoder.encode([(w.category, str(w.message)) for w in caught[:100]]),
                 back=encoder.encode(mutable))  # fmt: skip
    reply["mpl"] = _figures_sent(encoder.figures, figures)
    return reply


def _figures_sent(objects, figures):
    """The call's matplotlib objects, after their figures and pyplot's current figure (last of
    them), pickled (None when there are none)."""
    current = figures.pyplot_current()
    roots = []
    for figure in [figures.root_figure(o) for o in objects] + [current]:
        if figure is not None and all(figure is not r for r in roots):
            roots.append(figure)
    if current is not None:
        roots.remove(current)
        roots.append(current)
    if not roots and not objects:
        return None
    return {
        "data": figures.dump(roots + objects),
        "count": len(objects),
        "current": current is not None,
        "roots": [getattr(r, "number", None) if type(getattr(r, "number", None)) is int else None for r in roots],
    }


@contextlib.contextmanager
def _capture(out, err):
    """Official I/O rules for one call (stdin unreadable), with what it prints kept for the tests."""
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        stdin, sys.stdin = sys.stdin, io.StringIO()
        sys.stdin.read = sys.stdin.readline = sys.stdin.readlines = _unreadable
        try:
            yield
        finally:
            sys.stdin = stdin


def _unreadable(*_, **__):
    raise OSError("stdin is not readable in the tests")
