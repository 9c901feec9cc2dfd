"""Plain data for values crossing between BigCodeBench's test process and the answer's process.

`encode(value)` turns a value into JSON-able tagged data; `decode(data)` builds it again
from that data alone, with the receiving process's own classes and constructors (built-in
types, `collections`, `datetime`, `decimal`, `fractions`, `uuid`, `pathlib`, `io`'s in-memory
buffers (contents, position, closed), numpy arrays,
scalars and dtypes, pandas frames, series, indexes and scalars, exceptions and classes of
modules the receiver has loaded). Nothing of the sender's code survives the trip: a subclass
arrives as its base type, an object whose type is not listed arrives as `Opaque` (equal only
to itself; handed back to the sender as the object it stands for). Matplotlib's objects (and
mpl_toolkits' and seaborn's) are the exception: an `Encoder` given a `figures` list puts them
there and encodes their index; the sender pickles that list (scorers/bcb_figures.py) and the
receiver's `Decoder` gets the objects its restricted unpickler rebuilt. `matplotlib.pyplot`
itself crosses by name (the receiver's own module). Standard library only at import; numpy and
pandas are used once a value of theirs arrives. Decoding refuses malformed data with `ValueError`.
"""

from __future__ import annotations

import array
import collections
import datetime
import decimal
import enum
import fractions
import io
import ipaddress
import pathlib
import sys
import time
import types
import uuid

MAX_DEPTH = 200
IP_TYPES = (ipaddress.IPv4Address, ipaddress.IPv6Address, ipaddress.IPv4Network, ipaddress.IPv6Network,
            ipaddress.IPv4Interface, ipaddress.IPv6Interface)  # fmt: skip
PATHS = {c.__name__: c for c in (pathlib.PosixPath, pathlib.PurePosixPath, pathlib.PureWindowsPath)}
FACTORIES = {f.__name__: f for f in (list, dict, set, int, float, str, tuple, frozenset, bool)}
FIGURE_PACKAGES = ("matplotlib", "mpl_toolkits", "seaborn")  # their objects cross as pickled figures
NAMED_MODULES = ("matplotlib.pyplot",)  # modules that cross by name
# (package, module, base class): objects of the package's subclasses of that base cross as class and state
STATE_CLASSES = (("sklearn", "sklearn.base", "BaseEstimator"), ("scipy", "scipy.spatial._qhull", "_QhullUser"))
STATE_REFUSED = frozenset({"type", "mod", "mpl", "h", "exc", "enum", "sns"})  # tags refused inside such state


class Opaque:
    """A value that could not cross as data: equal only to itself, no attribute of the original."""

    __slots__ = ("type_name", "handle")

    def __init__(self, type_name: str, handle: int | None = None) -> None:
        self.type_name, self.handle = type_name, handle

    def __eq__(self, other: object) -> bool:
        return other is self

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"<{self.type_name} object from the answer's process (it cannot cross as data)>"


# --------------------------------------------------------------------------- encode


class Encoder:
    """`encode` with a table of the objects it could not encode (`handles`), so an `Opaque`
    stand-in sent back resolves to the original on this side; `figures`: a list that collects
    matplotlib's objects (None: they are opaque)."""

    def __init__(self, figures: list | None = None) -> None:
        self.handles: dict[int, object] = {}
        self.figures = figures

    def opaque(self, value: object) -> dict:
        if isinstance(value, Opaque):
            return {"h": value.handle} if value.handle is not None else {"o": value.type_name}
        self.handles[id(value)] = value
        return {"o": type(value).__qualname__[:80], "h": id(value)}

    def encode(self, value: object, depth: int = 0) -> object:
        if depth > MAX_DEPTH:
            raise ValueError("value nested too deeply to cross")
        t, d = type(value), depth + 1
        if t is float and value != value:  # NaN: numpy's and math's own objects keep their identity
            return {"nan": next((n for n in ("numpy", "math") if value is getattr(sys.modules.get(n), "nan", 0)), "")}
        if value is None or t in (bool, int, str, float):
            return value
        for kind, rule in _RULES:
            if isinstance(value, kind):
                found = rule(self, value, d)
                if found is not None:
                    return found
        return self.opaque(value)

    def items(self, values, depth: int) -> list:
        return [self.encode(v, depth) for v in values]


