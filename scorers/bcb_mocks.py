"""BigCodeBench's patching tests in the split mode: the mocks stay in the test process.

A task's tests patch names its answer calls (`@patch('os.listdir')`, `patch('builtins.open',
mock_open(...))`) and read the mocks' records. In the split mode (scorers/bcb_split.py) the
mocks never leave the test process. `patch_targets` reads the targets from the test source (string
targets, and `patch.object` of an attribute chain of a name the test source imports, as the dotted
target it names; it says why when the tests patch in a way this does not carry).
Before each call the test process sends, for every target whose value differs from the one it
had when the tests loaded, a handle (a mock, or a function the tests put there) or the data put
there; the answer's process resolves each target itself (importing as `patch` does), installs a
`StandIn` there for the call and puts the original back after it. A stand-in forwards what the
answer does with it (a call, an attribute read or set, a dunder: `with`, iteration, `len`,
`str`...) to the test process as plain data (scorers/bcb_values.py), where `TestSide.serve`
does it to the real mock (side effects, the tests' own functions included, run there) and sends
back the result as data, or as a handle to a further stand-in when it is a mock (or the iterator
a mock's `__iter__` gives, or a value a mock gives that has no data form: an object of the tests'
own class, such as a `MockResponse`, or a `requests.Response` they built, its public attributes
read, its methods called and read-only dunders done there, never set; a function of the tests',
such as `Mock(json=lambda: ...)`'s, called there). Nothing else of the tests crosses: the mocks' own API (`call_args`,
`mock_calls`, `assert_*`, `reset_mock`, `return_value`...) and private names are refused to the
answer, and an argument the answer's side cannot send as data fails the run (status "crash").
Standard library only; `unittest.mock` on the test side.
"""

from __future__ import annotations

import ast
import contextlib
import operator
import os
import pkgutil
import threading
import types

MISSING = object()
PASSED = ("sys.stdout", "sys.stderr", "sys.stdin")  # what the call prints crosses anyway (bcb_split `settle`)
MOCK_API = frozenset(
    ("assert_any_call", "assert_called", "assert_called_once", "assert_called_once_with", "assert_called_with",
     "assert_has_calls", "assert_not_called", "assert_not_awaited", "assert_awaited", "assert_awaited_once",
     "assert_awaited_with", "assert_awaited_once_with", "assert_any_await", "assert_has_awaits", "attach_mock",
     "call_args", "call_args_list", "call_count", "called", "configure_mock", "method_calls", "mock_add_spec",
     "mock_calls", "reset_mock", "return_value", "side_effect", "await_count", "await_args", "await_args_list")
)  # fmt: skip
OPERATORS = {
    "__iter__": iter, "__next__": next, "__len__": len, "__bool__": bool, "__str__": str, "__repr__": repr,
    "__hash__": hash, "__int__": int, "__float__": float, "__index__": operator.index,
    "__contains__": operator.contains, "__getitem__": operator.getitem, "__setitem__": operator.setitem,
    "__delitem__": operator.delitem, "__eq__": operator.eq, "__ne__": operator.ne, "__lt__": operator.lt,
    "__le__": operator.le, "__gt__": operator.gt, "__ge__": operator.ge, "__add__": operator.add,
    "__sub__": operator.sub, "__mul__": operator.mul, "__truediv__": operator.truediv, "__pow__": operator.pow,
    "__mod__": operator.mod, "__floordiv__": operator.floordiv, "__neg__": operator.neg, "__pos__": operator.pos,
    "__abs__": operator.abs, "__radd__": lambda a, b: b + a, "__rsub__": lambda a, b: b - a,
    "__rmul__": lambda a, b: b * a, "__rtruediv__": lambda a, b: b / a, "__rpow__": lambda a, b: b**a,
}  # fmt: skip
BY_NAME = ("__enter__", "__exit__", "__fspath__")  # called as the mock's own attribute
WRITING = ("__setitem__", "__delitem__")
FORWARDED_CLASSES = ("requests.models.Response",)  # library objects the tests build for a mock to give
ALLOWED = {"mock": {"call", "get", "set", *OPERATORS, *BY_NAME}, "func": {"call"}, "iter": {"__iter__", "__next__"},
           "obj": {"get", *(set(OPERATORS) - set(WRITING)), *BY_NAME}}  # fmt: skip


class Unsupported(Exception):
    """A value that cannot cross as data (not a mock): the run fails."""


class Refused(Exception):
    """An operation on a mock the answer may not do (its records, its configuration): the run fails."""


# --------------------------------------------------------------------------- what the tests patch (host and test side)


