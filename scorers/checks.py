"""One import point for the pure checks (also the GRPO reward functions).

Every check has the signature `check(completion: str, target: str) -> CheckResult`.
All read the final answer the same way (`final_answer`: the last `ANSWER:` line,
`<answer>` tags, "the final answer is" or `\\boxed{}`), within the last MAX_INPUT_CHARS
characters of the output; an answer longer than MAX_ANSWER_CHARS scores 0.
"""

from __future__ import annotations

from collections.abc import Callable

from scorers.choice import check_choice, extract_choice
from scorers.extract import (
    MAX_ANSWER_CHARS,
    MAX_INPUT_CHARS,
    CheckResult,
    final_answer,
    find_boxed,
    last_answer_line,
)
from scorers.math_equiv import check_math, extract_math_answer, normalize_math_answer
from scorers.numeric import check_numeric, extract_numeric

Check = Callable[[str, str], CheckResult]

CHECKS: dict[str, Check] = {
    "choice_letter": check_choice,
    "math_equivalence": check_math,
    "numeric_match": check_numeric,
}

__all__ = [
    "CHECKS",
    "MAX_ANSWER_CHARS",
    "MAX_INPUT_CHARS",
    "Check",
    "CheckResult",
    "check_choice",
    "check_math",
    "check_numeric",
    "extract_choice",
    "extract_math_answer",
    "extract_numeric",
    "final_answer",
    "find_boxed",
    "last_answer_line",
    "normalize_math_answer",
]