def _figure(enc: Encoder, v, d):
    if isinstance(v, types.ModuleType):
        return {"mod": v.__name__} if v.__name__ in NAMED_MODULES else None
    if enc.figures is None or (type(v).__module__ or "").split(".")[0] not in FIGURE_PACKAGES:
        return None
    index = next((k for k, known in enumerate(enc.figures) if known is v), None)
    if index is None:
        enc.figures.append(v)
        index = len(enc.figures) - 1
    return {"mpl": index}


def _module_of(value: object, name: str):
    return sys.modules.get(name) if (type(value).__module__ or "").split(".")[0] == name else None


def _state_base(package: str):
    """The loaded base class of `STATE_CLASSES` for a package (None: not loaded, or not listed)."""
    module, name = next(((m, b) for p, m, b in STATE_CLASSES if p == package), (None, None))
    base = getattr(sys.modules.get(module), name, None) if module else None
    return base if isinstance(base, type) else None


def _library_state(enc: Encoder, v, d):
    """A library object of `STATE_CLASSES`: its first class of the library (a subclass of another
    module arrives as it) and its instance dict, encoded."""
    for package, _, _ in STATE_CLASSES:
        base = _state_base(package)
        if base is None or not isinstance(v, base):
            continue
        kind = next(k for k in type(v).__mro__ if (k.__module__ or "").split(".")[0] == package and issubclass(k, base))
        state = object.__getattribute__(v, "__dict__")
        pairs = [[name, enc.encode(value, d)] for name, value in dict.items(state) if type(name) is str]
        return {"lst": [kind.__module__, kind.__qualname__, pairs]}
    return None


def _scalar_or_container(enc: Encoder, v, d):
    if isinstance(v, bool):
        return bool(v)
    if isinstance(v, int):
        return int.__index__(v)
    if isinstance(v, float):
        return float.__float__(v)
    if isinstance(v, str):
        return str.__str__(v)
    if isinstance(v, complex):
        return {"c": [complex.__getattribute__(v, "real"), complex.__getattribute__(v, "imag")]}
    if isinstance(v, bytes | bytearray):
        return {"ba" if isinstance(v, bytearray) else "b": bytes(v).hex()}
    if isinstance(v, tuple):
        fields = getattr(type(v), "_fields", None)
        if isinstance(fields, tuple) and all(type(f) is str for f in fields) and len(fields) == len(v):
            return {"nt": [type(v).__name__, list(fields), enc.items(tuple.__iter__(v), d)]}
        return {"t": enc.items(tuple.__iter__(v), d)}
    if isinstance(v, list):
        return enc.items(list.__iter__(v), d)
    if isinstance(v, set | frozenset):
        return {"fs" if isinstance(v, frozenset) else "s": enc.items(iter(v), d)}
    if isinstance(v, dict):
        pairs = [[enc.encode(k, d), enc.encode(x, d)] for k, x in dict.items(v)]
        if isinstance(v, collections.Counter):
            return {"ctr": pairs}
        if isinstance(v, collections.OrderedDict):
            return {"od": pairs}
        if isinstance(v, collections.defaultdict):
            factory = v.default_factory
            name = factory.__name__ if factory in FACTORIES.values() else None
            return {"dd": [name, pairs]}
        return {"d": pairs}
    if isinstance(v, collections.deque):
        return {"dq": [enc.items(collections.deque.__iter__(v), d), v.maxlen]}
    if isinstance(v, range):
        return {"r": [v.start, v.stop, v.step]}
    return None


