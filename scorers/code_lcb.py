"""LiveCodeBench code generation: problem records and the pure check (no Inspect import).

Grading mirrors the official harness rule by rule, at LiveCodeBench/LiveCodeBench commit
28fef95ea8c9f7a547c8329f2cd3d32b92c1fa24 (the leaderboard's upstream; the PyPI
`nvidia-livecodebench` 26.3 carries the older testing_util.py of 15808c7, without the
`sys.stdin.buffer` mock): code from `extract_code` below (lines between the last two
lines containing ```); all public + private tests; per-test limit 6 s; global limit
(timeout + 1) * n_tests + 5 s; the first failure stops the run. The per-test judging runs
inside the sandbox (scorers/lcb_driver.py documents each rule: program assembly, stdin
mocks, reliability guard, one grading process per problem); this module only prepares
the request and reads the verdict.

Private tests are stored in the dataset as base64(zlib(pickle(json string))).
`pickle.loads` on downloaded data can execute arbitrary code, so we never call it:
`unpickle_str` walks the pickle opcodes with `pickletools.genops` (a parser that
executes nothing) and accepts only the opcodes a pickled `str` consists of.
"""

from __future__ import annotations

import base64
import json
import pickletools
import secrets
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from sandboxes.runner import CodeRunner
from scorers.code_extract import CodeCheckResult, tagged_line
from scorers.lcb_driver import RUNTIME_ERROR, compare_functional, compare_stdio, global_limit
from scorers.verdict_channel import TRUSTED_PYTHON

_HERE = Path(__file__).parent
DRIVER_FILES = ("lcb_driver.py", "verdict_channel.py")
SANDBOX_SLACK = 10.0  # sandbox start and the driver's own work, on top of the official limit
DEFAULT_TIMEOUT = 6.0
MAX_DECOMPRESSED_BYTES = 1 << 30  # refuse zlib bombs beyond 1 GiB of tests per problem

# opcodes of `pickle.dumps(some_str, protocol=0..5)`; anything else is refused
_STR_PICKLE_OPCODES = frozenset(
    {"PROTO", "FRAME", "SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE",
     "MEMOIZE", "PUT", "BINPUT", "LONG_BINPUT", "STOP"}
)  # fmt: skip


class UnsafePickleError(ValueError):
    """A pickle that is not exactly one plain string (it could run code if loaded)."""


def unpickle_str(data: bytes) -> str:
    """The str inside a pickle of a single str, WITHOUT unpickling (no code can run)."""
    try:
        ops = list(pickletools.genops(data))  # parses only; executes nothing
    except Exception as ex:  # truncated / malformed stream
        raise UnsafePickleError(f"malformed pickle: {ex}") from ex
    bad = sorted({op.name for op, _, _ in ops} - _STR_PICKLE_OPCODES)
    if bad:
        raise UnsafePickleError(f"pickle opcode(s) {', '.join(bad)} not allowed (only a plain str is)")
    strings = [arg for op, arg, _ in ops if op.name in {"SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE"}]
    if len(strings) > 1:
        raise UnsafePickleError("pickle holds more than one string")
    value = strings[0] if strings else None
    if value is None:
        raise UnsafePickleError("pickle holds no string")
    return value


def _bounded_decompress(data: bytes, limit: int) -> bytes:
    d = zlib.decompressobj()
    out = d.decompress(data, limit + 1)
    if len(out) > limit or d.unconsumed_tail:
        raise ValueError(f"private tests decompress to more than {limit} bytes")
    return out


def decode_private_tests(raw: str | list | None, max_bytes: int = MAX_DECOMPRESSED_BYTES) -> list[dict[str, Any]]:
    """Private test cases: a JSON list (early releases) or base64(zlib(pickle(json)))."""
    if raw is None or raw == "":
        return []
    if isinstance(raw, list):
        return raw
    try:
        value = json.loads(raw)
        if isinstance(value, list):
            return value
    except json.JSONDecodeError:
        pass
    packed = _bounded_decompress(base64.b64decode(raw.encode("ascii"), validate=False), max_bytes)
    value = json.loads(unpickle_str(packed))
    if not isinstance(value, list):
        raise ValueError("private test cases do not decode to a list")
    return value


