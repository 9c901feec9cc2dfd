"""Code extraction for the code checks (pure: no Inspect import).

Every code benchmark's official harness takes the program from the *last* fenced
block of the model's answer (LiveCodeBench `extract_code`: the text between the
last two lines containing a triple backtick; BigCodeBench and the HumanEval chat
variants do the same). We parse fences a little more carefully than "any line
containing ```" so that a stray inline ``` in prose does not shift the block:

* an opening fence is a line whose first non-blank characters are three or more
  backticks (or tildes), optionally followed by an info string (``python``);
* the block closes at the next line consisting only of a fence of the same
  character, at least as long as the opening one;
* indentation of the opening fence is removed from the block's lines (CommonMark);
* a block left open at the end of the text (truncated output) does not count,
  as in the official harness, unless ``allow_unclosed=True``.

LiveCodeBench does not use these helpers: it applies the official rule exactly
(`scorers.code_lcb.extract_code`), stray inline fences and indentation included.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from scorers.extract import CheckResult

_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\n]*?)[ \t]*$")
_CLOSE = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})[ \t]*$")


@dataclass(frozen=True)
class CodeCheckResult(CheckResult):
    """A code check's outcome plus its execution details (verdict, failing test, ...).

    `details` goes into the Inspect score metadata; `extracted` is the code that ran.
    """

    details: dict[str, Any] = field(default_factory=dict)


def tagged_line(stdout: str, tag: str) -> str | None:
    """What follows `tag` on the LAST stdout line that starts with it (a trusted driver's
    verdict line; earlier lines may be forged by the program under test)."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(tag):
            return line[len(tag) :]
    return None


@dataclass(frozen=True)
class CodeBlock:
    """One fenced block: `language` is the first word of the info string, lower case."""

    language: str
    code: str
    closed: bool = True


def _dedent(line: str, indent: int) -> str:
    i = 0
    while i < indent and i < len(line) and line[i] in " \t":
        i += 1
    return line[i:]


def code_blocks(completion: str | None, *, allow_unclosed: bool = False) -> list[CodeBlock]:
    """All fenced blocks of `completion`, in order."""
    if not completion:
        return []
    lines = completion.replace("\r\n", "\n").split("\n")
    blocks: list[CodeBlock] = []
    i = 0
    while i < len(lines):
        m = _OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        fence = m.group("fence")
        indent = len(m.group("indent"))
        info = m.group("info").strip()
        language = info.split()[0].lower() if info else ""
        body: list[str] = []
        j = i + 1
        closed = False
        while j < len(lines):
            c = _CLOSE.match(lines[j])
            if c and c.group("fence")[0] == fence[0] and len(c.group("fence")) >= len(fence):
                closed = True
                break
            body.append(_dedent(lines[j], indent))
            j += 1
        if closed or allow_unclosed:
            blocks.append(CodeBlock(language, "\n".join(body), closed))
        i = j + 1
    return blocks


def last_code_block(
    completion: str | None,
    *,
    language: str | None = None,
    allow_unclosed: bool = False,
) -> str | None:
    """Code of the last fenced block, or None when there is none.

    `language` (e.g. "python") restricts to blocks tagged with that language or
    untagged ones; by default any block counts, as in the official harnesses.
    An empty block gives "" (distinct from None: "no block at all").
    """
    blocks = code_blocks(completion, allow_unclosed=allow_unclosed)
    if language is not None:
        wanted = {language.lower(), ""}
        if language.lower() == "python":
            wanted |= {"py", "python3"}
        blocks = [b for b in blocks if b.language in wanted]
    if not blocks:
        return None
    return blocks[-1].code
