"""BigCodeBench tasks whose tests patch what the answer calls, run split (scorers/bcb_mocks.py).

The mocks stay in the test process; the answer's process gets forwarding stand-ins. One task per
class of patching (a mock returning data, read back through its call records; nested mocks behind
a `with`; `mock_open` read line by line; a `side_effect` function of the test's own; `patch.object`
of a method of a class the tests import), each with its controls (the reference passes, a wrong
answer fails), and attacks by a wrong answer on the mocks: writing their call records (of a string
target's mock and of a `patch.object` one), replacing their assertions, reaching the test module
through a `side_effect` function, looking for them in its own process with `gc`. Each attack but the last
turns the wrong answer into a pass in the shared mode (forced: checked below); in the split mode
each fails.
"""

from __future__ import annotations

import dataclasses

import pytest
from waits import ROOMY_S

from scorers.bcb_mocks import patch_targets
from scorers.code_bcb import PATCHING_MEASURED, BCBProblem, check_bigcodebench, shared_reason


def task(name: str, prompt: str, solution: str, tests: str) -> BCBProblem:
    return BCBProblem(f"BigCodeBench/{name}", prompt, "", prompt, "import unittest\n" + tests,
                      canonical_solution=solution)  # fmt: skip


LISTING = task(
    "mock_listing",
    "import os\ndef task_func(directory):\n",
    "    return sorted(f for f in os.listdir(directory) if f.endswith('.txt'))\n",
    """from unittest.mock import patch
class TestCases(unittest.TestCase):
    @patch('os.listdir')
    def test_lists(self, mock_listdir):
        mock_listdir.return_value = ['b.txt', 'a.txt', 'c.csv']
        self.assertEqual(task_func('/data'), ['a.txt', 'b.txt'])
        mock_listdir.assert_called_once_with('/data')
    @patch('os.listdir', return_value=[])
    def test_empty(self, mock_listdir):
        self.assertEqual(task_func('/none'), [])
        self.assertEqual(mock_listdir.call_count, 1)
""",
)
FETCH = task(
    "mock_fetch",
    "import json\nimport urllib.request\ndef task_func(url):\n",
    "    with urllib.request.urlopen(url) as response:\n        return json.loads(response.read().decode())['name']\n",
    """from unittest.mock import patch, MagicMock
class TestCases(unittest.TestCase):
    @patch('urllib.request.urlopen')
    def test_name(self, mock_urlopen):
        response = MagicMock()
        response.read.return_value = b'{"name": "ada"}'
        mock_urlopen.return_value.__enter__.return_value = response
        self.assertEqual(task_func('http://x/1'), 'ada')
        mock_urlopen.assert_called_once_with('http://x/1')
        response.read.assert_called_once()
""",
)
LINES = task(
    "mock_lines",
    "def task_func(path):\n",
    "    with open(path) as f:\n        return [line.strip().upper() for line in f if line.strip()]\n",
    """from unittest.mock import patch, mock_open
class TestCases(unittest.TestCase):
    @patch('builtins.open', new_callable=mock_open, read_data='ab\\n\\ncd\\n')
    def test_lines(self, mock_file):
        self.assertEqual(task_func('/in.txt'), ['AB', 'CD'])
        mock_file.assert_called_once_with('/in.txt')
""",
)
EXISTS = task(
    "mock_exists",
    "import os\ndef task_func(paths):\n",
    "    return [p for p in paths if os.path.exists(p)]\n",
    """from unittest.mock import patch
PRESENT = {'/a', '/c'}
def present(path):
    return path in PRESENT
class TestCases(unittest.TestCase):
    @patch('os.path.exists', side_effect=present)
    def test_filter(self, mock_exists):
        self.assertEqual(task_func(['/a', '/b', '/c']), ['/a', '/c'])
        self.assertEqual(mock_exists.call_count, 3)
""",
)
DICE = task(  # patch.object of a class the test source imports: the answer's own instances use the mock
    "mock_object_dice",
    "import random\ndef task_func(n, seed=0):\n",
    "    rng = random.Random(seed)\n    return [rng.randint(1, 6) for _ in range(n)]\n",
    """import random
from unittest.mock import patch
class TestCases(unittest.TestCase):
    def test_rolls(self):
        with patch.object(random.Random, 'randint', return_value=4) as mock_randint:
            self.assertEqual(task_func(3), [4, 4, 4])
        self.assertEqual(mock_randint.call_count, 3)
        mock_randint.assert_called_with(1, 6)
""",
)
ROLLS = task(  # `__name__ + '.randint'`: the test's module, which officially is the answer's too
    "mock_module_name",
    "from random import randint\ndef task_func(n):\n",
    "    return [randint(1, 6) for _ in range(n)]\n",
    """from unittest.mock import patch
class TestCases(unittest.TestCase):
    @patch(__name__ + '.randint', return_value=4)
    def test_rolls(self, mock_randint):
        self.assertEqual(task_func(3), [4, 4, 4])
        self.assertEqual(mock_randint.call_count, 3)
""",
)
RESPONSE = task(  # a mock's value of the tests' own class: forwarded, its methods run in the test process
    "mock_own_response",
    "import json\nimport urllib.request\ndef task_func(url):\n",
    "    response = urllib.request.urlopen(url)\n"
    "    return json.loads(response.read())['name'] if response.ok else None\n",
    """from unittest.mock import patch
EXPECTED = 'ada'
class MockResponse:
    def __init__(self, body, ok=True):
        self.body, self.ok = body, ok
    def read(self):
        return self.body
class TestCases(unittest.TestCase):
    @patch('urllib.request.urlopen', return_value=MockResponse(b'{"name": "ada"}'))
    def test_name(self, mock_urlopen):
        self.assertEqual(task_func('http://x/1'), EXPECTED)
    @patch('urllib.request.urlopen', return_value=MockResponse(b'', ok=False))
    def test_failed(self, mock_urlopen):
        self.assertIsNone(task_func('http://x/2'))
""",
)
TASKS = {"listing": LISTING, "fetch": FETCH, "lines": LINES, "exists": EXISTS, "dice": DICE, "rolls": ROLLS,
         "response": RESPONSE}  # fmt: skip
