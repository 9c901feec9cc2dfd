"""The plain data BigCodeBench values cross as between the split mode's processes
(scorers/bcb_values.py), and the per-task choice of mode (`shared_reason`). Pure: no sandbox."""

from __future__ import annotations

import collections
import datetime
import decimal
import io
import json
import pathlib
import zoneinfo
from unittest import mock

import numpy as np
import pandas as pd
import pytest

from scorers.bcb_split import top_imports
from scorers.bcb_values import Decoder, Encoder, Opaque, decode, encode
from scorers.code_bcb import BCBProblem, shared_reason


def trip(value):
    return decode(json.loads(json.dumps(encode(value))))


FRAME = pd.DataFrame(
    {"n": [1, 2], "s": ["x", None], "when": pd.to_datetime(["2024-01-01", "2024-01-02"]),
     "cat": pd.Categorical(["u", "v"]), "opt": pd.array([1, None], dtype="Int64"),
     "zoned": pd.to_datetime(["2024-01-01", None]).tz_localize("US/Eastern"), "f": [1.5, np.nan]},
    index=pd.Index(["r1", "r2"], name="row"),
)  # fmt: skip


@pytest.mark.parametrize(
    "value",
    [
        [1, 2.5, "s", None, True, b"x", (1, [2, {3: 4}]), {1, 2}, frozenset([3]), 1 + 2j],
        collections.Counter("aab"),
        collections.OrderedDict(a=1),
        collections.defaultdict(list, a=[1]),
        collections.deque([1, 2], 5),
        datetime.datetime(2024, 7, 2, 3, tzinfo=zoneinfo.ZoneInfo("Europe/Paris")),
        datetime.timedelta(3, 4, 5),
        decimal.Decimal("1.10"),
        pathlib.PurePosixPath("/a/b"),
        np.float64(2.5),
        np.int32(3),
        pd.Timestamp("2024-01-01 10:00", tz="UTC"),
        __import__("http").HTTPStatus.OK,
        __import__("array").array("i", [3, 1]),
        __import__("ipaddress").ip_network("10.0.0.0/8"),
        __import__("time").gmtime(0),
        __import__("types").SimpleNamespace(a=1, b=[2]),
    ],
)
def test_values_come_back_equal_and_of_the_same_type(value):
    back = trip(value)
    assert back == value and type(back) is type(value)


def test_arrays_and_frames_come_back_with_their_dtypes():
    array = np.arange(6, dtype=np.int16).reshape(2, 3)
    back = trip(array)
    assert back.dtype == array.dtype and np.array_equal(back, array)
    frame = trip(FRAME)
    pd.testing.assert_frame_equal(frame, FRAME)
    series = pd.Series([1, 2], name="n", index=pd.MultiIndex.from_tuples([(1, "a"), (2, "b")], names=["i", "j"]))
    pd.testing.assert_series_equal(trip(series), series)


def test_numpy_and_math_nan_keep_their_identity():
    """`[np.nan] == [np.nan]` holds by identity (the tests of BigCodeBench/871 rely on it)."""
    import math

    assert trip([np.nan, math.nan])[0] is np.nan and trip(math.nan) is math.nan
    assert trip(float("nan")) is not np.nan


def test_exceptions_come_back_as_the_receivers_classes():
    error = trip(FileNotFoundError(2, "No such file", "x.csv"))
    assert type(error) is FileNotFoundError and error.filename == "x.csv" and "x.csv" in str(error)
    assert trip(ModuleNotFoundError("no", name="leftpad")).name == "leftpad"


class _ListEqual(list):
    """Equal to any list, and answering numpy's dispatch itself."""

    def __eq__(self, other):
        return True

    __hash__ = None

    def __array_function__(self, *args, **kwargs):
        return True


def test_what_decides_a_comparison_does_not_cross():
    """A subclass arrives as its base type, an unknown object as an opaque stand-in, a library
    wildcard as what it is made of: the receiver compares with its own code."""
    back = trip(_ListEqual([1]))
    assert type(back) is list and back != [2]
    assert trip(type("Anything", (type(mock.ANY), list), {})()) == []
    stand_in = trip(mock.ANY)
    assert isinstance(stand_in, Opaque) and stand_in != [] and [stand_in] != [[]]
    assert isinstance(trip(object()), Opaque)


