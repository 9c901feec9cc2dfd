"""BigCodeBench driver: runs INSIDE the sandbox as `python3 -I bcb_driver.py <limit> [<capabilities>]`.

Mirrors the official harness (bigcodebench 0.2.5, `eval/__init__.py:unsafe_execute`
and `eval/utils.py`): `safe_environment()` (process functions replaced: kill/killpg
only for itself and the processes it started, `os.system`/`subprocess.*`/`os.popen`
pretend success for kill commands, `os.exec*` do nothing, `Popen` starts a new
session), a temporary working directory, `reliability_guard` (TZ=UTC, thread and
TensorFlow variables, `exit`/`quit` disabled, figures closed), the solution and the
task's tests exec'd as ONE module `__test__` (with `sys`, `os`, `environ`), I/O and
subprocess output swallowed, `TestCases` run under `limit` seconds. Pass = the module
loads and the run has no failure and no error (skips pass).

Two modes, chosen per task by the harness (`shared_reason` in scorers/code_bcb.py): with the
mode argument `split:<entry point>` the tests run in a trusted process that never loads the
solution, which runs in another and answers calls as plain data (scorers/bcb_split.py; the
parent removes the test file before the solution's process starts). Otherwise ("shared": tests
that patch what the solution calls, pass their own figures or get objects rather than data) the tests
must run in the solution's process, and the verdict is protected in layers:

* a trusted parent (non-dumpable, holds the nonce, the only writer of the verdict
  line) starts the test process (`--child`) and reads its report through a pipe; it
  runs isolated (`python3 -I`, `seal_parent` in verdict_channel.py: working directory
  `/`, no verdict while its import path holds anything the solution could change) with
  every import done before the child starts; the child never sees the nonce or the
  parent's stdout;
* every report line carries an HMAC-SHA256 tag (line number and text) under a key the
  parent sends the child on its stdin before the solution loads; the child keeps the
  key only inside the `hmac` object (the key bytes are zeroed), so lines the solution
  writes to the pipe itself are rejected as unauthenticated;
* each test's report is written by an audit hook (`report_hook`), which the solution can
  neither remove nor reach: it believes only events from `Reporter`'s own code called by
  unittest's `TestCase.run` about the registered tests, and keeps its own ledger, so a
  reporter or result object the solution gets hold of (e.g. through a patched method)
  cannot report or erase a failure;
* the parent counts the tests itself (`TestCases` methods in the task's test source)
  and requires one report per test, a final report, well-formed messages and a
  normal end; skips and expected failures pass only where the test source declares
  them (`skip...`, `expectedFailure`);
* the test machinery is imported and pinned before the solution loads (`Pins`): the
  test source's own imports are imported first, and every module then in `sys.modules`,
  what the test source's imports bind in the module, and `TestCases` built on the pinned
  `unittest.TestCase` (its metaclass `type`, no base class with the solution's methods) are
  checked after the module loads, after every test and at the end;
* unittest's, numpy's and pandas' assertions and the test's own methods are wrapped
  before the solution runs (`Guard`): a failing one is entered in a ledger that each
  test's report carries, so a failure that unittest's result objects later lose (an
  `_Outcome` flag, a swapped result) still fails; the operands are checked by what they
  are (`Screen`: a type allowlist walked through containers, instance state and proxies;
  an operand compared by the solution's own code, a C-level proxy, a C type outside the
  allowlist, or a wildcard such as `mock.ANY` the test does not use itself fails the
  assertion and flags the run);
* just before the solution loads, an audit hook (which cannot be removed) refuses the
  solution's code frames (`sys._getframe`, `tb_frame`, `gi_frame`..., also through
  `inspect.currentframe`, `inspect.stack`, `logging.currentframe`, `traceback.walk_*`),
  the object graph (`gc.get_objects/referrers/referents`), trace/profile hooks, audit
  hooks of its own and ctypes (unless the task imports ctypes; its routes into the
  interpreter, C-API symbols such as `PyEval_GetFrame`, an object from its id and memory read
  at an address, whenever the solution's code is on the stack at all) (`guard_introspection`), so it
  cannot walk to the reporter;
* the child snapshots the unittest machinery, builtins, `numpy.testing` /
  `pandas.testing`, its own reporting code and state (the guard and screen) and the
  loaded `TestCases` (objects and code objects) before the solution runs, and re-checks
  after every test; any change, a trace/profile/monitoring hook, or a skip the test
  source does not ask for (`SkipTest` raised by the solution) is reported as tampering,
  which fails.

Residual risk (shared mode): all of the child's checks run in the solution's own interpreter (see
docs/security.md for the classes that remain). Code written against this driver can still
reach objects by routes the audit hook does not see (a signal handler's frame argument,
`asyncio` task stacks), write memory through ctypes functions that raise no audit event in
Python 3.11 (`ctypes.memmove`) or a native library it writes and loads, defeat the checks by
changing what they run on (the wrapped assertions' closures, this module's classes and
globals) and restoring it before the per-test check, patch objects that are not watched (e.g.
a pandas method a test relies on), answer comparisons the test makes itself
(`assertTrue(a == b)`, `np.array_equal`, `df.equals`) with its own objects, or give its code a
library file name (`compile(..., "/usr/lib/...")`). Honest solutions lose `inspect.stack()`
and friends and ctypes (outside ctypes tasks); one whose own class decides an assertion's
comparison (a dataclass it returns), or that returns a value of a C type outside the
allowlist to an assertion, fails. The official harness has none of these checks.
"""

from __future__ import annotations

