"""BigCodeBench verdict forgeries, third round (issue 31), run through the real bwrap sandbox.

Each attack pairs a trick with a WRONG answer (the task's tests must fail), so a pass can
only be forged. They forged a pass before the driver (1) pinned the test machinery before the
answer loads (every module already imported, `TestCases` built on the pinned
`unittest.TestCase`, the test source's imports bound to the pinned modules), (2) refused
capabilities no task needs (ctypes into the interpreter) and (3) checked compared values by
what they are (a type allowlist walked through containers, instance state and proxies).
The honest answers beside them must still pass.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from waits import ROOMY_S

from scorers.code_bcb import BCBProblem, capabilities, check_bigcodebench

FIXTURES = Path(__file__).parents[1] / "fixtures"
RECORDS = {r["task_id"]: r for r in map(json.loads, (FIXTURES / "bcb_sample.jsonl").read_text().splitlines())}
WORDS = BCBProblem.from_record(RECORDS["BigCodeBench/9000"])

# WRONG answers: the tests call task_func(text, top_n) and assertEqual a list of (word, count);
# top_n <= 0 must raise ValueError (the answers below raise it, so only assertEqual is forged).
# Eq equals any list (and nothing else): a probe with a stranger object does not reveal it.
ALWAYS_EQUAL = """import collections, weakref
class Eq:
    def __eq__(self, other):
        return isinstance(other, list)
    def __ne__(self, other):
        return not isinstance(other, list)
    __hash__ = object.__hash__
KEEP = Eq()
def task_func(text, top_n=3):
    if top_n <= 0:
        raise ValueError(top_n)
    {body}
"""

# What a forgery does once it holds the driver's report function `send` (from its `_send()`): reports
# every test of the module as passed, then a clean finish, and leaves before the real tests run.
FORGED_RUN = """def task_func(text, top_n=3):
    send = _send()
    names = [n for n in vars(sys.modules['__test__'].TestCases) if n.startswith('test')]
    for n in names:
        send({'event': 'test', 'test': n, 'outcome': 'ok', 'assertion_failed': False, 'tampered': []})
    send({'event': 'done', 'stage': 'run', 'exception': None, 'exception_type': None, 'missing_module': None,
          'timed_out': False, 'failures': [], 'errors': [], 'skipped': 0, 'tests_run': len(names),
          'n_failures': 0, 'n_errors': 0, 'duration_s': 0.1, 'tampered': []})
    os._exit(0)
"""

# The driver's own report function (a local of its test-process frame) reached through
# `ctypes.pythonapi.PyEval_GetFrame` and `f_back`: every line it sends carries a valid tag.
CTYPES_FRAMES = (
    """import ctypes, os, sys
def _send():
    get = ctypes.pythonapi.PyEval_GetFrame
    get.restype = ctypes.py_object
    frame = get()
    while frame is not None:
        local = frame.f_locals
        if callable(local.get('send')) and 'check' in local:
            return local['send']
        frame = frame.f_back
"""
    + FORGED_RUN
)

# A module of its own as `unittest`: the tests' `import unittest` gets a TestCase whose
# assertions pass everything.
LENIENT_UNITTEST = """import contextlib, sys, types, unittest as _real
class TestCase(_real.TestCase):
    def assertEqual(self, *a, **k):
        pass
    def assertRaises(self, *a, **k):
        return contextlib.suppress(BaseException)
def _install():
    fake = types.ModuleType('unittest')
    fake.__dict__.update({k: v for k, v in vars(_real).items() if not k.startswith('__')})
    fake.TestCase = TestCase
    {install}
INSTALLED = _install()
def task_func(text, top_n=3):
    return INSTALLED or []
