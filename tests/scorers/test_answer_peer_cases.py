"""Answer checks against graders' published cases and our adversarial ones (tests/data/answer_cases).

Each JSONL row: check (choice|math|numeric), output, reference, verdict, source; ambiguous
rows (a peer verdict a careful grader would not sign) carry the peer's verdict and the policy
we chose, and are reported but not counted in the agreement. Run with -s to see the table
(or `python -m scorers.peer_agreement --misses`).
"""

from __future__ import annotations

import pytest

from scorers.peer_agreement import CHECKS, load_cases, report, tally

CASES = load_cases()


def test_case_files_are_well_formed():
    assert len(CASES) >= 300
    for c in CASES:
        assert c["check"] in CHECKS, c["_where"]
        assert isinstance(c["output"], str) and isinstance(c["reference"], str), c["_where"]
        assert isinstance(c["verdict"], bool) and c["source"], c["_where"]
        if c.get("ambiguous"):
            assert c.get("policy"), f"{c['_where']}: an ambiguous case states the policy chosen"
        assert isinstance(c.get("known_miss", ""), str), f"{c['_where']}: a known miss states its reason"
        assert not (c.get("known_miss") and c["source"].startswith("conductor-bench")), c["_where"]


@pytest.mark.slow
def test_agreement_with_peer_verdicts():
    """Every disagreement is a known miss (measured, not fixed, the reason in its row) and every known
    miss still disagrees: the agreement per suite (printed) is pinned case by case, so a suite at 100%
    stays there. Issue 44's goal is >= 99% per suite; the suites below it are those with known misses."""
    t = tally(CASES)
    print("\nagreement with peer verdicts (non-ambiguous cases)\n" + report(t, misses=True))
    assert not t.misses, "\n".join(t.misses)


@pytest.mark.slow
def test_own_cases_state_the_policy_exactly():
    """Our own cases (conductor-bench) are the policy: every one holds, both ways."""
    own = [c for c in CASES if c["source"].startswith("conductor-bench") and not c.get("ambiguous")]
    t = tally(own)
    assert not t.misses, "\n".join(t.misses)
    assert {c["verdict"] for c in own if "round 3" in c["source"]} == {True, False}
    assert {c["verdict"] for c in own if "round 4" in c["source"]} == {True, False}
    assert {c["verdict"] for c in own if "round 5" in c["source"]} == {True, False}
    assert {c["verdict"] for c in own if "round 6" in c["source"]} == {True, False}
    assert {c["verdict"] for c in own if "round 7" in c["source"]} == {True, False}
    assert {c["verdict"] for c in own if "round 8" in c["source"]} == {True, False}
    assert {c["verdict"] for c in own if "round 9" in c["source"]} == {True, False}
    assert {c["verdict"] for c in own if "round 10" in c["source"]} == {True, False}
    assert {c["verdict"] for c in own if "round 11" in c["source"]} == {True, False}
    assert {c["verdict"] for c in own if "round 12" in c["source"]} == {True, False}
    assert {c["verdict"] for c in own if "round 13" in c["source"]} == {True, False}
    assert {c["verdict"] for c in own if "round 15" in c["source"]} == {True, False}
    assert {c["verdict"] for c in own if "round 17" in c["source"]} == {True, False}
    assert {c["verdict"] for c in own if "second red team's older findings" in c["source"]} == {True, False}


@pytest.mark.parametrize("check", sorted(CHECKS))
def test_every_check_has_cases_both_ways(check):
    verdicts = {c["verdict"] for c in CASES if c["check"] == check and not c.get("ambiguous")}
    assert verdicts == {True, False}
