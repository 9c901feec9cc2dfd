"""BigCodeBench: which tasks run their tests apart from the answer, and does that keep the verdicts?

Over a BigCodeBench jsonl (the official 1,140 tasks: `BigCodeBench.jsonl` of the hub dataset
or of bigcode-project/bigcodebench-annotation; not shipped here):

1. counts the tasks by mode (`shared_reason`: split, or shared and why);
2. with `--run`, scores each split task's reference solution (complete_prompt + canonical
   solution) in the split mode and in the shared mode, through the real bwrap sandbox, and
   counts the verdicts that differ. Tasks whose libraries the sandbox's Python lacks are
   skipped and counted (their verdict is "environment" in both modes). `--shared-if-failed`
   runs the shared mode only where the split mode did not pass (half the time where most pass:
   it finds verdicts only the shared mode passes, not the reverse); `--mount DIR` mounts a
   directory read-only in the sandbox (the packages of a Python with more libraries, run from
   a venv whose `.pth` adds them); `--control` also scores a wrong answer (the prompt's function
   returning None) in the split mode where the reference passes there: it must fail.

    python benchmarks/bench_bcb_split.py BigCodeBench.jsonl [--list] [--run] [--limit N] [--ids 1,2] [--timeout 60]
        [--shared-if-failed] [--mount DIR] [--force-split] [--control]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import importlib.util
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sandboxes.bwrap import BwrapRunner  # noqa: E402
from scorers.code_bcb import BCBProblem, check_bigcodebench, shared_reason  # noqa: E402


def _installed(problem: BCBProblem) -> bool:
    return all(importlib.util.find_spec(lib.split(".")[0]) is not None for lib in problem.libs)


def _wrong_answer(problem: BCBProblem) -> str:
    """A wrong answer for the control: the prompt's function, returning None."""
    return f"```python\n{problem.code_prompt.rstrip()}\n    return None\n```"


async def _control(problem: BCBProblem, runner: BwrapRunner, timeout: float, controls: collections.Counter) -> str:
    """Score the wrong answer in the split mode (it must fail: the tests are not vacuous there)."""
    wrong = await check_bigcodebench(_wrong_answer(problem), problem, runner, timeout, split=True)
    controls[wrong.correct] += 1
    return f", wrong answer {'PASSES' if wrong.correct else wrong.details['status']}"


async def _compare(
    problems: list[BCBProblem], timeout: float, shared_if_failed: bool, mounts: list[str], control: bool = False
) -> None:
    runner, differ, passed, skipped = BwrapRunner(extra_ro=mounts), [], collections.Counter(), 0
    controls: collections.Counter = collections.Counter()
    for k, problem in enumerate(problems):
        if not _installed(problem):
            skipped += 1
            continue
        answer = f"```python\n{problem.reference_program}\n```"
        split = await check_bigcodebench(answer, problem, runner, timeout, split=True)
        checked = await _control(problem, runner, timeout, controls) if control and split.correct else ""
        if split.correct and shared_if_failed:
            passed[(True, None)] += 1
            print(f"[{k + 1}/{len(problems)}] {problem.task_id}: split pass, shared not run{checked}", flush=True)
            continue
        shared = await check_bigcodebench(answer, problem, runner, timeout, split=False)
        passed[(split.correct, shared.correct)] += 1
        if split.correct != shared.correct:
            differ.append((problem.task_id, split.reason[:300], shared.reason[:120]))
        print(f"[{k + 1}/{len(problems)}] {problem.task_id}: split {split.details['status']}, "
              f"shared {shared.details['status']}{checked}", flush=True)  # fmt: skip
    print(f"\nreference solutions run: {sum(passed.values())} (skipped, libraries missing: {skipped})")
    if control:
        print(f"  wrong answers (split, where the reference passes): {controls[False]} fail, {controls[True]} pass")
    for (in_split, in_shared), n in sorted(passed.items(), key=str):
        shared_word = "not run" if in_shared is None else "pass" if in_shared else "fail"
        print(f"  split {'pass' if in_split else 'fail'}, shared {shared_word}: {n}")
    for task_id, split_reason, shared_reason_ in differ:
        print(f"DIFF {task_id}\n  split: {split_reason}\n  shared: {shared_reason_}")


def _read(dataset: Path) -> list[BCBProblem]:
    """The tasks of a BigCodeBench jsonl; a file that is not one ends the command with one line."""
    try:
        return [BCBProblem.from_record(json.loads(line)) for line in dataset.read_text().splitlines() if line]
    except (OSError, ValueError, AttributeError) as ex:  # a decoding error is a ValueError
        sys.exit(f"bench_bcb_split.py: {dataset}: {ex}; fix: give the hub dataset's BigCodeBench.jsonl")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--run", action="store_true", help="score the split tasks' references in both modes")
    parser.add_argument("--limit", type=int, default=0, help="only the first N split tasks (0: all)")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--ids", default="", help="only these split tasks (numbers, comma-separated)")
    parser.add_argument("--list", action="store_true", help="print the task ids of each mode")
    parser.add_argument("--shared-if-failed", action="store_true", help="the shared mode only where split fails")
    parser.add_argument("--mount", action="append", default=[], help="a directory to mount read-only")
    parser.add_argument("--force-split", action="store_true", help="--ids may name shared tasks (run split)")
    parser.add_argument("--control", action="store_true", help="also a wrong answer in the split mode (it must fail)")
    args = parser.parse_args()
    problems = _read(args.dataset)
    reasons: dict[str, list[str]] = collections.defaultdict(list)
    split = []
    for problem in problems:
        why = shared_reason(problem)
        reasons["split" if why is None else why.split(" (")[0]].append(problem.task_id.split("/")[-1])
        if why is None:
            split.append(problem)
    print(f"tasks: {len(problems)}")
    for why, ids in sorted(reasons.items(), key=lambda item: -len(item[1])):
        print(f"  {len(ids):5d}  {why}" + (f": {' '.join(ids)}" if args.list else ""))
    if args.run:
        wanted = {f"BigCodeBench/{n.strip()}" for n in args.ids.split(",") if n.strip()}
        pool = problems if args.force_split and wanted else split
        chosen = [p for p in pool if p.task_id in wanted] if wanted else split
        asyncio.run(
            _compare(chosen[: args.limit or None], args.timeout, args.shared_if_failed, args.mount, args.control)
        )


if __name__ == "__main__":
    main()
