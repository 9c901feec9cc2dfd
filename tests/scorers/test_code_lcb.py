"""LiveCodeBench: pure pieces (comparison, decoding, dates, releases, samples) and
agreement tests of the check through the real bwrap sandbox."""

from __future__ import annotations

import base64
import json
import os
import pickle
import zlib
from pathlib import Path

import pytest
from waits import ROOMY_S

from scorers import lcb_driver
from scorers.code_lcb import (
    LCBProblem,
    LCBTest,
    UnsafePickleError,
    check_livecodebench,
    compare_functional,
    compare_stdio,
    decode_private_tests,
    encode_private_tests,
    extract_code,
    global_timeout,
    in_date_window,
    lookup_problem,
    parse_verdict,
    problem_from_record,
    register_problems,
    unpickle_str,
)
from tasks import livecodebench as lcb_task

FIXTURES = Path(__file__).parents[1] / "fixtures"
SAMPLE = FIXTURES / "lcb_sample.jsonl"


def _records() -> list[dict]:
    return [json.loads(line) for line in SAMPLE.read_text().splitlines() if line.strip()]


def _problems() -> dict[str, LCBProblem]:
    return {p.question_id: p for p in map(problem_from_record, _records())}


# ---------------------------------------------------------------- output comparison


def test_stdio_compare_strips_whitespace_and_lines():
    assert compare_stdio("3\n", "3")[0]
    assert compare_stdio("  1 2 \r\n 3\n\n", "1 2\n3\n")[0]
    assert not compare_stdio("3\n4\n", "3\n")[0]  # line count differs
    ok, why = compare_stdio("Yes\n", "No\n")
    assert not ok and "output_line_idx=0" in why


def test_stdio_compare_numeric_fallback_is_decimal_exact():
    assert compare_stdio("2.5\n", "2.50\n")[0]
    assert compare_stdio("0\n", "0.0\n")[0]
    assert compare_stdio("1e3 7\n", "1000 7.0\n")[0]
    assert compare_stdio("1  2\n", "1 2\n")[0]  # split() tokens equal as Decimals
    assert not compare_stdio("2.5000001\n", "2.5\n")[0]  # no tolerance, as official
    assert not compare_stdio("50000000000000001\n", "50000000000000000\n")[0]
    assert not compare_stdio("abc 1\n", "abd 1\n")[0]


def test_functional_compare_is_python_equality_on_plain_data():
    assert compare_functional([0, 1], "[0, 1]")
    assert not compare_functional([(1, 2)], "[[1, 2]]")  # nested tuples stay tuples (official)
    assert compare_functional(2.0, "2") and compare_functional(1, "true")  # Python ==
    assert not compare_functional({1, 2}, "[1, 2]") and not compare_functional({1: 2}, '{"1": 2}')
    assert compare_functional({"a": [1]}, '{"a": [1]}')


def test_child_normalizes_only_honest_subclasses():
    from collections import Counter, defaultdict

    class Liar(list):
        def __eq__(self, other):
            return True

    assert type(lcb_driver._normalize(defaultdict(int, a=1))) is dict
    assert type(lcb_driver._normalize([Counter("aa")])[0]) is dict
    assert type(lcb_driver._normalize(Liar())) is Liar  # stays opaque on the channel: fails


def test_extract_code_is_the_official_rule():
    assert extract_code("x\n```python\na = 1\n```\ny") == "a = 1"
    assert extract_code("```\n1\n```\n```python\n2\n```") == "2"
    assert extract_code("```python\na = 1\n```\nuse ```python fences") == ""  # between the last two
    assert extract_code("  ```python\n  a = 1\n  ```") == "  a = 1"  # indentation kept
    assert extract_code("~~~\na\n~~~") == "" and extract_code("```python\na") == "" and extract_code(None) == ""
    assert extract_code("```python\na = 1\n``` done") == "a = 1"


def test_program_assembly_is_the_official_one():
    code = "import sys\nx = 1\nfrom math import gcd\nif __name__ == '__main__':\n    print(x)\nelse:\n    pass"
    unwrapped = lcb_driver.unwrap_main_guard(code)
    assert "__name__" not in unwrapped and "pass" not in unwrapped
    wrapped = lcb_driver.wrap_program(unwrapped)
    assert wrapped.startswith(lcb_driver.IMPORT_STRING)
    head, fn = wrapped[len(lcb_driver.IMPORT_STRING) :].split("def wrapped_function():")
    assert "import sys" in head and "from math import gcd" in head and "x = 1" in fn
    not_last = "if __name__ == '__main__':\n    main()\nprint(1)"
    assert lcb_driver.unwrap_main_guard(not_last) == not_last
    assert lcb_driver.wrap_program("def f(:") == "def f(:"  # unparsable: left as is


