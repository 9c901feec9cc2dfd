"""BigCodeBench's official `sanitize`, mirrored rule by rule with `ast` (pure, bounded).

Mirrors bigcodebench 0.2.5 `bigcodebench/sanitize.py` (tree-sitter there):

* `code_extract(text)`: the span of lines i..j (j > i) of the WHOLE answer that
  parses and has the most non-blank lines; ties go to the smallest i, then j; when
  nothing parses, the first line. Computed here without the official cubic scan:
  parsing depends only on the first and last non-blank lines of a span, so spans are
  tried by decreasing non-blank count (a heap of start lines); lines that cannot start a
  program (indented, or a complete line that is itself invalid) are skipped. Once a span
  from a start fails on a line that no shorter span from it can avoid (a token the
  parser cannot continue from, an unclosed bracket or string), the spans from that start
  reaching that line are skipped, and so are those from the top-level statements between
  the start and that line (were such a span a program, the statements before it plus it
  would be one too). Parses go through `scorers.safe_parse` (pathological nesting is a
  failure, not a RecursionError). The search stops after `MAX_PARSES` parses or
  `MAX_PARSED_CHARS` parsed characters (~0.1 s; `bounded=False`, and `sanitize` returns
  the code as given: the caller falls back). Agreement with the package's own
  `code_extract`/`sanitize` is tested on fixtures (tests/scorers/test_bcb_official_parity.py)
  and with the cubic scan itself on generated answers (tests/scorers/test_parse_bombs.py).
* `sanitize(code, entry_point)`: on the extracted span keep, in order, every
  top-level import (not `from __future__`), then the top-level undecorated
  functions, classes and assignments (`x = ...`, `x: T = ...`; first definition of a
  name wins) that the entry point reaches through identifiers; drop the trailing
  non-indented lines that mention the entry point; empty -> `code_extract(code)`.
"""

from __future__ import annotations

import ast
import bisect
import heapq
from dataclasses import dataclass

from scorers.safe_parse import SYNTAX_ERROR, ParseFailure, safe_parse

MAX_PARSES = 2000
MAX_PARSED_CHARS = 150_000


@dataclass(frozen=True)
class Extraction:
    code: str
    bounded: bool  # False: the search hit its bound and fell back


_OPEN_ENDED = ("EOF", "expected an indented block", "incomplete", "unexpected end")
_UNCLOSED = ("never closed", "unterminated")  # reported at the opening bracket or quote


class _BudgetSpent(Exception):
    pass


def _failure_line(failure: ParseFailure, last_line: int) -> int | None:
    """For a span that does not parse: the 0-based line from which on no shorter span from the
    same start parses either: a token the parser could not continue from, or an unclosed
    bracket or string (still unclosed in every shorter span that holds its opening). None
    when the failure may be repairable (missing block, input ended, error on the last line,
    nesting too deep)."""
    if failure.reason != SYNTAX_ERROR or not failure.lineno:
        return None
    if any(word in failure.message for word in _UNCLOSED):
        line = failure.lineno - 1
    elif any(word in failure.message for word in _OPEN_ENDED):
        return None
    else:
        line = max(failure.lineno, failure.end_lineno or failure.lineno) - 1
    return line if line < last_line else None


def _may_start(line: str) -> bool:
    """False when no program can start with `line` (so no span starting there parses)."""
    if line.lstrip().startswith("#"):
        return True  # a comment line, whatever its indentation
    if line[:1] in (" ", "\t"):
        return False  # unexpected indent
    if line.startswith("@"):
        return True  # a decorator needs the next line
    tree = safe_parse(line)
    if not isinstance(tree, ParseFailure):
        return True
    if tree.reason != SYNTAX_ERROR:
        return False
    incomplete = ("never closed", "unexpected EOF", "expected an indented block", "unterminated triple",
                  "incomplete input", "EOF while scanning", "unexpected end")  # fmt: skip
    return any(word in tree.message for word in incomplete) or line.rstrip().endswith(("\\", ",", ":"))