import ast
import builtins
import collections
import contextlib
import functools
import hmac
import importlib.util
import io
import json
import os
import runpy
import secrets
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import types
import unittest
import weakref

DRIVER = os.path.abspath(__file__)
if __name__ == "__main__":  # in the sandbox, run isolated: verdict_channel.py beside it, read from source
    _channel = runpy.run_path(os.path.join(os.path.dirname(DRIVER), "verdict_channel.py"))
    seal_parent, not_dumpable = _channel["seal_parent"], _channel["not_dumpable"]
else:  # imported by the harness (tests)
    from scorers.verdict_channel import seal_parent

MARK = "@@BCB_VERDICT@@"
SOLUTION, TESTS, PROMPT, IMPORTS = "bcb_solution.py", "bcb_tests.py", "bcb_prompt.py", "bcb_imports.py"
SPLIT = "split:"  # the mode argument that runs the tests apart from the answer (scorers/bcb_split.py)
OUTPUT_CAP = 65536
KEY_BYTES = 32
SOLUTION_FILE_NAME = "__test__.py"  # the module the solution and tests run as


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
    """{test method name: the outcomes besides pass/fail it declares itself ("skip", "xfail")}
    of `TestCases` in the task's test source."""

    def declared(nodes):
        text = " ".join(ast.dump(n) for n in nodes).lower()
        return {outcome for outcome, word in (("skip", "skip"), ("xfail", "expectedfailure")) if word in text}

    for node in ast.parse(test_source).body:
        if isinstance(node, ast.ClassDef) and node.name == "TestCases":
            for_class = declared(node.decorator_list)
            return {
                item.name: for_class | declared([item])
                for item in node.body
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and item.name.startswith("test")
            }
    return {}


# --------------------------------------------------------------------------- pinned test machinery


def _test_imports(tests):
    """(bound name, module, attribute or None) for each top-level import of the test source."""
    try:
        body = ast.parse(tests).body
    except SyntaxError:
        return []
    found = []
    for node in body:
        if isinstance(node, ast.Import):
            found += [(a.asname or a.name.split(".")[0], a.name if a.asname else a.name.split(".")[0], None)
                      for a in node.names]  # fmt: skip
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found += [(a.asname or a.name, node.module, a.name) for a in node.names if a.name != "*"]
    return found


def _uses_name(tests, word):
    """Whether the test source names `word` itself (a name, an attribute or an import)."""
    with contextlib.suppress(SyntaxError):
        for node in ast.walk(ast.parse(tests)):
            named = {ast.Name: "id", ast.Attribute: "attr", ast.alias: "name"}.get(type(node))
            if named and word in (getattr(node, named), getattr(node, "asname", None)):
                return True
    return False


class Pins:
    """The test machinery, imported and pinned before the solution loads: every module then in
    `sys.modules` (the test source's own imports are imported first), what those imports bind,
    and `TestCases` built on the pinned `unittest.TestCase` with no base of the solution's.
    `changes()` names what moved; it runs after the module loads, after every test and at the end."""

    def __init__(self, tests, screen):
        for _, module, attribute in _test_imports(tests):
            for name in (module, f"{module}.{attribute}") if attribute else (module,):
                with contextlib.suppress(Exception):  # an import that fails fails later, as officially
                    importlib.import_module(name)
        self.registry, self.screen, missing = sys.modules, screen, object()
        self.modules = {name: m for name, m in list(sys.modules.items()) if isinstance(m, types.ModuleType)}
        self.bindings = {}  # name in the test module -> what the test source's import binds
        for bound, module, attribute in _test_imports(tests):
            value = self.modules.get(module, missing) if attribute is None else self.modules.get(
                f"{module}.{attribute}", vars(self.modules[module]).get(attribute, missing) if module in self.modules
                else missing)  # fmt: skip
            if value is not missing:
                self.bindings[bound] = value
        self.namespace, self.cases = None, None

    def loaded(self, namespace, cases):
        self.namespace, self.cases = namespace, cases

    def changes(self):
        get = dict.get
        found = [] if sys.modules is self.registry else ["sys.modules replaced"]
        found += [f"sys.modules[{n!r}] replaced" for n, m in self.modules.items() if get(self.registry, n) is not m]
        if self.namespace is not None:
            found += [f"the tests' import {n!r} bound to something else" for n, v in self.bindings.items()
                      if get(self.namespace, n) is not v]  # fmt: skip
            found += self._foreign_bases()
        return found

    def _foreign_bases(self):
        cases = self.cases
        if type(cases) is not type:
            return [f"TestCases made by the metaclass {type(cases).__qualname__}"]
        mro = _MRO.__get__(cases)
        if unittest.TestCase not in mro:
            return ["TestCases is not built on the pinned unittest.TestCase"]
        return [f"TestCases inherits {klass.__qualname__}.{name} from the solution"
                for klass in mro[1 : mro.index(unittest.TestCase)]
                for name, value in _DICT.__get__(klass).items() if self.screen._from_solution(name, value)]  # fmt: skip


# --------------------------------------------------------------------------- report channel


def line_tagger(key):
    """Tags for the report lines: HMAC-SHA256(key, "<n>:<line>") for the n-th line. The parent
    and the child each hold one; a line the solution writes itself has no valid tag."""
    base, count = hmac.new(key, digestmod="sha256"), [0]

    def tag(payload):
        mac = base.copy()
        mac.update(b"%d:" % count[0] + payload)
        count[0] += 1
        return mac.hexdigest().encode()

    return tag


