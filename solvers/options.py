"""Start-time checks of solver options: `checked_options` is `startup.options.checked` for `-S`,
plus the `pool` option's pool file (loaded once, cached; `workers.pools` says what is wrong in it).

    @solver
    @checked_options
    def my_solver(pool: str | None = None, rounds: int = 1) -> Solver:
        need_option(rounds >= 1, "rounds", rounds, "an integer >= 1")
        ...
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from startup.options import checked, is_int, need_option
from workers.pools import PoolError, load_pool

F = TypeVar("F", bound=Callable[..., Any])


def check_pool_option(pool: object, flag: str = "-S") -> None:
    """A `pool` option names a bundled pool or a valid pool YAML file (loaded once, cached)."""
    if pool is None:
        return
    need_option(isinstance(pool, str), "pool", pool, "a bundled pool name or a pool YAML path", flag)
    load_pool(pool)  # type: ignore[arg-type]


def check_worker_option(worker: object, pool: str | None) -> None:
    """A `worker` option is an index into the pool's workers. Checked against the pool when one is
    named; without one the workers may come from `--model-role workers`, given to `eval()` after
    the solver is built, so the sample checks it."""
    need_option(is_int(worker) and worker >= 0, "worker", worker, "a pool index >= 0")  # type: ignore[operator]
    if pool is None:
        return
    size = len(load_pool(pool).workers)
    need_option(worker < size, "worker", worker, f"a pool index 0..{size - 1} (the pool has {size} workers)")  # type: ignore[operator]


def _pool_of(arguments: Mapping[str, Any]) -> None:
    if "pool" in arguments:
        check_pool_option(arguments["pool"])


def checked_options(factory: F) -> F:
    """Check a solver factory's `-S` options when Inspect builds it (put it under `@solver`)."""
    return checked(factory, "-S", PoolError, check=_pool_of)