def _chain(node) -> list[str]:
    names = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        names.append(node.id)
    return names[::-1]


BINDERS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler, ast.MatchAs, ast.MatchStar)


def _imported(tree: ast.Module) -> dict[str, str]:
    """The names the test source binds by top-level imports and nowhere else (every binding of the name, in any
    scope, is an import of the same thing): name -> the dotted path imported."""
    paths: dict[str, set[str]] = {}
    other: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                name = alias.asname or alias.name.split(".")[0]
                if isinstance(node, ast.Import):
                    paths.setdefault(name, set()).add(alias.name if alias.asname else name)
                elif node.level or not node.module or alias.name == "*":
                    other.add(name)
                else:
                    paths.setdefault(name, set()).add(f"{node.module}.{alias.name}")
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            other.add(node.id)
        elif isinstance(node, ast.arg):
            other.add(node.arg)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            other.update(node.names)
        elif isinstance(node, BINDERS) and node.name:
            other.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            other.add(node.rest)
    top = {a.asname or a.name.split(".")[0] for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)
           for a in n.names}  # fmt: skip
    return {name: found.pop() for name, found in paths.items() if len(found) == 1 and name in top - other}


def _object_target(call: ast.Call, imported: dict[str, str]) -> str | None:
    """`patch.object(owner, 'name')` as the dotted target `patch` would take, where the owner is a chain of
    attributes of a name the test source imports (None where it is not: the test's own objects, a call...)."""
    keywords = {k.arg: k.value for k in call.keywords}
    owner = call.args[0] if call.args else keywords.get("target")
    attribute = call.args[1] if len(call.args) > 1 else keywords.get("attribute")
    base = owner
    while isinstance(base, ast.Attribute):
        base = base.value
    chain = _chain(owner) if isinstance(base, ast.Name) else [""]  # only a chain of attributes from a name
    if chain[0] not in imported or not (isinstance(attribute, ast.Constant) and type(attribute.value) is str):
        return None
    return ".".join([imported[chain[0]], *chain[1:], attribute.value]) if attribute.value.isidentifier() else None


def patch_targets(test_source: str) -> tuple[list[str], str | None]:
    """The targets of the tests' `patch(...)` calls (string constants, and `patch.object` of what the test
    source imports, as dotted names), and why their patching cannot run in the split mode (None: it can):
    `patch.multiple`, `patch.object` of anything else, `patch.dict` of anything but `os.environ` (the
    environment crosses with every call), a target that is not a string constant, or one in the test's own
    module."""
    try:
        tree = ast.parse(test_source)
    except SyntaxError:
        return [], "the test source does not parse"
    targets: list[str] = []
    imported = _imported(tree)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        chain = _chain(node.func)
        if chain[-2:] == ["patch", "multiple"]:
            return [], "patches objects (patch.multiple)"
        if chain[-2:] == ["patch", "dict"]:
            first = node.args[0] if node.args else None
            if first is None or ast.unparse(first).strip("'\"") != "os.environ":
                return [], "patches a dict other than os.environ"
            continue
        if chain[-2:] == ["patch", "object"]:
            target = _object_target(node, imported)
            if target is None:
                return [], "patch.object of what the test source does not import (the test's own objects...)"
        elif chain and chain[-1] == "patch":
            first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "target"), None)
            target = _target_text(first)
            if target is None:
                return [], "patches a target that is not a string constant"
        else:
            continue
        if target.startswith(("__", ".")) and not target.startswith(MODULE + ".") or "." not in target:
            return [], f"patches {target!r}"
        if target not in targets and target not in PASSED:
            targets.append(target)
    return targets, None


MODULE = "__test__"  # the module the program and the tests share officially; each process names its own so


def _target_text(node: ast.AST | None) -> str | None:
    """A `patch` target: a string constant, or `__name__ + '.name'` (the test's module: `MODULE`, which in
    the split mode is the test module in the test process and the answer's module in the answer's)."""
    if isinstance(node, ast.Constant) and type(node.value) is str:
        return node.value
    if (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Add)
        and isinstance(node.left, ast.Name)
        and node.left.id == "__name__"
        and isinstance(node.right, ast.Constant)
        and type(node.right.value) is str
    ):
        return MODULE + node.right.value
    return None


def resolve(target: str):
    """The value at a dotted target (MISSING where it cannot be found); imports as `patch` does."""
    owner, _, name = target.rpartition(".")
    try:
        return getattr(pkgutil.resolve_name(owner), name, MISSING)
    except Exception:  # noqa: BLE001 - a module that does not import: nothing is patched there
        return MISSING


