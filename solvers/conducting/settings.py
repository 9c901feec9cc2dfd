"""The conductor's options (`Settings`) and their checks, shared by the solver, the model and training."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from solvers.executor import ErrorPolicy
from solvers.few_shot import FEW_SHOT_SETS, set_access
from solvers.prompts import QUESTION_MODES, QuestionMode
from solvers.workflow import ACCESS_SCHEMES, DEFAULT_MAX_STEPS, AccessScheme
from startup.options import is_int, need_option

SubtaskMode = Literal["written", "fixed"]
SUBTASK_MODES = ("written", "fixed")
REASONING_CHARS = 160  # the free-reasoning field of the llama.cpp grammar


@dataclass(frozen=True)
class Settings:
    """Solver options (validated by `check_settings`); the defaults are the paper's method."""

    max_steps: int = DEFAULT_MAX_STEPS
    max_depth: int = 0
    max_recursions: int = 1
    few_shot: str = "ood"
    access: AccessScheme = "binary"
    question: QuestionMode = "first"
    format_retries: int = 0
    reasoning_chars: int = REASONING_CHARS
    on_error: ErrorPolicy = "continue"
    step_timeout: float | None = None
    concurrent: bool = True
    subtasks: SubtaskMode = "written"
    replace_workers: str | None = None


def check_settings(settings: Settings) -> Settings:
    """Reject nonsensical options at start, with the option and the fix named."""
    s = settings
    need_option(
        is_int(s.max_steps) and s.max_steps >= 1, "max_steps", s.max_steps, "an integer >= 1 (the paper uses 5)"
    )
    need_option(is_int(s.max_depth) and s.max_depth >= 0, "max_depth", s.max_depth, "an integer >= 0 (0: no recursion)")
    need_option(
        is_int(s.max_recursions) and s.max_recursions >= 0,
        "max_recursions",
        s.max_recursions,
        "an integer >= 0 (recursive calls per sample after the root call)",
    )
    need_option(s.few_shot in FEW_SHOT_SETS, "few_shot", s.few_shot, " | ".join(FEW_SHOT_SETS) + " (or true/false)")
    need_option(s.access in ACCESS_SCHEMES, "access", s.access, "binary | indices")
    need_option(s.question in QUESTION_MODES, "question", s.question, "first | every")
    need_option(
        is_int(s.format_retries) and s.format_retries >= 0, "format_retries", s.format_retries, "an integer >= 0"
    )
    need_option(
        is_int(s.reasoning_chars) and s.reasoning_chars >= 0,
        "reasoning_chars",
        s.reasoning_chars,
        "an integer >= 0 (0: no reasoning field in the grammar)",
    )
    need_option(s.on_error in ("continue", "fail"), "on_error", s.on_error, "continue | fail")
    need_option(
        s.step_timeout is None or (_is_number(s.step_timeout) and s.step_timeout > 0),
        "step_timeout",
        s.step_timeout,
        "a number of seconds > 0 (leave it unset for no timeout)",
    )
    need_option(isinstance(s.concurrent, bool), "concurrent", s.concurrent, "true | false")
    need_option(s.subtasks in SUBTASK_MODES, "subtasks", s.subtasks, "written | fixed")
    need_option(
        s.replace_workers is None or (isinstance(s.replace_workers, str) and "/" in s.replace_workers),
        "replace_workers",
        s.replace_workers,
        "an Inspect model name such as openai/gpt-5 (or unset)",
    )
    needs = set_access(s.few_shot)
    need_option(
        needs is None or needs == s.access,
        "few_shot",
        s.few_shot,
        f"a set that fits -S access={s.access} (the {s.few_shot} examples need -S access={needs})",
    )
    return settings


def check_generation(**options: float | int | None) -> None:
    """Generation options: token budgets and pool_size >= 1, temperatures >= 0 (or unset)."""
    for name, value in options.items():
        if value is None:
            continue
        if name.endswith("temperature"):
            need_option(_is_number(value) and value >= 0, name, value, "a finite number >= 0")
        else:
            need_option(is_int(value) and value >= 1, name, value, "an integer >= 1")


def _is_number(value: object) -> bool:
    """A finite int or float (not a bool): NaN and infinity are no setting."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
