"""The baseline solvers with scripted models: calls, records, answer selection, options."""

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import GenerateConfig, get_model
from inspect_ai.scorer import includes
from scripted import output, scripted, user_texts

from solvers.baselines import (
    consensus,
    mixture_of_agents,
    random_workflow,
    self_reflection,
    single_worker,
    smoothie,
)
from solvers.moa import draw_aggregator
from solvers.random_workflow import random_workflow as draw_workflow

QUESTION = "What is 6 x 7? End with ANSWER: <number>."
HEADLINE = (
    "method", "parsed", "rejection", "steps", "agent_calls", "conductor_calls", "calls", "input_tokens",
    "output_tokens", "worker_cost_usd", "conductor_cost_usd", "cost_usd", "workers", "pool_indices", "round",
    "settings",
)  # fmt: skip


def run(solver, workers, samples=None, **options):
    task = Task(
        dataset=samples or [Sample(input=QUESTION, target="42", id="q1")],
        solver=solver,
        scorer=includes(),
    )
    [log] = eval(task, model="mockllm/model", model_roles={"workers": workers}, display="none", log_dir=None, **options)
    assert log.status == "success", log.error
    return log


def meta_of(log, i=0):
    return log.samples[i].metadata["conductor"]


@pytest.mark.slow
def test_every_baseline_stores_the_conductor_headline_keys():
    pool = [scripted("ANSWER: 42"), scripted("ANSWER: 42"), scripted("ANSWER: 41")]
    for solver, name in [
        (single_worker(), "single_worker"),
        (self_reflection(rounds=1), "self_reflection"),
        (consensus(samples=2), "consensus"),
        (mixture_of_agents(), "mixture_of_agents"),
        (smoothie(embeddings="hash"), "smoothie"),
        (random_workflow(), "random_workflow"),
    ]:
        meta = meta_of(run(solver, pool))
        assert set(HEADLINE) <= set(meta), name
        assert meta["method"] == name and meta["conductor"] is None and meta["conductor_calls"] == 0
        assert meta["calls"] == meta["agent_calls"] == len(meta["round"]["steps"]) >= 1
        assert meta["input_tokens"] == sum(s["usage"]["input_tokens"] for s in meta["round"]["steps"])


# ---------------------------------------------------------------- self-reflection


def test_self_reflection_revises_with_every_attempt_and_stops_when_unchanged():
    def reply(messages):
        attempts = len(messages) // 2  # question, then (attempt, revise turn) pairs
        return ["I guess ANSWER: 40", "Fixed: ANSWER: 42", "Still ANSWER: 42", "never asked"][attempts]

    worker = scripted(reply)
    meta = meta_of(run(self_reflection(worker=0, rounds=5), [worker]))
    assert len(worker.calls) == 3 and meta["agent_calls"] == 3
    last = worker.calls[-1]
    assert [m.role for m in last] == ["user", "assistant", "user", "assistant", "user"]
    assert last[0].text == QUESTION and last[1].text == "I guess ANSWER: 40" and last[3].text == "Fixed: ANSWER: 42"
    assert meta["selection"] == {"check": "math", "answers": ["40", "42", "42"], "stopped": "unchanged", "revisions": 2}
    assert meta["round"]["workflow"]["access_list"] == [[], ["all"], ["all"]]
    assert meta["round"]["answer"] == "Still ANSWER: 42"


def test_self_reflection_runs_every_round_with_stop_never():
    worker = scripted("ANSWER: 42")
    meta = meta_of(run(self_reflection(rounds=3, stop="never"), [worker]))
    assert len(worker.calls) == 4 and meta["selection"]["stopped"] == "rounds"
    assert len(worker.calls[-1]) == 7  # the question, 3 attempts and 3 revise turns


