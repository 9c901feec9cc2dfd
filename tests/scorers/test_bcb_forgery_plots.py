"""BigCodeBench tasks whose tests read the answer's plots, run split (issue 43), through the real
bwrap sandbox: the answer's figures reach the tests as matplotlib objects the test process
builds itself from a restricted pickle (scorers/bcb_figures.py).

Controls: the reference passes (its figures read back through the returned axes and pyplot's
current figure, with the figures the tests close closed in the answer's process), a wrong
answer fails. Forgeries, each with a wrong answer: an Axes subclass of the answer's own whose
methods report the expected title and bar heights (it passes where the tests share the
answer's process, as on main 068bd0d for every plot task), and figures replaced by pickles that
smuggle a call (`exec` rebinding unittest's assertion, `os.system`): refused, never run, the
run a crash.
"""

from __future__ import annotations

import pytest
from waits import ROOMY_S

from scorers.code_bcb import BCBProblem, check_bigcodebench, shared_reason

PROMPT = "import matplotlib.pyplot as plt\ndef task_func(values):\n"
TESTS = """import unittest
import matplotlib.pyplot as plt
class TestCases(unittest.TestCase):
    def setUp(self):
        plt.close("all")
    def test_current_figure(self):
        task_func([4])
        self.assertEqual(plt.gca().get_title(), "Values")
        self.assertEqual(len(plt.gcf().axes[0].patches), 1)
    def test_heights(self):
        ax = task_func([1, 2, 3])
        self.assertEqual([p.get_height() for p in ax.patches], [1, 2, 3])
    def test_title(self):
        self.assertEqual(task_func([5]).get_title(), "Values")
"""
PLOT = BCBProblem("BigCodeBench/plots", PROMPT, "", PROMPT, TESTS, libs=("matplotlib",),
                  canonical_solution="    plt.bar(range(len(values)), values)\n    plt.title('Values')\n"
                                     "    return plt.gca()\n")  # fmt: skip
WRONG = PROMPT + "    plt.bar(range(len(values)), values[::-1])\n    plt.title('Wrong')\n    return plt.gca()\n"
SUBCLASS = """import matplotlib.pyplot as plt
from matplotlib.axes import Axes
class Rect:
    def __init__(self, height):
        self.height = height
    def get_height(self):
        return self.height
class Forged(Axes):
    want = []
    def get_title(self, loc='center'):
        return 'Values'
    @property
    def patches(self):
        return [Rect(h) for h in self.want]
def task_func(values):
    Forged.want = list(values)
    ax = plt.figure().add_subplot(axes_class=Forged)
    ax.bar(range(len(values)), values[::-1])
    ax.set_title('Wrong')
    return ax
"""
SMUGGLE = """import builtins, os, pickle
class Smuggle:
    def __reduce__(self):
        return CALL
def task_func(values, _dumps=pickle.dumps):
    pickle.dumps = lambda objects, *args, **kwargs: _dumps([Smuggle()] * len(objects), *args, **kwargs)
    plt.bar(range(len(values)), values[::-1])
    plt.title('Wrong')
    return plt.gca()
"""
SMUGGLED = {  # each call, were it run in the test process, would not fail the wrong answer
    "exec_rebinding_the_assertion": "(builtins.exec, ('import unittest; unittest.TestCase.assertEqual = print',))",
    "os_system": "(__import__('posix').system, ('true',))",  # os.system is the harness's guarded one
}


def fence(code: str) -> str:
    return f"```python\n{code.strip()}\n```\n"


def test_the_plot_task_runs_apart_from_the_answer():
    assert shared_reason(PLOT) is None


async def test_control_the_reference_passes(runner):
    result = await check_bigcodebench(fence(PLOT.reference_program), PLOT, runner, ROOMY_S)
    assert result.correct, result.reason
    assert result.details["mode"] == "split"


async def test_control_the_wrong_answer_fails(runner):
    result = await check_bigcodebench(fence(WRONG), PLOT, runner, ROOMY_S)
    assert not result.correct and result.details["status"] == "fail", result.reason


async def test_an_axes_subclass_of_the_answers_own_does_not_cross(runner):
    result = await check_bigcodebench(fence(SUBCLASS), PLOT, runner, ROOMY_S)
    assert not result.correct and result.details["status"] == "crash", result.reason
    assert "refused" in result.reason and "__test__" in result.reason


@pytest.mark.parametrize("name", sorted(SMUGGLED))
async def test_a_smuggled_call_in_the_figures_is_refused(runner, name):
    code = PROMPT.splitlines()[0] + "\n" + SMUGGLE.replace("CALL", SMUGGLED[name])
    result = await check_bigcodebench(fence(code), PLOT, runner, ROOMY_S)
    assert not result.correct and result.details["status"] == "crash", result.reason
    assert "refused" in result.reason
