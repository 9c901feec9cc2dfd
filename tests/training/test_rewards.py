"""The GRPO reward: the solver's code path on scripted workers, the paper's 0 / 0.5 / 1, logs."""

import asyncio
import contextlib

import pytest
from inspect_ai.model import get_model
from scripted import output, scripted
from waits import WAIT_S

import training.rewards
from solvers.conducting import Settings, conductor_messages
from solvers.executor import Worker
from training.rewards import ConductorReward, random_pool, training_prompt
from training.rollouts import read_rollouts
from workers.pools import ModelSpec, PoolSpec

QUESTION = "What is 6 x 7?"
POOL = PoolSpec(
    name="test",
    workers=tuple(ModelSpec(f"mockllm/w{i}", description=f"member {i}") for i in range(4)),
)
ONE_STEP = 'model_id = [{m}]\nsubtasks = ["Solve it and end with ANSWER: <number>."]\naccess_list = [[]]'
CHECKED = (
    'model_id = [0, 1]\nsubtasks = ["Solve it.", "Check the answer above; end with ANSWER: <number>."]\n'
    'access_list = [[], ["all"]]'
)


def row(pool_indices=(0, 1, 2, 3), check="numeric", target="42", **extra):
    return {
        "question": QUESTION,
        "target": target,
        "check": check,
        "choices": None,
        "pool_indices": list(pool_indices),
        "domain": "math",
        "item_id": "q1",
        **extra,
    }


def columns(rows):
    return {key: [r[key] for r in rows] for key in rows[0]}


@pytest.fixture
def pool_models(monkeypatch):
    """Pool member i answers `replies[i]`; the reward builds its workers through `pool_workers`."""
    replies = ["ANSWER: 41", "ANSWER: 42", "ANSWER: 40", "ANSWER: 42"]
    models = [scripted(r) for r in replies]

    def pool_workers(pool, temperature, max_tokens, constraint, task):
        return [Worker(m, spec.model, spec.description) for m, spec in zip(models, pool.workers, strict=True)]

    monkeypatch.setattr(training.rewards, "pool_workers", pool_workers)
    return models


async def test_reward_is_one_half_and_zero(pool_models):
    reward = ConductorReward(POOL)
    completions = [ONE_STEP.format(m=1), ONE_STEP.format(m=0), "I would ask model 1."]
    rows = [row()] * 3
    assert await reward(["p"] * 3, completions, **columns(rows)) == [1.0, 0.5, 0.0]
    assert reward.last_metrics["parse_rate"] == pytest.approx(2 / 3)
    assert reward.last_metrics["rejection/missing_list"] == pytest.approx(1 / 3)
    assert len(pool_models[1].calls) == 1 and len(pool_models[0].calls) == 1


async def test_conversational_completions_and_choice_check(pool_models):
    reward = ConductorReward(POOL)
    pool_models[2].calls.clear()
    letters = scripted("After checking: ANSWER: C")
    pool_models[2] = letters
    completion = [{"role": "assistant", "content": "Model 2 knows.\n" + ONE_STEP.format(m=2)}]
    rows = [row(check="choice", target="C", choices=["a", "b", "c", "d"])]
    assert await reward(["p"], [completion], **columns(rows)) == [1.0]


async def test_worker_failure_is_a_wrong_answer_not_a_crash(monkeypatch):
    dead = scripted("x", fail=ConnectionError("503 overloaded"))

    def pool_workers(pool, *args):
        return [Worker(dead, s.model) for s in pool.workers]

    monkeypatch.setattr(training.rewards, "pool_workers", pool_workers)
    reward = ConductorReward(POOL)
    assert await reward(["p"], [ONE_STEP.format(m=0)], **columns([row()])) == [0.5]


async def test_a_harness_failure_is_logged_and_scored_as_wrong(pool_models, tmp_path):
    reward = ConductorReward(POOL, rollout_log=tmp_path / "r.jsonl")

    async def broken(answer, row):
        raise RuntimeError("sandbox unavailable")

    reward.check = broken
    rewards = await reward(["p"] * 2, [ONE_STEP.format(m=1), "nothing"], **columns([row(), row()]))
    assert rewards == [0.5, 0.0]
    first, second = read_rollouts(tmp_path / "r.jsonl")
    assert "sandbox unavailable" in first["error"] and first["parsed"]
    assert second["error"] is None and second["rejection"] == "missing_list"
    assert reward.last_metrics["harness_error_rate"] == 0.5