WRONG = {
    "listing": "import os\ndef task_func(directory):\n    return []\n",
    "fetch": "def task_func(url):\n    return 'nobody'\n",
    "lines": "def task_func(path):\n    return []\n",
    "exists": "def task_func(paths):\n    return []\n",
    "dice": "def task_func(n, seed=0):\n    return [4] * n\n",
    "rolls": "def task_func(n):\n    return [4] * n\n",
    "response": "def task_func(url):\n    return 'nobody'\n",
}
ATTACKS = {
    # the call records written from the answer's side: the test reads them
    "writes_the_mocks_call_records": (
        LISTING,
        """import os
from unittest import mock
def task_func(directory):
    os.listdir.call_args = mock.call(directory)
    os.listdir.call_count = 1
    return ['a.txt', 'b.txt'] if directory == '/data' else []
""",
    ),
    # the test's assertion on the mock replaced by one that passes
    "replaces_the_mocks_assertion": (
        FETCH,
        """import urllib.request
def task_func(url):
    urllib.request.urlopen.assert_called_once_with = lambda *a, **k: None
    urllib.request.urlopen.return_value.__enter__.return_value.read.assert_called_once = lambda: None
    return 'ada'
""",
    ),
    # the test module reached through its side_effect function, its expected data rebound
    "reaches_the_test_module_through_side_effect": (
        EXISTS,
        """import os
def task_func(paths):
    test_globals = os.path.exists.side_effect.__globals__
    test_globals['PRESENT'].clear()
    for p in paths:
        os.path.exists(p)
    return ['/a', '/c'] if len(paths) == 3 else []
""",
    ),
    # the call records of a mock patched onto a class (patch.object) written from the answer's side
    "writes_the_patched_methods_call_records": (
        DICE,
        """import random
from unittest import mock
def task_func(n, seed=0):
    random.Random.randint.call_count = n
    random.Random.randint.call_args = mock.call(1, 6)
    return [4] * n
""",
    ),
    # the call records of a mock patched into the test's (officially the answer's) module, written there
    "writes_the_module_mocks_call_records": (
        ROLLS,
        """from random import randint
def task_func(n):
    randint.call_count = n
    return [4] * n
""",
    ),
    # the test module reached through a method of the tests' own object a mock gives, its expected value rebound
    "reaches_the_test_module_through_a_tests_object": (
        RESPONSE,
        """import urllib.request
def task_func(url):
    response = urllib.request.urlopen(url)
    try:
        response.read.__globals__['EXPECTED'] = 'nobody'
    except AttributeError:  # a stand-in's private names stay with it
        pass
    return 'nobody' if response.ok else None
""",
    ),
    # the tests' own object a mock gives, written by the answer
    "writes_the_tests_object": (
        RESPONSE,
        """import urllib.request
def task_func(url):
    response = urllib.request.urlopen(url)
    response.ok = False
    return None
""",
    ),
    # the test's mock looked for among the answer's own objects, its records written
    "finds_the_mock_with_gc": (
        LINES,
        """import gc
def task_func(path):
    for obj in gc.get_objects():
        if type(obj).__module__ == 'unittest.mock' and hasattr(type(obj), 'assert_called_once_with'):
            obj.assert_called_once_with = lambda *a, **k: None
    return ['AB', 'CD']
""",
    ),
}
FORGES_SHARED = ("writes_the_mocks_call_records", "replaces_the_mocks_assertion",
                 "reaches_the_test_module_through_side_effect", "writes_the_patched_methods_call_records",
                 "writes_the_module_mocks_call_records", "reaches_the_test_module_through_a_tests_object")  # fmt: skip
