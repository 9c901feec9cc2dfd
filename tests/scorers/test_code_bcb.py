"""BigCodeBench: pure pieces (prompts, sanitize, verdicts) and agreement runs through bwrap.

The agreement tests run real programs in `BwrapRunner` on the tasks of
tests/fixtures/bcb_sample.jsonl (official format, standard library only, plus one
task whose library is never installed). They skip only when bubblewrap cannot run.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from waits import ROOMY_S

from sandboxes.runner import ExecResult
from scorers import code_bcb as bcb
from scorers.code_bcb import (
    BCBProblem,
    build_program,
    build_prompt,
    check_bigcodebench,
    is_environment_failure,
    missing_module_reason,
    parse_libs,
    parse_verdict,
    sanitize,
    verdict_to_result,
)

FIXTURES = Path(__file__).parents[1] / "fixtures"
BCB_FILE = FIXTURES / "bcb_sample.jsonl"
RECORDS = {r["task_id"]: r for r in map(json.loads, BCB_FILE.read_text().splitlines())}
WORDS, JSONW, PERMS, MISSING = (RECORDS[f"BigCodeBench/900{i}"] for i in range(4))


def problem(record: dict) -> BCBProblem:
    return BCBProblem.from_record(record)


def fenced(code: str, lang: str = "python") -> str:
    return f"Here is my solution.\n\n```{lang}\n{code.strip(chr(10))}\n```\n\nIt counts the words."


# ============================================================ records and prompts


def test_parse_libs_accepts_hub_string_and_list():
    assert parse_libs("['pandas', 'numpy']") == ("pandas", "numpy")
    assert parse_libs(["re"]) == ("re",)
    assert parse_libs("") == () and parse_libs(None) == ()
    assert parse_libs("[pandas, numpy]") == ("pandas", "numpy")  # not a literal: split on punctuation


def test_problem_from_record_and_metadata_round_trip():
    p = problem(WORDS)
    assert p.task_id == "BigCodeBench/9000" and p.entry_point == "task_func"
    assert p.libs == ("collections", "re")
    assert BCBProblem.from_metadata(p.to_metadata()) == p
    json.dumps(p.to_metadata())  # serialisable into Inspect metadata
    assert p.reference_program == p.complete_prompt + "\n" + p.canonical_solution
    with pytest.raises(ValueError, match="missing"):
        BCBProblem.from_record({"task_id": "x", "complete_prompt": "def f(): pass"})


def test_complete_prompt_is_the_official_one():
    p = problem(WORDS)
    prompt = build_prompt(p, "complete")
    assert prompt == (
        "Please provide a self-contained Python script that solves the following problem in a "
        "markdown code block:\n```\n" + p.complete_prompt.strip() + "\n```\n"
    )


def test_instruct_prompt_is_the_official_one():
    p = problem(WORDS)
    prompt = build_prompt(p, "instruct")
    assert prompt.startswith(bcb.INSTRUCTION_PREFIX + "\nCount the words of a text")
    assert prompt.endswith("You should write self-contained code starting with:\n```\n" + p.code_prompt + "```\n")
    assert '"""' not in prompt  # the instruct split shows no docstring


def test_invalid_split_and_subset_are_refused():
    with pytest.raises(ValueError, match="split"):
        build_prompt(problem(WORDS), "chat")
    with pytest.raises(ValueError, match="subset"):
        bcb.check_subset("easy")


# ============================================================ sanitize / program


def test_program_is_calibrated_with_code_prompt_and_pass():
    p = problem(WORDS)
    program = build_program("def task_func(text, top_n=3):\n    return []", p)
    assert program.startswith(p.code_prompt + "\n    pass\n")
    assert program.endswith("def task_func(text, top_n=3):\n    return []")


