"""Pure rollout metrics of the training reward (no Inspect, torch or TRL needed)."""

import json

import pytest

from training.rollouts import (
    RolloutLog,
    batch_metrics,
    clip,
    completion_text,
    credit_by_domain,
    read_rollouts,
    recursive_reward,
    supersede_after,
    workflow_refines,
)


def rollout(reward, **fields):
    base = {"reward": reward, "parsed": reward > 0, "correct": reward == 1.0, "rejection": None, "steps": 1,
            "workers": [0], "refines": False, "worker_input_tokens": 10, "worker_output_tokens": 5,
            "worker_cost_usd": 0.001, "conductor_tokens": 100, "agent_calls": 1, "domain": "math",
            "error": None}  # fmt: skip
    return {**base, **fields}


def test_refine_rule_is_a_later_step_reading_an_earlier_one():
    assert workflow_refines({"access_list": [[], ["all"]]})
    assert workflow_refines({"access_list": [[], [], [0]]})
    assert not workflow_refines({"access_list": [["all"]]})  # the first step has nothing to read
    assert not workflow_refines({"access_list": [[], [], []]})
    assert not workflow_refines(None) and not workflow_refines({"access_list": []})


def test_batch_metrics():
    rows = [
        rollout(1.0, steps=2, workers=[0, 2], refines=True),
        rollout(0.5, steps=3, workers=[2, 2, 1], domain="mmlu"),
        rollout(0.0, parsed=False, rejection="missing_list", steps=0, workers=[], agent_calls=0),
        rollout(0.0, parsed=False, rejection="unknown_worker", steps=0, workers=[], agent_calls=0),
    ]
    m = batch_metrics(rows, ["a", "b", "c"])
    assert m["reward_mean"] == pytest.approx(0.375)
    assert m["reward_std"] == pytest.approx(((0.625**2 + 0.125**2 + 2 * 0.375**2) / 4) ** 0.5)
    assert m["parse_rate"] == 0.5 and m["accuracy"] == 0.25
    assert m["rejection/missing_list"] == m["rejection/unknown_worker"] == 0.25
    assert m["steps_mean"] == 2.5 and m["refine_share"] == 0.5  # over parsed rollouts
    assert m["worker_share/2:c"] == 0.6 and m["worker_share/0:a"] == 0.2 and m["worker_share/1:b"] == 0.2
    assert m["worker_tokens_mean"] == 15 and m["worker_cost_usd_mean"] == pytest.approx(0.001)
    assert m["accuracy/math"] == pytest.approx(1 / 3) and m["reward_mean/mmlu"] == 0.5
    assert batch_metrics([]) == {}


def test_unknown_costs_are_not_averaged_as_zero():
    m = batch_metrics([rollout(1.0), rollout(0.5, worker_cost_usd=None)])
    assert "worker_cost_usd_mean" not in m and m["cost_unknown_share"] == 0.5
    assert "worker_share/pool_0" in m  # no names given


def test_recursive_reward_scales_the_first_round_and_normalises():
    assert recursive_reward(1.0, 1.0) == 1.0 and recursive_reward(0.0, 0.0) == 0.0
    assert recursive_reward(0.5, 1.0) == pytest.approx((0.125 + 1.0) / 1.25)
    assert recursive_reward(1.0, 0.5) == pytest.approx(0.75 / 1.25)
    # improving in the recursive round is worth more than having been right before it
    assert recursive_reward(0.5, 1.0) > recursive_reward(1.0, 0.5)
    assert recursive_reward(0.3, 0.9, first_weight=0.0) == 0.9
    with pytest.raises(ValueError, match="first_weight"):
        recursive_reward(1.0, 1.0, first_weight=-1)


def test_completion_text_plain_and_conversational():
    assert completion_text("abc") == "abc"
    assert completion_text([{"role": "assistant", "content": "model_id = [0]"}]) == "model_id = [0]"
    blocks = [{"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "image"}]}]
    assert completion_text(blocks) == "a"
    with pytest.raises(TypeError, match="completions"):
        completion_text(42)


def test_log_round_trip_and_clip(tmp_path):
    log = RolloutLog(tmp_path / "deep" / "r.jsonl")
    log.write([rollout(1.0), rollout(0.5)])
    log.write([rollout(0.0)])
    assert [r["reward"] for r in read_rollouts(tmp_path / "deep" / "r.jsonl")] == [1.0, 0.5, 0.0]
    assert clip("x" * 10, 4) == "xxxx... [6 more chars]" and clip("abc", 4) == "abc" and clip(None) is None


def test_supersede_after_moves_the_rerun_steps_aside(tmp_path):
    log = tmp_path / "rollouts.jsonl"
    log.write_text("".join(json.dumps({"step": s, "n": i}) + "\n" for i, s in enumerate((0, 0, 1, 2, 2))) + '{"ste')
    assert supersede_after(log, 2) == 2
    assert [json.loads(x)["step"] for x in log.read_text().splitlines()[:-1]] == [0, 0, 1]
    assert log.read_text().endswith('{"ste')  # a half line is kept, not guessed at
    assert [json.loads(x)["n"] for x in (tmp_path / "rollouts.jsonl.superseded").read_text().splitlines()] == [3, 4]
    assert supersede_after(log, 2) == 0 and supersede_after(tmp_path / "absent.jsonl", 0) == 0


def test_credit_sums_grpo_advantages_per_domain_and_final_worker():
    def row(step, item, domain, worker, reward):
        return {"step": step, "item_id": item, "domain": domain, "reward": reward,
                "worker_names": [worker] if worker else []}  # fmt: skip

    rows = [
        row(0, "q1", "math", "a", 1.0), row(0, "q1", "math", "b", 0.5),  # a beats b: +-0.707 each
        row(0, "q2", "mmlu", "a", 0.5), row(0, "q2", "mmlu", "b", 0.5), row(0, "q2", "mmlu", None, 0.0),
        row(1, "q1", "math", "a", 1.0), row(1, "q1", "math", "a", 1.0),  # one worker: no advantage
    ]  # fmt: skip
    credit = {(c["domain"], c["worker"]): c for c in credit_by_domain(rows)}
    assert credit[("math", "a")]["rollouts"] == 3 and credit[("math", "a")]["reward_mean"] == 1.0
    assert credit[("math", "a")]["advantage_sum"] == pytest.approx(0.707, abs=0.01)
    assert credit[("math", "b")]["advantage_sum"] == pytest.approx(-0.707, abs=0.01)
    # q2: mean 1/3, sample std 0.289 -> 0.577 each for a and b, -1.155 for the unparsed one
    assert credit[("mmlu", "a")]["advantage_sum"] == pytest.approx(0.577, abs=0.01)
    assert credit[("mmlu", "none")]["advantage_sum"] == pytest.approx(-1.155, abs=0.01)
    assert sum(c["advantage_sum"] for c in credit.values()) == pytest.approx(0, abs=0.02)
