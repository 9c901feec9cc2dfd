"""BigCodeBench: prompts, official-style sanitizing, and the pure check (no Inspect import).

Zhuo et al., BigCodeBench: Benchmarking Code Generation with Diverse Function Calls
and Complex Instructions, arXiv:2406.15877. Semantics follow the official harness
(the `bigcodebench` package 0.2.5 on PyPI: `generate.py`, `sanitize.py`, `evaluate.py`,
`eval/__init__.py`), re-implemented rule by rule, not copied:

* prompt: "Please provide a self-contained Python script that solves the following
  problem in a markdown code block:" then the `complete_prompt` in a fence (complete
  split) or the `instruct_prompt` as is (instruct split; it already ends with "You
  should write self-contained code starting with: ```<code_prompt>```").
* code: the official `sanitize(answer, entry_point)` over the whole answer
  (scorers/bcb_sanitize.py, mirrored rule by rule and checked against the package):
  the longest parsable span of lines, then its imports and the definitions the entry
  point reaches. This is what the official generate-then-evaluate pipeline does, whose
  numbers the paper and the leaderboard report (bigcodebench v0.2.5, commit 9bd90fe:
  `generate.py` line 112 stores `sanitize(completion, entry_point)`); the program is
  `code_prompt + "\\n    pass\\n" + code` (`evaluate.py` lines 301-302, its default
  `calibrated=True`), so the prompt's imports are there even when the answer omits them.
  `calibrate=True` adds the separate `bigcodebench.sanitize --calibrate` script's rule
  (`sanitize.py` lines 214-215): a fenced body-only answer ("```python" then an
  indented line) gets the `complete_prompt` inserted first.
* run (scorers/bcb_driver.py): the official `safe_environment` and
  `reliability_guard`, then program + "\\n" + the task's `test` executed as ONE module
  `__test__` (with `os`, `sys`, `environ`), in a fresh temporary directory, I/O
  swallowed; `unittest.TestLoader().loadTestsFromTestCase(TestCases)` under a time
  limit. pass = it loads and the run has no failure and no error (skips pass, as
  officially, unless the solution raised them). Per-task limit: official
  max(240 s, reference runtime) + 1; here `timeout` (default 240) + 1 for the suite
  and + 2 for the test process (reference runtimes are far below 240 s).

Execution happens only in the injected `CodeRunner` (sandbox): the harness parses the
model's code with `ast` (never runs it). The verdict comes from the driver's trusted
parent process, tagged with a nonce only it holds, on its last stdout line. Where the task
allows (`shared_reason` is None) the tests run in a process that never loads the answer and
calls it in another, values crossing as plain data (scorers/bcb_split.py); otherwise they run
in the answer's process, watched for tampering (see scorers/bcb_driver.py for what is checked
and the residual risk). A `ModuleNotFoundError` is reported as the distinct reason
"environment: missing module X": still a fail (official semantics), but visible.
"""

from __future__ import annotations

import ast
import asyncio
import json
import re
import secrets
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from sandboxes.runner import CodeRunner, ExecResult
from scorers.bcb_library_flow import library_objects_crossing, name_chain
from scorers.bcb_mocks import patch_targets
from scorers.bcb_sanitize import sanitize
from scorers.bcb_split import top_imports
from scorers.code_extract import CodeCheckResult, code_blocks, tagged_line
from scorers.extract import CheckResult
from scorers.verdict_channel import TRUSTED_PYTHON

SPLITS = ("complete", "instruct")
SUBSETS = ("full", "hard")
DEFAULT_TIMEOUT = 240.0  # official BIGCODEBENCH_TIMEOUT_PER_TASK

# official `--response_prefix` default of generate.py (0.2.5), followed by an opened fence
RESPONSE_PREFILL = (
    "Below is a Python script with a self-contained function that solves the problem and passes "
    "corresponding tests:\n```python\n"
)

INSTRUCTION_PREFIX = (
    "Please provide a self-contained Python script that solves the following problem in a markdown code block:"
)

DRIVER_FILE = "bcb_driver.py"
SOLUTION_FILE = "bcb_solution.py"
TEST_FILE = "bcb_tests.py"
PROMPT_FILE = "bcb_prompt.py"
IMPORTS_FILE = "bcb_imports.py"
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


def calibrate_answer(completion: str, problem: BCBProblem) -> str:
    """Official `sanitize --calibrate` (a separate script, not the generate pipeline): a
    fenced body-only answer ("```python" then an indented line) gets the `complete_prompt`
    inserted, so it continues the function."""
    return completion.replace("```python\n    ", "```python\n" + problem.complete_prompt + "    ")


