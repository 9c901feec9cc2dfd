"""Cost-aware GRPO reward (`cost_weight`, `cost_charge`): hand-computed values, its range and
order, the reward and the recipe options end to end on scripted workers."""

import pytest
from scripted import scripted

import training.rewards
from solvers.executor import Worker
from training.rewards import ConductorReward, check_cost_options, cost_aware_reward, cost_reference
from workers.pools import ModelSpec, PoolSpec, Price, load_pool

REF = 0.01  # USD
ONE_STEP = 'model_id = [{m}]\nsubtasks = ["Solve it and end with ANSWER: <number>."]\naccess_list = [[]]'


def reward(base, correct, cost, weight=0.25, charge="always"):
    return cost_aware_reward(base, correct, cost, weight=weight, charge=charge, reference_usd=REF)


def test_cost_reference_is_the_most_expensive_worker_at_1000_in_1000_out():
    # sim premium: 5 USD/M input, 25 USD/M output -> 1000 * 5e-6 + 1000 * 25e-6
    assert cost_reference(load_pool("sim")) == pytest.approx(0.03)


def test_hand_computed_rewards():
    assert reward(1.0, True, 0.001) == pytest.approx(1 - 0.25 * 0.1)  # 0.975
    assert reward(0.5, False, 0.001) == pytest.approx(0.5 - 0.25 * 0.1)  # 0.475
    assert reward(1.0, True, 0.05) == pytest.approx(0.75)  # normalised cost clipped at 1
    assert reward(0.5, False, 0.05) == pytest.approx(0.25)
    assert reward(0.0, False, 0.0) == 0.0  # unparseable: no worker ran
    assert reward(0.5, False, 0.05, charge="correct") == 0.5  # a wrong answer is not charged
    assert reward(1.0, True, 0.005, charge="correct") == pytest.approx(1 - 0.25 * 0.5)
    assert reward(1.0, True, 0.05, weight=0.0) == 1.0  # the paper's reward
    assert reward(0.1, False, 0.05, weight=0.4) == 0.0  # a low recursive reward is clipped at 0


@pytest.mark.parametrize("charge", ["always", "correct"])
@pytest.mark.parametrize("weight", [0.0, 0.1, 0.25, 0.49])
def test_any_cost_keeps_correct_above_wrong_above_unparseable(weight, charge):
    for cost_correct in (0.0, 0.003, REF, 1.0):
        for cost_wrong in (0.0, 0.003, REF, 1.0):
            correct = reward(1.0, True, cost_correct, weight, charge)
            wrong = reward(0.5, False, cost_wrong, weight, charge)
            assert 1.0 >= correct > wrong > 0.0 == reward(0.0, False, 0.0, weight, charge)


def test_bad_options_are_refused_with_the_fix():
    with pytest.raises(ValueError, match=r"0 <= cost_weight < 0.5"):
        check_cost_options(0.5, "always")
    with pytest.raises(ValueError, match=r"0 <= cost_weight < 0.5"):
        check_cost_options(-0.1, "always")
    with pytest.raises(ValueError, match=r"cost_charge must be always \| correct"):
        check_cost_options(0.1, "wrong")
    unpriced = PoolSpec(name="u", workers=(ModelSpec("mockllm/a", price=Price(1, 1)), ModelSpec("mockllm/b")))
    with pytest.raises(ValueError, match="mockllm/b has no price"):
        cost_reference(unpriced)
    free = PoolSpec(name="f", workers=(ModelSpec("mockllm/a", price=Price(0, 0)),))
    with pytest.raises(ValueError, match="cost_reference_usd"):
        cost_reference(free)
    with pytest.raises(ValueError, match="mockllm/b has no price"):
        ConductorReward(unpriced, cost_weight=0.1, cost_reference_usd=1.0)
    with pytest.raises(ValueError, match="cost_reference_usd must be > 0"):
        ConductorReward(free, cost_weight=0.1, cost_reference_usd=0.0)


# output prices only (USD per million tokens); scripted replies are 5 output tokens
POOL = PoolSpec(
    name="priced",
    workers=tuple(ModelSpec(f"mockllm/w{i}", price=Price(0, out)) for i, out in enumerate([0, 100, 0, 2000])),
)


@pytest.fixture
def pool_models(monkeypatch):
    models = [scripted(r) for r in ["ANSWER: 41", "ANSWER: 42", "ANSWER: 40", "ANSWER: 42"]]

    def pool_workers(pool, temperature, max_tokens, constraint, task):
        return [Worker(m, s.model, s.description, s.price) for m, s in zip(models, pool.workers, strict=True)]

    monkeypatch.setattr(training.rewards, "pool_workers", pool_workers)
    return models


def columns(n):
    row = {"question": "What is 6 x 7?", "target": "42", "check": "numeric", "choices": None,
           "pool_indices": [0, 1, 2, 3], "domain": "math", "item_id": "q1"}  # fmt: skip
    return {key: [value] * n for key, value in row.items()}


async def test_reward_charges_worker_cost(pool_models, tmp_path):
    completions = [ONE_STEP.format(m=m) for m in (1, 3, 0)] + ["no lists"]
    log = tmp_path / "rollouts.jsonl"
    paper = ConductorReward(POOL)
    assert await paper(["p"] * 4, completions, **columns(4)) == [1.0, 1.0, 0.5, 0.0]
    charged = ConductorReward(POOL, cost_weight=0.4, cost_reference_usd=REF, rollout_log=log)
    # w1: 5 tokens x 100 USD/M = 0.0005 USD -> 0.05 of REF; w3: 0.01 USD -> 1.0; w0 free
    assert await charged(["p"] * 4, completions, **columns(4)) == pytest.approx([0.98, 0.6, 0.5, 0.0])
    assert charged.last_metrics["cost_penalty_mean"] == pytest.approx((0.02 + 0.4) / 4)
    only_correct = ConductorReward(POOL, cost_weight=0.4, cost_charge="correct", cost_reference_usd=REF)
    wrong_premium = [ONE_STEP.format(m=3)]
    pool_models[3] = scripted("ANSWER: 7")
    assert await only_correct(["p"], wrong_premium, **columns(1)) == [0.5]


def test_recipe_options_reach_the_reward(tmp_path, monkeypatch):
    pytest.importorskip("trl")
    from training_fixtures import data_files

    from training.options import parse
    from training.train import main

    made = {}

    class Spy(ConductorReward):
        def __init__(self, pool, **options):
            super().__init__(pool, **options)
            made.update(options, reference=self.cost_reference_usd)

    monkeypatch.setattr(training.rewards, "ConductorReward", Spy)
    files = [a for k, v in data_files(tmp_path, n_math=800, n_mmlu=500).items() for a in (f"--{k}", v)]
    main(["training/recipes/sim-routing.yaml", "--cost_weight", "0.2", "--cost_charge", "correct",
          "--output_dir", str(tmp_path / "out"), "--dry_run", "true", *files])  # fmt: skip
    assert (made["cost_weight"], made["cost_charge"], made["reference"]) == (0.2, "correct", pytest.approx(0.03))
    with pytest.raises(SystemExit, match="cost_weight"):
        parse(["training/recipes/sim-routing.yaml", "--cost_weight", "0.7", "--dry_run", "true"])