def _read_key(fd):
    """The child's report key from the parent's pipe, as a bytearray (zeroed after use)."""
    key = bytearray()
    while len(key) < KEY_BYTES:
        chunk = os.read(fd, KEY_BYTES - len(key))
        if not chunk:
            break
        key += chunk
    return key


# --------------------------------------------------------------------------- assertion guard

# special methods that decide what an assertion sees of a value
DECIDING = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__bool__", "__len__", "__contains__",
            "__iter__", "__getitem__", "__class__", "__getattribute__", "__getattr__", "__sub__", "__rsub__",
            "__abs__", "__round__")  # fmt: skip
OPERANDS = {  # assertion -> how many leading arguments are values it compares or tests
    **dict.fromkeys(("assertTrue", "assertFalse", "assertIsInstance", "assertNotIsInstance"), 1),
    **dict.fromkeys(("assertEqual", "assertNotEqual", "assertAlmostEqual", "assertNotAlmostEqual", "assertIn",
                     "assertNotIn", "assertGreater", "assertGreaterEqual", "assertLess", "assertLessEqual",
                     "assertCountEqual", "assertListEqual", "assertTupleEqual", "assertSetEqual", "assertDictEqual",
                     "assertSequenceEqual", "assertMultiLineEqual"), 2),
}  # fmt: skip
SCREEN_ITEMS = 10_000
SCALARS = frozenset((int, float, str, bytes, bool, complex, type(None)))
C_METHODS = (types.WrapperDescriptorType, types.MethodDescriptorType, types.ClassMethodDescriptorType,
             types.GetSetDescriptorType, types.MemberDescriptorType)  # fmt: skip
_MRO, _DICT = type.__dict__["__mro__"], type.__dict__["__dict__"]
# C types that compare by their own C code over values of their own: the allowlist (by top-level
# module: the standard library's value types and the BigCodeBench libraries that define such types)
C_VALUE_MODULES = ("builtins", "datetime", "_datetime", "decimal", "_decimal", "numpy", "pandas", "array", "re",
                   "zoneinfo", "_zoneinfo", "collections", "_collections", "pathlib", "fractions", "ipaddress",
                   "uuid", "time", "enum", "sqlite3", "PIL", "matplotlib", "scipy", "sklearn", "shapely", "cv2",
                   "dateutil", "pytz")  # fmt: skip
PROXIES = (*weakref.ProxyTypes, types.MappingProxyType)  # compare as a value the screen cannot see
LEAVES = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
          types.CodeType, range, bytearray, memoryview)  # fmt: skip


def _contents(value):
    """The values a C type that compares through what it holds compares (None: not such a type)."""
    kind = type(value)
    if kind is slice:
        return [value.start, value.stop, value.step]
    if kind is weakref.ReferenceType:
        return [value()]
    if kind is types.SimpleNamespace:
        return list(object.__getattribute__(value, "__dict__").values())
    if kind in (types.GenericAlias, types.UnionType):
        return list(value.__args__)
    if isinstance(value, collections.deque):
        return list(collections.deque.__iter__(value))
    if kind in _DICT_VIEWS:
        return list(iter(value))
    return None


_DICT_VIEWS = (type({}.keys()), type({}.values()), type({}.items()))


def _state(value):
    """An instance's own state (its __dict__ and slot values), read past its class's code."""
    found = []
    with contextlib.suppress(AttributeError, TypeError):
        found += list(object.__getattribute__(value, "__dict__").values())
    for klass in _MRO.__get__(type(value)):
        slots = _DICT.__get__(klass).get("__slots__", ()) if klass is not object else ()
        for slot in (slots,) if isinstance(slots, str) else slots:
            member = _DICT.__get__(klass).get(slot) if isinstance(slot, str) else None
            if type(member) is types.MemberDescriptorType:
                with contextlib.suppress(AttributeError):
                    found.append(member.__get__(value, klass))
    return found


def _all_classes():
    seen, stack = {}, [object]
    while stack:
        cls = stack.pop()
        if id(cls) not in seen:
            seen[id(cls)] = cls
            stack.extend(type.__subclasses__(cls) if isinstance(cls, type) else ())
    return list(seen.values())