def test_verdict_needs_the_nonce_on_its_line():
    v = {"passed": True}
    out = f"noise\nabc {json.dumps(v)}\n"
    assert parse_verdict(out, "abc") == v
    assert parse_verdict(out, "xyz") is None
    assert parse_verdict("abc not-json\n", "abc") is None


def test_global_timeout_is_official():
    assert global_timeout(10) == 75
    assert global_timeout(3, timeout=1) == 11


# ---------------------------------------------------------------- private tests decoding


def test_private_tests_decode_both_encodings():
    tests = [{"input": "1\n", "output": "2\n", "testtype": "stdin"}]
    assert decode_private_tests(json.dumps(tests)) == tests
    assert decode_private_tests(encode_private_tests(tests)) == tests
    for protocol in range(0, pickle.HIGHEST_PROTOCOL + 1):
        blob = base64.b64encode(zlib.compress(pickle.dumps(json.dumps(tests), protocol=protocol))).decode()
        assert decode_private_tests(blob) == tests
    assert decode_private_tests("") == [] and decode_private_tests(None) == []


class _Boom:
    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_malicious_pickle_is_rejected_not_executed(tmp_path):
    marker = tmp_path / "pwned"
    evil = base64.b64encode(zlib.compress(pickle.dumps(_Boom(marker)))).decode()
    with pytest.raises(UnsafePickleError, match="not allowed"):
        decode_private_tests(evil)
    assert not marker.exists()
    with pytest.raises(UnsafePickleError):  # a list of strings is not a plain str either
        unpickle_str(pickle.dumps(["a", "b"]))
    with pytest.raises(UnsafePickleError):
        unpickle_str(b"\x80\x04not a pickle")
    assert unpickle_str(pickle.dumps("hello")) == "hello"


def test_zlib_bomb_is_refused():
    blob = base64.b64encode(zlib.compress(pickle.dumps("x" * 100_000))).decode()
    with pytest.raises(ValueError, match="decompress"):
        decode_private_tests(blob, max_bytes=1000)


# ---------------------------------------------------------------- records, dates, releases


def test_problem_from_record_parses_the_official_format():
    probs = _problems()
    stdin, func, packed = probs["abc900_a"], probs["3501"], probs["2050_b"]
    assert stdin.testtype == "stdin" and stdin.func_name is None
    assert [t.output for t in stdin.tests()] == ["3\n", "0\n", "2000000000\n"]
    assert func.testtype == "functional" and func.func_name == "pairSum"
    assert len(func.tests()) == 4 and func.starter_code.startswith("class Solution")
    assert len(packed.private_tests()) == 3  # base64(zlib(pickle(json)))
    assert str(packed.date) == "2025-01-15"


def test_date_window_is_inclusive_and_open_ended():
    p = _problems()["abc900_a"]  # 2024-08-10
    assert in_date_window(p, None, None)
    assert in_date_window(p, "2024-08-10", "2024-08-10")
    assert not in_date_window(p, "2024-08-11", None)
    assert not in_date_window(p, None, "2024-08-09")
    kept = lcb_task.select_problems(list(_problems().values()), start_date="2024-08-01")
    assert {q.question_id for q in kept} == {"abc900_a", "3501", "2050_b"}
    kept = lcb_task.select_problems(list(_problems().values()), end_date="2024-12-31", platform="leetcode")
    assert {q.question_id for q in kept} == {"3501", "2700"}


def test_release_selection():
    assert lcb_task.release_files("release_v1") == ("test.jsonl",)
    assert lcb_task.release_files("release_v3") == ("test.jsonl", "test2.jsonl", "test3.jsonl")
    assert len(lcb_task.release_files("release_v6")) == 6
    assert lcb_task.release_files("release_latest") == lcb_task.release_files("release_v6")
    assert lcb_task.release_files("v5") == ("test5.jsonl",)
    assert lcb_task.release_files("v1") == ("test.jsonl",)
    assert lcb_task.release_files("v4_v6") == ("test4.jsonl", "test5.jsonl", "test6.jsonl")
    for bad in ("release_v7", "v0", "v3_v2", "latest"):
        with pytest.raises(ValueError, match="unknown LiveCodeBench release"):
            lcb_task.release_files(bad)
    [src] = lcb_task.lcb_sources("release_v2")
    assert src.filenames == ("test.jsonl", "test2.jsonl") and len(src.revision) == 40
    assert "code_generation_lite@" in src.label


