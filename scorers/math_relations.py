"""Relations (equations, inequalities) compared as careful graders compare them (pure, SymPy only).

math-verify compares two relations by solving both, so it credits `a^3 b^3 = 0` for `a b = 0` (the
same roots, another multiplicity) and `\\sqrt{x} = \\sqrt{y}` for `x = y` (another domain). Here:
- equations: the same unknowns, and one side-difference (its numerator, fractions cleared) a nonzero
  constant times the other (`2x = 2y` = `y = x` = `x - y = 0`; `|x| = |y|` read as `x^2 = y^2`);
  an answer solved for a variable (`x = 0.5`) against a reference solved for it (`x = 1/2`) compares
  the two values as math-verify does (its precision);
- inequalities: the same unknowns and strictness (`x^2+x+1 > 0` is not `x^2+x+1 >= 0`), and one
  side-difference a positive constant times the other (`2 < 2x` = `x > 1`, `3x^2 < 9a` =
  `x^2 - 3a < 0`), or, with one unknown, the same set of real solutions (`x^4 >= 16` = `x^2 >= 4`;
  `a > 1` is not `x > 1`).
Anything else (chains, systems, an equation against an inequality) is left to math-verify.
Callers bound the time (the CPU limit around every comparison in scorers.math_equiv).
"""

from __future__ import annotations

from collections.abc import Callable

import sympy
from sympy.core.relational import Relational

_GREATER = (sympy.StrictGreaterThan, sympy.GreaterThan)
_LESS = (sympy.StrictLessThan, sympy.LessThan)


def _single(x: object) -> bool:
    return isinstance(x, Relational) and not any(isinstance(a, Relational) for a in x.args)


def _difference(rel: Relational) -> sympy.Expr:
    """lhs - rhs, oriented so the relation reads `difference > 0` (or >= 0, or = 0); decimals exact."""
    if isinstance(rel, sympy.Eq) and all(isinstance(a, sympy.Abs) for a in rel.args):
        d = rel.lhs.args[0] ** 2 - rel.rhs.args[0] ** 2  # |a| = |b| is a^2 = b^2
    else:
        d = rel.rhs - rel.lhs if isinstance(rel, _LESS) else rel.lhs - rel.rhs
    return sympy.nsimplify(d, rational=True) if d.atoms(sympy.Float) else d


def _numerator(d: sympy.Expr) -> sympy.Expr:
    return sympy.fraction(sympy.cancel(sympy.together(d)))[0]


def _constant_ratio(pred: sympy.Expr, gold: sympy.Expr) -> sympy.Expr | None:
    """pred / gold when it simplifies to a constant (no variables), else None."""
    if gold == 0:
        return sympy.Integer(1) if pred == 0 else None
    ratio = sympy.cancel(pred / gold)  # a rational function's canonical form: fast for polynomials
    ratio = sympy.simplify(ratio) if ratio.free_symbols else ratio
    return ratio if not ratio.free_symbols and ratio.is_finite and ratio != 0 else None


def _solved_for(rel: sympy.Eq) -> sympy.Symbol | None:
    lhs = rel.lhs
    return lhs if isinstance(lhs, sympy.Symbol) and lhs not in rel.rhs.free_symbols else None


def _real_set(rel: Relational) -> sympy.Set:
    (var,) = rel.free_symbols
    real = sympy.Symbol(var.name, real=True)
    return sympy.solveset(rel.subs(var, real), real, domain=sympy.S.Reals)


def _stated_value(rel: sympy.Eq) -> sympy.Expr | None:
    """The value both sides of an equation without unknowns share, None when they differ (a false statement)."""
    lhs, rhs = (sympy.nsimplify(sympy.simplify(a), rational=True) for a in rel.args)
    return lhs if sympy.simplify(lhs - rhs) == 0 else None


def compare(gold: object, pred: object, values_equal: Callable[[object, object], bool]) -> bool | None:
    """Whether relation pred answers relation gold (rules above); None unless both are single
    relations of the kinds handled. `values_equal(a, b)` compares two values (math-verify's rule)."""
    if not (_single(gold) and _single(pred)):
        return None
    if sympy.Ne in (type(gold), type(pred)) or isinstance(gold, sympy.Eq) != isinstance(pred, sympy.Eq):
        return None
    if gold.free_symbols != pred.free_symbols:
        return False
    if isinstance(gold, sympy.Eq) and not gold.free_symbols:  # `72 \div 12 = 6`: a true statement of a value
        return _stated_value(gold) is not None and _stated_value(gold) == _stated_value(pred)
    if isinstance(gold, sympy.Eq):
        var = _solved_for(gold)
        if var is not None and var == _solved_for(pred):  # `y = f` and `y = g`: the same when f = g
            return bool(values_equal(gold.rhs, pred.rhs))
        return _constant_ratio(_numerator(_difference(pred)), _numerator(_difference(gold))) is not None
    strict = (sympy.StrictGreaterThan, sympy.StrictLessThan)
    if isinstance(gold, strict) != isinstance(pred, strict):
        return False  # `x^2+x+1 > 0` is not `x^2+x+1 >= 0`, though both hold for every x
    ratio = _constant_ratio(_difference(pred), _difference(gold))
    if ratio is not None and ratio.is_positive:
        return True
    return len(gold.free_symbols) == 1 and _real_set(gold) == _real_set(pred)