def _tz(enc: Encoder, tz):
    if tz is None:
        return None
    key = getattr(tz, "key", None) or getattr(tz, "zone", None)
    if isinstance(key, str):
        return {"zone": key, "lib": type(tz).__module__.split(".")[0]}
    if isinstance(tz, datetime.timezone):
        offset = tz.utcoffset(None)
        return {"off": [offset.days, offset.seconds, offset.microseconds, tz.tzname(None)]}
    return enc.opaque(tz)


def _datetime(enc: Encoder, v, d):
    if isinstance(v, datetime.timedelta) and not _module_of(v, "pandas"):
        return {"td": [v.days, v.seconds, v.microseconds]}
    if isinstance(v, datetime.datetime) and not _module_of(v, "pandas"):
        naive = datetime.datetime(v.year, v.month, v.day, v.hour, v.minute, v.second, v.microsecond, fold=v.fold)
        return {"dt": [naive.isoformat(), _tz(enc, v.tzinfo), v.utcoffset().total_seconds() if v.tzinfo else None]}
    if isinstance(v, datetime.date) and not isinstance(v, datetime.datetime):
        return {"date": datetime.date(v.year, v.month, v.day).isoformat()}
    if isinstance(v, datetime.time):
        naive = datetime.time(v.hour, v.minute, v.second, v.microsecond)
        return {"time": [naive.isoformat(), _tz(enc, v.tzinfo)]}
    return None


def _stdlib(enc: Encoder, v, d):
    """array.array, ipaddress values, time.struct_time and SimpleNamespace."""
    if isinstance(v, array.array):
        return {"arr": [v.typecode, v.tolist()]} if v.typecode in "bBhHiIlLqQfd" else None
    if isinstance(v, IP_TYPES):
        return {"ip": [next(c.__name__ for c in IP_TYPES if isinstance(v, c)), str(v)]}
    if isinstance(v, time.struct_time):
        return {"st": [list(v), v.tm_zone, v.tm_gmtoff]}
    if isinstance(v, types.SimpleNamespace):
        return {"sns": [[k, enc.encode(x, d)] for k, x in vars(v).items() if type(k) is str]}
    return None


def _buffer(enc: Encoder, v, d):
    """An in-memory `io.BytesIO` or `io.StringIO` (a subclass as its base): contents, position, closed."""
    kind = io.BytesIO if isinstance(v, io.BytesIO) else io.StringIO
    closed = kind.closed.__get__(v)
    content = kind().getvalue() if closed else kind.getvalue(v)
    position = 0 if closed else kind.tell(v)
    return {"bio": [content.hex(), position, closed]} if kind is io.BytesIO else {"sio": [content, position, closed]}


def _numbers(enc: Encoder, v, d):
    if isinstance(v, decimal.Decimal):
        return {"dec": str(decimal.Decimal.__str__(v))}
    if isinstance(v, fractions.Fraction):
        return {"fr": [int(v.numerator), int(v.denominator)]}
    if isinstance(v, uuid.UUID):
        return {"uuid": str(uuid.UUID(int=v.int))}
    if isinstance(v, pathlib.PurePath):
        kind = next((n for n, c in PATHS.items() if isinstance(v, c)), None)
        return {"path": [kind, str(pathlib.PurePath.__str__(v))]} if kind else None
    return None


EXCEPTION_ATTRIBUTES = ("name", "path", "filename", "filename2")  # ImportError's and OSError's, not in args


def _exception(enc: Encoder, v, d):
    mro = [[k.__module__, k.__qualname__] for k in type(v).__mro__ if k is not object]
    args = enc.items(v.args, d) if isinstance(v.args, tuple) else []
    extra = {a: getattr(v, a) for a in EXCEPTION_ATTRIBUTES if isinstance(getattr(v, a, None), str)}
    return {"exc": [mro, args, extra]}


def _class(enc: Encoder, v, d):
    return {"type": [v.__module__, v.__qualname__]}


def _enum(enc: Encoder, v, d):
    return {"enum": [type(v).__module__, type(v).__qualname__, v.name, enc.encode(v.value, d)]}