class _Search:
    """One span search: per start (index into the non-blank lines) the most non-blank lines a
    span from it may still have, whether it may start a program at all, the parse outcome
    of each span tried, and the budget spent (span parses, characters parsed)."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.nonblank = [k for k, line in enumerate(lines) if line.strip()]
        self.limit = {a: len(self.nonblank) - a for a in range(len(self.nonblank))}
        self.starts: dict[int, bool] = {}  # start -> _may_start, asked when its first span is due
        self.outcome: dict[tuple[int, int], int | None] = {}  # (start, count) -> -1 (parses) or failure line
        self.statements: dict[tuple[int, int], list[int]] = {}  # of a span that parses: its statement lines
        self.parses, self.chars = 0, 0

    def may_start(self, a: int) -> bool:
        """`_may_start` of start `a` (its line's characters count against the budget)."""
        if a not in self.starts:
            line = self.lines[self.nonblank[a]]
            self._spend(len(line), parses=0)
            self.starts[a] = _may_start(line)
        return self.starts[a]

    def _spend(self, chars: int, parses: int = 1) -> None:
        self.parses, self.chars = self.parses + parses, self.chars + chars
        if self.parses > MAX_PARSES or self.chars > MAX_PARSED_CHARS:
            raise _BudgetSpent

    def failure(self, a: int, count: int) -> int | None:
        """-1 when the span of `count` non-blank lines from start `a` parses, else its
        `_failure_line`. Raises _BudgetSpent past MAX_PARSES or MAX_PARSED_CHARS."""
        if (a, count) not in self.outcome:
            first, last = self.nonblank[a], self.nonblank[a + count - 1]
            source = "\n".join(self.lines[first : last + 1])
            self._spend(len(source))
            tree = safe_parse(source)
            if isinstance(tree, ParseFailure):
                self.outcome[a, count] = _failure_line(tree, last - first)
            else:
                self.outcome[a, count] = -1
                self.statements[a, count] = [  # undecorated top-level statements starting a line
                    first + node.lineno - 1
                    for node in tree.body
                    if node.col_offset == 0 and not getattr(node, "decorator_list", None)
                ]
        return self.outcome[a, count]

    def rule_out(self, a: int, count: int, failure: int | None) -> None:
        """Span (a, count) failed: only shorter spans from `a`, none reaching the failure line.
        When the lines before that line parse (program P), a start at one of P's top-level
        statements cannot reach it either: were that span a program B, P's statements before
        it followed by B would be one, and they are the failed span from `a`."""
        self.limit[a] = count - 1
        if failure is None:
            return
        first = self.nonblank[a]
        dead = bisect.bisect_left(self.nonblank, first + failure)  # index of the failure line
        self.limit[a] = min(count - 1, dead - a)
        if self.limit[a] <= 0 or self.failure(a, self.limit[a]) != -1:
            return
        for line in self.statements[a, self.limit[a]]:
            b = bisect.bisect_left(self.nonblank, line)
            if b > a:
                self.limit[b] = min(self.limit[b], dead - b)


def longest_span(text: str) -> tuple[int, int] | None:
    """(i, j) of the official `code_extract` span, or None when the bound was hit.

    Candidates come off a heap in the official order (most non-blank lines, then the
    smallest i): one entry per non-blank line, holding the longest span from it not yet
    ruled out (an entry whose limit dropped meanwhile goes back in with the new limit);
    a line that cannot start a program is dropped when its entry first comes up."""
    lines = text.split("\n")
    search = _Search(lines)
    nonblank = search.nonblank
    heap = [(-count, a) for a, count in search.limit.items()]
    heapq.heapify(heap)
    try:
        while heap:
            count, a = heapq.heappop(heap)
            count = -count
            if not search.may_start(a):
                continue
            if count > search.limit[a]:
                if search.limit[a] > 0:
                    heapq.heappush(heap, (-search.limit[a], a))
                continue
            last = nonblank[a + count - 1]
            i = nonblank[a - 1] + 1 if a > 0 else 0
            j = last if last > i else i + 1
            if j >= len(lines) or (j > last and lines[j].strip()):
                continue  # no span i..j (j > i) with exactly `count` non-blank lines; nor fewer
            failure = search.failure(a, count)
            if failure == -1:
                return i, j
            search.rule_out(a, count, failure)
            if search.limit[a] > 0:
                heapq.heappush(heap, (-search.limit[a], a))
    except _BudgetSpent:
        return None
    return 0, 0


def code_extract(text: str) -> Extraction:
    span = longest_span(text)
    if span is None:
        return Extraction(text, bounded=False)
    lines = text.split("\n")
    return Extraction("\n".join(lines[span[0] : span[1] + 1]), bounded=True)


# --------------------------------------------------------------------------- node filtering


def _identifiers(node: ast.AST) -> set[str]:
    """Every identifier token in a node, as tree-sitter's `identifier` leaves."""
    names: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            names.add(sub.id)
        elif isinstance(sub, ast.Attribute):
            names.add(sub.attr)
        elif isinstance(sub, ast.arg):
            names.add(sub.arg)
        elif isinstance(sub, ast.keyword) and sub.arg:
            names.add(sub.arg)
        elif isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(sub.name)
        elif isinstance(sub, ast.alias):
            names.update(sub.name.split("."))
            if sub.asname:
                names.add(sub.asname)
        elif isinstance(sub, ast.ImportFrom) and sub.module:
            names.update(sub.module.split("."))
        elif isinstance(sub, ast.Global | ast.Nonlocal):
            names.update(sub.names)
        elif isinstance(sub, ast.ExceptHandler) and sub.name:
            names.add(sub.name)
        elif isinstance(sub, ast.MatchAs | ast.MatchStar) and sub.name:
            names.add(sub.name)
    return names


def _definition(node: ast.stmt) -> tuple[bool, str | None]:
    """(is a kept kind, its name) for a top-level statement, as the official walk sees it."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return (not node.decorator_list), node.name  # decorated: tree-sitter's decorated_definition
    if isinstance(node, ast.Assign):
        target = node.targets[0]
        return True, target.id if isinstance(target, ast.Name) else None
    if isinstance(node, ast.AnnAssign):
        return True, node.target.id if isinstance(node.target, ast.Name) else None
    return False, None


def _width(line: bytes) -> int:
    """Indentation width as tree-sitter's scanner counts it (a tab to the next multiple of 8)."""
    width = 0
    for ch in line:
        if ch == 0x20:
            width += 1
        elif ch == 0x09:
            width = width // 8 * 8 + 8
        else:
            break
    return width


def _block_end(raw: list[bytes], node: ast.stmt) -> tuple[int, int]:
    """(line index, byte column) where tree-sitter ends a def/class: after its last
    statement's trailing comment and after the following comment-only lines indented at
    least as deep as its body (blank lines between them allowed)."""
    last_line, end_col = (node.end_lineno or node.lineno) - 1, node.end_col_offset or 0
    tail = raw[last_line][end_col:]
    if tail.strip().startswith(b"#"):
        end_col = len(raw[last_line].rstrip(b" \t\r"))
    body = node.body[0]  # type: ignore[attr-defined]
    if body.lineno == node.lineno:
        return last_line, end_col  # a one-line body: no block to extend
    depth = _width(raw[body.lineno - 1])
    k = last_line + 1
    while k < len(raw):
        stripped = raw[k].strip()
        if stripped.startswith(b"#") and _width(raw[k]) >= depth:
            last_line, end_col = k, len(raw[k].rstrip(b" \t\r"))
        elif stripped:
            break
        k += 1
    return last_line, end_col


def _text(source: str, offsets: list[int], node: ast.stmt) -> str:
    data = source.encode("utf-8")
    start = offsets[node.lineno - 1] + node.col_offset
    end_line, end_col = (node.end_lineno or node.lineno) - 1, node.end_col_offset or 0
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        end_line, end_col = _block_end(data.split(b"\n"), node)
    return data[start : offsets[end_line] + end_col].decode("utf-8")


def _line_offsets(source: str) -> list[int]:
    offsets, total = [], 0
    for line in source.encode("utf-8").split(b"\n"):
        offsets.append(total)
        total += len(line) + 1
    return offsets


def extract_target_code_or_empty(code: str, entry_point: str | None) -> tuple[str, bool]:
    extraction = code_extract(code.strip())
    if not extraction.bounded:  # the official span is unknown; the caller falls back
        return "", False
    source = extraction.code
    tree = safe_parse(source)
    if isinstance(tree, ParseFailure):
        return "", True
    offsets = _line_offsets(source)
    imports: list[str] = []
    definitions: list[tuple[str | None, ast.stmt]] = []
    seen: set[str | None] = set()
    for node in tree.body:
        if isinstance(node, ast.Import) or isinstance(node, ast.ImportFrom) and node.module != "__future__":
            imports.append(_text(source, offsets, node))
            continue
        kept, name = _definition(node)
        if kept and name not in seen:
            seen.add(name)
            definitions.append((name, node))
    reachable: set[str | None] = set()
    if entry_point:
        deps = {name: _identifiers(node) for name, node in definitions}
        reachable, queue = {entry_point}, [entry_point]
        while queue:
            for dep in deps.get(queue.pop(0), ()):
                if dep not in reachable:
                    reachable.add(dep)
                    queue.append(dep)
    parts = imports + [_text(source, offsets, n) for name, n in definitions if not entry_point or name in reachable]
    output = "\n".join(parts)
    lines = output.splitlines()
    outer = []
    for k in range(len(lines) - 1, -1, -1):
        if lines[k].startswith(" "):
            break
        if entry_point and entry_point in lines[k]:
            outer.append(k)
    if outer:
        return "\n".join(lines[: outer[-1]]), True
    return output, True


def sanitize(code: str, entry_point: str | None = None) -> Extraction:
    """Official `sanitize`; `bounded=False` (and `code` as given) when the span search hit
    its bound."""
    target, bounded = extract_target_code_or_empty(code, entry_point)
    target = target.strip()
    if target:
        return Extraction(target, bounded)
    if not bounded:  # the search below would hit the bound again
        return Extraction(code, False)
    return code_extract(code)
