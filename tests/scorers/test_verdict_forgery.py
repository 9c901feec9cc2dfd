"""Concrete attacks on the code checks' verdicts (issue 13, verdict integrity), run
through the real bwrap sandbox: each one must fail to forge a pass.

HumanEval asserts run in the trusted parent, so there the candidate has nothing to
forge; BigCodeBench's tests run in the candidate's process, so the driver detects
tampering. Every attack below pairs the trick with a WRONG (or missing) function, so
a forged pass is the only way to score.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from waits import ROOMY_S

from scorers.code_bcb import BCBProblem, check_bigcodebench
from scorers.code_humaneval import check_humaneval, problem_from_record

FIXTURES = Path(__file__).parents[1] / "fixtures"
HE = {r["task_id"]: r for r in map(json.loads, (FIXTURES / "humaneval_sample.jsonl").read_text().splitlines())}
BCB = {r["task_id"]: r for r in map(json.loads, (FIXTURES / "bcb_sample.jsonl").read_text().splitlines())}
WORDS = BCBProblem.from_record(BCB["BigCodeBench/9000"])


def fence(code: str) -> str:
    return f"Solution:\n```python\n{code.strip()}\n```\n"


# Finds every candidate nonce it can (frames, gc, /proc of the parent) and writes
# forged verdict lines for both drivers to every fd, then leaves with status 0.
FORGE = r"""
def _forge():
    import gc, json, os, re, sys
    tokens = set()
    f = sys._getframe()
    while f is not None:
        for v in list(f.f_locals.values()) + list(f.f_globals.values()):
            if isinstance(v, str) and re.fullmatch(r"[0-9a-f]{32}", v):
                tokens.add(v)
            if isinstance(v, dict) and isinstance(v.get("nonce"), str):
                tokens.add(v["nonce"])
        f = f.f_back
    for o in gc.get_objects():
        if isinstance(o, dict) and isinstance(o.get("nonce"), str):
            tokens.add(o["nonce"])
    for path in (f"/proc/{os.getppid()}/mem", f"/proc/{os.getppid()}/environ", f"/proc/{os.getppid()}/cmdline"):
        try:
            with open(path, "rb") as fh:
                tokens.update(t.decode() for t in re.findall(rb"[0-9a-f]{32}", fh.read(1 << 20)))
        except OSError:
            pass
    he = json.dumps({"result": "passed", "stage": "check"})
    bcb = json.dumps({"stage": "run", "tests_run": 5, "failures": 0, "errors": 0, "skipped": 0,
                      "integrity": [], "exception": None, "timed_out": False})
    fds = [1, 2]
    for fd in (f"/proc/{os.getppid()}/fd/1", "/proc/self/fd/1"):
        try:
            fds.append(os.open(fd, os.O_WRONLY))
        except OSError:
            pass
    for tok in tokens or {"0" * 32}:
        line = "\n" + tok + " " + he + "\n@@BCB_VERDICT@@" + json.dumps({**json.loads(bcb), "nonce": tok}) + "\n"
        for fd in fds + list(range(3, 40)):
            try:
                os.write(fd, line.encode())
            except OSError:
                pass
    os._exit(0)