def _fallback_code(answer: str, entry_point: str) -> str:
    """For answers too long for the bounded span search: the last fenced block that
    defines the entry point (else the last block), sanitized."""
    blocks = [b.code for b in code_blocks(answer, allow_unclosed=True) if b.code.strip()]
    for code in reversed(blocks):
        if f"def {entry_point}" in code:
            return sanitize(code, entry_point).code
    return sanitize(blocks[-1], entry_point).code if blocks else ""


def extract_code(completion: str | None, problem: BCBProblem, *, calibrate: bool = False) -> tuple[str, str]:
    """The solution code of an answer and how it was found ("sanitize" or "fallback").

    Official generate pipeline: `sanitize(answer, entry_point)` over the WHOLE answer
    (scorers/bcb_sanitize.py); `calibrate` first applies `calibrate_answer`."""
    answer = completion or ""
    if calibrate:
        answer = calibrate_answer(answer, problem)
    extraction = sanitize(answer, problem.entry_point)
    if extraction.bounded:
        return extraction.code, "sanitize"
    return _fallback_code(answer, problem.entry_point), "fallback"


def build_program(code: str, problem: BCBProblem) -> str:
    """The solution module (before the task's tests): official `evaluate` (default
    `calibrated=True`) prepends `code_prompt + "\\n    pass\\n"`, so the prompt's imports are there."""
    return problem.code_prompt + "\n    pass\n" + code


# --------------------------------------------------------------------------- driver

# The trusted driver that runs inside the sandbox (scorers/bcb_driver.py, with the
# shared scorers/verdict_channel.py): a non-dumpable parent holding the nonce, the
# tests in a child that reports each test through a pipe; see its docstring.
_HERE = Path(__file__).parent
DRIVER_FILES = {
    name: (_HERE / name).read_text(encoding="utf-8")
    for name in (DRIVER_FILE, "verdict_channel.py", "bcb_split.py", "bcb_values.py", "bcb_figures.py", "bcb_mocks.py")
}


def driver_files(program: str, test: str, split_from: BCBProblem | None = None) -> dict[str, str]:
    """The files a run needs: our driver, the solution module, the task's tests and, for the
    split mode (`split_from`: the task), its prompt and its reference program's imports (the
    test process's module starts with them, as the official one starts with the answer)."""
    files = {**DRIVER_FILES, SOLUTION_FILE: program, TEST_FILE: test}
    if split_from is not None:
        files[PROMPT_FILE] = split_from.code_prompt
        files[IMPORTS_FILE] = top_imports(split_from.reference_program if split_from.canonical_solution else "")
    return files


def driver_command(
    timeout: float, python: str = "python3", allowed: frozenset[str] = frozenset(), entry_point: str | None = None
) -> list[str]:
    """Suite time limit = timeout + 1 (official); the process gets one second more. The
    trusted parent runs isolated (`TRUSTED_PYTHON`'s flags). `allowed`: the capabilities the
    task needs that the driver otherwise refuses to the answer (`capabilities`). `entry_point`:
    run the tests apart from the answer, calling it there (`shared_reason` is None)."""
    command = [python, *TRUSTED_PYTHON[1:], DRIVER_FILE, f"{timeout + 1:g}"]
    if entry_point:
        return command + [",".join(sorted(allowed)), f"split:{entry_point}"]
    return command + [",".join(sorted(allowed))] if allowed else command


# What in a task's test source or reference makes its tests need the answer's own objects in their
# process (read from the task, never from the answer): patching what the answer's code calls, seaborn's
# grids (they hold data frames whose pickles need more than the figures' allow-list), log records, and
# libraries whose results are objects rather than data. Matplotlib's figures cross as restricted
# pickles (scorers/bcb_figures.py), so plots alone no longer keep a task in the shared mode.
PATCHING = "patches the answer's modules"
SHARED_NAMES = {
    PATCHING: ("mock", "patch", "Mock", "MagicMock", "create_autospec", "PropertyMock"),
    "returns seaborn grids": ("pairplot", "jointplot", "catplot", "displot", "lmplot", "relplot", "clustermap",
                              "FacetGrid", "PairGrid", "JointGrid", "ClusterGrid"),
    "reads log records": ("assertLogs", "assertNoLogs", "caplog"),
}  # fmt: skip
FIGURE_PARAMETERS = ("ax", "axes", "fig", "figure")  # an entry point that draws on the tests' own figures
OBJECT_LIBRARIES = (
    "tensorflow", "keras", "torch", "PIL", "cv2", "skimage", "networkx", "statsmodels", "bs4", "lxml",
    "gensim", "wordcloud", "folium", "geopy", "shapely", "docx", "openpyxl", "xlwt", "flask", "flask_mail",
    "flask_restful", "flask_login", "flask_wtf", "wtforms", "django", "ssl", "smtplib",
    "mechanize", "pyquery", "textblob", "nltk", "librosa", "soundfile", "Crypto", "rsa", "cryptography",
    "asyncio", "http", "email", "inspect", "types", "ctypes", "wave", "sqlalchemy", "sympy", "requests",
)  # fmt: skip
# Tools a task's function uses inside itself, whose results are data (rows, paths, text, numbers, named
# tuples; `io`'s in-memory buffers cross as data): shared only where the task's sources show one of their
# objects crossing the call (scorers/bcb_library_flow.py; measured over the official tasks, docs/security.md).
TOOL_LIBRARIES = ("sqlite3", "io", "zipfile", "tarfile", "urllib", "xml", "socket", "threading", "multiprocessing",
                  "queue", "psutil")  # fmt: skip
