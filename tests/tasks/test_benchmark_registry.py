"""A benchmark is one declaration in its task file (tasks/catalog.py `Benchmark`, `register`):
every module that treats benchmarks differently reads it there, so a toy benchmark declared the
way a task file declares one is seen by the consensus check, the simulated workers, the routers,
the report's columns and the cost estimate, with nothing else edited."""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace

import pytest

from reports import estimate, missing, records
from solvers import consensus
from solvers.routers import solvers as routers
from tasks.catalog import DOMAINS, Benchmark, benchmark, benchmarks, register, task_file
from workers import simulation

TOY = Benchmark("toy_quiz", "toy", domain="mmlu", answer="choice", paper_column="TOY", paper_questions=12)
BUNDLED = {"aime2025", "bigcodebench", "gpqa_diamond", "gsm8k", "humaneval", "livecodebench", "math500", "mmlu", "rlpr"}


@pytest.fixture
def toy(declare) -> Benchmark:
    """TOY registered as its task file would (`BENCHMARK = register(Benchmark(...))`), for this test only."""
    return declare(TOY)


def test_every_bundled_task_file_declares_its_benchmark():
    assert {b.name for b in benchmarks()} == BUNDLED
    for declared in benchmarks():  # its file holds the @task function of that name (the name logs show)
        assert callable(declared.task()) and declared.task().__module__ == f"tasks.{declared.file}"
    assert task_file("gpqa").name == "gpqa_diamond" and task_file("toy") is None
    assert benchmark("pkg/math500") is benchmark("math500") and benchmark("my_own_task") is None
    paper = [b.file for b in benchmarks() if b.paper_column and b.offline]
    assert paper == ["aime2025", "gpqa", "math500", "mmlu"]  # `python -m reports reproduce`'s default tasks


def test_a_toy_benchmark_is_seen_everywhere(toy):
    assert consensus.auto_check("toy_quiz", 0, None) == "choice"  # vote by letter, not the default math
    assert simulation.task_domain("pkg/toy_quiz") == ("mmlu", "choice")  # the simulated answer key
    state = SimpleNamespace(metadata={}, choices=None)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(routers, "current_task_name", lambda: "toy_quiz")
        assert routers.sample_domain(state) == "mmlu"  # MASRouter's role set
    # the report frame's column of each row (reports/frame.py), and its own name for an undeclared task
    assert records.paper_column("toy_quiz") == "TOY" and records.paper_column("my_own_task") == "my_own_task"
    assert missing.task_file("TOY") == "toy"  # a missing cell's command names tasks/toy.py
    assert estimate.questions("toy") == 12


def test_a_code_benchmark_votes_on_text_and_a_bad_declaration_is_refused(toy):
    assert Benchmark("c", "c", domain="lcb", answer="code").check == "text"
    with pytest.raises(ValueError, match="domain 'physics'"):
        register(Benchmark("p", "p", domain="physics", answer="math"))
    with pytest.raises(ValueError, match="tasks/toy.py and tasks/other.py"):
        register(Benchmark("toy_quiz", "other", domain="math", answer="math"))
    assert register(TOY) is TOY  # a task file loaded again (Inspect loads them by path) registers again


ROOT = Path(__file__).resolve().parents[2]
OWN_PLACES = ("tasks", "tests")  # the declarations, and the tests' expectations
KEPT = {  # a table kept on purpose, and why
    "experiments/seeds/sweep.py": "the column names of the committed seeds.csv results (MATH-500, not MATH500)",
}


def benchmark_tables(path: Path, facts: set[str]) -> list[int]:
    """The lines where `path` tabulates benchmarks: a dict literal (or `dict(...)` call) with two or
    more keys or values among `facts` (names, task files, paper columns, `tasks/x.py` paths)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Dict):
            parts = [*node.keys, *node.values]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
            parts = [ast.Constant(k.arg) for k in node.keywords] + [k.value for k in node.keywords]
        else:
            continue
        named = {p.value for p in parts if isinstance(p, ast.Constant) and p.value in facts}
        if len(named) >= 2:
            found.append(node.lineno)
    return found


def benchmark_facts() -> set[str]:
    """What names a benchmark outside its declaration; a domain's name (mmlu, rlpr) is not counted."""
    facts = set()
    for b in benchmarks():
        facts |= {b.name, b.file, b.paper_column, f"tasks/{b.file}.py", f"tasks.{b.file}", f"tasks.{b.file}:{b.name}"}
    return facts - {None} - set(DOMAINS)


def test_a_benchmark_table_is_found(tmp_path):
    bad = tmp_path / "m.py"
    bad.write_text('A = {"gsm8k": 1, "math500": 2}\nB = dict(gsm8k="x", aime2025="y")\nC = {"mmlu": 1, "rlpr": 2}\n'
                   'D = {"x": "tasks/gpqa.py", "y": "GPQA-D"}\nE = ["gsm8k", "math500"]\n')  # fmt: skip
    assert benchmark_tables(bad, benchmark_facts()) == [1, 2, 4]  # C: domains; E: a selection, not a table


def test_no_module_outside_tasks_tabulates_benchmarks():
    """A benchmark's facts live in its task file: no other module keeps a table keyed by benchmarks
    (a task's file, domain, check, column or loader), which a new benchmark would have to join."""
    facts = benchmark_facts()
    files = [p for p in sorted(ROOT.rglob("*.py")) if p.relative_to(ROOT).parts[0] not in OWN_PLACES]
    files = [p for p in files if not any(part.startswith(".") for part in p.relative_to(ROOT).parts)]
    files = [p for p in files if str(p.relative_to(ROOT)) not in KEPT]
    assert [f"{p.relative_to(ROOT)}:{line}" for p in files for line in benchmark_tables(p, facts)] == []