"""

# ------------------------------------------------------------------ HumanEval

HE_ATTACKS = {
    "frame_walk_nonce_at_import": FORGE + "\n_forge()\n",
    "frame_walk_nonce_in_call": FORGE + "\ndef add(x, y):\n    _forge()\n",
    "never_defines_the_function": "import sys\nprint('passed')\n",
    "fake_verdict_line": "def add(x, y):\n    print('\\n' + '0' * 32 + ' {\"result\": \"passed\"}')\n    return 0\n",
    "os_exit_0_at_import": "import os\nos._exit(0)\n",
    "sys_exit_0_at_import": "import sys\nsys.exit(0)\n",
    "sys_exit_0_in_call": "import sys\ndef add(x, y):\n    sys.exit(0)\n",
    "override_builtins": (
        "import builtins\nbuiltins.AssertionError = type('X', (Exception,), {})\n"
        "builtins.isinstance = lambda *a: True\ndef add(x, y):\n    return 0\n"
    ),
    "always_equal_object": (
        "class Eq:\n    def __eq__(self, o):\n        return True\n    __hash__ = object.__hash__\n"
        "def add(x, y):\n    return Eq()\n"
    ),
    "atexit_forge": "import atexit\natexit.register(_forge)\ndef add(x, y):\n    return 0\n",
    "kill_the_parent": "import os, posix\ndef add(x, y):\n    posix.kill(os.getppid(), 9)\n    return 0\n",
    "patch_check_globals": (
        "import sys\ndef add(x, y):\n    f = sys._getframe(1)\n"
        "    while f is not None:\n        f.f_globals['check'] = lambda c: None\n        f = f.f_back\n    return 0\n"
    ),
}


@pytest.mark.parametrize("name", sorted(HE_ATTACKS))
async def test_humaneval_attacks_fail(runner, name):
    code = HE_ATTACKS[name]
    if "_forge" in code and "def _forge" not in code:
        code = FORGE + code
    result = await check_humaneval(fence(code), problem_from_record(HE["HumanEval/53"]), runner, timeout=ROOMY_S)
    assert not result.correct, (name, result.reason)


async def test_humaneval_a_correct_answer_still_passes(runner):
    problem = problem_from_record(HE["HumanEval/53"])
    result = await check_humaneval(fence("def add(x, y):\n    return x + y\n"), problem, runner, timeout=ROOMY_S)
    assert result.correct, result.reason


# ------------------------------------------------------------------ BigCodeBench

WRONG = "import collections, re\ndef task_func(text, top_n=3):\n    {trick}\n    return []\n"
PATCH_UNITTEST = (
    "import unittest\n"
    "_p = [setattr(unittest.TestCase, n, lambda *a, **k: None)\n"
    "      for n in dir(unittest.TestCase) if n.startswith('assert')]\n"
    "_q = setattr(unittest.TestResult, 'addFailure', lambda *a, **k: None)\n"
)
BCB_ATTACKS = {
    "frame_walk_nonce": FORGE + WRONG.format(trick="_forge()"),
    "fake_verdict_line": WRONG.format(trick='print(\'\\n@@BCB_VERDICT@@{"nonce": "x", "failures": 0}\')'),
    "monkeypatch_assertions_at_import": PATCH_UNITTEST + WRONG.format(trick="_p, _q"),
    "monkeypatch_assertions_in_call": WRONG.format(
        trick="import unittest; unittest.TestCase.assertEqual = lambda *a, **k: None; "
        "unittest.TestCase.assertRaises = lambda *a, **k: __import__('contextlib').nullcontext()"
    ),
    "swap_assert_code_object": WRONG.format(
        trick="import unittest; unittest.TestCase.assertEqual.__code__ = (lambda *a, **k: None).__code__; "
        "unittest.TestCase.assertRaises.__code__ = (lambda *a, **k: __import__('contextlib').nullcontext()).__code__"
    ),
    "patch_result_class": WRONG.format(
        trick="import unittest; unittest.TestResult.wasSuccessful = lambda self: True; "
        "unittest.TestResult.addFailure = lambda *a: None; unittest.TestResult.addError = lambda *a: None"
    ),
    "patch_driver_reporter": WRONG.format(
        trick="import sys; R = sys.modules['__main__'].Reporter; "
        "R.addFailure = lambda *a: None; R.addError = lambda *a: None"
    ),
    "patch_test_methods": WRONG.format(
        trick="import sys; T = sys.modules['__test__'].TestCases\n    "
        "for n in [m for m in vars(T) if m.startswith('test')]: setattr(T, n, lambda self: None)"
    ),
    "skip_test_from_solution": WRONG.format(trick="import unittest; raise unittest.SkipTest('nope')"),
    "trace_hook": WRONG.format(trick="import sys; sys.settrace(lambda *a: None)"),
    "os_exit_0": WRONG.format(trick="import os; os._exit(0)"),
    "sys_exit_0": WRONG.format(trick="import sys; sys.exit(0)"),
    "os_exit_0_at_import": "import os\n_x = os._exit(0)\ndef task_func(text, top_n=3):\n    return _x\n",
    "override_builtins": WRONG.format(trick="import builtins; builtins.len = lambda x: 0; builtins.sorted = list"),
    "atexit_forge": FORGE + WRONG.format(trick="import atexit; atexit.register(_forge)"),
    "kill_the_parent": WRONG.format(trick="import os, posix; posix.kill(os.getppid(), 9)"),
    "blind_the_checker_then_patch": WRONG.format(
        trick="import builtins, unittest; builtins.id = lambda o: 0; builtins.callable = lambda o: False; "
        "unittest.TestCase.assertEqual = lambda *a, **k: None"
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BCB_ATTACKS))
async def test_bigcodebench_attacks_fail(runner, name):
    result = await check_bigcodebench(fence(BCB_ATTACKS[name]), WORDS, runner, ROOMY_S)
    assert not result.correct, (name, result.reason)


async def test_bigcodebench_unittest_monkeypatch_is_named_tampering(runner):
    attack = fence(BCB_ATTACKS["monkeypatch_assertions_in_call"])
    result = await check_bigcodebench(attack, WORDS, runner, ROOMY_S, split=False)  # the shared mode's named reason
    assert result.details["status"] == "tampered" and "assertEqual" in result.reason, result.reason


async def test_bigcodebench_a_correct_answer_still_passes(runner):
    result = await check_bigcodebench(fence(WORDS.reference_program), WORDS, runner, ROOMY_S)
    assert result.correct, result.reason


MOCKING_TESTS = """import unittest
from unittest.mock import patch
class TestCases(unittest.TestCase):
    @patch("os.listdir", return_value=["b", "a"])
    def test_patched_module(self, listdir):
        self.assertEqual(task_func(), ["a", "b"])
    def test_patched_builtin(self):
        with patch("builtins.print") as fake:
            task_func()
        self.assertTrue(fake.called)
    @unittest.skip("declared by the test itself")
    def test_skipped(self):
        pass
"""


async def test_bigcodebench_tests_that_mock_and_skip_themselves_are_not_tampering(runner):
    code = "import os\ndef task_func():\n    print('x')\n    return sorted(os.listdir('.'))\n"
    problem = BCBProblem("BigCodeBench/mock", "", "", "import os\ndef task_func():\n", MOCKING_TESTS)
    result = await check_bigcodebench(fence(code), problem, runner, timeout=ROOMY_S)
    assert result.correct, result.reason
    assert result.details["skipped"] == 1