def encode_private_tests(tests: Sequence[Mapping[str, Any]]) -> str:
    """The dataset's encoding (for fixtures and tests): base64(zlib(pickle(json)))."""
    import pickle

    return base64.b64encode(zlib.compress(pickle.dumps(json.dumps(list(tests))))).decode("ascii")


# --------------------------------------------------------------------------- problems


@dataclass(frozen=True)
class LCBTest:
    input: str
    output: str
    testtype: str  # "stdin" | "functional"


@dataclass(frozen=True)
class LCBProblem:
    """One code_generation_lite record; private tests are decoded lazily (`tests()`)."""

    question_id: str
    question_title: str
    question_content: str
    platform: str
    contest_id: str
    contest_date: str  # ISO datetime as in the dataset
    starter_code: str
    difficulty: str
    public_tests: tuple[LCBTest, ...]
    private_tests_raw: str | list | None = None
    func_name: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    @property
    def testtype(self) -> str:
        return "functional" if self.func_name else "stdin"

    @property
    def date(self) -> date:
        return parse_date(self.contest_date)

    def private_tests(self) -> list[LCBTest]:
        return [_test(t) for t in decode_private_tests(self.private_tests_raw)]

    def tests(self) -> list[LCBTest]:
        """Public then private tests (official order)."""
        return list(self.public_tests) + self.private_tests()


def _test(t: Mapping[str, Any]) -> LCBTest:
    return LCBTest(str(t["input"]), str(t["output"]), str(t.get("testtype", "stdin")))


def _json_field(value: Any, default: Any) -> Any:
    if value is None or value == "":
        return default
    return json.loads(value) if isinstance(value, str) else value


def problem_from_record(record: Mapping[str, Any]) -> LCBProblem:
    """A code_generation_lite row (hub or jsonl file) -> LCBProblem."""
    metadata = _json_field(record.get("metadata"), {})
    public = tuple(_test(t) for t in _json_field(record.get("public_test_cases"), []))
    contest_date = record.get("contest_date", "")
    if isinstance(contest_date, datetime | date):
        contest_date = contest_date.isoformat()
    return LCBProblem(
        question_id=str(record["question_id"]),
        question_title=str(record.get("question_title", "")),
        question_content=str(record["question_content"]),
        platform=str(record.get("platform", "")),
        contest_id=str(record.get("contest_id", "")),
        contest_date=str(contest_date),
        starter_code=str(record.get("starter_code") or ""),
        difficulty=str(record.get("difficulty", "")),
        public_tests=public,
        private_tests_raw=record.get("private_test_cases"),
        func_name=metadata.get("func_name") or None,
        metadata=metadata,
    )


def parse_date(value: str | date) -> date:
    """'2024-08-01', '2024-08-01T00:00:00' (dataset) or a date -> date."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    return datetime.fromisoformat(str(value).strip().replace("Z", "+00:00")).date()


def in_date_window(problem: LCBProblem, start: str | date | None, end: str | date | None) -> bool:
    """start <= contest_date <= end (both inclusive, by calendar day; None = open)."""
    d = problem.date
    if start is not None and d < parse_date(start):
        return False
    return not (end is not None and d > parse_date(end))


# --------------------------------------------------------------------------- problem tables
# The scorer finds a sample's problem here (by question_id), so private tests
# (megabytes per problem) stay out of sample metadata and therefore out of logs.

_TABLES: dict[str, dict[str, LCBProblem]] = {}


def register_problems(key: str, problems: Sequence[LCBProblem]) -> str:
    """Make `problems` findable by the scorer under `key`; returns the key."""
    _TABLES[key] = {p.question_id: p for p in problems}
    return key


def lookup_problem(question_id: str, key: str | None = None, metadata: Mapping[str, Any] | None = None) -> LCBProblem:
    """The registered problem (table `key`, or any table), else one rebuilt from
    `metadata["lcb_record"]` (a full dataset row, for small custom datasets)."""
    tables = [_TABLES[key]] if key is not None and key in _TABLES else list(_TABLES.values())
    for table in reversed(tables):
        if question_id in table:
            return table[question_id]
    record = (metadata or {}).get("lcb_record")
    if record:
        return problem_from_record(record)
    raise KeyError(
        f"LiveCodeBench problem {question_id!r} is not registered (table {key!r}); "
        "build the dataset with tasks/livecodebench.py or put the row in metadata['lcb_record']"
    )


# --------------------------------------------------------------------------- check


def global_timeout(n_tests: int, timeout: float = DEFAULT_TIMEOUT) -> float:
    """Official whole-problem limit: (timeout + 1) * n_tests + 5 seconds."""
    return global_limit(n_tests, timeout)


def extract_code(completion: str | None) -> str:
    """Official `extract_code` for chat models: the lines strictly between the LAST TWO
    lines that contain ``` anywhere (any info string, any indentation kept as is);
    "" when fewer than two such lines exist."""
    lines = (completion or "").split("\n")
    marks = [i for i, line in enumerate(lines) if "```" in line]
    if len(marks) < 2:
        return ""
    return "\n".join(lines[marks[-2] + 1 : marks[-1]])