REFUSED = {  # how the split mode stops each: the mock's API refused, or a function that cannot cross as data
    "writes_the_mocks_call_records": "only the tests may do with their mock: set 'call_args'",
    "replaces_the_mocks_assertion": "an argument of type function cannot cross",
    "reaches_the_test_module_through_side_effect": "only the tests may do with their mock: get 'side_effect'",
    "writes_the_patched_methods_call_records": "only the tests may do with their mock: set 'call_count'",
    "writes_the_module_mocks_call_records": "only the tests may do with their mock: set 'call_count'",
    "writes_the_tests_object": "set 'ok' on a obj",
}

OBJECT_NOT_IMPORTED = "patch.object of what the test source does not import (the test's own objects...)"


def fence(code: str) -> str:
    return f"Solution:\n```python\n{code.strip()}\n```\n"


def test_only_measured_patching_tasks_run_apart_from_the_answer():
    """The hand-made tasks' patching is carried (their runs below force the split mode); an official
    task runs split only where its reference was measured there (`PATCHING_MEASURED`)."""
    assert all(patch_targets(problem.test)[1] is None for problem in TASKS.values())
    assert patch_targets(LINES.test) == (["builtins.open"], None)
    assert shared_reason(LISTING) == "patches the answer's modules (not measured in the split mode)"
    assert shared_reason(dataclasses.replace(LISTING, task_id=min(PATCHING_MEASURED))) is None
    assert shared_reason(RESPONSE) == "patches the answer's modules (not measured in the split mode)"
    assert shared_reason(dataclasses.replace(RESPONSE, task_id=min(PATCHING_MEASURED))) is None
    unmocked = dataclasses.replace(RESPONSE, test=RESPONSE.test.replace("patch", "skip"))
    assert shared_reason(dataclasses.replace(unmocked, task_id=min(PATCHING_MEASURED))) == (
        "passes objects of the test's own classes"
    )