# Not listed, as their results are data once they cross (arrays, frames, numbers, scipy's named-tuple results,
# rows of text; measured over the official tasks' references, docs/security.md): csv, and scipy and scikit-learn
# unless the tests import one of their classes, as they do to inspect an object of it (`assertIsInstance(model,
# LinearRegression)`, a `Voronoi`), or check an object against one the program imports (`CLASS_CHECKS`): such a task
# runs split only where measured (`CLASS_MEASURED`; estimators and Voronoi diagrams cross as class and state,
# scorers/bcb_values.py; other library objects, such as a forest's trees, arrive as opaque stand-ins).
CLASS_LIBRARIES = ("sklearn", "scipy")
LIBRARY_CLASSES = "the tests use library classes"
CLASS_CHECKS = ("isinstance", "issubclass", "assertIsInstance", "assertNotIsInstance")


def shared_reason(problem: BCBProblem) -> str | None:
    """Why the task's tests must run in the answer's process (None: they run apart from it,
    scorers/bcb_split.py). Read from the task only: its test source, its reference program
    (prompt and canonical solution, names and docstring words) and its libraries."""
    names: set[str] = set()
    imported = {_top_module(lib) for lib in problem.libs}
    reference = problem.reference_program if problem.canonical_solution else build_program("", problem)
    for source in (problem.test, reference):
        try:
            tree = ast.parse(source)
        except SyntaxError:
            return "the task's source does not parse"
        for node in ast.walk(tree):
            field = {ast.Name: "id", ast.Attribute: "attr", ast.alias: "name"}.get(type(node))
            if field:
                names.update(getattr(node, field).split("."))
        imported |= _imported_modules(tree)
    for why, markers in SHARED_NAMES.items():
        if names.intersection(markers) and (why != PATCHING or (why := _patching(problem))):
            return why
    if problem.task_id in OBJECT_LIBRARY_MEASURED:
        imported -= set(OBJECT_LIBRARIES)
    # a measured patching task's own objects reach the answer only as a mock's value, forwarded
    forwarded = bool(names.intersection(SHARED_NAMES[PATCHING])) and problem.task_id in PATCHING_MEASURED
    why = _shared_by_shape(problem.test, reference, problem.entry_point, forwarded) or _shared_by_libraries(
        imported, problem.test, reference, problem.entry_point
    )
    return None if why and why.startswith(LIBRARY_CLASSES) and problem.task_id in CLASS_MEASURED else why


# Official tasks whose tests use mocks (or name `patch`) that run split, their mocks forwarded: those whose reference
# solutions were measured to pass in the split mode (docs/security.md, "Patching tasks").
PATCHING_MEASURED = frozenset(
    f"BigCodeBench/{n}"
    for n in (
        "5 6 10 11 12 13 17 28 29 32 89 96 113 116 119 122 125 127 128 129 130 131 139 144 146 147 152 154 "
        "158 161 162 164 170 189 191 192 195 198 200 203 207 211 213 296 306 320 322 324 326 331 343 348 "
        "388 390 397 402 407 412 454 463 578 579 596 599 604 607 612 722 723 725 728 743 745 759 771 773 777 "
        "779 781 785 798 800 804 810 836 857 869 910 973 982 994 996 997 998 999 1000 1001 1003 1004 1007 "
        "1008 1011 1013 1014 1015 1016 1017 1028 1039 1041 1043 1052 1053 1054 1067 1068 1073 1092 1102 1104 "
        "1105 1118 1120 1121 1122 1123 1124 1125 1129 1132 1133 1134 1135 1136"
    ).split()
)


