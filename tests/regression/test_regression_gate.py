"""The regression gate end to end on the simulated pool and fixture data (offline, seconds):
a rerun matches its own baseline; a deliberately broken scorer fails the gate with a diff
naming the task, solver and metric, in process and through the command line's exit status."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from waits import run_command

import scorers.inspect_scorers as inspect_scorers
from regression.cli import ABOUT, TOLERANCES, select
from regression.compare import compare, report, updated_baseline
from regression.suite import default_groups, run_group
from scorers.checks import CheckResult

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
DATA = {
    "gsm8k": str(FIXTURES / "gsm8k.jsonl"),
    "math500": str(FIXTURES / "math500.jsonl"),
    "mmlu": str(FIXTURES / "mmlu.jsonl"),
}
SELECTION = ["--groups", "sim", "--tasks", "gsm8k,mmlu", "--solvers", "conductor,single_worker", "--sim-limit", "3"]
DATA_ARGS = [arg for task, path in DATA.items() for arg in ("--data-file", f"{task}={path}")]
BROKEN = (  # a numeric check that never credits an answer, patched in before the gate runs
    "import sys, scorers.inspect_scorers as s; from scorers.checks import CheckResult; "
    "s.check_numeric = lambda output, target: CheckResult(False, None, 'deliberately broken'); "
    "from regression.cli import main; sys.exit(main(sys.argv[1:]))"
)


def small_suite():
    groups = default_groups(sim_limit=3, local_limit=0, data_files=DATA)
    return select(groups, {"gsm8k", "math500", "mmlu"}, {"conductor", "single_worker"})


def never_correct(output: str, target: str) -> CheckResult:
    return CheckResult(False, None, "deliberately broken")


def run(groups, log_dir) -> dict:
    entries = {}
    for group in groups:
        entries.update(run_group(group, str(log_dir), progress=lambda _: None))
    return entries


@pytest.mark.slow
def test_rerun_passes_and_broken_scorer_fails_with_a_named_diff(tmp_path, monkeypatch):
    groups = small_suite()
    first = run(groups, tmp_path / "a")
    assert len(first) == 9  # 3 tasks x (conductor, single_worker 0 and 3)
    assert all(e["metrics"]["errors"] == 0 and e["metrics"]["failed_steps"] == 0 for e in first.values())
    baseline = updated_baseline(None, first, TOLERANCES, ABOUT)

    second = run(groups, tmp_path / "b")
    assert compare(baseline, second) == [], "the simulated suite is not deterministic"

    gsm8k_correct = [k for k, e in first.items() if e["task"] == "gsm8k" and e["metrics"]["accuracy"] > 0]
    assert gsm8k_correct, "precondition: some gsm8k entry scores above 0, so breaking its check must show"
    monkeypatch.setattr(inspect_scorers, "check_numeric", never_correct)
    broken = run(groups, tmp_path / "c")
    diffs = compare(baseline, broken)
    assert {d.key for d in diffs if d.metric == "accuracy"} == set(gsm8k_correct)
    assert all(d.key.startswith("sim/gsm8k/") for d in diffs)  # the other tasks are untouched
    text = report(diffs, len(broken), "baseline.json")
    assert "FAILED" in text and f"{gsm8k_correct[0]}  accuracy:" in text


def gate(args: list[str], code: str | None = None) -> subprocess.CompletedProcess:
    command = [sys.executable, "-c", code, *args] if code else [sys.executable, "-m", "regression", *args]
    return run_command(command, cwd=ROOT)


@pytest.mark.slow
def test_command_line_exit_status(tmp_path):
    common = [*SELECTION, *DATA_ARGS, "--baseline", str(tmp_path / "baseline.json"), "--log-dir", str(tmp_path)]
    made = gate([*common, "--update"])
    assert made.returncode == 0, made.stdout + made.stderr
    assert "wrote 6 entries" in made.stdout

    ok = gate(common)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "regression gate: OK (6 entries" in ok.stdout

    broken = gate(common, code=BROKEN)
    assert broken.returncode == 1, broken.stdout + broken.stderr
    assert "regression gate: FAILED" in broken.stdout
    assert "sim/gsm8k/single_worker[worker=0]  accuracy:" in broken.stdout
    assert "nox -s regression -- --update" in broken.stdout


@pytest.mark.slow
def test_command_line_names_bad_input(tmp_path):
    missing = gate([*SELECTION, "--baseline", str(tmp_path / "none.json")])
    assert missing.returncode == 2 and "no baseline at" in missing.stderr and "--update" in missing.stderr
    unknown = gate(["--tasks", "gsm8k,nope", "--baseline", str(tmp_path / "none.json"), "--update"])
    assert unknown.returncode == 2 and "unknown task(s) ['nope']" in unknown.stderr
    bad = tmp_path / "bad.json"
    bad.write_text('{"entries": {}}')
    shape = gate([*SELECTION, "--baseline", str(bad)])
    assert shape.returncode == 2 and "no 'tolerances'" in shape.stderr