@pytest.mark.parametrize(
    ("source", "why"),
    [
        ("patch.object(os, 'listdir')", OBJECT_NOT_IMPORTED),  # `os` not imported by the test source
        ("patch.multiple('os', listdir=None)", "patches objects (patch.multiple)"),
        ("patch.dict(CONFIG, {'a': 1})", "patches a dict other than os.environ"),
        ("patch(NAME)", "patches a target that is not a string constant"),
        ("patch('__main__.helper')", "patches '__main__.helper'"),
    ],
)
def test_patching_this_design_does_not_carry_stays_shared(source, why):
    test = f"from unittest.mock import patch\nwith {source}:\n    pass\n"
    assert patch_targets(test) == ([], why)
    problem = task("shared_patch", "def task_func():\n", "    return 1\n", test)
    assert shared_reason(problem) == f"patches the answer's modules ({why})"


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("import matplotlib.pyplot as plt\nwith patch.object(plt.Axes, 'hist'):", ["matplotlib.pyplot.Axes.hist"]),
        ("from os import path\n@patch.object(path, 'exists')\ndef f(m):", ["os.path.exists"]),
        ("import os.path\nwith patch.object(target=os.path, attribute='isdir'):", ["os.path.isdir"]),
        ("import os\nos = None\nwith patch.object(os, 'listdir'):", OBJECT_NOT_IMPORTED),  # rebound
        ("import os\ndef f(os):\n  with patch.object(os, 'listdir'):", OBJECT_NOT_IMPORTED),  # another binding
        ("def f():\n  import os\n  with patch.object(os, 'listdir'):", OBJECT_NOT_IMPORTED),  # not top-level
        ("import os\nclass C:\n  x = 1\nwith patch.object(C, 'x'):", OBJECT_NOT_IMPORTED),  # the test's own
        ("import os\nwith patch.object(os.path, NAME):", OBJECT_NOT_IMPORTED),
        ("import os\nwith patch.object(os.getcwd(), 'x'):", OBJECT_NOT_IMPORTED),
        ("from . import x\nwith patch.object(x, 'y'):", OBJECT_NOT_IMPORTED),
        ("import __main__\nwith patch.object(__main__, 'helper'):", "patches '__main__.helper'"),
    ],
)
def test_patch_object_is_carried_where_the_test_source_imports_its_owner(source, found):
    """`patch.object(owner, 'name')` becomes the dotted target `patch` would take, where the owner is an attribute
    chain of a name bound only by a top-level import of the test source; anything else stays shared."""
    test = f"from unittest.mock import patch\n{source}\n    pass\n"
    assert patch_targets(test) == ((found, None) if isinstance(found, list) else ([], found))


def test_a_target_in_the_tests_module_is_carried_as_the_shared_modules():
    """`patch(__name__ + '.x')` names the module the program and the tests share officially (`__test__`, in
    each process its own); a target built any other way stays shared."""
    assert patch_targets(ROLLS.test) == (["__test__.randint"], None)
    test = "from unittest.mock import patch\nwith patch(__name__ + NAME):\n    pass\n"
    assert patch_targets(test) == ([], "patches a target that is not a string constant")


def test_os_environ_and_matplotlib_patch_names_are_not_patching():
    test = "from unittest.mock import patch\nwith patch.dict('os.environ', {'A': '1'}):\n    pass\n"
    assert patch_targets(test) == ([], None)
    assert patch_targets("for patch in ax.patches:\n    patch.get_height()\n") == ([], None)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(TASKS))
async def test_control_the_reference_passes(runner, name):
    result = await check_bigcodebench(fence(TASKS[name].reference_program), TASKS[name], runner, ROOMY_S, split=True)
    assert result.correct, result.reason


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(TASKS))
async def test_control_the_wrong_answer_fails(runner, name):
    result = await check_bigcodebench(fence(WRONG[name]), TASKS[name], runner, ROOMY_S, split=True)
    assert not result.correct and result.details["status"] in ("fail", "error"), result.reason


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(ATTACKS))
async def test_attack_on_the_mocks_fails(runner, name):
    problem, code = ATTACKS[name]
    result = await check_bigcodebench(fence(code), problem, runner, ROOMY_S, split=True)
    assert not result.correct, (name, result.reason)
    if name in REFUSED:  # refused at the mock: the run fails, whatever the test would have read
        assert result.details["status"] == "crash" and REFUSED[name] in result.reason, result.reason
    else:  # no mock in the answer's process: the wrong answer's records stay unwritten
        assert result.details["status"] == "fail", result.reason


