"""Thin Inspect @scorer wrappers around the pure checks in scorers/checks.py."""

from __future__ import annotations

import asyncio

from inspect_ai.scorer import (
    CORRECT,
    INCORRECT,
    Score,
    Scorer,
    Target,
    accuracy,
    scorer,
    stderr,
)
from inspect_ai.solver import TaskState

from scorers.checks import Check, CheckResult, check_choice, check_math, check_numeric


def _to_score(result: CheckResult, target: Target) -> Score:
    return Score(
        value=CORRECT if result.correct else INCORRECT,
        answer=result.extracted,
        explanation=f"extracted answer: {result.extracted!r}; target: {target.text!r}; {result.reason}",
    )


def _check_scorer(check: Check, in_thread: bool = False) -> Scorer:
    async def score(state: TaskState, target: Target) -> Score:
        completion = state.output.completion if state.output else ""
        if in_thread:  # keep slow symbolic checks off the event loop
            result = await asyncio.to_thread(check, completion, target.text)
        else:
            result = check(completion, target.text)
        return _to_score(result, target)

    return score


@scorer(metrics=[accuracy(), stderr()])
def choice_letter() -> Scorer:
    """Multiple choice: the one letter the final answer names equals the target (hedges score 0)."""
    return _check_scorer(check_choice)


@scorer(metrics=[accuracy(), stderr()])
def math_equivalence() -> Scorer:
    """Math: the final answer is equivalent to the target (math-verify, then strings)."""
    return _check_scorer(check_math, in_thread=True)


@scorer(metrics=[accuracy(), stderr()])
def numeric_match() -> Scorer:
    """Numbers: the one number the final answer states equals the target exactly."""
    return _check_scorer(check_numeric)
