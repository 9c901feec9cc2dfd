"""How long model output of a pathological shape takes to extract and check (no sandbox).

Usage: python benchmarks/bench_parse.py [--repeat N]

Rows: BigCodeBench `extract_code` (the official sanitize's span search, bounded) on large
unparsable answers, the workflow parser and the math check on deeply nested answers. Prints the
median and the worst of N runs in ms; the goal for a BigCodeBench answer is < 100 ms (it runs
off the event loop in the scorer either way). Unit tests check the work is bounded
(tests/scorers/test_parse_bombs.py); this measures its speed on this machine.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scorers.checks import check_math  # noqa: E402
from scorers.code_bcb import BCBProblem, extract_code  # noqa: E402
from solvers.workflow import parse_workflow  # noqa: E402

_FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
BCB = BCBProblem.from_record(json.loads((_FIXTURES / "bcb_sample.jsonl").read_text().splitlines()[0]))
SOLUTION = "```python\nimport os\ndef task_func(x):\n    return os.path.join(x, 'a')\n```\n"


def _code(n: int, broken_at: int) -> str:
    lines = [f"v{i} = [{i}, {i + 1}, 'padding the line to forty chars']" for i in range(n)]
    lines[broken_at] = "def broken(:"
    return "\n".join(lines)


BCB_ANSWERS = {
    "90 kB broken in the middle": "```python\n" + _code(2500, 1250) + "\n```\n" + SOLUTION,
    "20 kB broken in the middle": _code(550, 275),
    "4000 indented lines": "\n".join(f"    x{i} = {i}" for i in range(4000)) + "\n" + SOLUTION,
    "3000 decorators": "\n".join(f"@dec{i}" for i in range(3000)) + "\n" + SOLUTION,
    "100 kB of prose": "Some prose here. " * 6000 + SOLUTION,
}
UNARY_WORKFLOW = "model_id = " + "-" * 5000 + "1\nsubtasks = ['a']\naccess_list = [[]]"
CASES = {
    **{f"bcb: {name}": (lambda a=answer: extract_code(a, BCB)) for name, answer in BCB_ANSWERS.items()},
    "workflow: 5000 nested unary": lambda: parse_workflow(UNARY_WORKFLOW, range(2)),
    "math: brackets 40 deep": lambda: check_math("ANSWER: " + "{" * 40 + "1" + "}" * 40, "1"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"| case | median ms | worst ms (of {args.repeat}) |\n|---|---:|---:|")
    for name, run in CASES.items():
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            run()
            times.append((time.perf_counter() - start) * 1000)
        print(f"| {name} | {statistics.median(times):.1f} | {max(times):.1f} |")


if __name__ == "__main__":
    main()
