"""What a pool's workers would contact (workers/endpoints.py), per worker and by what each would
contact: a single network worker makes a pool a network pool, whatever else it holds."""

from __future__ import annotations

import pytest

from workers.endpoints import IN_PROCESS, LOCAL, NETWORK, endpoint, free, offline
from workers.pools import ModelSpec, load_pool


def spec(model: str, **model_args) -> ModelSpec:
    return ModelSpec(model=model, model_args=model_args)


SIM = endpoint(spec("sim/oracle", profiles="p.yaml", seed=1), {})
AIMED = endpoint(spec("openai/gpt-4o-mini", base_url="https://evil.example/v1"), {"OPENAI_BASE_URL": "https://ok"})


def test_a_simulated_worker_contacts_nothing():
    assert (SIM.kind, SIM.host, SIM.credential) == (IN_PROCESS, None, None)
    assert endpoint(spec("scripted/fixed-workflows"), {}).kind == IN_PROCESS
    assert endpoint(spec("mockllm/model"), {}).kind == IN_PROCESS


def test_the_pool_files_base_url_is_the_host_and_the_env_key_is_named():
    assert (AIMED.kind, AIMED.credential) == (NETWORK, "$OPENAI_API_KEY")
    assert AIMED.host == "https://evil.example/v1 (base_url in the pool file)"  # over the environment's
    assert "calls https://evil.example/v1" in AIMED.describe() and "sends $OPENAI_API_KEY" in AIMED.describe()


@pytest.mark.parametrize(("model", "env", "host", "credential"), [
    ("openai/gpt-5", {}, "api.openai.com (the provider default)", "$OPENAI_API_KEY"),
    ("openai/gpt-5", {"OPENAI_BASE_URL": "http://proxy:1"}, "http://proxy:1 ($OPENAI_BASE_URL)", "$OPENAI_API_KEY"),
    ("anthropic/claude-sonnet-4-0", {}, "api.anthropic.com (the provider default)", "$ANTHROPIC_API_KEY"),
    ("grok/grok-4", {}, "api.x.ai (the provider default)", "$XAI_API_KEY"),
    ("openai-api/my-gw/m", {"MY_GW_BASE_URL": "http://gw"}, "http://gw ($MY_GW_BASE_URL)", "$MY_GW_API_KEY"),
    ("newprovider/m", {}, "the provider default host (the provider default)", "$NEWPROVIDER_API_KEY"),
    ("ollama/llama3", {}, "localhost:11434 (the provider default)", None),
])  # fmt: skip
def test_default_hosts_and_keys(model, env, host, credential):
    found = endpoint(spec(model), env)
    assert (found.kind, found.host, found.credential) == (NETWORK, host, credential)


def test_what_makes_a_simulated_worker_a_network_one():
    # an argument a simulated provider has no use for may steer it elsewhere: not offline
    assert endpoint(spec("sim/oracle", base_url="http://evil"), {}).kind == NETWORK
    assert endpoint(spec("scripted/x", api_key="k"), {}).credential == "the api_key in the pool file"
    # a conductor/<pool> worker runs another pool's workers
    assert endpoint(spec("conductor/other.yaml"), {}).kind == NETWORK


def test_a_pool_is_offline_only_when_every_worker_is():
    assert offline([SIM, SIM]) and not offline([SIM, AIMED]) and not offline([AIMED, SIM, SIM, SIM])
    local = endpoint(spec("local/smollm2-135m", n_threads=2), {})
    assert local.kind == LOCAL and local.args == ("n_threads=2",) and not offline([SIM, local])
    assert free([SIM, local]) and not free([SIM, local, AIMED])
    assert offline(endpoint(w, {}) for w in load_pool("sim").workers)  # the bundled pools
    assert not offline(endpoint(w, {}) for w in load_pool("local").workers)


def test_text_that_could_hide_on_a_terminal_is_shown_escaped():
    hidden = endpoint(spec("openai/m", base_url="http://evil\r\x1b[2Kapi.openai.com", note="\u202eab"), {})
    line = hidden.describe()
    assert "\r" not in line and "\x1b" not in line and "\\r\\x1b[2K" in line and "note='\\u202eab'" in line
    long = endpoint(spec("openai/m", extra="x" * 500), {})
    assert long.args == ("extra=" + "x" * 200 + "... (300 more characters)",)
