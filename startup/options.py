"""Start-time checks of options, shared by the tasks (`-T`) and the solvers (`-S`): a bad option ends
the eval before any sample runs, with one readable line and a non-zero exit (`startup.errors`).

`checked` refuses an option the factory does not take (`-S max_step=3`: "did you mean
'max_steps'?") and turns an `OptionError` (or another refused error) raised while it builds into
that one line; `solvers.options.checked_options` adds the `pool` file's check for solvers.
"""

from __future__ import annotations

import difflib
import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from startup.errors import refuse

F = TypeVar("F", bound=Callable[..., Any])


class OptionError(ValueError):
    """An option value that cannot work. The message names the option and what it expects;
    `option`, `value` and `expected` let another front end (the `conductor/<pool>` provider's
    `-M`) word it for its own flag."""

    def __init__(self, message: str, option: str | None = None, value: object = None, expected: str = "") -> None:
        super().__init__(message)
        self.option, self.value, self.expected = option, value, expected


def need_option(ok: bool, option: str, value: object, expected: str, flag: str = "-S") -> None:
    """Raise the start-up error for an option that is not `expected`."""
    if not ok:
        kind = "task" if flag == "-T" else "solver"
        message = f"invalid {kind} option {flag} {option}={value!r}: expected {expected}"
        raise OptionError(message, option, value, expected)


def is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def unknown_option(name: str, known: list[str], owner: str, flag: str = "-S") -> str:
    """The message for an option `owner` does not take, with the closest known name."""
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    fix = f"did you mean '{close[0]}'?" if close else f"its options: {', '.join(known)}"
    return f"{owner} has no option {flag} {name}; {fix}"


Check = Callable[[Mapping[str, Any]], None]


def checked(factory: F, flag: str, *refused: type[Exception], check: Check | None = None) -> F:
    """`factory` checking its `flag` options when called: an unknown name, `check` of the bound
    arguments, and an `OptionError` or one of `refused` raised while it builds end the eval with
    one line (`startup.errors.refuse`)."""
    signature = inspect.signature(factory)
    known = list(signature.parameters)
    errors = (OptionError, *refused)

    @functools.wraps(factory)
    def build(*args: Any, **kwargs: Any) -> Any:
        try:
            for name in kwargs:
                if name not in signature.parameters:
                    raise OptionError(unknown_option(name, known, factory.__name__, flag))
            if check is not None:
                check(signature.bind(*args, **kwargs).arguments)
            return factory(*args, **kwargs)
        except errors as error:
            raise refuse(error) from None

    return build  # type: ignore[return-value]
