"""Self-reflection: a worker answers, then revises its answer with all earlier attempts in
its conversation, up to `rounds` revisions. Pure: no Inspect import.

Stopping (`stop`): "unchanged" (default) ends when a revision states the same answer as the
attempt before it (equal by the task's check, `solvers.consensus`), "never" always runs every
round. A failed call ends the rounds; the answer is the last attempt that succeeded.
"""

from __future__ import annotations

from solvers.consensus import read_answer, same_answer

STOP_RULES = ("unchanged", "never")
REVISE_SUBTASK = "Review the earlier attempts and revise the answer."
REVISE = """\
Look back over your answer above and check every step for mistakes. Then write your answer \
again: correct it where it is wrong, or repeat it if it is right. End with the final answer \
in the form the question asks for."""


def conversation(question: str, attempts: list[str]) -> list[tuple[str, str]]:
    """(role, text) turns of the next call: the question, then each attempt and a revise turn."""
    turns = [("user", question)]
    for attempt in attempts:
        turns += [("assistant", attempt), ("user", REVISE)]
    return turns


def unchanged(previous: str, current: str, kind: str, letters: str = "ABCD") -> bool:
    """Whether `current` states the same answer as `previous` (False when either has none)."""
    answer = read_answer(previous, kind, letters)
    return (
        answer is not None
        and read_answer(current, kind, letters) is not None
        and same_answer(current, answer, kind, letters)
    )
