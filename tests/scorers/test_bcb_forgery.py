"""BigCodeBench verdict forgeries (issue 20), run through the real bwrap sandbox.

Each attack pairs a trick with a WRONG answer (the tests must fail), so a pass can only be
forged. Every one of them forged a pass before the driver's fixes (authenticated reports,
the assertion ledger, operand screening, the isolated trusted parent); now each must fail,
and the correct answer and honest look-alikes must still pass. The reasons named are the
shared mode's (tasks whose tests need the answer's objects): those tests pin it.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from waits import ROOMY_S

from scorers.bcb_driver import expected_tests, judge, line_tagger, read_reports
from scorers.code_bcb import (
    DRIVER_FILES,
    BCBProblem,
    build_program,
    check_bigcodebench,
    driver_command,
    parse_verdict,
    verdict_to_result,
)

FIXTURES = Path(__file__).parents[1] / "fixtures"
RECORDS = {r["task_id"]: r for r in map(json.loads, (FIXTURES / "bcb_sample.jsonl").read_text().splitlines())}
WORDS = BCBProblem.from_record(RECORDS["BigCodeBench/9000"])

# The task's tests call task_func(text, top_n) and assertEqual its list of (word, count);
# top_n <= 0 must raise ValueError. WRONG returns [] whatever the input.
WRONG = "def task_func(text, top_n=3):\n    {trick}\n    return []\n"

# Every fd that is a pipe gets the old report protocol: one ok per test, then "done".
PIPE_PROTOCOL = """import json, os, stat, sys
def task_func(text, top_n=3):
    names = [n for n in vars(sys.modules['__test__'].TestCases) if n.startswith('test')]
    lines = [{'event': 'test', 'test': n, 'outcome': 'ok', 'tampered': []} for n in names]
    lines.append({'event': 'done', 'stage': 'run', 'exception': None, 'exception_type': None,
                  'missing_module': None, 'timed_out': False, 'failures': [], 'errors': [], 'skipped': 0,
                  'tests_run': len(names), 'n_failures': 0, 'n_errors': 0, 'duration_s': 0.1, 'tampered': []})
    data = ''.join(json.dumps(m) + '\\n' for m in lines).encode()
    for fd in range(3, 256):
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode):
                os.write(fd, data)
        except OSError:
            pass
    os._exit(0)
"""

# Walks up to unittest's per-test `_Outcome` (a local of TestCase.run) and changes it.
OUTCOME = """import sys
def _outcome():
    f = sys._getframe(1)
    while f is not None:
        o = f.f_locals.get('outcome')
        if o is not None and hasattr(o, 'expecting_failure'):
            return o
        f = f.f_back
def task_func(text, top_n=3):
    {trick}
    return []
"""

ALWAYS_EQUAL = """class Eq:
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    __hash__ = object.__hash__
def task_func(text, top_n=3):
    if top_n <= 0:
        raise ValueError(top_n)
    return {value}
"""

# Finds the driver's reporter (a frame local named `result` with `send`) and sends a passing
# report for every test through it, so every line carries a valid tag; then leaves.
REPORTER = """import gc, os, sys
def _from_frames(frame):
    while frame is not None:
        r = frame.f_locals.get('result')
        if r is not None and hasattr(r, 'send'):
            return r
        frame = frame.f_back
def _from_traceback():
    try:
        raise ValueError
    except ValueError as e:
        return _from_frames(e.__traceback__.tb_frame)
def _forge(r):
    names = [n for n in vars(sys.modules['__test__'].TestCases) if n.startswith('test')]
    for n in names:
        r.send({'event': 'test', 'test': n, 'outcome': 'ok', 'assertion_failed': False, 'tampered': []})
    r.send({'event': 'done', 'stage': 'run', 'exception': None, 'exception_type': None, 'missing_module': None,
            'timed_out': False, 'failures': [], 'errors': [], 'skipped': 0, 'tests_run': len(names),
            'n_failures': 0, 'n_errors': 0, 'duration_s': 0.1, 'tampered': []})
    os._exit(0)
def task_func(text, top_n=3):
    _forge({source})
    return []
"""

# Reaches the assertion guard through the closure of the wrapped assertEqual (no frames).
GUARD = """import unittest
def _guard():
    fn = unittest.TestCase.assertEqual
    return next(c.cell_contents for c in fn.__closure__ if hasattr(c.cell_contents, 'screen'))
class Eq:
    def __eq__(self, other):
        return True
    __hash__ = object.__hash__
def task_func(text, top_n=3):
    {trick}
    if top_n <= 0:
        raise ValueError(top_n)
    return Eq()