def _numpy(enc: Encoder, v, d):
    np = _module_of(v, "numpy")
    if np is None:
        return None
    if isinstance(v, np.ndarray):
        return {"nd": _array(enc, np.asarray(v), d)}
    if isinstance(v, np.generic):
        array = _array(enc, np.asarray(v).reshape(1), d)
        return {"ns": array}
    if isinstance(v, np.dtype):
        return {"ndt": v.str} if v.fields is None else None
    return None


def _array(enc: Encoder, a, d):
    """[dtype, shape, flat values] of a numpy array (dates and durations as integers)."""
    kind = a.dtype.kind
    if a.dtype.fields is not None:
        raise ValueError("structured arrays do not cross")
    flat = a.reshape(-1)
    if kind in "mM":
        values = flat.view("i8").tolist()
    elif kind in "biuf":
        values = flat.tolist()
    else:  # object, bytes, text, complex: item by item
        values = enc.items(flat.tolist(), d)
    return [a.dtype.str, list(a.shape), values]


def _pandas(enc: Encoder, v, d):
    pd = _module_of(v, "pandas")
    if pd is None:
        return None
    if isinstance(v, pd.DataFrame):
        columns = [_values(enc, v.iloc[:, k], d) for k in range(v.shape[1])]
        return {"pdf": [_index(enc, v.columns, d), _index(enc, v.index, d), columns]}
    if isinstance(v, pd.Series):
        return {"pds": [_values(enc, v, d), _index(enc, v.index, d), enc.encode(v.name, d)]}
    if isinstance(v, pd.Index):
        return {"pdi": _index(enc, v, d)}
    if v is pd.NaT:
        return {"nat": 1}
    if v is pd.NA:
        return {"na": 1}
    if isinstance(v, pd.Timestamp):
        return {"ts": [int(v.value), _tz(enc, v.tzinfo), v.unit]}
    if isinstance(v, pd.Timedelta):
        return {"tdl": [int(v.value), v.unit]}
    return None


def _values(enc: Encoder, obj, d):
    """A pandas Series' or Index's values with their dtype: numpy, tz-aware dates, categories or
    another extension type (item by item)."""
    import numpy as np
    import pandas as pd

    dtype = obj.dtype
    if isinstance(dtype, np.dtype):
        return {"np": _array(enc, obj.to_numpy(), d)}
    if isinstance(dtype, pd.DatetimeTZDtype):
        return {"dtz": [obj.array.asi8.tolist(), _tz(enc, dtype.tz), dtype.unit]}
    if isinstance(dtype, pd.CategoricalDtype):
        cat = obj.array
        return {"cat": [_index(enc, cat.categories, d), cat.codes.tolist(), bool(dtype.ordered)]}
    return {"ext": [str(dtype), enc.items(list(obj.array), d)]}


def _index(enc: Encoder, index, d):
    import pandas as pd

    names = enc.items(index.names, d)
    if isinstance(index, pd.RangeIndex):
        return {"range": [index.start, index.stop, index.step, names]}
    if isinstance(index, pd.MultiIndex):
        return {"multi": [[_index(enc, level, d) for level in index.levels], [c.tolist() for c in index.codes], names]}
    return {"values": [_values(enc, index, d), names]}


_RULES = (  # figures first (a BarContainer is a tuple), then numpy: its float64 is a float
    (object, _figure),
    (object, _numpy),
    (object, _library_state),
    ((array.array, *IP_TYPES, time.struct_time, types.SimpleNamespace), _stdlib),  # struct_time: a tuple
    (BaseException, _exception),
    (type, _class),
    (enum.Enum, _enum),
    ((bool, int, float, str, complex, bytes, bytearray, tuple, list, set, frozenset, dict, collections.deque, range),
     _scalar_or_container),
    ((datetime.date, datetime.time, datetime.timedelta), _datetime),
    ((decimal.Decimal, fractions.Fraction, uuid.UUID, pathlib.PurePath), _numbers),
    ((io.BytesIO, io.StringIO), _buffer),
    (object, _pandas),
)  # fmt: skip