# problems per hub file (test.jsonl .. test6.jsonl) in the official release table:
# release_v1..v6 hold 400, 511, 612, 713, 880, 1055 problems
RELEASE_SIZES = (400, 111, 101, 101, 167, 175)


def _hub_copy(root: Path) -> Path:
    """A local copy of the hub repository's layout: one file per release increment, records
    in the code_generation_lite format with contest dates in each release's span."""
    root.mkdir()
    qid = 0
    for k, (name, size) in enumerate(zip(lcb_task.LIVECODEBENCH_FILES, RELEASE_SIZES, strict=True)):
        with (root / name).open("w") as f:
            for i in range(size):
                qid += 1
                f.write(json.dumps({
                    "question_title": f"p{qid}", "question_content": "Print 1.", "platform": "atcoder",
                    "question_id": f"q{qid}", "contest_id": f"c{k}", "difficulty": "easy", "starter_code": "",
                    "contest_date": f"{2023 + k // 2}-{k * 2 + 1:02d}-{i % 28 + 1:02d}T00:00:00",
                    "public_test_cases": json.dumps([{"input": "", "output": "1", "testtype": "stdin"}]),
                    "private_test_cases": "[]", "metadata": "{}",
                }) + "\n")  # fmt: skip
    return root


def test_default_is_the_problems_added_in_release_v6(tmp_path):
    hub = _hub_copy(tmp_path / "code_generation_lite")
    last = {json.loads(line)["question_id"] for line in (hub / "test6.jsonl").open()}
    default = lcb_task.livecodebench(data_dir=str(hub))
    assert len(default.dataset) == 175 and {s.id for s in default.dataset} == last
    assert "test6.jsonl" in default.dataset[0].metadata["data_source"]
    assert len(lcb_task.livecodebench(data_dir=str(hub), release="release_v6").dataset) == 1055
    assert len(lcb_task.livecodebench(data_dir=str(hub), release="release_v5").dataset) == 880
    assert len(lcb_task.livecodebench(data_dir=str(hub), release="v5_v6").dataset) == 342
    (hub / "test6.jsonl").unlink()
    with pytest.raises(Exception, match="missing test6.jsonl"):
        lcb_task.livecodebench(data_dir=str(hub))
    with pytest.raises(ValueError, match="not both"):
        lcb_task.livecodebench(data_dir=str(hub), data_file=str(SAMPLE))


def test_prompt_follows_the_pinned_official_template():
    p = lcb_task.lcb_prompt("Q?", "")
    system, user = p.split("\n\n", 1)
    assert system == lcb_task.SYSTEM_MESSAGE and "NOT return anything" not in system
    assert user.startswith("### Question:\nQ?\n\n### Format: Read the inputs from stdin")
    assert "writes output to STDOUT.\n```python\n# YOUR CODE HERE\n```\n\n### Answer:" in user
    f = lcb_task.lcb_prompt("Q?", "class Solution:\n    def f(self):")
    assert "delimiters.\n```python\nclass Solution:\n    def f(self):\n```\n\n### Answer:" in f


def test_record_to_sample_uses_the_official_prompt():
    recs = {r["question_id"]: r for r in _records()}
    s = lcb_task.record_to_sample(recs["abc900_a"])
    assert s.id == "abc900_a"
    assert s.input.startswith("You are an expert Python programmer.")
    assert "### Question:\nYou are given two integers" in s.input
    assert "Read the inputs from stdin" in s.input and "# YOUR CODE HERE" in s.input
    assert s.input.rstrip().endswith("### Answer: (use the provided format with backticks)")
    f = lcb_task.record_to_sample(recs["3501"])
    assert "following starter code" in f.input and "def pairSum(self" in f.input
    assert f.metadata["testtype"] == "functional" and f.metadata["func_name"] == "pairSum"
    assert "private_test_cases" not in json.dumps(f.metadata)  # tests stay out of logs


