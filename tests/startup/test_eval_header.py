"""Issue 32.3 and its `--limit 0` bullet: the main job names its conductor and pool at start
and in the log (Inspect's header says `none/none`: no eval model), and an eval with no sample
to run says so (`startup.eval_header`, `workers.eval_header`)."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.model import ModelConfig
from waits import run_command

import startup.eval_header
from solvers.conductor import conductor
from startup.eval_header import header_line
from workers.eval_header import what_ran

ROOT = Path(__file__).resolve().parents[2]
INSPECT = Path(sys.executable).parent / "inspect"
MAIN_JOB = "conductor local/smollm2-135m conducting pool local"


@pytest.fixture(scope="module")
def sim_log(tmp_path_factory) -> EvalLog:
    """One offline sample of the conductor on the `sim` pool, scripted conductor (in-process)."""
    logs = tmp_path_factory.mktemp("logs")
    with contextlib.chdir(ROOT):
        [log] = inspect_eval(
            "tasks/gpqa.py",
            solver=conductor(pool="sim"),
            model_roles={"conductor": "scripted/fixed-workflows"},
            limit=1,
            display="none",
            log_dir=str(logs),
        )
    return read_eval_log(log.location)


def test_the_log_names_the_conductor_and_pool_that_ran(sim_log):
    """Also the check that Inspect still writes the log from the spec a TaskStart hook gets."""
    assert sim_log.status == "success"
    assert sim_log.eval.metadata == {"pool": "sim", "conductor": "scripted/fixed-workflows"}, (
        "Inspect no longer writes TaskStart.spec to the log: see startup/eval_header.py"
    )
    assert [s.metadata["conductor"]["conductor"] for s in sim_log.samples] == ["scripted/fixed-workflows"]
    assert sim_log.eval.model == "none/none"  # unchanged: what runs is the user's choice


@pytest.mark.parametrize(
    "model, roles, ran",
    [
        ("none/none", {}, {"pool": "sim", "conductor": "local/smollm2-135m"}),  # the main job's, -S pool=sim
        ("openai/gpt-5", {}, {"pool": "sim", "conductor": "openai/gpt-5"}),  # --model conducts
        ("openai/gpt-5", {"conductor": "scripted/x"}, {"pool": "sim", "conductor": "scripted/x"}),  # the role wins
    ],
)
def test_the_conductor_is_resolved_as_the_solver_resolves_it(sim_log, model, roles, ran):
    spec = sim_log.eval.model_copy(
        update={"model": model, "model_roles": {r: ModelConfig(model=m) for r, m in roles.items()}}
    )
    assert what_ran(spec, sim_log.plan) == ran


def test_a_pool_file_is_named_not_its_path(sim_log, tmp_path):
    """The log records the pool's name: the path of a user's pool file is a host path."""
    pool_file = tmp_path / "secret-dir" / "my_pool.yaml"
    pool_file.parent.mkdir()
    pool_file.write_text((ROOT / "workers/pools/sim.yaml").read_text())
    missing = tmp_path / "gone" / "their_pool.yaml"
    step = sim_log.plan.steps[0]
    for given, named in ((pool_file, "my_pool"), (missing, "their_pool")):
        plan = sim_log.plan.model_copy(update={"steps": [step.model_copy(update={"params": {"pool": str(given)}})]})
        assert what_ran(sim_log.eval, plan)["pool"] == named


def test_the_line_says_why_the_header_reads_none_only_without_a_model():
    ran = {"conductor": "local/smollm2-135m", "pool": "local"}
    assert (
        header_line(ran, "none/none")
        == f"{MAIN_JOB} (Inspect's header shows the eval model, none/none: no --model was given)"
    )
    assert header_line(ran, "openai/gpt-5") == MAIN_JOB
    assert header_line({"pool": "sim"}, "openai/gpt-5") == "pool sim"
    assert header_line(ran, "none/none", header_shown=False) == MAIN_JOB  # --display none draws no header


def test_workers_from_a_role_and_solvers_without_a_pool(sim_log):
    step = sim_log.plan.steps[0]
    workers = {"workers": [ModelConfig(model="sim/a"), ModelConfig(model="sim/b")]}
    no_pool = sim_log.plan.model_copy(
        update={"steps": [step.model_copy(update={"params": {**step.params, "pool": None}})]}
    )
    spec = sim_log.eval.model_copy(update={"model_roles": workers})
    assert what_ran(spec, no_pool) == {"pool": "sim/a, sim/b", "conductor": "local/smollm2-135m"}
    generate_only = sim_log.plan.model_copy(
        update={"steps": [step.model_copy(update={"solver": "generate", "params": {}})]}
    )
    assert what_ran(sim_log.eval, generate_only) == {}


@pytest.mark.slow
def test_the_main_job_names_its_conductor_and_warns_on_limit_0(tmp_path):
    """`inspect eval tasks/gpqa.py --solver conductor` as the README runs it, with --limit 0 (no
    model starts): one line names the pool's conductor, a warning names --limit 0 and the fix.
    Inspect exits 0 on an eval with no sample, and a hook cannot change that."""
    env = {**os.environ, "INSPECT_LOG_DIR": str(tmp_path / "logs"), "XDG_DATA_HOME": str(tmp_path / "xdg")}
    command = [str(INSPECT), "eval", "tasks/gpqa.py", "--solver", "conductor", "--limit", "0", "--display", "none"]
    done = run_command(command, cwd=ROOT, env=env)
    assert done.returncode == 0, done.stderr
    assert f"{MAIN_JOB}\n" in done.stderr and "header shows" not in done.stderr  # --display none: no header to explain
    assert (
        "warning: gpqa_diamond has no sample to run: --limit 0 selects none of its 198; fix: --limit N" in done.stderr
    )
    [log] = (tmp_path / "logs").glob("*.eval")
    assert read_eval_log(str(log), header_only=True).eval.metadata == {
        "pool": "local",
        "conductor": "local/smollm2-135m",
    }


def test_a_task_of_another_project_is_left_alone(sim_log, tmp_path, capfd):
    """The hook is process-wide once a project task loads (`sim_log` loaded one); it reports on
    the project's tasks only."""
    [log] = inspect_eval(
        Task(dataset=[Sample(input="1+1?", target="2")], solver=conductor(pool="sim"), name="someone_elses"),
        limit=0,
        display="none",
        log_dir=str(tmp_path),
    )
    assert log.eval.metadata is None and capfd.readouterr().err == ""


