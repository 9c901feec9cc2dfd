"""The baselines matrix: the runs built for given arguments (pure), the methods file, and a
tiny resumable eval-set on the simulated pool that trains its missing routers first."""

from __future__ import annotations

import pytest
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.log import list_eval_logs, read_eval_log

from scorers.inspect_scorers import numeric_match
from solvers import matrix
from tasks.catalog import Benchmark
from tasks.prompts import numeric_prompt
from workers.pools import load_pool

METHODS = matrix.load_matrix()["methods"]
ALL = {m["solver"] for m in METHODS}


def test_every_method_of_the_matrix_is_a_registered_solver():
    assert ALL <= matrix.registered_solvers()


def test_the_matrix_for_two_tasks_on_a_two_worker_pool():
    built = matrix.build_matrix(METHODS, ["gsm8k", "math500"], "local", 2, ALL - {"mas_router"})
    labels = {(r.task, r.method) for r in built.runs}
    assert ("gsm8k", "single_worker_w1") in labels and ("math500", "consensus_w0") in labels
    assert built.skipped == []  # smoothie needs 3 candidates: 2 answers from each of the 2 workers
    smoothie = [r for r in built.runs if r.solver == "smoothie" and r.task == "gsm8k"]
    assert [(r.method, r.options) for r in smoothie] == [
        ("smoothie_independent_k2", {"mode": "independent", "pool": "local", "samples_per_worker": 2}),
        ("smoothie_dependent_k2", {"mode": "dependent", "pool": "local", "samples_per_worker": 2}),
    ]
    assert built.missing == ["mas_router: solver 'mas_router' is not registered (not implemented in this checkout)"]
    assert built.trained == ["router_dc"]
    # conductor, 2 x (single_worker, context_5x, self_reflection, consensus), MoA, 2 x smoothie, random, router_dc
    assert len(built.runs) == 2 * 14
    run = next(r for r in built.runs if r.method == "self_reflection_w1")
    assert run.solver == "self_reflection" and run.options == {"rounds": 5, "pool": "local", "worker": 1}
    assert all(r.options["pool"] == "local" for r in built.runs)


@pytest.mark.parametrize("size, per_worker", [(1, 3), (2, 2), (3, 1), (7, 1)])
def test_a_method_needing_three_outputs_samples_enough_from_a_small_pool(size, per_worker):
    built = matrix.build_matrix(METHODS, ["gsm8k"], "p", size, ALL, only=["smoothie_dependent"])
    [run] = built.runs
    assert size * run.options.get("samples_per_worker", 1) >= 3
    assert run.options.get("samples_per_worker", 1) == per_worker
    assert run.method == ("smoothie_dependent" if per_worker == 1 else f"smoothie_dependent_k{per_worker}")


def test_five_times_context_is_20480_tokens_per_worker_and_five_times_the_local_budget():
    def budgets(pool, size):
        built = matrix.build_matrix(METHODS, ["gsm8k"], pool, size, ALL, only=["context_5x"])
        return [(r.method, r.solver, r.options["max_tokens"]) for r in built.runs]

    assert budgets("paper-constrained", 3) == [(f"context_5x_w{i}", "single_worker", 20480) for i in range(3)]
    assert budgets("local", 2) == [(f"context_5x_w{i}", "single_worker", 5 * 256) for i in range(2)]
    assert {w.config["max_tokens"] for w in load_pool("local").workers} == {256}


def test_a_method_needing_more_workers_is_reported_not_run():
    methods = [{"name": "big", "solver": "consensus", "min_workers": 3}]
    built = matrix.build_matrix(methods, ["gsm8k"], "local", 2, ALL)
    assert built.runs == [] and built.skipped == ["big: needs at least 3 workers; pool local has 2"]


def test_the_matrix_keeps_only_the_named_methods():
    built = matrix.build_matrix(METHODS, ["gsm8k"], "sim", 4, ALL, only=["router_dc", "smoothie_dependent"])
    assert [(r.method, r.options) for r in built.runs] == [
        ("smoothie_dependent", {"mode": "dependent", "pool": "sim"}),
        ("router_dc", {"pool": "sim"}),
    ]
    with pytest.raises(ValueError, match="unknown method"):
        matrix.build_matrix(METHODS, ["gsm8k"], "sim", 4, ALL, only=["routerdc"])