def encode(value: object) -> object:
    """`value` as plain data (see the module docstring); objects of other types become opaque."""
    return Encoder().encode(value)


# --------------------------------------------------------------------------- decode


class Decoder:
    """`decode`, resolving `{"h": id}` to the objects an `Encoder` on this side handed out and
    `{"mpl": k}` to the k-th of `figures` (the sender's figures, rebuilt by bcb_figures.load)."""

    def __init__(self, handles: dict[int, object] | None = None, figures: list | None = None) -> None:
        self.handles = handles if handles is not None else {}
        self.figures = figures if figures is not None else []

    def decode(self, data: object, depth: int = 0) -> object:
        if depth > MAX_DEPTH:
            raise ValueError("value nested too deeply")
        if data is None or type(data) in (bool, int, str, float):
            return data
        if type(data) is list:
            return [self.decode(v, depth + 1) for v in data]
        if type(data) is not dict or not data:
            raise ValueError("malformed value")
        tag = next(iter(data))
        rule = _DECODERS.get(tag)
        if rule is None:
            raise ValueError(f"unknown tag {tag!r}")
        try:
            return rule(self, data[tag], depth + 1, data)
        except (TypeError, KeyError, IndexError, AttributeError, OverflowError, decimal.InvalidOperation) as exc:
            raise ValueError(f"malformed {tag!r} value: {type(exc).__name__}") from None

    def items(self, values, depth: int) -> list:
        if type(values) is not list:
            raise ValueError("malformed value")
        return [self.decode(v, depth) for v in values]

    def pairs(self, pairs, depth: int) -> list:
        if type(pairs) is not list or any(type(p) is not list or len(p) != 2 for p in pairs):
            raise ValueError("malformed value")
        return [(self.decode(k, depth), self.decode(v, depth)) for k, v in pairs]


PRIVATE_MODULES = ("__main__",)  # the receiver's driver: never named by the sender


def _loaded(module: str, qualname: str):
    """The class named `module`:`qualname` in a module this process has loaded, reached through
    modules and classes only (None otherwise)."""
    found = sys.modules.get(str(module)) if str(module) not in PRIVATE_MODULES else None
    for part in str(qualname).split("."):
        if not isinstance(found, types.ModuleType | type) or not part.isidentifier() or part.startswith("__"):
            return None
        found = getattr(found, part, None)
    return found if isinstance(found, type) else None


PLAIN_DEFAULTS = (type(None), bool, int, float, str)


class _StateDecoder(Decoder):
    """A library object's state: data and other such objects only (no class, module, figure,
    handle, exception, enum or namespace: nothing that resolves to the receiver's own objects)."""

    def decode(self, data: object, depth: int = 0) -> object:
        if type(data) is dict and data and next(iter(data)) in STATE_REFUSED:
            raise ValueError(f"{next(iter(data))!r} refused in a library object's state")
        return super().decode(data, depth)


def _make_library_object(dec: Decoder, payload, depth, _):
    """An instance of the receiver's loaded library class (`STATE_CLASSES`), made without running
    its code, its dict filled with decoded data under names its classes do not define (or define as
    a plain default, such as scipy's `_qhull = None`: never a method, property or other descriptor)."""
    module, qualname, pairs = payload
    cls, base = _loaded(module, qualname), _state_base(str(module).split(".")[0])
    if cls is None or base is None or not issubclass(cls, base) or cls.__module__ != module:
        raise ValueError(f"malformed library object: {str(module)[:80]}.{str(qualname)[:80]} not allowed here")
    if cls.__new__ is not object.__new__ or type(pairs) is not list:
        raise ValueError("malformed library object")
    state, inner = {}, _StateDecoder()
    for name, value in pairs:
        if type(name) is not str or not name.isidentifier() or name.startswith("__"):
            raise ValueError("malformed library object: a name that is not an attribute")
        if any(name in vars(k) and type(vars(k)[name]) not in PLAIN_DEFAULTS for k in cls.__mro__):
            raise ValueError(f"malformed library object: {name!r} shadows its class")
        state[name] = inner.decode(value, depth)
    made = object.__new__(cls)
    object.__getattribute__(made, "__dict__").update(state)
    return made


