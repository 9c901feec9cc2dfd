"""Call budgets of API workers: every bundled API worker has one derived from its token
budget, and the eval's --attempt-timeout / --timeout / --max-retries reach pool workers and
the conductor (pool values are defaults, the command line wins)."""

from __future__ import annotations

import time

import anyio
import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import GenerateConfig, ModelAPI, ModelOutput, get_model, modelapi
from inspect_ai.scorer import includes
from scripted import scripted
from waits import WAIT_S

from solvers.conductor import conductor
from workers.call_budget import API_MARGIN_S, API_TOKENS_PER_SECOND, BUDGET_FIELDS, api_call_budget
from workers.pools import bundled_pools, load_pool

ONE_STEP = 'model_id = [0]\nsubtasks = ["Solve."]\naccess_list = [[]]'
SEEN: list[GenerateConfig] = []  # every config the stalling provider was called with


class StallAPI(ModelAPI):
    """A provider whose calls never answer (a stalled API), recording each call's config."""

    def __init__(self, model_name, base_url=None, api_key=None, config=GenerateConfig(), **_):  # noqa: ANN001
        super().__init__(model_name, base_url, api_key, [], config)

    async def generate(self, input, tools, tool_choice, config) -> ModelOutput:  # noqa: ANN001, A002
        SEEN.append(config)
        await anyio.sleep(3600)
        raise AssertionError("unreachable")


@modelapi(name="stalltest")
def stalltest() -> type[ModelAPI]:
    return StallAPI


def api_workers():
    for name in bundled_pools():
        for spec in load_pool(name).workers:
            if not spec.model.startswith(("local/", "sim/")):
                yield name, spec


@pytest.mark.parametrize(("pool", "spec"), list(api_workers()), ids=lambda x: getattr(x, "model", x))
def test_every_bundled_api_worker_has_a_budget_derived_from_its_tokens(pool, spec):
    for task in [None, *spec.task_overrides]:
        merged = spec.config_for(task)
        assert all(merged.get(k) is not None for k in BUDGET_FIELDS), f"{pool} {spec.model} {task}: {merged}"
        expected = api_call_budget(merged["max_tokens"])
        budget = (expected.attempt_timeout, expected.timeout, expected.max_retries)
        assert tuple(merged[k] for k in BUDGET_FIELDS) == budget, f"{pool} {spec.model} {task}"
        # an attempt can finish its whole token budget at the conservative speed
        assert merged["attempt_timeout"] >= merged["max_tokens"] / API_TOKENS_PER_SECOND + API_MARGIN_S


def test_derived_budget_numbers():
    small, large = api_call_budget(4096), api_call_budget(128000)
    assert (small.attempt_timeout, small.timeout, small.max_retries) == (240, 480, 4)
    assert (large.attempt_timeout, large.timeout, large.max_retries) == (4380, 8760, 2)
    with pytest.raises(ValueError, match="max_tokens"):
        api_call_budget(0)


def stall_pool(tmp_path, **config) -> str:
    path = tmp_path / "stall.yaml"
    values = ", ".join(f"{k}: {v}" for k, v in config.items())
    path.write_text(f"name: stall\nworkers:\n  - model: stalltest/w\n    config: {{{values}}}\n")
    return str(path)


def run(pool: str, conductor_model, **eval_config):
    """The conductor's record of one sample. Calls stall for an hour, so an AttemptTimeoutError
    in it shows the attempt timeout ended the call (counted in SEEN), not the time limit."""
    SEEN.clear()
    task = Task(dataset=[Sample(input="6 x 7?", target="42")], solver=conductor(pool=pool), scorer=includes())
    [log] = eval(task, model_roles={"conductor": conductor_model}, display="none", log_dir=None, time_limit=WAIT_S,
                 **eval_config)  # fmt: skip
    assert log.status == "success", log.error
    return log.samples[0].metadata.get("conductor")


@pytest.mark.slow
def test_command_line_attempt_timeout_reaches_a_pool_worker(tmp_path):
    pool = stall_pool(tmp_path, attempt_timeout=600, timeout=1200, max_retries=2)
    meta = run(pool, scripted(ONE_STEP), attempt_timeout=1, max_retries=0)
    step = meta["round"]["steps"][0]
    assert "AttemptTimeoutError" in step["error"]
    assert [(c.attempt_timeout, c.timeout, c.max_retries) for c in SEEN] == [(1, 1200, 0)]  # CLI wins, pool default


def test_pool_budget_applies_when_the_command_line_is_silent(tmp_path):
    pool = stall_pool(tmp_path, attempt_timeout=1, timeout=30, max_retries=0)
    meta = run(pool, scripted(ONE_STEP))
    assert "AttemptTimeoutError" in meta["round"]["steps"][0]["error"]
    assert [(c.attempt_timeout, c.timeout, c.max_retries) for c in SEEN] == [(1, 30, 0)]


def test_command_line_attempt_timeout_reaches_the_conductor(tmp_path):
    pool = stall_pool(tmp_path, attempt_timeout=1, timeout=30, max_retries=0)
    stalled = scripted(ONE_STEP, delay=3600)
    meta = run(pool, stalled, attempt_timeout=1, max_retries=0)
    assert meta["rejection"] == "conductor_error" and "AttemptTimeoutError" in meta["round"]["rejection_message"]
    assert [c.attempt_timeout for c in stalled.configs] == [1]  # one attempt, ended by its timeout


def test_sim_latency_is_seeded_lognormal_and_off_by_default():
    from workers.simulation import latency

    assert latency(0.0, 0.6, "seed", "item") == 0.0
    draws = [latency(6.0, 0.6, 0, "premium", f"item{i}", "solve") for i in range(2000)]
    assert draws[:5] == [latency(6.0, 0.6, 0, "premium", f"item{i}", "solve") for i in range(5)]  # seeded
    ordered = sorted(draws)
    assert 5.5 < ordered[1000] < 6.5  # the median
    assert 1.8 < ordered[100] < 3.2 and 12 < ordered[1900] < 20  # 5% and 95%: about 2-20 s


@pytest.mark.parametrize("bad", [{"latency": -1}, {"latency": "x"}, {"latency_sigma": -0.1}])
def test_sim_latency_arguments_are_checked(bad):
    from workers.sim_provider import SimError

    with pytest.raises(SimError, match="latency"):
        get_model("sim/premium", memoize=False, **bad)


def test_sim_call_takes_its_latency():
    import asyncio

    from workers.sim_provider import answer_key

    model = get_model("sim/premium", memoize=False, latency=0.3, latency_sigma=0.0)

    async def call() -> ModelOutput:
        with answer_key(target="42", domain="math", item_id="q"):
            return await model.generate("6 x 7?")

    started = time.monotonic()
    output = asyncio.run(call())
    assert time.monotonic() - started >= 0.3 and output.metadata["latency_s"] == pytest.approx(0.3)


@pytest.mark.slow
def test_command_line_timeout_and_retries_win_over_the_pool(tmp_path):
    pool = stall_pool(tmp_path, attempt_timeout=1, timeout=1200, max_retries=5)
    meta = run(pool, scripted(ONE_STEP), timeout=600, max_retries=1)
    assert "AttemptTimeoutError" in meta["round"]["steps"][0]["error"]
    assert {(c.attempt_timeout, c.timeout, c.max_retries) for c in SEEN} == {(1, 600, 1)}
    assert len(SEEN) == 2  # attempts counted, not timed: one and one retry (the pool's 5 would make 6)