# --------------------------------------------------------------------------- the test side (trusted)


class TestSide:
    """The tests' patch targets and the handles the answer's process holds (mocks, functions the
    tests patched in, iterators of mocks); `serve` does what a stand-in forwards."""

    def __init__(self, targets: list[str]) -> None:
        from unittest import mock

        self.mock_class, self.targets = mock.NonCallableMock, targets
        self.originals = {t: resolve(t) for t in targets}
        self.objects: list[tuple[str, object]] = []
        self.known: dict[int, int] = {}

    def handle(self, value, kind: str) -> int:
        found = self.known.get(id(value))
        if found is None:
            found = self.known[id(value)] = len(self.objects)
            self.objects.append((kind, value))
        return found

    def handle_of(self, value) -> int | None:
        """A mock's handle (registered on first sight); None for anything else not yet handed out."""
        if isinstance(value, self.mock_class):
            return self.handle(value, "mock")
        found = self.known.get(id(value))
        return found if found is not None and self.objects[found][1] is value else None

    def patches(self, encoder) -> list:
        """[target, value] for the targets patched now: a mock or a function the tests put there as a
        handle, anything else as data (Unsupported when it is not)."""
        sent = []
        for target in self.targets:
            value = resolve(target)
            if value is self.originals[target] or value is MISSING:
                continue
            if callable(value) and not isinstance(value, self.mock_class | type):
                self.handle(value, "func")
            sent.append([target, encoder.encode(value)])
        return sent

    def serve(self, message: dict, encoder, decoder) -> dict:
        """Do one forwarded operation to the real object; Refused for what the answer may not do."""
        handle, op, name = message.get("h"), message.get("fw"), message.get("name")
        if type(handle) is not int or not 0 <= handle < len(self.objects):
            raise Refused("a stand-in with no object behind it")
        kind, target = self.objects[handle]
        if op not in ALLOWED[kind] or op in ("get", "set") and not _public(name):
            raise Refused(f"{op} {name!r} on a {kind}" if op in ("get", "set") else f"{op} on a {kind}")
        args, kwargs = decoder.decode(message.get("args")), decoder.decode(message.get("kwargs"))
        if type(args) is not list or type(kwargs) is not dict or any(type(k) is not str for k in kwargs):
            raise Refused("malformed arguments")
        if op == "set" and any(self.handle_of(a) is not None for a in args):  # a mock the tests may assert on
            raise Refused(f"set {name!r} to a mock")
        try:
            if op == "call":
                value = target(*args, **kwargs)
            elif op == "get":
                value = getattr(target, name)
            elif op == "set":
                value = setattr(target, name, *args[:1])
            elif op in BY_NAME:
                value = getattr(target, op)(*args)
            else:
                value = OPERATORS[op](target, *args)
        except BaseException as exc:  # noqa: BLE001 - the mock's exception is the answer's to handle
            return {"raise": encoder.encode(exc)}
        if op == "__iter__" and self.handle_of(value) is None and not _is_data(value):
            self.handle(value, "iter")
        elif kind == "obj" and op == "get" and callable(value) and not isinstance(value, type):
            self.handle(value, "func")  # a forwarded object's method, called here
        try:
            return {"ok": encoder.encode(value)}
        except Exception:  # no data form: forwarded where `_forwarded` allows, read only
            forwarded = _forwarded(value)
            if kind == "iter" or forwarded is None or self.handle_of(value) is not None:
                raise
            self.handle(value, forwarded)
            return {"ok": encoder.encode(value)}


def _forwarded(value) -> str | None:
    """How a value with no data form that a mock gives is forwarded: "func" for a function of the tests' own
    (`Mock(json=lambda: ...)`), "obj" for an object of a class of theirs or of `FORWARDED_CLASSES`; None: not."""
    kind = type(value)
    if isinstance(value, types.FunctionType | types.MethodType):
        return "func" if getattr(value, "__module__", None) == MODULE else None
    if isinstance(value, type | BaseException | types.ModuleType):
        return None
    own = kind.__module__ == MODULE or f"{kind.__module__}.{kind.__qualname__}" in FORWARDED_CLASSES
    return "obj" if own else None


def _public(name) -> bool:
    return type(name) is str and name.isidentifier() and not name.startswith("_") and name not in MOCK_API


def _is_data(value) -> bool:
    return value is None or type(value) in (bool, int, float, str, bytes, list, tuple, dict, set)


