"""BigCodeBench's official `sanitize`, mirrored rule by rule with `ast` (pure, bounded).

Mirrors bigcodebench 0.2.5 `bigcodebench/sanitize.py` (tree-sitter there):

* `code_extract(text)`: the span of lines i..j (j > i) of the WHOLE answer that
  parses and has the most non-blank lines; ties go to the smallest i, then j; when
  nothing parses, the first line. Computed here without the official cubic scan:
  parsing depends only on the first and last non-blank lines of a span, so spans are
  tried by decreasing non-blank count; lines that cannot start a program (indented,
  or a complete line that is itself invalid) are skipped, and once a span from a
  start fails on a line that no appended text can repair, the spans from that start
  reaching that line are skipped. The search stops after `MAX_PARSES` parses or
  `MAX_PARSED_CHARS` parsed characters (`bounded=False`; the caller falls back).
  Agreement with the package's own `code_extract`/`sanitize` is tested on fixtures
  (tests/test_bcb_official_parity.py).
* `sanitize(code, entry_point)`: on the extracted span keep, in order, every
  top-level import (not `from __future__`), then the top-level undecorated
  functions, classes and assignments (`x = ...`, `x: T = ...`; first definition of a
  name wins) that the entry point reaches through identifiers; drop the trailing
  non-indented lines that mention the entry point; empty -> `code_extract(code)`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

MAX_PARSES = 2000
MAX_PARSED_CHARS = 2_000_000


@dataclass(frozen=True)
class Extraction:
    code: str
    bounded: bool  # False: the search hit its bound and fell back


_OPEN_ENDED = ("never closed", "EOF", "unterminated", "expected an indented block", "incomplete", "unexpected end")


def _failure_line(source: str) -> int | None:
    """-1 when `source` parses; else the 0-based line of a syntax error that no text
    appended after the source can repair (a token the parser could not continue
    from), or None when the failure may be repairable (unclosed bracket or string,
    missing block, error on the last line, unparsable for other reasons)."""
    try:
        ast.parse(source)
    except SyntaxError as e:
        if not e.lineno or any(word in (e.msg or "") for word in _OPEN_ENDED):
            return None
        line = max(e.lineno, getattr(e, "end_lineno", None) or e.lineno) - 1
        return line if line < source.count("\n") else None
    except (MemoryError, ValueError, RecursionError, OverflowError):
        return None
    return -1


def _parses(source: str) -> bool:
    return _failure_line(source) == -1


def _may_start(line: str) -> bool:
    """False when no program can start with `line` (so no span starting there parses)."""
    if line.lstrip().startswith("#"):
        return True  # a comment line, whatever its indentation
    if line[:1] in (" ", "\t"):
        return False  # unexpected indent
    if line.startswith("@"):
        return True  # a decorator needs the next line
    try:
        ast.parse(line)
    except SyntaxError as e:
        incomplete = ("never closed", "unexpected EOF", "expected an indented block", "unterminated triple",
                      "incomplete input", "EOF while scanning", "unexpected end")  # fmt: skip
        return any(word in (e.msg or "") for word in incomplete) or line.rstrip().endswith(("\\", ",", ":"))
    except (MemoryError, ValueError, RecursionError, OverflowError):
        return False
    return True


def longest_span(text: str) -> tuple[int, int] | None:
    """(i, j) of the official `code_extract` span, or None when the bound was hit."""
    lines = text.split("\n")
    n = len(lines)
    nonblank = [k for k, line in enumerate(lines) if line.strip()]
    starts = {k: _may_start(lines[k]) for k in nonblank}
    parses, chars = 0, 0
    dead_from: dict[int, int] = {}  # start line -> spans from it ending at or past this line fail
    for count in range(len(nonblank), 0, -1):
        for a in range(len(nonblank) - count + 1):
            first, last = nonblank[a], nonblank[a + count - 1]
            i = nonblank[a - 1] + 1 if a > 0 else 0
            j = last if last > i else i + 1
            if j >= n or (j > last and lines[j].strip()):
                continue  # no span i..j (j > i) with exactly `count` non-blank lines starts here
            if not starts[first] or last >= dead_from.get(first, n):
                continue
            source = "\n".join(lines[first : last + 1])
            parses, chars = parses + 1, chars + len(source)
            if parses > MAX_PARSES or chars > MAX_PARSED_CHARS:
                return None
            failure = _failure_line(source)
            if failure == -1:
                return i, j
            if failure is not None:
                dead_from[first] = min(dead_from.get(first, n), first + failure)
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
    source = extraction.code
    try:
        tree = ast.parse(source)
    except (SyntaxError, MemoryError, ValueError, RecursionError, OverflowError):
        return "", extraction.bounded
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
        return "\n".join(lines[: outer[-1]]), extraction.bounded
    return output, extraction.bounded


def sanitize(code: str, entry_point: str | None = None) -> Extraction:
    """Official `sanitize`; `bounded=False` when a span search hit its bound."""
    target, bounded = extract_target_code_or_empty(code, entry_point)
    target = target.strip()
    if target:
        return Extraction(target, bounded)
    fallback = code_extract(code)
    return Extraction(fallback.code, bounded and fallback.bounded)