class _Frame(pd.DataFrame):
    def equals(self, other):
        return True


class _Array(np.ndarray):
    def __array_ufunc__(self, *args, **kwargs):
        return True


def test_library_values_cross_as_data_and_their_subclasses_do_not():
    """A library type's subclass (the answer's own `equals` or dispatch hook) arrives as an opaque
    stand-in; scipy's result types arrive as named tuples of their fields, built by the receiver."""
    stats = pytest.importorskip("scipy.stats")
    for value in (_Frame({"a": [1]}), np.arange(3).view(_Array), type("Rows", (pd.Series,), {})([1])):
        assert isinstance(trip(value), Opaque)
    result = trip(stats.ttest_ind([1, 2, 3, 4], [2, 3, 4, 9]))
    assert type(result).__module__ == "scorers.bcb_values" and result._fields == ("statistic", "pvalue")
    assert np.isclose(result.pvalue, stats.ttest_ind([1, 2, 3, 4], [2, 3, 4, 9]).pvalue)


POINTS = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.5, 0.5]])


def test_library_objects_cross_as_their_class_and_state():
    """A scipy Voronoi diagram (a scikit-learn estimator where installed) arrives as the receiver's own
    class, its state data; a subclass of the sender's arrives as its library class, its methods lost."""
    spatial = pytest.importorskip("scipy.spatial")
    diagram = spatial.Voronoi(POINTS)

    class Lying(spatial.Voronoi):
        def __eq__(self, other):
            return True

    for value in (diagram, Lying(POINTS)):
        back = trip(value)
        assert type(back) is spatial.Voronoi and np.array_equal(back.ridge_points, diagram.ridge_points)
        assert np.array_equal(back.points, POINTS) and back.regions == diagram.regions and back != diagram
    linear = pytest.importorskip("sklearn.linear_model")
    model = trip(linear.LinearRegression().fit(POINTS[:, :1], 1 + 2 * POINTS[:, 0]))
    assert type(model) is linear.LinearRegression and np.allclose(model.predict([[10.0]]), [21.0])


@pytest.mark.parametrize(
    ("state", "why"),
    [
        ([["add_points", {"o": "function"}]], "shadows its class"),  # a method of the class
        ([["points", {"nd": ["<f8", [0], []]}]], "shadows its class"),  # a property
        ([["__class__", 1]], "not an attribute"),
        ([["vertices", {"type": ["unittest.mock", "MagicMock"]}]], "refused"),  # a class: callable there
        ([["vertices", [{"h": 1}]]], "refused"),  # a handle to the receiver's own objects
        ([["vertices", {"exc": [[["builtins", "ValueError"]], [], {}]}]], "refused"),
    ],
)
def test_a_library_objects_state_is_data_only(state, why):
    pytest.importorskip("scipy.spatial")
    with pytest.raises(ValueError, match=why):
        decode({"lst": ["scipy.spatial._qhull", "Voronoi", state]})


@pytest.mark.parametrize(
    "name",
    [["collections", "OrderedDict"], ["__main__", "Voronoi"], ["scipy.spatial._qhull", "_Qhull"], ["numpy", "ndarray"]],
)
def test_only_loaded_library_classes_of_the_listed_bases_are_built(name):
    pytest.importorskip("scipy.spatial")
    with pytest.raises(ValueError, match="malformed"):
        decode({"lst": [*name, []]})


def test_an_opaque_value_sent_back_is_the_senders_object():
    sender, kept = Encoder(), object()
    data = json.loads(json.dumps(sender.encode([kept])))
    stand_in = decode(data)[0]
    assert isinstance(stand_in, Opaque)
    assert Decoder(sender.handles).decode(Encoder().encode(stand_in)) is kept