def test_self_reflection_keeps_the_last_good_attempt_when_a_call_fails():
    state = {"n": 0}

    def reply(messages):
        state["n"] += 1
        if state["n"] == 2:
            raise RuntimeError("503")
        return "ANSWER: 42"

    meta = meta_of(run(self_reflection(rounds=4), [scripted(reply)]))
    assert meta["selection"]["stopped"] == "error" and meta["agent_calls"] == 2
    assert meta["selection"]["revisions"] == 0  # the failed call revised nothing
    assert meta["round"]["answer"] == "ANSWER: 42" and "503" in meta["round"]["steps"][1]["error"]


# ---------------------------------------------------------------- consensus


def counter_replies(texts):
    state = {"n": 0}

    def reply(messages):
        state["n"] += 1
        return texts[(state["n"] - 1) % len(texts)]

    return reply


def test_consensus_votes_by_the_tasks_check():
    worker = scripted(counter_replies(["ANSWER: 1/2", "ANSWER: 3", "ANSWER: 0.5", "ANSWER: 3", "ANSWER: \\frac12"]))
    log = run(consensus(samples=5, check="math"), [worker], [Sample(input="half?", target="1/2", id="q1")])
    meta = meta_of(log)
    assert len(worker.calls) == 5 and all(user_texts(c) == ["half?"] for c in worker.calls)
    sel = meta["selection"]
    assert sel["votes"] == [3, 2] and not sel["tie"]
    assert meta["round"]["answer"] == meta["round"]["steps"][sel["chosen_step"]]["output"]
    assert meta["round"]["steps"][sel["chosen_step"]]["output"] in ("ANSWER: 1/2", "ANSWER: 0.5", "ANSWER: \\frac12")


def test_consensus_tie_is_broken_by_the_first_answer_and_choices_are_letters():
    worker = scripted(counter_replies(["ANSWER: B", "ANSWER: A"]))
    sample = Sample(input="Pick one.", choices=["x", "y", "z"], target="B", id="q1")
    meta = meta_of(run(consensus(samples=4), [worker], [sample]))
    sel = meta["selection"]
    assert sel["check"] == "choice" and sel["votes"] == [2, 2] and sel["tie"]
    # concurrent calls finish in any order: the winner is the group of step 0's answer
    first = meta["round"]["steps"][0]["output"]
    assert meta["round"]["answer"] == first


def test_consensus_picks_the_named_worker():
    pool = [scripted("ANSWER: 1"), scripted("ANSWER: 42")]
    meta = meta_of(run(consensus(worker=1, samples=3), pool))
    assert len(pool[0].calls) == 0 and len(pool[1].calls) == 3
    assert meta["pool_indices"] == [1] and meta["round"]["answer"] == "ANSWER: 42"


# ---------------------------------------------------------------- mixture of agents


def test_moa_proposes_with_every_worker_and_aggregates_with_the_drawn_one():
    pool = [scripted(f"proposal {i}: ANSWER: 4{i}") for i in range(7)]
    log = run(mixture_of_agents(seed=3), pool)
    meta = meta_of(log)
    lead = draw_aggregator(7, 3, "q1/1")
    assert meta["agent_calls"] == 8 and meta["selection"]["aggregator"] == lead and meta["selection"]["drawn"]
    assert [len(w.calls) for w in pool] == [2 if i == lead else 1 for i in range(7)]
    aggregate = pool[lead].calls[-1]
    assert len(aggregate) == 1 and aggregate[0].text.startswith(QUESTION)
    assert all(f"proposal {i}: ANSWER: 4{i}" in aggregate[0].text for i in range(7))
    assert meta["round"]["workflow"]["model_id"] == [0, 1, 2, 3, 4, 5, 6, lead]
    assert meta["round"]["workflow"]["access_list"][-1] == ["all"]


def test_moa_aggregator_changes_with_the_seed_and_can_be_fixed():
    leads = {draw_aggregator(7, seed, "q1/1") for seed in range(20)}
    assert len(leads) > 1
    pool = [scripted("ANSWER: 1"), scripted("ANSWER: 2"), scripted("final ANSWER: 42")]
    meta = meta_of(run(mixture_of_agents(aggregator=2), pool))
    assert meta["selection"]["aggregator"] == 2 and not meta["selection"]["drawn"]
    assert meta["round"]["answer"] == "final ANSWER: 42"


