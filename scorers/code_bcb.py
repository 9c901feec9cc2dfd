"""BigCodeBench: prompts, official-style sanitizing, and the pure check (no Inspect import).

Zhuo et al., BigCodeBench: Benchmarking Code Generation with Diverse Function Calls
and Complex Instructions, arXiv:2406.15877. Semantics follow the official harness
(bigcode-project/bigcodebench v0.2.x: `generate.py`, `sanitize.py`, `evaluate.py`,
`eval/__init__.py`), re-implemented, not copied:

* prompt: "Please provide a self-contained Python script that solves the following
  problem in a markdown code block:" then the `complete_prompt` in a fence (complete
  split) or the `instruct_prompt` as is (instruct split; it already ends with "You
  should write self-contained code starting with: ```<code_prompt>```").
* code: the last fenced block that defines the entry point, else the last fenced
  block, else (plain-code answers) the longest parsable span if it defines the entry
  point. The official extractor takes the longest syntactically valid span of lines
  of the whole answer: the same code in practice, without its quadratic search. A
  block that continues the function body (first line indented) gets
  `complete_prompt` prepended, as the official calibration did.
* sanitize (official `sanitize(code, entrypoint)`, tree-sitter there, `ast` here):
  keep every top-level import (first) and the top-level functions, classes and
  variables reachable from the entry point (first definition of a name wins); drop
  everything else (example calls, `if __name__ == "__main__":`, prints). Not parsable:
  the longest parsable span of lines (bounded search), else the code unchanged.
* program: calibrated, as on the leaderboard: `code_prompt + "\\n    pass\\n" + code`,
  so the prompt's imports and constants are there even when the answer omits them.
* run: program + "\\n" + the task's `test` executed as ONE module named `__test__`
  (with `os`, `sys`, `environ` pre-bound), in a fresh temporary working directory,
  stdin/stdout/stderr swallowed, TZ=UTC, OMP_NUM_THREADS=1; then
  `unittest.TestLoader().loadTestsFromTestCase(TestCases)` under a time limit.
  pass = no failure and no error (skips do not count). Per-task time limit: the
  official max(240 s, reference runtime) + 1; here `timeout` (default 240) + 1 for
  the suite and +2 for the whole process (the reference runtime is not measured:
  it is far below 240 s for every task).

Execution happens only in the injected `CodeRunner` (sandbox): the harness parses the
model's code with `ast` (never runs it) and runs a small trusted driver next to it.
The driver prints a JSON verdict, tagged with a per-run nonce given on stdin, on its
last stdout line. A `ModuleNotFoundError` is reported as the distinct reason
"environment: missing module X": still a fail (official semantics), but visible.
"""

from __future__ import annotations

import ast
import json
import re
import secrets
import textwrap
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from sandboxes.runner import CodeRunner, ExecResult
from scorers.code_extract import CodeCheckResult, code_blocks, tagged_line
from scorers.extract import CheckResult

SPLITS = ("complete", "instruct")
SUBSETS = ("full", "hard")
DEFAULT_TIMEOUT = 240.0  # official BIGCODEBENCH_TIMEOUT_PER_TASK

INSTRUCTION_PREFIX = (
    "Please provide a self-contained Python script that solves the following problem in a markdown code block:"
)

DRIVER_FILE = "bcb_driver.py"
SOLUTION_FILE = "bcb_solution.py"
TEST_FILE = "bcb_tests.py"
VERDICT_MARK = "@@BCB_VERDICT@@"

# values of `CodeCheckResult.details["status"]`
PASS, FAIL, ERROR, TIMEOUT = "pass", "fail", "error", "timeout"
ENVIRONMENT, SYNTAX_ERROR, NO_CODE, CRASH = "environment", "syntax_error", "no_code", "crash"
TAMPERED = "tampered"  # the solution changed the test machinery (unittest, builtins, the driver)
SANDBOX_SLACK = 3.0  # the sandbox's own limit is the driver's (timeout + 2) plus this


