"""GBNF grammars (llama.cpp) that force valid output from tiny local models.

Pure Python, no Inspect import. Pass a grammar to a llama.cpp-backed model with
``GenerateConfig(extra_body={"grammar": workflow_grammar(3)})`` (the `local`
provider, or `openai-api` pointed at a llama.cpp server).

* `workflow_grammar(n_workers, max_steps)` admits an optional bounded reasoning
  field (one line, `max_reasoning_chars`), then the three Conductor lists in the
  paper's format (equal length 1..max_steps, worker ids in range, access entries
  ``["all"]`` or ``[]``; with ``access="indices"`` also lists of strictly earlier
  steps)::

      Ask a solver, then a checker.
      model_id = [2, 0]
      subtasks = ["Solve the problem.", "Check the solution above."]
      access_list = [[], ["all"]]

* `answer_grammar(choices)` admits free text (bounded) then a last line
  ``ANSWER: X``, X one of `choices` when given.

Both are plain strings; `grammar_rules` / `undefined_rules` check one's shape
without a model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Constraint",
    "answer_constraint",
    "workflow_constraint",
    "answer_grammar",
    "answer_max_chars",
    "gbnf_literal",
    "grammar_rules",
    "undefined_rules",
    "workflow_grammar",
    "workflow_max_chars",
]

# Character sets are printable ASCII, so one character is at most one token and
# `*_max_chars` bounds the number of tokens too (a non-ASCII char can take 4 byte
# tokens).
# subtask strings: printable ASCII except quote and backslash, plus the escapes
# \" \\ \n \t that ast.literal_eval reads back unambiguously
_STRING_CHAR = r"""[ !#-\[\]-~] | "\\" ["\\nt]"""
# the reasoning line: printable ASCII without "=" (it can never look like an
# assignment to a line-based parser) and without "`" (no code fence)
_REASON_CHAR = r"[ -<>-_a-~]"
# free text of an answer: printable ASCII, newline, tab
_TEXT_CHAR = r"[ -~\n\t]"


def gbnf_literal(text: str) -> str:
    """`text` as a double-quoted GBNF string literal."""
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _rep(symbol: str, lo: int, hi: int) -> str:
    return f"{symbol}{{{lo},{hi}}}"


def workflow_grammar(
    n_workers: int,
    max_steps: int = 5,
    *,
    max_subtask_chars: int = 300,
    max_reasoning_chars: int = 200,
    allow_empty: bool = False,
    access: str = "binary",
) -> str:
    """GBNF admitting only a valid workflow for a pool of `n_workers` (ids 0..n-1).

    One alternative per step count k = 1..max_steps keeps the three lists the same
    length. Access entry of step i: ``["all"]`` or ``[]``; with ``access="indices"``
    also ``"all"`` or a strictly increasing list of indices in 0..i-1 (step 0: only
    the all-or-nothing forms). Subtasks are
    double-quoted, one line, 1..max_subtask_chars characters starting with a letter
    (escapes \\" \\\\ \\n \\t). Set max_tokens to at least
    `workflow_max_chars(...)` (same arguments) so that output can always finish.
    ``max_reasoning_chars=0`` drops the reasoning line. ``allow_empty`` also admits
    three empty lists (a recursive round keeping the previous answer).
    """
    if n_workers < 1:
        raise ValueError("n_workers must be >= 1")
    if max_steps < 1:
        raise ValueError("max_steps must be >= 1")
    if max_subtask_chars < 1:
        raise ValueError("max_subtask_chars must be >= 1")
    if max_reasoning_chars < 0:
        raise ValueError("max_reasoning_chars must be >= 0")
    if access not in ("binary", "indices"):
        raise ValueError('access must be "binary" or "indices"')

    rules: list[str] = []
    if max_reasoning_chars > 0:
        rules.append("root ::= (reasoning nl)? workflow")
        rules.append(f"reasoning ::= {_rep('rchar', 1, max_reasoning_chars)}")
        rules.append(f"rchar ::= {_REASON_CHAR}")
    else:
        rules.append("root ::= workflow")
    rules.append('nl ::= "\\n"')
    counts = range(0 if allow_empty else 1, max_steps + 1)
    rules.append("workflow ::= " + " | ".join(f"wf{k}" for k in counts))
    if allow_empty:
        rules.append('wf0 ::= "model_id = []" nl "subtasks = []" nl "access_list = []"')

    sep = '", "'
    for k in range(1, max_steps + 1):
        ids = f" {sep} ".join(["wid"] * k)
        subs = f" {sep} ".join(["subtask"] * k)
        accs = f" {sep} ".join(f"acc{i}" for i in range(k))
        rules.append(f'wf{k} ::= "model_id = [" {ids} "]" nl "subtasks = [" {subs} "]" nl "access_list = [" {accs} "]"')

    rules.append("wid ::= " + " | ".join(f'"{w}"' for w in range(n_workers)))
    # a subtask starts with a letter (an instruction, not ".3" or ", 2.41")
    rest = f" {_rep('schar', 0, max_subtask_chars - 1)}" if max_subtask_chars > 1 else ""
    rules.append(f'subtask ::= "\\"" [A-Za-z]{rest} "\\""')
    rules.append(f"schar ::= {_STRING_CHAR}")

    # access entries: accI for step I; inc{I}-{J} = strictly increasing list of
    # indices < I starting with J
    if access == "binary":
        rules.append('accall ::= "[\\"all\\"]" | "[]"')
        rules += [f"acc{i} ::= accall" for i in range(max_steps)]
        return "\n".join(rules) + "\n"
    rules.append('accall ::= "[\\"all\\"]" | "\\"all\\"" | "[]"')
    for i in range(max_steps):
        if i == 0:
            rules.append("acc0 ::= accall")
            continue
        starts = " | ".join(f"inc{i}-{j}" for j in range(i))
        rules.append(f'acc{i} ::= accall | "[" ({starts}) "]"')
        for j in range(i):
            nexts = [f"inc{i}-{m}" for m in range(j + 1, i)]
            if nexts:
                rules.append(f'inc{i}-{j} ::= "{j}" ({sep} ({" | ".join(nexts)}))?')
            else:
                rules.append(f'inc{i}-{j} ::= "{j}"')
    return "\n".join(rules) + "\n"


def workflow_max_chars(
    n_workers: int,
    max_steps: int = 5,
    *,
    max_subtask_chars: int = 300,
    max_reasoning_chars: int = 200,
    allow_empty: bool = False,  # accepted so the same arguments fit both; no effect
    access: str = "binary",
) -> int:
    """Upper bound on the length (characters, hence tokens) of a workflow that
    `workflow_grammar` admits with the same arguments (an escape counts 2 chars)."""
    k = max_steps
    sep = 2 * (k - 1)  # ", " between items
    ids = len("model_id = []\n") + k * len(str(n_workers - 1)) + sep
    subtask = 2 + 1 + 2 * (max_subtask_chars - 1)  # quotes, a letter, escapes
    subs = len("subtasks = []\n") + k * subtask + sep
    accs = len("access_list = []") + sep
    for i in range(k):
        longest_list = 2 + sum(len(str(j)) for j in range(i)) + 2 * max(0, i - 1)
        indices = longest_list if i and access == "indices" else 2
        accs += max(len('["all"]'), indices)
    reasoning = max_reasoning_chars + 1 if max_reasoning_chars else 0
    return reasoning + ids + subs + accs


def answer_grammar(
    choices: list[str] | None = None,
    *,
    max_text_chars: int = 400,
    max_answer_chars: int = 100,
) -> str:
    """GBNF for a worker response: optional free text, then a last line ``ANSWER: X``.

    With `choices` (e.g. ``["A", "B", "C", "D"]``) X is exactly one of them;
    otherwise X is a non-empty line of at most `max_answer_chars` characters. The
    free text (newlines allowed) has at most `max_text_chars` characters.
    """
    rules = [
        'root ::= (text nl)? "ANSWER: " answer',
        'nl ::= "\\n"',
        f"text ::= {_rep('tchar', 1, max_text_chars)}" if max_text_chars > 0 else "",
        f"tchar ::= {_TEXT_CHAR}",
    ]
    if max_text_chars <= 0:
        rules = ['root ::= "ANSWER: " answer']
    if choices:
        cleaned = [c for c in dict.fromkeys(choices) if c]
        if not cleaned:
            raise ValueError("choices must contain a non-empty string")
        rules.append("answer ::= " + " | ".join(gbnf_literal(c) for c in cleaned))
    else:
        # the first char is not a space, so "ANSWER:  " cannot end the output blank
        if max_answer_chars < 1:
            raise ValueError("max_answer_chars must be >= 1")
        rest = f" {_rep('achar', 0, max_answer_chars - 1)}" if max_answer_chars > 1 else ""
        rules.append(f"answer ::= achar0{rest}")
        rules.append("achar0 ::= [!-~]")  # not blank
        rules.append("achar ::= [ -~]")
    return "\n".join(r for r in rules if r) + "\n"


def answer_max_chars(
    choices: list[str] | None = None,
    *,
    max_text_chars: int = 400,
    max_answer_chars: int = 100,
) -> int:
    """Upper bound on the length (characters, hence tokens for ASCII choices) of a
    response that `answer_grammar` admits with the same arguments."""
    answer = max((len(c) for c in choices), default=0) if choices else max_answer_chars
    text = max_text_chars + 1 if max_text_chars > 0 else 0
    return text + len("ANSWER: ") + answer


# ------------------------------------------------------------------ shape checks

_TOKEN = re.compile(
    r"""
    (?P<string>"(?:\\.|[^"\\])*")
  | (?P<cls>\[(?:\\.|[^\]\\])*\])
  | (?P<rep>\{\d*(?:,\d*)?\})
  | (?P<name>[a-zA-Z0-9-]+)
  | (?P<op>::=|[()|*+?])
  | (?P<ws>\s+)
  | (?P<comment>\#[^\n]*)
  | (?P<bad>.)
    """,
    re.VERBOSE,
)


def grammar_rules(grammar: str) -> dict[str, list[str]]:
    """Parse GBNF text into {rule name: names it references}.

    A light parser for checking shape (quoted literals, char classes and repetition
    braces are skipped); raises ValueError on a stray character, an unbalanced
    parenthesis, a duplicate rule or a missing ``::=``.
    """
    tokens: list[tuple[str, str]] = []
    for m in _TOKEN.finditer(grammar):
        kind = m.lastgroup or ""
        if kind in ("ws", "comment"):
            continue
        if kind == "bad":
            raise ValueError(f"unexpected character {m.group()!r} at offset {m.start()}")
        tokens.append((kind, m.group()))

    rules: dict[str, list[str]] = {}
    current: str | None = None
    depth = 0
    for idx, (kind, text) in enumerate(tokens):
        is_head = kind == "name" and idx + 1 < len(tokens) and tokens[idx + 1] == ("op", "::=")
        if is_head:
            if depth != 0:
                raise ValueError(f"unbalanced parentheses before rule {text!r}")
            if text in rules:
                raise ValueError(f"rule {text!r} defined twice")
            current = text
            rules[current] = []
            continue
        if current is None:
            raise ValueError("grammar does not start with a rule definition")
        if kind == "op" and text == "::=":
            continue
        if kind == "op" and text == "(":
            depth += 1
        elif kind == "op" and text == ")":
            depth -= 1
            if depth < 0:
                raise ValueError(f"unbalanced ')' in rule {current!r}")
        elif kind == "name":
            rules[current].append(text)
    if depth != 0:
        raise ValueError("unbalanced parentheses at end of grammar")
    return rules


def undefined_rules(grammar: str) -> set[str]:
    """Names referenced but never defined (plus 'root' when it is missing)."""
    rules = grammar_rules(grammar)
    missing = {ref for refs in rules.values() for ref in refs if ref not in rules}
    if "root" not in rules:
        missing.add("root")
    return missing


@dataclass(frozen=True)
class Constraint:
    """A grammar with the token budget that guarantees its output is never cut short."""

    grammar: str
    max_tokens: int


def workflow_constraint(n_workers: int, max_steps: int = 5, **bounds: Any) -> Constraint:
    """`workflow_grammar` paired with its exact length bound (same keyword arguments)."""
    return Constraint(
        workflow_grammar(n_workers, max_steps, **bounds), workflow_max_chars(n_workers, max_steps, **bounds)
    )


def answer_constraint(choices: list[str] | None = None, **bounds: Any) -> Constraint:
    """`answer_grammar` paired with its exact length bound (same keyword arguments)."""
    return Constraint(answer_grammar(choices, **bounds), answer_max_chars(choices, **bounds))
