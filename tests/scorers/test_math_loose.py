"""Loosely written LaTeX read as meant, at the string level (scorers.math_loose; verdicts: round15_fixes.jsonl)."""

from __future__ import annotations

import pytest

from scorers.math_forms import UNIT_WORDS
from scorers.math_loose import brace_variables, rewrite_loose, shared_labels

VALUE_WORDS = frozenset({"or", "and", "not", "squared"})


@pytest.mark.parametrize(
    ("loose", "read"),
    [
        ("\\sqrt(4)", "\\sqrt{4}"),
        ("\\sqrt[4](16)", "\\sqrt[4]{16}"),
        ("\\sqrt [3]8", "\\sqrt[3]{8}"),
        ("sqrt3", "\\sqrt3"),
        ("sqrt32", "sqrt32"),  # which root? left as written
        ("frac12", "\\frac12"),
        ("sinx", "\\sin x"),
        ("sinh", "sinh"),
        ("cost", "cost"),
        ("\\cos^2 t", "\\cos^{2}{t}"),
        ("y=3x+1,200", "y=3x+1200"),
        ("72,300(1.008)^x=100,000", "72300\\cdot(1.008)^x=100000"),
        ("(1,500)", "(1,500)"),
        ("1,500, 2,500", "1,500, 2,500"),
        ("x=1,500", "x=1,500"),  # may list x = 1, 500
        ("36(64)", "36\\cdot(64)"),
        ("12\\text{ cm}\\text{ squared}", "12\\text{ cm}^2"),
        ("12\\text{ squared}", "12\\text{ squared}"),
        ("2.71828182845905^{x}", "e ^{x}"),
        ("2.71828^{x}", "2.71828^{x}"),
        ("8*[2*cos(t)]^2", "8*(2*cos(t))^2"),
        ("[1, 2]", "[1, 2]"),
    ],
)
def test_rewrite_loose(loose, read):
    assert rewrite_loose(loose) == read


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("5-5c", "5-5{c}"),
        ("7.5\\le c", "7.5\\le {c}"),
        ("\\frac{1}{a}by", "\\frac{1}{a}{by}"),
        ("h=\\frac{da}{c}", "h=\\frac{{d}a}{c}"),
        ("10m", "10m"),  # a number with its unit
        ("\\frac{1}{2} h", "\\frac{1}{2} h"),
        ("x=5 cm", "x=5 cm"),
        ("x = 5 m", "x = 5 m"),
        ("c=-b\\div m", "c=-b\\div {m}"),
        ("\\frac{dy}{dx}", "\\frac{dy}{dx}"),  # a derivative keeps its differentials
    ],
)
def test_brace_variables(text, parsed):
    assert brace_variables(text, UNIT_WORDS) == parsed


def test_shared_labels_are_dropped_only_when_the_same():
    same = shared_labels("(3+3)\\text{eggs}=72\\div12", "72\\div12=6\\text{eggs}", VALUE_WORDS)
    assert same == ("(3+3)=72\\div12", "72\\div12=6")
    other = ("(3+3)\\text{pears}=72\\div12", "72\\div12=6\\text{eggs}")
    assert shared_labels(*other, VALUE_WORDS) == other
    hedge = ("5\\text{ or }", "5\\text{ or }")
    assert shared_labels(*hedge, VALUE_WORDS) == hedge
