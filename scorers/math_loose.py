"""Loosely written LaTeX and plain-SymPy forms read as meant (pure; used by scorers.math_forms/math_equiv).

- `rewrite_loose` (both answer and reference): `\\π` as `\\pi`; the radical sign before a bracket, a number
  or one letter (`√(a²+b²)`, `√16` = 4, `√x`; not `√ab`); a lost backslash before a one-token argument
  (`sqrt3`, `frac12`); roots with parentheses or a bare argument (`\\sqrt(4)`, `\\sqrt[4](16)`, `\\sqrt [3]8`);
  a function name glued to one of u-z (`sinx`; not `sinh`, `cost`); `\\cos^2 t`; a number times a number in parentheses
  (`36(64)`, which math-verify reads as 36 + 64); thousands commas in a number that stands in an expression
  (`100,000=72,300(1.008)^x`, `+2,500`; not `(1,000)` nor `1,000, 2,000`); a unit
  word then `squared`/`cubed` (`12\\text{ cm}\\text{ squared}` is 12 cm^2, while `12 squared` stays a value
  word); e and pi printed to 12 or more significant digits (`2.71828182845905`); square brackets as grouping
  in plain SymPy (`8*[2*cos(t)]^2`; not an interval or list: no comma inside);
- `brace_variables` (what math-verify parses): a letter math-verify would drop as a unit after an algebraic
  expression (a variable, a sum or a relation after the last `=`: `5-5c`, `4+\\frac{1}{240}d`, `7.5\\le c`,
  `\\frac{1}{a}by`) or read as a differential (`da`) is braced, so it stays a variable; after one numeric term
  (`10m`, `\\frac{1}{2} h`, `x = 5 m`) it is left to math-verify's unit reading;
- `shared_labels` (the pair): `\\text{}` words that end both the answer and the reference, the same words,
  at the end of each side of an equation (`6\\text{eggs}`, `\\text{radians per second}`), are a label and
  dropped from both; different words are not dropped.
Every pattern uses bounded repetition: linear in the (at most MAX_ANSWER_CHARS long) answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_BACKSLASH_PI = re.compile(r"\\π")
# the radical sign: before a bracket, a run of digits (`√16` is 4, as read) or one letter (`√x`); not `√ab`, nor an
# operand a letter, digit, power or bracket follows (`√16x`, `√x²`, `√x^2`: how far the root reaches is unclear)
_RADICAL = re.compile(
    r"√[ \t]{0,2}(?:(?=[({])|(\d{1,20}(?:\.\d{1,20})?|[A-Za-z])(?![ \t]{0,2}(?:[A-Za-z\d^²³⁴⁵⁶⁷⁸⁹⁰¹({\\]|\.\d)))"
)
_LOST_BACKSLASH = re.compile(r"(?<![\\A-Za-z])(?:frac(?=\d\d(?!\d))|sqrt(?=\d(?![\d.])))")
_ROOT_PAREN = re.compile(r"\\sqrt[ \t]{0,2}(\[[^\[\]{}()]{1,20}\])?[ \t]{0,2}\(")
_ROOT_TOKEN = re.compile(r"\\sqrt[ \t]{0,2}(\[[^\[\]{}()]{1,20}\])[ \t]{0,2}(\d|[A-Za-z](?![A-Za-z]))")
_FUNC_NAMES = "arcsin arccos arctan sinh cosh tanh sin cos tan cot sec csc ln log exp".split()
# `sinx`: a variable letter (not `cost`, `logs`, `sine`: words)
_GLUED_FUNC = re.compile(r"(?<![\\A-Za-z])(" + "|".join(_FUNC_NAMES) + r")([u-z])(?![A-Za-z])")
_TRIG_POWER = re.compile(
    r"(\\(?:sin|cos|tan|cot|sec|csc))\^[ \t]{0,2}(\{[ \t]{0,2}\d[ \t]{0,2}\}|\d)[ \t]{0,3}([A-Za-z])(?![A-Za-z])"
)
# a digit-grouped number with what stands before and after it
_GROUPED = re.compile(r"(?<![\d.,])[1-9]\d{0,2}(?:,\d{3}){1,5}(?:\.\d{1,12})?(?![\d,])")
_SOLVED_VALUE = re.compile(
    r"[ \t]{0,3}[A-Za-z][ \t]{0,3}=[ \t]{0,3}[\d,.]{1,30}[ \t]{0,3}"
)  # `x = 1,100`: normalisation's
_OPERATOR_BEFORE = re.compile(r"(?:[=+\-*/<>]|\\(?:cdot|times|div|le|ge|leq|geq|lt|gt))[ \t]{0,3}$")
_OPERATOR_AFTER = re.compile(r"[ \t]{0,3}(?:[=+\-*/<>^]|\\(?:cdot|times|div|le|ge|leq|geq|lt|gt)(?![A-Za-z]))")
_OPERATOR_ANY = re.compile(r"[=+\-*/<>^]|\\(?:cdot|times|div|le|ge|leq|geq|lt|gt)(?![A-Za-z])")
_PRODUCT_AFTER = re.compile(r"[ \t]{0,3}(?:\(|\\left|[A-Za-z])")
_UNIT_POWER_WORD = re.compile(
    r"(\\text[ \t]{0,2}\{[ \t]{0,3}(?:cm|m|mm|km|in|inches|ft|feet|yd|yards|meters?|units?|miles?)[ \t]{0,3}\})"
    r"[ \t]{0,3}(?:\\text[ \t]{0,2}\{[ \t]{0,3}(squared|cubed)[ \t]{0,3}\}|(squared|cubed)(?![A-Za-z]))"
)
# `36(64)`, `2\\left(3\\right)`: a product (math-verify reads 36 + 64)
_NUMBER_TIMES_NUMBER = re.compile(
    r"(?<=\d)[ \t]{0,2}(?=(?:\\left[ \t]{0,2})?\([ \t]{0,2}-?\d{1,20}(?:\.\d{1,20})?[ \t]{0,2}(?:\\right[ \t]{0,2})?\))"
)
_LONG_DECIMAL = re.compile(r"(?<![\d.])(\d)\.(\d{11,16})(?![\d.])")
_SYMPY_BRACKETS = re.compile(r"(?<=\*)[ \t]{0,2}\[(?=[^\[\],]{1,200}\])|(?<!\\)\[(?=[^\[\],]{1,200}\][ \t]{0,2}[\^*])")


def each_bracketed(
    s: str, pattern: re.Pattern, opener: str, closer: str, rewrite: Callable[[re.Match, int], str]
) -> str:
    """Each match of `pattern` (ending at `opener`) up to its closing `closer`, as `rewrite(match, closing
    index)` gives it; one not closed within 200 characters is left (linear)."""
    out, i = [], 0
    for m in pattern.finditer(s):
        if m.start() < i:
            continue
        depth = 0
        for j in range(m.end() - 1, min(len(s), m.end() + 200)):
            depth += (s[j] == opener) - (s[j] == closer)
            if depth == 0:
                out.append(s[i : m.start()] + rewrite(m, j))
                i = j + 1
                break
    return "".join(out) + s[i:]


def _grouped(s: str) -> str:
    """Thousands commas dropped where the number stands in an expression: an operator on one side and an
    operator, a product or the answer's end on the other (`=2,304`, `+2,500`, `72,300(1.008)^x=`)."""

    if _SOLVED_VALUE.fullmatch(s):
        return s
    last_op = max((op.start() for op in _OPERATOR_ANY.finditer(s)), default=-1)

    def one(m: re.Match[str]) -> str:
        before, after = s[max(0, m.start() - 12) : m.start()], s[m.end() : m.end() + 12]
        op_before, op_after = _OPERATOR_BEFORE.search(before), _OPERATOR_AFTER.match(after)
        start, end = not before.strip(), not after.strip()
        if (op_before and (op_after or end or _PRODUCT_AFTER.match(after))) or (start and op_after):
            return m[0].replace(",", "")
        if start and _PRODUCT_AFTER.match(after) and last_op > m.end():
            return m[0].replace(",", "")  # `72,300(1.008)^x = 100,000`: a product in an equation
        return m[0]

    return _GROUPED.sub(one, s)


