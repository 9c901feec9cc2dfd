"""RLPR grading: the final answer against the reference, by rule, then by a judge model.

RLPR's own evaluation (OpenBMB/RLPR, its LLM reward manager for WebInstruct-verified)
requires a final answer in the requested format (else 0), extracts it, and asks a judge
model whether that extracted answer is equivalent to the ground truth, reading a closing
"Final Decision: Yes/No". This scorer does the same with the project's words and answer
extraction, after a deterministic check: an answer that `check_math` already finds
equivalent is correct without a judge call. Modes (`judge`):
- "auto" (default): rule, then the `grader` model role when one is bound
  (`--model-role grader=openai/gpt-4.1`); without one, rule only (noted in each score).
- "judge": the judge decides every answered sample (RLPR's protocol); needs the role.
- "rule": rule only, offline and deterministic (a lower bound on RLPR's judge).
"""

from __future__ import annotations

import asyncio
import re
from typing import Literal

from inspect_ai.model import Model, model_roles
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Scorer, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState

from scorers.checks import check_math
from scorers.extract import final_answer

JudgeMode = Literal["auto", "judge", "rule"]
JUDGE_MODES = ("auto", "judge", "rule")
GRADER_ROLE = "grader"
MAX_QUESTION_CHARS = 6000
MAX_ANSWER_CHARS = 1000
_VERDICT = re.compile(r"final decision\s{0,20}:\s{0,20}\**\s{0,5}(yes|no)\b", re.IGNORECASE)

JUDGE_PROMPT = """\
Your job is to compare a student's final answer with the reference answer to a question.
Do not solve the question yourself and do not judge the reasoning: only decide whether the
student's final answer means the same as the reference (equal values written differently,
equivalent expressions, the same quantity in equivalent units, or a number that agrees with
the reference to the reference's precision all count as the same).

Question:
{question}

Reference answer:
{reference}

Student's final answer:
{answer}

Explain briefly, then finish with exactly one line: "Final Decision: Yes" if the student's
answer matches the reference, or "Final Decision: No" if it does not."""


def judge_prompt(question: str, reference: str, answer: str) -> str:
    return JUDGE_PROMPT.format(
        question=question.strip()[:MAX_QUESTION_CHARS],
        reference=reference.strip()[:MAX_ANSWER_CHARS],
        answer=answer.strip()[:MAX_ANSWER_CHARS],
    )


def parse_verdict(text: str | None) -> bool | None:
    """The judge's last "Final Decision: Yes/No" (True/False), None without one."""
    if not text:
        return None
    found = _VERDICT.findall(text[-4000:])
    return found[-1].lower() == "yes" if found else None


def check_mode(judge: str) -> JudgeMode:
    if judge not in JUDGE_MODES:
        raise ValueError(f"rlpr: unknown judge mode {judge!r}; use one of {', '.join(JUDGE_MODES)}")
    return judge  # type: ignore[return-value]


def grader_model() -> Model | None:
    role = model_roles().get(GRADER_ROLE)
    return role[0] if isinstance(role, list) else role


@scorer(metrics=[accuracy(), stderr()])
def rlpr_grader(judge: JudgeMode = "auto") -> Scorer:
    """RLPR's answer-equivalence grading (see the module docstring for the modes)."""
    mode = check_mode(judge)

    async def score(state: TaskState, target: Target) -> Score:
        completion = state.output.completion if state.output else ""
        answer, how = final_answer(completion)
        if not answer:
            return _score(False, answer, f"no final answer: {how}", "format")
        rule = await asyncio.to_thread(check_math, completion, target.text)
        if rule.correct and mode != "judge":
            return _score(True, answer, rule.reason, "rule")
        if mode == "rule":
            return _score(False, answer, rule.reason, "rule")
        grader = grader_model()
        if grader is None:
            if mode == "judge":
                raise ValueError(
                    "rlpr: -T judge=judge needs a judge model: pass --model-role grader=<model> "
                    "(e.g. openai/gpt-4.1), or use -T judge=auto|rule"
                )
            return _score(False, answer, f"{rule.reason}; no grader role bound, rule only", "rule")
        question = str((state.metadata or {}).get("question") or state.input_text)
        output = await grader.generate(judge_prompt(question, target.text, answer))
        verdict = parse_verdict(output.completion)
        if verdict is None:
            return _score(False, answer, "the judge gave no 'Final Decision: Yes/No'", str(grader), output.completion)
        return _score(verdict, answer, f"judge says {'Yes' if verdict else 'No'}", str(grader), output.completion)

    return score


def _score(correct: bool, answer: str | None, reason: str, graded_by: str, judge_output: str = "") -> Score:
    metadata = {"graded_by": graded_by}
    if judge_output:
        metadata["judge_output"] = judge_output[-2000:]
    return Score(
        value=CORRECT if correct else INCORRECT,
        answer=answer,
        explanation=f"extracted answer: {answer!r}; {reason} (graded by {graded_by})",
        metadata=metadata,
    )