def test_task_from_fixture_filters_and_registers_problems():
    task = lcb_task.livecodebench(data_file=str(SAMPLE), start_date="2024-08-01", end_date="2024-12-31")
    ids = [s.id for s in task.dataset]
    assert ids == ["abc900_a", "3501"]
    assert task.dataset[0].metadata["data_source"].startswith("file:")
    assert lookup_problem("3501").func_name == "pairSum"
    with pytest.raises(ValueError, match="no problems left"):
        lcb_task.livecodebench(data_file=str(SAMPLE), start_date="2030-01-01")


def test_lookup_falls_back_to_metadata_record():
    rec = dict(_records()[0], question_id="custom-1")
    assert lookup_problem("custom-1", metadata={"lcb_record": rec}).question_id == "custom-1"
    register_problems("t-empty", [])
    with pytest.raises(KeyError, match="not registered"):
        lookup_problem("nope", "t-empty")


# ---------------------------------------------------------------- agreement (real sandbox)


def fence(code: str) -> str:
    return f"Here is my solution.\n```python\n{code}\n```\n"


STDIN_OK = "a, b = map(int, input().split())\nprint(a + b)"
AVG_OK = "n = int(input())\nxs = list(map(int, input().split()))\nprint(sum(xs) / n)\nprint(max(xs))"
PAIR_OK = (
    "class Solution:\n    def pairSum(self, nums: List[int], target: int) -> List[int]:\n"
    "        seen = {}\n        for i, x in enumerate(nums):\n"
    "            if target - x in seen:\n                return [seen[target - x], i]\n"
    "            seen[x] = i\n"
)
MINMAX_TUPLE = "class Solution:\n    def minMax(self, nums):\n        return (min(nums), max(nums))"

CASES = [
    # (problem id, completion, passes, status)
    ("abc900_a", fence(STDIN_OK), True, "passed"),
    ("abc900_a", fence("import sys\nprint(sum(map(int, sys.stdin.read().split())))\nexit(0)"), True, "passed"),
    ("2050_b", fence(AVG_OK), True, "passed"),  # 2.5 vs 2.50, 0.0 vs 0: numeric fallback
    ("2050_b", fence(AVG_OK.replace("sum(xs) / n", "sum(xs) // n")), False, "wrong_answer"),
    ("3501", fence(PAIR_OK), True, "passed"),
    ("2700", fence(MINMAX_TUPLE), True, "passed"),  # tuple result counts as a list
    (
        "2700",
        fence("class Solution:\n    def minMax(self, nums):\n        return [max(nums), min(nums)]"),
        False,
        "wrong_answer",
    ),
    ("abc900_a", fence("a, b = map(int, input().split())\nprint(a - b)"), False, "wrong_answer"),
    ("abc900_a", fence("print(1 // 0)"), False, "runtime_error"),
    (
        "3501",
        fence("class Solution:\n    def pairSum(self, nums, target):\n        return nums[99]"),
        False,
        "runtime_error",
    ),
    pytest.param(  # endless with little CPU; 10 s (below)
        "abc900_a", fence("import time\nwhile True:\n    time.sleep(1)"), False, "timeout", marks=pytest.mark.slow
    ),
    ("abc900_a", fence("def main(:\n    pass"), False, "compile_error"),
    ("abc900_a", "a, b = map(int, input().split())\nprint(a + b)", False, "no_code"),
    ("abc900_a", fence("import os\nprint(3)\nos._exit(0)"), False, "process_exit"),
    # beyond the official grader (which compares in the candidate's process): a result whose
    # __eq__ always says yes crosses as opaque data and fails
    (
        "2700",
        fence(
            "class L(list):\n    def __eq__(self, o):\n        return True\n"
            "class Solution:\n    def minMax(self, nums):\n        return L()"
        ),
        False,
        "wrong_answer",
    ),
    # a solution cannot forge the verdict: the nonce is not in its reach
    ("abc900_a", fence('print("deadbeef {\\"passed\\": true}")'), False, "wrong_answer"),
]


@pytest.mark.parametrize(("qid", "completion", "passes", "status"), CASES)
async def test_agreement_through_bwrap(runner, qid, completion, passes, status):
    problem = _problems()[qid]
    # room for a verdict; an endless loop ends anyway, but its load runs under the per-test limit too (as officially):
    # 10 s lets a busy machine load it, and its tests 34 times make the problem's limit (10 + 1) * 102 + 5 s
    limit = 10 if status == "timeout" else ROOMY_S
    tests = problem.tests() * 34 if status == "timeout" else None
    result = await check_livecodebench(completion, problem, runner, timeout=limit, tests=tests)
    assert result.correct is passes, result.reason
    assert result.details["status"] == status, result.details