_CONSTANTS = (("e", "271828182845904523536"), ("\\pi", "314159265358979323846"))


def _constant(m: re.Match[str]) -> str:
    """A decimal that is e or pi rounded (or cut) to its 12 or more significant digits: that constant."""
    written = int(m[1] + m[2])
    for name, digits in _CONSTANTS:
        true = int(digits[: len(m[2]) + 2])  # one digit past the written ones
        if written in ((true + 5) // 10, true // 10):
            return f"{name} "
    return m[0]


def rewrite_loose(s: str) -> str:
    """The loose forms above rewritten as LaTeX math-verify reads as meant."""
    s = _BACKSLASH_PI.sub(r"\\pi ", s)
    s = _RADICAL.sub(lambda m: f"\\sqrt{{{m[1]}}}" if m[1] else "\\sqrt", s)
    s = _LOST_BACKSLASH.sub(lambda m: "\\" + m[0], s)
    s = each_bracketed(s, _ROOT_PAREN, "(", ")", lambda m, j: f"\\sqrt{m[1] or ''}{{{s[m.end() : j]}}}")
    s = _ROOT_TOKEN.sub(r"\\sqrt\1{\2}", s)
    s = _GLUED_FUNC.sub(r"\\\1 \2", s)
    s = _TRIG_POWER.sub(lambda m: f"{m[1]}^{{{m[2].strip('{} ')}}}{{{m[3]}}}", s)
    s = _NUMBER_TIMES_NUMBER.sub(r"\\cdot", _grouped(s))
    s = _UNIT_POWER_WORD.sub(lambda m: m[1] + ("^2" if (m[2] or m[3]) == "squared" else "^3"), s)
    s = _LONG_DECIMAL.sub(_constant, s)
    if "*" in s:  # plain SymPy: `[...]` next to `*` or `^` groups
        s = each_bracketed(s, _SYMPY_BRACKETS, "[", "]", lambda m, j: m[0].replace("[", "(") + s[m.end() : j] + ")")
    return s


_TRAILING_LETTERS = re.compile(r"(?<![\\A-Za-z])([A-Za-z]{1,2})[ \t]{0,3}$")
# what makes the text before a trailing letter algebraic, not one numeric term (`\\frac{1}{2} h` is a unit):
# a variable, a sum or a relation
_ALGEBRAIC = re.compile(r"(?<![\\A-Za-z])[A-Za-z]|(?<=\S)[ \t]{0,3}[-+=<>]|\\(?:le|ge|leq|geq|lt|gt|neq)(?![A-Za-z])")
_DIFFERENTIAL = re.compile(r"(?<![\\A-Za-z])d(?=[A-Za-z](?![A-Za-z])|[ \t]{0,2}\\[A-Za-z])")
_CALCULUS = re.compile(r"\\(?:int|partial|oint)|\{[ \t]{0,2}d[^{}]{0,40}\}[ \t]{0,2}\{[ \t]{0,2}d[ \t]{0,2}[A-Za-z]")


def brace_variables(s: str, unit_words: frozenset[str]) -> str:
    """Letters math-verify would drop as a unit or read as a differential, braced (rules above)."""
    if not _CALCULUS.search(s):
        s = _DIFFERENTIAL.sub("{d}", s)
    m = _TRAILING_LETTERS.search(s)
    if not m or (len(m[1]) > 1 and m[1].lower() in unit_words):
        return s
    head = s[: m.start()]
    before = head.rstrip()
    if _ALGEBRAIC.search(head.rsplit("=", 1)[-1]) and before and (before[-1] in "0123456789}" or before != head):
        s = f"{head}{{{m[1]}}}"
    return s


_TEXT_WORD = re.compile(r"\\(?:text|mathrm|mbox)[ \t]{0,2}\{([A-Za-z ]{1,40})\}[ \t]{0,3}(?:\\[ ,;:]|~)?[ \t]{0,3}$")


def _label(side: str) -> tuple[str, str]:
    """(side without its trailing `\\text{}` words (at most 8), those words lower-cased and joined)."""
    words: list[str] = []
    for _ in range(8):
        m = _TEXT_WORD.search(side[-80:])
        if not m:
            break
        words[:0] = m[1].lower().split()
        side = side[: len(side) - len(side[-80:]) + m.start()].rstrip(" \t~").removesuffix("\\").rstrip()
    return side, " ".join(words)


def shared_labels(pred: str, gold: str, value_words: frozenset[str]) -> tuple[str, str]:
    """Trailing `\\text{}` words on each side of an equation, the same in answer and reference: dropped."""
    ps, gs = pred.split("="), gold.split("=")
    if len(ps) != len(gs) or len(ps) > 2:
        return pred, gold
    pl, gl = [_label(p) for p in ps], [_label(g) for g in gs]
    words = {w for _, lab in pl + gl for w in lab.split()}
    if words & value_words or sorted(lab for _, lab in pl if lab) != sorted(lab for _, lab in gl if lab):
        return pred, gold
    if not any(lab for _, lab in pl) or any(not side.strip() for side, _ in pl + gl):
        return pred, gold
    return "=".join(side for side, _ in pl), "=".join(side for side, _ in gl)