class Screen:
    """Checks assertion operands by what they are: a type allowlist walked through containers,
    instance state and proxies; an operand the walk cannot vouch for fails the assertion.

    * exact built-in scalars, classes, modules, functions: plain;
    * lists, tuples, sets, dicts (and their subclasses, read through the base type), deques,
      dict views, numpy object arrays and pandas object columns: their items are walked;
    * C-level proxies (`weakref.proxy`, `mappingproxy`): refused, they compare as a value
      the walk cannot see; C types that compare through what they hold (slice, weakref.ref,
      SimpleNamespace, generic aliases) are walked through it; other C types that compare by
      their own code must come from a module in C_VALUE_MODULES;
    * any other class: its deciding methods (DECIDING; `strict`: any method) must not be the
      solution's (a function whose code is neither the Python library's, a file under its
      install paths, nor the task's test source; a library wrapper holding such a function;
      a C method under another name; another callable under a deciding name, e.g.
      `__eq__ = id`); a library class that compares in Python has its instance state walked
      (a `UserList`'s `.data`) and must not equal an object it has never seen (`mock.ANY`,
      unless the test source uses `ANY` itself).
    Classes alive before the solution ran count as they were then (non-strict)."""

    def __init__(self, solution_lines, wildcards=False):
        import sysconfig
        from unittest import mock

        self.solution_lines, self.proxy, self.mock = solution_lines, mock.MagicProxy, mock.NonCallableMock
        self.wildcards = wildcards  # the test source uses mock.ANY itself
        paths = {sysconfig.get_path(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
        self.roots = tuple(os.path.join(os.path.realpath(p), "") for p in paths if p)
        self.known = types.MappingProxyType({id(c): (c, self._entries(c)) for c in _all_classes()})
        self.cache = {}  # per assertion: (id(class), strict) -> (class, verdict)
        self.files = {}  # per assertion: code file name -> in the Python library

    @staticmethod
    def _entries(cls):
        own = _DICT.__get__(cls)
        return tuple(id(own[n]) if n in own else None for n in DECIDING)

    def _trusted_code(self, code):
        name = code.co_filename
        if name == SOLUTION_FILE_NAME:
            return code.co_firstlineno > self.solution_lines
        if name not in self.files:
            self.files[name] = os.path.isabs(name) and os.path.realpath(name).startswith(self.roots)
        return self.files[name]

    def _from_solution(self, name, value, depth=0):
        """Whether the class entry `name` is the solution's: its own function (or one wrapped
        in a descriptor or held by a library function's closure), a C method put under another
        name, or any other callable placed under a deciding name (e.g. `__eq__ = id`)."""
        kind = type(value)  # exact types: an operand's own class could lie through __class__
        if kind is types.FunctionType:
            if not self._trusted_code(value.__code__):
                return True
            cells = [_cell(c) for c in value.__closure__ or ()]
            return depth < 4 and any(self._from_solution("", c, depth + 1) for c in cells if callable(c))
        if kind in C_METHODS:  # a C class's own method checks the type it is called on
            return bool(name) and value.__name__ != name
        inner = {staticmethod: "__func__", classmethod: "__func__", property: "fget",
                 functools.partialmethod: "func"}.get(kind)  # fmt: skip
        if inner is not None:
            return depth < 4 and self._from_solution(name, getattr(value, inner), depth + 1)
        return name in DECIDING and value is not None and kind is not self.proxy

    def decided_by_solution(self, cls, strict=False):
        """The first deciding method of `cls` that the solution's code provides, or None;
        `strict`: any method (for library assertions that read many attributes)."""
        hit = self.cache.get((id(cls), strict))
        if hit is None or hit[0] is not cls:
            hit = self.cache[(id(cls), strict)] = (cls, self._decided_by_solution(cls, strict))
        return hit[1]

    def _decided_by_solution(self, cls, strict):
        for klass in _MRO.__get__(cls):
            known = self.known.get(id(klass))
            if not strict and known is not None and known[0] is klass and known[1] == self._entries(klass):
                continue
            own = _DICT.__get__(klass)
            for name in list(own) if strict else DECIDING:
                if name in own and self._from_solution(name, own[name]):
                    return f"{klass.__qualname__}.{name}"
        return None

    def problem(self, values, strict=False):
        """Why these operands cannot be compared fairly, or None (see the class docstring)."""
        stack, budget = list(values), SCREEN_ITEMS
        if len(stack) == 2 and stack[0] is stack[1]:
            return None  # one object compared with itself: nothing the solution can bend
        self.cache.clear()
        self.files.clear()
        wildcards = []  # library objects that compare in Python: probed once all they hold is vouched for
        while stack and budget > 0:
            value, budget = stack.pop(), budget - 1
            cls = type(value)
            if cls in SCALARS:  # built-in, immutable, exact: nothing of the solution's
                continue
            if cls in PROXIES:
                return f"an operand is a {cls.__qualname__} (a proxy: it compares as a value the grader cannot see)"
            found = self.decided_by_solution(cls, strict)
            if found:
                return f"an operand of type {cls.__qualname__} is compared by the solution's own {found}"
            try:
                items, why = self._inside(value, cls, budget)
            except Exception as exc:  # noqa: BLE001 - what cannot be looked into cannot be vouched for
                items, why = [], f"an operand of type {cls.__qualname__} could not be checked ({type(exc).__name__})"
            if why:
                return why
            if items is None:  # compares in Python library code over its own state
                items = _state(value)
                wildcards.append(value)
            stack.extend(items)
        for value in wildcards if not self.wildcards else ():
            if _equals_a_stranger(value):
                return f"an operand of type {type(value).__qualname__} equals an object it has never seen (a wildcard)"
        return None

    def _inside(self, value, cls, budget):
        """(the values `value` compares through, why it cannot be compared or None); None for the
        values: a library class that compares in Python (its state is walked and it is probed)."""
        numpy, pandas = sys.modules.get("numpy"), sys.modules.get("pandas")
        if issubclass(cls, dict):
            return [v for _, kv in zip(range(budget), dict.items(value), strict=False) for v in kv], None
        base = next((b for b in (list, tuple, set, frozenset) if issubclass(cls, b)), None)
        if base is not None:
            return [v for _, v in zip(range(budget), base.__iter__(value), strict=False)], None
        if numpy is not None and issubclass(cls, numpy.ndarray):
            return (numpy.ndarray.ravel(value)[:budget].tolist() if value.dtype.hasobject else []), None
        if numpy is not None and issubclass(cls, numpy.generic | numpy.dtype):
            return [], None
        if pandas is not None and (cls.__module__ or "").startswith("pandas"):
            return _pandas_objects(value, pandas, budget), None
        if issubclass(cls, LEAVES) or isinstance(value, self.mock):  # mocks: see _from_solution
            return [], None
        held = _contents(value)
        if held is not None:
            return held, None
        owner = next(k for k in _MRO.__get__(cls) if "__eq__" in _DICT.__get__(k))
        entry = _DICT.__get__(owner)["__eq__"]
        if owner is object:
            return [], None  # compared by identity
        if type(entry) in C_METHODS:
            module = (owner.__module__ or "").split(".")[0]
            if module in C_VALUE_MODULES:
                return [], None
            return [], f"an operand of type {cls.__qualname__} compares through C code outside the allowlist"
        return None, None  # a library class comparing in Python: its state is walked, then it is probed


def _equals_a_stranger(value):
    try:
        return type(value).__eq__(value, object()) is True
    except Exception:  # noqa: BLE001 - a library comparison that cannot take a stranger: not a wildcard
        return False


def _pandas_objects(value, pandas, budget):
    """The Python objects a pandas value compares through: labels and object-dtype values."""
    if isinstance(value, pandas.DataFrame):
        return [value.columns, value.index] + [value.iloc[:, k] for k in range(min(value.shape[1], budget))]
    if isinstance(value, pandas.Series):
        found = [value.index]
    elif isinstance(value, pandas.Index):
        found = []
    else:
        return []  # scalars (Timestamp, NA...), dtypes, extension arrays of a fixed dtype
    if value.dtype == object:
        found += value.to_numpy()[:budget].tolist()
    return found


# audit events and attributes that hand out frames or arbitrary objects
INTROSPECTION = frozenset(("sys._getframe", "sys._current_frames", "gc.get_objects", "gc.get_referrers",
                           "gc.get_referents", "sys.settrace", "sys.setprofile", "sys.addaudithook"))  # fmt: skip
FRAME_ATTRIBUTES = frozenset(("tb_frame", "gi_frame", "cr_frame", "ag_frame"))


# ctypes events that reach into the interpreter itself (an object from an id, memory read at an
# address; C-API symbols below): refused whenever the answer's code is anywhere on the stack,
# library frames between. "ctypes.cdata" (a ctypes value at an address) is not among them: the
# libraries' own ctypes code raises it (multiprocessing's shared values), so only the answer's own
# use is refused.
INTERPRETER_CTYPES = frozenset(("ctypes.PyObj_FromPtr", "ctypes.string_at", "ctypes.wstring_at"))
C_API_PREFIXES = ("Py", "_Py")  # symbols of the interpreter's own C API


def _reaches_interpreter(event, args):
    if event in INTERPRETER_CTYPES:
        return True
    return event in ("ctypes.dlsym", "ctypes.dlsym/handle") and str(args[1]).startswith(C_API_PREFIXES)


def guard_introspection(roots, solution_lines, flags, allowed=frozenset()):
    """An audit hook (it cannot be removed) refusing to the solution's code, and flagging the run:
    frames, the object graph, trace hooks and further audit hooks when the code asking (past
    library functions that hand frames to their caller, e.g. `inspect.currentframe`) is
    neither the Python library's, this driver's nor the task's test source; ctypes (unless the
    task needs it: "ctypes" in `allowed`) when the code asking past ctypes' own frames is the
    solution's, and its routes into the interpreter (`_reaches_interpreter`: a C-API symbol such
    as `PyEval_GetFrame`, an object from its id, memory read at an address) whenever the
    solution's code is on the stack at all. All it uses is copied in here."""
    import _thread
    import ctypes
    import inspect
    import logging
    import traceback

    getters = frozenset(f.__code__ for f in (inspect.currentframe, inspect.stack, inspect.trace, inspect.getouterframes,
                                             inspect.getinnerframes, traceback.walk_stack, traceback.walk_tb,
                                             logging.currentframe))  # fmt: skip
    trusted_files = (*roots, DRIVER)
    ctypes_dir = os.path.join(os.path.dirname(os.path.realpath(ctypes.__file__)), "")
    getframe, ident, realpath, busy, library = sys._getframe, _thread.get_ident, os.path.realpath, set(), {}
    ctypes_allowed = "ctypes" in allowed

    def solution_code(frame):
        name = frame.f_code.co_filename
        if name == SOLUTION_FILE_NAME:
            return frame.f_lineno <= solution_lines
        if name not in library:
            library[name] = name.startswith("<frozen ") or (
                os.path.isabs(name) and realpath(name).startswith(trusted_files)
            )
        return not library[name]

    def asker(frame, skip):
        while frame is not None and skip(frame):
            frame = frame.f_back
        return frame

    def refused(event, args, frame):
        if event.startswith("ctypes."):
            if ctypes_allowed:
                return False
            if _reaches_interpreter(event, args):
                while frame is not None and not solution_code(frame):
                    frame = frame.f_back
                return frame is not None
            frame = asker(frame, lambda f: realpath(f.f_code.co_filename).startswith(ctypes_dir))
        elif event in INTROSPECTION or (event == "object.__getattr__" and args[1] in FRAME_ATTRIBUTES):
            frame = asker(frame, lambda f: f.f_code in getters)
        else:
            return False
        return frame is not None and solution_code(frame)

    def hook(event, args):
        if not event.startswith(("ctypes.", "sys.", "gc.", "object.__getattr__")):
            return
        me = ident()
        if me in busy:
            return
        busy.add(me)
        try:
            no = refused(event, args, getframe(1))
        except ValueError:  # no Python caller
            no = False
        finally:
            busy.discard(me)
        if no:
            flags.append(f"{event} refused to the answer")
            raise RuntimeError(f"{event}: the answer may not reach the interpreter or the test driver's frames")

    sys.addaudithook(hook)


LIBRARY_ASSERTIONS = ("numpy.testing", "pandas.testing")  # their assert_* functions (actual, desired, ...)


class Guard:
    """Wraps assertions before the solution runs. Operands whose comparison the solution's
    code decides (`Screen`) fail the assertion and are flagged; every failing assertion or
    test method raises the audit event "bcb.failed", which the reporting hook enters in its
    private ledger for the running test, whatever unittest's result objects later say."""

    def __init__(self, screen):
        self.screen, self.flags = screen, []

    def wrap(self, fn, first=0, operands=0, strict=False):
        audit = sys.audit

        @functools.wraps(fn)
        def guarded(*args, **kwargs):
            problem = self.screen.problem(args[first : first + operands], strict) if operands else None
            if problem:
                self.flags.append(f"{fn.__name__}: {problem}")
                audit("bcb.failed")
                raise AssertionError(problem)
            try:
                return fn(*args, **kwargs)
            except unittest.SkipTest:
                raise
            except Exception:
                audit("bcb.failed")
                raise

        return guarded

    def install(self):
        """unittest's assertion methods and assert* contexts, numpy's and pandas' assert_*."""
        case = unittest.TestCase
        for name, value in list(vars(case).items()):
            if (name.startswith("assert") or name == "fail") and callable(value):
                setattr(case, name, self.wrap(value, 1, OPERANDS.get(name, 0)))
        contexts = [unittest.case._AssertRaisesContext, unittest.case._AssertWarnsContext]
        with contextlib.suppress(ImportError, AttributeError):
            from unittest._log import _AssertLogsContext

            contexts.append(_AssertLogsContext)
        for context in contexts:
            context.__exit__ = self.wrap(context.__exit__)
        for module in filter(None, map(sys.modules.get, LIBRARY_ASSERTIONS)):
            for name, value in list(vars(module).items()):
                if name.startswith("assert_") and isinstance(value, types.FunctionType):
                    setattr(module, name, self.wrap(value, 0, 2, strict=True))

    def install_tests(self, cases):
        """The test's own methods (and setUp/tearDown): an exception out of one is a failure."""
        names = [*unittest.TestLoader().getTestCaseNames(cases), "setUp", "tearDown"]
        for name in names:
            value = vars(cases).get(name)
            if isinstance(value, types.FunctionType):
                setattr(cases, name, self.wrap(value))


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
    """Collects the official result; tells the reporting hook (`report_hook`) what happens
    through audit events. It holds no way to report itself."""

    def __init__(self):
        super().__init__()
        self.missing_module = None
        self.timed_out = False

    def _note(self, err):
        if self.missing_module is None:
            self.missing_module = _missing_module(err[1])
        if isinstance(err[1], TimeoutException):
            self.timed_out = True

    def startTest(self, test):
        super().startTest(test)
        sys.audit("bcb.start", test)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        sys.audit("bcb.outcome", test, "fail")

    def addError(self, test, err):
        super().addError(test, err)
        self._note(err)
        if isinstance(test, unittest.TestCase):
            sys.audit("bcb.outcome", test, "error")
        else:  # setUpClass / module fixture errors
            sys.audit("bcb.fixture", str(test)[:200])

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        if isinstance(test, unittest.TestCase):  # not a skipped class fixture
            sys.audit("bcb.outcome", test, "skip")

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            failed = issubclass(err[0], test.failureException)
            if not failed:
                self._note(err)
            sys.audit("bcb.outcome", test, "fail" if failed else "error")

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        sys.audit("bcb.outcome", test, "fail")

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        sys.audit("bcb.outcome", test, "xfail")

    def stopTest(self, test):
        super().stopTest(test)
        sys.audit("bcb.stop", test)


RANK = ("ok", "skip", "xfail", "fail", "error")  # the worst outcome of a test is reported


def report_hook(send, check, flags):
    """The audit hook that reports each test (it cannot be removed; the solution cannot reach
    what it holds). It believes only events raised by `Reporter`'s own code, called by
    unittest's `TestCase.run`, about the tests `_child` registered ("bcb.tests", from the
    frame that installed it); "bcb.failed" (a failing assertion or test method) goes into
    its private ledger for the running test from anywhere, since it can only fail a test."""
    getframe, owner = sys._getframe, sys._getframe(1)
    reporter = {n: getattr(Reporter, n).__code__ for n in vars(Reporter) if n.startswith(("add", "st"))}
    run_code, state = unittest.TestCase.run.__code__, {"names": None, "current": None}
    failed, outcomes = set(), {}

    def genuine(frame, event, test):
        names = state["names"]
        if names is None or id(test) not in names or frame.f_code not in reporter.values():
            return None
        if event != "bcb.outcome" and (frame.f_back is None or frame.f_back.f_code is not run_code):
            return None
        return names[id(test)][1]

    def hook(event, args):
        if not event.startswith("bcb."):
            return
        frame = getframe(1)
        if event == "bcb.failed":
            if state["current"] is not None:
                failed.add(state["current"])
        elif event == "bcb.tests":
            if frame is owner and state["names"] is None:
                state["names"] = {id(t): (t, _name(t)) for t in args[0]}
        elif event == "bcb.fixture":
            if frame.f_code is reporter["addError"]:
                send({"event": "fixture_error", "test": str(args[0])})
        else:
            name = genuine(frame, event, args[0])
            if name is None:
                flags.append(f"{event} raised outside the test run")
            elif event == "bcb.start":
                state["current"], outcomes[name] = name, "ok"
            elif event == "bcb.outcome":
                outcomes[name] = max(outcomes.get(name, "ok"), str(args[1]), key=RANK.index)
            elif state["current"] == name:  # bcb.stop
                state["current"] = None
                send({"event": "test", "test": name, "outcome": outcomes[name], "assertion_failed": name in failed,
                      "tampered": check()})  # fmt: skip

    sys.addaudithook(hook)


def _child(limit, report_fd, allowed=frozenset()):
    key = _read_key(0)
    tag = line_tagger(key)
    key[:] = bytes(len(key))
    with open(os.devnull, "rb") as null:
        os.dup2(null.fileno(), 0)
    send_fd, write, dumps, exit_now = report_fd, os.write, json.dumps, os._exit

    def send(message):
        payload = dumps(message, default=str).encode("utf-8", "replace")
        write(send_fd, payload + b" " + tag(payload) + b"\n")

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
    import ctypes  # noqa: F401 - loaded (its own dlopen done) before its use is guarded

    guard = Guard(Screen(code.count("\n") + 1, wildcards=_uses_name(tests, "ANY")))
    guard.install()
    watched = {name: sys.modules[name] for name in WATCHED if sys.modules.get(name) is not None}
    watched["driver"] = sys.modules[__name__]
    watched["driver.Reporter"] = Reporter
    watched["driver.Screen"], watched["driver.Guard"] = Screen, Guard
    watched["driver.guard"], watched["driver.screen"] = vars(guard), vars(guard.screen)

    with safe_environment(), tempfile.TemporaryDirectory() as work:
        os.chdir(work)
        reliability_guard()
        before = snapshot(watched)

        saved_builtins = builtins.__dict__.copy()
        pins = Pins(tests, guard.screen)

        def check():
            # identity only (no builtin function is called) until builtins are known intact
            current, missing = builtins.__dict__, object()
            changed = [f"builtins.{k}" for k, v in saved_builtins.items() if current.get(k, missing) is not v]
            return changed or pins.changes() + changes(before, watched) + hooks() + guard.flags

        watched["driver.closures"] = {"send": send, "check": check}
        watched["driver.pins"] = vars(pins)
        before.update(snapshot({"driver.closures": watched["driver.closures"]}))

        module = types.ModuleType("__test__")
        module.__dict__.update({"__builtins__": builtins, "__file__": SOLUTION_FILE_NAME, "__package__": None,
                                "__doc__": None, "sys": sys, "os": os, "environ": os.environ})  # fmt: skip
        result = Reporter()
        report_hook(send, check, guard.flags)
        guard_introspection(guard.screen.roots, guard.screen.solution_lines, guard.flags, allowed)
        start = time.monotonic()
        try:
            with swallow_io():
                exec(compile(code + "\n" + tests, SOLUTION_FILE_NAME, "exec"), module.__dict__)  # noqa: S102
                sys.modules["__test__"] = module
                cases = module.TestCases
                pins.loaded(module.__dict__, cases)
                guard.install_tests(cases)
                watched["TestCases"] = cases
                before.update(snapshot({"TestCases": cases}))
                suite = unittest.TestLoader().loadTestsFromTestCase(cases)
                sys.audit("bcb.tests", tuple(suite))
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


def read_reports(fd, deadline, tag, on_message=None):
    """Report lines from the child until its final report, EOF or the deadline:
    (messages, timed_out). A line without the right tag ends the reading. `on_message` is
    called with each well-formed message as it arrives."""
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
            payload, _, got = line.rpartition(b" ")
            if not hmac.compare_digest(got, tag(payload)):
                return messages + [{"event": "unauthenticated"}], False
            try:
                message = json.loads(payload)
            except ValueError:
                message = None
            messages.append(message if _well_formed(message) else {"event": "garbage"})
            if on_message is not None:
                on_message(messages[-1])
            if messages[-1].get("event") == "done":
                return messages, False


_SHAPES = {  # event -> {field: type}
    "sealed": {},  # split mode: the test process is sealed, the answer's may start
    "loaded": {"tests": list, "tampered": list},
    "test": {"test": str, "outcome": str, "assertion_failed": bool, "tampered": list},
    "fixture_error": {"test": str},
    "done": {"stage": str, "failures": list, "errors": list, "skipped": int, "tests_run": int, "n_failures": int,
             "n_errors": int, "tampered": list},
}  # fmt: skip
OUTCOMES = ("ok", "fail", "error", "skip", "xfail")


def _well_formed(message):
    """A report message of a known event with its fields of the right types."""
    shape = _SHAPES.get(message.get("event")) if isinstance(message, dict) else None
    if shape is None or any(type(message.get(k)) is not t for k, t in shape.items()):
        return False
    lists = [message.get("tests", []), message.get("tampered", [])]
    return (all(type(x) is str for items in lists for x in items)
            and message.get("outcome", "ok") in OUTCOMES)  # fmt: skip


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
    if any(m.get("event") == "unauthenticated" for m in messages):
        problems.append("unauthenticated report line (not written by the test driver)")
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
        for kind, word in (("skip", "skip raised"), ("xfail", "expected failure")):
            foreign = [t for t, o in outcomes.items() if o == kind and kind not in expected.get(t, ())]
            if foreign:
                problems.append(f"{word} outside the test's own rules: {foreign[:5]}")
        hidden = [r["test"] for r in reports if r.get("assertion_failed") and r.get("outcome") in ("ok", "skip")]
        hidden += [r["test"] for r in reports if r.get("assertion_failed") and r.get("outcome") == "xfail"
                   and "xfail" not in expected.get(r["test"], ())]  # fmt: skip
        if hidden:
            problems.append(f"failed assertions not reported as failures: {hidden[:5]}")
    return verdict


def _split_modules():
    """(bcb_split, bcb_values, bcb_figures, bcb_mocks) as namespaces: read from source beside the driver in
    the sandbox."""
    if __name__ != "__main__":
        from scorers import bcb_figures, bcb_mocks, bcb_split, bcb_values

        return bcb_split, bcb_values, bcb_figures, bcb_mocks
    here = os.path.dirname(DRIVER)
    return tuple(
        types.SimpleNamespace(**runpy.run_path(os.path.join(here, n)))
        for n in ("bcb_split.py", "bcb_values.py", "bcb_figures.py", "bcb_mocks.py")
    )


def _start(role, fds, err, cwd, stdin=subprocess.DEVNULL, isolated=False):
    command = [sys.executable, *(["-I"] if isolated else []), DRIVER, role, *map(str, fds)]
    return subprocess.Popen(command, stdin=stdin, stdout=subprocess.DEVNULL, stderr=err, cwd=cwd,
                            pass_fds=[f for f in fds if isinstance(f, int)], start_new_session=True)  # fmt: skip


def run_shared(here, limit, allowed, key, err):
    """The tests and the solution in one child process (see the module docstring)."""
    read_end, write_end = os.pipe()
    proc = _start("--child", (repr(limit), write_end, allowed), err, here, stdin=subprocess.PIPE)
    os.close(write_end)
    with contextlib.suppress(OSError):
        proc.stdin.write(key)
        proc.stdin.close()
    messages, timed_out = read_reports(read_end, time.monotonic() + limit + 1, line_tagger(key))
    return messages, timed_out, [proc], None


def run_split(here, limit, entry, tests, key, err):
    """The tests in a trusted process, the solution in another, calls as plain data
    (scorers/bcb_split.py). The test file is removed before the solution's process starts."""
    with open(os.path.join(here, PROMPT), encoding="utf-8") as f:
        prompt = f.read()
    imports = ""  # the reference program's imports (scorers/code_bcb.py writes them)
    with contextlib.suppress(FileNotFoundError), open(os.path.join(here, IMPORTS), encoding="utf-8") as f:
        imports = f.read()
    try:
        os.unlink(os.path.join(here, TESTS))
    except OSError as exc:  # no verdict rather than tests the answer could read
        raise RuntimeError(f"cannot remove the test file from the run folder before the answer starts: {exc}") from None
    test_imports = _split_modules()[0].top_imports(tests)
    work = tempfile.mkdtemp(prefix="bcb-")
    report_r, report_w = os.pipe()
    request_r, request_w = os.pipe()
    reply_r, reply_w = os.pipe()
    tests_proc = _start("--tests", (repr(limit), report_w, request_w, reply_r, work), err, work,
                        stdin=subprocess.PIPE, isolated=True)  # fmt: skip
    for fd in (report_w, request_w, reply_r):
        os.close(fd)
    with contextlib.suppress(OSError):
        spec = {"tests": tests, "prompt": prompt, "entry": entry, "imports": imports}
        tests_proc.stdin.write(key + json.dumps(spec).encode())
        tests_proc.stdin.close()
    procs, answer_fds = [tests_proc], [request_r, reply_w]

    def start_answer(message):
        if message.get("event") in ("sealed", "loaded") and answer_fds:
            answer = _start("--answer", answer_fds, err, work, stdin=subprocess.PIPE)
            with contextlib.suppress(OSError):
                answer.stdin.write(test_imports.encode())
                answer.stdin.close()
            procs.append(answer)
            while answer_fds:
                os.close(answer_fds.pop())

    try:
        messages, timed_out = read_reports(report_r, time.monotonic() + limit + 1, line_tagger(key), start_answer)
    finally:
        for fd in answer_fds:
            os.close(fd)
    return messages, timed_out, procs, work


def main():
    role = sys.argv[1:2]
    if role == ["--child"]:
        _child(float(sys.argv[2]), int(sys.argv[3]), frozenset(filter(None, (sys.argv[4:5] or [""])[0].split(","))))
        return
    if role in (["--tests"], ["--answer"]):
        split, values, figures, mocks = _split_modules()
        me, fds = sys.modules[__name__], [int(a) for a in sys.argv[3 if role == ["--tests"] else 2 :][:3]]
        if role == ["--tests"]:
            split.test_process(me, values, figures, float(sys.argv[2]), *fds, sys.argv[6], mocks)
        else:
            split.answer_process(me, values, figures, *fds, os.path.join(os.path.dirname(DRIVER), SOLUTION), mocks)
        return
    seal_parent()  # not dumpable, works from /, refuses (no verdict) an import path the solution could change
    out, write = os.dup(1), os.write
    nonce = sys.stdin.readline().strip()
    limit, allowed, mode = float(sys.argv[1]), (sys.argv[2:3] or [""])[0], (sys.argv[3:4] or ["shared"])[0]
    here = os.path.dirname(DRIVER)
    with open(os.path.join(here, TESTS), encoding="utf-8") as f:
        tests = f.read()
    expected = expected_tests(tests)
    key = secrets.token_bytes(KEY_BYTES)
    with tempfile.TemporaryFile() as err:
        if mode.startswith(SPLIT):
            messages, timed_out, procs, work = run_split(here, limit, mode[len(SPLIT) :], tests, key, err)
        else:
            messages, timed_out, procs, work = run_shared(here, limit, allowed, key, err)
        for proc in procs:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
        returncode = [proc.wait() for proc in procs][0]
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)
        err.seek(0)
        sys.stderr.write(err.read()[-4000:].decode("utf-8", "replace"))
    verdict = judge(messages, expected, returncode if not timed_out else 0, timed_out)
    verdict["nonce"] = nonce
    write(out, ("\n" + MARK + json.dumps(verdict, default=str) + "\n").encode("utf-8", "replace"))


if __name__ == "__main__":
    main()
