"""Answer forms that math-verify misreads: rewritten, compared or refused first (pure).

- rewritten (`rewrite`): doubly escaped LaTeX (`\\\\frac` -> `\\frac`, a matrix's row breaks too);
  scientific notation as its decimal (`2.31 \\times 10^{-3}`, `4.52*10^2`); Python's `2**(1/4)`,
  `x**(2)`, `x^log(y)` (the call is the exponent), `==`, `sqrt((x+1)/2)`, `abs(x-1)`, `pi`,
  `frac{a}{b}` (a lost backslash), `cos(x)` / `ArcSin(x)` / `ln(6)`, `log(x, 10)` (base 10:
  Python's and SymPy's order), `factorial(n)`, `v_zmf` (one subscript); `33.5 pct` / `percentage` as
  `33.5\\%`; `2 = x` as `x = 2`; mixed numbers (`4 4/9` -> `\\frac{40}{9}`, `4 4/9%` ->
  `\\frac{40}{900}`; only a proper fraction after a whole number on one line); a fraction with a
  percent sign; degrees inside a trigonometric function (`\\sin 30^\\circ` ->
  `\\sin\\frac{30\\pi}{180}`, never read as radians);
- compared here: clock times (`10:30 PM` = `22:30` = `22:30:00`; `10:30 AM` != `22:30`);
  a choice letter with or without its value (`C. x = 42` = `C`, `\\mathcal{B}` = `B`); the same
  function under another name (`f(x) = 2x+3` = `y = 2x+3`);
- refused (`mismatch`): variables that differ from the reference's only in case (`X` is not `x`;
  math-verify credits it), a malformed mixed number (`11 6/6`), primed symbols that differ from
  the reference's (`E'` is not `E`), a unit other than the reference's (`5 m` is not `5 cm`),
  a trailing ellipsis the reference lacks (`1, 2, 3, ...` is not `1, 2, 3`).
Every pattern uses bounded repetition: linear in the (at most MAX_ANSWER_CHARS long) answer.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from decimal import Decimal

from scorers.math_loose import each_bracketed, rewrite_loose

_COMMANDS = (
    "frac|dfrac|tfrac|sqrt|pi|cdot|times|left|right|text|mathrm|boxed|leq?|geq?|neq|infty|circ|"
    "sin|cos|tan|log|ln|pm|cup|cap|in|alpha|beta|gamma|theta|begin|end|dots|ldots|mathbf|operatorname"
)
_DOUBLE_ESCAPED = re.compile(rf"(?<!\\)\\\\(?=(?:{_COMMANDS})(?![A-Za-z]))")
_PERCENT = (
    r"(?:\\?%|\\text\{[ \t]{0,2}(?:percent(?:age)?|pct)[ \t]{0,2}\}|[ \t]{0,2}(?:percent(?:age)?|pct)(?![A-Za-z]))"
)
_MIXED = re.compile(
    r"(?<![\w.,/)}\]^_\\])(?P<sign>[-+]?)(?P<whole>\d{1,3}(?: \d{3}){1,4}|\d{1,9})[ \t]{1,3}"
    r"(?P<num>\d{1,9})[ \t]{0,2}/[ \t]{0,2}(?P<den>\d{1,9})"
    rf"(?P<pct>[ \t]{{0,2}}{_PERCENT})?(?![\w,/(\[{{^]|\.\d)(?![ \t]{{0,3}}\d)"
)
_FRAC_PERCENT = re.compile(
    rf"\\[dt]?frac[ \t]{{0,2}}\{{([^{{}}]{{1,40}})\}}[ \t]{{0,2}}\{{([^{{}}]{{1,40}})\}}[ \t]{{0,2}}{_PERCENT}"
)
# digit groups joined by ",\!" (LaTeX thin space): one number, Indian grouping included
_GROUPED = re.compile(r"(?<![\d.,])\d{1,3}(?:,\\!\d{2}){0,6}(?:,\\!\d{3}){1,6}(?![\d,])")
_POWER = re.compile(r"(?<=[\w)}])[ \t]{0,2}\*\*[ \t]{0,2}(?=[\w({-])")  # Python's 2**(1/4)
# `sqrt(3)`, `abs(x-1)`, plain `pi`: LaTeX, or math-verify reads s*q*r*t, a*b*s, p*i
_PLAIN_CALL = re.compile(r"(?<![\\A-Za-z])(sqrt|abs)[ \t]{0,2}\(")
_PLAIN_PI = re.compile(r"(?<![\\A-Za-z])pi(?![A-Za-z])")
_BARE_COMMAND = re.compile(r"(?<![\\A-Za-z])(frac|sqrt)(?=[ \t]{0,2}\{)")  # `frac{a}{b}`: a lost backslash
# plain-text functions (`cos(x)`, `ArcSin(x)`, `ln(6)`): LaTeX commands, or math-verify reads c*o*s
_PLAIN_FUNC = re.compile(
    r"(?<![\\A-Za-z])((?i:arc(?:sin|cos|tan)|(?:sin|cos|tan)h?|cot|sec|csc|exp|ln|log))(?=[ \t]{0,2}\()"
)
_LOG_BASE = re.compile(r"(?<![\\A-Za-z])log[ \t]{0,2}\(([^(),]{1,60}),([^(),]{1,60})\)")  # Python's log(x, base)
_FACTORIAL = re.compile(r"(?<![\\A-Za-z])factorial[ \t]{0,2}\(([^()]{1,60})\)")
_PAREN_POWER = re.compile(r"\^[ \t]{0,2}\(")  # `x^(2)` (from Python's `x**(2)`): the whole group is the exponent
# `x^\log(y)` (from plain `x^log(y)`): the call is the exponent (a function, not `2^\pi(x+1)`)
_FUNC_POWER = re.compile(r"\^[ \t]{0,2}\\(?:arc(?:sin|cos|tan)|(?:sin|cos|tan)h?|cot|sec|csc|exp|ln|log)[ \t]{0,2}\(")
# `v_zmf`, `R_12`: one subscript (LaTeX would read v_z*m*f)
_LONG_SUBSCRIPT = re.compile(r"(?<=[A-Za-z])_([A-Za-z]{2,10}|\d{2,10})(?![A-Za-z0-9])")
_ROOT_POWER = re.compile(r"\^[ \t]{0,2}(\\sqrt\{[^{}]{1,60}\})")  # `x^\sqrt{2}` (from `x**sqrt(2)`): braced
_DOUBLE_EQ = re.compile(r"(?<![=<>!])==(?!=)")  # Python's `==` is `=`
_PERCENT_WORD = re.compile(r"(?<=\d)[ \t]{0,2}(?:percentage|pct)(?![A-Za-z])")
_VALUE_EQ_VAR = re.compile(r"([^=<>]{1,600}?)[ \t]{0,3}=[ \t]{0,3}([A-Za-z](?:_\{?[A-Za-z0-9]{1,5}\}?)?)[ \t]{0,3}")
# "2.31 \\times 10^{-3}": a number in scientific notation, read as the decimal it is (one value,
# compared to math-verify's precision like any decimal); not after `^`, `_`, `/` or in a brace
_TIMES_TEN = re.compile(
    r"(?<![\w.}{^_/])(-?\d{1,20}(?:\.\d{1,20})?)[ \t]{0,2}(?:\\times|\\cdot|×|\*)[ \t]{0,2}10[ \t]{0,2}\^[ \t]{0,2}"
    r"(?:\{[ \t]{0,2}([-+]?\d{1,2})[ \t]{0,2}\}|([-+]?\d))(?![\w.^])"
)
_TRIG = re.compile(r"\\(?:sin|cos|tan|cot|sec|csc)(?![A-Za-z])")
_DEGREES = re.compile(r"(\d{1,9}(?:\.\d{1,9})?)[ \t]{0,2}(?:\^[ \t]{0,2}\{?[ \t]{0,2}\\circ[ \t]{0,2}\}?|°)")


def _mixed(m: re.Match[str]) -> str:
    num, den = int(m["num"]), int(m["den"])
    if den == 0 or num >= den:
        return m[0]  # not a mixed number (`11 6/6`, `4 4/0`): left for `mismatch` to refuse
    top = int(m["whole"].replace(" ", "")) * den + num
    sign = "-" if m["sign"] == "-" else ""
    return f"{sign}\\frac{{{top}}}{{{den * 100 if m['pct'] else den}}}"


def _each_parenthesized(s: str, pattern: re.Pattern, rewrite: Callable[[re.Match, int], str]) -> str:
    """Each match of `pattern` (ending at an opening parenthesis) and the text to its closing one, as
    `rewrite(match, closing_index)` gives it; one not closed within 200 characters is left (linear)."""
    return each_bracketed(s, pattern, "(", ")", rewrite)


def _paren_powers(s: str) -> str:
    """`x^(a+b)` -> `x^{(a+b)}`: LaTeX takes one token after `^` (at most 200 characters each, linear)."""
    return _each_parenthesized(s, _PAREN_POWER, lambda m, j: "^{" + s[m.end() - 1 : j + 1] + "}")


def _func_powers(s: str) -> str:
    """`x^\\log(y)` -> `x^{\\log(y)}` (at most 200 characters each, linear)."""
    return _each_parenthesized(s, _FUNC_POWER, lambda m, j: "^{" + s[m.start() + 1 : j + 1].strip() + "}")


def _plain_calls(s: str) -> str:
    """`sqrt(...)` -> `\\sqrt{...}`, `abs(...)` -> `\\left|...\\right|`, nested parentheses
    included (at most 200 characters each; one pass per call found, so linear)."""

    def call(m: re.Match, j: int) -> str:
        inner = _plain_calls(s[m.end() : j])
        return f"\\sqrt{{{inner}}}" if m[1] == "sqrt" else f"\\left|{inner}\\right|"

    return _each_parenthesized(s, _PLAIN_CALL, call)


def _plain_text(s: str) -> str:
    """Plain-text math (Python/SymPy style) as LaTeX: functions, `log(x, base)`, `factorial(n)`,
    `x^(2)`, `==`, a subscript of several letters or digits (`v_zmf` is v_{zmf}, not v_z*m*f)."""
    s = _LOG_BASE.sub(lambda m: f"\\log_{{{m[2].strip()}}}({m[1].strip()})", s)
    s = _FACTORIAL.sub(r"(\1)!", s)
    s = _func_powers(_PLAIN_FUNC.sub(lambda m: "\\" + m[1].lower(), s))
    s = _ROOT_POWER.sub(r"^{\1}", _LONG_SUBSCRIPT.sub(r"_{\1}", s))
    return _DOUBLE_EQ.sub("=", _paren_powers(s))


def _times_ten(m: re.Match[str]) -> str:
    return format(Decimal(m[1]).scaleb(int(m[2] or m[3])), "f")


_NUMBER_WORDS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen"
        " seventeen eighteen nineteen".split()
    )
}
_TENS = {w: 10 * i for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), start=2)}
_NUMBER_WORD = re.compile(
    r"[ \t$]{0,3}(?:\\(?:text|mathrm|textbf)[ \t]{0,2}\{)?[ \t]{0,3}(?i:(minus|negative)[ \t]{1,3})?"
    r"([A-Za-z]{3,9})(?:[ \t]{0,2}-[ \t]{0,2}([A-Za-z]{3,5}))?[ \t]{0,3}\}?[ \t.$]{0,3}"
)


def number_word(s: str) -> int | None:
    """The value of an answer that is only a number in words below 100 (`five`, `\\text{forty-two}`,
    `minus three`), else None."""
    m = _NUMBER_WORD.fullmatch(s)
    if m is None:
        return None
    first = m[2].lower()
    if m[3]:  # "forty-two"
        ones = _NUMBER_WORDS.get(m[3].lower(), 0)
        value = _TENS[first] + ones if first in _TENS and 0 < ones < 10 else None
    else:
        value = _NUMBER_WORDS.get(first, _TENS.get(first))
    return None if value is None else (-value if m[1] else value)


def rewrite(s: str) -> str:
    """The answer with the forms above rewritten into ones math-verify reads as meant."""
    if (word := number_word(s)) is not None:
        return str(word)
    s = re.sub(r"(?i:\b(?:minus|negative)[ \t]{1,3})(?=\d)", "-", s)  # "minus 5" is -5
    s, escaped = _DOUBLE_ESCAPED.subn(r"\\", s)
    if escaped:  # a doubly escaped row break `\\\\` (in a matrix) is `\\`
        s = s.replace("\\\\", "\\")
    s = rewrite_loose(s)
    s = _TIMES_TEN.sub(_times_ten, s)
    s = _BARE_COMMAND.sub(r"\\\1", _PLAIN_PI.sub(r"\\pi ", _plain_calls(_POWER.sub("^", s))))
    s = _plain_text(s)
    s = _PERCENT_WORD.sub(r"\\%", s)
    flipped = _VALUE_EQ_VAR.fullmatch(s)
    if flipped and not re.fullmatch(r"[ \t]{0,3}[A-Za-z](?:_\{?[A-Za-z0-9]{1,5}\}?)?[ \t]{0,3}", flipped[1]):
        s = f"{flipped[2]} = {flipped[1].strip()}"  # "2 = x" is "x = 2"
    s = _GROUPED.sub(lambda m: m[0].replace(",\\!", ""), s)
    s = _MIXED.sub(_mixed, s)
    s = _FRAC_PERCENT.sub(r"\\frac{\1}{100\\cdot(\2)}", s)
    if _TRIG.search(s):  # an angle inside sin/cos/... keeps its unit: degrees become radians
        s = _DEGREES.sub(r"\\frac{\1\\pi}{180}", s)
    return s


# ------------------------------------------------------------------------ refusals

_PRIMED = re.compile(
    r"(?<![A-Za-z])([A-Za-z])[ \t]{0,2}((?:'|’|\\prime|\^[ \t]{0,2}\{?[ \t]{0,2}\\prime[ \t]{0,2}\}?){1,3})(?![A-Za-z])"
)
_ELLIPSIS = re.compile(r"\\(?:l|c)?dots(?![A-Za-z])|\.\.\.|…")
_UNIT_SPOT = re.compile(
    r"(?<=[\d}])[ \t]{0,3}(?:\\[,;: ][ \t]{0,3})?"
    r"(?:\\(?:text|mathrm|mbox|textnormal|operatorname)[ \t]{0,2}\{[ \t]{0,3})?"
    r"(?:(square|sq\.?|cubic)[ \t]{1,3})?([A-Za-z]{1,12})(?![A-Za-z])"
    r"(?:[ \t]{0,2}/[ \t]{0,2}([A-Za-z]{1,6})(?![A-Za-z]))?"  # a rate: "km/h", "m/s"
    r"[ \t]{0,2}\}?[ \t]{0,2}(?:\^[ \t]{0,2}\{?([23])\}?)?"
)
_UNITS = {
    "mm": "mm millimeter millimeters millimetre millimetres",
    "cm": "cm centimeter centimeters centimetre centimetres",
    "m": "m meter meters metre metres",
    "km": "km kilometer kilometers kilometre kilometres",
    "in": "in inch inches",
    "ft": "ft foot feet",
    "yd": "yd yard yards",
    "mi": "mi mile miles",
    "s": "s sec secs second seconds",
    "min": "min mins minute minutes",
    "h": "h hr hrs hour hours",
    "day": "day days",
    "week": "week weeks",
    "year": "year years yr yrs",
    "g": "g gram grams",
    "kg": "kg kilogram kilograms",
    "lb": "lb lbs pound pounds",
    "oz": "oz ounce ounces",
    "L": "l liter liters litre litres",
    "mL": "ml milliliter milliliters millilitre millilitres",
    "cent": "cent cents",
    "dollar": "dollar dollars",
    "deg": "degree degrees",
    "rad": "rad radian radians",
}
_UNIT_OF = {alias: unit for unit, aliases in _UNITS.items() for alias in aliases.split()}
UNIT_WORDS = frozenset(_UNIT_OF)


def _unit(word: str) -> str | None:
    return _UNIT_OF.get(word if word in ("mL", "L") else word.lower())


def units(s: str) -> set[str]:
    """Measurement units written after a number (`5 cm`, `5\\text{ cm}^2`, `3 square feet`)."""
    found = set()
    for m in _UNIT_SPOT.finditer(s):
        unit, per = _unit(m[2]), _unit(m[3]) if m[3] else ""
        if unit and per is not None:
            power = m[4] or {"square": "2", "sq": "2", "sq.": "2", "cubic": "3"}.get((m[1] or "").lower(), "")
            found.add(unit + (f"/{per}" if per else "") + (f"^{power}" if power else ""))
    return found


def strip_units(s: str) -> str:
    """Unit words dropped (`5 \\text{ cm}^2` -> `5`, `50 km/h` -> `50`); a bare one-letter unit stays (`2m`
    may be 2*m) unless it is part of a rate (`5 m/s`)."""

    def drop(m: re.Match[str]) -> str:
        wrapped, closed = "{" in m[0], re.search(r"\}[ \t]{0,2}(?:\^.{0,4})?$", m[0]) is not None
        rate = bool(m[3]) and _unit(m[3]) is not None  # "5 m/s": a rate of two units is a unit
        if (
            not _unit(m[2])
            or (m[3] and not rate)
            or (wrapped and not closed)
            or (not wrapped and len(m[2]) == 1 and not rate)
        ):
            return m[0]
        return " }" if closed and not wrapped else " "  # a closing brace not ours (`\\boxed{5 cm}`) stays

    return _UNIT_SPOT.sub(drop, s)


def _value_side(s: str) -> str:
    return s.split("=")[-1] if s.count("=") == 1 else s


def _primes(s: str) -> Counter[tuple[str, int]]:
    return Counter((m[1], len(re.findall(r"'|’|\\prime", m[2]))) for m in _PRIMED.finditer(_value_side(s)))


_LONE_LETTER = re.compile(r"(?<![\\A-Za-z])[A-Za-z](?![A-Za-z])")
_LATEX_COMMAND = re.compile(r"\\[A-Za-z]+")


def _variables(s: str) -> set[str]:
    return set(_LONE_LETTER.findall(_LATEX_COMMAND.sub(" ", s)))


_BOUND = re.compile(
    r"[ \t$]{0,3}(?:[≥≤~≈]|\\(?:geq?|leq?|sim|approx)(?![A-Za-z]))"
)  # "≥ 5", "~5" (not "a \\approx 0.5")


# "a = 9", "y = 2x + 5": one variable on the left of the only equals sign
_SOLVED = re.compile(
    r"[ \t$]{0,3}([A-Za-z](?:_\{?[A-Za-z0-9]{1,5}\}?)?)[ \t]{0,3}=[ \t]{0,3}([^=]{1,200}?)[ \t$.]{0,3}"
)


def _solved_for(s: str) -> str | None:
    m = _SOLVED.fullmatch(s)
    return m[1] if m else None


def mismatch(pred: str, gold: str) -> str | None:
    """Why pred differs from gold in a way math-verify would not see, or None."""
    solved, wanted = _solved_for(pred), _solved_for(gold)
    if solved and wanted and solved != wanted and _variables(pred) != _variables(gold):
        return (
            f"answer solves for {solved}, the reference for {wanted} (b = 9 is not a = 9, x = x/2 + 5 not y = x/2 + 5)"
        )
    if _BOUND.match(pred) and not _BOUND.match(gold) and not _variables(pred):
        return "answer bounds or approximates the value (`≥ 5`, `~5`) where the reference states it"
    pv, gv = _variables(pred), _variables(gold)
    if pv != gv and {v.lower() for v in pv} == {v.lower() for v in gv} and option_letter(gold) is None:
        return "answer's variables differ in case from the reference's (X is not x)"
    for m in _MIXED.finditer(pred):
        if int(m["den"]) == 0 or int(m["num"]) >= int(m["den"]):
            return f"answer writes {m[0].strip()!r}, not a mixed number (its fraction is not proper)"
    if _primes(pred) != _primes(gold):
        return "answer's primed symbols differ from the reference's (f' is not f)"
    pu, gu = units(pred), units(gold)
    if pu and gu and pu != gu:
        return f"answer's unit ({', '.join(sorted(pu))}) is not the reference's ({', '.join(sorted(gu))})"
    if _ELLIPSIS.search(pred) and not _ELLIPSIS.search(gold):
        return "answer trails off with an ellipsis the reference lacks"
    return None


# ---------------------------------------------------------------- direct comparisons

_BARE = re.compile(
    r"\\(?:text|mathrm|textrm|mbox|textnormal|operatorname)[ \t]{0,2}\{([^{}]{0,40})\}|\$|\\[()\[\]]|\\[,;: !]|~"
)
_CLOCK = re.compile(
    r"(?P<h>\d{1,2})(?::(?P<m>[0-5]\d))?(?::(?P<s>[0-5]\d))?[ \t]{0,2}(?:(?P<ap>[AaPp])\.?[ \t]{0,1}[Mm]\.?)?"
)


def _bare(s: str) -> str:
    return _BARE.sub(lambda m: m[1] or "", s).strip().rstrip(".").strip()


def clock_seconds(s: str) -> int | None:
    """Seconds after midnight of a clock time (`10:30`, `10:30:15`, `10:30 PM`, `3 p.m.`), or None."""
    m = _CLOCK.fullmatch(_bare(s))
    if not m or not (m["m"] or m["ap"]):
        return None
    h = int(m["h"])
    if m["ap"]:
        if not 1 <= h <= 12:
            return None
        h = h % 12 + (12 if m["ap"] in "Pp" else 0)
    elif h > 24:
        return None
    return (h % 24) * 3600 + int(m["m"] or 0) * 60 + int(m["s"] or 0)


_FONTS = re.compile(
    r"\\(?:mathcal|mathscr|mathbf|mathit|mathsf|mathtt|mathrm|textbf|textit|textrm|textsf|texttt|textnormal|"
    r"text|boldsymbol|bm|mbox)[ \t]{0,2}\{([^{}]{0,200})\}"
)
_OPTION = re.compile(r"\(?(?P<a>[A-J])\)?|(?:\((?P<b>[A-J])\)|(?P<c>[A-J])[.:)])[ \t]{1,3}\S.{0,200}", re.S)


def unfont(s: str) -> str:
    """Font and text wrappers dropped (`\\mathcal{B}` -> `B`); `\\mathbb` is kept (it names a set)."""
    for _ in range(2):
        s = _FONTS.sub(r"\1", s)
    return s


def option_letter(s: str) -> tuple[str, bool] | None:
    """(letter, written with its value) for a choice letter answer (`C`, `(C)`, `C. x = 42`)."""
    m = _OPTION.fullmatch(_bare(unfont(s)))
    if not m:
        return None
    return (m["a"], False) if m["a"] else (m["b"] or m["c"], True)


_FUNCTION_LHS = re.compile(
    r"[ \t]{0,3}(?:[A-Za-z](?:_\{?\w{1,3}\}?)?[ \t]{0,2}\([ \t]{0,2}[A-Za-z][ \t]{0,2}\)|y)[ \t]{0,3}=([^=]{1,600})"
)


def function_rhs(s: str) -> str | None:
    """The right side of `f(x) = ...` / `y = ...` (a function by any name), or None."""
    m = _FUNCTION_LHS.fullmatch(_bare(s))
    return m[1].strip() if m else None


# a plain decimal: sign, digits, point, digits ("3.1416", "-0.25")
_DECIMAL = re.compile(r"[ \t$]{0,3}(-?)(\d{1,15})\.(\d{1,15})[ \t$]{0,3}")


def rounds_to(pred: str, gold: str) -> bool:
    """Does the decimal pred, given to more places than the decimal gold, round (half up) to it? Only where the
    gold looks rounded: three decimal places or more and four significant digits or more (`3.14159` for `3.1416`;
    not `0.254` for `0.25` or `12.2549` for `12.25`, which may be exact)."""
    p, g = _DECIMAL.fullmatch(pred), _DECIMAL.fullmatch(gold)
    if not p or not g or len(p[3]) <= len(g[3]) or len(g[3]) < 3 or len((g[2] + g[3]).lstrip("0")) < 4:
        return False
    places = len(g[3])
    scaled = int(p[2] + p[3][:places]) + (p[3][places] >= "5")
    return p[1] == g[1] and scaled == int(g[2] + g[3])
