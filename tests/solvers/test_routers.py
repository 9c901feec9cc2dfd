"""Trained routers: RouterDC and MASRouter learn the obviously best worker per question
cluster from small synthetic tables, save and load, route inside their solvers (scripted
models), and the outcome cache never re-runs a cached outcome."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes
from scripted import scripted

from solvers.executor import Worker
from solvers.routers import mas_router as mas
from solvers.routers import router_dc as dc
from solvers.routers.data import Item, check_item
from solvers.routers.features import DEFAULT_SOURCE, featurize
from solvers.routers.outcomes import JsonlCache, accuracy_table, collect_outcomes, worker_key
from solvers.routers.solvers import mas_router, router_dc

TOPICS = {  # topic words -> the worker that is right on it
    "triangle circle angle radius polygon": 0,
    "dice coin probability chance lottery": 1,
    "polynomial root equation factor quadratic": 2,
}


def questions(n: int, seed: int) -> tuple[list[str], list[int]]:
    rng = np.random.default_rng(seed)
    texts, best = [], []
    for i in range(n):
        words, worker = list(TOPICS.items())[i % len(TOPICS)]
        texts.append(" ".join(rng.choice(words.split(), 5)) + f" number {rng.integers(10_000)}")
        best.append(worker)
    return texts, best


def score_table(best: list[int], k: int = 3) -> np.ndarray:
    scores = np.full((len(best), k), 0.2)
    scores[np.arange(len(best)), best] = 0.8
    return scores


def trained_dc(workers=("w0", "w1", "w2"), steps=150) -> dc.RouterDC:
    texts, best = questions(90, 0)
    val_texts, val_best = questions(30, 1)
    return dc.train(
        featurize(texts), score_table(best), featurize(val_texts), score_table(val_best),
        list(workers), dict(DEFAULT_SOURCE), dc.DCConfig(steps=steps, eval_every=10),
    )  # fmt: skip


def test_router_dc_gradients_match_finite_differences():
    rng = np.random.default_rng(3)
    params = {"W": rng.normal(size=(10, 4)), "b": rng.normal(size=4), "E": rng.normal(size=(3, 4))}
    x, scores = rng.normal(size=(6, 10)), rng.random((6, 3))
    terms, labels = dc.sample_llm_terms(scores, 2, 2), np.array([0, 0, 1, 1, 2, 2])
    config = dc.DCConfig(temperature=0.5, negatives=1, sample_weight=0.5)

    def loss() -> float:
        return dc.loss_and_grads(params, x, terms, labels, config, np.random.default_rng(9))[0]

    _, grads = dc.loss_and_grads(params, x, terms, labels, config, np.random.default_rng(9))
    for name, value in params.items():
        index = (1,) * value.ndim
        old = value[index]
        value[index] = old + 1e-5
        up = loss()
        value[index] = old - 1e-5
        down = loss()
        value[index] = old
        assert abs((up - down) / 2e-5 - grads[name][index]) < 1e-6


def test_sample_llm_terms_follow_routerdc():
    terms = dc.sample_llm_terms(np.array([[1.0, 0.0, 0.6, 0.2]]), top_k=3, last_k=3)[0]
    # positives: the three best with a score > 0; negatives: the three worst scoring <= 0.5
    assert terms == [(0, [1, 3]), (2, [1, 3]), (3, [1])]
    assert dc.sample_llm_terms(np.array([[0.0, 0.0]]), 3, 3) == [[]]  # nobody solved it: no pull


@pytest.mark.slow
def test_router_dc_learns_the_best_worker_per_cluster():
    router = trained_dc()
    texts, best = questions(30, 7)
    assert list(router.route(featurize(texts))) == best
    assert router.info["val_accuracy"] == pytest.approx(0.8)  # the oracle on this table
    assert router.info["best_step"] > 0


def test_router_dc_save_load_routes_the_same(tmp_path):
    router = trained_dc(steps=60)
    path = tmp_path / "dc.json"
    dc.save(router, path)
    loaded = dc.RouterDC.from_dict(json.loads(path.read_text()))
    texts, _ = questions(12, 5)
    assert np.allclose(loaded.similarities(featurize(texts)), router.similarities(featurize(texts)))
    assert loaded.workers == ["w0", "w1", "w2"] and loaded.source == DEFAULT_SOURCE
    with pytest.raises(ValueError, match="not a router_dc router file"):
        dc.RouterDC.from_dict({"kind": "mas_router"})


def synthetic_execute(best: list[int]):
    async def execute(index: int, plan: mas.Plan) -> tuple[bool, float | None]:
        workflow = mas.plan_workflow(plan)
        return workflow.model_ids[-1] == best[index], 0.0

    return execute


def test_mas_router_learns_the_worker_that_answers_last():
    texts, best = questions(60, 0)
    val_texts, val_best = questions(30, 1)
    router = asyncio.run(
        mas.train(
            featurize(texts),
            ["math"] * 60,
            synthetic_execute(best),
            featurize(val_texts),
            ["math"] * 30,
            synthetic_execute(val_best),
            ["w0", "w1", "w2"],
            dict(DEFAULT_SOURCE),
            mas.MASConfig(batch_size=32, iterations=30, lr=0.05),
        )  # fmt: skip
    )
    test_texts, test_best = questions(30, 9)
    picks = [mas.plan_workflow(router.greedy(x, "math")).model_ids[-1] for x in featurize(test_texts)]
    assert picks == test_best
    assert router.info["val_accuracy"] == 1.0 and router.info["best_iteration"] > 0


def test_mas_plans_become_workflows():
    solver, checker = 0, 1  # math roles
    chain = mas.plan_workflow(mas.Plan("chain", (solver, checker), (2, 0)))
    assert chain.model_ids == (2, 0) and chain.access == ((), "all")
    ensemble = mas.plan_workflow(mas.Plan("ensemble", (solver, checker, solver), (1, 2, 0)))
    assert ensemble.model_ids == (1, 2, 0, 1) and ensemble.access == ((), (), (), "all")
    assert ensemble.subtasks[-1] == mas.DECIDE
    debate = mas.plan_workflow(mas.Plan("debate", (solver, checker), (0, 1)))
    assert debate.model_ids == (0, 1, 0, 1) and debate.access == ((), (), "all", "all")
    single = mas.plan_workflow(mas.Plan("single", (checker,), (3,)))
    assert single.model_ids == (3,) and single.subtasks == (mas.ROLE_LIST[checker][2],)


def test_mas_roles_stay_in_the_domain():
    router = mas.MASRouter.init(8, ["a", "b"], dict(DEFAULT_SOURCE), max_agents=4, seed=1)
    rng = np.random.default_rng(0)
    for domain in ("math", "mmlu", "lcb", "rlpr"):
        allowed = set(mas.domain_roles(domain))
        for _ in range(20):
            plan = router.decide(rng.normal(size=8), domain, lambda p: int(rng.choice(len(p), p=p)))
            assert set(plan.roles) <= allowed and 1 <= len(plan.workers) <= 4


# ----------------------------------------------------------------------------- outcomes cache


def item(i: int) -> Item:
    return Item("math500", f"q{i}", f"question {i}", f"What is {i}?", str(i), "math", "math")


def test_outcomes_are_cached_and_never_run_twice(tmp_path):
    right = scripted(lambda messages: "ANSWER: " + messages[-1].text.split()[-1].rstrip("?"))
    wrong = scripted("ANSWER: -1")
    workers = [Worker(right, "right"), Worker(wrong, "wrong")]
    items = [item(i) for i in range(3)]
    cache = JsonlCache(tmp_path / "outcomes.jsonl")
    report = asyncio.run(collect_outcomes(items, lambda it, run: workers, "p", cache, runs=2))
    assert (report.ran, report.cached) == (12, 0) and len(right.calls) == 6 and len(wrong.calls) == 6
    reloaded = JsonlCache(tmp_path / "outcomes.jsonl")
    report = asyncio.run(collect_outcomes(items, lambda it, run: workers, "p", reloaded, runs=3))
    assert (report.ran, report.cached) == (6, 12)  # only the new third run is asked for
    assert len(right.calls) == 9 and len(wrong.calls) == 9
    scores, kept = accuracy_table(items, [worker_key(0, workers[0]), worker_key(1, workers[1])], "p", reloaded, 3)
    assert kept == items and scores.tolist() == [[1.0, 0.0]] * 3


def test_failed_calls_are_not_cached(tmp_path):
    broken = scripted("x", fail=RuntimeError("503"))
    cache = JsonlCache(tmp_path / "o.jsonl")
    report = asyncio.run(collect_outcomes([item(1)], lambda it, run: [Worker(broken, "b")], "p", cache, runs=2))
    assert report.failed == 2 and not cache.records
    scores, kept = accuracy_table([item(1)], ["0:b"], "p", cache, 2)
    assert kept == [] and scores.shape == (0, 1)


def test_a_corrupt_cache_line_is_named(tmp_path):
    path = tmp_path / "o.jsonl"
    path.write_text('{"pool": "p"}\nnot json\n')
    with pytest.raises(ValueError, match="line 1 is not a cache record"):
        JsonlCache(path)


def test_items_are_scored_by_the_task_check():
    assert check_item(Item("gsm8k", "a", "q", "p", "18", "numeric", "math"), "ANSWER: 18").correct
    choice = Item("mmlu", "b", "q", "p", "C", "choice", "mmlu", ("w", "x", "y", "z"))
    assert check_item(choice, "ANSWER: C").correct and not check_item(choice, "ANSWER: B").correct


# ----------------------------------------------------------------------------- solvers


def run_solver(solver, workers):
    task = Task(dataset=[Sample(input="What is the triangle angle sum?", target="180", id="s1",
                                metadata={"question": "triangle circle angle radius polygon"})],
                solver=solver, scorer=includes())  # fmt: skip
    [log] = eval(task, model="mockllm/model", model_roles={"workers": workers}, display="none", log_dir=None)
    assert log.status == "success", log.error
    return log.samples[0]


@pytest.mark.slow
def test_router_dc_solver_sends_the_question_to_the_routed_worker(tmp_path):
    path = tmp_path / "dc.json"
    dc.save(trained_dc(workers=["mockllm/model"] * 3), path)
    workers = [scripted("ANSWER: 180"), scripted("ANSWER: 1"), scripted("ANSWER: 2")]
    sample = run_solver(router_dc(router_file=str(path)), workers)
    meta = sample.metadata["conductor"]
    assert meta["method"] == "router_dc" and meta["router"]["choice"] == 0 and meta["pool_indices"] == [0]
    assert meta["agent_calls"] == 1 and meta["conductor_calls"] == 0 and meta["input_tokens"] > 0
    assert [len(w.calls) for w in workers] == [1, 0, 0]
    assert sample.scores["includes"].value == "C"
    assert meta["settings"]["router_file"] == str(path) and meta["settings"]["on_error"] == "continue"


def test_mas_router_solver_runs_its_plan_on_the_executor(tmp_path):
    path = tmp_path / "mas.json"
    router = mas.MASRouter.init(DEFAULT_SOURCE["dim"], ["mockllm/model"] * 2, dict(DEFAULT_SOURCE), max_agents=3)
    router.params["mode"][-1, mas.MODES.index("ensemble")] = 50.0  # bias: ensemble of
    router.params["count"][-1, 0] = 50.0  # two agents
    router.params["worker"][-1, 1] = 50.0  # all on worker 1
    mas.save(router, path)
    workers = [scripted("ANSWER: 7"), scripted("ANSWER: 180")]
    sample = run_solver(mas_router(router_file=str(path)), workers)
    meta = sample.metadata["conductor"]
    assert meta["method"] == "mas_router" and meta["router"]["plan"]["mode"] == "ensemble"
    assert meta["round"]["workflow"]["model_id"] == [1, 1, 1] and meta["agent_calls"] == 3
    assert [len(w.calls) for w in workers] == [0, 3]
    assert all(any("triangle angle sum" in m.text for m in call) for call in workers[1].calls)  # every step
    assert sample.scores["includes"].value == "C"
    assert meta["settings"]["router_file"] == str(path)


def test_router_solvers_name_a_missing_file_and_the_training_command(tmp_path):
    with pytest.raises(ValueError, match="python -m solvers.routers.train router_dc"):
        router_dc(router_file=str(tmp_path / "none.json"))


def test_a_router_refuses_a_different_pool(tmp_path):
    path = tmp_path / "dc.json"
    dc.save(trained_dc(workers=["a", "b", "c"], steps=10), path)
    task = Task(dataset=[Sample(input="q", target="1")], solver=router_dc(router_file=str(path)), scorer=includes())
    workers = [scripted("1"), scripted("2"), scripted("3")]
    [log] = eval(task, model="mockllm/model", model_roles={"workers": workers}, display="none", log_dir=None)
    assert log.status == "error" and "trained for workers" in str(log.error)


def test_an_embeddings_source_from_workers_embeddings():
    from solvers.routers.features import source_from_option

    source = source_from_option("hash:64")
    assert source == {"kind": "embeddings", "spec": "hash:64"} and source_from_option(None) == DEFAULT_SOURCE
    rows = featurize(["a triangle", "a coin"], source)
    assert rows.shape == (2, 64) and np.allclose(np.linalg.norm(rows, axis=1), 1.0)
    with pytest.raises(ValueError, match="unknown embedding source"):
        featurize(["x"], {"kind": "bert"})


def test_training_on_the_sim_pool_reuses_cached_outcomes(tmp_path, monkeypatch, declare):
    from inspect_ai.dataset import Sample as S

    from solvers.routers import train
    from tasks.catalog import Benchmark
    from tasks.prompts import numeric_prompt

    def samples(split: str) -> list[S]:
        numbers = range(10, 18) if split == "train" else range(30, 34)
        return [S(id=f"{split}{n}", input=numeric_prompt(f"{n} + 0?"), target=str(n),
                  metadata={"question": f"{n} + 0?"}) for n in numbers]  # fmt: skip

    monkeypatch.setenv("CONDUCTOR_BENCH_CACHE", str(tmp_path))
    declare(Benchmark("tiny", "tiny", domain="math", answer="numeric", router_samples=samples))
    argv = ["router_dc", "--pool", "sim", "--task", "tiny", "--train-items", "8", "--val-items", "4",
            "--runs", "3", "--steps", "10", "--out", str(tmp_path / "r.json")]  # fmt: skip
    first = train.main(argv)
    assert first["outcomes"] == {"requested": 144, "cached": 0, "ran": 144, "failed": 0}  # 12 items x 3 runs x 4
    second = train.main(argv)
    assert second["outcomes"] == {"requested": 144, "cached": 144, "ran": 0, "failed": 0}
    assert second["val_worker_accuracy"] == first["val_worker_accuracy"]
    assert dc.RouterDC.from_dict(json.loads((tmp_path / "r.json").read_text())).workers[0] == "sim/math-strong"


def test_training_options_are_checked_before_any_work():
    from solvers.routers import train

    with pytest.raises(ValueError, match="--steps=0: expected a number > 0"):
        train.main(["router_dc", "--pool", "sim", "--steps", "0"])
    with pytest.raises(ValueError, match="--cost-rate=-1.0: expected a number >= 0"):
        train.main(["mas_router", "--pool", "sim", "--cost-rate", "-1"])