def _make_buffer(dec: Decoder, payload, depth, data):
    content, position, closed = payload
    if type(content) is not str or type(position) is not int or position < 0 or type(closed) is not bool:
        raise ValueError("malformed buffer")
    buffer = io.BytesIO(bytes.fromhex(content)) if "bio" in data else io.StringIO(content)
    buffer.seek(position)
    if closed:
        buffer.close()
    return buffer


def _make_exception(dec: Decoder, payload, depth, _):
    mro, args, extra = payload
    for module, qualname in mro:
        cls = _loaded(module, qualname)
        if isinstance(cls, type) and issubclass(cls, BaseException):
            args = tuple(dec.items(args, depth))
            try:
                exc = cls(*args)
            except Exception:  # noqa: BLE001 - a class whose constructor wants other arguments
                exc = BaseException.__new__(cls)
                exc.args = args
            for name, value in extra.items() if type(extra) is dict else ():
                if name in EXCEPTION_ATTRIBUTES and type(value) is str and isinstance(exc, ImportError | OSError):
                    setattr(exc, name, value)
            return exc
    raise ValueError("malformed exception")


def _make_enum(dec: Decoder, payload, depth, _):
    """The member of the receiver's own enum class of that name (its value where the class is unknown)."""
    module, qualname, name, value = payload
    cls = _loaded(module, qualname)
    if isinstance(cls, enum.EnumMeta) and type(name) is str and name in cls.__members__:
        return cls.__members__[name]
    return dec.decode(value, depth)


def _make_class(dec: Decoder, payload, depth, _):
    cls = _loaded(*payload)
    return cls if isinstance(cls, type) else Opaque(f"class {payload[1]}")


def _make_tz(dec: Decoder, data):
    if data is None:
        return None
    if "off" in data:
        days, seconds, micro, name = data["off"]
        return datetime.timezone(datetime.timedelta(days, seconds, micro), name)
    if "zone" in data:
        if data.get("lib") == "pytz" and "pytz" in sys.modules:
            return sys.modules["pytz"].timezone(data["zone"])
        import zoneinfo

        return zoneinfo.ZoneInfo(data["zone"])
    return dec.decode(data)


def _make_datetime(dec: Decoder, payload, depth, _):
    text, tz, offset = payload
    naive = datetime.datetime.fromisoformat(text)
    zone = _make_tz(dec, tz)
    if zone is None or isinstance(zone, Opaque):
        return naive if zone is None else zone
    if hasattr(zone, "localize"):  # pytz: the instant, then its zone's own offset
        utc = naive - datetime.timedelta(seconds=offset)
        return zone.fromutc(utc.replace(tzinfo=zone))
    return naive.replace(tzinfo=zone)


def _make_time(dec: Decoder, payload, depth, _):
    zone = _make_tz(dec, payload[1])
    return datetime.time.fromisoformat(payload[0]).replace(tzinfo=None if isinstance(zone, Opaque) else zone)


def _make_defaultdict(dec: Decoder, payload, depth, _):
    name, pairs = payload
    return collections.defaultdict(FACTORIES.get(name), dec.pairs(pairs, depth))


def _make_namedtuple(dec: Decoder, payload, depth, _):
    name, fields, values = payload
    if not str(name).isidentifier() or any(not str(f).isidentifier() for f in fields):
        raise ValueError("malformed named tuple")
    return collections.namedtuple(name, fields, rename=True)(*dec.items(values, depth))


