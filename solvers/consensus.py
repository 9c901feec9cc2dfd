"""Answer equality by the task's own check, and majority voting. Pure: no Inspect import (a
task's declared check is read from the benchmark registry, which loads the task files).

Kinds of check (`-S check=`): "choice" (the letter `extract_choice` reads), "numeric" (the
number `extract_numeric` reads, compared exactly), "math" (`check_math` equivalence of one
answer against the other's extracted answer), "text" (the final answer, else the whole
output, with whitespace collapsed; for code). "auto" picks by the sample: choices -> choice,
code answers -> text, else the check its benchmark declares (`tasks.catalog.Benchmark.check`),
else math (it also compares numbers and plain strings).

Voting (`majority`): outputs are taken in order; an output without a readable answer (or a
failed call) does not vote; each voting output joins the first group whose first member's
answer it equals, else starts a group. The largest group wins; a tie goes to the group formed
first (the one whose first member came earliest). The chosen output is that group's first
member. With no vote at all, the first output that exists is chosen.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from scorers.checks import check_math, extract_choice, extract_math_answer, extract_numeric, final_answer
from tasks.catalog import benchmark

CHECK_KINDS = ("choice", "numeric", "math", "text")


def auto_check(task: str | None, n_choices: int, answer_format: str | None) -> str:
    """The check kind "auto" resolves to for a sample."""
    if n_choices:
        return "choice"
    if answer_format == "code":
        return "text"
    declared = benchmark(task)
    return declared.check if declared is not None else "math"


def letters_for(n_choices: int) -> str:
    return "".join(chr(ord("A") + i) for i in range(n_choices or 4))


def read_answer(output: str | None, kind: str, letters: str = "ABCD") -> str | None:
    """The answer an output states under a check kind (None: no readable answer)."""
    if not output:
        return None
    if kind == "choice":
        return extract_choice(output, letters)[0]
    if kind == "numeric":
        text, value, _ = extract_numeric(output)
        return None if value is None else str(value)
    if kind == "math":
        return extract_math_answer(output)[0]
    answer = final_answer(output)[0]
    return " ".join((answer if answer is not None else output).split()) or None


def same_answer(output: str, answer: str, kind: str, letters: str = "ABCD") -> bool:
    """Whether `output` states `answer` (an answer `read_answer` gave) under the check kind."""
    if kind == "math":
        return check_math(output, answer).correct
    return read_answer(output, kind, letters) == answer


@dataclass(frozen=True)
class Vote:
    chosen: int | None  # index of the chosen output (None: no output at all)
    answers: list[str | None]  # each output's answer (None: no vote)
    groups: list[list[int]]  # output indices per distinct answer, in order of formation
    tie: bool  # the winning size was shared (the earliest group won)


def majority(outputs: Sequence[str | None], kind: str, letters: str = "ABCD") -> Vote:
    """Majority answer of `outputs` (None: a failed call); rules in the module docstring."""
    if kind not in CHECK_KINDS:
        raise ValueError(f"unknown check kind {kind!r}; use one of {', '.join(CHECK_KINDS)}")
    answers = [read_answer(o, kind, letters) for o in outputs]
    groups: list[list[int]] = []
    for i, answer in enumerate(answers):
        if answer is None:
            continue
        output = outputs[i] or ""
        group = next((g for g in groups if same_answer(output, answers[g[0]] or "", kind, letters)), None)
        if group is None:
            groups.append([i])
        else:
            group.append(i)
    if not groups:
        first = next((i for i, o in enumerate(outputs) if o is not None), None)
        return Vote(first, answers, [], False)
    best = max(len(g) for g in groups)
    winners = [g for g in groups if len(g) == best]
    return Vote(winners[0][0], answers, groups, len(winners) > 1)
