"""Relations compared as careful graders compare them; identities tested by value (scorers.math_relations,
scorers.math_identity). The whole check on these forms: tests/data/answer_cases/round9_fixes.jsonl."""

from __future__ import annotations

import pytest
import sympy
from sympy.parsing.sympy_parser import parse_expr

from scorers import math_identity, math_relations


def _parse(s: str) -> sympy.Basic:
    return parse_expr(s, local_dict={"I": sympy.I}, evaluate=True)


def _equal_values(a: object, b: object) -> bool:
    return sympy.simplify(a - b) == 0


@pytest.mark.parametrize(
    ("pred", "gold", "same"),
    [
        ("Eq(y, x)", "Eq(x, y)", True),
        ("Eq(2*x, 2*y)", "Eq(x, y)", True),
        ("Eq((1 + I)*(x + y), 0)", "Eq(y, -x)", True),  # a nonzero complex factor
        ("Eq(Abs(x), Abs(y))", "Eq((x - y)*(x + y), 0)", True),
        ("Eq(1/x + 1/y, 2)", "Eq(y, x/(2*x - 1))", True),  # fractions cleared
        ("Eq(x, 0.5)", "Eq(x, Rational(1, 2))", True),
        ("Eq(a**3*b**3, 0)", "Eq(a*b, 0)", False),  # the same roots, another multiplicity
        ("Eq(sqrt(x), sqrt(y))", "Eq(x, y)", False),  # another domain
        ("Eq(a*x, a*y)", "Eq(x, y)", False),
        ("Eq(Abs(x), y)", "Eq(x**2, y**2)", False),
        ("2 < 2*x", "x > 1", True),
        ("-2 > -2*x", "x > 1", True),
        ("3*x**2 < 9*a", "x**2 - 3*a < 0", True),
        ("x**4 >= 16", "x**2 >= 4", True),  # the same real solutions
        ("-4*x > -4", "x > 1", False),
        ("x >= 1", "x > 1", False),
        ("a > 1", "x > 1", False),  # another variable
    ],
)
def test_relations(pred, gold, same):
    assert math_relations.compare(_parse(gold), _parse(pred), _equal_values) is same


def test_what_is_not_a_single_relation_is_left_to_math_verify():
    x = sympy.Symbol("x")
    assert math_relations.compare(x + 1, x + 1, _equal_values) is None
    assert math_relations.compare(sympy.And(x > 1, x < 2), sympy.And(x > 1, x < 2), _equal_values) is None
    assert math_relations.compare(sympy.Eq(x, 1), x >= 1, _equal_values) is None


@pytest.mark.parametrize(
    ("pred", "gold", "same"),
    [
        ("sin(x/2)/(1 + tan(x)*tan(x/2))", "sin(x/2)*cos(x)", True),
        ("x**log(y)", "y**log(x)", True),
        ("log(Abs(x**2 - 9))", "log(Abs(x - 3)) + log(Abs(x + 3))", True),
        ("((x + 3)**2*(x + 3))**Rational(1, 3)", "((x + 3)*(x**2 + 6*x + 9))**Rational(1, 3)", True),
        ("0.333333333333333*x**2", "x**2/3", True),
        ("0.33*x**2", "x**2/3", False),
        ("sqrt(x**2)", "x", False),  # x = -2 tells them apart
        ("log(x**2)", "2*log(x)", False),
        ("6*((x - 2)**3)**k", "6*(x - 2)**(3*k)", False),  # complex where x < 2: the values differ
        ("x", "x + sin(pi*x)", False),  # equal at every integer: the points avoid integers
        ("(-1)**n*cos(x)**n", "(-cos(x))**n", False),  # equal for integer n only
        ("floor(x) + 1", "ceiling(x)", False),  # not an elementary function: not tested by value
        ("y", "x", False),
        ("2", "2", False),  # no variable: left to math-verify's precision
    ],
)
def test_identities_by_value(pred, gold, same):
    assert math_identity.equal_by_value(_parse(gold), _parse(pred)) is same


def test_an_answer_built_to_agree_at_points_known_in_advance_is_refused():
    """Points an attacker could read (here the 12 this module once fixed) make a forgery: the reference plus a
    polynomial vanishing there; the points are drawn afresh for each comparison, so it does not agree."""
    known = (0.3719, -0.6143, 1.2917, -1.8361, 2.7183, -2.2361, 0.9349, -0.1733, 4.4129, -5.5691, 9.7043, -13.1071)
    forged = "x**2/3 + " + "*".join(f"(x - ({p}))" for p in known)
    assert math_identity.equal_by_value(_parse("x**2/3"), _parse(forged)) is False
    first, second = math_identity.sample_points(["x"]), math_identity.sample_points(["x"])
    assert first != second and len(first) == math_identity.SAMPLES
    assert {p["x"] < 0 for p in first} == {True, False}  # both signs, every draw
