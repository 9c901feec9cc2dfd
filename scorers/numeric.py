"""Numeric answer check for GSM8K / AIME (pure: no Inspect import).

The answer (scorers.extract.final_answer; without a marker, a GSM8K `#### X` line, else the
value the last sentence states or the last "the answer is X" on its line: `unmarked_answer`)
must state one number, compared exactly as a fraction:
- read: `1,000`, `1 000`, `5cm`, `2nd` (a number glued to other letters, `42abc`, is none),
  `$18.00`, `45%` (= 45), `070`, `-7`/`−7`/`- 7`/`-$7`, `-(-7)` (= 7), `3/4`, `\\frac{3}{4}`,
  `1 1/2` (= 3/2), `1½`, `1.2345e3`, `3.0e-2`, `1.5 \\times 10^{3}`, full-width digits;
- a number in words below 100, alone: `twelve`, `forty-two`, `minus three`;
- scale words multiply: `1.5 million` = 1500000 (so it never equals a target of 1.5);
- `x = 26` and `2025 - 1999 = 26` read the part after the last `=`;
- an explanation after the value is not read unless it doubts, bounds or revises it (`extract.explained`:
  `12 (the remainder is 0)`, `42, which is the total after 2 days`; not `5 (or 6)`);
- several different numbers count only when the last follows a conclusion word
  (`5 apples and 3 pears, so 8`); otherwise (`1, 2, 3`, `5 - 3`, `5-10`) it is no answer;
- equal as fractions, or within 1e-7 of the target, relative (a float's printing): `42.0000001` = 42;
- a lone letter after the number other than a unit (`4 y`, not `4 m`) makes it an expression: none;
- hedges and negations score 0: `8 or 9`, `between 5 and 10`, `either`, `probably 5`, `not 25`, `±`, conditions
  (`if`, `when`, `otherwise`), bounds (`at least 5`, `5 max`, `under 5`: `extract.BOUNDS`), changed values (`twice 5`,
  `5 hundredths`, `5 factorial`), a box followed by another value (`\\boxed{33} and 34`), an answer taken back
  or hedged in the sentence after it, the `#### X` line too (`#### 18` then `Or 19.`).
"""

from __future__ import annotations

import re
from fractions import Fraction

from scorers.extract import (
    BOUNDS,
    FRACTION_WORDS,
    HEDGE_WORDS,
    MAX_ANSWER_CHARS,
    CheckResult,
    explained,
    final_answer,
    last_marker,
    last_match,
    normalize_unicode,
    response_part,
    retraction,
    unmarked_answer,
)
from scorers.math_forms import UNIT_WORDS, number_word, rounds_to

FLOAT_NOISE = Fraction(1, 10**7)  # a relative difference this small is a float's printing (float32), not a value
# ordinal and unit suffixes a number may be glued to ("2nd", "5usd")
_SUFFIXES = {"st", "nd", "rd", "th", "usd", "pct", "percent", "mph", "kph"}

