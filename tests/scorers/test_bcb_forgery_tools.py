"""BigCodeBench tasks using tool libraries (sqlite3, io, zipfile...) run split (issue 43), through the
real bwrap sandbox. Until this change any task importing one of them ran its tests in the answer's
process (`OBJECT_LIBRARIES`); now such a task runs apart from the answer unless its sources show one
of the library's objects crossing the call (scorers/bcb_library_flow.py), and `io`'s in-memory
buffers cross as data, written back into the test's own buffer (scorers/bcb_values.py).

One task per class, each with its controls (the reference passes in the split mode and in the shared
mode, a wrong answer fails in both) and forgeries by a wrong answer: each passes in the shared mode
(forced: the residual of the tasks that stay there, docs/security.md) and fails in the split mode,
the mode these tasks now get.
"""

from __future__ import annotations

import pytest
from waits import ROOMY_S

from scorers.code_bcb import BCBProblem, check_bigcodebench, shared_reason


def task(name: str, prompt: str, tests: str, solution: str, libs: tuple[str, ...]) -> BCBProblem:
    return BCBProblem(f"BigCodeBench/{name}", prompt, "", prompt, "import unittest\n" + tests,
                      canonical_solution=solution, libs=libs)  # fmt: skip


SQLITE = task(
    "sqlite3",
    "import sqlite3\ndef task_func(db_path, table):\n",
    """import os
import sqlite3
import tempfile
EXPECTED = [(1, 'a'), (2, 'b')]
class TestCases(unittest.TestCase):
    def setUp(self):
        self.path = os.path.join(tempfile.mkdtemp(), 'items.db')
        with sqlite3.connect(self.path) as conn:
            conn.execute('CREATE TABLE items (id INTEGER, name TEXT)')
            conn.executemany('INSERT INTO items VALUES (?, ?)', EXPECTED)
    def test_rows(self):
        self.assertEqual(task_func(self.path, 'items'), EXPECTED)
    def test_missing_table(self):
        with self.assertRaises(sqlite3.OperationalError):
            task_func(self.path, 'nothing')
""",
    "    with sqlite3.connect(db_path) as conn:\n"
    "        return [tuple(r) for r in conn.execute(f'SELECT * FROM {table} ORDER BY id')]\n",
    ("sqlite3",),
)
BUFFERS = task(
    "io",
    "import io\nimport json\ndef task_func(source, out):\n",
    """import io
EXPECTED_TEXT = 'a\\nb\\n'
class TestCases(unittest.TestCase):
    def test_keys(self):
        source, out = io.BytesIO(b'{"b": 1, "a": 2}'), io.StringIO()
        self.assertEqual(task_func(source, out), 2)
        self.assertEqual(out.getvalue(), EXPECTED_TEXT)
        self.assertEqual(source.read(), b'')
""",
    "    keys = sorted(json.load(source))\n    out.write(''.join(k + '\\n' for k in keys))\n    return len(keys)\n",
    ("io", "json"),
)
ARCHIVE = task(
    "zipfile",
    "import os\nimport zipfile\ndef task_func(folder):\n",
    """import os
import tempfile
import zipfile
EXPECTED = ['x.txt', 'y.txt']
class TestCases(unittest.TestCase):
    def test_members(self):
        folder = tempfile.mkdtemp()
        for name in EXPECTED:
            with open(os.path.join(folder, name), 'w') as f:
                f.write(name)
        with zipfile.ZipFile(task_func(folder)) as archive:
            self.assertEqual(sorted(archive.namelist()), EXPECTED)
""",
    "    path = folder.rstrip('/') + '.zip'\n"
    "    with zipfile.ZipFile(path, 'w') as archive:\n"
    "        for name in sorted(os.listdir(folder)):\n"
    "            archive.write(os.path.join(folder, name), name)\n"
    "    return path\n",
    ("os", "zipfile"),
)
TASKS = {"sqlite3": SQLITE, "io": BUFFERS, "zipfile": ARCHIVE}
EMPTY_ARCHIVE = """import zipfile
def task_func(folder):
    path = folder.rstrip('/') + '.zip'
    zipfile.ZipFile(path, 'w').close()
    return path
"""
WRONG = {
    "sqlite3": "def task_func(db_path, table):\n"
    "    if table == 'nothing':\n        raise ValueError(table)\n    return []\n",
    "io": "def task_func(source, out):\n    return 2\n",
    "zipfile": EMPTY_ARCHIVE,
}
ATTACKS = {
    ("sqlite3", "rebinds_the_tests_expected_value"): "import sqlite3\ndef task_func(db_path, table):\n"
    "    globals()['EXPECTED'] = []\n"
    "    if table == 'nothing':\n        raise sqlite3.OperationalError(table)\n    return []\n",
    ("sqlite3", "list_subclass_inheriting_a_library_wildcard"): """import sqlite3
from unittest import mock
class Anything(type(mock.ANY), list):
    pass
def task_func(db_path, table):
    if table == 'nothing':
        raise sqlite3.OperationalError(table)
    return Anything()
""",
    ("io", "rebinds_the_tests_expected_value"): "def task_func(source, out):\n"
    "    globals()['EXPECTED_TEXT'] = ''\n    source.read()\n    return 2\n",
    ("zipfile", "rebinds_the_tests_expected_value"): EMPTY_ARCHIVE.replace(
        "    return path", "    globals()['EXPECTED'] = []\n    return path"
    ),
}


def fence(code: str) -> str:
    return f"Solution:\n```python\n{code.strip()}\n```\n"


def test_the_tool_library_tasks_run_apart_from_the_answer():
    assert all(shared_reason(problem) is None for problem in TASKS.values())


@pytest.mark.slow
@pytest.mark.parametrize("split", [True, False], ids=["split", "shared"])
@pytest.mark.parametrize("name", sorted(TASKS))
async def test_control_the_reference_passes(runner, name, split):
    result = await check_bigcodebench(fence(TASKS[name].reference_program), TASKS[name], runner, ROOMY_S, split=split)
    assert result.correct, result.reason


@pytest.mark.slow
@pytest.mark.parametrize("split", [True, False], ids=["split", "shared"])
@pytest.mark.parametrize("name", sorted(TASKS))
async def test_control_the_wrong_answer_fails(runner, name, split):
    result = await check_bigcodebench(fence(WRONG[name]), TASKS[name], runner, ROOMY_S, split=split)
    assert not result.correct and result.details["status"] in ("fail", "error"), result.reason


@pytest.mark.slow
@pytest.mark.parametrize(("name", "attack"), sorted(ATTACKS))
async def test_forgery_passes_in_the_shared_mode_and_fails_split(runner, name, attack):
    """The shared mode's residual, measured: if this ever fails because the shared mode caught the
    forgery, docs/security.md's residual list is out of date, not the split mode."""
    problem, code = TASKS[name], fence(ATTACKS[name, attack])
    shared = await check_bigcodebench(code, problem, runner, ROOMY_S, split=False)
    split = await check_bigcodebench(code, problem, runner, ROOMY_S)
    assert shared.correct, ("the shared mode caught it", shared.reason)
    assert not split.correct and split.details["mode"] == "split", split.reason
