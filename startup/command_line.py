"""Reading an `inspect eval` command line (standard library only: the noxfile imports it before any install)."""

from __future__ import annotations

from collections.abc import Sequence


def option_value(args: Sequence[str], name: str) -> str | None:
    """The value of `name` (`--epochs 3` or `--epochs=3`; the last one, as click takes it), or None."""
    value = None
    for i, arg in enumerate(args):
        if arg == name and i + 1 < len(args):
            value = args[i + 1]
        elif arg.startswith(f"{name}="):
            value = arg.split("=", 1)[1]
    return value