async def test_first_failure_stops_and_reports(runner):
    problem = _problems()["abc900_a"]
    # passes the public tests, fails the private one (overflow-free Python, so: print wrong on big input)
    code = "a, b = map(int, input().split())\nprint(a + b if a < 10**6 else 0)"
    result = await check_livecodebench(fence(code), problem, runner, timeout=ROOMY_S)
    assert not result.correct
    assert result.details["results"] == [True, True, -2]
    assert result.details["first_failure"]["index"] == 2
    # stop at first failure: a wrong answer on test 0 leaves the other tests unrun (not a time-out under a short
    # limit: the program's load runs under the per-test limit, as officially, and a busy machine can outlast it)
    first_wrong = await check_livecodebench(fence("print(0)"), problem, runner, timeout=ROOMY_S)
    assert first_wrong.details["n_run"] == 1 and first_wrong.details["results"] == [-2]


@pytest.mark.slow
async def test_huge_output_fails_the_problem_without_exhausting_the_driver(runner):
    problem = _problems()["abc900_a"]
    result = await check_livecodebench(fence("print('x' * (100 << 20))"), problem, runner, timeout=ROOMY_S)
    assert not result.correct and result.details["status"] == "output_too_large", result.details


async def test_expected_outputs_are_not_readable_by_the_solution(runner):
    problem = _problems()["abc900_a"]
    code = "import os\nprint(sorted(os.listdir('.')))"
    result = await check_livecodebench(fence(code), problem, runner, timeout=ROOMY_S)
    assert not result.correct
    assert "tests" not in result.details["first_failure"]["output"]


async def test_driver_memory_is_not_readable_by_the_solution(runner):
    problem = _problems()["abc900_a"]
    code = (
        "import os\ntry:\n    open(f'/proc/{os.getppid()}/mem', 'rb').close()\n    print('readable')\n"
        "except OSError as e:\n    print('denied', type(e).__name__)"
    )
    result = await check_livecodebench(fence(code), problem, runner, timeout=ROOMY_S)
    assert result.details["first_failure"]["output"].startswith("denied"), result.details


async def test_explicit_tests_override(runner):
    problem = _problems()["abc900_a"]
    tests = [LCBTest("2 2\n", "4\n", "stdin")]
    result = await check_livecodebench(fence(STDIN_OK), problem, runner, tests=tests, timeout=ROOMY_S)
    assert result.correct and result.details["n_tests"] == 1


def test_driver_ships_with_what_it_imports():
    import ast
    import sys

    from scorers.code_lcb import driver_files

    files = driver_files()
    tree = ast.parse(files["lcb_driver.py"])
    top = {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    top |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    shipped = {name[:-3] for name in files}
    outside = {m for m in top if m.split(".")[0] not in sys.stdlib_module_names and m not in shipped}
    assert outside == {"scorers.verdict_channel"}  # only the harness-side fallback import


# ---------------------------------------------------------------- end to end through Inspect


@pytest.mark.slow
def test_livecodebench_runs_in_inspect_through_the_bwrap_sandbox(runner, tmp_path, monkeypatch):
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage
    from inspect_ai.solver import Generate, TaskState, solver

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    answers = {"abc900_a": STDIN_OK, "3501": PAIR_OK}

    @solver
    def known_answer(correct: bool):
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            code = answers[str(state.sample_id)] if correct else "print(42)"
            state.output = ModelOutput.from_content("mockllm/model", fence(code))
            state.output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
            return state

        return solve

    for correct, expected in ((True, 1.0), (False, 0.0)):
        task = lcb_task.livecodebench(data_file=str(SAMPLE), start_date="2024-08-01", end_date="2024-12-31")
        [log] = inspect_eval(
            task, model="mockllm/model", solver=known_answer(correct),
            log_dir=str(tmp_path / "logs"), display="none",
        )  # fmt: skip
        assert log.status == "success", log.error
        assert log.eval.sandbox.type == "bwrap"
        assert log.results.scores[0].metrics["accuracy"].value == expected
        assert len(log.samples) == 2
