"""Model output cannot crash or stall a parse (issue 20): pathological nesting through every
entry point that parses model output, BigCodeBench `sanitize` on large unparsable answers,
and an Inspect eval in which every sample is scored."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from scripted import scripted
from waits import ROOMY_S

import training.rewards
from sandboxes.runner import ExecResult
from scorers import bcb_sanitize, code_bcb
from scorers.checks import check_choice, check_math, check_numeric
from scorers.code_bcb import BCBProblem, check_bigcodebench, extract_code
from scorers.code_humaneval import check_humaneval, defines_function, problem_from_record
from scorers.math_equiv import MAX_NESTING
from scorers.safe_parse import SYNTAX_ERROR, TOO_DEEP, TOO_LONG, ParseFailure, safe_parse
from solvers.executor import Worker
from solvers.workflow import parse_workflow
from training.rewards import ConductorReward
from workers.pools import ModelSpec, PoolSpec

FIXTURES = Path(__file__).parents[1] / "fixtures"
HUMANEVAL = FIXTURES / "humaneval_sample.jsonl"
BCB = BCBProblem.from_record(json.loads((FIXTURES / "bcb_sample.jsonl").read_text().splitlines()[0]))

# each raises RecursionError or MemoryError (not SyntaxError) in CPython 3.11's ast.parse
BOMBS = {
    "unary minus": "-" * 5000 + "1",
    "not": "not " * 3000 + "x",
    "lambdas": "lambda:" * 3000 + "1",
    "powers": "2**" * 5000 + "2",
    "mixed unary": "-+~" * 2000 + "1",
    "attribute chain": "a" + ".b" * 5000,
}


def _records() -> dict[str, dict]:
    return {r["task_id"]: r for r in map(json.loads, HUMANEVAL.read_text().splitlines())}


# ---------------------------------------------------------------- the shared helper


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_safe_parse_names_too_deep_nesting(name):
    failure = safe_parse(BOMBS[name])
    assert isinstance(failure, ParseFailure) and failure.reason == TOO_DEEP, failure
    assert "nested too deeply" in str(failure)


def test_safe_parse_names_syntax_errors_and_refuses_huge_sources():
    failure = safe_parse("x = 1\ndef f(:\n")
    assert isinstance(failure, ParseFailure) and failure.reason == SYNTAX_ERROR and failure.lineno == 2
    huge = safe_parse("x = 1\n" * 100_000)
    assert isinstance(huge, ParseFailure) and huge.reason == TOO_LONG and "limit" in huge.message
    assert safe_parse("x = [1]").body  # a tree when it parses


# ---------------------------------------------------------------- HumanEval (crashed before)


class _NoVerdict:
    """A runner whose program printed nothing (the sandbox's own verdict is not the point)."""

    async def run(self, cmd, files=None, stdin=None, timeout=None):
        return ExecResult(returncode=1, stdout="", stderr="MemoryError", timed_out=False)


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_humaneval_check_scores_a_parse_bomb_zero(name):
    problem = problem_from_record(_records()["HumanEval/53"])
    assert defines_function(BOMBS[name], problem.entry_point) is False
    result = asyncio.run(check_humaneval(f"```python\n{BOMBS[name]}\n```", problem, _NoVerdict()))
    assert not result.correct and result.details["mode"] == "continuation" and result.reason


def test_humaneval_eval_scores_every_sample_of_a_parse_bomb(runner, tmp_path):
    """Through Inspect and the bwrap sandbox: one bomb, one correct answer, both scored."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage
    from inspect_ai.solver import Generate, TaskState, solver

    from tasks import humaneval as he_task

    records = _records()
    first = sorted(records)[0]

    @solver
    def answer():
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            r = records[str(state.sample_id)]
            code = BOMBS["unary minus"] if state.sample_id == first else r["prompt"] + r["canonical_solution"]
            state.output = ModelOutput.from_content("mockllm/model", f"```python\n{code}\n```")
            state.output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
            return state

        return solve

    task = he_task.humaneval(data_file=str(HUMANEVAL), timeout=ROOMY_S)
    [log] = inspect_eval(
        task, model="mockllm/model", solver=answer(), limit=2, log_dir=str(tmp_path / "logs"), display="none"
    )
    assert log.status == "success", log.error
    assert len(log.samples) == 2 and all(s.scores for s in log.samples)
    scores = {s.id: next(iter(s.scores.values())) for s in log.samples}
    assert scores[first].value == "I" and scores[first].explanation
    assert log.results.scores[0].metrics["accuracy"].value == 0.5


# ---------------------------------------------------------------- math (stalled before)


@pytest.mark.parametrize("bracket", ["{}", "()", "[]"])
def test_math_refuses_deep_nesting_before_math_verify(bracket):
    answer = bracket[0] * 40 + "1" + bracket[1] * 40  # math-verify: seconds, up to its 5 s timeout
    result = check_math(f"ANSWER: {answer}", "1")
    assert not result.correct and "nests brackets 40 deep" in result.reason and str(MAX_NESTING) in result.reason


def test_math_nesting_limit_follows_a_deeper_reference():
    deep = "{" * (MAX_NESTING + 1) + "1" + "}" * (MAX_NESTING + 1)
    assert "deep" not in check_math(f"ANSWER: {deep}", deep).reason


@pytest.mark.parametrize("check", [check_choice, check_math, check_numeric], ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", sorted(BOMBS))
def test_answer_checks_survive_parse_bombs(check, name):
    """Regression guard (these never crashed): the checks read answers without `ast`."""
    result = check(f"ANSWER: {BOMBS[name][:590]}", "1")
    assert not result.correct and result.reason


# ---------------------------------------------------------------- workflow parser and reward


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_workflow_parser_rejects_a_parse_bomb_by_name(name):
    completion = f"model_id = {BOMBS[name]}\nsubtasks = ['Solve it.']\naccess_list = [[]]"
    result = parse_workflow(completion, range(3))
    assert not result.ok and result.reason == "not_literal"
    assert "nested too deeply" in result.error.message


POOL = PoolSpec(name="bombs", workers=(ModelSpec("mockllm/w0", description="member 0"),))


def test_reward_scores_bombs_in_the_completion_and_in_a_worker_answer(monkeypatch):
    """The conductor's completion is a bomb (reward 0, named rejection); a worker's math answer
    nests 40 deep (a wrong answer in well under math-verify's time-out, not a stalled step)."""
    worker = scripted("ANSWER: " + "{" * 40 + "1" + "}" * 40)
    monkeypatch.setattr(training.rewards, "pool_workers", lambda pool, *a: [Worker(worker, "mockllm/w0")])
    one_step = 'model_id = [0]\nsubtasks = ["Solve it."]\naccess_list = [[]]'
    row = {"question": "1?", "target": "1", "check": "math", "choices": None, "pool_indices": [0],
           "domain": "math", "item_id": "q"}  # fmt: skip
    reward = ConductorReward(POOL)
    rollouts = asyncio.run(reward.score([f"model_id = {BOMBS['lambdas']}", one_step], [row, row]))
    bomb, deep = rollouts
    assert bomb.reward == 0.0 and not bomb.parsed and bomb.error is None
    assert bomb.record.rejection == "not_literal" and "nested too deeply" in bomb.record.rejection_message
    assert deep.reward == 0.5 and deep.parsed and "nests brackets" in deep.check_reason


# ---------------------------------------------------------------- BigCodeBench sanitize (slow before)


def _code(n: int, broken_at: int) -> str:
    lines = [f"v{i} = [{i}, {i + 1}, 'padding the line to forty chars']" for i in range(n)]
    lines[broken_at] = "def broken(:"
    return "\n".join(lines)


_SOLUTION = "```python\nimport os\ndef task_func(x):\n    return os.path.join(x, 'a')\n```\n"
SLOW_ANSWERS = {  # each took 0.9-3.5 s before (2 shared cores)
    "90 kB, broken in the middle": "Prose.\n```python\n" + _code(2500, 1250) + "\n```\n" + "More. " * 200 + _SOLUTION,
    "20 kB, broken in the middle": _code(550, 275),
    "indented lines": "\n".join(f"    x{i} = {i}" for i in range(4000)) + "\n" + _SOLUTION,
    "decorators": "\n".join(f"@dec{i}" for i in range(3000)) + "\n" + _SOLUTION,
    "unclosed bracket": "x = (\n" + "\n".join(f"  {i}," for i in range(10_000)) + "\n" + _SOLUTION,
}


@pytest.mark.parametrize("name", sorted(SLOW_ANSWERS))
def test_bcb_extraction_of_a_large_unparsable_answer_parses_a_bounded_amount(name, monkeypatch):
    """The work of the span search is bounded in what it hands the parser (characters and
    parses), whatever the answer; its speed is measured in benchmarks/bench_parse.py."""
    spent = {"chars": 0, "parses": 0}

    def counted(source, *args, **kwargs):
        spent["chars"] += len(source)
        spent["parses"] += 1
        return safe_parse(source, *args, **kwargs)

    monkeypatch.setattr(bcb_sanitize, "safe_parse", counted)
    extract_code(SLOW_ANSWERS[name], BCB)
    # the search's own budget, plus one parse of the fallback block and the per-line start checks
    assert spent["chars"] <= bcb_sanitize.MAX_PARSED_CHARS + 2 * len(SLOW_ANSWERS[name])
    assert spent["parses"] <= bcb_sanitize.MAX_PARSES + len(SLOW_ANSWERS[name].splitlines()) + 2


def test_bcb_check_runs_the_span_search_off_the_event_loop(monkeypatch):
    """The span search (CPU-bound) runs in a worker thread: the event loop's thread never does it."""
    threads = []
    original = code_bcb.extract_code

    def recording(*args, **kwargs):
        threads.append(threading.current_thread())
        return original(*args, **kwargs)

    monkeypatch.setattr(code_bcb, "extract_code", recording)

    async def check_all() -> threading.Thread:
        for answer in SLOW_ANSWERS.values():
            await check_bigcodebench(answer, BCB, _NoVerdict(), 5)
        return threading.current_thread()

    loop_thread = asyncio.run(check_all())
    assert len(threads) == len(SLOW_ANSWERS) and loop_thread not in threads


def _cubic_code_extract(text: str) -> str:
    """The official `code_extract` scan (every span i..j, j > i; strictly longer wins)."""
    lines = text.split("\n")
    best, pair = 0, (0, 0)
    for i in range(len(lines)):
        for j in range(i + 1, len(lines)):
            if isinstance(safe_parse("\n".join(lines[i : j + 1])), ParseFailure):
                continue
            count = sum(1 for line in lines[i : j + 1] if line.strip())
            if count > best:
                best, pair = count, (i, j)
    return "\n".join(lines[pair[0] : pair[1] + 1])


_LINES = [
    "", "   ", "import os", "x = 1", "def f(x):", "    return x", "    y = (", "  1,", ")", "]", "x = [",
    "class A:", "    pass", "@dec", "@dec(", "if x:", "else:", "    else:", "s = '''", "'''", 'u = "', "# note",
    "    # note", "Here is the code:", "```python", "```", "f(1,", "x = 1 +", "def broken(:", "try:", "except E:",
    "print(1); y = 2", "async def g():", "    await h()", "match x:", "    case 1:", "        pass",
    BOMBS["unary minus"],
]  # fmt: skip


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_LINES), max_size=12))
def test_span_search_equals_the_cubic_scan(lines):
    text = "\n".join(lines)
    extraction = bcb_sanitize.code_extract(text)
    assume(extraction.bounded)  # several bombs exceed the parse budget (then the caller falls back)
    assert extraction.code == _cubic_code_extract(text)
