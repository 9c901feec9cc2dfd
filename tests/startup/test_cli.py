"""`inspect eval tasks/gpqa.py --solver conductor` through the real CLI, offline."""

import os
import sys
from pathlib import Path

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log
from waits import run_command

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "gpqa_diamond.csv"
INSPECT = Path(sys.executable).with_name("inspect")


def inspect_eval(tmp_path, *args: str):
    env = {**os.environ, "INSPECT_LOG_DIR": str(tmp_path / "logs"), "XDG_DATA_HOME": str(tmp_path / "xdg")}
    env.pop("INSPECT_EVAL_MODEL", None)
    command = [str(INSPECT), "eval", "tasks/gpqa.py", "-T", f"data_file={FIXTURE}", "--display", "plain", *args]
    result = run_command(command, cwd=ROOT, env=env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    [info] = list_eval_logs(str(tmp_path / "logs"))
    return read_eval_log(info.name)


@pytest.mark.slow
def test_cli_scores_an_unparseable_workflow_with_the_reason(tmp_path):
    # a base model without a grammar writes no workflow: the sample is still scored
    conductor = "conductor={model: local/gemma3-270m, temperature: 0, max_tokens: 48}"
    log = inspect_eval(
        tmp_path, "--solver", "conductor", "-S", "grammar=false", "--model-role", conductor, "--limit", "1"
    )
    assert log.status == "success"
    assert log.eval.solver == "conductor"
    [sample] = log.samples
    assert sample.metadata["conductor"]["rejection"] == "missing_list"
    assert sample.metadata["conductor"]["calls"] == 1  # no worker ran
    assert sample.scores["choice_letter"].value == "I"


@pytest.mark.slow
def test_cli_main_job_on_the_local_pool(tmp_path):
    """The README's main job (on a fixture question): a real tiny conductor and workers."""
    log = inspect_eval(tmp_path, "--solver", "conductor", "--limit", "1")
    assert log.status == "success", log.error
    [sample] = log.samples
    meta = sample.metadata["conductor"]
    assert meta["conductor"] == "local/smollm2-135m"
    assert meta["workers"] == ["local/smollm2-135m", "local/gemma3-270m"]
    assert meta["parsed"], meta["round"]["completion"]  # the grammar forces a valid workflow
    assert meta["steps"] >= 1 and meta["output_tokens"] > 0
    assert "choice_letter" in sample.scores
    assert sample.metadata["data_source"].startswith("file:")
    steps = [e for e in sample.events if e.event == "span_begin" and e.type == "workflow_step"]
    assert len(steps) == meta["steps"]


@pytest.mark.slow
@pytest.mark.parametrize("option", ["max_steps=0", "step_timeout=-1", "access=some"])
def test_cli_nonsensical_solver_option_fails_at_start_with_the_fix(tmp_path, option):
    env = {**os.environ, "INSPECT_LOG_DIR": str(tmp_path / "logs"), "XDG_DATA_HOME": str(tmp_path / "xdg")}
    command = [
        str(INSPECT),
        "eval",
        "tasks/gpqa.py",
        "-T",
        f"data_file={FIXTURE}",
        "--display",
        "plain",
        "--solver",
        "conductor",
        "-S",
        option,
        "--model",
        "mockllm/model",
        "--limit",
        "1",
    ]
    result = run_command(command, cwd=ROOT, env=env)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output[-2000:]
    assert f"invalid solver option -S {option.split('=')[0]}=" in output and "expected" in output
    assert not (tmp_path / "logs").exists() or not list_eval_logs(str(tmp_path / "logs"))
