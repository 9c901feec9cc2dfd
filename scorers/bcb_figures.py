"""Matplotlib figures crossing from BigCodeBench's answer process to the test process (split mode).

The answer's process pickles the figures, axes and other matplotlib objects of a call's value
(and pyplot's current figure) with `dump`. The test process rebuilds them with `load`, a
restricted unpickler: a global is found only if it is a class of an allowed module
(matplotlib's drawing modules, mpl_toolkits' 3D and axes tools, seaborn's grids, pandas' and
numpy's data classes and pandas' plotting converters) or one of a short list of functions; a
call (REDUCE) is allowed only for those classes and for the listed reconstructors (`getattr`
only for a bound method of a library object, never a dunder name); INST/OBJ, extension codes
and persistent ids are refused; an instance attribute may shadow a method of its class only
with a bound library method or a partial of library code (as matplotlib's transform wrappers
and colorbars and pandas' date axes do), checked when an object is built and again for every
object made once the pickle is loaded (a state dict a class keeps as its `__dict__` can be
changed later in the same pickle). Nothing
from the answer's own modules or `__main__` is found, so the test process holds matplotlib
objects built by its own matplotlib code from data, which the answer's code cannot hook. The
pickle is size-bounded (`MAX_BYTES`) and time-bounded (`MAX_CPU_S` of CPU while loading);
whatever breaks a rule raises `Refused`. Python 2 names are mapped as pickle maps them. Standard library only at import.
"""

from __future__ import annotations

import _compat_pickle
import base64
import functools
import importlib
import inspect
import io
import pickle
import sys
import time
import types

MAX_BYTES = 64 << 20  # of one call's pickled figures
MAX_CPU_S = 30.0  # CPU seconds for loading them
PROTOCOL = 4

_MPL = ("_enums", "artist", "axes", "axis", "category", "cbook", "collections", "colorbar", "colorizer", "colors",
        "container", "contour", "dates", "figure", "font_manager", "gridspec", "hatch", "image", "layout_engine",
        "_layoutgrid", "legend", "legend_handler", "lines", "markers", "offsetbox", "patches", "path", "patheffects",
        "projections", "quiver", "scale", "spines", "streamplot", "table", "text", "textpath", "ticker", "transforms",
        "tri", "units", "bezier", "_mathtext", "mathtext", "_tight_bbox", "_constrained_layout")  # fmt: skip
CLASS_MODULES = (
    *(f"matplotlib.{m}" for m in _MPL), "mpl_toolkits.mplot3d", "mpl_toolkits.axes_grid1", "mpl_toolkits.axisartist",
    "seaborn.axisgrid", "seaborn.matrix", "seaborn.palettes", "seaborn.utils", "seaborn.distributions",
    "seaborn.categorical", "seaborn.relational", "seaborn.regression", "seaborn._base", "seaborn._statistics",
    "pandas.plotting._matplotlib", "pandas.core.frame", "pandas.core.series", "pandas.core.indexes",
    "pandas.core.arrays", "pandas.core.internals", "pandas.core.dtypes", "pandas._libs", "pandas.arrays",
    "pandas.tseries.offsets", "numpy.ma", "numpy.dtypes", "dateutil.tz",
    "pytz.tzinfo",
)  # fmt: skip
CLASS_EXACT = ("pandas", "numpy")  # re-exports (`pandas.Series`, `numpy.ndarray`): checked where defined
BUILTIN_CLASSES = {"builtins": ("object", "slice", "set", "frozenset", "complex", "bytearray", "list", "dict", "tuple",
                                "range", "str", "int", "float", "bool", "bytes"),
                   "collections": ("OrderedDict",), "itertools": ("count",), "functools": ("partial",),
                   "datetime": ("datetime", "date", "time", "timedelta", "timezone"), "decimal": ("Decimal",),
                   "fractions": ("Fraction",), "zoneinfo": ("ZoneInfo",)}  # fmt: skip