def test_sanitize_drops_example_usage_and_keeps_reachable_definitions():
    code = textwrap.dedent(
        """\
        import re
        from collections import Counter

        STOP = {"the"}

        def _words(text):
            return [w for w in re.findall(r"\\w+", text.lower()) if w not in STOP]

        def unused_helper():
            return 1

        def task_func(text, top_n=3):
            return Counter(_words(text)).most_common(top_n)

        print(task_func("the a b a"))
        result = task_func("x")
        if __name__ == "__main__":
            while True:
                pass
        import os
        """
    )
    out = sanitize(code, "task_func").code
    assert out.splitlines()[:3] == ["import re", "from collections import Counter", "import os"]  # imports first
    assert "STOP = " in out and "def _words" in out and "def task_func" in out
    assert "unused_helper" not in out and "print(" not in out and "__main__" not in out
    assert "result = " not in out


def test_sanitize_first_definition_wins_and_drops_decorated_definitions_as_officially():
    code = textwrap.dedent(
        """\
        import functools

        @functools.lru_cache(maxsize=None)
        def fib(n):
            return n if n < 2 else fib(n - 1) + fib(n - 2)

        class Box:
            def get(self):
                return fib(10)

        def task_func():
            return Box().get()

        def task_func():
            return -1
        """
    )
    out = sanitize(code, "task_func").code
    assert "def fib" not in out  # official: tree-sitter's decorated_definition is not kept
    assert "class Box" in out
    assert "return Box().get()" in out and "return -1" not in out


def test_sanitize_takes_the_longest_parsable_span_of_the_whole_answer():
    answer = (
        "Here is the code.\n```python\nimport os\ndef task_func(x):\n    return x + 1\n```\n"
        "Usage:\n```python\nprint(task_func(1)  # unbalanced\n```\n"
    )
    assert sanitize(answer, "task_func").code == "import os\ndef task_func(x):\n    return x + 1"
    # official quirk: a trailing unindented line naming the entry point is cut
    one_liner = "import os; import sys\ndef task_func(): return os.sep"
    assert sanitize(one_liner, "task_func").code == "import os\nimport sys"


def test_calibration_inserts_the_prompt_only_in_calibrated_mode():
    p = problem(WORDS)
    answer = "```python\n" + p.canonical_solution + "```"
    code, _ = bcb.extract_code(answer, p, calibrate=True)
    assert code.startswith("import collections\nimport re\ndef task_func(text, top_n=3):")
    assert "collections.Counter" in code
    raw, _ = bcb.extract_code(answer, p, calibrate=False)
    assert "def task_func" not in raw  # nothing inserted without calibration
    assert bcb.extract_code(answer, p) == (raw, "sanitize")  # the official generate pipeline is the default
    assert build_program(code, p).startswith(p.code_prompt + "\n    pass\n")


def test_extraction_of_a_90_kb_answer_is_bounded():
    from cpu_clock import cpu_seconds

    p = problem(WORDS)
    code_lines = [f"v{i} = [{i}, {i + 1}, 'padding the line to forty chars']" for i in range(2500)]
    code_lines[1250] = "def broken(:"  # the whole answer never parses
    answer = "Some prose first.\n```python\n" + "\n".join(code_lines) + "\n```\n" + "More prose. " * 200
    answer += "\n```python\n" + p.reference_program + "\n```\n"
    assert len(answer) > 90_000
    (code, origin), cpu = cpu_seconds(lambda: bcb.extract_code(answer, p))
    assert cpu < 1.0, cpu  # CPU seconds, not wall time (about 4 ms)
    assert origin == "fallback" and "def task_func" in code  # the bound was hit; the solution block is used


# ============================================================ verdicts


def run_result(stdout: str = "", stderr: str = "", rc: int | None = 0, timed_out: bool = False) -> ExecResult:
    return ExecResult(returncode=rc, stdout=stdout, stderr=stderr, timed_out=timed_out)


def verdict_line(nonce: str = "n1", **kw) -> str:
    v = {"nonce": nonce, "stage": "run", "tests_run": 3, "failures": 0, "errors": 0, "missing_module": None,
         "timed_out": False, "exception": None, "exception_type": None, "first_failure": None}  # fmt: skip
    v.update(kw)
    return bcb.VERDICT_MARK + json.dumps(v)


def test_parse_verdict_takes_the_last_marked_line_with_the_nonce():
    out = "noise\n" + verdict_line(failures=1) + "\nmore noise\n" + verdict_line() + "\n"
    assert parse_verdict(out, "n1")["failures"] == 0
    assert parse_verdict(out, "other") is None  # forged / stale verdicts are refused
    assert parse_verdict("no verdict here", "n1") is None
    assert parse_verdict(bcb.VERDICT_MARK + "{not json", "n1") is None
    assert parse_verdict(bcb.VERDICT_MARK + "[1]", None) is None