def test_a_bad_methods_file_is_named(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text("methods:\n  - {name: x, solver: conductor, option: {a: 1}}\n")
    with pytest.raises(ValueError, match="unknown keys \\['option'\\]"):
        matrix.load_matrix(path)


def test_router_training_flags_per_pool():
    settings = {"default": {"runs": 5}, "local": {"runs": 1, "train-items": 8}}
    assert matrix.router_training_args(settings, "local") == ["--runs", "1", "--train-items", "8"]
    assert matrix.router_training_args(settings, "sim") == ["--runs", "5"]


def test_unknown_task_names_the_fix():
    with pytest.raises(ValueError, match="no task file tasks/gsm9k.py"):
        matrix.task_function("gsm9k")
    assert matrix.task_function("gpqa").__name__ == "gpqa_diamond"


# ----------------------------------------------------------------------------- a tiny eval-set


def tiny_samples(split: str = "test") -> list[Sample]:
    numbers = {"train": range(10, 22), "validation": range(30, 36), "test": range(50, 52)}[split]
    return [
        Sample(id=f"{split}{n}", input=numeric_prompt(f"What is {n} plus 0?"), target=str(n),
               metadata={"question": f"What is {n} plus 0?", "domain": "math", "check": "numeric"})
        for n in numbers
    ]  # fmt: skip


@task
def tiny() -> Task:
    return Task(dataset=tiny_samples(), scorer=numeric_match())


@pytest.mark.slow
def test_a_tiny_eval_set_on_the_sim_pool_trains_routers_and_resumes(tmp_path, monkeypatch, declare):
    monkeypatch.setenv("CONDUCTOR_BENCH_CACHE", str(tmp_path / "cache"))
    declare(Benchmark("tiny", "tiny", domain="math", answer="numeric", router_samples=tiny_samples))
    monkeypatch.setattr(matrix, "task_function", lambda name: tiny)
    methods = tmp_path / "methods.yaml"
    methods.write_text(
        "methods:\n"
        "  - {name: single_worker, solver: single_worker, per_worker: true}\n"
        "  - {name: router_dc, solver: router_dc, trained: true}\n"
        "  - {name: mas_router, solver: mas_router, trained: true}\n"
        "  - {name: not_here, solver: no_such_solver}\n"
        "router_training:\n"
        "  sim: {train-items: 8, val-items: 4, runs: 2, steps: 20, iterations: 2, batch-size: 4}\n"
    )
    argv = ["--tasks", "tiny", "--pool", "sim", "--limit", "1", "--log-dir", str(tmp_path / "logs"),
            "--matrix", str(methods)]  # fmt: skip
    assert matrix.main(argv) == 1  # ran, but a method is missing: said, and the exit status says so
    assert (tmp_path / "cache" / "routers" / "sim" / "router_dc.json").is_file()
    assert (tmp_path / "cache" / "routers" / "sim" / "mas_router.json").is_file()
    logs = [read_eval_log(info) for info in list_eval_logs(str(tmp_path / "logs"))]
    assert len(logs) == 6 and all(log.status == "success" for log in logs)
    methods_seen = sorted(log.samples[0].metadata["conductor"]["method"] for log in logs)
    assert methods_seen == ["mas_router", "router_dc", *["single_worker"] * 4]
    labels = sorted(log.eval.metadata["matrix_method"] for log in logs)
    assert labels == [
        "mas_router",
        "router_dc",
        "single_worker_w0",
        "single_worker_w1",
        "single_worker_w2",
        "single_worker_w3",
    ]
    assert all(log.samples[0].metadata["conductor"]["calls"] >= 1 for log in logs)
    matrix.main(argv)  # resumed: everything is done, nothing new
    assert len(list_eval_logs(str(tmp_path / "logs"))) == 6


def test_smoothie_runs_on_a_two_worker_pool_with_two_answers_each(tmp_path, monkeypatch):
    monkeypatch.setattr(matrix, "task_function", lambda name: tiny)
    pool = tmp_path / "two.yaml"
    pool.write_text(
        "name: two\ndescription: two simulated workers\n"
        "conductor: {model: local/smollm2-135m}\n"
        "workers:\n  - {model: sim/math-strong}\n  - {model: sim/mediocre}\n"
    )
    methods = tmp_path / "methods.yaml"
    methods.write_text(
        "methods:\n"
        "  - {name: smoothie_dependent, solver: smoothie, min_outputs: 3,\n"
        "     options: {mode: dependent, embeddings: hash}}\n"
    )
    argv = ["--tasks", "tiny", "--pool", str(pool), "--limit", "2", "--log-dir", str(tmp_path / "logs"),
            "--matrix", str(methods)]  # fmt: skip
    assert matrix.main(argv) == 0
    [log] = [read_eval_log(info) for info in list_eval_logs(str(tmp_path / "logs"))]
    assert log.status == "success" and log.eval.metadata["matrix_method"] == "smoothie_dependent_k2"
    for sample in log.samples:
        meta = sample.metadata["conductor"]
        assert meta["method"] == "smoothie" and meta["agent_calls"] == 4
        assert meta["selection"]["samples_per_worker"] == 2 and len(meta["selection"]["candidates"]) == 4
        assert [s["worker"] for s in meta["round"]["steps"]] == [0, 0, 1, 1]


@pytest.mark.parametrize("pool, replacement", [("local", "local/smollm2-135m"), ("paper", "openai/gpt-5")])
def test_the_ablation_presets_are_valid_conductor_options(pool, replacement):
    from inspect_ai._util.registry import registry_create

    methods = matrix.load_matrix(matrix.MATRIX_FILE.with_name("ablations.yaml"))["methods"]
    built = matrix.build_matrix(methods, ["math500"], pool, len(load_pool(pool).workers), matrix.registered_solvers())
    assert built.missing == [] and built.skipped == [] and len(built.runs) == 7
    options = {r.method: r.options for r in built.runs}
    assert options["no_subtasks"]["subtasks"] == "fixed" and options["fine_grained_access"]["access"] == "indices"
    assert [options[f"few_shot_{s}"]["few_shot"] for s in ("in_distribution", "mixed")] == ["in_distribution", "mixed"]
    assert options["no_few_shot"]["few_shot"] == "none" and options["replace_workers"]["replace_workers"] == replacement
    for run in built.runs:  # the conductor checks its options when built
        registry_create("solver", run.solver, **run.options)


def test_progress_is_a_line_per_quarter_of_a_runs_evals_with_its_failures():
    from solvers.matrix_progress import Quarters

    said: list[str] = []
    quarters = Quarters(said.append)
    quarters.begin(5)
    for status in ("success", "error", "success", "success", "success"):
        quarters.end(status)
    assert [line.split(" (")[0] for line in said] == [
        "evals ended: 2/5, 1 ended in error",
        "evals ended: 3/5, 1 ended in error",
        "evals ended: 4/5, 1 ended in error",
        "evals ended: 5/5, 1 ended in error",
    ]
    quarters.begin(1)  # a resumed or retried run counts its own evals
    quarters.end("success")
    assert said[-1].startswith("evals ended: 1/1 (")