def test_moa_leaves_failed_proposals_out():
    pool = [scripted("x", fail=RuntimeError("down")), scripted("ANSWER: 42"), scripted("ANSWER: 42")]
    meta = meta_of(run(mixture_of_agents(aggregator=1), pool))
    assert meta["selection"]["proposals"] == 2
    assert "### Response 3" not in pool[1].calls[-1][0].text


# ---------------------------------------------------------------- smoothie


def test_smoothie_chooses_the_agreeing_output_and_records_the_source():
    pool = [
        scripted("The product of six and seven is 42. ANSWER: 42"),
        scripted("Bananas are yellow fruit grown in the tropics."),
        scripted("Six times seven is 42. ANSWER: 42"),
        scripted("Multiplying six by seven gives 42. ANSWER: 42"),
    ]
    meta = meta_of(run(smoothie(embeddings="hash:128"), pool))
    sel = meta["selection"]
    assert sel["embeddings"] == "hash:128" and sel["mode"] == "dependent" and sel["fit_questions"] == 1
    assert sel["chosen_step"] != 1 and sel["deltas"][1] == max(sel["deltas"])
    assert "42" in meta["round"]["answer"] and meta["agent_calls"] == 4


def test_smoothie_independent_fits_over_the_tasks_questions():
    pool = [scripted("alpha beta"), scripted("alpha beta gamma"), scripted("alpha delta")]
    samples = [Sample(input=f"q{i}", target="x", id=f"q{i}") for i in range(3)]
    log = run(smoothie(mode="independent", embeddings="hash"), pool, samples, max_samples=1)
    fits = sorted(s.metadata["conductor"]["selection"]["fit_questions"] for s in log.samples)
    assert fits == [1, 2, 3]


def test_smoothie_refuses_fewer_than_three_candidates_and_names_the_fix():
    task = Task(dataset=[Sample(input="q", target="x")], solver=smoothie(embeddings="hash"), scorer=includes())
    [log] = eval(
        task,
        model="mockllm/model",
        model_roles={"workers": [scripted("a"), scripted("b")]},
        display="none",
        log_dir=None,
    )
    assert log.status == "error"
    assert "at least 3 candidate outputs" in str(log.error) and "-S samples_per_worker=2" in str(log.error)


def by_seed(replies):
    """A mock worker whose answer depends on the call's sampling seed (seeds kept in `.seeds`)."""
    seeds = []

    async def respond(messages, tools, tool_choice, config):
        seeds.append(config.seed)
        return output(replies[config.seed])

    model = get_model("mockllm/model", custom_outputs=respond, memoize=False)
    model.seeds = seeds
    return model


def test_smoothie_on_two_workers_draws_seeded_samples_as_candidates():
    agreeing = {None: "Six times seven is 42. ANSWER: 42", 1: "Six times seven gives 42. ANSWER: 42"}
    scattered = {None: "Bananas are yellow fruit.", 1: "Paris is the capital of France."}
    pool = [by_seed(scattered), by_seed(agreeing)]
    meta = meta_of(run(smoothie(embeddings="hash:128", samples_per_worker=2), pool))
    sel = meta["selection"]
    assert sorted(pool[0].seeds, key=str) == sorted(pool[1].seeds, key=str) == [1, None]
    assert sel["samples_per_worker"] == 2 and sel["candidates"] == [[0, 0], [0, 1], [1, 0], [1, 1]]
    assert meta["agent_calls"] == 4 and [s["worker"] for s in meta["round"]["steps"]] == [0, 0, 1, 1]
    assert sel["chosen_worker"] == 1 and sel["chosen_step"] in (2, 3) and "ANSWER: 42" in meta["round"]["answer"]
    assert meta["settings"]["samples_per_worker"] == 2


