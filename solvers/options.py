"""Start-time checks of solver and task options: a bad option or pool file ends the eval
before any sample runs, with one readable line and a non-zero exit (`workers.start_error`).

    @solver
    @checked_options
    def my_solver(pool: str | None = None, rounds: int = 1) -> Solver:
        need_option(rounds >= 1, "rounds", rounds, "an integer >= 1")
        ...

`checked_options` refuses an option the solver does not take (`-S max_step=3`: "did you
mean 'max_steps'?"), loads the `pool` option's pool file (`workers.pools` says what is wrong
in it) and turns an `OptionError` or `PoolError` raised while the solver is built into that
one line. Tasks use `checked` with `-T` (`tasks.common.checked_task`).
"""

from __future__ import annotations

import difflib
import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from workers.pools import PoolError, load_pool
from workers.start_error import refuse

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


def check_pool_option(pool: object, flag: str = "-S") -> None:
    """A `pool` option names a bundled pool or a valid pool YAML file (loaded once, cached)."""
    if pool is None:
        return
    need_option(isinstance(pool, str), "pool", pool, "a bundled pool name or a pool YAML path", flag)
    load_pool(pool)  # type: ignore[arg-type]


def checked_options(factory: F) -> F:
    """Check a solver factory's `-S` options when Inspect builds it (put it under `@solver`)."""
    return checked(factory, "-S")


def checked(factory: F, flag: str, *refused: type[Exception]) -> F:
    """`factory` checking its `flag` options when called: an unknown name, the `pool` file,
    and an `OptionError`, `PoolError` or one of `refused` raised while it builds end the eval
    with one line (`workers.start_error.refuse`)."""
    signature = inspect.signature(factory)
    known = list(signature.parameters)
    errors = (OptionError, PoolError, *refused)

    @functools.wraps(factory)
    def build(*args: Any, **kwargs: Any) -> Any:
        try:
            for name in kwargs:
                if name not in signature.parameters:
                    raise OptionError(unknown_option(name, known, factory.__name__, flag))
            bound = signature.bind(*args, **kwargs)
            if "pool" in bound.arguments:
                check_pool_option(bound.arguments["pool"], flag)
            return factory(*args, **kwargs)
        except errors as error:
            raise refuse(error) from None

    return build  # type: ignore[return-value]
