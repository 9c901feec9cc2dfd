"""BigCodeBench tasks whose tests use a class of scikit-learn or scipy (`isinstance(model,
LinearRegression)`, a Voronoi diagram's ridges) run split where their references were measured there
(issue 43, `CLASS_MEASURED`), through the real bwrap sandbox: the answer's object crosses as its
library class and instance state, rebuilt by the test process without running the object's code
(scorers/bcb_values.py, `STATE_CLASSES`).

One task per class, each with its controls (the reference passes in the split mode and in the shared
mode, a wrong answer fails in both) and forgeries by a wrong answer: each passes in the shared mode
(forced: the residual of the tasks that stay there, docs/security.md) and fails in the split mode.
A task runs where the test's Python has its library (scikit-learn: from a venv whose `.pth` adds this
machine's packages; the site directories it adds are mounted in the sandbox too).
"""

from __future__ import annotations

import dataclasses

from library_forgeries import battery, library_runner  # noqa: F401 (a fixture of the battery)

from scorers.code_bcb import CLASS_MEASURED, BCBProblem, shared_reason


def task(name: str, prompt: str, tests: str, solution: str, libs: tuple[str, ...]) -> BCBProblem:
    return BCBProblem(f"BigCodeBench/{name}", prompt, "", prompt, "import unittest\n" + tests,
                      canonical_solution=solution, libs=libs)  # fmt: skip


SKLEARN = task(
    "sklearn",
    "import numpy as np\nfrom sklearn.linear_model import LinearRegression\ndef task_func(x, y):\n",
    """import numpy as np
from sklearn.linear_model import LinearRegression
X = np.arange(6.0).reshape(-1, 1)
EXPECTED, PREDICTED = [2.0], [21.0]
class TestCases(unittest.TestCase):
    def test_model(self):
        model = task_func(X, 1.0 + 2.0 * X[:, 0])
        self.assertTrue(isinstance(model, LinearRegression))
        self.assertTrue(np.allclose(model.coef_, EXPECTED))
        self.assertTrue(np.allclose(model.predict(np.array([[10.0]])), PREDICTED))
""",
    "    return LinearRegression().fit(x, y)\n",
    ("numpy", "sklearn"),
)
SCIPY = task(
    "scipy",
    "import numpy as np\nfrom scipy.spatial import Voronoi\ndef task_func(points):\n",
    """import numpy as np
from scipy.spatial import Voronoi
POINTS = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.5, 0.4]])
EXPECTED = Voronoi(POINTS).ridge_points
class TestCases(unittest.TestCase):
    def test_diagram(self):
        diagram = task_func(POINTS)
        self.assertTrue(isinstance(diagram, Voronoi))
        self.assertTrue(np.array_equal(diagram.ridge_points, EXPECTED))
""",
    "    return Voronoi(points)\n",
    ("numpy", "scipy"),
)
TASKS = {"sklearn": SKLEARN, "scipy": SCIPY}
WRONG = {
    "sklearn": "from sklearn.linear_model import LinearRegression\n"
    "def task_func(x, y):\n    return LinearRegression().fit(x, y * 0)\n",
    "scipy": "from scipy.spatial import Voronoi\ndef task_func(points):\n    return Voronoi(points[::-1])\n",
}
ATTACKS = {
    ("sklearn", "subclass_reports_the_expected_model"): """import numpy as np
from sklearn.linear_model import LinearRegression
class Fitted(LinearRegression):
    coef_ = property(lambda self: np.array([2.0]))
    def predict(self, x):
        return 1.0 + 2.0 * np.asarray(x)[:, 0]
def task_func(x, y):
    return Fitted()
""",
    ("sklearn", "instance_attribute_shadows_a_method"): """import numpy as np
from sklearn.linear_model import LinearRegression
def task_func(x, y):
    model = LinearRegression().fit(x, y * 0)
    model.coef_ = np.array([2.0])
    model.predict = lambda x: 1.0 + 2.0 * np.asarray(x)[:, 0]
    return model
""",
    ("sklearn", "rebinds_the_tests_expected_value"): """from sklearn.linear_model import LinearRegression
def task_func(x, y):
    globals().update(EXPECTED=[0.0], PREDICTED=[0.0])
    return LinearRegression().fit(x, y * 0)
""",
    ("scipy", "subclass_reports_the_expected_ridges"): """import numpy as np
from scipy.spatial import Voronoi
class Diagram(Voronoi):
    def __getattribute__(self, name):
        if name == 'ridge_points':
            return Voronoi(np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.5, 0.4]])).ridge_points
        return super().__getattribute__(name)
def task_func(points):
    return Diagram(points[::-1])
""",
    ("scipy", "rebinds_the_tests_expected_value"): """from scipy.spatial import Voronoi
def task_func(points):
    diagram = Voronoi(points[::-1])
    globals()['EXPECTED'] = diagram.ridge_points
    return diagram
""",
}


def test_only_measured_library_class_tasks_run_apart_from_the_answer():
    """Read from the task only, no library needed: a task whose tests use a library class stays shared
    unless its id was measured; a measured id runs split, and the other reasons still apply to it."""
    classes = {"sklearn": "sklearn.linear_model.LinearRegression", "scipy": "scipy.spatial.Voronoi"}
    for name, problem in TASKS.items():
        assert shared_reason(problem).startswith(f"the tests use library classes ({classes[name]}")
        measured = dataclasses.replace(problem, task_id="BigCodeBench/106")
        assert "BigCodeBench/106" in CLASS_MEASURED and shared_reason(measured) is None
    patched = dataclasses.replace(measured, test=measured.test + "from unittest import mock\n")
    assert shared_reason(patched) == "patches the answer's modules (not measured in the split mode)"


(
    test_control_the_reference_passes,
    test_control_the_wrong_answer_fails,
    test_forgery_passes_in_the_shared_mode_and_fails_split,
) = battery(TASKS, WRONG, ATTACKS)