# functions found as values (callbacks matplotlib pickles) or called as reconstructors
FUNCTIONS = {
    "matplotlib.artist": ("_stale_axes_callback",),
    "matplotlib.backend_bases": ("_key_handler", "_mouse_handler"),
    "matplotlib.cbook": ("_exception_printer",),
    "matplotlib.colorbar": ("_remove_cbar_axes",),
    "matplotlib.axis": ("Axis._format_with_dict",),
    "matplotlib.axes._subplots": ("_picklable_subplot_class_constructor",),
    "matplotlib.figure": ("_stale_figure_callback",),
    "numpy": ("log", "log2", "log10", "exp", "power", "sqrt", "reciprocal", "arcsinh", "sinh", "expm1", "log1p"),
    "numpy.core.multiarray": ("_reconstruct", "scalar"),
    "numpy._core.multiarray": ("_reconstruct", "scalar"),
    "numpy.ma.core": ("_mareconstruct",),
    "pytz": ("_UTC", "_p"),
    "pandas.core.indexes.base": ("_new_Index",),
    "pandas.plotting._matplotlib.converter": ("_daily_finder", "_monthly_finder", "_quarterly_finder",
                                              "_annual_finder", "_format_coord"),
    "pandas.plotting._matplotlib.timeseries": ("_format_coord",),
}  # fmt: skip
RECONSTRUCTORS = (
    "_reconstruct",
    "scalar",
    "_mareconstruct",
    "_new_Index",
    "_picklable_subplot_class_constructor",
    "_unpickle",
    "_UTC",
    "_p",
)
UNPICKLE_PREFIXES = ("pandas._libs", "pandas.core")  # their `_unpickle_*` / `__pyx_unpickle_*` reconstructors
LIBRARY_CODE = ("matplotlib", "mpl_toolkits", "seaborn", "pandas", "numpy")  # bound methods `getattr` may return


class Refused(pickle.UnpicklingError):
    """The figures' pickle breaks a rule (an object outside the allow-list, a refused opcode, too big or slow)."""


def dump(objects: list) -> str | None:
    """The answer's side: `objects` pickled as text (None when they cannot be pickled or are too big)."""
    try:
        data = pickle.dumps(list(objects), protocol=PROTOCOL)
    except Exception:  # noqa: BLE001 - e.g. a formatter holding a lambda: the objects do not cross
        return None
    return base64.b64encode(data).decode("ascii") if len(data) <= MAX_BYTES else None


def load(text: object) -> list:
    """The test side: the objects of `dump`'s text, built under the rules above (`Refused` otherwise)."""
    if type(text) is not str or len(text) > MAX_BYTES * 4 // 3 + 4:
        raise Refused("the figures' data is malformed or too big")
    try:
        data = base64.b64decode(text.encode("ascii"), validate=True)
    except ValueError:
        raise Refused("the figures' data is not base64") from None
    loader = _Loader(io.BytesIO(data))
    try:
        objects = loader.load()
        for made in loader.made:  # again at the end: a state dict kept as `__dict__` may be changed later
            check_state(made)
    except Refused:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever a malformed pickle raises
        raise Refused(f"the figures cannot be loaded ({type(exc).__name__}: {str(exc)[:200]})") from None
    if type(objects) is not list:
        raise Refused("the figures' data is not a list")
    return objects


def _module_allowed(module: str) -> bool:
    return module in CLASS_EXACT or any(module == m or module.startswith(m + ".") for m in CLASS_MODULES)


def _class_allowed(cls: type) -> bool:
    """A class of an allowed module, where it is defined (numpy: `ndarray`, dtypes and scalars only, not
    `memmap`, which opens files)."""
    module = cls.__module__ or ""
    if issubclass(cls, type) or not _module_allowed(module):
        return False
    if module == "pandas":  # pandas names its public classes "pandas": its data types only
        pd = sys.modules["pandas"]
        data = (pd.Series, pd.DataFrame, pd.Index, pd.api.extensions.ExtensionDtype, pd.api.extensions.ExtensionArray,
                pd.Timestamp, pd.Timedelta, pd.Period, pd.Interval, pd.DateOffset, type(pd.NaT))  # fmt: skip
        return issubclass(cls, data)
    np = sys.modules.get("numpy")
    return module != "numpy" or np is not None and (cls is np.ndarray or issubclass(cls, np.dtype | np.generic))


def _allowed_function(module: str, name: str) -> bool:
    if name in FUNCTIONS.get(module, ()):
        return True
    pyx = name.startswith(("__pyx_unpickle_", "_unpickle")) or name in ("_new_DatetimeIndex", "_new_PeriodIndex")
    return pyx and "." not in name and any(module == p or module.startswith(p + ".") for p in UNPICKLE_PREFIXES)


