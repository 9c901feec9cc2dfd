"""Issue 32.1: the commands that run evals for the user (nox's main job through
`solvers.eval_status`, the matrix runner, the training sweeps' held-out evals) exit non-zero
when an eval failed or scored no sample; `--limit 0` is one way to score none."""

from __future__ import annotations

import time

import pytest
from inspect_ai import Task, task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.scorer import match
from inspect_ai.solver import Generate, TaskState, solver
from test_matrix import tiny

from experiments import heldout
from solvers import eval_status, matrix


@task
def two_questions() -> Task:
    return Task(dataset=[Sample(input="1 + 1?", target="2"), Sample(input="2 + 2?", target="4")], scorer=match())


@solver
def answers_two():
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.output.completion = "2"
        return state

    return solve


@solver
def breaks():
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        raise RuntimeError("the solver broke")

    return solve


@pytest.mark.slow
def test_eval_status_names_an_eval_that_scored_no_sample_and_one_that_failed(tmp_path, capsys):
    since = time.time() - 1
    logs = tmp_path / "logs"
    [empty] = inspect_eval(two_questions(), solver=answers_two(), limit=0, display="none", log_dir=str(logs))
    [broken] = inspect_eval(two_questions(), solver=breaks(), display="none", log_dir=str(logs))
    [fine] = inspect_eval(two_questions(), solver=answers_two(), display="none", log_dir=str(logs))
    assert eval_status.eval_problems([fine]) == []
    problems = eval_status.eval_problems([empty, broken])
    assert "scored no sample" in problems[0] and "two_questions" in problems[0]
    assert problems[1].endswith("error: RuntimeError('the solver broke')")
    assert eval_status.main(["--log-dir", str(logs), "--since", str(since)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all(line.startswith("error: two_questions (") for line in err)
    assert eval_status.main(["--log-dir", str(logs), "--since", str(time.time() + 60)]) == 1  # nothing new
    assert capsys.readouterr().err.startswith("error: no eval log written in")


def test_the_matrix_runner_fails_when_its_evals_score_no_sample(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(matrix, "task_function", lambda name: tiny)
    methods = tmp_path / "methods.yaml"
    methods.write_text("methods:\n  - {name: single_worker, solver: single_worker, options: {worker: 0}}\n")
    argv = ["--tasks", "tiny", "--pool", "sim", "--limit", "0", "--log-dir", str(tmp_path / "logs"),
            "--matrix", str(methods), "--display", "none"]  # fmt: skip
    assert matrix.main(argv) == 1
    assert "scored no sample" in capsys.readouterr().out


@pytest.mark.slow
def test_a_held_out_eval_that_scores_no_sample_stops_the_sweep(tmp_path):
    method = {"label": "answers_two", "solver": answers_two(), "roles": {}}
    with pytest.raises(SystemExit, match="error: answers_two on two_questions .*scored no sample"):
        heldout.evaluate(method, [two_questions()], tmp_path, limit=0, seed=0)
    rows = heldout.evaluate(method, [two_questions()], tmp_path, limit=2, seed=0)
    assert [row["score"] for row in rows] == [1.0, 0.0]