# Official tasks using libraries of `OBJECT_LIBRARIES` that run split: their references were measured to pass in the
# split mode, their values crossing as data (arrays, lists, counts; docs/security.md, "Object libraries measured").
OBJECT_LIBRARY_MEASURED = frozenset(
    f"BigCodeBench/{n}"
    for n in (
        "26 28 32 129 144 169 170 180 189 192 203 207 211 214 235 242 278 319 372 374 390 402 403 404 406 "
        "407 423 424 425 426 431 499 500 578 723 732 744 827 838 883 917 964 994 996 1003 1007 1008 1013 "
        "1014 1015 1016 1039 1067 1092 1094 1095 1096 1118 1120 1121 1123 1124 1125 1129 1133 1135 1136 1137"
    ).split()
)


# Official tasks whose tests use a class of scikit-learn or scipy that run split, the objects crossing as their
# library class and instance state (scorers/bcb_values.py, `STATE_CLASSES`): those whose references were measured to
# pass in the split mode (docs/security.md, "Library classes measured").
CLASS_MEASURED = frozenset(
    f"BigCodeBench/{n}"
    for n in (
        "29 106 294 364 422 427 440 443 445 447 589 619 752 770 774 776 837 880 885 891 903 921 1063 1088 1139"
    ).split()
)


def _patching(problem: BCBProblem) -> str | None:
    """Why the tests' patching needs the shared mode (None: their mocks stay in the test process and the
    answer's process gets forwarding stand-ins, scorers/bcb_mocks.py)."""
    why = patch_targets(problem.test)[1]
    if why is None and problem.task_id not in PATCHING_MEASURED:
        why = "not measured in the split mode"
    return f"{PATCHING} ({why})" if why else None


