"""The forgery battery of BigCodeBench tasks that need a library (tests/scorers/test_bcb_forgery_objects.py,
test_bcb_forgery_classes.py): the sandbox runner with this Python's added site directories, and the three
checks per task (the reference passes and a wrong answer fails in both modes; each attack forges a pass in
the shared mode and fails split), skipped where the library is absent."""

from __future__ import annotations

import importlib.util
import os
import sys

import pytest
from waits import ROOMY_S

from scorers.code_bcb import BCBProblem, check_bigcodebench


def fence(code: str) -> str:
    return f"Solution:\n```python\n{code.strip()}\n```\n"


@pytest.fixture
def library_runner(runner):
    """The sandbox runner, with the site directories a `.pth` adds to this Python mounted (a venv
    holding the libraries beside this machine's packages)."""
    own = tuple(os.path.abspath(p) + os.sep for p in (sys.prefix, sys.base_prefix))
    added = [p for p in sys.path if p.endswith("site-packages") and os.path.isdir(p) and not p.startswith(own)]
    return type(runner)(extra_ro=added)


def available(name: str) -> None:
    if importlib.util.find_spec(name) is None:
        pytest.skip(f"{name} is not installed in the sandbox's Python")


def battery(tasks: dict[str, BCBProblem], wrong: dict[str, str], attacks: dict[tuple[str, str], str]):
    """The three test functions for a module's tasks (assign them to test_* names there)."""

    @pytest.mark.slow
    @pytest.mark.parametrize("split", [True, False], ids=["split", "shared"])
    @pytest.mark.parametrize("name", sorted(tasks))
    async def reference_passes(library_runner, name, split):
        available(name)
        problem = tasks[name]
        result = await check_bigcodebench(
            fence(problem.reference_program), problem, library_runner, ROOMY_S, split=split
        )
        assert result.correct and result.details["mode"].startswith("split" if split else "shared"), result.reason

    @pytest.mark.slow
    @pytest.mark.parametrize("split", [True, False], ids=["split", "shared"])
    @pytest.mark.parametrize("name", sorted(tasks))
    async def wrong_answer_fails(library_runner, name, split):
        available(name)
        result = await check_bigcodebench(fence(wrong[name]), tasks[name], library_runner, ROOMY_S, split=split)
        assert not result.correct and result.details["status"] in ("fail", "error"), result.reason

    @pytest.mark.slow
    @pytest.mark.parametrize(("name", "attack"), sorted(attacks))
    async def forgery_passes_shared_fails_split(library_runner, name, attack):
        """The shared mode's residual, measured: if this ever fails because the shared mode caught the
        forgery, docs/security.md's residual list is out of date, not the split mode."""
        available(name)
        problem, code = tasks[name], fence(attacks[name, attack])
        shared = await check_bigcodebench(code, problem, library_runner, ROOMY_S, split=False)
        split = await check_bigcodebench(code, problem, library_runner, ROOMY_S, split=True)
        assert shared.correct, ("the shared mode caught it", shared.reason)
        assert not split.correct and split.details["mode"] == "split", split.reason

    return reference_passes, wrong_answer_fails, forgery_passes_shared_fails_split