"""

ATTACKS = {
    "mock_any": ALWAYS_EQUAL.format(body="from unittest.mock import ANY\n    return ANY"),
    "mock_any_in_a_list": ALWAYS_EQUAL.format(
        body="from unittest import mock\n    return [mock.ANY] * top_n if text else []"
    ),
    "weakref_proxy_to_always_equal": ALWAYS_EQUAL.format(body="return weakref.proxy(KEEP)"),
    "userlist_holding_always_equal": ALWAYS_EQUAL.format(
        body="u = collections.UserList()\n    u.data = KEEP\n    return u"
    ),
    "magicmock_configured_equal": ALWAYS_EQUAL.format(
        body="from unittest import mock\n    m = mock.MagicMock()\n    m.__eq__.return_value = True\n    return m"
    ),
    "ctypes_pyeval_getframe_f_back": CTYPES_FRAMES,
    # the C-API lookup made by library code (pkgutil) on the answer's behalf
    "ctypes_c_api_through_a_library_lookup": CTYPES_FRAMES.replace(
        "get = ctypes.pythonapi.PyEval_GetFrame",
        "get = __import__('pkgutil').resolve_name('ctypes:pythonapi.PyEval_GetFrame')",
    ),
    "own_module_as_unittest": LENIENT_UNITTEST.replace("{install}", "sys.modules['unittest'] = fake"),
    # the module puts the real one back as soon as the tests' class statement has read TestCase
    "own_unittest_restored_after_use": LENIENT_UNITTEST.replace(
        "{install}",
        "def restore(name):\n        if name != 'TestCase':\n            raise AttributeError(name)\n"
        "        sys.modules['unittest'] = _real\n        return TestCase\n"
        "    del fake.TestCase\n    fake.__getattr__ = restore\n    sys.modules['unittest'] = fake",
    ),
}


def fence(code: str) -> str:
    return f"Solution:\n```python\n{code.strip()}\n```\n"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(ATTACKS))
async def test_round3_attack_fails_with_a_named_reason(runner, name):
    # the shared mode's guards
    result = await check_bigcodebench(fence(ATTACKS[name]), WORDS, runner, ROOMY_S, split=False)
    assert not result.correct, (name, result.reason)
    assert result.details["status"] == "tampered", (name, result.reason)


HONEST = {
    "correct": WORDS.reference_program,
    # a deque and a UserList of plain values, a proxy-free weakref use, ctypes through a library
    "plain_values_in_library_containers": (
        "import collections, re, weakref\n"
        "def task_func(text, top_n=3):\n    if top_n <= 0:\n        raise ValueError(top_n)\n"
        "    pairs = collections.Counter(re.findall(r'[a-z0-9]+', text.lower())).most_common(top_n)\n"
        "    weakref.ref(collections.UserList)\n"
        "    return list(collections.UserList(collections.deque(pairs)))\n"
    ),
    # ctypes used by a library for its own ends (a shared value's buffer, cleared with memset)
    "library_using_ctypes": (
        "import collections, re, multiprocessing.sharedctypes\n"
        "def task_func(text, top_n=3):\n    if top_n <= 0:\n        raise ValueError(top_n)\n"
        "    multiprocessing.sharedctypes.RawValue('i', 0)\n"
        "    return collections.Counter(re.findall(r'[a-z0-9]+', text.lower())).most_common(top_n)\n"
    ),
    # modules it imports itself (new entries in sys.modules are fine; uuid loads ctypes-free)
    "imports_of_its_own": (
        "import collections, re, json, uuid, decimal, fractions, statistics, ctypes.util\n"
        "def task_func(text, top_n=3):\n    if top_n <= 0:\n        raise ValueError(top_n)\n"
        "    return collections.Counter(re.findall(r'[a-z0-9]+', text.lower())).most_common(top_n)\n"
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(HONEST))
async def test_round3_honest_answers_still_pass(runner, name):
    result = await check_bigcodebench(fence(HONEST[name]), WORDS, runner, ROOMY_S)
    assert result.correct, (name, result.reason)


# Values that tests compare and that must stay comparable: library containers of plain values,
# a test's own mock and ANY (the test imports them), pandas frames with object columns.
LIBRARY_TESTS = """import unittest
from unittest.mock import ANY, MagicMock, call
import collections, types
import numpy as np
import pandas as pd
class TestCases(unittest.TestCase):
    def test_containers(self):
        r = task_func()
        self.assertEqual(r["deque"], collections.deque([1, 2]))
        self.assertEqual(r["user"], collections.UserList([1, 2]))
        self.assertEqual(r["ns"], types.SimpleNamespace(a=1))
        self.assertEqual(r["calls"], [call(1, ANY)])
    def test_mock_identity(self):
        m = MagicMock()
        self.assertEqual(task_func(m)["mock"], m)
    def test_objects_in_frames(self):
        df = task_func()["frame"]
        pd.testing.assert_frame_equal(df, pd.DataFrame({"w": ["a", "b"], "n": [1, 2]}))
        np.testing.assert_array_equal(df["w"].to_numpy(), np.array(["a", "b"], dtype=object))
"""
LIBRARY_SOLUTION = """import collections, types
from unittest.mock import call
import pandas as pd
def task_func(m=None):
    return {"deque": collections.deque([1, 2]), "user": collections.UserList([1, 2]),
            "ns": types.SimpleNamespace(a=1), "calls": [call(1, 2)], "mock": m,
            "frame": pd.DataFrame({"w": ["a", "b"], "n": [1, 2]})}