"""

ATTACKS = {
    "report_pipe_protocol": PIPE_PROTOCOL,
    "reporter_through_getframe": REPORTER.replace("{source}", "_from_frames(sys._getframe())"),
    "reporter_through_inspect": REPORTER.replace("{source}", "_from_frames(__import__('inspect').currentframe())"),
    "reporter_through_logging": REPORTER.replace("{source}", "_from_frames(__import__('logging').currentframe())"),
    "reporter_through_traceback": REPORTER.replace("{source}", "_from_traceback()"),
    # unittest calls the patched method with the reporter itself: no frames needed
    "reporter_through_a_patched_method": REPORTER.replace(
        "    _forge({source})\n",
        "    sys.modules['__main__'].Reporter.addFailure = lambda self, test, err: _forge(self)\n",
    ),
    "reporter_through_gc": REPORTER.replace(
        "{source}", "next(o for o in gc.get_objects() if type(o).__name__ == 'Reporter')"
    ),
    "screen_replaced_through_closure": GUARD.format(
        trick="_guard().screen = type('S', (), {'problem': lambda *a: None})()"
    ),
    "screen_known_poisoned_through_closure": GUARD.format(
        trick="s = _guard().screen; s.known[id(Eq)] = (Eq, s._entries(Eq))"
    ),
    "expected_failure_flag": OUTCOME.format(trick="_outcome().expecting_failure = True"),
    "outcome_result_swapped": OUTCOME.format(trick="import unittest; _outcome().result = unittest.TestResult()"),
    "always_equal_object": ALWAYS_EQUAL.format(value="Eq()"),
    "always_equal_inside_a_list": ALWAYS_EQUAL.format(value="[Eq()] * top_n if text else []"),
    "list_subclass_equal_to_all": ALWAYS_EQUAL.replace("class Eq:", "class Eq(list):").format(value="Eq()"),
    "eq_returns_a_truthy_object": (
        "class T:\n    def __bool__(self):\n        return True\n"
        "class Eq:\n    def __eq__(self, other):\n        return T()\n    __hash__ = object.__hash__\n"
        "def task_func(text, top_n=3):\n    if top_n <= 0:\n        raise ValueError(top_n)\n    return Eq()\n"
    ),
    # os.terminal_size: a tuple subclass from the standard library, holding the solution's objects
    "always_equal_inside_a_library_tuple": ALWAYS_EQUAL.format(
        value="[__import__('os').terminal_size((Eq(), Eq()))] * top_n if text else []"
    ),
    "eq_from_a_dynamic_type": (
        "def task_func(text, top_n=3):\n    if top_n <= 0:\n        raise ValueError(top_n)\n"
        "    return type('R', (tuple,), {'__eq__': lambda s, o: True, '__ne__': lambda s, o: False,"
        " '__hash__': tuple.__hash__})()\n"
    ),
}


def fence(code: str) -> str:
    return f"Solution:\n```python\n{code.strip()}\n```\n"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(ATTACKS))
async def test_attack_fails(runner, name):
    result = await check_bigcodebench(fence(ATTACKS[name]), WORDS, runner, ROOMY_S)
    assert not result.correct, (name, result.reason)


@pytest.mark.slow
async def test_always_equal_object_is_named_in_the_reason(runner):
    result = await check_bigcodebench(fence(ATTACKS["always_equal_object"]), WORDS, runner, ROOMY_S, split=False)
    assert result.details["status"] == "tampered" and "__eq__" in result.reason, result.reason


@pytest.mark.slow
async def test_raw_protocol_on_the_report_pipe_is_rejected_as_unauthenticated(runner):
    result = await check_bigcodebench(fence(ATTACKS["report_pipe_protocol"]), WORDS, runner, ROOMY_S, split=False)
    assert result.details["status"] == "tampered" and "unauthenticated" in result.reason, result.reason


# numpy's assertions raise their own AssertionError, outside unittest's assertion methods
NUMPY_TESTS = """import unittest
import numpy as np
class TestCases(unittest.TestCase):
    def test_values(self):
        np.testing.assert_array_equal(task_func(3), np.array([0, 1, 4]))
    def test_empty(self):
        np.testing.assert_array_equal(task_func(0), np.array([]))
