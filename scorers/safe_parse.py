"""`ast.parse` for untrusted source (model output): bounded, never raises (pure).

CPython's parser refuses pathological nesting with RecursionError or MemoryError, not
SyntaxError (`"-" * 5000 + "1"`, `"not " * 3000`, `"lambda:" * 3000`, `"2**" * 5000`), and
a megabyte of valid code takes seconds and ~1 GB to parse. `safe_parse` returns the tree or
a `ParseFailure` that names why: every parse of model output in the harness goes through it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

MAX_SOURCE_CHARS = 100_000  # ~25k tokens of code; the slowest 100 kB (bare names) parses in ~0.5 s

SYNTAX_ERROR, TOO_DEEP, TOO_LONG, INVALID_SOURCE = "syntax_error", "too_deep", "too_long", "invalid_source"


@dataclass(frozen=True)
class ParseFailure:
    """Why source did not parse: `reason` is one of the constants above; `lineno` /
    `end_lineno` (1-based) and `message` come from the SyntaxError when there is one."""

    reason: str
    message: str
    lineno: int | None = None
    end_lineno: int | None = None

    def __str__(self) -> str:
        return f"{self.reason}: {self.message}"


def safe_parse(source: str, max_chars: int = MAX_SOURCE_CHARS) -> ast.Module | ParseFailure:
    """The module's AST, or a `ParseFailure` (source longer than `max_chars`, a syntax
    error, nesting too deep for the parser, or a string the parser refuses)."""
    if len(source) > max_chars:
        return ParseFailure(TOO_LONG, f"{len(source)} characters of code (limit {max_chars})")
    try:
        return ast.parse(source)
    except SyntaxError as e:  # also IndentationError, TabError
        return ParseFailure(SYNTAX_ERROR, e.msg or "invalid syntax", e.lineno, getattr(e, "end_lineno", None))
    except (RecursionError, MemoryError):
        return ParseFailure(TOO_DEEP, "expressions nested too deeply for Python's parser")
    except (ValueError, OverflowError) as e:  # null bytes, over-long integer literals
        return ParseFailure(INVALID_SOURCE, str(e)[:200] or type(e).__name__)