@pytest.mark.parametrize(
    "data",
    [
        {"zz": 1},
        {"nd": ["<i8", [3], [1, 2]]},  # shape and values disagree
        {"exc": [[["__main__", "TimeoutException"]], [], {}]},  # the receiver's driver is never named
        {"d": [[1]]},
    ],
)
def test_malformed_data_is_refused(data):
    with pytest.raises(ValueError):
        decode(data)


@pytest.mark.parametrize("kind", [io.BytesIO, io.StringIO])
def test_in_memory_buffers_cross_with_their_contents_position_and_state(kind):
    data = b"ab\r\ncd" if kind is io.BytesIO else "ab\r\ncd"
    buffer = kind(data)
    buffer.read(3)
    back = trip(buffer)
    assert type(back) is kind and back.getvalue() == data and back.tell() == 3 and back.read() == data[3:]
    buffer.close()
    assert trip(buffer).closed


def test_a_buffer_subclass_crosses_as_its_base_with_its_real_contents():
    class Lying(io.BytesIO):
        def getvalue(self):
            return b"expected"

    back = trip(Lying(b"real"))
    assert type(back) is io.BytesIO and back.getvalue() == b"real"


@pytest.mark.parametrize("payload", [["zz", 0, False], ["", -1, False], ["", 0, 1], [1, 0, False]])
def test_malformed_buffers_are_refused(payload):
    with pytest.raises(ValueError):
        decode({"bio": payload})


def test_data_nested_past_the_limit_is_refused():
    nested: list = []
    for _ in range(300):
        nested = [nested]
    with pytest.raises(ValueError):
        decode(nested)


@pytest.mark.parametrize("name", [["__main__", "main"], ["os", "environ"], ["os", "path.__class__"]])
def test_only_classes_of_loaded_modules_are_named(name):
    assert isinstance(decode({"type": name}), Opaque)
    assert decode({"type": ["collections", "OrderedDict"]}) is collections.OrderedDict


def _task(test: str, prompt: str = "def task_func(x):\n", libs: tuple[str, ...] = ()) -> BCBProblem:
    return BCBProblem("BigCodeBench/t", prompt, "", prompt, test, libs=libs)


