"""Differential test: the project's LiveCodeBench verdicts equal the official grader's.

Fixtures in the official format (tests/fixtures/lcb_parity_problems.jsonl: code_generation_lite
records; lcb_parity_cases.jsonl: model answers, one class each). The official verdicts in
lcb_parity_verdicts.json were computed once by running the upstream code (commit and command
in its `produced_by`); here every answer goes through the project's check in the real bwrap
sandbox with the same per-test limit, and both the pass/fail verdict and the official per-test
result list must agree on every case (agreement printed)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from waits import ROOMY_S

from scorers.code_lcb import check_livecodebench, problem_from_record

FIXTURES = Path(__file__).parents[1] / "fixtures"
PROBLEMS = {
    p.question_id: p
    for p in (problem_from_record(json.loads(line)) for line in (FIXTURES / "lcb_parity_problems.jsonl").open())
}
CASES = [json.loads(line) for line in (FIXTURES / "lcb_parity_cases.jsonl").open()]
OFFICIAL = json.loads((FIXTURES / "lcb_parity_verdicts.json").read_text())


def test_fixtures_cover_every_class_and_both_outcomes():
    assert OFFICIAL["produced_by"]["commit"] == "28fef95ea8c9f7a547c8329f2cd3d32b92c1fa24"
    assert {c["id"] for c in CASES} == set(OFFICIAL["verdicts"])
    classes = {c["class"] for c in CASES}
    assert classes >= {"correct", "wrong", "runtime", "compile", "extraction", "assembly", "stdin_idiom",
                       "stdout_idiom", "guard", "process_exit", "state", "timeout", "float", "int_digits",
                       "compare", "functional_value", "prelude"}  # fmt: skip
    outcomes = [v["passed"] for v in OFFICIAL["verdicts"].values()]
    assert 20 <= sum(outcomes) <= len(outcomes) - 20  # neither side trivially dominant


async def _project_verdicts(runner) -> dict[str, dict]:
    timeout = float(OFFICIAL["produced_by"]["timeout_s"])
    limit = asyncio.Semaphore(4)

    async def one(case: dict) -> tuple[str, dict]:
        async with limit:
            seconds = timeout if case["class"] == "timeout" else ROOMY_S  # the official limit for those; room else
            r = await check_livecodebench(case["completion"], PROBLEMS[case["question_id"]], runner, timeout=seconds)
        return case["id"], {"passed": r.correct, "results": r.details.get("results"), "status": r.details.get("status")}

    return dict(await asyncio.gather(*(one(c) for c in CASES)))


@pytest.mark.slow
async def test_project_verdicts_equal_the_official_ones(runner):
    ours = await _project_verdicts(runner)
    official = OFFICIAL["verdicts"]
    same_verdict = [k for k in official if ours[k]["passed"] == official[k]["passed"]]
    same_results = [k for k in official if ours[k]["results"] == official[k]["results"]]
    n = len(official)
    print(f"\nLiveCodeBench parity (official {OFFICIAL['produced_by']['commit'][:10]}): "
          f"verdict {len(same_verdict)}/{n} = {100 * len(same_verdict) / n:.1f}%, "
          f"per-test results {len(same_results)}/{n} = {100 * len(same_results) / n:.1f}%")  # fmt: skip
    diff = {k: {"ours": ours[k], "official": official[k]} for k in official if k not in same_results}
    assert not diff, json.dumps(diff, indent=1)
