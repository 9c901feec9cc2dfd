"""Agreement of the answer checks with other projects' answer-equivalence test suites.

Usage: python -m scorers.peer_agreement [CASES_DIR] [--misses]

Reads every `*.jsonl` in CASES_DIR (default tests/data/answer_cases; one case per line:
check, output, reference, verdict, source; see that folder's README) and prints, per check
and per source repository, how many non-ambiguous verdicts the checks reproduce. Ambiguous
cases (a peer verdict a careful grader would not sign; the row says why) are counted apart.
A row marked `known_miss` is a disagreement measured and not fixed (the mark says why): it still
counts against the agreement and is listed apart from new misses.
The checks run are the ones the scorers and the GRPO reward import (`scorers.checks`).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from scorers.checks import check_choice, check_math, check_numeric

CHECKS = {"choice": check_choice, "math": check_math, "numeric": check_numeric}
DEFAULT_DIR = Path(__file__).resolve().parents[1] / "tests" / "data" / "answer_cases"


def load_cases(cases_dir: Path = DEFAULT_DIR) -> list[dict]:
    """Every case row, with `_where` (file:line) added."""
    rows = []
    for path in sorted(Path(cases_dir).glob("*.jsonl")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                rows.append({**json.loads(line), "_where": f"{path.name}:{n}"})
    return rows


def source_group(source: str) -> str:
    """The repository a case comes from ("owner/name"), or "conductor-bench"."""
    return source.split("@")[0].split(":")[0]


@dataclass
class Tally:
    agree: dict[tuple[str, str], list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))
    ambiguous: list[int] = field(default_factory=lambda: [0, 0])
    misses: list[str] = field(default_factory=list)
    known: list[str] = field(default_factory=list)

    def rate(self, check: str, group: str = "ALL") -> tuple[int, int]:
        ok, n = self.agree.get((check, group), (0, 0))
        return ok, n


def _miss(c: dict) -> str:
    return f"{c['_where']}: {c['output'][-80:]!r} vs {c['reference'][:40]!r} want {c['verdict']}"


def tally(cases: list[dict]) -> Tally:
    """Run each case's check; count agreement per (check, source group) and overall. A disagreement on
    a row marked `known_miss` (a miss measured and not fixed, with its reason) goes to `known`, not
    `misses`; a `known_miss` row that now agrees goes to `misses`, so its mark is removed."""
    t = Tally()
    for c in cases:
        got = CHECKS[c["check"]](c["output"], c["reference"]).correct
        if c.get("known_miss") and got == c["verdict"]:
            t.misses.append(f"(a known miss now agrees: remove its mark) {_miss(c)}")
        elif c.get("known_miss"):
            t.known.append(f"{_miss(c)}: {c['known_miss']}")
        if c.get("ambiguous"):
            t.ambiguous[0] += got == c["verdict"]
            t.ambiguous[1] += 1
            if got != c["verdict"] and not c.get("known_miss"):
                t.misses.append(f"(ambiguous, policy not followed) {_miss(c)}")
            continue
        group, where = source_group(c["source"]), c["_where"].split(".jsonl")[0] + ".jsonl"
        for key in ((c["check"], group), (c["check"], "ALL"), ("*", group), ("file", where)):
            t.agree[key][0] += got == c["verdict"]
            t.agree[key][1] += 1
        if got != c["verdict"] and not c.get("known_miss"):
            t.misses.append(_miss(c))
    return t


def report(t: Tally, misses: bool = False) -> str:
    lines = [f"{'check':8} {'source':40} {'agree':>9} {'rate':>7}"]
    for (check, group), (ok, n) in sorted(t.agree.items()):
        lines.append(f"{check:8} {group:40} {ok:>4}/{n:<4} {ok / n:7.1%}")
    ok, n = t.ambiguous
    lines.append(f"ambiguous cases (not counted) matching the documented policy: {ok}/{n}")
    if misses:
        lines += [f"MISS {m}" for m in t.misses] + [f"KNOWN MISS {m}" for m in t.known]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases_dir", nargs="?", default=str(DEFAULT_DIR))
    ap.add_argument("--misses", action="store_true", help="list every disagreement")
    args = ap.parse_args()
    print(report(tally(load_cases(Path(args.cases_dir))), args.misses))


if __name__ == "__main__":
    main()
