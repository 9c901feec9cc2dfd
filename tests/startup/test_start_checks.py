"""Issue 32.1: a bad option or pool file ends the eval before any sample runs, with a non-zero
exit and one readable line (no traceback), for the conductor, every baseline and router, the
tutorial's own solver and the tasks. The tutorial's files are the ones docs/tutorial.md shows."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai._util.error import exception_hook
from inspect_ai.solver._solver import SolverSpec
from test_docs_tutorial import TUTORIAL, page_steps
from waits import run_command

import conductor_model._registry  # noqa: F401 (registers the project's solvers, as Inspect's CLI does)
from startup.errors import StartError, refuse
from startup.options import OptionError, unknown_option
from tasks.sources import SourceError
from workers.pools import PoolError

PROJECT_SOLVERS = [
    "conductor",
    "single_worker",
    "self_reflection",
    "consensus",
    "mixture_of_agents",
    "smoothie",
    "random_workflow",
    "router_dc",
    "mas_router",
]
TUTORIAL_SOLVER = "my_solver.py@cheap_then_check"
PIRCE = "bad_pool.yaml: workers[1] (sim/math-strong).pirce: unknown key; fix: did you mean `price`?"
MAX_STEP = "conductor has no option -S max_step; did you mean 'max_steps'?"
CHEKCER = "cheap_then_check has no option -S chekcer; did you mean 'checker'?"
FEW_SHOT = (
    "invalid solver option -S few_shot='odd': expected ood | in_distribution | mixed | legacy | none (or true/false)"
)


@pytest.fixture(scope="module")
def tutorial(tmp_path_factory) -> Path:
    """A folder with the tutorial's files and its pool with `price` misspelt `pirce`."""
    folder = tmp_path_factory.mktemp("tutorial")
    for step in page_steps(TUTORIAL):
        if step.title:
            (folder / step.title).write_text(step.text)
    pool = (folder / "my_pool.yaml").read_text()
    (folder / "bad_pool.yaml").write_text(pool.replace("price: {input: 0.3", "pirce: {input: 0.3"))
    return folder


def inspect_cli(folder: Path, *args: str) -> subprocess.CompletedProcess:
    """`inspect eval unit_task.py ARGS --display none` as the tutorial runs it."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    command = ["inspect", "eval", "unit_task.py", *args, "--log-dir", "logs", "--display", "none"]
    return run_command(command, cwd=folder, env=env)


def assert_refused(done: subprocess.CompletedProcess, message: str) -> None:
    """A non-zero exit whose only words are `error: MESSAGE` (Inspect's own notices aside)."""
    assert done.returncode != 0, done.stdout + done.stderr
    assert [line for line in done.stderr.splitlines() if line.startswith("error: ")] == [f"error: {message}"]
    assert "Traceback" not in done.stdout + done.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    ("solver", "options", "message"),
    [
        ("single_worker", ["-S", "pool=bad_pool.yaml", "-S", "worker=0"], f"pool file {PIRCE}"),
        (TUTORIAL_SOLVER, ["-S", "pool=bad_pool.yaml"], f"pool file {PIRCE}"),
        ("conductor", ["-S", "pool=my_pool.yaml", "-S", "max_step=3"], MAX_STEP),
        (TUTORIAL_SOLVER, ["-S", "pool=my_pool.yaml", "-S", "chekcer=1"], CHEKCER),
    ],
)  # fmt: skip
def test_the_tutorials_commands_refuse_a_bad_pool_or_option_in_one_line(tutorial, solver, options, message):
    done = inspect_cli(tutorial, "--solver", solver, *options, "--epochs", "2")
    assert_refused(done, message)
    assert not list(tutorial.glob("logs/*.eval"))  # stopped before the eval started


def run_in_process(folder: Path, solver: str, args: dict, capsys) -> str:
    """What `inspect eval unit_task.py --solver SOLVER -S ARGS` prints on stderr before it stops;
    the error must be the one Inspect's CLI exits 1 on silently."""
    cwd = Path.cwd()
    os.chdir(folder)
    try:
        with pytest.raises(StartError):
            spec = SolverSpec(solver, args, args_passed=args)  # as the CLI builds it from -S
            inspect_eval("unit_task.py", solver=spec, display="none", log_dir="logs", limit=1)
    finally:
        os.chdir(cwd)
    return capsys.readouterr().err


