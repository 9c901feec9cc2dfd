"""Pool prices reach Inspect's cost machinery: --cost-limit stops a sample of a pool eval,
and Inspect's per-role usage (conductor, workers) agrees with the project's own split."""

from __future__ import annotations

import math

import pytest
import yaml
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import GenerateConfig, ModelAPI, ModelOutput, ModelUsage, get_model, modelapi
from inspect_ai.scorer import includes
from standins import standins, standins_server  # noqa: F401 (fixtures)

from solvers.conductor import conductor
from workers import pools
from workers.costs import NO_MODEL, model_cost, register_cost
from workers.pools import POOLS_DIR, Price, load_pool

ONE_STEP = 'model_id = [0]\nsubtasks = ["Solve it."]\naccess_list = [[]]'
TWO_STEPS = 'model_id = [0, 1]\nsubtasks = ["Solve it.", "Check it."]\naccess_list = [[], "all"]'
LEAD_USAGE = (1000, 100)  # the scripted conductor's tokens in, out per call


class LeadAPI(ModelAPI):
    """A conductor that always writes TWO_STEPS, with fixed usage."""

    def __init__(self, model_name, base_url=None, api_key=None, config=GenerateConfig(), **_):  # noqa: ANN001
        super().__init__(model_name, base_url, api_key, [], config)

    async def generate(self, input, tools, tool_choice, config) -> ModelOutput:  # noqa: ANN001, A002
        output = ModelOutput.from_content(model=f"leadtest/{self.model_name}", content=TWO_STEPS)
        output.usage = ModelUsage(input_tokens=LEAD_USAGE[0], output_tokens=LEAD_USAGE[1], total_tokens=sum(LEAD_USAGE))
        return output


@modelapi(name="leadtest")
def leadtest() -> type[ModelAPI]:
    return LeadAPI


def samples(n: int) -> list[Sample]:
    return [Sample(input=f"What is {i} + 40?", target=str(i + 40), id=i, metadata={"domain": "math"}) for i in range(n)]


def priced_pool(tmp_path) -> str:
    path = tmp_path / "priced.yaml"
    path.write_text(
        "conductor: {model: leadtest/lead, price: {input: 2.0, output: 4.0}}\n"
        "workers:\n"
        "  - {model: sim/premium, price: {input: 5.0, output: 25.0}}\n"
        "  - {model: sim/mediocre, price: {input: 0.05, output: 0.2}}\n"
    )
    return str(path)


def test_inspect_role_usage_agrees_with_the_workflow_costs(tmp_path):
    task = Task(dataset=samples(3), solver=conductor(pool=priced_pool(tmp_path)), scorer=includes())
    [log] = eval(task, display="none", log_dir=None)
    assert log.status == "success", log.error
    for sample in log.samples:
        meta = sample.metadata["conductor"]
        assert meta["steps"] == 2 and meta["worker_cost_usd"] > 0
        assert math.isclose(sample.role_usage["workers"].total_cost, meta["worker_cost_usd"], rel_tol=1e-9)
        assert math.isclose(sample.role_usage["conductor"].total_cost, meta["conductor_cost_usd"], rel_tol=1e-9)
        assert math.isclose(meta["conductor_cost_usd"], (LEAD_USAGE[0] * 2.0 + LEAD_USAGE[1] * 4.0) / 1e6)
    workers = sum(s.metadata["conductor"]["worker_cost_usd"] for s in log.samples)
    assert math.isclose(log.stats.role_usage["workers"].total_cost, workers, rel_tol=1e-9)


def test_cost_limit_stops_a_sim_pool_sample_at_the_limit():
    lead = get_model("leadtest/lead", memoize=False)
    register_cost("leadtest/lead", model_cost(Price(2.0, 4.0)))  # a role conductor outside the pools
    conductor_cost = (LEAD_USAGE[0] * 2.0 + LEAD_USAGE[1] * 4.0) / 1e6
    task = Task(dataset=samples(2), solver=conductor(pool="sim"), scorer=includes())
    # two calls to sim/math-strong and sim/choice-strong: the first worker call passes the limit
    [log] = eval(task, model_roles={"conductor": lead}, cost_limit=conductor_cost * 1.01, display="none", log_dir=None)
    assert log.status == "success", log.error
    for sample in log.samples:
        assert sample.limit is not None and sample.limit.type == "cost"
        assert "conductor" not in sample.metadata  # stopped inside the workflow
        assert sample.role_usage["workers"].total_cost > 0
        calls = [e for e in sample.events if e.event == "model" and e.role == "workers"]
        assert len(calls) == 1  # the second step never started


