"""The seed-fate table (experiments/seeds/fate.py) and the routing proxy (experiments/sim_routing/proxy.py)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

pd = pytest.importorskip("pandas")

from experiments.seeds.fate import fate_table, heldout_share, seed_fate  # noqa: E402
from experiments.sim_routing.proxy import DESIGNS, Knobs, lr_at, run_seed, summary  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("cell", "worker", "share"), [
    ("math-strong 0.95, choice-strong 0.05", "math-strong", 0.95),
    ("math-strong 0.95, choice-strong 0.05", "choice-strong", 0.05),
    ("premium 1.00", "math-strong", 0.0),
    ("no workflow", "math-strong", 0.0),
])  # fmt: skip
def test_heldout_share_reads_a_seed_table_cell(cell, worker, share):
    assert heldout_share(cell, worker) == share


def curves(math_best: list[float], mmlu_rival_in_math: list[float], mmlu_rival: list[float]) -> pd.DataFrame:
    rows = []
    for step, (best, rival_here, rival_there) in enumerate(zip(math_best, mmlu_rival_in_math, mmlu_rival, strict=True)):
        rows.append({"step": step, "domain": "math", "sim/math-strong": best, "sim/choice-strong": rival_here})
        rows.append({"step": step, "domain": "mmlu", "sim/math-strong": 0.5, "sim/choice-strong": rival_there})
    return pd.DataFrame(rows)


def test_seed_fate_reads_early_and_late_shares_and_the_coupling():
    fate = seed_fate(curves([0.1, 0.2, 0.8, 0.9], [0.1, 0.3, 0.2, 0.5], [0.2, 0.6, 0.4, 1.0]), early=2)
    assert fate["math early"] == pytest.approx(0.15) and fate["math late"] == pytest.approx(0.85)
    assert fate["math coupling"] == pytest.approx(1.0)  # choice-strong moved in step in both domains
    assert math.isnan(fate["mmlu coupling"])  # math-strong never moved on MMLU: no correlation


def test_fate_table_applies_the_90_percent_rule(tmp_path):
    cells = ["math-strong 0.90, premium 0.10", "math-strong 0.57, x 0.43"]
    table = {"seed": [1, 2], "worker MATH-500": cells, "worker MMLU": ["choice-strong 1.00"] * 2}
    pd.DataFrame(table).to_csv(tmp_path / "seeds.csv", index=False)
    table = fate_table(tmp_path)
    assert table["routes both"].tolist() == [True, False]


def test_a_seed_not_evaluated_has_no_held_out_shares(tmp_path):
    table = {"seed": [1, 2], "status": ["ok", "not evaluated (no seed-2/heldout-rows.json)"],
             "worker MATH-500": ["math-strong 1.00", None], "worker MMLU": ["choice-strong 1.00", None]}  # fmt: skip
    pd.DataFrame(table).to_csv(tmp_path / "seeds.csv", index=False)
    table = fate_table(tmp_path).set_index("seed")
    assert table.loc[1, "routes both"] is True and table.loc[2, "routes both"] is None
    assert math.isnan(table.loc[2, "math held-out"])  # not 0.0: nothing was measured


def test_proxy_learning_rate_warms_up_then_holds():
    knobs = Knobs(lr=0.4, lr_warmup=4)
    assert [lr_at(knobs, s) for s in (0, 3, 10)] == [pytest.approx(0.1), pytest.approx(0.4), pytest.approx(0.4)]


def test_proxy_is_seeded_and_its_verdict_follows_the_shares():
    first, again = run_seed(Knobs(), 7), run_seed(Knobs(), 7)
    assert first == again
    assert first["routes_both"] == (first["math"] >= 0.9 and first["mmlu"] >= 0.9)


def test_proxy_assigned_workers_route_more_seeds_than_free_sampling():
    seeds = range(100, 130)
    assert summary(Knobs(assign=4), seeds)["routes_both"] > summary(Knobs(), seeds)["routes_both"]


def test_proxy_committed_design_is_the_recipe():
    """The proxy row named after the committed recipe has the recipe's batch, groups, exploring and steps."""
    recipe = yaml.safe_load((ROOT / "training/recipes/sim-routing.yaml").read_text())
    knobs = DESIGNS["the same over 30 steps (the committed recipe)"]
    batch = recipe["per_device_train_batch_size"] * recipe["gradient_accumulation_steps"]
    assert knobs.generations == recipe["num_generations"]
    assert knobs.assign == recipe["explore_workers"]
    assert knobs.steps == recipe["max_steps"]
    assert knobs.questions * 2 * knobs.generations == batch  # questions per domain, two domains interleaved
    assert knobs.cost_weight == recipe["cost_weight"]


def test_proxy_one_rollout_per_worker_routes_more_seeds_than_half_the_group():
    seeds = range(100, 130)
    committed = DESIGNS["the same over 30 steps (the committed recipe)"]
    assert summary(committed, seeds)["routes_both"] > summary(Knobs(assign=4), seeds)["routes_both"]