def _imported_modules(tree: ast.AST) -> set[str]:
    """The top-level modules a parsed source imports, anywhere in it."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(_top_module(a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(_top_module(node.module))
    return found


INTERPRETER_STATE = ("path", "modules", "argv", "meta_path")  # sys.<name> a test may read after a call


def _shared_by_shape(test: str, reference: str, entry_point: str, forwarded: bool = False) -> str | None:
    """Tests that pass objects of their own or of the task's classes (figures: the entry point takes
    an `ax`...) or read the interpreter's state; a reference that returns a generator (both sources parse:
    `shared_reason` checked). `forwarded`: the tests' own classes do not count (a measured patching task:
    their objects reach the answer only as a mock's value, forwarded; scorers/bcb_mocks.py)."""
    classes = set()
    for node in ast.walk(ast.parse(reference)):
        if isinstance(node, ast.FunctionDef) and node.name == entry_point:
            parameters = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
            if any(a.arg in FIGURE_PARAMETERS for a in parameters):
                return "draws on the test's own figures"
        if isinstance(node, ast.ClassDef) and not any("Enum" in ast.unparse(b) for b in node.bases):
            classes.add(node.name)  # enum members cross as data (BigCodeBench/466)
    if any(isinstance(n, ast.Name) and n.id in classes for n in ast.walk(ast.parse(test))):
        return "passes objects of the task's own classes"  # e.g. BigCodeBench/233: the prompt's `Object`
    tree = ast.parse(test)
    added = _only_added_to(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name != "TestCases" and not _test_case(node) and not forwarded:
            return "passes objects of the test's own classes"
        if (
            isinstance(node, ast.Attribute)
            and node.attr in INTERPRETER_STATE
            and getattr(node.value, "id", "") == "sys"
            and id(node) not in added
        ):
            return "reads the interpreter's state"
    if _returns_generator(list(ast.walk(ast.parse(reference)))):
        return "returns a generator"
    return None


def _test_case(node: ast.ClassDef) -> bool:
    """A class of tests (a `unittest.TestCase`): its objects never reach the answer (BigCodeBench/790's
    second, unrun class of tests)."""
    return any((name_chain(base) or [""])[-1] == "TestCase" for base in node.bases)


def _only_added_to(tree: ast.AST) -> set[int]:
    """The nodes a statement only adds to, reading nothing back (`sys.path.append('/mnt/data')` in a test's
    `setUp`: the answer never sees it, as it never reads it)."""
    return {
        id(node.value.func.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Attribute)
        and node.value.func.attr in ("append", "insert", "extend")
    }


def _returns_generator(nodes: list[ast.AST]) -> bool:
    """A generator function, or a generator expression a `return` gives back (in a tuple or list, or
    through a name bound to it); one consumed inside the function (`sum(x for x in ...)`,
    `pd.DataFrame([(f(n) for n in t) ...])`) is not returned."""
    if any(isinstance(n, ast.Yield | ast.YieldFrom) for n in nodes):
        return True
    bound = {t.id for n in nodes if isinstance(n, ast.Assign) and isinstance(n.value, ast.GeneratorExp)
             for t in n.targets if isinstance(t, ast.Name)}  # fmt: skip
    returned = [n.value for n in nodes if isinstance(n, ast.Return) and n.value is not None]
    while returned:
        value = returned.pop()
        if isinstance(value, ast.GeneratorExp) or isinstance(value, ast.Name) and value.id in bound:
            return True
        if isinstance(value, ast.Tuple | ast.List):
            returned.extend(value.elts)
    return False


def _shared_by_libraries(imported: set[str], test: str, reference: str, entry_point: str) -> str | None:
    libraries = sorted(imported.intersection(OBJECT_LIBRARIES))
    if libraries:
        return f"uses libraries whose values are objects ({', '.join(libraries)})"
    tools = imported.intersection(TOOL_LIBRARIES)
    crossing = tools and library_objects_crossing(test, reference, entry_point, tools)
    if crossing:
        return f"{crossing} ({', '.join(sorted(tools))})"
    tests = ast.parse(test)
    used = {  # classes the tests check an object against (`assertIsInstance(model, LinearRegression)`)
        name.id
        for node in ast.walk(tests)
        if isinstance(node, ast.Call) and (name_chain(node.func) or [""])[-1] in CLASS_CHECKS
        for argument in node.args[1:2]
        for name in ast.walk(argument)
        if isinstance(name, ast.Name)
    }
    classes = sorted(
        f"{node.module}.{alias.name}"
        for tree, own in ((tests, True), (ast.parse(reference), False))  # the program's imports reach the tests
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and _top_module(node.module or "") in CLASS_LIBRARIES
        for alias in node.names
        if alias.name[:1].isupper() and (own or (alias.asname or alias.name) in used)
    )
    return f"{LIBRARY_CLASSES} ({', '.join(classes)})" if classes else None


GUARDED_CAPABILITIES = ("ctypes",)  # refused to the answer unless its task imports them (BigCodeBench/562-565)


def capabilities(problem: BCBProblem) -> frozenset[str]:
    """The guarded capabilities this task needs: those its libraries, prompt or tests import
    (read from the task, never from the answer)."""
    imported = {_top_module(lib) for lib in problem.libs}
    for source in (problem.code_prompt, problem.test):
        imported |= set(re.findall(r"^\s*(?:import|from)\s+([A-Za-z_]\w*)", source, re.MULTILINE))
    return frozenset(c for c in GUARDED_CAPABILITIES if c in imported)


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
            why = f"time-out: no verdict within {timeout + 2 + SANDBOX_SLACK:g} s"
            return _result(False, program, why, TIMEOUT, details)
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
    calibrate: bool = False,
    python: str = "python3",
    split: bool | None = None,
) -> CodeCheckResult:
    """Score one answer: sanitize -> program -> task's unittest TestCases, in `runner`.

    Args:
        completion: the model's full answer.
        problem: the task.
        runner: where the code runs (bwrap or an Inspect sandbox); never this process.
        timeout: per-task limit in seconds (official default 240); the suite gets
            timeout + 1, the whole test process timeout + 2 (official).
        calibrate: also apply the `sanitize --calibrate` script's rule (the prompt
            inserted into a fenced body-only answer); off in the official pipeline.
        python: the interpreter command inside the sandbox.
        split: run the tests apart from the answer (None: as `shared_reason` decides for the task).
    """
    # the bounded span search takes up to ~0.1 s on a large unparsable answer: off the event loop
    code, origin = await asyncio.to_thread(extract_code, completion, problem, calibrate=calibrate)
    if not code.strip():
        return _result(False, None, "no code in the answer", NO_CODE, {"code_from": origin})
    program = build_program(code, problem)
    nonce = secrets.token_hex(16)
    shared = shared_reason(problem) if split is None else (None if split else "chosen by the caller")
    entry = None if shared else problem.entry_point
    run = await runner.run(
        driver_command(timeout, python, capabilities(problem), entry),
        files=driver_files(program, problem.test, problem if entry else None),
        stdin=nonce + "\n",
        timeout=timeout + 2 + SANDBOX_SLACK,
    )
    result = verdict_to_result(parse_verdict(run.stdout, nonce), run, problem, program, timeout)
    result.details.update(code_from=origin, mode="split" if entry else f"shared: {shared}")
    return result
