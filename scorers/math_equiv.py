"""Math answer equivalence for MATH500-style answers (pure: no Inspect import).

1. Extract the final answer: the last explicit marker (scorers.extract.final_answer:
   `ANSWER:` line, `<answer>` tags, "the final answer is", `\\boxed{}`); without one, the value
   the last sentence states ("The probability is 0.75.") or the last "the answer is X" phrase
   (scorers.extract.unmarked_answer).
2. Refuse what a careful grader refuses, before any comparison: an answer longer than
   MAX_ANSWER_CHARS; brackets nested deeper than MAX_NESTING and the reference (math-verify
   would take seconds); words that change or hedge a value and that the reference lacks
   (`not`, `between`, `approximately`, `otherwise`, `likely`, `hundredths`; scale words are read instead:
   `2 \\text{ million}` = 2\\times10^{6}, `5 hundred` = 500) and bounds (`at minimum 5`, `5 or more`:
   scorers.extract.BOUNDS); an explanation after the value is not read unless it doubts, bounds or revises
   it (`$12$ (the remainder is $0$)` answers 12: scorers.extract.explained); more distinct values than the reference
   (`8 or 9`, `6 \\text{ and } 8`, `1, 2`, `\\pm 3`), also when hidden from math-verify,
   which keeps only the last value (`5 \\\\ 7`, `5 \\lor 7`, `5 | 7`, `x=5 \\text{ } x=7`).
   An answer written as a sentence ("Thus $x \\geq 5$ is the solution.") is read by its
   last math segment or number (values joined by commas/and/or stay a list; one with a condition after
   it, `5 when n is odd`, is refused).
   Forms math-verify misreads are rewritten, compared or refused first (scorers.math_forms:
   mixed numbers, clock times, degrees inside trig functions, `i`, primes, units, letters; scorers.math_loose:
   loosely written LaTeX, `\\text{}` labels both sides end with, letters math-verify would drop as units).
3. Compare with math-verify (parse + verify: fractions vs decimals, intervals, tuples,
   sets, sqrt, pi, units), after reading `x = 2` / `2 = x` as 2 (when the reference is
   not an equation), `1.5e3` as `1.5\\times10^{3}`, `0.\\overline{3}` as 1/3, and
   "x = 2 or x = 3" as the list "2, 3", and a one-row/column matrix against a bracketed list
   as two tuples (`\\begin{matrix} \\frac12 \\\\ 1 \\end{matrix}` = `[0.5, 1]`); then fall back to
   comparing normalised strings (`normalize_math_answer`: spacing, `\\left`/`\\right`,
   `\\dfrac`, `$`, degrees, thousands commas; words are kept). Where the reference or the answer
   raises an expression that may be negative to a non-integer power (real only where it is
   positive), a second comparison takes the variables positive (`(1+r/r_0)^{-3/2}` =
   `(r_0/(r+r_0))^{3/2}`; `\\sin^2 e^{\\sqrt{2x}} + \\cos^2 (e^{\\sqrt{x}})^{\\sqrt2}` = 1; not
   `\\sqrt{x^2}` = `x`, real for every x). Two equations or inequalities are compared by
   scorers.math_relations, not by math-verify's solving (`a^3 b^3 = 0` is not `a b = 0`); plain
   expressions SymPy does not prove equal, by value at random points (scorers.math_identity); `i`
   is the imaginary unit wherever it is written.

The time limit that decides is CPU time, not wall time: a comparison gets `timeout` seconds
of its own thread's CPU (`_cpu_limit`, SIGPROF), so a busy machine delays a verdict but
cannot change it; math-verify's own wall-clock alarm is off. The signal works only in the
main thread (off it, math-verify raises ValueError). So: in the main thread we call it
in-process; from any other thread (Inspect scorers via `asyncio.to_thread`, TRL reward
threads) the comparison runs in up to MAX_WORKERS persistent child processes
(`python -m scorers._math_worker`, JSON lines over pipes; no multiprocessing, so no
dependence on __main__). The parent watches a child's CPU time, not the clock: a child past
its limit by CPU_OVERRUN_S without answering (stuck in C code that never lets the signal
in) is killed and the comparison timed out, as the limit would have; a child that gains no
CPU at all for HANG_S seconds (blocked or stopped: a busy machine slows a child, it does not
stop it) is killed and the check says it hung, with no verdict on the answer.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import queue
import re
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from fractions import Fraction
from pathlib import Path

from scorers import math_forms, math_identity, math_loose, math_relations
from scorers.extract import (
    BOUNDS,
    FRACTION_WORDS,
    HEDGE_WORDS,
    MAX_ANSWER_CHARS,
    CheckResult,
    explained,
    final_answer,
    normalize_unicode,
    unmarked_answer,
)
from scorers.math_forms import rounds_to

DEFAULT_TIMEOUT = 5.0  # CPU seconds per comparison
# a worker child gaining no CPU for this long (wall) is hung; a nice-19 child beside 8 busy nice-0 processes on 2
# cores still gets about 0.4% of a core (CFS weights 15 vs 1024 each), 0.2 CPU-s a minute
HANG_S = 60.0
CPU_OVERRUN_S = 5.0  # CPU seconds past its limit after which a silent child is killed (its own signal failed)
STARTUP_CPU_S = 30.0  # a new child's first answer also pays for its start-up (imports sympy, math-verify)
POLL_S = 1.0  # how often the parent reads a busy child's CPU time
# deeper bracket nesting is refused before math-verify, whose LaTeX parser takes seconds on it
# (`{` 12 deep: 1.5 s, 15 deep: past its 5 s time-out); MATH answers nest at most 4 deep
MAX_NESTING = 8

# ----------------------------------------------------------------------- extraction


def extract_math_answer(completion: str | None) -> tuple[str | None, str]:
    """Return (raw answer string or None, how found / why not)."""
    answer, how = final_answer(completion)
    if answer is None and how.startswith("no answer marker"):
        answer, how = unmarked_answer(completion)
    if answer is None:
        return None, how
    if not answer:
        return None, f"{how}: answer is empty"
    return answer, f"from {how}"


# -------------------------------------------------------------------- normalisation

_DELIMS = re.compile(r"\\[\[\]()]|\$")
_SPACING = re.compile(r"\\(?:,|;|:|!|quad|qquad|displaystyle|textstyle)(?![A-Za-z])|\\ |~")
_SIZERS = re.compile(r"\\(?:left|right|big|Big|bigg|Bigg)(?![a-zA-Z])")
_DEGREES = re.compile(r"\^[ \t]{0,3}\{?[ \t]{0,3}\\circ[ \t]{0,3}\}?|°")
_WHOLE_NUMBER = re.compile(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|-?\d{1,3}(?: \d{3})+(?:\.\d+)?")
_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{2,}")
_COMMAND = re.compile(r"\\[A-Za-z]+")
_ENVIRONMENT = re.compile(r"\\(?:begin|end)[ \t]{0,3}\{[A-Za-z*]{1,20}\}")
_VAR_EQ = re.compile(r"^[ \t]{0,3}[A-Za-z](?:_\{?[A-Za-z0-9]{1,5}\}?)?[ \t]{0,3}=([^=]+)$")
_EQ_VAR = re.compile(r"^([^=]+)=[ \t]{0,3}[A-Za-z](?:_\{?[A-Za-z0-9]{1,5}\}?)?[ \t]{0,3}$")
_SCI = re.compile(r"(\d(?:\.\d+)?)[eE]([-+]?\d{1,4})(?![\w.])")
_REPEATING = re.compile(r"(?<![\d.])(-?)(\d{0,12})\.(\d{0,12})\\overline[ \t]{0,2}\{(\d{1,12})\}")
_SEPARATOR_WORDS = re.compile(r"\\text\{[ \t]{0,3}(?i:or|and)[ \t]{0,3}\}|(?<![A-Za-z\\])(?i:or|and)(?![A-Za-z])")

# words that may follow a number without changing its value (math-verify reads them)
_UNITS = frozenset(
    """unit units square sq cubic cm centimeter centimeters meter meters metre metres km
    kilometer kilometers mm in inch inches ft feet foot yard yards mile miles degree degrees
    dollar dollars cent cents hour hours hr hrs minute minutes min mins second seconds sec
    day days week weeks month months year years mph pound pounds lb lbs ounce ounces oz kg
    gram grams liter liters litre litres ml percent people students ways points radians rad
    mathrm text mbox textbf textit operatorname""".split()
)
_FUNCS = frozenset(
    "sin cos tan cot sec csc arcsin arccos arctan sinh cosh tanh log ln exp sqrt pi inf infty"
    " gcd lcm max min det mod deg".split()
)


def normalize_math_answer(answer: str) -> str:
    """Canonical string form of an answer for the string comparison (words are kept)."""
    s = normalize_unicode(answer.strip()).replace("\n", " ")
    s = s.replace("\\$", "").replace("\\%", "%")
    s = _DELIMS.sub("", s)
    s = _SIZERS.sub("", s)
    s = _SPACING.sub(" ", s)
    s = re.sub(r"\\[dt]frac", r"\\frac", s)
    s = _DEGREES.sub("", s)
    s = math_forms.unfont(re.sub(r"\\operatorname[ \t]{0,3}\{([^{}]{0,200})\}", r"\1", s))
    s = s.replace("\\le ", "\\leq ").replace("\\ge ", "\\geq ")
    s = s.strip().rstrip(".").strip()
    m = _VAR_EQ.match(s)
    if m:
        s = m.group(1).strip()
    if _WHOLE_NUMBER.fullmatch(s.replace("{,}", ",")):
        s = re.sub(r"[, ]|\{,\}", "", s)
    s = re.sub(r"\\frac(\d)(\d)", r"\\frac{\1}{\2}", s)  # \frac12
    s = re.sub(r"\\frac\{([^{}]{0,100})\}(\d)", r"\\frac{\1}{\2}", s)
    s = re.sub(r"\\sqrt(\d+)", r"\\sqrt{\1}", s)
    # drop spaces next to symbols, keep one between two word characters ("6 8" != "68")
    s = re.sub(r"\s+", " ", s)
    s = re.sub(r" (?=\W)|(?<=\W) ", "", s)
    if re.fullmatch(r"-?\d+\.\d*0+", s):  # 12.50 -> 12.5, 12.0 -> 12
        s = s.rstrip("0").rstrip(".")
    return s


def _top_level_items(s: str) -> list[str]:
    """Split on commas/semicolons outside brackets (intervals, tuples, sets stay whole)."""
    items, depth, cur = [], 0, []
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        if ch in ",;" and depth == 0:
            items.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    items.append("".join(cur))
    return [i.strip() for i in items if i.strip()]


_MATRIX = re.compile(r"[ \t$]{0,3}\\begin\{([pbvBV]?matrix)\}(.{0,600}?)\\end\{\1\}[ \t$.]{0,3}", re.S)
_LIST = re.compile(r"[ \t$]{0,3}[(\[](.{1,600})[)\]][ \t$.]{0,3}", re.S)


def _vector(s: str) -> list[str] | None:
    """The entries of a one-row or one-column matrix (`\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}`)."""
    m = _MATRIX.fullmatch(s)
    if not m:
        return None
    rows = [r for r in m[2].split("\\\\") if r.strip()]
    if len(rows) == 1:
        rows = rows[0].split("&")
    elif any("&" in r for r in rows):
        return None
    return [r.strip() for r in rows] if len(rows) > 1 else None


def _as_tuples(pred: str, gold: str) -> tuple[str, str]:
    """A one-row/column matrix against a bracketed list (or the reverse): both as tuples, entry by entry."""
    for a, b in ((pred, gold), (gold, pred)):
        vec, listed = _vector(a), _LIST.fullmatch(b)
        if vec and listed and _vector(b) is None:
            items = _top_level_items(listed[1])
            if len(items) > 1:
                tuples = f"({', '.join(vec)})", f"({', '.join(items)})"
                return tuples if a is pred else tuples[::-1]
    return pred, gold


def _words(s: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(_COMMAND.sub(" ", _ENVIRONMENT.sub(" ", s)))}


def _repeating(m: re.Match[str]) -> str:
    sign, whole, fixed, rep = m.groups()
    value = Fraction(int(whole or "0")) + Fraction(int(fixed or "0"), 10 ** len(fixed))
    value += Fraction(int(rep), (10 ** len(rep) - 1) * 10 ** len(fixed))
    return f"{sign}\\frac{{{value.numerator}}}{{{value.denominator}}}"


def _for_math_verify(s: str, gold_is_equation: bool) -> str:
    s = math_forms.strip_units(normalize_unicode(s).replace("\\$", ""))
    s = _DELIMS.sub("", s).strip().rstrip(".").strip()
    s = re.sub(r"(\d),\\!\s?(?=\d{3}(?!\d))", r"\1,", s)
    s = re.sub(r"(\d)\\[,;:](?=\d{3}(?!\d))", r"\1", s)
    s = s.replace("\\!", "")
    s = _SCI.sub(r"\1\\times10^{\2}", s)
    s = _REPEATING.sub(_repeating, s)
    s = _SEPARATOR_WORDS.sub(",", s)
    if _WHOLE_NUMBER.fullmatch(s.replace("{,}", ",")):
        s = re.sub(r"[, ]|\{,\}", "", s)
    items = _top_level_items(s)
    if not gold_is_equation:
        out = []
        for item in items:
            m = _VAR_EQ.match(item) or _EQ_VAR.match(item)
            out.append(m.group(1).strip() if m else item)
        items = out
    return ", ".join(items)


# words that change or blur a value: never dropped to make a match
_VALUE_WORDS = frozenset(
    "hundred thousand million billion trillion dozen times squared cubed not no none never"
    " between either approximately roughly about around nearly almost least most otherwise unless else if"
    " than half twice double triple factorial".split()
) | frozenset(f"{HEDGE_WORDS}|{FRACTION_WORDS}".split("|"))
# what separates several values in math-verify's reading (it keeps only the last one)
_VALUE_SEPARATORS = re.compile(
    r"\\\\(?![A-Za-z])|\\(?:lor|vee|mid|quad|qquad)(?![A-Za-z])|(?<!\\left)(?<!\\right)\||\\begin\{cases\}|;"
)  # `\\left| x \\right|` is an absolute value, not a separator
_VAR_EQUALS = re.compile(r"[A-Za-z}][ \t]{0,3}=")
_MATH_SEGMENT = re.compile(
    r"(?<!\\)\$\$([^$]{0,600})\$\$|(?<!\\)\$((?:[^$]|\\\$){0,600}?)(?<!\\)\$"
    r"|\\\((.{0,600}?)\\\)|\\\[(.{0,600}?)\\\]",
    re.S,
)
_BARE_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:[.,]\d+)*(?:/\d+)?(?:\s?%)?")  # "1/2" is one value
_LIST_GAP = re.compile(r"[\s,;]{0,6}(?:(?:and|or)[\s,]{0,3})?")


def _as_sentence(pred: str, gold: str) -> tuple[str, str | None]:
    """An answer written as a sentence ("Thus $x \\geq 5$ is the solution.") -> its value.

    The value is the last math segment or bare number; values joined only by commas,
    "and" or "or" stay together (a list, refused when the reference has one value). Returns (value, None),
    or (pred, why) where an earlier value stands before the last with no conclusion between ("7 in base 10",
    "12 at t = 3": which is the answer?).
    """
    outside = _MATH_SEGMENT.sub(lambda m: " " * len(m.group(0)), pred)  # keeps positions
    prose = _words(outside) - _words(gold) - _UNITS - _FUNCS - {"and", "or"}
    if not any(len(w) >= 3 for w in prose):
        return pred, None
    tokens: list[tuple[int, int, str]] = []
    for m in _MATH_SEGMENT.finditer(pred):
        tokens.append((m.start(), m.end(), next(g for g in m.groups() if g is not None)))
    for m in _BARE_NUMBER.finditer(outside):
        tokens.append((m.start(), m.end(), m.group(0)))
    if not tokens:
        return pred, None
    tokens.sort()
    value = [tokens[-1]]
    for tok in reversed(tokens[:-1]):
        if not _LIST_GAP.fullmatch(pred[tok[1] : value[-1][0]]):
            break
        value.append(tok)
    if _HEDGED_BEFORE.search(pred[max(0, value[-1][0] - 12) : value[-1][0]]):
        return pred, None  # "<something> or 0": the sentence hedges, judged whole (refused)
    if _CONDITION_AFTER.match(pred, value[0][1]):
        return pred, "answer sets a condition on its value (`5 when n is odd`)"
    earlier = [t for t in tokens if t[1] <= value[-1][0]]
    gap = pred[earlier[-1][1] : value[-1][0]] if earlier else ""
    if earlier and not _CONCLUDES.search(gap) and not _EXPLAINS.match(gap):
        return pred, "answer states an earlier value and no conclusion before its last one (`7 in base 10`)"
    return ", ".join(t[2].strip() for t in reversed(value)), None


# what makes the last value of a sentence its conclusion after an earlier one: "... we get 8, so the answer is 0",
# "10, which is 1,000.99" (not "t = 3": an equals sign after a lone variable sets a condition)
_CONCLUDES = re.compile(
    r"(?i:\b(?:so|thus|therefore|hence|is|are|equals|gives|get|makes)\b)|(?<![A-Za-z][ \t])(?<![A-Za-z])="
)
# an explanation after the answer ("$5$ (since $2+3=5$)"): left to the rules before this one, as before
_EXPLAINS = re.compile(r"[ \t,;]{0,3}(?:\(|(?i:since|because|as|from|by|i\.e\.)\b)")
_HEDGED_BEFORE = re.compile(r"(?i:\b(?:or|either|otherwise|unless|else))\W{0,4}$")
_CONDITION_AFTER = re.compile(r"[\W_]{0,4}(?i:when|whenever|if|unless|provided|assuming)(?![A-Za-z])")
_SCALE = re.compile(
    r"(\d)[ \t]{0,3}(?:\\(?:text|mathrm|mbox)[ \t]{0,3}\{[ \t]{0,3})?"
    r"(hundred|thousand|million|billion|trillion)(?![A-Za-z])[ \t]{0,3}\}?"
)
_SCALE_EXP = {"hundred": 2, "thousand": 3, "million": 6, "billion": 9, "trillion": 12}


def _read_scale(s: str) -> str:
    """A scale word multiplies: "2 million" -> "2\\times10^{6}", "5 hundred" -> "5\\times10^{2}" (never dropped)."""
    return _SCALE.sub(lambda m: f"{m.group(1)}\\times10^{{{_SCALE_EXP[m.group(2)]}}}", s)


def _count_values(answer: str) -> int:
    """How many distinct values an answer lists (a set literal counts its elements)."""
    s = _for_math_verify(answer, True).strip()
    if s.startswith("\\{") and s.endswith("\\}"):
        s = s[2:-2]
    elif s.startswith("{") and s.endswith("}") and "," in s:
        s = s[1:-1]
    plus_minus = 1 if re.search(r"\\pm(?![A-Za-z])|±", s) else 0
    return len({normalize_math_answer(i) for i in _top_level_items(s)}) + plus_minus


def nesting_depth(s: str) -> int:
    """The deepest nesting of (), [] and {} in s (escaped or not; unbalanced closers ignored)."""
    depth = deepest = 0
    for ch in s:
        if ch in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in ")]}":
            depth = max(0, depth - 1)
    return deepest


def refusal(pred: str, gold: str, count: bool = True) -> str | None:
    """Why a careful grader gives no credit before comparing, or None."""
    if len(pred) > MAX_ANSWER_CHARS:
        return f"answer longer than {MAX_ANSWER_CHARS} characters"
    depth, limit = nesting_depth(pred), max(MAX_NESTING, nesting_depth(gold))
    if depth > limit:
        return f"answer nests brackets {depth} deep (limit {limit}): too deep to compare"
    blur = sorted((_words(pred) & _VALUE_WORDS) - _words(gold))
    if blur:
        return f"answer has words that change or hedge its value: {', '.join(blur)}"
    if BOUNDS.search(pred) and not BOUNDS.search(gold):
        return "answer bounds its value (`at minimum 5`, `5 or more`) where the reference states it"
    form = math_forms.mismatch(pred, gold)
    if form:
        return form
    if not count:
        return None
    if _count_values(gold) == 1:  # several values hidden from the count: math-verify keeps the last
        seps = set(_VALUE_SEPARATORS.findall(pred)) - set(_VALUE_SEPARATORS.findall(gold))
        if seps:
            return f"answer separates values with {sorted(seps)[0]!r} (a hedge scores 0)"
        if "," not in gold and len(_VAR_EQUALS.findall(pred)) > max(1, len(_VAR_EQUALS.findall(gold))):
            return "answer states several equations"
        if _words(pred) & {"or", "and"} and not _words(gold) & {"or", "and"}:
            return "answer joins values with 'or' / 'and' where the reference has one (a hedge scores 0)"
    n_pred, n_gold = _count_values(pred), _count_values(gold)
    if n_pred > n_gold:
        return f"answer gives {n_pred} values where the reference has {n_gold} (a hedge scores 0)"
    return None


_GOLD_LEAD_IN = re.compile(r"^[ \t]{0,3}(?i:(?:the[ \t]{1,3})?(?:final[ \t]{1,3})?answer[ \t]{1,3}is)[ \t:]{0,4}")
# "[45]", "[$\\sqrt{4}$]": one value in square brackets, the whole answer (no comma: not an interval)
_BRACKETED = re.compile(r"[ \t]{0,3}\[([^\[\],;]{1,600})\][ \t.]{0,3}")
# "$\\left|3-5\\right| = 2$": a computation and its value; the value is the answer
_COMPUTED = re.compile(r"\$?([^=]{0,599}[^=<>!:])=[ \t]{0,3}(-?\d{1,15}(?:\.\d{1,15})?)[ \t]{0,3}\$?[ \t.]{0,3}")


def gold_answer(target: str) -> str:
    """A target that is a whole solution ("... so $\\boxed{5}$") is read by its last box;
    "the answer is 5" by what follows its lead-in."""
    if "\\boxed" in target or "\\fbox" in target:
        answer, _ = final_answer(target)
        if answer:
            return answer
    return _GOLD_LEAD_IN.sub("", target, count=1)


def _value_of(pred: str, gold: str) -> str:
    """The value a bracketed answer or a worked computation states, where the gold is one value."""
    bracketed = _BRACKETED.fullmatch(pred)
    if bracketed:
        return bracketed.group(1)
    computed = _COMPUTED.fullmatch(pred) if "=" not in gold else None
    if computed is None or re.search(r"[A-Za-z]", _COMMAND.sub("", _ENVIRONMENT.sub("", computed.group(1)))):
        return pred  # "3x = 6" is an equation, not a computation: left to math-verify
    return computed.group(2)


# ----------------------------------------------------------------- math-verify bridge


@contextlib.contextmanager
def _cpu_limit(secs: int | None) -> Iterator[None]:
    """Raise math-verify's TimeoutException once this thread has spent `secs` CPU seconds (main
    thread only; None: no limit). The process's CPU timer may fire early when other threads
    compute too: the handler then re-arms it for what this thread has left."""
    if not secs:
        yield
        return
    from math_verify.errors import TimeoutException

    start = time.thread_time()

    def expire(signum: int, frame: object) -> None:
        left = secs - (time.thread_time() - start)  # handlers run in the main thread: its own CPU
        if left > 0:
            signal.setitimer(signal.ITIMER_PROF, left)
            return
        raise TimeoutException(f"math-verify: over {secs} s of CPU")

    previous = signal.signal(signal.SIGPROF, expire)
    signal.setitimer(signal.ITIMER_PROF, secs)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def _verify_in_process(gold: str, pred: str, timeout: int | None, positive: bool = False) -> bool:
    import math_verify.grader
    import math_verify.parser
    from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify

    # its wall-clock alarm off (None): `_cpu_limit` is the limit, so its "provide your own" warning is moot
    math_verify.parser.TIMEOUT_WARNING_SHOWN = math_verify.grader.TIMEOUT_WARNING_SHOWN = True
    config = [LatexExtractionConfig(), ExprExtractionConfig()]
    gold, pred = (math_loose.brace_variables(x, math_forms.UNIT_WORDS) for x in (gold, pred))
    with _cpu_limit(timeout):
        g = parse(f"${gold}$", extraction_config=config, parsing_timeout=None)  # type: ignore[arg-type]
        p = parse(f"${pred}$", extraction_config=config, parsing_timeout=None)  # type: ignore[arg-type]
        if not g or not p:
            return False
        g, p = _imaginary_unit(g, p)
        if positive:
            if not (_real_only_for_positive(g[0]) or _real_only_for_positive(p[0])):
                return False
            g, p = _positive_symbols(g), _positive_symbols(p)
        gold, pred = _named_symbols(g[0], positive), _named_symbols(p[0], positive)
        relation = _guarded(math_relations.compare, gold, pred, _values_equal)
        if relation is not None:  # two equations or inequalities: compared as careful graders do
            return relation
        # set/relation comparison: "-2 < x < 2" answers the interval "(-2, 2)"
        if verify(g, p, timeout_seconds=None, allow_set_relation_comp=True):
            return True
        # an identity SymPy does not prove, tested by value (every real value, so not on the positive reading)
        return not positive and bool(_guarded(math_identity.equal_by_value, gold, pred))


def _guarded(rule: Callable[..., bool | None], *args: object) -> bool | None:
    """rule(*args); a comparison SymPy cannot do is "not equal" (math-verify's time-out, a
    BaseException, passes)."""
    try:
        return rule(*args)
    except Exception:  # SymPy's NotImplementedError, TypeError, ... on an unusual expression
        return False


def _named_symbols(x: object, positive: bool) -> object:
    """Each variable as a plain SymPy symbol of its name, positive on the positive reading (math-verify
    gives `x` other assumptions where the text has an `i`, so the two sides' `x` would differ)."""
    import sympy

    if not isinstance(x, sympy.Basic):
        return x
    symbols = [s for s in x.free_symbols if isinstance(s, sympy.Symbol)]
    named = {s: sympy.Symbol(s.name, positive=True) if positive else sympy.Symbol(s.name) for s in symbols}
    try:
        return x.xreplace(named)
    except Exception:  # a rebuilt relation SymPy refuses (`Invalid comparison`): compared as it was
        return x


def _values_equal(a: object, b: object) -> bool:
    """math-verify's comparison of two values (its default precision)."""
    from math_verify.grader import sympy_expr_eq

    return bool(sympy_expr_eq(a, b, 6, 15))


def _imaginary_unit(g: list, p: list) -> tuple[list, list]:
    """`i` in the reference or the answer (`1+2i`, `e^{i\\pi}`) is the imaginary unit: read so on both sides."""
    import sympy

    def names_i(x: object) -> bool:
        return isinstance(x, sympy.Basic) and any(s.name == "i" for s in x.free_symbols)

    if not (names_i(g[0]) or names_i(p[0])):
        return g, p

    def sub(x: object) -> object:
        if not names_i(x):
            return x
        assert isinstance(x, sympy.Basic)
        if isinstance(x, sympy.Eq):  # kept a relation: `e^{i\\pi} = -1` must not evaluate to True
            return sympy.Eq(sub(x.lhs), sub(x.rhs), evaluate=False)
        return x.subs({s: sympy.I for s in x.free_symbols if s.name == "i"})

    return [sub(x) for x in g], [sub(x) for x in p]


def _real_only_for_positive(x: object) -> bool:
    """x raises an expression in its variables that may be negative to a non-integer power
    (`(\\frac{r_0}{r+r_0})^{0.5}`, `e^{\\sqrt{x}}`), or takes its logarithm (`\\log(a^2 b)`): it is
    meant (real) where that base or argument is positive."""
    import sympy

    if not isinstance(x, sympy.Basic):
        return False
    real = x.subs({s: sympy.Symbol(s.name, real=True) for s in x.free_symbols})
    return any(
        not e.exp.is_integer and e.base.free_symbols and not e.base.is_nonnegative for e in real.atoms(sympy.Pow)
    ) or any(f.args[0].free_symbols and not f.args[0].is_positive for f in real.atoms(sympy.log))


def _positive_symbols(xs: list) -> list:
    """Every variable taken positive and float exponents made exact (0.5 -> 1/2)."""
    import sympy

    out = []
    for x in xs:
        if isinstance(x, sympy.Basic):
            x = sympy.nsimplify(x, rational=True) if x.atoms(sympy.Float) else x
            x = x.subs({s: sympy.Symbol(s.name, positive=True) for s in x.free_symbols})
        out.append(x)
    return out


class ComparisonHung(RuntimeError):
    """A worker child gained no CPU for HANG_S seconds: killed, no verdict."""


class _Worker:
    """A `python -m scorers._math_worker` child answering one JSON request per line."""

    def __init__(self, cmd: list[str] | None = None) -> None:
        env = dict(os.environ)
        root = str(Path(__file__).resolve().parents[1])  # importable even if not installed
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        self.proc = subprocess.Popen(
            cmd or [sys.executable, "-m", "scorers._math_worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True, bufsize=1, env=env,
        )  # fmt: skip
        self.started = False  # has it answered once (its start-up paid)

    def cpu_seconds(self) -> float | None:
        """The child's CPU time so far (user + system), None once it is gone."""
        import psutil

        try:
            times = psutil.Process(self.proc.pid).cpu_times()
        except psutil.Error:
            return None
        return times.user + times.system

    def ask(self, gold: str, pred: str, timeout: int, positive: bool = False, hang_s: float = HANG_S) -> bool | None:
        """True/False, or None when the comparison ran out of CPU (its own limit answers None; a child
        past it by CPU_OVERRUN_S without answering is killed). Raises ComparisonHung (child killed)
        when the child gains no CPU for `hang_s` s of wall time."""
        assert self.proc.stdin and self.proc.stdout
        request = {"gold": gold, "pred": pred, "timeout": timeout, "positive": positive}
        budget = timeout + CPU_OVERRUN_S + (0.0 if self.started else STARTUP_CPU_S)
        try:
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
            line = self._answer(budget, hang_s)
        except (OSError, ValueError):
            line = ""
        if not line:
            self.kill()
            return None
        self.started = True
        equal = json.loads(line).get("equal")
        return None if equal is None else bool(equal)

    def _answer(self, budget: float, hang_s: float) -> str:
        """The child's answer line; "" when it ended, or spent `budget` CPU seconds, without one."""
        assert self.proc.stdout
        first = last = self.cpu_seconds()
        progressed = time.monotonic()
        while True:
            ready, _, _ = select.select([self.proc.stdout], [], [], POLL_S)
            if ready:
                return self.proc.stdout.readline()
            used = self.cpu_seconds()
            if used is None or first is None or used - first > budget:
                return ""
            if last is None or used > last:
                last, progressed = used, time.monotonic()
            elif time.monotonic() - progressed > hang_s:
                self.kill()
                raise ComparisonHung(f"math-verify's worker got no CPU for {hang_s:g} s (hung): killed")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        if self.alive():
            self.proc.kill()
        self.proc.wait()


MAX_WORKERS = 2
_idle: queue.SimpleQueue[_Worker] = queue.SimpleQueue()
_slots = threading.BoundedSemaphore(MAX_WORKERS)


def _verify_in_worker(gold: str, pred: str, secs: int, positive: bool = False) -> bool | None:
    with _slots:
        try:
            worker = _idle.get_nowait()
        except queue.Empty:
            worker = _Worker()
        result = worker.ask(gold, pred, secs, positive)
        if worker.alive():
            _idle.put(worker)
        return result


@atexit.register
def _stop_workers() -> None:
    while True:
        try:
            _idle.get_nowait().kill()
        except queue.Empty:
            return


def symbolic_equal(gold: str, pred: str, timeout: float = DEFAULT_TIMEOUT, positive: bool = False) -> bool | None:
    """math-verify equivalence (with `positive`: the variables taken positive, only where the
    reference is real only for positive values); None when it ran out of CPU time; raises
    ComparisonHung when its worker hung. Safe from any thread."""
    secs = max(1, int(round(timeout)))
    if threading.current_thread() is threading.main_thread():
        from math_verify.errors import TimeoutException

        try:
            return _verify_in_process(gold, pred, secs, positive)
        except TimeoutException:
            return None
    # off the main thread signals are unavailable: a child process (its own main thread,
    # so the CPU limit works there) that we can kill if it hangs
    return _verify_in_worker(gold, pred, secs, positive)


# ------------------------------------------------------------------------- check


_EMPHASIS = re.compile(r"<(b|strong|em|i|u|mark)>([^<>]{0,200})</\1>")  # HTML emphasis around the answer


# a root or a non-integer power (`^{0.5}`, `^{3/2}`, `^{\\frac12}`): a cheap test before the positive reading
_ROOT = re.compile(
    r"\\sqrt|\^[ \t]{0,2}\{?[ \t]{0,2}-?[\d.]{1,6}[ \t]{0,2}/|\^[ \t]{0,2}\{?[ \t]{0,2}\(?-?\d{0,6}\.\d"
    r"|\^[ \t]{0,2}\{?[ \t]{0,2}\([ \t]{0,2}-?\d{1,6}[ \t]{0,2}/[ \t]{0,2}\d{1,6}[ \t]{0,2}\)"  # plain `^(1/2)`
    r"|\^[ \t]{0,2}\{?\\frac|\\(?:log|ln)(?![A-Za-z])"
)


# a number with or without a percent sign ("0.66%", "0.66")
_PERCENT_NUMBER = re.compile(r"[ \t$]{0,3}(-?\d{1,15}(?:\.\d{1,15})?)[ \t]{0,2}(\\?%)?[ \t$.]{0,3}")


def _compare_forms(pred: str, gold: str) -> tuple[bool, str] | None:
    """Clock times, choice letters and decimals given to more places than a rounded reference, which
    math-verify misreads or compares at its own precision: (equal, why) or None."""
    if rounds_to(pred, gold):
        return True, "rounds to the reference at its decimal places"
    p, g = _PERCENT_NUMBER.fullmatch(pred), _PERCENT_NUMBER.fullmatch(gold)
    if p and g and bool(p[2]) != bool(g[2]) and Fraction(p[1]) == Fraction(g[1]):
        return True, "the same number, one with a percent sign (MATH's graders drop it)"
    tp, tg = math_forms.clock_seconds(pred), math_forms.clock_seconds(gold)
    if tp is not None and tg is not None:
        return tp == tg, f"clock times {'equal' if tp == tg else 'differ'}"
    lp, lg = math_forms.option_letter(pred), math_forms.option_letter(gold)
    if lp and lg and not (lp[1] and lg[1]):  # "C. x = 42" answers "C"
        return lp[0] == lg[0], f"choice {lp[0]} {'==' if lp[0] == lg[0] else '!='} {lg[0]}"
    return None


def check_math(completion: str | None, target: str, timeout: float = DEFAULT_TIMEOUT) -> CheckResult:
    """Is the final answer mathematically equivalent to the target?"""
    raw, how = extract_math_answer(completion)
    if raw is None:
        return CheckResult(False, None, how)
    gold_raw = math_forms.rewrite(_read_scale(gold_answer(str(target))))
    raw = math_forms.rewrite(_read_scale(_EMPHASIS.sub(r"\2", raw)))  # "<b>5</b>"
    raw, gold_raw = _as_tuples(raw, gold_raw)
    raw, gold_raw = math_loose.shared_labels(raw, gold_raw, _VALUE_WORDS | {"or", "and"})
    why = refusal(raw, gold_raw, count=False)
    if why is None:  # "$12$ (the remainder is $0$)" answers 12 (an approximation beside it was refused above)
        raw = explained(raw)
        sentence_value, why = _as_sentence(raw, gold_raw)
    if why is None:
        raw = _value_of(sentence_value, gold_raw)
        why = refusal(raw, gold_raw)
    if why is not None:
        return CheckResult(False, raw, f"{why} ({how})")
    direct = _compare_forms(raw, gold_raw)
    if direct is not None:
        return CheckResult(direct[0], raw, f"{direct[1]} ({how})")
    hung = None
    try:
        same = _compare(raw, gold_raw, timeout)
    except ComparisonHung as e:
        same, hung = None, str(e)
    if same:
        return CheckResult(True, raw, f"equivalent by math-verify ({how})")
    pred, gold = normalize_math_answer(raw), normalize_math_answer(gold_raw)
    if pred and (pred == gold or pred.lower() == gold.lower()):
        return CheckResult(True, raw, f"equal after normalisation ({how})")
    if hung:
        return CheckResult(False, raw, f"no verdict: {hung} ({how})")
    if same is None:
        return CheckResult(False, raw, f"math-verify timed out after {timeout:g} s of CPU ({how})")
    return CheckResult(False, raw, f"{pred!r} not equivalent to {gold!r} ({how})")


def _both_signs(s: str) -> str:
    """`\\frac{1 \\pm \\sqrt{17}}{4}` (one `\\pm`) as the list of its two values."""
    return f"{s.replace(chr(92) + 'pm', '+')}, {s.replace(chr(92) + 'pm', '-')}"


def _compare(raw: str, gold_raw: str, timeout: float) -> bool | None:
    """math-verify on the answers as written, then on the rewritten forms: True, False, or None (timed out)."""
    same = symbolic_equal(gold_raw, raw, timeout)
    if not same:
        is_eq = "=" in gold_raw
        gold_mv, pred_mv = _for_math_verify(gold_raw, is_eq), _for_math_verify(raw, is_eq)
        if (gold_mv, pred_mv) != (gold_raw, raw):
            same = symbolic_equal(gold_mv, pred_mv, timeout) or same
    if not same and gold_raw.count("\\pm") == 1:  # "a \\pm b" answers "a + b, a - b"
        same = symbolic_equal(_both_signs(gold_raw), raw, timeout) or same
    if not same and raw.count("\\pm") == 1 and "\\pm" not in gold_raw:  # and the reverse, `\\pm` anywhere
        same = symbolic_equal(gold_raw, _both_signs(raw), timeout) or same
    if not same:
        rhs = math_forms.function_rhs(raw), math_forms.function_rhs(gold_raw)
        if rhs[0] and rhs[1]:  # "f(x) = 2x+3" answers "y = 2x+3"
            same = symbolic_equal(rhs[1], rhs[0], timeout) or same
    if same is False and (_ROOT.search(gold_raw) or _ROOT.search(raw)):  # "(\\frac{r_0}{r+r_0})^{0.5}": positive values
        same = symbolic_equal(gold_raw, raw, timeout, positive=True) or same
    return same
