"""`nox -s reproduce_tables` without logs: the simulated pool with a scripted conductor, epochs that
give a standard error, and the cost estimate of the real pools' commands."""

from __future__ import annotations

import pytest
import yaml
from inspect_ai import Task, eval, task
from inspect_ai.dataset import Sample
from inspect_ai.solver import generate

from scorers.inspect_scorers import numeric_match
from workers.pools import POOLS_DIR


@pytest.mark.slow
def test_simulated_epochs_draw_afresh_and_the_first_epoch_is_unchanged():
    samples = [Sample(id=i, input=f"What is {i} + 1?", target=str(i + 1), metadata={"domain": "math"})
               for i in range(40)]  # fmt: skip
    task = Task(dataset=samples, solver=generate(), scorer=numeric_match())
    one = eval(task, model="sim/mediocre", display="none", log_format="json")[0]
    three = eval(task, model="sim/mediocre", epochs=3, display="none", log_format="json")[0]
    verdicts: dict[int, dict] = {}
    for s in three.samples:
        verdicts.setdefault(s.epoch, {})[s.id] = s.output.metadata["correct"]
    assert verdicts[1] == {s.id: s.output.metadata["correct"] for s in one.samples}  # epoch 1 as before
    assert verdicts[2] != verdicts[1] and verdicts[3] != verdicts[2]  # p = 0.5: 40 identical draws is 1e-12


def test_the_sim_scripted_pool_has_the_sim_pools_workers():
    sim, scripted = (yaml.safe_load((POOLS_DIR / f"{name}.yaml").read_text()) for name in ("sim", "sim-scripted"))
    assert scripted["workers"] == sim["workers"]
    assert scripted["conductor"]["model"] == "scripted/fixed-workflows"


def test_reproduce_alone_builds_present_logs_else_runs_the_quick_simulation():
    from reports.__main__ import PRESENT_LOGS, QUICK, parser, plan

    args, said = plan(parser().parse_args(["reproduce"]), found=lambda path: False)
    assert (args.pool, args.limit, args.epochs, args.logs) == (QUICK["pool"], QUICK["limit"], QUICK["epochs"], None)
    assert "SIMULATION" in said and PRESENT_LOGS in said
    args, said = plan(parser().parse_args(["reproduce", "--limit", "3"]), found=lambda path: False)
    assert (args.pool, args.limit) == (QUICK["pool"], 3)
    args, said = plan(parser().parse_args(["reproduce"]), found=lambda path: path == PRESENT_LOGS)
    assert args.logs == PRESENT_LOGS and PRESENT_LOGS in said
    for given in (["reproduce", "--pool", "local"], ["reproduce", "--logs", "x"], ["build", "--logs", "x"]):
        args, said = plan(parser().parse_args(given), found=lambda path: True)
        assert said == "" and args == parser().parse_args(given)


def frame(rows):
    import pandas as pd

    return pd.DataFrame(rows, columns=["matrix_method", "task", "agent_calls", "calls", "input_tokens"])


def test_estimate_prices_each_run_at_its_workers_prices_over_the_test_set():
    from reports.estimate import EXPECTED_OUTPUT_TOKENS, estimate, per_call, questions
    from solvers.matrix import Run
    from workers.pools import ModelSpec, Price

    usage = per_call(frame([["consensus_w1", "mmlu", 5, 5, 500], ["consensus_w0", "mmlu", 5, 5, 500],
                            ["conductor", "mmlu", 2, 3, 3000], ["", "mmlu", 9, 9, 9]]))  # fmt: skip
    workers = [ModelSpec("a/x", config={"max_tokens": 1000}, price=Price(1, 10)),
               ModelSpec("b/y", config={"max_tokens": 2000}, price=Price(2, 20))]  # fmt: skip
    runs = [Run("mmlu", "consensus_w0", "consensus", {"worker": 0}),
            Run("mmlu", "consensus_w1", "consensus", {"worker": 1}),
            Run("mmlu", "no_few_shot", "conductor", {"few_shot": "none"}),
            Run("mmlu", "smoothie_k2", "smoothie"), Run("gpqa", "conductor", "conductor")]  # fmt: skip
    got = estimate(usage, runs, workers, ["mmlu"], "constrained")
    n, out = questions("mmlu"), EXPECTED_OUTPUT_TOKENS
    consensus = n * 5 * (Price(1, 10).cost(100, out) + Price(2, 20).cost(100, out))
    # an ablation takes the conductor's calls, at the mean price of the workers
    ablation = n * 2 * (Price(1, 10).cost(1000, out) + Price(2, 20).cost(1000, out)) / 2
    assert abs(got.usd - (consensus + ablation)) < 1e-9
    assert (got.worker_calls, got.conductor_calls) == (n * 12, n * 1)
    assert got.not_estimated == ["smoothie_k2 on mmlu"]  # gpqa is not among the tasks asked for
    unconstrained = estimate(usage, runs[:1], workers, ["mmlu"], "unconstrained")
    assert abs(unconstrained.usd - n * 5 * Price(1, 10).cost(100, 1000)) < 1e-9  # at most: every call its budget