@pytest.mark.parametrize(
    ("fields", "correct", "status"),
    [
        ({}, True, "pass"),
        ({"failures": 1, "first_failure": "test_x: Traceback\nAssertionError: 1 != 2"}, False, "fail"),
        ({"errors": 2, "first_failure": "test_y: Traceback\nZeroDivisionError"}, False, "error"),
        ({"failures": 1, "errors": 1}, False, "fail"),
        ({"timed_out": True, "errors": 1}, False, "timeout"),
        (
            {"stage": "load", "tests_run": 0, "exception": "SyntaxError: bad", "exception_type": "SyntaxError"},
            False,
            "syntax_error",
        ),  # fmt: skip
        ({"stage": "load", "tests_run": 0, "exception": "NameError: x", "exception_type": "NameError"}, False, "error"),
        (
            {"stage": "load", "tests_run": 0, "missing_module": "pandas", "exception": "ModuleNotFoundError"},
            False,
            "environment",
        ),  # fmt: skip
    ],
)
def test_verdict_mapping(fields, correct, status):
    r = verdict_to_result(parse_verdict(verdict_line(**fields), "n1"), run_result(), problem(WORDS), "prog", 240)
    assert r.correct is correct and r.details["status"] == status
    assert r.extracted == "prog" and r.score == (1.0 if correct else 0.0)
    assert is_environment_failure(r) is (status == "environment")


def test_fail_reason_names_counts_and_first_failure():
    first = "test_a: Trace\n  line\nAssertionError: x"
    v = parse_verdict(verdict_line(failures=1, errors=1, first_failure=first), "n1")
    r = verdict_to_result(v, run_result(), problem(WORDS), "prog", 240)
    assert r.reason == "1 failed, 1 errors of 3 tests; first: test_a: Trace ... AssertionError: x"


def test_no_verdict_maps_to_timeout_or_crash():
    p = problem(WORDS)
    r = verdict_to_result(None, run_result(rc=None, timed_out=True), p, "prog", 5)
    assert r.details["status"] == "timeout" and "10 s" in r.reason  # timeout + 2 + sandbox slack
    r = verdict_to_result(None, run_result(rc=-9, stderr="Killed"), p, "prog", 5)
    assert r.details["status"] == "crash" and "exit code -9" in r.reason
    r = verdict_to_result(None, run_result(rc=1, stderr="ModuleNotFoundError: No module named 'numpy'"), p, "prog", 5)
    assert r.details["status"] == "environment" and r.details["missing_module"] == "numpy"


def test_missing_module_reason_tells_task_libraries_from_the_answers_imports():
    p = problem(MISSING)
    assert missing_module_reason("bcb_fixture_missing_lib", p).startswith(
        "environment: missing module bcb_fixture_missing_lib - install it"
    )
    own = missing_module_reason("leftpad", p)
    assert own.startswith("environment: missing module leftpad (not among the task's libraries")
    # a submodule of a declared library counts as the library
    assert "not among" not in missing_module_reason("bcb_fixture_missing_lib.sub", p)


# ============================================================ agreement runs (bwrap)


async def check(completion: str, record: dict, runner, timeout: float = ROOMY_S, **kw):
    return await check_bigcodebench(completion, problem(record), runner, timeout, **kw)


@pytest.mark.slow
@pytest.mark.parametrize("record", [WORDS, JSONW, PERMS], ids=["words", "json_file", "perms"])
async def test_reference_programs_pass(record, runner):
    r = await check(fenced(problem(record).reference_program), record, runner)
    assert r.correct, r.reason
    assert r.details["status"] == "pass" and r.details["tests_run"] >= 2
    assert r.details["failures"] == 0 and r.details["errors"] == 0


