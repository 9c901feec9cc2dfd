"""BigCodeBench verdict forgeries, fourth round (issue 43), run through the real bwrap sandbox.

One class per test, each on a task whose tests run apart from the answer (the split mode,
scorers/bcb_split.py), with its controls: the reference passes, a wrong answer fails, and
the wrong answer with the trick fails too. On main 068bd0d, where the tests ran in the
answer's process, every trick below turned the wrong answer into a pass:

1. the tests' own code and constants: rebinding a helper or an expected value of the test
   module, or reading the expected values from the test file;
2. a library dispatch hook deciding a comparison the test makes itself (numpy's
   `__array_function__` / `__array_ufunc__`);
3. a list subclass inheriting a library wildcard's `__eq__` (`mock.ANY`'s class);
4. a module the tests import only inside a test method, planted in `sys.modules` first;
5. a signal handler's frame, walked to the test driver's report function.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_bcb_forgery_screen import FORGED_RUN
from waits import ROOMY_S

from scorers.code_bcb import BCBProblem, check_bigcodebench, shared_reason

FIXTURES = Path(__file__).parents[1] / "fixtures"
RECORDS = {r["task_id"]: r for r in map(json.loads, (FIXTURES / "bcb_sample.jsonl").read_text().splitlines())}
WORDS = BCBProblem.from_record(RECORDS["BigCodeBench/9000"])  # task_func(text, top_n) -> [(word, count)]


def squares(task: str, tests: str) -> BCBProblem:
    """A task (task_func(n) -> the first n squares) with these tests."""
    prompt = "import numpy as np\ndef task_func(n):\n"
    return BCBProblem(f"BigCodeBench/{task}", prompt, "", prompt, "import unittest\nimport numpy as np\n" + tests,
                      canonical_solution="    return [i * i for i in range(n)]\n")  # fmt: skip


OWN_NAMES = squares(
    "own_names",
    """EXPECTED = {3: [0, 1, 4], 1: [0]}
def same(got, want):
    return list(got) == want
class TestCases(unittest.TestCase):
    def test_constant(self):
        self.assertEqual(task_func(3), EXPECTED[3])
    def test_helper(self):
        self.assertTrue(same(task_func(1), [0]))
""",
)
DISPATCH = squares(
    "dispatch",
    """class TestCases(unittest.TestCase):
    def test_allclose(self):
        self.assertTrue(np.allclose(task_func(3), [0, 1, 4]))
    def test_equal(self):
        self.assertTrue(np.all(np.equal(task_func(3), [0, 1, 4])))
""",
)
LATE_IMPORT = squares(
    "late_import",
    """class TestCases(unittest.TestCase):
    def test_sum(self):
        got = sum(task_func(3))
        import statistics
        self.assertEqual(got, statistics.mean([3, 6]) + 0.5)
""",
)
WRONG_SQUARES = "def task_func(n):\n    return [0] * n\n"
WRONG_WORDS = "def task_func(text, top_n=3):\n    if top_n <= 0:\n        raise ValueError(top_n)\n    return []\n"

SQUARES_ATTACKS = {
    # 1. the test module's own names, rebound from the answer's call
    "rebinds_the_tests_expected_value_and_helper": (
        OWN_NAMES,
        """def task_func(n):
    globals()['EXPECTED'] = {3: [0] * 3, 1: [0]}
    globals()['same'] = lambda got, want: True
    return [0] * n
""",
    ),
    "reads_the_expected_values_from_the_test_file": (
        OWN_NAMES,
        """import ast, os, sys
def task_func(n):
    here = os.path.dirname(os.path.abspath(sys.argv[0]))
    tree = ast.parse(open(os.path.join(here, 'bcb_tests.py')).read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], 'id', '') == 'EXPECTED':
            return ast.literal_eval(node.value)[n]
""",
    ),
    # 2. comparisons the test makes itself, decided by numpy's dispatch to the answer's class
    "numpy_array_function_and_array_ufunc": (
        DISPATCH,
        """class Liar:
    def __array_function__(self, func, types, args, kwargs):
        return True
    def __array_ufunc__(self, ufunc, method, *args, **kwargs):
        return True
def task_func(n):
    return Liar()
""",
    ),
    # 4. a module the tests import inside a test method
    "plants_a_module_the_tests_import_later": (
        LATE_IMPORT,
        """import sys, types
def task_func(n):
    fake = types.ModuleType('statistics')
    fake.mean = lambda values: -0.5
    sys.modules['statistics'] = fake
    return [0] * n
""",
    ),
}

WORDS_ATTACKS = {
    # 3. a list subclass whose __eq__ is mock.ANY's (a library function): walked as a list, never probed
    "list_subclass_inheriting_a_library_wildcard": """from unittest import mock
class Anything(type(mock.ANY), list):
    pass
def task_func(text, top_n=3):
    if top_n <= 0:
        raise ValueError(top_n)
    return Anything()
""",
    # 5. the frame handed to a signal handler, walked up to the driver's report function
    "signal_handler_frame_to_the_report_function": """import os, signal, sys