def test_an_eval_without_model_passes_the_cost_limit_start_check(tmp_path):
    """Inspect refuses --cost-limit when a model of the eval has no price; with no --model
    that model is `none`, which never generates."""
    task = Task(dataset=samples(1), solver=conductor(pool=priced_pool(tmp_path)), scorer=includes())
    [log] = eval(task, cost_limit=10.0, display="none", log_dir=None)
    assert log.status == "success", log.error and log.samples[0].limit is None
    assert str(log.eval.model) == NO_MODEL


def test_pool_prices_are_registered_with_cache_at_the_input_price(monkeypatch):
    from inspect_ai.model import get_model_info

    monkeypatch.setattr(pools, "_LOADED", {})  # read afresh: reading registers the prices
    load_pool("sim")
    info = get_model_info("sim/premium")
    assert info is not None and info.cost is not None
    assert (info.cost.input, info.cost.output, info.cost.input_cache_read, info.cost.input_cache_write) == (
        5.0, 25.0, 5.0, 5.0)  # fmt: skip


@pytest.mark.parametrize("pool", ["paper", "paper-constrained"])
def test_database_models_keep_their_info_with_the_pool_price(pool, monkeypatch):
    from inspect_ai.model import get_model_info

    monkeypatch.setattr(pools, "_LOADED", {})
    spec = next(w for w in load_pool(pool).workers if w.model == "openai/gpt-5")
    info = get_model_info("openai/gpt-5")
    assert info.cost.output == spec.price.output and info.context_length  # database fields kept


def test_eval_model_as_conductor_counts_under_the_conductor_role(tmp_path):
    """A conductor given by --model (not a role) still shows in Inspect's per-role usage."""
    task = Task(dataset=samples(1), solver=conductor(pool=priced_pool(tmp_path)), scorer=includes())
    [log] = eval(task, model=get_model("leadtest/lead", memoize=False), display="none", log_dir=None)
    assert log.status == "success", log.error
    usage = log.samples[0].role_usage
    assert (usage["conductor"].input_tokens, usage["conductor"].output_tokens) == LEAD_USAGE
    assert usage["workers"].output_tokens > 0


def own_instances(pool: str, tmp_path) -> str:
    """A copy of a bundled pool whose workers are model instances of their own (a client-side
    config field added): Inspect memoizes models, and one built here would keep this test
    module's stand-in server for the other modules' tests."""
    data = yaml.safe_load((POOLS_DIR / f"{pool}.yaml").read_text())
    for worker in data["workers"]:
        worker["config"] = {**worker["config"], "max_connections": 11}
    path = tmp_path / f"{pool}.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def paper_eval(pool: str, **eval_args):
    """One sample of a paper pool against the API stand-ins, every worker named once."""
    from scripted import scripted
    from test_api_pools import every_worker

    n = len(load_pool(pool).workers)
    register_cost("mockllm/model", model_cost(Price(0.0, 0.0)))  # the scripted conductor
    task = Task(dataset=[Sample(input="What is 6 * 7?", target="42")], solver=conductor(pool=pool, max_steps=n),
                scorer=includes())  # fmt: skip
    [log] = eval(task, model=scripted(every_worker(n)), display="none", log_dir=None, **eval_args)
    assert log.status == "success", log.error
    return log


def test_cost_limit_stops_a_paper_pool_sample(standins, tmp_path):  # noqa: F811
    """The same against the API stand-ins with a bundled paper pool."""
    pool = own_instances("paper-closed", tmp_path)
    unlimited = paper_eval(pool).samples[0]
    cost = unlimited.metadata["conductor"]["worker_cost_usd"]
    assert unlimited.limit is None and math.isclose(unlimited.role_usage["workers"].total_cost, cost, rel_tol=1e-9)
    limited = paper_eval(pool, cost_limit=cost / 10).samples[0]
    assert limited.limit is not None and limited.limit.type == "cost"


