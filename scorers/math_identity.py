"""Identities SymPy's simplification does not prove, tested by value (pure, SymPy only).

Two expressions in the same variables, built only from arithmetic, powers and elementary
functions (exp, log, trigonometric, hyperbolic and their inverses, abs), are taken equal when
their values (principal branches, complex where a root or logarithm of a negative number makes
them so) agree to 12 significant digits at every one of SAMPLES real points where both are
finite, at least MIN_POINTS of them: `\\sin(x/2)/(1+\\tan x \\tan(x/2))` = `\\sin(x/2)\\cos x`,
`x^{\\log y}` = `y^{\\log x}`, `\\log|x^2-9|` = `\\log|x-3| + \\log|x+3|`,
`((x+3)^2 (x+3))^{1/3}` = `((x+3)(x^2+6x+9))^{1/3}`, `0.333333333333333 x^2` = `x^2/3`.
Two analytic expressions that differ do so on all but a set of measure zero, so agreement at points
spread over negative, small and large values is no coincidence. The points are drawn afresh for each
comparison from the operating system's randomness (magnitudes log-uniform in 0.1..1, 1..2, 2..4 and 4..16
in turn, each variable's signs in a fixed pattern that gives every sign combination of up to three
variables), so an answer cannot be written to agree with the reference at known points only (`f(x) +
(x-a)(x-b)...`); random reals are never integers (where `\\sin(\\pi x)` = 0). The two sides must
agree where either is non-real, so `\\sqrt{x^2}` is not `x` (x = -2) nor `((x-2)^3)^k` `(x-2)^{3k}`.
Piecewise, rounding, min/max, sums, integrals and unknown functions are not tested here. Callers
bound the time (scorers.math_equiv's CPU limit).
"""

from __future__ import annotations

import random

import sympy

SAMPLES = 12
BANDS = ((-1.0, 0.0), (0.0, 0.30103), (0.30103, 0.60206), (0.60206, 1.2))  # log10 magnitudes 0.1-1, 1-2, 2-4, 4-16
MIN_POINTS = 8
DIGITS = 30  # working precision of each evaluation
RELATIVE = sympy.Float("1e-12")
_ALLOWED = (
    sympy.Symbol, sympy.Number, sympy.NumberSymbol, sympy.core.numbers.ImaginaryUnit, sympy.Add, sympy.Mul,
    sympy.Pow, sympy.Abs, sympy.exp, sympy.log,
    sympy.sin, sympy.cos, sympy.tan, sympy.cot, sympy.sec, sympy.csc,
    sympy.asin, sympy.acos, sympy.atan, sympy.acot, sympy.asec, sympy.acsc,
    sympy.sinh, sympy.cosh, sympy.tanh, sympy.coth, sympy.sech, sympy.csch,
    sympy.asinh, sympy.acosh, sympy.atanh,
)  # fmt: skip


def _elementary(x: object) -> bool:
    return isinstance(x, sympy.Expr) and all(isinstance(n, _ALLOWED) for n in sympy.preorder_traversal(x))


def _value(x: sympy.Expr, point: dict) -> sympy.Expr | None:
    v = x.evalf(DIGITS, subs=point)
    return v if v.is_number and v.is_finite else None


def sample_points(names: list) -> list[dict]:
    """SAMPLES points (rules above): variable j at point k is negative where bit j of k is set, its magnitude
    from BANDS in turn, two points a band (every band with both signs for one variable)."""
    draw = random.SystemRandom()
    return [
        {s: sympy.Float((-1) ** ((k >> j) & 1) * 10 ** draw.uniform(*BANDS[(k // 2 + j) % len(BANDS)]), DIGITS)
         for j, s in enumerate(names)}
        for k in range(SAMPLES)
    ]  # fmt: skip


def equal_by_value(gold: object, pred: object) -> bool:
    """Whether gold and pred (SymPy expressions with variables) agree at the sample points (rules above)."""
    if not (_elementary(gold) and _elementary(pred)) or gold.free_symbols != pred.free_symbols:
        return False
    names = sorted(gold.free_symbols, key=lambda s: s.name)
    if not names:
        return False
    agreed = 0
    for point in sample_points(names):
        a, b = _value(gold, point), _value(pred, point)
        if a is None or b is None:
            continue
        if abs(a - b) > RELATIVE * max(abs(a), abs(b)) + sympy.Float("1e-20"):
            return False
        agreed += 1
    return agreed >= MIN_POINTS