def _send():
    box = []
    signal.signal(signal.SIGUSR1, lambda signum, frame: box.append(frame))
    signal.raise_signal(signal.SIGUSR1)
    frame = box[0]
    while frame is not None:
        local = frame.f_locals
        if callable(local.get('send')) and 'check' in local:
            return local['send']
        frame = frame.f_back
"""
    + FORGED_RUN,
}


def fence(code: str) -> str:
    return f"Solution:\n```python\n{code.strip()}\n```\n"


TASKS = {"own_names": OWN_NAMES, "dispatch": DISPATCH, "late_import": LATE_IMPORT, "words": WORDS}
WRONG = {**dict.fromkeys(("own_names", "dispatch", "late_import"), WRONG_SQUARES), "words": WRONG_WORDS}


def test_the_tasks_run_apart_from_the_answer():
    assert all(shared_reason(problem) is None for problem in TASKS.values())


@pytest.mark.slow
@pytest.mark.parametrize("task", sorted(TASKS))
async def test_control_the_reference_passes(runner, task):
    result = await check_bigcodebench(fence(TASKS[task].reference_program), TASKS[task], runner, ROOMY_S)
    assert result.correct, result.reason


@pytest.mark.slow
@pytest.mark.parametrize("task", sorted(TASKS))
async def test_control_the_wrong_answer_fails(runner, task):
    result = await check_bigcodebench(fence(WRONG[task]), TASKS[task], runner, ROOMY_S)
    assert not result.correct and result.details["status"] in ("fail", "error"), result.reason


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SQUARES_ATTACKS))
async def test_round4_attack_on_the_tests_fails(runner, name):
    problem, code = SQUARES_ATTACKS[name]
    result = await check_bigcodebench(fence(code), problem, runner, ROOMY_S)
    assert not result.correct, (name, result.reason)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(WORDS_ATTACKS))
async def test_round4_attack_on_the_words_task_fails(runner, name):
    result = await check_bigcodebench(fence(WORDS_ATTACKS[name]), WORDS, runner, ROOMY_S)
    assert not result.correct, (name, result.reason)


# ------------------------------------------------------------------ the split mode's own surfaces

SURFACE = squares(
    "surface",
    """class TestCases(unittest.TestCase):
    def test_invalid(self):
        with self.assertRaises(BaseException):
            task_func(-1)
    def test_values(self):
        self.assertEqual(task_func(3), [0, 1, 4])
""",
)
_TEST_PROCESS = """import os, signal
def _test_process():
    for pid in filter(str.isdigit, os.listdir('/proc')):
        try:
            stat = open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()
        except OSError:
            continue
        if int(stat[1]) == os.getppid() and int(pid) != os.getpid():
            return int(pid)
"""
SURFACE_ATTACKS = {
    # an exit instead of the exception the test expects: a dead answer fails the run
    "exits_where_the_test_expects_an_exception": (
        "crash",
        "import os\ndef task_func(n):\n    if n < 0:\n        os._exit(0)\n    return [i * i for i in range(n)]\n",
    ),
    # bytes of its own on the reply pipe: an unreadable reply fails the run
    "garbage_on_the_reply_pipe": (
        "crash",
        "import os, stat\ndef task_func(n):\n    for fd in range(3, 64):\n        try:\n"
        "            if stat.S_ISFIFO(os.fstat(fd).st_mode):\n                os.write(fd, b'{not json\\n')\n"
        "        except OSError:\n            pass\n    return [i * i for i in range(n)]\n",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SURFACE_ATTACKS))
async def test_split_mode_surface_attack_fails(runner, name):
    status, code = SURFACE_ATTACKS[name]
    result = await check_bigcodebench(fence(code), SURFACE, runner, ROOMY_S)
    assert not result.correct and result.details["status"] == status, (name, result.reason)


@pytest.mark.slow
async def test_the_test_process_cannot_be_read_or_steered_by_signals(runner):
    """A correct answer that tries to read the test process's memory and sends it every catchable
    signal while it waits in `assertRaises` still passes: the reads are refused, the signals do nothing."""
    code = (
        _TEST_PROCESS
        + """def task_func(n):
    pid = _test_process()
    try:
        open(f'/proc/{pid}/mem', 'rb').close()
        return 'read the test process'
    except OSError:
        pass
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM, signal.SIGUSR1, signal.SIGHUP, signal.SIGQUIT):
        __import__('posix').kill(pid, sig)  # os.kill is the official harness's guarded one
    if n < 0:
        raise ValueError(n)
    return [i * i for i in range(n)]
"""
    )
    result = await check_bigcodebench(fence(code), SURFACE, runner, ROOMY_S)
    assert result.correct, result.reason


@pytest.mark.slow
async def test_an_argument_that_cannot_cross_fails_the_run_whatever_the_test_catches(runner):
    """Such a task belongs in the shared mode: the run says so rather than let a test's
    `assertRaises(Exception)` take the refusal for the answer's own exception."""
    problem = squares(
        "callable_argument",
        """class TestCases(unittest.TestCase):
    def test_bad_argument(self):
        with self.assertRaises(Exception):
            task_func(lambda: 3)
""",
    )
    result = await check_bigcodebench(fence(problem.reference_program), problem, runner, ROOMY_S, split=True)
    assert not result.correct and result.details["status"] == "crash", result.reason
    assert "shared mode" in result.reason
