"""A benchmark is one declaration in its task file (tasks/catalog.py `Benchmark`, `register`):
every module that treats benchmarks differently reads it there, so a toy benchmark declared the
way a task file declares one is seen by the consensus check, the simulated workers, the routers,
the report's columns and the cost estimate, with nothing else edited."""

from __future__ import annotations

import importlib
from types import SimpleNamespace

import pytest

from reports import estimate, missing, records
from solvers import consensus
from solvers.routers import solvers as routers
from tasks import catalog
from tasks.catalog import Benchmark, benchmark, benchmarks, register, task_file
from workers import simulation

TOY = Benchmark("toy_quiz", "toy", domain="mmlu", answer="choice", paper_column="TOY", paper_questions=12)
BUNDLED = {"aime2025", "bigcodebench", "gpqa_diamond", "gsm8k", "humaneval", "livecodebench", "math500", "mmlu", "rlpr"}


@pytest.fixture
def toy(monkeypatch) -> Benchmark:
    """TOY registered as its task file would (`BENCHMARK = register(Benchmark(...))`), for this test only."""
    benchmarks()  # the bundled task files first
    monkeypatch.setattr(catalog, "_REGISTERED", dict(catalog._REGISTERED))
    return register(TOY)


def test_every_bundled_task_file_declares_its_benchmark():
    assert {b.name for b in benchmarks()} == BUNDLED
    for declared in benchmarks():  # its file holds the @task function of that name (the name logs show)
        assert callable(getattr(importlib.import_module(f"tasks.{declared.file}"), declared.name))
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
