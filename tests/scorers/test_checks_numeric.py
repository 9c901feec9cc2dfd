"""Numeric answers (GSM8K, AIME): hand-made tricky completions."""

from __future__ import annotations

from fractions import Fraction

import pytest

from scorers.checks import check_numeric, extract_numeric
from scorers.numeric import parse_number

# (completion, target, expected correct)
CASES = [
    ("ANSWER: 18", "18", True),
    ("She earns 9*2 = 18 dollars.\nANSWER: 18", "18", True),
    ("ANSWER: 1,000", "1000", True),
    ("ANSWER: 1000", "1,000", True),
    ("ANSWER: 1,234,567", "1234567", True),
    ("ANSWER: $18", "18", True),
    ("ANSWER: \\$18.00", "18", True),
    ("ANSWER: 18 dollars", "18", True),
    ("ANSWER: 45%", "45", True),
    ("ANSWER: 45\\%", "45", True),
    ("ANSWER: 12.0", "12", True),
    ("ANSWER: 12", "12.0", True),
    ("ANSWER: 12.5", "12", False),
    ("ANSWER: -7", "-7", True),
    ("ANSWER: −7", "-7", True),  # unicode minus
    ("ANSWER: 7", "-7", False),
    ("ANSWER: 070", "70", True),  # AIME style leading zero
    ("ANSWER: **588**", "588", True),
    ("ANSWER: $\\boxed{588}$", "588", True),
    ("ANSWER: 3/4", "0.75", True),
    ("ANSWER: \\frac{3}{4}", "0.75", True),
    ("ANSWER: 0.5", "1/2", True),
    ("ANSWER: 5 apples and 3 pears, so 8", "8", True),  # last number wins
    ("ANSWER: 1, 2, 3", "3", False),  # a list of candidates is no answer
    ("ANSWER: 8 or 9", "8", False),  # hedge
    ("ANSWER: between 5 and 10", "5", False),
    ("ANSWER: 5 - 3", "-3", False),  # an expression, not -3
    ("ANSWER: 1.2345e3", "1234.5", True),
    ("ANSWER: 3.0e-2", "0.03", True),
    ("ANSWER: 1 000", "1000", True),
    ("ANSWER: 1 1/2", "1.5", True),
    ("ANSWER: 1½", "1.5", True),
    ("ANSWER: 1.5 million", "1500000", True),
    ("ANSWER: 1.5 million", "1.5", False),  # scale words multiply
    ("<answer>42</answer>", "42", True),
    ("ANSWER: 4\nHmm, recheck.\nANSWER: 5", "5", True),
    ("ANSWER: 5\nHmm, recheck.\nANSWER: 4", "5", False),
    ("ANSWER: 2025 - 1999 = 26", "26", True),
    ("ANSWER: x = 26", "26", True),
    ("The result is \\boxed{42}.", "42", True),  # no ANSWER line: \boxed fallback
    ("Work...\n#### 42", "42", True),  # GSM8K style fallback
    ("ANSWER: 42.", "42", True),
    ("ANSWER: v2 is 10", "10", True),
    ("", "1", False),
    ("ANSWER:", "1", False),
    ("ANSWER: twelve", "12", True),  # a number in words, alone
    ("ANSWER: twelve", "13", False),
    ("ANSWER: twelve apples and a pear", "12", False),
    ("The total is 12.", "12", True),  # no marker: the value the last sentence states
    ("The total is 12, maybe.", "12", False),  # ... unless it doubts it
    (None, "1", False),
]


@pytest.mark.parametrize(("completion", "target", "correct"), CASES)
def test_check_numeric(completion, target, correct):
    result = check_numeric(completion, target)
    assert result.correct is correct, result.reason


def test_at_least_30_cases():
    assert len(CASES) >= 30


def test_extraction_details():
    assert extract_numeric("ANSWER: $1,000.50 total")[:2] == ("$1,000.50 total", Fraction(2001, 2))
    assert extract_numeric("") == (None, None, "empty output")
    text, value, reason = extract_numeric("ANSWER: none")
    assert value is None and "no number" in reason


def test_reason_and_extracted():
    res = check_numeric("ANSWER: 12.0", "12")
    assert res.correct and res.extracted == "12" and "12 == 12" in res.reason
    bad = check_numeric("ANSWER: 3", "4")
    assert bad.extracted == "3" and "3 != 4" in bad.reason


def test_non_numeric_target():
    res = check_numeric("ANSWER: 4", "a few")
    assert not res.correct and "target is not a number" in res.reason
    assert check_numeric("ANSWER: 4", "four").correct  # a number in words is one


@pytest.mark.parametrize(
    ("text", "value"),
    [("1,000", 1000), ("-3", -3), ("3/4", Fraction(3, 4)), (".5", Fraction(1, 2)), ("x", None)],
)
def test_parse_number(text, value):
    assert parse_number(text) == value
