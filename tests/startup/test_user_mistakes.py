"""Issue 41.5: a user's mistake ends with one line on stderr and a non-zero exit before anything
slow starts: `inspect eval --epochs 0` (Inspect ran one epoch), `training/train.py` without the train
extra (was `No module named 'trl'`), a misspelt `nox -s train` recipe (was refused after minutes of
installs) and a `nox -s main -- --limit -3` (a traceback from Inspect's parser). The report
command's mistakes: tests/reports/test_reports_cli.py."""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import types
from pathlib import Path

import pytest
from waits import run_command

from startup.inspect_command import command_problem

ROOT = Path(__file__).resolve().parents[2]
INSPECT = str(Path(sys.executable).parent / "inspect")
MODULE = str(Path(importlib.util.find_spec("inspect_ai").origin).parent / "__main__.py")  # python -m inspect_ai
EPOCHS_0 = "--epochs 0: give an integer >= 1 (with 0 Inspect runs its default, one epoch)"


@pytest.mark.parametrize(
    ("argv", "problem"),
    [
        ([INSPECT, "eval", "t.py", "--epochs", "0"], EPOCHS_0),
        ([MODULE, "eval-set", "t.py", "--epochs=-2", "--limit", "2"], "--epochs -2: give an integer >= 1"),
        ([INSPECT, "eval", "t.py", "--epochs", "3", "--epochs", "0"], EPOCHS_0),  # the last, as click takes it
        ([INSPECT, "eval", "t.py", "--epochs", "2"], None),
        ([INSPECT, "eval", "t.py"], None),
        ([INSPECT, "view", "--epochs", "0"], None),  # not an eval
        (["/usr/bin/pytest", "eval", "--epochs", "0"], None),  # not Inspect's command line
    ],
)
def test_an_epoch_count_below_one_is_named(argv, problem):
    assert command_problem(argv) == problem


@pytest.mark.slow
def test_inspect_eval_with_epochs_0_ends_at_task_build_in_one_line(tmp_path):
    logs = tmp_path / "logs"
    done = run_command(
        [sys.executable, "-m", "inspect_ai", "eval", "tasks/gsm8k.py", "--solver", "conductor", "-S",
         "pool=sim-scripted", "--limit", "1", "--epochs", "0", "--display", "none", "--log-dir", str(logs)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "XDG_DATA_HOME": str(tmp_path / "xdg")},
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stderr == f"error: {EPOCHS_0}\n"
    assert not logs.exists()  # no eval ran


def test_training_without_the_train_extra_names_it_before_anything_runs(monkeypatch):
    from training import train

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "trl" else real(name, *a))
    monkeypatch.setattr(train, "parse", lambda argv: pytest.fail("parsed the recipe: TRL would be imported"))
    with pytest.raises(SystemExit) as refused:
        train.main(["training/recipes/cpu-smoke.yaml"])
    assert refused.value.code == (
        'error: training needs the train extra (trl not installed): pip install -e ".[train]" --extra-index-url '
        "https://download.pytorch.org/whl/cpu (CPU torch), or run it with nox -s train -- <recipe>"
    )


class Session:
    """What a nox session function uses: its arguments, installs (recorded), runs and errors."""

    def __init__(self, *posargs: str) -> None:
        self.posargs, self.installed = list(posargs), []

    def install(self, *args: str) -> None:
        self.installed.append(args)

    def run(self, *args: str, **_: object) -> None:
        pytest.fail(f"ran {args}")

    def error(self, message: str) -> None:
        raise SystemExit(message)


@pytest.fixture
def noxfile(monkeypatch):
    """noxfile.py, loaded with a stand-in `nox` (the test environment need not have nox)."""
    stub = types.ModuleType("nox")
    stub.session, stub.options, stub.Session = (lambda f: f), types.SimpleNamespace(), Session
    monkeypatch.setitem(sys.modules, "nox", stub)
    monkeypatch.chdir(ROOT)  # nox runs its sessions from the noxfile's folder
    spec = importlib.util.spec_from_file_location("noxfile_under_test", ROOT / "noxfile.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("posargs", "problem"),
    [
        (
            ["training/recipes/cpu-smoek.yaml"],
            "no recipe file training/recipes/cpu-smoek.yaml; did you mean training/recipes/cpu-smoke.yaml?",
        ),  # fmt: skip
        (["cpu-smoke", "--max_steps", "2"], "no recipe file cpu-smoke; did you mean training/recipes/cpu-smoke.yaml?"),
        (
            ["--config", "mine.yml"],
            "no recipe file mine.yml; the recipes: training/recipes/cpu-smoke"
            ".yaml, training/recipes/gpu-small.yaml, training/recipes/paper.yaml, training/recipes/sim-routing.yaml",
        ),
        (["--max_steps", "2"], "name a recipe: nox -s train -- training/recipes/cpu-smoke.yaml [--max_steps 4 ...]"),
        ([], "name a recipe: nox -s train -- training/recipes/cpu-smoke.yaml [--max_steps 4 ...]"),
    ],
)
def test_nox_train_refuses_a_recipe_that_is_not_there_before_installing(noxfile, posargs, problem):
    session = Session(*posargs)
    with pytest.raises(SystemExit, match="^" + re.escape(problem) + "$"):
        noxfile.train(session)
    assert session.installed == []


def test_nox_train_installs_for_a_recipe_that_is_there(noxfile):
    session = Session("training/recipes/cpu-smoke.yaml", "--max_steps", "2")
    with pytest.raises(pytest.fail.Exception, match="ran \\('python', 'training/train.py'"):
        noxfile.train(session)
    assert session.installed  # torch, the project, the model packages


@pytest.mark.parametrize("limit", ["-3", "x", "5-"])
def test_nox_main_refuses_a_limit_inspect_cannot_parse_before_installing(noxfile, limit):
    session = Session("--limit", limit)
    with pytest.raises(SystemExit, match=f"^--limit {limit}: give a number of samples N >= 1 or a range A-B"):
        noxfile.main(session)
    assert session.installed == []


def test_noxfile_loads_as_nox_loads_it():
    """Nox execs the noxfile by path, its folder not on sys.path, the project not installed (CI failed so once)."""
    loader = (
        "import runpy, sys, types; nox = types.ModuleType('nox');"
        "nox.session = lambda *a, **k: (a[0] if a and callable(a[0]) else (lambda f: f));"
        "nox.options = types.SimpleNamespace(); nox.Session = object; sys.modules['nox'] = nox;"
        f"runpy.run_path({str(ROOT / 'noxfile.py')!r})"
    )
    done = run_command([sys.executable, "-I", "-S", "-c", loader], cwd="/")
    assert done.returncode == 0, done.stderr