def test_report_lines_name_each_real_pool_command_with_its_cost():
    from reports.estimate import REAL_RUNS, report_lines

    tasks = ["math500", "mmlu"]
    rows = [[m, t, 1, 1, 400] for t in tasks for m in ("conductor", "single_worker_w0", "single_worker_w3")]
    lines = report_lines(frame(rows), tasks)
    commands = [line.strip() for line in lines if line.strip().startswith("python -m solvers.matrix")]
    assert len(commands) == len(REAL_RUNS)
    assert "--pool paper-constrained" in commands[0] and "--matrix solvers/ablations.yaml" in commands[1]
    assert "--methods conductor,single_worker" in commands[2] and "--pool paper " in commands[2]
    costs = [line for line in lines if "USD" in line]
    assert len(costs) == len(REAL_RUNS) and all(any(c.isdigit() for c in line.split("USD")[1]) for line in costs)
    assert any("not in the estimate" in line and "consensus_w0 on math500" in line for line in lines)


async def test_the_scripted_conductor_writes_a_workflow_the_parser_takes_and_refuses_other_names():
    import pytest
    from inspect_ai.model import get_model

    from solvers.workflow import parse_workflow
    from workers.scripted_workflows import scripted_completion

    model = get_model("scripted/fixed-workflows")
    for n in range(12):
        prompt = f"Write a workflow.\nQUESTION: What is {n} + 2?\nMODELS:\nModel 0\nModel 1\nModel 2\n"
        output = await model.generate(prompt)
        assert output.completion == scripted_completion(prompt)
        assert output.usage.input_tokens == len(prompt) // 4 and output.model == "scripted/fixed-workflows"
        # every shape parses but the deliberately rejected one (unequal list lengths)
        assert parse_workflow(output.completion, range(3)).ok == ("shape 7." not in output.completion)
    with pytest.raises(ValueError, match="scripted/fixed-workflows"):
        get_model("scripted/gpt-5")
    with pytest.raises(ValueError, match="takes no model args"):
        get_model("scripted/fixed-workflows", temperature_bias=1)


def tiny_samples(split: str = "test") -> list[Sample]:
    from tasks.prompts import numeric_prompt

    return [Sample(id=f"{split}{n}", input=numeric_prompt(f"What is {n} plus 0?"), target=str(n),
                   metadata={"question": f"What is {n} plus 0?", "domain": "math", "check": "numeric"})
            for n in (50, 51)]  # fmt: skip


@task
def tiny() -> Task:
    return Task(dataset=tiny_samples(), scorer=numeric_match())


@pytest.mark.slow
def test_reproduce_prints_progress_and_a_summary_and_verbose_the_detail(tmp_path, monkeypatch, capfd, declare):
    """`nox -s reproduce_tables` was 2,257 lines (Inspect's block per eval, each router's JSON, the build's
    timings): now a progress line per quarter of the evals and a summary; --verbose prints the detail."""
    from reports.__main__ import main
    from solvers import matrix
    from tasks.catalog import Benchmark

    declare(Benchmark("tiny", "tiny", domain="math", answer="numeric", router_samples=tiny_samples, paper_questions=2))
    monkeypatch.setattr(matrix, "task_function", lambda name: tiny)
    monkeypatch.chdir(tmp_path)  # no logs/baselines here: the quick simulation, then its cost estimate
    # Inspect makes its display once per process: drop one an earlier test left, as a fresh command starts
    monkeypatch.setattr("inspect_ai._display.core.active._active_display", None)
    argv = ["reproduce", "--tasks", "tiny", "--limit", "1", "--epochs", "1"]
    assert main([*argv, "--methods", "conductor,single_worker", "--log-dir", "quiet", "--out", "out"]) == 0
    out, err = capfd.readouterr()
    lines = (out + err).splitlines()
    assert len(lines) <= 36, out + err  # 26 measured, and Inspect's notice of the hooks it found (5)
    assert "evals ended: 5/5" in out and "report: out/index.html" in out and "Fill the paper's tables" in out, out
    assert "total time" not in out and "read logs" not in out, out  # Inspect's block per eval; the build's timings
    assert "read logs" in (tmp_path / "out" / "report.log").read_text()  # the detail is kept
    assert main([*argv, "--methods", "conductor", "--log-dir", "loud", "--out", "loud", "--verbose"]) == 0
    out, err = capfd.readouterr()
    # Inspect's plain display passed on (its drawing is Inspect's: the display type is set once per process)
    assert "--display plain" in out and "read logs" in out and "evals ended" not in out, out + err