def _resolve(module: str, name: str) -> object:
    found: object = importlib.import_module(module)
    for part in name.split("."):
        found = getattr(found, part)
    return found


def _zoneinfo(key: object, from_cache: object) -> object:
    return sys.modules["zoneinfo"].ZoneInfo._unpickle(str(key), int(from_cache))


def _safe_getattr(obj: object, name: object) -> object:
    """`getattr` for pickled bound methods: a library object's non-dunder method, nothing else."""
    if type(name) is not str or not name.isidentifier() or name.startswith("__"):
        raise Refused(f"getattr of {name!r} refused")
    if obj is sys.modules.get("zoneinfo", types).__dict__.get("ZoneInfo") and name == "_unpickle":
        return _zoneinfo  # how a ZoneInfo pickles: its class's `_unpickle`
    if isinstance(obj, type | types.ModuleType | types.FunctionType | types.MethodType):
        raise Refused("getattr on a class, module or function refused")
    value = getattr(obj, name)
    if type(obj) is list and name == "remove":  # matplotlib's `_remove_method = children.remove`
        return value
    func = getattr(value, "__func__", None)
    module = getattr(func, "__module__", None) or ""
    if isinstance(value, types.MethodType) and value.__self__ is obj and module.split(".")[0] in LIBRARY_CODE:
        return value
    raise Refused(f"getattr of {name!r} is not a library method")


def _method_like(attribute: object) -> bool:
    return isinstance(attribute, types.FunctionType | staticmethod | classmethod | types.BuiltinFunctionType
                      | types.MethodDescriptorType | types.WrapperDescriptorType | functools.partialmethod)  # fmt: skip


def _library_callable(value: object) -> bool:
    """A bound method of library code, or a `functools.partial` of one or of a library function."""
    if type(value) is functools.partial:
        value = value.func
        if isinstance(value, types.FunctionType):
            return (value.__module__ or "").split(".")[0] in LIBRARY_CODE
    func = getattr(value, "__func__", None)
    return isinstance(value, types.MethodType) and (getattr(func, "__module__", "") or "").split(".")[0] in LIBRARY_CODE


def check_state(obj: object) -> None:
    """No instance attribute of `obj` shadows a method of its class, except with a bound library
    method or a partial of library code (`Refused` otherwise): matplotlib's transform wrappers and
    colorbars and pandas' date axes do that."""
    state = getattr(obj, "__dict__", None)
    if type(state) is not dict or isinstance(obj, type):
        return
    for key, value in state.items():
        if type(key) is not str:
            continue
        attribute = inspect.getattr_static(type(obj), key, None)
        if attribute is None or not _method_like(attribute):
            continue
        if not _library_callable(value):
            raise Refused(f"{type(obj).__qualname__}.{key} shadowed by the pickle")