@pytest.mark.slow
async def test_instruct_style_answer_without_imports_passes_thanks_to_calibration(runner):
    body = problem(WORDS).canonical_solution
    answer = fenced("def task_func(text, top_n=3):\n" + body)  # uses collections/re without importing
    r = await check(answer, WORDS, runner)
    assert r.correct, r.reason
    assert r.extracted.startswith(problem(WORDS).code_prompt + "\n    pass\ndef task_func(text, top_n=3):\n")


@pytest.mark.slow
async def test_body_only_answers_pass_only_with_calibrate_and_usage_examples_pass(runner):
    p = problem(PERMS)
    r = await check(fenced(p.canonical_solution), PERMS, runner, calibrate=True)
    assert r.correct, r.reason
    r = await check(fenced(p.canonical_solution), PERMS, runner)  # official generate pipeline: fail
    assert not r.correct, r.reason
    noisy = p.reference_program + "\nprint(task_func([1, 2, 3]))\nif __name__ == '__main__':\n    input()\n"
    r = await check(fenced(noisy), PERMS, runner)
    assert r.correct, r.reason


@pytest.mark.slow
async def test_wrong_answer_is_a_unittest_failure(runner):
    answer = fenced(
        """
        import collections, re
        def task_func(text, top_n=3):
            if top_n <= 0:
                raise ValueError
            return collections.Counter(text.split()).most_common(top_n)  # no lower-casing
        """.replace("\n        ", "\n")
    )
    r = await check(answer, WORDS, runner)
    assert not r.correct and r.details["status"] == "fail"
    assert r.details["failures"] == 1 and r.details["errors"] == 0 and r.details["tests_run"] == 5
    assert r.details["failing_tests"] == ["test_case_and_punctuation"]
    assert "1 failed, 0 errors of 5 tests; first: test_case_and_punctuation" in r.reason


@pytest.mark.slow
async def test_runtime_error_is_a_unittest_error(runner):
    answer = fenced("import itertools, statistics\ndef task_func(numbers):\n    return 1 / 0\n")
    r = await check(answer, PERMS, runner)
    assert not r.correct and r.details["status"] == "error"
    assert r.details["errors"] == 3 and r.details["failures"] == 0  # test_constant_used still passes
    assert "ZeroDivisionError" in r.details["first_failure"]


@pytest.mark.slow
async def test_time_out_with_a_short_timeout(runner):
    answer = fenced("def task_func(numbers):\n    while True:\n        pass\n")
    r = await check(answer, PERMS, runner, timeout=0.5)
    assert not r.correct and r.details["status"] == "timeout"
    assert "time-out" in r.reason


@pytest.mark.slow
async def test_time_out_of_code_that_ignores_the_alarm(runner):
    answer = fenced(
        "def task_func(numbers):\n"
        "    while True:\n"
        "        try:\n"
        "            while True:\n"
        "                pass\n"
        "        except BaseException:\n"
        "            pass\n"
    )
    r = await check(answer, PERMS, runner, timeout=0.5)
    assert not r.correct and r.details["status"] == "timeout"


@pytest.mark.slow
async def test_syntax_error(runner):
    r = await check(fenced("def task_func(numbers:\n    return 0\n"), PERMS, runner)
    assert not r.correct and r.details["status"] == "syntax_error"
    assert "SyntaxError" in r.reason and r.details["stage"] == "load"


async def test_missing_code_block_never_runs():
    class NoRun:
        async def run(self, *a, **k):
            raise AssertionError("nothing should run")

    r = await check("", PERMS, NoRun())
    assert not r.correct and r.details["status"] == "no_code" and r.extracted is None
    r = await check("\n  \n", PERMS, NoRun())
    assert r.details["status"] == "no_code"


@pytest.mark.slow
async def test_missing_module_is_an_environment_failure(runner):
    p = problem(MISSING)
    r = await check(fenced(p.reference_program), MISSING, runner)
    assert not r.correct and r.score == 0.0
    assert r.details["status"] == "environment" and r.details["missing_module"] == "bcb_fixture_missing_lib"
    assert r.reason.startswith("environment: missing module bcb_fixture_missing_lib")
    assert is_environment_failure(r)