def driver_files() -> dict[str, str]:
    return {name: (_HERE / name).read_text(encoding="utf-8") for name in DRIVER_FILES}


def build_request(problem: LCBProblem, tests: Sequence[LCBTest], timeout: float, nonce: str) -> str:
    return json.dumps({
        "nonce": nonce,
        "fn_name": problem.func_name,
        "timeout": timeout,
        "tests": [{"input": t.input, "output": t.output} for t in tests],
    })  # fmt: skip


def parse_verdict(stdout: str, nonce: str) -> dict[str, Any] | None:
    """The driver's verdict: the last line starting with our nonce (None if absent)."""
    payload = tagged_line(stdout, nonce + " ")
    if payload is None:
        return None
    try:
        verdict = json.loads(payload)
    except json.JSONDecodeError:
        return None
    return verdict if isinstance(verdict, dict) else None


def _reason(verdict: Mapping[str, Any]) -> str:
    if verdict.get("passed"):
        return f"passed {verdict.get('n_tests')} tests"
    ff = verdict.get("first_failure") or {}
    return (
        f"{verdict.get('status')} on test {ff.get('index', '?')} of {verdict.get('n_tests')}: "
        f"{ff.get('error_message', '')}"
    )


async def check_livecodebench(
    completion: str,
    problem: LCBProblem,
    runner: CodeRunner,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    tests: Sequence[LCBTest] | None = None,
) -> CodeCheckResult:
    """Pass iff the officially extracted code passes every test (public + private).

    Args:
        completion: the model's answer.
        problem: the problem (tests are decoded from it unless `tests` is given).
        runner: the sandbox executor (Inspect sandbox or direct bwrap).
        timeout: per-test limit in seconds (official 6).
        tests: override the test list (e.g. public tests only for a quick reward).
    """
    code = extract_code(completion)
    if not code.strip():  # officially an empty program fails to load: results [-4]
        return CodeCheckResult(False, code, "no code between the last two ``` lines",
                               {"status": "no_code", "passed": False, "results": [RUNTIME_ERROR]})  # fmt: skip
    all_tests = list(tests) if tests is not None else problem.tests()
    if not all_tests:
        return CodeCheckResult(False, code, "problem has no test cases", {"status": "harness_error"})
    nonce = secrets.token_hex(16)
    limit = global_timeout(len(all_tests), timeout)
    result = await runner.run(
        [*TRUSTED_PYTHON, "lcb_driver.py"],
        files={**driver_files(), "solution.py": code},
        stdin=build_request(problem, all_tests, timeout, nonce),
        timeout=limit + SANDBOX_SLACK,
    )
    verdict = parse_verdict(result.stdout, nonce)
    if verdict is None:
        details = {"status": "harness_error", "n_tests": len(all_tests), "returncode": result.returncode,
                   "timed_out": result.timed_out, "stderr": result.stderr[-1500:]}  # fmt: skip
        reason = f"no verdict from the driver (exit {result.returncode}): {result.stderr[-300:]!r}"
        return CodeCheckResult(False, code, reason, details)
    return CodeCheckResult(bool(verdict.get("passed")), code, _reason(verdict), verdict)


__all__ = [
    "DEFAULT_TIMEOUT",
    "LCBProblem",
    "LCBTest",
    "UnsafePickleError",
    "check_livecodebench",
    "compare_functional",
    "compare_stdio",
    "decode_private_tests",
    "encode_private_tests",
    "extract_code",
    "global_timeout",
    "in_date_window",
    "lookup_problem",
    "register_problems",
    "parse_date",
    "problem_from_record",
    "unpickle_str",
]