def test_gpt5_probe_request_is_counted_nowhere(standins, tmp_path):  # noqa: F811
    """Inspect's openai provider asks GPT-5 once per model instance whether reasoning summaries
    are allowed (a billed request); neither Inspect's usage nor the sample's cost counts it."""
    pool = tmp_path / "gpt5.yaml"  # a config of its own: a new model instance, so a new probe
    pool.write_text("workers:\n  - model: openai/gpt-5\n    config: {max_tokens: 4096, reasoning_effort: minimal,"
                    " max_connections: 7}\n    price: {input: 1.25, output: 10.0}\n")  # fmt: skip
    log = paper_eval(str(pool))
    requests = standins.generations("openai")
    probes = [r for r in requests if r.body.get("input") == "Please say 'hello, world'"]
    assert len(probes) == 1 and len(requests) == 2
    [call] = [r for r in requests if r not in probes]
    usage = log.stats.model_usage["openai/gpt-5"]
    assert (usage.input_tokens, usage.output_tokens) == call.usage
    cost = log.samples[0].metadata["conductor"]["worker_cost_usd"]
    assert math.isclose(cost, (call.usage[0] * 1.25 + call.usage[1] * 10.0) / 1e6, rel_tol=1e-9)


def test_spend_meter_reads_whole_lines_and_the_superseded_rows(tmp_path):
    from training.budget import SpendMeter

    log = tmp_path / "rollouts.jsonl"
    (tmp_path / "rollouts.jsonl.superseded").write_text('{"worker_cost_usd": 0.5}\n')
    log.write_text('{"worker_cost_usd": 0.25}\n{"worker_cost_usd": 1.0')  # the last line is being written
    meter = SpendMeter(log)
    assert meter.update() == 0.75
    with log.open("a") as handle:
        handle.write('}\n{"worker_cost_usd": null}\n')
    assert meter.update() == 1.75


def test_max_usd_refuses_a_pool_without_prices(tmp_path):
    from training.budget import check_max_usd

    pool = tmp_path / "unpriced.yaml"
    pool.write_text("workers: [sim/premium, {model: sim/mediocre, price: {input: 1, output: 1}}]\n")
    with pytest.raises(SystemExit, match="sim/premium"):
        check_max_usd(1.0, load_pool(str(pool)), "conductor")
    with pytest.raises(SystemExit, match="> 0"):
        check_max_usd(0, load_pool("sim"), "conductor")


@pytest.mark.slow
def test_training_stops_cleanly_at_max_usd(tmp_path, monkeypatch):
    """A tiny GRPO run on the simulated pool stops after the step whose rollouts reach the cap,
    with its checkpoint and the final model saved."""
    pytest.importorskip("trl")
    from test_training_train import TINY_RECIPE, data_args
    from training_fixtures import data_files, tiny_model

    from training import rewards
    from training.rollouts import read_rollouts
    from training.train import main

    # the tiny random policy never writes a valid workflow: read every completion as one
    monkeypatch.setattr(rewards, "completion_text", lambda completion: ONE_STEP)

    recipe = tmp_path / "tiny.yaml"
    recipe.write_text(TINY_RECIPE)
    out = tmp_path / "run"
    info = main([str(recipe), "--model_name_or_path", tiny_model(tmp_path / "model"), "--output_dir", str(out),
                 *data_args(data_files(tmp_path)), "--max_steps", "4", "--max_usd", "1e-9"])  # fmt: skip
    assert info["global_step"] == 1 and info["spend"]["stopped_at_step"] == 1, info.get("spend")
    spent = sum(r["worker_cost_usd"] for r in read_rollouts(out / "rollouts.jsonl"))
    assert spent > 1e-9 and math.isclose(info["spend"]["spent_usd"], spent)
    assert (out / "checkpoint-1" / "trainer_state.json").is_file() and (out / "model.safetensors").is_file()
