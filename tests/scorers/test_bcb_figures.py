"""Matplotlib figures crossing from BigCodeBench's answer process to the test process
(scorers/bcb_figures.py, scorers/bcb_values.py): what loads, and what the restricted unpickler
refuses before anything it names can run. Pure: no sandbox."""

from __future__ import annotations

import base64
import functools
import io
import json
import os
import pickle
from unittest import mock

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from scorers import bcb_figures  # noqa: E402
from scorers.bcb_figures import Refused, dump, load  # noqa: E402
from scorers.bcb_values import Decoder, Encoder  # noqa: E402

CALLED: list[str] = []


def record(what: str) -> str:
    """What a smuggled call would run: it must never be reached."""
    CALLED.append(what)
    return what


class Call:
    """Pickles as a call of `func` with `args` (REDUCE)."""

    def __init__(self, func, *args) -> None:
        self.func, self.args = func, args

    def __reduce__(self):
        return self.func, self.args

    def __call__(self):  # so that pickle takes a Call for a function to call
        raise AssertionError("never called here")


def crafted(*objects) -> str:
    return base64.b64encode(pickle.dumps(list(objects), protocol=4)).decode("ascii")


@pytest.fixture(autouse=True)
def _closed():
    CALLED.clear()
    yield
    plt.close("all")
    assert CALLED == []


def bars():
    fig, ax = plt.subplots()
    container = ax.bar(["a", "b", "c"], [1, 2, 3])
    ax.set_title("Values")
    return fig, ax, container


def test_a_figure_and_its_parts_come_back_as_matplotlib_objects():
    fig, ax, container = bars()
    image = fig.axes[0].imshow(np.eye(3))
    back_fig, back_ax, back_container, back_image = load(dump([fig, ax, container, image]))
    assert type(back_fig) is Figure and back_ax.figure is back_fig
    assert back_ax.get_title() == "Values"
    assert [p.get_height() for p in back_ax.patches] == [1, 2, 3]
    assert [p.get_height() for p in back_container.patches] == [1, 2, 3]
    assert back_image.get_array().tolist() == np.eye(3).tolist()
    assert [t.get_text() for t in back_ax.get_xticklabels()] == ["a", "b", "c"]


def test_values_carry_figures_by_index_and_pyplot_by_name():
    fig, ax, _ = bars()
    encoder = Encoder(figures=[])
    data = json.loads(json.dumps(encoder.encode({"ax": ax, "again": ax, "module": plt, "n": [1]})))
    assert encoder.figures == [ax]
    objects = load(dump(encoder.figures))
    value = Decoder(figures=objects).decode(data)
    assert value["ax"] is value["again"] is objects[0] and value["module"] is plt and value["n"] == [1]
    with pytest.raises(ValueError, match="figure reference"):
        Decoder(figures=[]).decode(data)


@pytest.mark.parametrize(
    "smuggled",
    [
        Call(os.system, "true"),  # a reduce to os.system
        Call(eval, "1"),
        Call(record, "called"),  # the sender's own function (a module of the tests, as `__main__` would be)
        Call(getattr, Figure, "__init__"),  # getattr on a class: the route to a function's globals
        Call(getattr, Text(), "__class__"),
        Call(Call(getattr, Text(), "get_text")),  # a bound method is a value, never called at load
        Call(functools.partial(record, "x")),
        Call(matplotlib.cbook._exception_printer, ValueError()),  # a listed callback: a value, never called
        mock.ANY,  # a wildcard equal to anything
        Call(np.memmap, "x.bin"),  # a numpy class that opens files
        Call(__import__("copyreg")._reconstructor, Text, object, None),
    ],
    ids=lambda s: getattr(getattr(s, "func", s), "__name__", type(s).__name__),
)
def test_a_malicious_pickle_is_refused_before_it_runs(smuggled):
    with pytest.raises(Refused, match="refused"):  # by a rule, not by what the call raised
        load(crafted(smuggled))


def test_a_call_by_a_refused_opcode_is_refused():
    inst = b"\x80\x04(cmatplotlib.text\nText\no."  # OBJ: Text(), an allowed class, by a refused opcode
    with pytest.raises(Refused, match="opcode"):
        load(base64.b64encode(inst).decode())
    persistent = b"\x80\x04X\x01\x00\x00\x00xQ."
    with pytest.raises(Refused):
        load(base64.b64encode(persistent).decode())


@pytest.mark.parametrize("value", ["Values", functools.partial(str, "Values")])
def test_state_that_shadows_a_method_is_refused(value):
    text = Text(text="wrong")
    text.__dict__["get_text"] = value
    with pytest.raises(Refused, match="shadowed"):
        load(crafted(text))


class _StateIndex(pickle._Unpickler):
    """Finds the memo index of the figure's state dict (Figure.__setstate__ keeps it as `__dict__`)."""

    def load_build(self):
        state, inst = self.stack[-1], self.stack[-2]
        if type(inst) is Figure:
            self.index = next(k for k, v in self.memo.items() if v is state)
        super().load_build()

    dispatch = {**pickle._Unpickler.dispatch, pickle.BUILD[0]: load_build}


def test_a_state_dict_changed_after_its_build_is_refused():
    fig, _, _ = bars()
    data = pickle.dumps([fig], protocol=3)  # no frames: bytes can be inserted
    finder = _StateIndex(io.BytesIO(data))
    finder.load()
    assert data.endswith(b"a.")  # APPEND the figure to the list, STOP
    key, value = b"get_axes", b"forged"
    text = [b"X" + len(t).to_bytes(4, "little") + t for t in (key, value)]
    change = b"j" + finder.index.to_bytes(4, "little") + b"(" + text[0] + text[1] + b"u0"  # dict[key] = value
    assert isinstance(load(base64.b64encode(data).decode())[0], Figure)
    with pytest.raises(Refused, match="get_axes shadowed"):
        load(base64.b64encode(data[:-2] + change + b"a.").decode())


def test_library_callbacks_in_the_state_still_load():
    fig, ax = plt.subplots()
    fig.colorbar(ax.imshow(np.eye(2)))  # the colorbar's axes' `cla` is a bound method of the colorbar
    assert len(load(dump([fig]))[0].axes) == 2


def test_size_and_time_bounds(monkeypatch):
    fig, _, _ = bars()
    text = dump([fig])
    monkeypatch.setattr(bcb_figures, "MAX_CPU_S", -1.0)
    with pytest.raises(Refused, match="CPU"):
        load(text)
    monkeypatch.setattr(bcb_figures, "MAX_BYTES", 100)
    with pytest.raises(Refused, match="too big"):
        load(text)
    assert dump([fig]) is None
    with pytest.raises(Refused):
        load("not base64!")


def test_unpicklable_objects_do_not_cross():
    fig, ax = plt.subplots()
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda x, _: str(x)))
    assert dump([fig]) is None