async def test_randomized_pool_prompt_lists_only_the_subset_and_ids_map_back(pool_models, tmp_path):
    subset = [3, 0]  # the prompt's Model 0 is pool member 3, Model 1 is member 0
    prompt = training_prompt(QUESTION, POOL, subset)
    [message] = prompt
    assert message["role"] == "user"
    models = message["content"].split("MODELS:\n")[1]
    assert models == "Model 0: member 3\nModel 1: member 0"
    assert message["content"] == conductor_messages(QUESTION, ["member 3", "member 0"], Settings())[0].text
    reward = ConductorReward(POOL, rollout_log=tmp_path / "r.jsonl")
    # "Model 0" of this prompt is pool member 3 (answers 42); Model 2 is not listed
    rewards = await reward(["p"] * 2, [ONE_STEP.format(m=0), ONE_STEP.format(m=2)], **columns([row(subset)] * 2))
    assert rewards == [1.0, 0.0]
    assert len(pool_models[3].calls) == 1 and pool_models[0].calls == [] and pool_models[2].calls == []
    first, second = read_rollouts(tmp_path / "r.jsonl")
    assert first["workers"] == [3] and first["worker_names"] == ["mockllm/w3"]
    assert second["rejection"] == "unknown_worker"
    assert reward.last_metrics["worker_share/3:mockllm/w3"] == 1.0


def test_random_pool_is_seeded_per_prompt_and_a_subset():
    draws = [random_pool(7, 3, 0, f"item-{i}") for i in range(30)]
    assert all(len(d) == 3 and len(set(d)) == 3 and set(d) <= set(range(7)) for d in draws)
    assert draws[0] == random_pool(7, 3, 0, "item-0") and len({tuple(d) for d in draws}) > 5
    shuffled = [random_pool(7, 3, 0, f"item-{i}", shuffle=True) for i in range(30)]
    assert [sorted(d) for d in shuffled] == draws  # the same members, in a seeded order
    assert any(d != sorted(d) for d in shuffled)
    assert random_pool(7, None, 0, "x") == list(range(7))


async def test_rollout_log_has_every_field_and_metrics_are_logged(pool_models, tmp_path):
    logged, extras = {}, {}
    reward = ConductorReward(POOL, rollout_log=tmp_path / "r.jsonl")

    class State:
        global_step = 7

    cols = columns([row(), row()])
    completions = [CHECKED, ONE_STEP.format(m=2)]
    rewards = await reward(
        ["p"] * 2,
        completions,
        completion_ids=[[1] * 30, [1] * 12],
        trainer_state=State(),
        log_metric=logged.__setitem__,
        log_extra=extras.__setitem__,
        **cols,
    )
    assert rewards == [1.0, 0.5]  # member 1 reads member 0's 41 and answers 42; member 2 says 40
    checked, single = read_rollouts(tmp_path / "r.jsonl")
    assert checked["step"] == 7 and checked["steps"] == 2 and checked["workers"] == [0, 1]
    assert checked["refines"] and not single["refines"]
    assert checked["conductor_tokens"] == 30 and checked["worker_output_tokens"] == 10
    assert checked["workflow"]["access_list"] == [[], ["all"]] and checked["answer"] == "ANSWER: 42"
    assert logged["conductor/refine_share"] == 0.5 and logged["conductor/steps_mean"] == 1.5
    assert logged["conductor/reward_mean"] == 0.75 and logged["conductor/accuracy/math"] == 0.5
    assert extras["rejection"] == ["", ""] and extras["workers"] == ["0 1", "2"]


