"""Differential test: the project's BigCodeBench extraction and verdicts equal the
`bigcodebench` 0.2.5 package's own, computed once and stored with how they were produced in
tests/fixtures/bcb_official_verdicts.json: the default generate-then-evaluate pipeline
(generate.py's `sanitize`, evaluate's calibrated program, untrusted_check) and, with
`calibrate=True`, the separate `sanitize --calibrate` script's. The only differences are
deliberate: attacks that fool the official grader (unittest monkeypatching, SkipTest from
the solution) fail here. Runs through the real bwrap sandbox."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from waits import ROOMY_S

from scorers.code_bcb import BCBProblem, check_bigcodebench, extract_code

FIXTURES = Path(__file__).parents[1] / "fixtures"
DATA = json.loads((FIXTURES / "bcb_official_verdicts.json").read_text())
RECORDS = {r["task_id"]: r for r in map(json.loads, (FIXTURES / "bcb_sample.jsonl").read_text().splitlines())}


def _problem(case: dict) -> BCBProblem:
    return BCBProblem.from_record(RECORDS[case["task_id"]])


def test_fixture_says_how_it_was_produced_and_covers_every_outcome():
    assert "bigcodebench==0.2.5" in DATA["produced_by"]["package"]
    statuses = {c["official_status"] for c in DATA["cases"]}
    assert statuses == {"pass", "fail", "timeout"}
    assert len(DATA["cases"]) >= 25


def _limit(case: dict) -> float:
    """The official limit for a case that times out officially; room for a verdict otherwise (a busy machine
    slows a program, it does not change its verdict; an endless loop ends at any limit)."""
    return DATA["produced_by"]["project_timeout_s"] if case["official_status"] == "timeout" else ROOMY_S


def _generate(case: dict) -> dict:
    """The official default pipeline's sanitized code and status (where they differ from --calibrate's)."""
    return case.get("official_generate") or {"sanitized": case["official_sanitized"], "status": case["official_status"]}


def test_sanitized_code_equals_the_official_sanitize():
    for case in DATA["cases"]:
        code, origin = extract_code(case["answer"], _problem(case), calibrate=True)
        assert origin == "sanitize", case["name"]
        assert code == case["official_sanitized"], case["name"]
        assert extract_code(case["answer"], _problem(case)) == (_generate(case)["sanitized"], "sanitize"), case["name"]


@pytest.mark.slow
async def test_default_verdicts_follow_the_official_generate_pipeline(runner):
    """Where the default pipeline's program differs from --calibrate's, its verdict is the official one."""
    differing = [c for c in DATA["cases"] if "official_generate" in c]
    assert [c["name"] for c in differing] == ["body_only_fenced_calibrated"]
    for case in differing:
        result = await check_bigcodebench(case["answer"], _problem(case), runner, _limit(case))
        assert result.correct == (case["official_generate"]["status"] == "pass"), (case["name"], result.reason)
        assert case["official_status"] == "pass" and not result.correct  # calibrated: pass; default: fail


@pytest.mark.slow
async def test_verdicts_equal_the_official_ones(runner):
    agree, deliberate, rows = 0, 0, []
    for case in DATA["cases"]:
        result = await check_bigcodebench(case["answer"], _problem(case), runner, _limit(case), calibrate=True)
        official = case["official_status"] == "pass"
        if case["deliberate_difference"]:
            ok = not result.correct and official  # the official grader is fooled, the project is not
            deliberate += ok
        else:
            ok = result.correct == official
            if ok and case["official_status"] == "timeout":
                ok = result.details["status"] == "timeout"
            agree += ok
        rows.append(f"{'ok ' if ok else 'DIFF'} {case['name']}: official {case['official_status']}, "
                    f"project {result.details['status']} ({result.reason[:70]})")  # fmt: skip
    n_plain = sum(1 for c in DATA["cases"] if not c["deliberate_difference"])
    print(
        f"\nBigCodeBench agreement with bigcodebench 0.2.5: {agree}/{n_plain}; "
        f"deliberate differences (official fooled, project fails): {deliberate}/{len(DATA['cases']) - n_plain}"
    )
    print("\n".join(rows))
    assert agree == n_plain and deliberate == len(DATA["cases"]) - n_plain, "\n".join(
        r for r in rows if r.startswith("DIFF")
    )