"""


@pytest.mark.slow
async def test_round3_library_values_the_tests_compare_still_pass(runner):
    problem = BCBProblem("BigCodeBench/libs3", "", "", "def task_func(m=None):\n", LIBRARY_TESTS)
    result = await check_bigcodebench(fence(LIBRARY_SOLUTION), problem, runner, ROOMY_S)
    assert result.correct, result.reason


OBJECT_FRAME_TESTS = (
    LIBRARY_TESTS.split("class TestCases")[0]
    + """class TestCases(unittest.TestCase):
    def test_frame(self):
        pd.testing.assert_frame_equal(task_func(), pd.DataFrame({"w": pd.Series(["a", "b"], dtype=object)}))
"""
)


@pytest.mark.slow
async def test_round3_always_equal_inside_a_pandas_object_column_fails(runner):
    code = ALWAYS_EQUAL.split("def task_func")[0].replace("list)", "str)") + (
        "import pandas as pd\ndef task_func():\n    return pd.DataFrame({'w': [KEEP, KEEP]})\n"
    )  # Eq equals any string here: the expected column's values
    problem = BCBProblem("BigCodeBench/frame3", "", "", "def task_func():\n", OBJECT_FRAME_TESTS)
    result = await check_bigcodebench(fence(code), problem, runner, ROOMY_S)
    assert not result.correct and result.details["status"] == "tampered", result.reason


# A task that needs ctypes (BigCodeBench/562-565 load a library with ctypes.CDLL) keeps it.
CTYPES_TESTS = """import unittest
import ctypes
class TestCases(unittest.TestCase):
    def test_libc(self):
        self.assertEqual(task_func(), 3)
"""


@pytest.mark.slow
async def test_round3_a_task_that_imports_ctypes_keeps_it(runner):
    problem = BCBProblem("BigCodeBench/ctypes3", "", "", "import ctypes\ndef task_func():\n", CTYPES_TESTS,
                         libs=("ctypes",))  # fmt: skip
    code = "import ctypes\ndef task_func():\n    return ctypes.CDLL(None).strlen(b'abc')\n"
    result = await check_bigcodebench(fence(code), problem, runner, ROOMY_S)
    assert result.correct, result.reason
    assert "ctypes" in capabilities(problem) and "ctypes" not in capabilities(WORDS)


# ------------------------------------------------------------------ the operand allowlist (pure, no sandbox)


def _list_equal():
    """An object equal to any list, of a class made now (after the screen: as the answer's would
    be) by code outside the Python library."""

    class _ListEqual:
        def __eq__(self, other):
            return isinstance(other, list)

        __hash__ = object.__hash__

    return _ListEqual()


def _screen(wildcards=False):
    from scorers.bcb_driver import Screen

    return Screen(solution_lines=0, wildcards=wildcards)


@pytest.mark.parametrize(
    ("make", "word"),
    [
        (lambda keep: __import__("weakref").proxy(keep), "proxy"),
        (lambda keep: __import__("types").MappingProxyType({1: keep}), "proxy"),
        (lambda keep: __import__("collections").UserList([keep]), "_ListEqual.__eq__"),
        (lambda keep: __import__("collections").deque([keep]), "_ListEqual.__eq__"),
        (lambda keep: __import__("types").SimpleNamespace(a=keep), "_ListEqual.__eq__"),
        (lambda keep: {1: (keep,)}.values(), "_ListEqual.__eq__"),
        (lambda keep: __import__("unittest.mock").mock.ANY, "wildcard"),
        (lambda keep: [__import__("unittest.mock").mock.ANY], "wildcard"),
    ],
)
def test_screen_refuses_what_an_operand_is_not(make, word):
    screen = _screen()
    problem = screen.problem([make(_list_equal()), []])
    assert problem is not None and word in problem, problem


@pytest.mark.parametrize(
    "value",
    [
        [("a", 1)],
        __import__("collections").deque([1, 2]),
        __import__("collections").UserList([1]),
        __import__("collections").OrderedDict(a=1),
        __import__("types").SimpleNamespace(a=1),
        __import__("decimal").Decimal("1.5"),
        __import__("fractions").Fraction(1, 3),
        __import__("datetime").date(2024, 1, 2),
        __import__("pathlib").PurePosixPath("/a"),
        {1: 2}.keys(),
        slice(1, 2),
        int,
    ],
)
def test_screen_accepts_plain_values_in_library_types(value):
    assert _screen().problem([value, value.__class__]) is None


def test_a_wildcard_is_accepted_where_the_test_uses_one():
    from unittest import mock

    assert _screen(wildcards=True).problem([[mock.call(1, mock.ANY)], [mock.call(1, 2)]]) is None