@pytest.mark.parametrize("solver", [*PROJECT_SOLVERS, TUTORIAL_SOLVER])
def test_every_solver_refuses_a_misspelt_pool_key_at_start(tutorial, solver, capsys):
    err = run_in_process(tutorial, solver, {"pool": "bad_pool.yaml"}, capsys)
    assert err.strip() == f"error: pool file {PIRCE}"


@pytest.mark.parametrize("solver", [*PROJECT_SOLVERS, TUTORIAL_SOLVER])
def test_every_solver_refuses_a_misspelt_option_at_start(tutorial, solver, capsys):
    err = run_in_process(tutorial, solver, {"pool": "my_pool.yaml", "step_timout": 5}, capsys)
    name = solver.split("@")[-1]
    assert err.strip() == f"error: {name} has no option -S step_timout; did you mean 'step_timeout'?"


@pytest.mark.parametrize("solver", ["single_worker", "self_reflection", "consensus"])
def test_a_worker_index_past_the_pool_is_refused_at_start(tutorial, solver, capsys):
    err = run_in_process(tutorial, solver, {"pool": "sim", "worker": 9}, capsys)
    assert (
        err.strip() == "error: invalid solver option -S worker=9: expected a pool index 0..3 (the pool has 4 workers)"
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("role", "message"),
    [
        (
            "workers=sim/zzz",
            "no simulated profile 'zzz'; use sim/<one of math-strong, choice-strong, mediocre, premium>",
        ),
        (
            "workers=local/nope",
            "Unknown local model 'nope'. Known: gemma3-270m, smollm2-135m (or a path to a .gguf file).",
        ),
        ("conductor=scripted/nope", "no scripted model 'nope'; use scripted/fixed-workflows"),
    ],
)
def test_a_model_the_projects_providers_do_not_know_is_one_line(tutorial, role, message):
    """Inspect makes the --model-role models before any project code: the providers refuse themselves."""
    done = inspect_cli(tutorial, "--solver", "conductor", "-S", "pool=my_pool.yaml", "--model-role", role)
    assert_refused(done, message)


@pytest.mark.slow
def test_a_bad_option_value_is_refused_without_a_traceback(tutorial):
    done = inspect_cli(tutorial, "--solver", "conductor", "-S", "pool=my_pool.yaml", "-S", "few_shot=odd")
    assert_refused(done, FEW_SHOT)


def test_a_task_refuses_a_bad_option_and_keeps_its_error_type(capsys):
    from tasks.math500 import math500

    with pytest.raises(ValueError, match="unknown split 'bogus'") as error:
        math500(split="bogus")
    assert isinstance(error.value, StartError)
    assert (
        capsys.readouterr().err.strip()
        == "error: math500: unknown split 'bogus'; use one of train, validation, test, all"
    )


def test_a_refused_error_keeps_its_type_for_python_callers(capsys):
    for original in (SourceError("gsm8k: no such file"), PoolError("no pool file x.yaml"), OptionError("bad")):
        refused = refuse(original)
        assert isinstance(refused, type(original)) and isinstance(refused, StartError)
        assert str(refused) == str(original)
    assert capsys.readouterr().err.splitlines() == [
        "error: gsm8k: no such file",
        "error: no pool file x.yaml",
        "error: bad",
    ]


def test_inspects_cli_exits_1_on_a_refused_error_and_prints_nothing_more(capsys):
    """Fails if Inspect changes how its exception hook treats a SilentException (startup.errors)."""
    refused = refuse(OptionError("invalid solver option"))
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        exception_hook()(type(refused), refused, None)
    assert exit_.value.code == 1
    assert capsys.readouterr() == ("", "")


def test_unknown_option_names_the_closest_option_or_lists_them():
    assert unknown_option("max_step", ["pool", "max_steps"], "conductor") == (
        "conductor has no option -S max_step; did you mean 'max_steps'?"
    )
    assert unknown_option("zzz", ["pool", "seed"], "random_workflow") == (
        "random_workflow has no option -S zzz; its options: pool, seed"
    )


def test_the_report_command_names_the_extra_it_needs(monkeypatch, capsys, tmp_path):
    from reports.__main__ import main

    monkeypatch.setitem(sys.modules, "pandas", None)  # as in .nox/main, which has no `reports` extra
    assert main(["build", "--logs", str(tmp_path), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert (
        err
        == 'error: python -m reports needs the `reports` extra (pandas is not installed): pip install -e ".[reports]"\n'
    )
    assert 'pip install -e ".[reports]"' in TUTORIAL.read_text()