@pytest.mark.slow
@pytest.mark.parametrize("name", FORGES_SHARED)
async def test_attack_forges_a_pass_in_the_shared_mode(runner, name):
    """The attacks are real: with the mocks in the answer's process (the shared mode, forced) they pass."""
    problem, code = ATTACKS[name]
    result = await check_bigcodebench(fence(code), problem, runner, ROOMY_S, split=False)
    assert result.correct, (name, result.reason)


# ------------------------------------------------------------------ the forwarding itself, in one process


def _linked(mock_object, strict: bool = False):
    """An answer-side stand-in for `mock_object`, its uses served by a `TestSide` directly (no pipes);
    `strict`: the test side's encoder refuses what has no data form, as the split mode's does."""
    from scorers import bcb_values
    from scorers.bcb_mocks import AnswerSide, TestSide, aware

    class Strict(bcb_values.Encoder):
        def opaque(self, value):
            if isinstance(value, bcb_values.Opaque):
                return super().opaque(value)
            raise ValueError(f"{type(value).__name__} has no data form")

    tests = TestSide([])
    base = Strict if strict else bcb_values.Encoder
    encoder, decoder = aware(base, bcb_values.Decoder, tests.handle_of, lambda n: tests.objects[n][1])
    replies = []

    def write(message):
        replies.append(tests.serve(message, encoder(), decoder()))

    answer = AnswerSide(bcb_values, write, replies.pop)
    return answer.stand_in(tests.handle_of(mock_object))


def test_a_stand_in_forwards_with_iteration_and_nested_mocks():
    from unittest.mock import MagicMock, mock_open

    opened = mock_open(read_data="ab\ncd\n")
    stand_in = _linked(opened)
    with stand_in("/in.txt") as f:
        assert [line for line in f] == ["ab\n", "cd\n"]
    opened.assert_called_once_with("/in.txt")
    response = MagicMock()
    response.get.return_value.json.return_value = {"a": [1, 2]}
    response.get.return_value.status_code = 200
    got = _linked(response).get("http://x")
    assert (got.status_code, got.json(), bool(got), hash(got) == hash(got)) == (200, {"a": [1, 2]}, True, True)
    assert type(got**2).__name__ == type(2 - got).__name__ == "StandIn"  # a mock's arithmetic gives mocks
    got.encoding = "utf-8"
    got.__signature__ = None  # private names stay with the stand-in (pyplot sets one on `show`)
    assert response.get.return_value.encoding == "utf-8" and got.__signature__ is None
    response.get.assert_called_once_with("http://x")


def test_a_mocks_value_with_no_data_form_is_forwarded_read_only():
    """An object of the tests' own class or a function of theirs that a mock gives: its attributes read and
    methods called in the test process, its attributes never set; another library object, a builtin
    function or a module never crosses."""
    import os
    import zipfile
    from unittest.mock import MagicMock

    from scorers.bcb_mocks import Refused

    tests: dict = {"__name__": "__test__"}  # the test module's name in the split mode
    exec("class Reply:\n    status = 200\n    def text(self):\n        return 'ok'\nrows = lambda: [1]\n", tests)  # noqa: S102
    response = MagicMock()
    response.get.return_value = MagicMock(json=tests["rows"], raw=tests["Reply"](), info=zipfile.ZipInfo("a"))
    got = _linked(response, strict=True).get("http://x")
    assert (got.json(), got.raw.status, got.raw.text()) == ([1], 200, "ok")
    with pytest.raises(Refused, match="set 'status' on a obj"):
        got.raw.status = 500
    for name, value in (("info", None), ("module", os), ("cwd", os.getcwd)):
        if value is not None:
            setattr(response.get.return_value, name, value)
        with pytest.raises(ValueError, match="has no data form"):
            getattr(got, name)


@pytest.mark.parametrize(
    "use",
    [lambda s: s.call_args, lambda s: s.mock_calls, lambda s: s.side_effect, lambda s: s.reset_mock(),
     lambda s: setattr(s, "called", True), lambda s: setattr(s, "child", s.other)],
)  # fmt: skip
def test_a_stand_in_cannot_reach_the_mocks_records(use):
    from unittest.mock import MagicMock

    from scorers.bcb_mocks import Refused

    stand_in = _linked(MagicMock())
    with pytest.raises(Refused):
        use(stand_in)
