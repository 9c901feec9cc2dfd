"""BigCodeBench tasks using libraries whose values cross as data, run split (issue 43), through the
real bwrap sandbox. Until this change a task importing scipy, scikit-learn or a file-format module
(csv...) ran its tests in the answer's process (`OBJECT_LIBRARIES`); now their values (arrays,
frames, scipy's named-tuple results, rows) cross as plain data (scorers/bcb_values.py) and the tests
run apart from the answer.

One task per class, each with its controls (the reference passes, a wrong answer fails) and
forgeries by a wrong answer that passed with the tests in the answer's process (the shared mode,
measured by forcing it: docs/security.md) and fail now: a numpy dispatch hook deciding the test's
own `np.allclose`, the test module's expected value rebound from the answer's call, a list subclass
inheriting `mock.ANY`'s `__eq__`. scikit-learn's task runs where the sandbox's Python has it.
"""

from __future__ import annotations

import importlib.util

import pytest
from waits import ROOMY_S

from scorers.code_bcb import BCBProblem, check_bigcodebench, shared_reason

SCIPY_PROMPT = "import numpy as np\nfrom scipy import stats\ndef task_func(values):\n"
SCIPY = BCBProblem(
    "BigCodeBench/scipy", SCIPY_PROMPT, "", SCIPY_PROMPT,
    """import unittest
import numpy as np
from scipy import stats
EXPECTED = stats.zscore([1.0, 2.0, 4.0])
class TestCases(unittest.TestCase):
    def test_values(self):
        self.assertTrue(np.allclose(task_func([1, 2, 4]), EXPECTED))
""",
    libs=("numpy", "scipy"), canonical_solution="    return stats.zscore(np.asarray(values, dtype=float))\n",
)  # fmt: skip
SKLEARN_PROMPT = "import numpy as np\nfrom sklearn.preprocessing import StandardScaler\ndef task_func(values):\n"
SKLEARN = BCBProblem(
    "BigCodeBench/sklearn", SKLEARN_PROMPT, "", SKLEARN_PROMPT,
    """import unittest
import numpy as np
VALUES = np.array([1.0, 2.0, 4.0])
EXPECTED = (VALUES - VALUES.mean()) / VALUES.std()
class TestCases(unittest.TestCase):
    def test_values(self):
        self.assertTrue(np.allclose(task_func([1, 2, 4]), EXPECTED))
""",
    libs=("numpy", "sklearn"),
    canonical_solution="    return StandardScaler().fit_transform(np.asarray(values, float).reshape(-1, 1)).ravel()\n",
)  # fmt: skip
CSV_PROMPT = "import csv\ndef task_func(path):\n"
CSV = BCBProblem(
    "BigCodeBench/csv", CSV_PROMPT, "", CSV_PROMPT,
    """import unittest
import csv
import os
import tempfile
EXPECTED = [['a', 'b'], ['1', '2']]
class TestCases(unittest.TestCase):
    def setUp(self):
        self.path = os.path.join(tempfile.mkdtemp(), 'data.csv')
        with open(self.path, 'w', newline='') as f:
            csv.writer(f).writerows(EXPECTED)
    def test_rows(self):
        self.assertEqual(task_func(self.path), EXPECTED)
""",
    libs=("csv",),
    canonical_solution="    with open(path, newline='') as f:\n        return [row for row in csv.reader(f)]\n",
)  # fmt: skip
TASKS = {"scipy": SCIPY, "sklearn": SKLEARN, "csv": CSV}
WRONG = {
    "scipy": "import numpy as np\ndef task_func(values):\n    return np.asarray(values, dtype=float)\n",
    "sklearn": "import numpy as np\ndef task_func(values):\n    return np.asarray(values, dtype=float)\n",
    "csv": "def task_func(path):\n    return []\n",
}
DISPATCH = """class Liar:
    def __array_function__(self, func, types, args, kwargs):
        return True
    def __array_ufunc__(self, ufunc, method, *args, **kwargs):
        return True
def task_func(values):
    return Liar()
"""
REBIND = """import numpy as np
def task_func(values):
    globals()['EXPECTED'] = np.asarray(values, dtype=float)
    return np.asarray(values, dtype=float)
"""
ATTACKS = {
    ("scipy", "dispatch_hook_decides_the_tests_allclose"): DISPATCH,
    ("scipy", "rebinds_the_tests_expected_value"): REBIND,
    ("sklearn", "dispatch_hook_decides_the_tests_allclose"): DISPATCH,
    ("csv", "list_subclass_inheriting_a_library_wildcard"): """from unittest import mock
class Anything(type(mock.ANY), list):
    pass
def task_func(path):
    return Anything()
""",
    ("csv", "rebinds_the_tests_expected_value"): "def task_func(path):\n"
    "    globals()['EXPECTED'] = []\n    return []\n",
}


def fence(code: str) -> str:
    return f"Solution:\n```python\n{code.strip()}\n```\n"


def _available(task: str) -> None:
    if task == "sklearn" and importlib.util.find_spec("sklearn") is None:
        pytest.skip("scikit-learn is not installed in the sandbox's Python")


def test_the_library_tasks_run_apart_from_the_answer():
    assert all(shared_reason(problem) is None for problem in TASKS.values())


@pytest.mark.slow
@pytest.mark.parametrize("task", sorted(TASKS))
async def test_control_the_reference_passes(runner, task):
    _available(task)
    result = await check_bigcodebench(fence(TASKS[task].reference_program), TASKS[task], runner, ROOMY_S)
    assert result.correct and result.details["mode"] == "split", result.reason


@pytest.mark.slow
@pytest.mark.parametrize("task", sorted(TASKS))
async def test_control_the_wrong_answer_fails(runner, task):
    _available(task)
    result = await check_bigcodebench(fence(WRONG[task]), TASKS[task], runner, ROOMY_S)
    assert not result.correct and result.details["status"] in ("fail", "error"), result.reason


@pytest.mark.slow
@pytest.mark.parametrize(("task", "name"), sorted(ATTACKS))
async def test_forgery_on_a_library_task_fails(runner, task, name):
    _available(task)
    result = await check_bigcodebench(fence(ATTACKS[task, name]), TASKS[task], runner, ROOMY_S)
    assert not result.correct, (name, result.reason)