@pytest.mark.slow
def test_a_process_that_only_makes_a_model_prints_nothing_on_stdout():
    """The project's tasks register the hook, not the Inspect entry point: Inspect announces
    an entry-point hook on stdout in every process that makes a model (tools, servers)."""
    code = "from inspect_ai.model import get_model; get_model('mockllm/model')"
    done = run_command([sys.executable, "-c", code], cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""


@pytest.mark.slow
def test_a_task_run_without_a_model_says_so_under_display_none(tmp_path):
    """`inspect eval tasks/gpqa.py` with neither --model nor --solver: Inspect fails the task and,
    under `--display none`, printed nothing (exit 0). Now: the fix before, the failure after."""
    env = {**os.environ, "INSPECT_LOG_DIR": str(tmp_path / "logs"), "XDG_DATA_HOME": str(tmp_path / "xdg")}
    command = [str(INSPECT), "eval", "tasks/gpqa.py", "--limit", "1", "--display", "none"]
    done = run_command(command, cwd=ROOT, env=env)
    [log] = (tmp_path / "logs").glob("*.eval")
    assert done.stderr.splitlines() == [
        "error: gpqa_diamond runs its solver generate() on the eval model and no --model was given; fix: "
        "--model <provider>/<model> (e.g. openai/gpt-5), or --solver conductor for the offline conductor",
        f"error: gpqa_diamond failed: No model specified (and no model environment variable defined); the log: {log}",
    ]


def test_many_tasks_with_one_conductor_and_pool_say_it_once(tmp_path, capfd, monkeypatch):
    """A run of many tasks (the regression gate's 30) printed the same line per task; now once, and a
    different pool still gets its own line."""
    monkeypatch.setattr(startup.eval_header, "_said", set())  # this process may have said them already
    with contextlib.chdir(ROOT):
        for task, pool in (
            ("tasks/gpqa.py", "sim-scripted"),
            ("tasks/mmlu.py", "sim-scripted"),
            ("tasks/gpqa.py", "sim"),
        ):
            inspect_eval(
                task,
                solver=conductor(pool=pool),
                model_roles={"conductor": "scripted/fixed-workflows"},
                limit=1,
                display="none",
                log_dir=str(tmp_path),
            )
    said = [line for line in capfd.readouterr().err.splitlines() if "conducting pool" in line]
    assert said == [  # under --display none there is no Inspect header to explain
        "conductor scripted/fixed-workflows conducting pool sim-scripted",
        "conductor scripted/fixed-workflows conducting pool sim",
    ]