"""
NUMPY = BCBProblem("BigCodeBench/np", "", "", "import numpy as np\ndef task_func(n):\n", NUMPY_TESTS)
NUMPY_ATTACKS = {
    "numpy_outcome_result_swapped": OUTCOME.replace("text, top_n=3", "n").format(
        trick="import unittest; _outcome().result = unittest.TestResult()"
    ),
    "numpy_always_equal_object_array": ALWAYS_EQUAL.split("def task_func")[0]
    + "import numpy as np\ndef task_func(n):\n    return np.array([Eq()] * n, dtype=object)\n",
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(NUMPY_ATTACKS))
async def test_numpy_attack_fails(runner, name):
    result = await check_bigcodebench(fence(NUMPY_ATTACKS[name]), NUMPY, runner, ROOMY_S)
    assert not result.correct, (name, result.reason)


@pytest.mark.slow
async def test_numpy_correct_answer_passes(runner):
    code = "import numpy as np\ndef task_func(n):\n    return np.arange(n) ** 2\n"
    result = await check_bigcodebench(fence(code), NUMPY, runner, ROOMY_S)
    assert result.correct, result.reason


HONEST = {
    "correct": WORDS.reference_program,
    # the solution's own classes are fine when they do not decide a comparison
    "own_helper_class": (
        "import collections, re\nclass Counter2(collections.Counter):\n    def top(self, n):\n"
        "        return self.most_common(n)\n"
        "def task_func(text, top_n=3):\n    if top_n <= 0:\n        raise ValueError(top_n)\n"
        "    return Counter2(re.findall(r'[a-z0-9]+', text.lower())).top(top_n)\n"
    ),
    # library code that looks at frames for the answer (module names, log records, tracebacks)
    "frame_using_libraries": (
        "import asyncio, collections, dataclasses, enum, inspect, logging, re, threading, traceback, typing\n"
        "import warnings\nlogging.basicConfig(level=logging.INFO)\nT = typing.TypeVar('T')\n"
        "Color = enum.Enum('Color', 'RED GREEN')\nPair = collections.namedtuple('Pair', 'a b')\n"
        "Box = dataclasses.make_dataclass('Box', ['v'])\n"
        "def task_func(text, top_n=3):\n    logging.warning('counting %s', text)\n"
        "    warnings.warn('just a warning')\n    inspect.signature(task_func)\n"
        "    try:\n        1 / 0\n    except ZeroDivisionError:\n        traceback.format_exc()\n"
        "    t = threading.Thread(target=lambda: None)\n    t.start()\n    t.join()\n"
        "    asyncio.run(asyncio.sleep(0))\n    Box(1), Pair(1, 2), Color.RED\n"
        "    if top_n <= 0:\n        raise ValueError(top_n)\n"
        "    return collections.Counter(re.findall(r'[a-z0-9]+', text.lower())).most_common(top_n)\n"
    ),
    # a namedtuple compares as a tuple: its __eq__ is tuple's
    "namedtuple_rows": (
        "import collections, re\nRow = collections.namedtuple('Row', 'word count')\n"
        "def task_func(text, top_n=3):\n    if top_n <= 0:\n        raise ValueError(top_n)\n"
        "    c = collections.Counter(re.findall(r'[a-z0-9]+', text.lower()))\n"
        "    return [Row(*p) for p in c.most_common(top_n)]\n"
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(HONEST))
async def test_honest_answers_still_pass(runner, name):
    result = await check_bigcodebench(fence(HONEST[name]), WORDS, runner, ROOMY_S)
    assert result.correct, (name, result.reason)


# Values from libraries the tests import after the driver's snapshot (C types, pure-Python
# classes, mocks, pandas, numpy, matplotlib): none of them may be mistaken for the solution's.
LIBRARY_TESTS = """import unittest
from unittest import mock
import datetime, decimal, fractions, collections
import numpy as np
import pandas as pd
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
class TestCases(unittest.TestCase):
    def test_values(self):
        r = task_func()
        self.assertEqual(r["when"], datetime.date(2024, 1, 2))
        self.assertEqual(r["money"], decimal.Decimal("1.50"))
        self.assertAlmostEqual(r["part"], fractions.Fraction(1, 3))
        self.assertEqual(r["ordered"], collections.OrderedDict(a=1))
        self.assertIn(r["money"], [decimal.Decimal("1.5")])
    def test_frames(self):
        df = task_func()["frame"]
        pd.testing.assert_frame_equal(df, pd.DataFrame({"x": [1, 2]}))
        self.assertEqual(df.shape, (2, 1))
        self.assertEqual(df["x"].tolist(), [1, 2])
        self.assertTrue((df["x"] > 0).all())
        np.testing.assert_array_equal(df["x"].to_numpy(), np.array([1, 2]))
    def test_plot(self):
        ax = task_func()["ax"]
        self.assertIsInstance(ax, plt.Axes)
        self.assertEqual(ax.get_title(), "t")
    @mock.patch("os.getcwd")
    def test_mock(self, getcwd):
        getcwd.return_value = mock.MagicMock()
        self.assertEqual(task_func()["cwd"], getcwd.return_value)
"""
LIBRARY_SOLUTION = """import datetime, decimal, fractions, collections, os
import pandas as pd
import matplotlib.pyplot as plt
def task_func():
    fig, ax = plt.subplots()
    ax.set_title("t")
    return {"when": datetime.date(2024, 1, 2), "money": decimal.Decimal("1.5"), "part": fractions.Fraction(2, 6),
            "ordered": collections.OrderedDict(a=1), "frame": pd.DataFrame({"x": [1, 2]}), "ax": ax,
            "cwd": os.getcwd()}