def _make_array(dec: Decoder, payload, depth):
    import numpy as np

    dtype_text, shape, values = payload
    dtype = np.dtype(str(dtype_text))
    if dtype.fields is not None or type(shape) is not list or any(type(n) is not int or n < 0 for n in shape):
        raise ValueError("malformed array")
    count = 1
    for n in shape:
        count *= n
    if type(values) is not list or len(values) != count:
        raise ValueError("malformed array")
    if dtype.kind in "mM":
        return np.array(values, dtype="i8").view(dtype).reshape(shape)
    if dtype.kind in "biuf":
        return np.array(values, dtype=dtype).reshape(shape)
    flat = np.empty(count, dtype=dtype)
    for k, item in enumerate(dec.items(values, depth)):
        flat[k] = item
    return flat.reshape(shape)


def _make_scalar(dec: Decoder, payload, depth, _):
    return _make_array(dec, payload, depth)[0]


def _make_values(dec: Decoder, data, depth):
    """A pandas array (or numpy array) from `_values`' data."""
    import pandas as pd

    if type(data) is not dict or len(data) != 1:
        raise ValueError("malformed column")
    ((tag, payload),) = data.items()
    if tag == "np":
        return _make_array(dec, payload, depth)
    if tag == "dtz":
        import numpy as np

        values, tz, unit = payload
        stamps = pd.DatetimeIndex(np.array(values, dtype="i8").view(f"M8[{unit}]")).tz_localize("UTC")
        return stamps.tz_convert(_make_tz(dec, tz)).array
    if tag == "cat":
        categories, codes, ordered = payload
        return pd.Categorical.from_codes(codes, categories=_make_index(dec, categories, depth), ordered=bool(ordered))
    if tag == "ext":
        return pd.array(dec.items(payload[1], depth), dtype=pd.api.types.pandas_dtype(str(payload[0])))
    raise ValueError("malformed column")


def _make_index(dec: Decoder, data, depth):
    import pandas as pd

    if type(data) is not dict or len(data) != 1:
        raise ValueError("malformed index")
    ((tag, payload),) = data.items()
    if tag == "range":
        start, stop, step, names = payload
        return pd.RangeIndex(start, stop, step, name=dec.items(names, depth)[0])
    if tag == "multi":
        levels, codes, names = payload
        return pd.MultiIndex(levels=[_make_index(dec, lv, depth) for lv in levels], codes=codes,
                             names=dec.items(names, depth))  # fmt: skip
    if tag == "values":
        values, names = payload
        return pd.Index(_make_values(dec, values, depth), name=dec.items(names, depth)[0], tupleize_cols=False)
    raise ValueError("malformed index")


def _make_frame(dec: Decoder, payload, depth, _):
    import pandas as pd

    columns, index, values = payload
    index, columns = _make_index(dec, index, depth), _make_index(dec, columns, depth)
    if type(values) is not list or len(values) != len(columns):
        raise ValueError("malformed frame")
    parts = {k: pd.Series(_make_values(dec, v, depth), index=index, copy=False) for k, v in enumerate(values)}
    frame = pd.DataFrame(parts, index=index) if parts else pd.DataFrame(index=index)
    frame.columns = columns
    return frame


def _make_series(dec: Decoder, payload, depth, _):
    import pandas as pd

    values, index, name = payload
    return pd.Series(_make_values(dec, values, depth), index=_make_index(dec, index, depth), name=dec.decode(name))


def _make_timestamp(dec: Decoder, payload, depth, _):
    import pandas as pd

    value, tz, unit = payload
    stamp = pd.Timestamp(int(value), tz="UTC").tz_convert(_make_tz(dec, tz)) if tz else pd.Timestamp(int(value))
    return stamp.as_unit(str(unit))


def _typecode(code):
    if type(code) is not str or len(code) != 1 or code not in "bBhHiIlLqQfd":
        raise ValueError("malformed array.array")
    return code


def _pandas_constant(name):
    def make(dec, payload, depth, _):
        import pandas as pd

        return getattr(pd, name)

    return make


def _opaque(dec: Decoder, payload, depth, data):
    handle = data.get("h")
    if handle in dec.handles:
        return dec.handles[handle]
    return Opaque(str(payload)[:80], handle if type(handle) is int else None)


