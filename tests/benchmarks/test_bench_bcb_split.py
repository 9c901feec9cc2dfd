"""benchmarks/bench_bcb_split.py reads a BigCodeBench jsonl: the tasks counted by mode, a file that is not
one refused in one line (no run: nothing is sandboxed here)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from waits import run_command

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "bench_bcb_split.py"


def test_the_tasks_are_counted_by_mode():
    ran = run_command([sys.executable, str(SCRIPT), str(ROOT / "tests" / "fixtures" / "bcb_sample.jsonl")])
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines()[0] == "tasks: 4" and "split" in ran.stdout


@pytest.mark.parametrize(
    "text", ['{"task_id": "BigCodeBench/0", "prompt": "x"}\n', "not json\n", "[1, 2]\n", None, b"\xff\xfe"]
)
def test_a_file_that_is_not_the_dataset_is_one_line(tmp_path, text):
    path = tmp_path / "tasks.jsonl"
    if isinstance(text, str):
        path.write_text(text)
    elif text is not None:
        path.write_bytes(text)
    ran = run_command([sys.executable, str(SCRIPT), str(path)])
    assert ran.returncode == 1 and ran.stderr.count("\n") == 1 and "Traceback" not in ran.stderr, ran.stderr
    assert ran.stderr.startswith(f"bench_bcb_split.py: {path}: ") and "fix: give the hub dataset's" in ran.stderr