# --------------------------------------------------------------------------- problem


def parse_libs(value: Any) -> tuple[str, ...]:
    """The `libs` field: a list, or (on the hub) its repr "['pandas', 'numpy']"."""
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            value = [v for v in re.split(r"[\s,\[\]'\"]+", value) if v]
    if isinstance(value, str):
        value = [value]
    return tuple(str(v) for v in value)


@dataclass(frozen=True)
class BCBProblem:
    """One BigCodeBench task (the fields of the official jsonl / hub rows we use)."""

    task_id: str
    complete_prompt: str
    instruct_prompt: str
    code_prompt: str
    test: str
    entry_point: str = "task_func"
    canonical_solution: str = ""
    libs: tuple[str, ...] = field(default_factory=tuple)

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> BCBProblem:
        missing = [k for k in ("task_id", "complete_prompt", "code_prompt", "test") if not record.get(k)]
        if missing:
            raise ValueError(f"BigCodeBench record {record.get('task_id', '?')}: missing {missing}")
        return cls(
            task_id=str(record["task_id"]),
            complete_prompt=record["complete_prompt"],
            instruct_prompt=record.get("instruct_prompt") or "",
            code_prompt=record["code_prompt"],
            test=record["test"],
            entry_point=record.get("entry_point") or "task_func",
            canonical_solution=record.get("canonical_solution") or "",
            libs=parse_libs(record.get("libs")),
        )

    def to_metadata(self) -> dict[str, Any]:
        data = asdict(self)
        data["libs"] = list(self.libs)
        return data

    @classmethod
    def from_metadata(cls, metadata: dict[str, Any]) -> BCBProblem:
        return cls.from_record(metadata)

    @property
    def reference_program(self) -> str:
        """The official ground-truth program: complete_prompt + canonical_solution."""
        return self.complete_prompt + "\n" + self.canonical_solution


def check_split(split: str) -> str:
    if split not in SPLITS:
        raise ValueError(f"BigCodeBench split must be one of {SPLITS}, not {split!r}")
    return split


def check_subset(subset: str) -> str:
    if subset not in SUBSETS:
        raise ValueError(f"BigCodeBench subset must be one of {SUBSETS}, not {subset!r}")
    return subset


def build_prompt(problem: BCBProblem, split: str = "complete") -> str:
    """The official chat prompt (user turn) for a split."""
    if check_split(split) == "complete":
        return f"{INSTRUCTION_PREFIX}\n```\n{problem.complete_prompt.strip()}\n```\n"
    if not problem.instruct_prompt:
        raise ValueError(f"{problem.task_id}: no instruct_prompt for the instruct split")
    return f"{INSTRUCTION_PREFIX}\n{problem.instruct_prompt.strip()}\n"


# --------------------------------------------------------------------------- sanitize

_MAX_SPAN_PARSES = 4000  # bound on the longest-parsable-span search (each parse ~0.1-1 ms)


