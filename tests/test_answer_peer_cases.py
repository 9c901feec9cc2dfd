"""Answer checks against graders' published cases and our adversarial ones (tests/data/answer_cases).

Each JSONL row: check (choice|math|numeric), output, reference, verdict, source; ambiguous
rows (peers disagree) carry the peers' verdicts and the policy we chose, and are reported
but not counted in the agreement. Run with -s to see the table.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from scorers.checks import check_choice, check_math, check_numeric

CASES_DIR = Path(__file__).parent / "data" / "answer_cases"
CHECKS = {"choice": check_choice, "math": check_math, "numeric": check_numeric}
THRESHOLD = 0.99


def _load() -> list[dict]:
    rows = []
    for path in sorted(CASES_DIR.glob("*.jsonl")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                rows.append({**json.loads(line), "_where": f"{path.name}:{n}"})
    return rows


CASES = _load()


def test_case_files_are_well_formed():
    assert len(CASES) >= 300
    for c in CASES:
        assert c["check"] in CHECKS, c["_where"]
        assert isinstance(c["output"], str) and isinstance(c["reference"], str), c["_where"]
        assert isinstance(c["verdict"], bool) and c["source"], c["_where"]
        if c.get("ambiguous"):
            assert c.get("policy"), f"{c['_where']}: an ambiguous case states the policy chosen"


def _group(source: str) -> str:
    return source.split("@")[0].split(":")[0]


def test_agreement_with_peer_verdicts():
    tally: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    ambiguous = [0, 0]
    misses = []
    for c in CASES:
        got = CHECKS[c["check"]](c["output"], c["reference"]).correct
        if c.get("ambiguous"):
            ambiguous[0] += got == c["verdict"]
            ambiguous[1] += 1
            continue
        for key in ((c["check"], _group(c["source"])), (c["check"], "ALL")):
            tally[key][0] += got == c["verdict"]
            tally[key][1] += 1
        if got != c["verdict"]:
            misses.append(f"{c['_where']}: {c['output'][-80:]!r} vs {c['reference'][:40]!r} want {c['verdict']}")
    print("\nagreement with peer verdicts (non-ambiguous cases)")
    print(f"{'check':8} {'source':48} {'agree':>9} {'rate':>7}")
    for (check, group), (ok, n) in sorted(tally.items()):
        print(f"{check:8} {group:48} {ok:>4}/{n:<4} {ok / n:7.1%}")
    print(f"ambiguous cases matching the documented policy: {ambiguous[0]}/{ambiguous[1]}")
    for miss in misses:
        print("MISS", miss)
    for check in CHECKS:
        ok, n = tally[(check, "ALL")]
        assert n and ok / n >= THRESHOLD, f"{check}: {ok}/{n} below {THRESHOLD:.0%}\n" + "\n".join(misses)


@pytest.mark.parametrize("check", sorted(CHECKS))
def test_every_check_has_cases_both_ways(check):
    verdicts = {c["verdict"] for c in CASES if c["check"] == check and not c.get("ambiguous")}
    assert verdicts == {True, False}