"""


@pytest.mark.slow
async def test_library_values_and_mocks_are_not_mistaken_for_the_solutions(runner):
    problem = BCBProblem("BigCodeBench/libs", "", "", "import os\ndef task_func():\n", LIBRARY_TESTS)
    result = await check_bigcodebench(fence(LIBRARY_SOLUTION), problem, runner, ROOMY_S)
    assert result.correct, result.reason


TEST_DEFINED_EQ = """import unittest
class Loose:
    def __init__(self, v):
        self.v = v
    def __eq__(self, other):
        return sorted(self.v) == sorted(other)
class TestCases(unittest.TestCase):
    def test_any_order(self):
        self.assertEqual(Loose(task_func()), [1, 2])
    @unittest.expectedFailure
    def test_declared_expected_failure(self):
        self.assertEqual(task_func(), [])
"""


@pytest.mark.slow
async def test_the_tests_own_eq_classes_and_expected_failures_are_honoured(runner):
    problem = BCBProblem("BigCodeBench/own", "", "", "def task_func():\n", TEST_DEFINED_EQ)
    result = await check_bigcodebench(fence("def task_func():\n    return [2, 1]\n"), problem, runner, ROOMY_S)
    assert result.correct, result.reason


# A module planted where the trusted parent could import it: before the fix the parent ran
# as `python3 bcb_driver.py` with the (writable) driver directory first on sys.path, so a
# planted `json.py` ran inside it, read the nonce from its stdin and printed a passing verdict.
PLANTED_JSON = r"""import os, sys
nonce = sys.stdin.readline().strip()
body = '{"nonce": "%s", "stage": "run", "tests_run": 5, "failures": 0, "errors": 0, "integrity": []}' % nonce
os.write(1, ("\n@@BCB_VERDICT@@" + body + "\n").encode())
os._exit(0)
"""


async def test_a_module_planted_next_to_the_driver_is_not_imported_by_the_trusted_parent(runner):
    program = build_program("def task_func(text, top_n=3):\n    return []\n", WORDS)
    files = {**DRIVER_FILES, "bcb_solution.py": program, "bcb_tests.py": WORDS.test, "json.py": PLANTED_JSON}
    run = await runner.run(driver_command(ROOMY_S), files=files, stdin="n" * 32 + "\n", timeout=ROOMY_S + 10)
    verdict = parse_verdict(run.stdout, "n" * 32)
    assert verdict is not None, run.stderr[-2000:]  # the trusted parent still decides
    result = verdict_to_result(verdict, run, WORDS, program, ROOMY_S)
    assert not result.correct, result.reason


# ------------------------------------------------------------------ the parent's rules (pure)

PLAIN = "import unittest\nclass TestCases(unittest.TestCase):\n    def test_a(self):\n        pass\n"
DECLARED = PLAIN.replace("    def test_a", "    @unittest.expectedFailure\n    def test_a")


def _messages(outcome: str, assertion_failed: bool = False) -> list[dict]:
    done = {"event": "done", "stage": "run", "exception": None, "failures": [], "errors": [], "skipped": 0,
            "tests_run": 1, "n_failures": 0, "n_errors": 0, "tampered": []}  # fmt: skip
    test = {"event": "test", "test": "test_a", "outcome": outcome, "assertion_failed": assertion_failed, "tampered": []}
    return [{"event": "loaded", "tests": ["test_a"], "tampered": []}, test, done]


@pytest.mark.parametrize(
    ("source", "outcome", "assertion_failed", "accepted"),
    [
        (PLAIN, "ok", False, True),
        (PLAIN, "xfail", False, False),  # an expected failure the test never declared
        (PLAIN, "ok", True, False),  # a failed assertion that unittest's result lost
        (DECLARED, "xfail", True, True),
        (DECLARED, "ok", True, False),
    ],
)
def test_parent_takes_expected_and_lost_failures_as_the_test_declares(source, outcome, assertion_failed, accepted):
    verdict = judge(_messages(outcome, assertion_failed), expected_tests(source), 0, False)
    assert (not verdict["integrity"]) == accepted, verdict["integrity"]


def test_parent_reads_only_lines_tagged_with_the_key():
    key, read_end, write_end = b"k" * 32, *os.pipe()
    child = line_tagger(key)
    good = json.dumps({"event": "loaded", "tests": [], "tampered": []}).encode()
    os.write(write_end, good + b" " + child(good) + b"\n" + good + b" " + b"0" * 64 + b"\n")
    os.close(write_end)
    messages, timed_out = read_reports(read_end, time.monotonic() + 60, line_tagger(key))  # the pipe is closed: no wait
    os.close(read_end)
    assert [m["event"] for m in messages] == ["loaded", "unauthenticated"] and not timed_out