_NUMBER = re.compile(
    r"(?<![\w.])(?P<sign>[-+]?)(?:"
    r"(?P<whole>\d{1,9})[ \t](?P<mn>\d{1,9})[ \t]{0,2}/[ \t]{0,2}(?P<md>\d{1,9})(?![\d.])"
    r"|(?P<int>\d{1,3}(?:,\d{3})+(?!\d)|\d{1,3}(?: \d{3})+(?![\d/])|\d+)(?P<frac>\.\d+)?"
    r"(?:[eE](?P<exp>[-+]?\d{1,4}))?"
    r"(?:[ \t]{0,2}/[ \t]{0,2}(?P<den>\d+(?:\.\d+)?))?"
    r"|\.(?P<dec>\d+))"
    r"(?:[ \t]{0,3}(?P<scale>(?i:hundred|thousand|million|billion|trillion)"
    r"(?:[ \t]{1,3}(?i:thousand|million|billion))?)\b)?"
    # a number ends at a non-alphanumeric or at a unit or ordinal suffix: "5cm", "2nd", not "42abc"
    rf"(?=(?i:{'|'.join(sorted(UNIT_WORDS | _SUFFIXES, key=len, reverse=True))})"
    r"(?![A-Za-z])|[^A-Za-z0-9]|$)"
)
_SCALE = {"hundred": 10**2, "thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_TIMES_TEN = re.compile(
    r"[ \t]{0,3}(?:\\times|\\cdot|×|\*|x)[ \t]{0,3}10[ \t]{0,2}\^[ \t]{0,2}\{?[ \t]{0,2}([-+]?\d{1,4})[ \t]{0,2}\}?"
)
_WRAP = re.compile(r"\\(?:text|textbf|mathrm|mbox|boxed|fbox)[ \t]{0,3}\{([^{}]{0,200})\}")
_FRAC = re.compile(r"\\[dt]?frac[ \t]{0,3}\{([^{}]{1,40})\}[ \t]{0,3}\{([^{}]{1,40})\}")
_HEDGE = re.compile(
    rf"(?i:\b(?:or|between|either|and/or|if|otherwise|unless|else|when|in[ \t]most[ \t]cases|{HEDGE_WORDS})\b)"
    # a negated value: "not 25", "the answer is not 5", "isn't 5"; not a scope: "25 (not counting the teacher)"
    r"|(?i:n['’]t\b|\bnot\b(?![ \t]{1,3}(?:counting|including)\b))"
    r"|±|\+/-|\\pm(?![A-Za-z])"
    # a change of the value, not the value: "twice 5", "4-ish", "5 hundredths", "5 factorial" (bounds: extract.BOUNDS;
    # "about 5" is read as 5, as inspect_ai's and reward-kit's tests read "approximately": an estimate of the value)
    r"|(?i:\b(?:above|below|twice|half|double|triple|squared|cubed|ish|factorial)\b)|[≥≤]|[<>]=?(?=[ \t]{0,2}[-+]?\d)"
    rf"|(?<=\d)[ \t]{{1,3}}(?i:{FRACTION_WORDS})\b|(?<=\d)\+(?![\d])"
)
_CONCLUDE = re.compile(
    r"(?i:\b(?:so|thus|therefore|hence|total|totals|is|are|was|equals?|gives|makes|get|gets)\b)|=|⇒|\\Rightarrow"
)
# a lone letter after the number, a factor rather than a unit or article: "4 y", "4 * n" (not "4 m", "20 a day")
_TIMES_VARIABLE = re.compile(r"[ \t]{0,3}[*·]?[ \t]{0,3}([A-Za-z])(?![A-Za-z])")
# a number alone under a level-3 markdown heading on the last line, the only such heading: "### 150"
_HEADING = re.compile(r"(?:^|\n)###[ \t]{1,8}(\$?[-+]?\d[\d,.]{0,30})[ \t]{0,8}\n?$")
_HEADINGS = re.compile(r"(?m:^[ \t]{0,3}###[ \t]{1,8}\$?[-+]?\d)")
_GSM8K = re.compile(r"####[ \t]{0,8}([^\n]{0,200})")
# a template's placeholder after "####": "N", "x", "<answer>", "[number]", "your answer" (not "insufficient
# information", "cannot be determined": a non-numeric answer, no answer)
_PLACEHOLDER = re.compile(
    r"[ \t*_$]{0,4}(?:[A-Za-z]|[<\[{][^\n<>\[\]{}]{0,30}[>\]}]"
    r"|(?i:(?:your|the|final)[ \t]{1,3})?(?i:answer|number|result|value))[ \t*_$.]{0,4}"
)
# the last decimal an answer writes, and a percent sign closing it ("3.14159", "50%", "50 \\%")
_DECIMAL_NUMBER = re.compile(r"-?\d{1,15}\.\d{1,15}")
_PERCENT_END = re.compile(r"\d[ \t]{0,2}\\?%[ \t.*_$]{0,4}$")
# a box followed by another value on its line: "\boxed{33} and 34" answers two values
_AFTER_BOX = re.compile(r"[ \t]{0,3}(?:,|;|&|(?i:and|or)\b)[ \t]{0,3}\$?[ \t]{0,2}[-+]?\.?\d")