@pytest.mark.slow
async def test_missing_module_inside_a_test_is_an_environment_failure(runner):
    answer = fenced(
        "import itertools, statistics\ndef task_func(numbers):\n    import leftpad_not_installed\n    return 0.0\n"
    )
    r = await check(answer, PERMS, runner)
    assert r.details["status"] == "environment" and r.details["stage"] == "run"
    assert "missing module leftpad_not_installed (not among the task's libraries" in r.reason


@pytest.mark.slow
async def test_forged_verdict_and_exit_are_fails(runner):
    forged = bcb.VERDICT_MARK + json.dumps({"nonce": "guess", "failures": 0, "errors": 0, "tests_run": 9})
    answer = fenced(
        f"import os\ndef task_func(numbers):\n    os.write(1, b'\\n' + {forged.encode()!r} + b'\\n')\n    os._exit(0)\n"
    )
    r = await check(answer, PERMS, runner)
    assert not r.correct and r.details["status"] == "crash"
    r = await check(fenced("import sys\nsys.exit(0)\ndef task_func(numbers):\n    return 0.0\n"), PERMS, runner)
    assert not r.correct  # sanitize drops the top-level call; the stub returns a wrong value
    r = await check(fenced("def task_func(numbers):\n    raise SystemExit(0)\n"), PERMS, runner)
    assert not r.correct and r.details["status"] == "error"


@pytest.mark.slow
async def test_stdin_and_prints_are_swallowed_and_cwd_is_a_fresh_directory(runner):
    answer = fenced(
        "import json, os\n"
        "def task_func(records, filename='records.json'):\n"
        "    print('chatty ' * 1000)\n"
        "    assert sorted(os.listdir('.')) == [] or filename == 'other.json', os.listdir('.')\n"
        "    records = sorted(records, key=lambda r: r['id'])\n"
        "    with open(filename, 'w') as f:\n"
        "        json.dump(records, f)\n"
        "    return os.path.abspath(filename)\n"
    )
    r = await check(answer, JSONW, runner)
    assert r.correct, r.reason
    r = await check(fenced("def task_func(numbers):\n    return float(input())\n"), PERMS, runner)
    assert r.details["status"] == "error" and "OSError" in r.details["first_failure"]


# ============================================================ which code is judged


@pytest.mark.slow
async def test_solution_followed_by_a_usage_example_block_passes(runner):
    p = problem(WORDS)
    answer = fenced(p.reference_program) + "\nUsage:\n```python\nprint(task_func('a a b'))\n```\n"
    r = await check(answer, WORDS, runner)
    assert r.correct, r.reason
    assert r.details["code_from"] == "sanitize"


# ============================================================ task, dataset, end to end


@pytest.fixture
def _offline(monkeypatch, tmp_path):
    def refuse(*_a, **_k):
        raise AssertionError("network used")

    monkeypatch.setattr("tasks.sources.pip_download", refuse)
    monkeypatch.setenv("CONDUCTOR_BENCH_CACHE", str(tmp_path / "cache"))


def test_record_to_sample_both_splits():
    from tasks.bigcodebench import record_to_sample

    s = record_to_sample(WORDS)
    assert s.id == "BigCodeBench/9000" and s.input == build_prompt(problem(WORDS), "complete")
    assert s.target == problem(WORDS).reference_program
    assert s.metadata["split"] == "complete" and s.metadata["subset"] == "hard"
    assert BCBProblem.from_metadata(s.metadata) == problem(WORDS)
    si = record_to_sample(WORDS, split="instruct", subset="hard")
    assert si.input == build_prompt(problem(WORDS), "instruct") and si.metadata["subset"] == "hard"


def test_subset_selection_picks_the_pinned_hub_dataset():
    from tasks import catalog
    from tasks.bigcodebench import sources_for
    from tasks.sources import is_pinned

    (full,) = sources_for("full")
    (hard,) = sources_for("hard")
    assert full.dataset_id == "bigcode/bigcodebench" and hard.dataset_id == "bigcode/bigcodebench-hard"
    assert full.split == hard.split == catalog.BIGCODEBENCH_VERSION == "v0.1.4"
    assert is_pinned(full.revision) and is_pinned(hard.revision)
    (old,) = sources_for("hard", version="v0.1.2")
    assert old.split == "v0.1.2" and old.revision == hard.revision
    with pytest.raises(ValueError, match="subset"):
        sources_for("medium")