def test_smoothie_samples_continue_from_a_configured_seed_and_refuse_greedy_workers():
    pool = [scripted("a b"), scripted("a c"), scripted("d")]
    for worker in pool:
        worker.config = worker.config.merge(GenerateConfig(seed=7))
    run(smoothie(embeddings="hash", samples_per_worker=3), pool)
    assert sorted(c.seed for c in pool[2].configs) == [7, 8, 9]
    task = Task(
        dataset=[Sample(input="q", target="x")],
        solver=smoothie(embeddings="hash", samples_per_worker=2, temperature=0),
        scorer=includes(),
    )
    [log] = eval(task, model="mockllm/model", model_roles={"workers": pool}, display="none", log_dir=None)
    assert log.status == "error" and "temperature 0" in str(log.error)


# ---------------------------------------------------------------- random workflow


def test_random_workflow_runs_the_drawn_workflow_on_the_executor():
    pool = [scripted(f"w{i} says ANSWER: 42") for i in range(4)]
    meta = meta_of(run(random_workflow(seed=5, max_steps=5), pool))
    drawn = draw_workflow(4, 5, 5, "q1/1")
    flow = meta["round"]["workflow"]
    assert flow["model_id"] == list(drawn.model_ids)
    assert flow["access_list"] == drawn.to_dict()["access_list"]
    assert sum(len(w.calls) for w in pool) == len(drawn) == meta["agent_calls"]
    assert meta["round"]["answer"] == f"w{drawn.model_ids[-1]} says ANSWER: 42"
    assert pool[drawn.model_ids[0]].calls[0][0].text.startswith(QUESTION)


# ---------------------------------------------------------------- options


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: self_reflection(rounds=-1), "-S rounds=-1"),
        (lambda: self_reflection(stop="sometimes"), "-S stop='sometimes'"),
        (lambda: consensus(samples=0), "-S samples=0"),
        (lambda: consensus(check="fuzzy"), "-S check='fuzzy'"),
        (lambda: mixture_of_agents(seed="x"), "-S seed='x'"),
        (lambda: mixture_of_agents(aggregator=-2), "-S aggregator=-2"),
        (lambda: smoothie(mode="global"), "-S mode='global'"),
        (lambda: smoothie(embeddings="hash:2"), "-S embeddings='hash:2'"),
        (lambda: smoothie(samples_per_worker=0), "-S samples_per_worker=0"),
        (lambda: random_workflow(max_steps=0), "-S max_steps=0"),
        (lambda: consensus(on_error="ignore"), "-S on_error='ignore'"),
        (lambda: single_worker(max_tokens=0), "-S max_tokens=0"),
    ],
)
def test_bad_options_fail_at_start_naming_the_option(make, message):
    with pytest.raises(ValueError, match="invalid solver option") as error:
        make()
    assert message in str(error.value)


def test_a_worker_outside_the_pool_is_named():
    task = Task(dataset=[Sample(input="q", target="x")], solver=consensus(worker=5), scorer=includes())
    [log] = eval(task, model="mockllm/model", model_roles={"workers": [scripted("a")]}, display="none", log_dir=None)
    assert log.status == "error" and "worker index 5 is not in the pool" in str(log.error)


def test_five_times_context_raises_the_budget_and_keeps_the_reasoning_setting():
    # the "5x context" preset: single_worker -S max_tokens=20480 on the constrained pool
    worker = scripted("ANSWER: 42")
    worker.config = worker.config.merge(GenerateConfig(max_tokens=4096, reasoning_tokens=128, temperature=0.2))
    meta = meta_of(run(single_worker(max_tokens=20480), [worker]))
    [config] = worker.configs
    assert (config.max_tokens, config.reasoning_tokens, config.temperature) == (20480, 128, 0.2)
    assert meta["settings"]["max_tokens"] == 20480