def _clean(text: str) -> str:
    text = normalize_unicode(text)
    text = text.replace("\\$", "$").replace("\\%", "%").replace("\\!", "").replace("{,}", ",")
    text = re.sub(r"\\[,;: ]|~", " ", text)
    text = re.sub(r"(^|[($])[ \t]{0,2}([-+])[ \t]{1,2}(?=\d)", r"\1\2", text)  # "(- 1)" and "- 5" are -1, -5
    text = re.sub(r"-[ \t]{0,2}\([ \t]{0,2}-[ \t]{0,2}(\d[\d.,]{0,30})[ \t]{0,2}\)", r"\1", text)  # "-(-5)" is 5
    text = re.sub(r"-[ \t]{0,2}\([ \t]{0,2}(\d[\d.,]{0,30})[ \t]{0,2}\)", r"(-\1)", text)  # "-(4)" is -4
    text = re.sub(r"(?<![\w.])\$?-\$[ \t]{0,2}(?=\d)", "-", text)  # "-$5", "$-$5" are -5
    text = re.sub(r"</?[A-Za-z]{1,10}(?:[ \t][^<>]{0,100})?>", " ", text)  # HTML: "<b>4</b>", "<span class=...>"
    text = re.sub(r"(?i:\b(?:minus|negative)[ \t]{1,3})(?=\d)", "-", text)  # "minus 5"
    text = re.sub(r"\\(?:left|right)(?![A-Za-z])", "", text)
    for _ in range(2):
        text = _WRAP.sub(r" \1 ", text)
    text = _FRAC.sub(r"\1/\2", text)
    text = _TIMES_TEN.sub(r"e\1", text)
    text = re.sub(r"\\pm(?![A-Za-z])", "±", text)
    return re.sub(r"\\[A-Za-z]+", " ", text)  # \quad, \cdot, ...: spacing or operators


def _value(m: re.Match[str]) -> Fraction | None:
    try:
        if m.group("whole") is not None:
            if int(m.group("md")) == 0:
                return None
            value = int(m.group("whole")) + Fraction(int(m.group("mn")), int(m.group("md")))
        elif m.group("dec") is not None:
            value = Fraction("0." + m.group("dec"))
        else:
            value = Fraction(m.group("int").replace(",", "").replace(" ", "") + (m.group("frac") or ""))
            if m.group("exp"):
                value *= Fraction(10) ** int(m.group("exp"))
            if m.group("den") is not None:
                den = Fraction(m.group("den"))
                if den == 0:
                    return None
                value /= den
    except (ValueError, ZeroDivisionError):
        return None
    if m.group("scale"):
        for word in m.group("scale").lower().split():  # "2 hundred thousand" = 200000
            value *= _SCALE[word]
    return -value if m.group("sign") == "-" else value


def read_number(text: str) -> tuple[Fraction | None, str]:
    """The one number an answer states, or (None, why not). See the module doc."""
    if (word := number_word(text)) is not None:  # "twelve", "\\text{forty-two}"
        return Fraction(word), ""
    s = _clean(text)
    if len(s) > MAX_ANSWER_CHARS:
        return None, f"answer longer than {MAX_ANSWER_CHARS} characters"
    s = explained(s)  # "12 (the remainder is 0)": the explanation after the value is not read
    if _HEDGE.search(s) or BOUNDS.search(s):
        return None, f"answer hedges or bounds its value (scores 0): {s[:60]!r}"
    if "=" in s:
        s = s[s.rindex("=") + 1 :]
    found = [(m, _value(m)) for m in _NUMBER.finditer(s)]
    found = [(m, v) for m, v in found if v is not None]
    if not found:
        return None, f"no number in the answer: {s[:60]!r}"
    last_m, last_v = found[-1]
    variable = _TIMES_VARIABLE.match(s, last_m.end())
    if variable and variable[1] not in UNIT_WORDS | {"a", "A", "I"}:  # "$20 a day" keeps its article
        return None, f"answer is an expression in {variable[1]!r}, not a number: {s[:60]!r}"
    distinct = {v for _, v in found}
    if len(distinct) > 1:
        prev_end = found[-2][0].end()
        if not _CONCLUDE.search(s[prev_end : last_m.start()]):
            return None, f"answer states several numbers, not one: {s[:60]!r}"
    return last_v, ""