def _parses(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def longest_parsable_span(code: str, max_parses: int = _MAX_SPAN_PARSES) -> str | None:
    """Longest run of consecutive lines that parses (official `code_extract`), longest first.

    Returns None when nothing with code parses within the budget.
    """
    lines = code.split("\n")
    n = len(lines)
    budget = max_parses
    for length in range(n, 0, -1):
        for start in range(0, n - length + 1):
            chunk = lines[start : start + length]
            if not chunk[0].strip() or not chunk[-1].strip():
                continue  # a span with blank edges has a shorter equal twin; skip it
            budget -= 1
            if budget < 0:
                return None
            text = "\n".join(chunk)
            if _parses(text) is not None:
                return text
    return None


def _names_in(node: ast.AST) -> set[str]:
    """Identifiers a definition refers to (names, attributes, arguments), like the
    official tree-sitter dependency walk."""
    names: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            names.add(sub.id)
        elif isinstance(sub, ast.Attribute):
            names.add(sub.attr)
        elif isinstance(sub, ast.arg):
            names.add(sub.arg)
    return names


def _defined_name(node: ast.stmt) -> str | None:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return node.name
    if isinstance(node, ast.Assign):
        for target in node.targets:
            if isinstance(target, ast.Name):
                return target.id
        return None
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    return None


def _segment(lines: list[str], node: ast.stmt) -> str:
    """Source of a top-level statement, decorators included."""
    start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    start_col = 0 if start != node.lineno else node.col_offset
    end, end_col = node.end_lineno or node.lineno, node.end_col_offset
    chunk = lines[start - 1 : end]
    if len(chunk) == 1:
        return chunk[0][start_col:end_col]
    return "\n".join([chunk[0][start_col:], *chunk[1:-1], chunk[-1][:end_col]])


def sanitize(code: str, entry_point: str) -> str:
    """Official-style sanitizing (see module docstring), with `ast` instead of tree-sitter.

    Deviation: decorated top-level definitions are kept (the official tree-sitter walk
    drops them, which breaks e.g. an `@lru_cache` helper).
    """
    code = code.strip("\n")
    tree = _parses(code)
    if tree is None:
        span = longest_parsable_span(code)
        if span is None:
            return code  # the run reports the SyntaxError
        code, tree = span, _parses(span)
        assert tree is not None
    lines = code.split("\n")
    imports: list[str] = []
    definitions: list[tuple[str, ast.stmt]] = []
    seen: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            imports.append(_segment(lines, node))
            continue
        name = _defined_name(node)
        if name is None or name in seen:
            continue  # statements that define nothing are dropped; the first definition wins
        seen.add(name)
        definitions.append((name, node))
    deps = {name: _names_in(node) for name, node in definitions}
    reachable = {entry_point}
    queue = [entry_point]
    while queue:
        for dep in deps.get(queue.pop(), ()):
            if dep not in reachable:
                reachable.add(dep)
                queue.append(dep)
    kept = [_segment(lines, node) for name, node in definitions if name in reachable]
    return "\n".join(imports + kept)


def defines(code: str, name: str) -> bool:
    """True when `code` (or its longest parsable span) defines `name` at top level."""
    tree = _parses(code.strip("\n"))
    if tree is None:
        span = longest_parsable_span(code.strip("\n"), max_parses=500)
        tree = _parses(span) if span is not None else None
    if tree is None:
        return False
    return any(_defined_name(node) == name for node in tree.body)


def extract_code(completion: str | None, entry_point: str, *, raw_fallback: bool = True) -> tuple[str | None, str]:
    """The answer's code and where it came from.

    * the last fenced block that defines the entry point ("block"), so a trailing
      usage-example block does not replace the solution (the official extractor takes
      the longest parsable span, which is the solution there too);
    * else the last fenced block ("last_block"; may be a body-only continuation);
    * no block at all: with `raw_fallback`, the longest parsable span of the raw
      answer if it defines the entry point ("raw", as the official extractor does);
    * else (None, "none"). A truncated last block (no closing fence) counts.
    """
    blocks = [b.code for b in code_blocks(completion, allow_unclosed=True) if b.code.strip()]
    for code in reversed(blocks):
        if defines(code, entry_point):
            return code, "block"
    if blocks:
        return blocks[-1], "last_block"
    if raw_fallback and completion and completion.strip():
        span = longest_parsable_span(completion.strip("\n"))
        if span is not None and defines(span, entry_point):
            return span, "raw"
    return None, "none"


def is_body_continuation(code: str) -> bool:
    """True when the first code line is indented: the model continued the function body."""
    for line in code.split("\n"):
        if line.strip():
            return line[:1] in (" ", "\t")
    return False


def build_program(code: str, problem: BCBProblem, calibrate: bool = True) -> str:
    """The solution module from the answer's code block (before the task's tests)."""
    if is_body_continuation(code) and _parses(code.strip("\n")) is None:
        dedented = textwrap.dedent(code)
        if defines(dedented, problem.entry_point):  # a whole solution, indented
            code = dedented
        else:  # a body-only continuation: official calibration prepends the prompt
            code = problem.complete_prompt + code
    body = sanitize(code, problem.entry_point)
    if calibrate:
        return problem.code_prompt + "\n    pass\n" + body
    return body


# --------------------------------------------------------------------------- driver

# The trusted driver that runs inside the sandbox (scorers/bcb_driver.py, with the
# shared scorers/verdict_channel.py): a non-dumpable parent holding the nonce, the
# tests in a child that reports each test through a pipe; see its docstring.
_HERE = Path(__file__).parent
DRIVER_FILES = {name: (_HERE / name).read_text(encoding="utf-8") for name in (DRIVER_FILE, "verdict_channel.py")}


def driver_files(program: str, test: str) -> dict[str, str]:
    """The three files a run needs: our driver, the solution module, the task's tests."""
    return {**DRIVER_FILES, SOLUTION_FILE: program, TEST_FILE: test}


def driver_command(timeout: float, python: str = "python3") -> list[str]:
    """Suite time limit = timeout + 1 (official); the process gets one second more."""
    return [python, DRIVER_FILE, f"{timeout + 1:g}"]


def parse_verdict(stdout: str, nonce: str | None = None) -> dict[str, Any] | None:
    """The driver's verdict: the LAST line starting with the mark, with the right nonce."""
    payload = tagged_line(stdout, VERDICT_MARK)
    if payload is None:
        return None
    try:
        verdict = json.loads(payload)
    except json.JSONDecodeError:
        return None
    if not isinstance(verdict, dict) or (nonce is not None and verdict.get("nonce") != nonce):
        return None
    return verdict


# --------------------------------------------------------------------------- check


def _result(
    correct: bool, program: str | None, reason: str, status: str, details: dict[str, Any] | None = None
) -> CodeCheckResult:
    """A CodeCheckResult whose `details["status"]` is one of the module's status values."""
    return CodeCheckResult(correct, program, reason, {**(details or {}), "status": status})


def is_environment_failure(result: CheckResult) -> bool:
    """True when the answer failed because the sandbox lacks a module (not the code's fault)."""
    return getattr(result, "details", {}).get("status") == ENVIRONMENT


def _top_module(name: str) -> str:
    return name.split(".")[0]


def missing_module_reason(module: str, problem: BCBProblem) -> str:
    """ "environment: missing module X", noting when X is not one of the task's libraries."""
    top = _top_module(module)
    in_tests = re.search(rf"^\s*(?:import|from)\s+{re.escape(top)}\b", problem.test, re.MULTILINE)
    expected = top in {_top_module(lib) for lib in problem.libs} or in_tests is not None
    reason = f"environment: missing module {module}"
    if not expected:
        reason += " (not among the task's libraries: possibly the answer's own import)"
    return reason + " - install it in the sandbox image (sandboxes/docker) to score this task"


def verdict_to_result(
    verdict: dict[str, Any] | None,
    run: ExecResult,
    problem: BCBProblem,
    program: str,
    timeout: float,
) -> CodeCheckResult:
    """Map the driver's verdict (or its absence) onto a CodeCheckResult."""
    details: dict[str, Any] = {"returncode": run.returncode, "timeout_s": timeout}
    if verdict is None:
        details.update(stderr_tail=run.stderr[-1500:], timed_out=run.timed_out)
        if run.timed_out:
            return _result(False, program, f"time-out: no verdict within {timeout + 2 + SANDBOX_SLACK:g} s", TIMEOUT, details)
        m = re.search(r"ModuleNotFoundError: No module named '([^']+)'", run.stderr)
        if m:  # the process died before the driver could report (should not happen)
            details["missing_module"] = m.group(1)
            return _result(False, program, missing_module_reason(m.group(1), problem), ENVIRONMENT, details)
        last = (run.stderr.strip().splitlines() or [""])[-1][:300]
        why = "output limit exceeded" if run.output_truncated else f"exit code {run.returncode}"
        return _result(False, program, f"crash: no verdict from the test driver ({why}) {last}".rstrip(),
                       CRASH, details)  # fmt: skip
    for key in ("stage", "tests_run", "failures", "errors", "skipped", "failing_tests", "first_failure",
                "missing_module", "timed_out", "exception", "exception_type", "duration_s", "integrity"):  # fmt: skip
        details[key] = verdict.get(key)
    if verdict.get("integrity"):
        shown = "; ".join(str(i) for i in verdict["integrity"][:5])
        return _result(False, program, f"tampered: the answer changed the test machinery ({shown})", TAMPERED, details)
    failures, errors = verdict.get("failures") or 0, verdict.get("errors") or 0
    tests_run = verdict.get("tests_run") or 0
    if verdict.get("missing_module"):
        return _result(False, program, missing_module_reason(verdict["missing_module"], problem),
                       ENVIRONMENT, details)  # fmt: skip
    if verdict.get("timed_out"):
        return _result(False, program, f"time-out: the tests ran past {timeout + 1:g} s", TIMEOUT, details)
    if verdict.get("exception_type") == "Crash":  # the test process ended without its report
        return _result(False, program, f"crash: {verdict.get('exception')}", CRASH, details)
    if verdict.get("exception"):  # the module did not load (or the run itself died)
        syntax = verdict.get("exception_type") in ("SyntaxError", "IndentationError", "TabError")
        return _result(False, program, f"{verdict.get('stage')} error: {verdict['exception']}",
                       SYNTAX_ERROR if syntax else ERROR, details)  # fmt: skip
    if failures == 0 and errors == 0:
        return _result(True, program, f"passed: {tests_run} tests, no failure or error", PASS, details)
    summary = f"{failures} failed, {errors} errors of {tests_run} tests"
    first = (verdict.get("first_failure") or "").strip().splitlines()
    if first:
        summary += f"; first: {first[0]}" + (f" ... {first[-1]}" if len(first) > 1 else "")
    return _result(False, program, summary, FAIL if failures else ERROR, details)


async def check_bigcodebench(
    completion: str,
    problem: BCBProblem,
    runner: CodeRunner,
    timeout: float = DEFAULT_TIMEOUT,
    *,
    calibrate: bool = True,
    raw_fallback: bool = True,
    python: str = "python3",
) -> CodeCheckResult:
    """Score one answer: last code block -> program -> task's unittest TestCases, in `runner`.

    Args:
        completion: the model's full answer.
        problem: the task.
        runner: where the code runs (bwrap or an Inspect sandbox); never this process.
        timeout: per-task limit in seconds (official default 240); the suite gets
            timeout + 1, the whole test process timeout + 2 (official).
        calibrate: prepend `code_prompt + "\\n    pass\\n"` (official leaderboard mode).
        raw_fallback: with no fenced block, take plain code that defines the entry point.
        python: the interpreter command inside the sandbox.
    """
    code, origin = extract_code(completion, problem.entry_point, raw_fallback=raw_fallback)
    if code is None:
        return _result(False, None, "no code block in the answer", NO_CODE, {"code_from": origin})
    program = build_program(code, problem, calibrate=calibrate)
    nonce = secrets.token_hex(16)
    run = await runner.run(
        driver_command(timeout, python),
        files=driver_files(program, problem.test),
        stdin=nonce + "\n",
        timeout=timeout + 2 + SANDBOX_SLACK,
    )
    result = verdict_to_result(parse_verdict(run.stdout, nonce), run, problem, program, timeout)
    result.details["code_from"] = origin
    return result