class _Loader(pickle._Unpickler):  # the pure-Python unpickler: each opcode's rule below
    dispatch = dict(pickle._Unpickler.dispatch)

    def __init__(self, file: io.BytesIO) -> None:
        super().__init__(file)
        self.granted: set[int] = {id(_safe_getattr), id(_zoneinfo)}  # ids of what REDUCE may call
        self.kept: list = []  # keeps granted objects alive (their ids stay theirs)
        self.made: list = []  # what REDUCE and NEWOBJ made
        self.deadline = time.process_time() + MAX_CPU_S

    def find_class(self, module: str, name: str) -> object:
        if self.proto < 3 and type(module) is str and type(name) is str:  # Python 2 names, as pickle maps them
            module, name = _compat_pickle.NAME_MAPPING.get((module, name), (module, name))
            module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        if (
            type(module) is not str
            or type(name) is not str
            or any(
                not p.isidentifier() or p.startswith("__") and not p.startswith("__pyx_unpickle_")
                for p in name.split(".")
            )
        ):
            raise Refused(f"global {module}.{name} refused")
        if time.process_time() > self.deadline:
            raise Refused(f"loading the figures took more than {MAX_CPU_S:g} s of CPU")
        if module == "builtins" and name == "getattr":
            return _safe_getattr
        builtin = name in BUILTIN_CLASSES.get(module, ())
        if not (builtin or _allowed_function(module, name) or _module_allowed(module)):
            raise Refused(f"global {module}.{name} refused (not on the allow-list)")
        try:
            found = _resolve(module, name)
        except (ImportError, AttributeError):
            raise Refused(f"global {module}.{name} not found") from None
        if isinstance(found, type):
            if not (builtin or _class_allowed(found)):
                raise Refused(f"class {module}.{name} refused (defined in {found.__module__})")
            self._grant(found)
        elif _allowed_function(module, name):
            if name.split(".")[-1] in RECONSTRUCTORS or name.startswith(("__pyx_unpickle_", "_unpickle", "_new_")):
                self._grant(found)
        else:
            raise Refused(f"global {module}.{name} refused (not a class or a listed function)")
        return found

    def _grant(self, found: object) -> None:
        self.granted.add(id(found))
        self.kept.append(found)

    def _refuse(self) -> None:
        raise Refused("a refused pickle opcode (INST, OBJ, an extension code or a persistent id)")

    def _made(self) -> None:
        """The object just made: checked when it is built and again at the end; CPU bounded."""
        self.made.append(self.stack[-1])
        if time.process_time() > self.deadline:
            raise Refused(f"loading the figures took more than {MAX_CPU_S:g} s of CPU")

    def load_reduce(self) -> None:
        args, func = self.stack[-1], self.stack[-2]
        if id(func) not in self.granted or type(args) is not tuple:
            raise Refused(f"a call of {getattr(func, '__qualname__', type(func).__qualname__)} refused")
        super().load_reduce()
        self._made()

    def load_newobj(self) -> None:
        self._check_class(self.stack[-2])
        super().load_newobj()
        self._made()

    def load_newobj_ex(self) -> None:
        self._check_class(self.stack[-3])
        super().load_newobj_ex()
        self._made()

    def _check_class(self, cls: object) -> None:
        if not isinstance(cls, type) or id(cls) not in self.granted:
            raise Refused("NEWOBJ of something that is not an allowed class")

    def load_build(self) -> None:
        inst = self.stack[-2]
        super().load_build()
        check_state(inst)

    for _code in (pickle.INST, pickle.OBJ, pickle.EXT1, pickle.EXT2, pickle.EXT4, pickle.PERSID, pickle.BINPERSID):
        dispatch[_code[0]] = _refuse
    dispatch[pickle.REDUCE[0]] = load_reduce
    dispatch[pickle.NEWOBJ[0]] = load_newobj
    dispatch[pickle.NEWOBJ_EX[0]] = load_newobj_ex
    dispatch[pickle.BUILD[0]] = load_build
    del _code


# --------------------------------------------------------------------------- pyplot's figures


def root_figure(obj: object) -> object | None:
    """The top-level figure an object belongs to (None if it has none)."""
    for _ in range(8):
        parent = getattr(obj, "figure", None)
        if parent is None and not type(obj).__name__.endswith("Figure"):
            children = getattr(obj, "patches", None) or getattr(obj, "lines", None)  # containers
            parent = getattr(children[0], "figure", None) if isinstance(children, list | tuple) and children else None
        if parent is None or parent is obj:
            return obj if type(obj).__name__ == "Figure" else None
        obj = parent
    return None


def pyplot_current() -> object | None:
    """pyplot's current figure in this process, if pyplot is loaded and has one (none is made)."""
    helpers = sys.modules.get("matplotlib._pylab_helpers")
    manager = helpers.Gcf.get_active() if helpers is not None else None
    return getattr(getattr(manager, "canvas", None), "figure", None)


def pyplot_open(figure: object) -> bool:
    """Whether `figure` is one of pyplot's open figures in this process."""
    helpers = sys.modules.get("matplotlib._pylab_helpers")
    managers = helpers.Gcf.get_all_fig_managers() if helpers is not None else []
    return any(getattr(m.canvas, "figure", None) is figure for m in managers)


def close_figures(numbers: object, everything: bool) -> None:
    """The answer's side: close pyplot's figures the tests have closed (all of them with `everything`)."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return
    if everything:
        pyplot.close("all")
        return
    for number in numbers if type(numbers) is list else ():
        if type(number) is int and pyplot.fignum_exists(number):
            pyplot.close(number)


def make_current(figure: object) -> None:
    """The test side: `figure` becomes pyplot's current figure, when pyplot manages it."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None and pyplot_open(figure):
        pyplot.figure(figure)
