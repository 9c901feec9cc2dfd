"""How a user's mistake found when an eval starts (a bad `-S`/`-T`/`-M` option, pool or data file)
ends `inspect eval`: one line on stderr and exit status 1, no traceback, whatever `--display` says.

Inspect's exception hook prints a `PrerequisiteError` through its console, which `--display
none` silences (the command exits 1 with no word); it exits 1 and prints nothing for a
`SilentException`. So `refuse` prints the message itself and raises a `SilentException`, as
Inspect does for `--json`. `SilentException` is private to Inspect: this module is the one
place that names it (and `PrerequisiteError`, which Inspect prints cleanly itself);
tests/startup/test_start_checks.py and tests/conductor_model/test_conductor_provider_start.py
fail if Inspect changes them.
"""

from __future__ import annotations

import sys
from functools import cache
from typing import Any, TypeVar

from inspect_ai._util.error import PrerequisiteError, SilentException

T = TypeVar("T")


class StartError(SilentException):
    """A bad option, pool or data file, refused before any sample runs."""


def refuse(error: Exception) -> StartError:
    """Print `error`'s message to stderr once; the exception to raise instead of it (Inspect's
    CLI exits 1 on it silently). It keeps `error`'s type for Python callers: an `except
    SourceError` or `except ValueError` that caught `error` catches it too."""
    message = str(error)
    print(f"error: {message}", file=sys.stderr, flush=True)
    kind = _refused_class(type(error))
    return kind.__new__(kind, message)  # not kind(message): `error`'s __init__ may want other arguments


@cache
def _refused_class(kind: type[Exception]) -> type[StartError]:
    return type(kind.__name__, (StartError, kind), {"__module__": kind.__module__, "__str__": Exception.__str__})


def start_error(message: str) -> StartError:
    """`refuse` for a message of our own (a `ValueError` to Python callers)."""
    return refuse(ValueError(message))


def printed_cleanly(error: BaseException) -> bool:
    """Whether `error` already reached the user as a message without a traceback."""
    return isinstance(error, (StartError, PrerequisiteError))


@cache
def start_checked(api: type[T]) -> type[T]:
    """`api`, a model provider class, whose constructor's ValueError (a model name or model arg it
    does not know: `--model sim/zzz`, `--model-role workers=local/nope`) is `refuse`d: one line,
    no traceback, whichever `--display`; other errors pass unchanged. One subclass per class
    (cached), so class-level state stays shared."""

    class Checked(api):  # type: ignore[valid-type,misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            try:
                super().__init__(*args, **kwargs)
            except ValueError as error:
                if printed_cleanly(error):
                    raise
                raise refuse(error) from None

    Checked.__name__, Checked.__qualname__, Checked.__doc__ = api.__name__, api.__qualname__, api.__doc__
    return Checked