def _figure_object(dec: Decoder, payload, depth, _):
    if type(payload) is not int or not 0 <= payload < len(dec.figures):
        raise ValueError("malformed figure reference")
    return dec.figures[payload]


def _named_module(dec: Decoder, payload, depth, _):
    if payload not in NAMED_MODULES:
        raise ValueError("malformed module")
    import importlib

    return importlib.import_module(payload)


def _numpy_dtype(dec, payload, depth, _):
    import numpy as np

    return np.dtype(str(payload))


_DECODERS = {
    "c": lambda dec, p, depth, _: complex(float(p[0]), float(p[1])),
    "b": lambda dec, p, depth, _: bytes.fromhex(p),
    "ba": lambda dec, p, depth, _: bytearray.fromhex(p),
    "t": lambda dec, p, depth, _: tuple(dec.items(p, depth)),
    "s": lambda dec, p, depth, _: set(dec.items(p, depth)),
    "fs": lambda dec, p, depth, _: frozenset(dec.items(p, depth)),
    "d": lambda dec, p, depth, _: dict(dec.pairs(p, depth)),
    "od": lambda dec, p, depth, _: collections.OrderedDict(dec.pairs(p, depth)),
    "ctr": lambda dec, p, depth, _: collections.Counter(dict(dec.pairs(p, depth))),
    "dd": _make_defaultdict,
    "dq": lambda dec, p, depth, _: collections.deque(dec.items(p[0], depth), p[1]),
    "r": lambda dec, p, depth, _: range(int(p[0]), int(p[1]), int(p[2])),
    "nt": _make_namedtuple,
    "td": lambda dec, p, depth, _: datetime.timedelta(int(p[0]), int(p[1]), int(p[2])),
    "dt": _make_datetime,
    "date": lambda dec, p, depth, _: datetime.date.fromisoformat(p),
    "time": _make_time,
    "dec": lambda dec, p, depth, _: decimal.Decimal(str(p)),
    "fr": lambda dec, p, depth, _: fractions.Fraction(int(p[0]), int(p[1])),
    "uuid": lambda dec, p, depth, _: uuid.UUID(str(p)),
    "path": lambda dec, p, depth, _: PATHS[p[0]](str(p[1])),
    "arr": lambda dec, p, depth, _: array.array(_typecode(p[0]), p[1]),
    "bio": _make_buffer,
    "sio": _make_buffer,
    "ip": lambda dec, p, depth, _: {c.__name__: c for c in IP_TYPES}[p[0]](str(p[1])),
    "st": lambda dec, p, depth, _: time.struct_time(p[0], {"tm_zone": p[1], "tm_gmtoff": p[2]}),
    "sns": lambda dec, p, depth, _: types.SimpleNamespace(**{str(k): dec.decode(v, depth) for k, v in p}),
    "exc": _make_exception,
    "lst": _make_library_object,
    "type": _make_class,
    "enum": _make_enum,
    "nd": lambda dec, p, depth, _: _make_array(dec, p, depth),
    "ns": _make_scalar,
    "ndt": _numpy_dtype,
    "pdf": _make_frame,
    "pds": _make_series,
    "pdi": lambda dec, p, depth, _: _make_index(dec, p, depth),
    "nat": _pandas_constant("NaT"),
    "na": _pandas_constant("NA"),
    "ts": _make_timestamp,
    "tdl": lambda dec, p, depth, _: __import__("pandas").Timedelta(int(p[0]), unit="ns").as_unit(str(p[1])),
    "o": _opaque,
    "mpl": _figure_object,
    "mod": _named_module,
    "nan": lambda dec, p, depth, _: getattr(
        sys.modules.get(p) if p in ("numpy", "math") else None, "nan", float("nan")
    ),
    "h": lambda dec, p, depth, data: dec.handles[p] if p in dec.handles else Opaque("object"),
}


def decode(data: object) -> object:
    """A value built from `encode`'s data by this process's own code (`ValueError` if malformed)."""
    return Decoder().decode(data)