def parse_number(text: str) -> Fraction | None:
    """Exact value of a number string ("1,000", "$18.00", "-3", "3/4"); None if not one."""
    return read_number(text)[0]


def _format(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    return str(float(value)) if len(str(float(value))) < 12 else str(value)


def extract_numeric(completion: str | None) -> tuple[str | None, Fraction | None, str]:
    """Return (answer text, value, how found / why not)."""
    answer, how = final_answer(completion)
    if answer is not None and how == "last \\boxed{}":
        box = last_marker(response_part(completion or ""))
        tail = response_part(completion or "")[box.cend + 1 : box.cend + 40] if box else ""
        if _AFTER_BOX.match(tail):
            return answer, None, f"{how}: another value follows the box: {tail.strip()[:30]!r}"
    if answer is None and how.startswith("no answer marker") and completion:
        text = response_part(completion)
        last = last_match(_GSM8K, text)
        if last is not None and retraction(text, last.end()):  # "#### 18" then "Or 19."
            return None, None, "no marker; last '####' line: taken back or hedged after it"
        if last is not None and _PLACEHOLDER.fullmatch(last[1]):
            last = None  # a template's placeholder echoed ("#### N"): the answer is given elsewhere
        if last is not None:
            answer, how = last.group(1).strip(), "no marker; last '####' line"
        else:
            answer, how = unmarked_answer(completion)
            heading = _HEADING.search(text[-200:]) if answer is None else None
            if heading is not None and len(_HEADINGS.findall(text)) == 1:  # "### 149" above it: two answers
                answer, how = heading.group(1), "no marker; a last line '### <number>'"
    if answer is None:
        return None, None, how
    if not answer.strip():
        return None, None, f"{how}: answer is empty"
    value, why = read_number(answer)
    if value is None:
        return answer, None, f"{how}: {why}"
    return answer, value, f"from {how}"


def check_numeric(completion: str | None, target: str) -> CheckResult:
    """Numeric equality between the one number answered and the target: exact, or within FLOAT_NOISE of the
    target when the answer is not a whole number (1e-7 relative, a float32's printing error: `42.0000001` for 42,
    `3.1400001` for 3.14; not `42.00001`, `10000001` for 10000000, `0.1000009` for 0.1, `0.333333` for 1/3), or a
    decimal given to more places that rounds to a rounded target as the math check's rule (`3.14159` for 3.1416),
    or a percentage whose fraction is a target written without `%` (`50%` for 0.5; not `50` for 0.5)."""
    gold = parse_number(str(target))
    if gold is None:
        return CheckResult(False, None, f"target is not a number: {target!r}")
    text, value, how = extract_numeric(completion)
    if value is None:
        return CheckResult(False, None, how)
    extracted = _format(value)
    if value == gold:
        return CheckResult(True, extracted, f"{extracted} == {_format(gold)} ({how})")
    if value.denominator != 1 and abs(value - gold) <= FLOAT_NOISE * abs(gold):  # "42.0000001": a float's printing
        return CheckResult(True, extracted, f"{extracted} == {_format(gold)} to a float's precision ({how})")
    written = last_match(_DECIMAL_NUMBER, text or "")
    if written and Fraction(written[0]) == value and rounds_to(written[0], str(target).strip()):
        return CheckResult(True, extracted, f"{extracted} rounds to {target} at its decimal places ({how})")  # 3.14159
    if _PERCENT_END.search(text or "") and "%" not in str(target) and value / 100 == gold:  # "50%" for 0.5
        return CheckResult(True, extracted, f"{extracted}% == {_format(gold)} ({how})")
    return CheckResult(False, extracted, f"{extracted} != {_format(gold)} ({how})")
