"""Inspect command-line options that its parser accepts and then replaces: `inspect eval --epochs 0`
runs its default of one epoch without a word (inspect_ai/_cli/eval.py passes `Epochs(epochs) if epochs
else None`), and a negative count ends in a traceback. A project task is built in the `inspect eval`
process before any sample runs, so it reads the command line there and refuses them
(`startup.options.checked`: one line, exit 1).

`--limit -3` fails in Inspect's own parser (`parse_samples_limit`) before any project code loads:
that traceback is Inspect's, and `nox -s main` checks `--limit` itself before it installs.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from startup.command_line import option_value
from startup.options import OptionError

EVAL_COMMANDS = ("eval", "eval-set")


def eval_arguments(argv: Sequence[str]) -> list[str] | None:
    """The arguments after `inspect eval` (or `eval-set`) when `argv` is Inspect's command line
    (`inspect` or `python -m inspect_ai`), else None (a Python caller, pytest, a server)."""
    if len(argv) < 2 or argv[1] not in EVAL_COMMANDS:
        return None
    program = argv[0]
    if os.path.basename(program) != "inspect" and not program.endswith(os.path.join("inspect_ai", "__main__.py")):
        return None
    return list(argv[2:])


def command_problem(argv: Sequence[str]) -> str | None:
    """The message for an option of `inspect eval` that would be run as something else, or None."""
    args = eval_arguments(argv)
    epochs = None if args is None else option_value(args, "--epochs")
    if epochs is None or not epochs.strip().lstrip("-").isdigit() or int(epochs) >= 1:
        return None
    replaced = " (with 0 Inspect runs its default, one epoch)" if int(epochs) == 0 else ""
    return f"--epochs {epochs.strip()}: give an integer >= 1{replaced}"


def check_inspect_command(_arguments: Mapping[str, Any]) -> None:
    """A task's start-up check (`startup.options.checked(check=...)`): refuse `command_problem`."""
    if problem := command_problem(sys.argv):
        raise OptionError(problem)
