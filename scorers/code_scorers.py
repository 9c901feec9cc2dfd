"""Thin Inspect @scorer wrappers around the pure code checks (scorers/code_*.py).

Each scorer runs its check through `InspectSandboxRunner`, i.e. in the sample's
Inspect sandbox (the task's `sandbox=`: "bwrap" by default, "docker" for
production). The same checks, given a `BwrapRunner`, are the GRPO rewards.
"""

from __future__ import annotations

from inspect_ai.scorer import CORRECT, INCORRECT, Score, Scorer, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState

from scorers.code_extract import CodeCheckResult


def code_score(result: CodeCheckResult) -> Score:
    """A code check's result as an Inspect Score (details in the metadata)."""
    return Score(
        value=CORRECT if result.correct else INCORRECT,
        answer=result.extracted,
        explanation=result.reason,
        metadata={"status": result.details.get("status"), "details": result.details},
    )


def _runner(sandbox_name: str | None):  # noqa: ANN202 - CodeRunner
    from sandboxes.inspect_bwrap import InspectSandboxRunner

    return InspectSandboxRunner(sandbox_name)


# --------------------------------------------------------------------------- LiveCodeBench


@scorer(metrics=[accuracy(), stderr()])
def livecodebench_scorer(
    timeout: float = 6.0,
    problems: str | None = None,
    sandbox_name: str | None = None,
) -> Scorer:
    """LiveCodeBench: the code between the last two lines containing ``` (the official
    extraction) passes all public + private tests.

    Args:
        timeout: per-test limit in seconds (official 6); the whole problem gets
            the official (timeout + 1) * n_tests + 5.
        problems: key of a problem table registered with
            `scorers.code_lcb.register_problems` (the task does this, so the
            megabytes of private tests stay out of sample metadata and logs);
            None looks the sample up in every registered table.
        sandbox_name: the Inspect sandbox environment to use (default: the sample's).
    """
    from scorers.code_lcb import check_livecodebench, lookup_problem

    async def score(state: TaskState, target: Target) -> Score:
        question_id = str((state.metadata or {}).get("question_id", state.sample_id))
        problem = lookup_problem(question_id, problems, metadata=state.metadata)
        completion = state.output.completion if state.output else ""
        result = await check_livecodebench(completion, problem, _runner(sandbox_name), timeout=timeout)
        return code_score(result)

    return score


# --------------------------------------------------------------------------- HumanEval


@scorer(metrics=[accuracy(), stderr()])
def humaneval_scorer(
    timeout: float = 3.0,
    raw_fallback: bool = True,
    sandbox_name: str | None = None,
) -> Scorer:
    """HumanEval: prompt + completion + test + check(entry_point) runs without error.

    Args:
        timeout: seconds for the whole program (official and default: 3).
        raw_fallback: with no fenced block, judge the raw answer as a completion.
        sandbox_name: the Inspect sandbox environment to use (default: the sample's).
    """
    from scorers.code_humaneval import check_humaneval, problem_from_record

    async def score(state: TaskState, target: Target) -> Score:
        problem = problem_from_record(state.metadata)
        completion = state.output.completion if state.output else ""
        result = await check_humaneval(
            completion, problem, _runner(sandbox_name), timeout=timeout, raw_fallback=raw_fallback
        )
        return code_score(result)

    return score


# --------------------------------------------------------------------------- BigCodeBench


@scorer(metrics=[accuracy(), stderr()])
def bigcodebench_scorer(
    timeout: float = 240.0,
    calibrate: bool = False,
    sandbox_name: str | None = None,
) -> Scorer:
    """BigCodeBench: the task's unittest `TestCases` run has no failure and no error.

    A module missing from the sandbox fails the sample with the explanation
    "environment: missing module X" and `metadata["status"] == "environment"`.

    Args:
        timeout: per-task limit in seconds (official 240); the suite gets timeout + 1.
        calibrate: also apply the separate `sanitize --calibrate` script's rule (a fenced
            body-only answer gets the prompt inserted); off in the official generate-then-
            evaluate pipeline, which the default follows (the code prompt and a `pass` stub
            always go first, as official `evaluate` does).
        sandbox_name: the Inspect sandbox environment to use (default: the sample's).
    """
    from scorers.code_bcb import BCBProblem, check_bigcodebench

    async def score(state: TaskState, target: Target) -> Score:
        problem = BCBProblem.from_metadata(state.metadata or {})
        completion = state.output.completion if state.output else ""
        result = await check_bigcodebench(completion, problem, _runner(sandbox_name), timeout, calibrate=calibrate)
        return code_score(result)

    return score