def test_default_is_the_hard_complete_set_from_the_hub(_offline, monkeypatch):
    """issue 7 item 8: `bigcodebench()` with no options loads the hard subset (148 tasks
    on the hub), complete split; the fake hub serves the fixture rows for any id."""
    import sys
    import types

    from tasks import catalog
    from tasks.bigcodebench import bigcodebench

    requested = []

    def load_dataset(dataset_id, config=None, split=None, revision=None):
        requested.append((dataset_id, split, revision))
        return [dict(r) for r in RECORDS.values()]

    monkeypatch.setitem(sys.modules, "datasets", types.SimpleNamespace(load_dataset=load_dataset))
    t = bigcodebench()
    (hard,) = catalog.BIGCODEBENCH_HARD
    assert requested == [("bigcode/bigcodebench-hard", "v0.1.4", hard.revision)]
    assert {s.metadata["subset"] for s in t.dataset} == {"hard"}
    assert {s.metadata["split"] for s in t.dataset} == {"complete"}
    requested.clear()
    bigcodebench(subset="full")
    assert requested[0][0] == "bigcode/bigcodebench"


def test_prefill_ends_the_input_with_the_official_assistant_prefix():
    from tasks.bigcodebench import record_to_sample

    s = record_to_sample(WORDS, prefill=True)
    user, assistant = s.input
    assert user.role == "user" and user.text == build_prompt(problem(WORDS), "complete")
    assert assistant.role == "assistant" and assistant.text == bcb.RESPONSE_PREFILL
    assert assistant.text.endswith("```python\n")
    # the continuation (code, then the closing fence) is what gets sanitized
    code, origin = bcb.extract_code(problem(WORDS).reference_program + "\n```\nDone.", problem(WORDS))
    assert origin == "sanitize" and "def task_func" in code


def test_task_builds_from_the_fixture(_offline):
    from tasks.bigcodebench import bigcodebench

    t = bigcodebench(data_file=str(BCB_FILE), split="instruct", timeout=30)
    assert len(t.dataset) == 4
    s = t.dataset[0]
    assert s.metadata["data_source"].startswith("file:") and "bcb_sample.jsonl#sha256=" in s.metadata["data_source"]
    assert s.input.startswith(bcb.INSTRUCTION_PREFIX) and s.metadata["split"] == "instruct"
    assert t.sandbox.type == "bwrap"
    with pytest.raises(ValueError, match="split"):
        bigcodebench(data_file=str(BCB_FILE), split="chat")


def test_task_without_hub_access_names_the_alternatives(_offline, monkeypatch):
    import builtins

    from tasks.bigcodebench import bigcodebench
    from tasks.sources import SourceError

    real_import = builtins.__import__

    def no_datasets(name, *a, **k):
        if name == "datasets":
            raise ImportError("no datasets here")
        return real_import(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_datasets)
    with pytest.raises(SourceError, match="data_file"):
        bigcodebench(subset="hard")


@pytest.mark.slow
def test_eval_end_to_end_scores_the_canonical_solution(_offline, runner):
    from inspect_ai import eval
    from inspect_ai.model import ModelOutput
    from inspect_ai.solver import Generate, TaskState, solver

    import sandboxes.inspect_bwrap  # noqa: F401 - registers the `bwrap` sandbox type
    from tasks.bigcodebench import bigcodebench

    @solver
    def answer_with_reference():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            code = BCBProblem.from_metadata(state.metadata).reference_program
            state.output = ModelOutput.from_content("mockllm/model", f"```python\n{code}\n```")
            return state

        return solve

    task = bigcodebench(data_file=str(BCB_FILE), timeout=ROOMY_S)
    [log] = eval(task, model="mockllm/model", solver=answer_with_reference(), limit=1,
                 display="none", log_level="warning")  # fmt: skip
    assert log.status == "success", log.error
    [sample] = log.samples
    score = sample.scores["bigcodebench_scorer"]
    assert score.value == "C", score.explanation
    assert score.metadata["status"] == "pass" and score.metadata["details"]["tests_run"] == 5
    assert log.results.scores[0].metrics["accuracy"].value == 1.0