async def test_rollouts_run_concurrently_within_the_bound(monkeypatch):
    active, peak, full = [0], [0], asyncio.Event()

    async def respond(messages, tools, tool_choice, config):
        active[0] += 1
        peak[0] = max(peak[0], active[0])
        if active[0] == bound:
            full.set()
        # wait until `bound` rollouts are inside their calls at once, however busy the machine
        # (a bound that admits fewer never gets there: the wait ends and `peak` says so)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(full.wait(), WAIT_S)
        await asyncio.sleep(0.01)
        active[0] -= 1
        return output("ANSWER: 42")

    model = get_model("mockllm/model", custom_outputs=respond, memoize=False)
    monkeypatch.setattr(
        training.rewards, "pool_workers", lambda pool, *a: [Worker(model, s.model) for s in pool.workers]
    )
    for bound in (8, 3):
        peak[0] = 0
        full.clear()
        reward = ConductorReward(POOL, max_concurrency=bound)
        rewards = await reward(["p"] * 8, [ONE_STEP.format(m=0)] * 8, **columns([row()] * 8))
        assert rewards == [1.0] * 8
        assert peak[0] == bound  # every rollout overlaps up to the bound, never beyond


def test_bad_options_and_columns_are_named():
    with pytest.raises(ValueError, match="on_error"):
        ConductorReward(POOL, settings={"on_error": "fail"})
    with pytest.raises(ValueError, match="unknown conductor setting.*max_step\\b.*valid:.*max_steps"):
        ConductorReward(POOL, settings={"max_step": 3})
    with pytest.raises(ValueError, match="max_concurrency"):
        ConductorReward(POOL, max_concurrency=0)
    reward = ConductorReward(POOL)
    bad = columns([row()])
    del bad["target"]
    with pytest.raises(ValueError, match="target"):
        asyncio.run(reward(["p"], ["x"], **bad))
    with pytest.raises(ValueError, match="check='regex'"):
        asyncio.run(reward(["p"], ["x"], **columns([row(check="regex")])))
    with pytest.raises(ValueError, match="pool_indices"):
        asyncio.run(reward(["p"], ["x"], **columns([row(pool_indices=[1, 1])])))


async def test_code_rollouts_are_scored_by_the_livecodebench_check_in_the_sandbox(monkeypatch, runner):
    import json
    from pathlib import Path

    record = json.loads((Path(__file__).parents[1] / "fixtures" / "lcb_sample.jsonl").read_text().splitlines()[0])
    assert record["question_id"] == "abc900_a"  # A + B on stdin
    right = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"
    wrong = "```python\na, b = map(int, input().split())\nprint(a - b)\n```"
    models = [scripted(right), scripted(wrong)]
    monkeypatch.setattr(
        training.rewards,
        "pool_workers",
        lambda pool, *a: [Worker(m, s.model) for m, s in zip(models, pool.workers, strict=True)],
    )
    reward = ConductorReward(PoolSpec("code", POOL.workers[:2]), runner=runner)
    code_row = row((0, 1), check="lcb", target="", domain="lcb", item_id="abc900_a", lcb_record=record)
    rewards = await reward(["p"] * 2, [ONE_STEP.format(m=0), ONE_STEP.format(m=1)], **columns([code_row] * 2))
    assert rewards == [1.0, 0.5]


async def test_simulated_pool_gets_each_rollouts_answer_key():
    """With the bundled `sim` pool (no monkeypatch) the reward hands every rollout its item's
    answer: the math-strong member wins on math, the choice-strong member on multiple choice."""
    reward = ConductorReward("sim")
    math_rows = [row(item_id=f"m{i}", domain="math") for i in range(30)]
    choice_rows = [
        row(check="choice", target="B", choices=["w", "x", "y", "z"], domain="mmlu", item_id=f"c{i}") for i in range(30)
    ]
    accuracy = {}
    for name, rows in (("math", math_rows), ("mmlu", choice_rows)):
        for member in (0, 1):  # math-strong, choice-strong
            await reward(["p"] * 30, [ONE_STEP.format(m=member)] * 30, **columns(rows))
            accuracy[name, member] = reward.last_metrics["accuracy"]
            assert reward.last_metrics["parse_rate"] == 1.0 and reward.last_metrics["harness_error_rate"] == 0
    assert accuracy["math", 0] > accuracy["math", 1] + 0.2
    assert accuracy["mmlu", 1] > accuracy["mmlu", 0] + 0.2