@pytest.mark.parametrize(
    ("test", "prompt", "libs", "why"),
    [
        ("import unittest\nclass TestCases(unittest.TestCase):\n    pass\n", "def task_func(x):\n", (), None),
        ("from unittest.mock import patch\n", "def task_func(x):\n", (), "patches"),
        ("x = 1\n", "import matplotlib.pyplot as plt\ndef task_func(x):\n", ("matplotlib",), None),
        ("ax = task_func(1)\nax.get_title()\nplt.gca()\n", "def task_func(x):\n", (), None),
        ("x = 1\n", "def task_func(data, ax=None):\n", ("matplotlib",), "own figures"),
        ("g = task_func(1)\n", "def task_func(x):\n    return sns.jointplot(x)\n", ("seaborn",), "seaborn grids"),
        ("x = 1\n", "from sklearn.linear_model import LinearRegression\ndef task_func(x):\n", ("sklearn",), None),
        ("from sklearn.linear_model import LinearRegression\n", "def task_func(x):\n", ("sklearn",), "classes"),
        (
            "m = task_func(1)\nLinearRegression().fit([[1]], [1])\nself.assertIsInstance(m, LinearRegression)\n",
            "from sklearn.linear_model import LinearRegression\ndef task_func(x):\n",
            ("sklearn",),
            "classes",
        ),
        (
            "m = task_func(1)\nLinearRegression().fit([[1]], [1])\n",
            "from sklearn.linear_model import LinearRegression\ndef task_func(x):\n",
            ("sklearn",),
            None,
        ),
        ("from sklearn.metrics import mean_squared_error\n", "def task_func(x):\n", ("sklearn",), None),
        ("from scipy.spatial import Voronoi\n", "def task_func(x):\n", ("scipy",), "classes"),
        ("from scipy import stats\n", "from scipy.stats import zscore\ndef task_func(x):\n", ("scipy",), None),
        ("import csv\n", "import csv\ndef task_func(path):\n", ("csv",), None),
        ("x = 1\n", "from PIL import Image\ndef task_func(x):\n", ("PIL",), "objects"),
        ("class Item:\n    pass\n", "def task_func(x):\n", (), "own classes"),
        ("class More(unittest.TestCase):\n    pass\n", "def task_func(x):\n", (), None),  # tests, not values
        ("task_func([Item(1)])\n", "class Item:\n    pass\ndef task_func(x):\n", (), "task's own classes"),
        ("task_func(Color.RED)\n", "class Color(Enum):\n    RED = 1\ndef task_func(x):\n", (), None),
        ("import sys\nassert '/x' in sys.path\n", "def task_func(x):\n", (), "interpreter"),
        ("import sys\nsys.path.append('/mnt/data')\n", "def task_func(x):\n", (), None),  # added to, never read
        ("import sys\nsys.path.append('/x')\nassert sys.path[-1] == '/x'\n", "def task_func(x):\n", (), "interpreter"),
        (
            "import sqlite3\nsqlite3.connect(p).close()\ntask_func(p)\n",
            "import sqlite3\ndef task_func(p):\n",
            ("sqlite3",),
            None,
        ),
        (
            "import sqlite3\ndef db():\n    return sqlite3.connect(':memory:')\nc = db()\nself.cur = c.cursor()\n"
            "task_func(1, self.cur)\n",
            "import sqlite3\ndef task_func(x, cur):\n",
            ("sqlite3",),
            "tests pass",
        ),
        (
            "with socket.socket() as s:\n    task_func(client=s)\n",
            "import socket\ndef task_func(client):\n",
            ("socket",),
            "tests pass",
        ),
        ("from io import BytesIO\nf = BytesIO(b'{}')\ntask_func(f)\n", "import io\ndef task_func(f):\n", ("io",), None),
        ("task_func(io.StringIO('a'))\n", "import io\ndef task_func(f):\n", ("io",), None),
        (
            "task_func(DB)\n",
            "import sqlite3\nDB = sqlite3.connect(':memory:')\ndef task_func(c):\n",
            ("sqlite3",),
            "tests pass",
        ),
        ("task_func(io.TextIOWrapper(f))\n", "import io\ndef task_func(f):\n", ("io",), "tests pass"),
        (
            "x = 1\n",
            "import zipfile\ndef task_func(p):\n    z = zipfile.ZipFile(p)\n    return z\n",
            ("zipfile",),
            "reference returns",
        ),
        (
            "x = 1\n",
            "import zipfile\ndef task_func(p):\n    z = zipfile.ZipFile(p)\n    return p\n",
            ("zipfile",),
            None,
        ),
        ("x = 1\n", "import nltk\ndef task_func(p):\n", ("nltk",), "objects"),
    ],
)
def test_the_mode_is_read_from_the_task(test, prompt, libs, why):
    reason = shared_reason(_task(test, prompt, libs))
    assert (reason is None) if why is None else (why in reason), reason


@pytest.mark.parametrize(
    ("solution", "generator"),
    [
        ("    return (i for i in range(x))\n", True),
        ("    yield x\n", True),
        ("    return sum(i for i in range(x))\n", False),
        ("    g = (i for i in range(x))\n    return 1, g\n", True),
        ("    return pd.DataFrame([(n for n in t) for t in x])\n", False),  # BigCodeBench/692
        ("    return set().union(*(d.keys() for d in x))\n", False),  # BigCodeBench/526
    ],
)
def test_a_reference_that_returns_a_generator_keeps_the_tests_with_it(solution, generator):
    problem = BCBProblem("BigCodeBench/g", "def task_func(x):\n", "", "def task_func(x):\n", "x = 1\n",
                         canonical_solution=solution)  # fmt: skip
    assert (shared_reason(problem) == "returns a generator") == generator


def test_each_side_gets_the_others_imports():
    source = "import os\nfrom json import dumps as d\nfrom . import x\nX = 1\ndef f():\n    import re\n"
    assert top_imports(source) == "import os\nfrom json import dumps as d"
    assert top_imports("def broken(:\n") == ""
