"""`StartError`: a user's mistake found when Inspect constructs a model (bad `-M` option, missing
pool file), which `inspect eval` prints as one readable message, without a traceback, and exits 1.

Inspect's exception hook prints exactly its private `PrerequisiteError` that way (checked in
Inspect 0.3.285, `inspect_ai._util.error.exception_hook`); this module is the one place that
imports it, and `tests/test_conductor_provider_start.py` fails if Inspect changes that.
"""

from __future__ import annotations

from inspect_ai._util.error import PrerequisiteError
from rich.text import Text


class StartError(PrerequisiteError, ValueError):
    """One readable start-up message; a ValueError to Python callers of `get_model()`."""

    def __init__(self, message: str) -> None:
        super().__init__(Text(message))  # Text: printed as written, never read as rich markup


def printed_cleanly(error: BaseException) -> bool:
    """Whether Inspect's CLI already prints `error` as a message without a traceback."""
    return isinstance(error, PrerequisiteError)