def aware(encoder_class, decoder_class, of, resolve_handle):
    """Encoder and decoder classes that send `of(value)`'s handle (when not None) as `{"fw": n}` and
    build `resolve_handle(n)` from it, everything else as the base classes do."""

    class Encoder(encoder_class):
        def encode(self, value, depth=0):
            found = of(value)
            return {"fw": found} if found is not None else super().encode(value, depth)

    class Decoder(decoder_class):
        def decode(self, data, depth=0):
            if type(data) is dict and len(data) == 1 and "fw" in data:
                return resolve_handle(data["fw"])
            return super().decode(data, depth)

    return Encoder, Decoder


# --------------------------------------------------------------------------- the answer's side (untrusted)


class AnswerSide:
    """The answer's end of the forwarding: stand-ins by handle, and one operation at a time on the
    pipes (`write(message)` and `read()` are the call loop's own)."""

    def __init__(self, values, write, read) -> None:
        self.write, self.read, self.lock, self.stand_ins = write, read, threading.Lock(), {}
        self.Encoder, self.Decoder = aware(values.Encoder, values.Decoder, self.handle_of, self.stand_in)

        class Strict(self.Encoder):
            def opaque(self, value):
                raise Unsupported(f"an argument of type {type(value).__qualname__} cannot cross to the tests' mock")

        self.strict = Strict

    def handle_of(self, value) -> int | None:
        return object.__getattribute__(value, "_fw_handle") if type(value) is StandIn else None

    def stand_in(self, handle):
        if type(handle) is not int:
            raise ValueError("malformed handle")
        if handle not in self.stand_ins:
            self.stand_ins[handle] = StandIn(self, handle)
        return self.stand_ins[handle]

    def forward(self, op: str, handle: int, name, args, kwargs):
        with self.lock:
            try:
                encoder = self.strict()
                message = {"fw": op, "h": handle, "name": name, "args": encoder.encode(list(args)),
                           "kwargs": encoder.encode(dict(kwargs))}  # fmt: skip
            except (Unsupported, ValueError, RecursionError) as exc:
                self.write({"fw_error": str(exc)[:300] or "an argument nested too deeply"})
                os._exit(1)
            self.write(message)
            reply = self.read()
        if type(reply) is not dict:
            os._exit(1)
        if "raise" in reply:
            error = self.Decoder().decode(reply["raise"])
            raise error if isinstance(error, BaseException) else RuntimeError("malformed exception")
        return self.Decoder().decode(reply.get("ok"))

    @contextlib.contextmanager
    def installed(self, patches, decoder):
        """The tests' patches in this process for one call: each target resolved here, its original
        put back afterwards."""
        undo = []
        try:
            for target, data in patches if type(patches) is list else ():
                owner_name, _, name = str(target).rpartition(".")
                try:
                    owner = pkgutil.resolve_name(owner_name)
                except Exception:  # noqa: BLE001, S112 - not importable here: the answer cannot reach it either
                    continue
                undo.append((owner, name, owner.__dict__.get(name, MISSING) if hasattr(owner, "__dict__") else
                             getattr(owner, name, MISSING)))  # fmt: skip
                setattr(owner, name, decoder.decode(data))
            yield
        finally:
            for owner, name, original in reversed(undo):
                with contextlib.suppress(Exception):
                    if original is MISSING:
                        delattr(owner, name)
                    else:
                        setattr(owner, name, original)


class StandIn:
    """What the answer's code holds where the tests' mock is: every use is forwarded."""

    __slots__ = ("_fw_handle", "_fw_side", "__weakref__", "__dict__")

    def __init__(self, side: AnswerSide, handle: int) -> None:
        object.__setattr__(self, "_fw_handle", handle)
        object.__setattr__(self, "_fw_side", side)

    def _fw(self, op, name=None, args=(), kwargs=None):
        side = object.__getattribute__(self, "_fw_side")
        return side.forward(op, object.__getattribute__(self, "_fw_handle"), name, args, kwargs or {})

    def __call__(self, *args, **kwargs):
        return self._fw("call", None, args, kwargs)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return self._fw("get", name)

    def __setattr__(self, name, value):
        if name.startswith("_"):  # kept here, as a mock keeps them (pyplot sets `show.__signature__`)
            object.__setattr__(self, name, value)
        else:
            self._fw("set", name, (value,))

    def __exit__(self, kind, value, traceback):  # the traceback is not data: the mock gets None
        return self._fw("__exit__", None, (kind, value, None))


def _forwarder(op):
    def method(self, *args):
        return self._fw(op, None, args)

    method.__name__ = op
    return method


for _op in (*OPERATORS, "__enter__", "__fspath__"):
    setattr(StandIn, _op, _forwarder(_op))
