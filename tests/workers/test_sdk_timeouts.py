"""The time budget a pool declares is the one the provider's SDK enforces.

A pool worker's `attempt_timeout` bounds one attempt in Inspect; the SDK under Inspect has its
own HTTP read timeout (openai/anthropic: 600 s unless set) and its own retries (2). The worker
models built from a pool (solvers/team.py `pool_workers`) get an SDK read timeout that covers
the attempt and no SDK retries (`workers.provider_settings.sdk_model_args`), checked here on
the clients Inspect constructs (dummy keys, no network) and on the requests the real SDKs
send to the loopback stand-ins (tests/standins.py); the conductor's record carries both.
"""

from __future__ import annotations

import pytest
from httpx2 import Timeout
from installed import needs
from standins import standins  # noqa: F401 (fixture)
from test_api_pools import run_pool

from solvers.team import pool_workers
from workers.pools import parse_pool
from workers.provider_settings import SdkTimeoutError, sdk_model_args, sdk_settings

pytestmark = needs("anthropic", "google.genai", extra="api")  # the API pools' SDKs

GPT5, CLAUDE, GEMINI = "openai/gpt-5", "anthropic/claude-sonnet-4-20250514", "google/gemini-2.5-pro"
LONG = {"max_tokens": 128000, "attempt_timeout": 4380, "timeout": 8760, "max_retries": 2}  # paper-frontier GPT-5
SHORT = {"max_tokens": 4096, "attempt_timeout": 240, "timeout": 480, "max_retries": 4}  # paper-constrained
# providers whose SDK client Inspect keeps on the model (`model.api.client`), and their model args
CLIENT_PROVIDERS = {
    GPT5: {},
    CLAUDE: {},
    "openai-api/remote/qwen3": {"base_url": "http://127.0.0.1:9/v1", "api_key": "standin"},
    "vllm/Qwen/Qwen3-32B": {"lazy_init": False},  # VLLM_BASE_URL: the stand-in (never called here)
}


def worker_model(model: str, config: dict, model_args: dict | None = None):
    """The Inspect model of a one-worker pool, built as the solver builds it."""
    entry = {"model": model, "config": config, "model_args": model_args or {}}
    [worker] = pool_workers(parse_pool({"workers": [entry]}, default_name="t"))
    return worker.model


def read_timeout(client) -> float:
    timeout = client.timeout
    return timeout.read if isinstance(timeout, Timeout) else timeout


@pytest.mark.parametrize("model", sorted(CLIENT_PROVIDERS))
def test_sdk_read_timeout_covers_a_long_attempt(model, standins):  # noqa: F811
    client = worker_model(model, LONG, CLIENT_PROVIDERS[model]).api.client
    assert read_timeout(client) >= 4380


@pytest.mark.parametrize("model", sorted(CLIENT_PROVIDERS))
def test_short_attempt_keeps_the_sdk_default(model, standins):  # noqa: F811
    client = worker_model(model, SHORT, CLIENT_PROVIDERS[model]).api.client
    assert read_timeout(client) == 600


@pytest.mark.parametrize("model", [GPT5, CLAUDE, "openai-api/remote/qwen3"])
def test_sdk_retries_are_off(model, standins):  # noqa: F811
    """Inspect retries (the pool's max_retries); the SDK must not multiply them (default 2)."""
    assert worker_model(model, SHORT, CLIENT_PROVIDERS[model]).api.client.max_retries == 0


def test_pool_model_args_win(standins):  # noqa: F811
    client = worker_model(GPT5, LONG, {"client_timeout": 100, "max_retries": 1}).api.client
    assert (read_timeout(client), client.max_retries) == (100, 1)


def test_attempt_limit_is_capped_by_the_call_timeout(standins):  # noqa: F811
    """An attempt never runs past the whole call's `timeout`, so the SDK needs no more than that."""
    assert read_timeout(worker_model(GPT5, {"attempt_timeout": 5000, "timeout": 1000}).api.client) == 1000
    assert read_timeout(worker_model(GPT5, {"timeout": 1000}).api.client) == 1000


def test_openai_flex_keeps_its_longer_default(standins):  # noqa: F811
    """Inspect reads 900 s for service_tier flex; a 700 s attempt needs no change, a 1000 s one does."""
    assert read_timeout(worker_model(GPT5, {"attempt_timeout": 700}, {"service_tier": "flex"}).api.client) == 900
    assert read_timeout(worker_model(GPT5, {"attempt_timeout": 1000}, {"service_tier": "flex"}).api.client) == 1000
    assert sdk_settings(GPT5, {"attempt_timeout": 700}, {"service_tier": "flex"})["sdk_read_timeout"] == 900


def test_google_timeout_unset_and_attempt_past_the_sdk_default_is_refused():
    """Inspect sends GenerateConfig.timeout (else 3600 s) as the Google SDK's timeout."""
    refused = r"workers\[0\] \(google/gemini-2.5-pro\).config: attempt_timeout 5000 s .* 3600 s.*fix: set `timeout`"
    with pytest.raises(ValueError, match=refused):
        parse_pool({"workers": [{"model": GEMINI, "config": {"attempt_timeout": 5000}}]}, default_name="t")
    assert sdk_settings(GEMINI, {"attempt_timeout": 2280, "timeout": 4560}, {})["sdk_read_timeout"] == 4560


def test_sglang_cannot_raise_its_sdk_timeout():
    with pytest.raises(SdkTimeoutError, match=r"sglang.* no model arg .*fix: set attempt_timeout"):
        sdk_model_args("sglang/Qwen/Qwen3-32B", {"attempt_timeout": 1200}, {})
    assert sdk_model_args("sglang/Qwen/Qwen3-32B", {"attempt_timeout": 240}, {}) == {}


def test_unknown_providers_are_left_alone():
    assert sdk_model_args("sim/solver", LONG, {"x": 1}) == {"x": 1}
    assert sdk_settings("sim/solver", LONG, {}) == {}


def test_paper_frontier_requests_and_record_carry_the_timeouts(standins, tmp_path):  # noqa: F811
    """End to end: what each real SDK sends (its read-timeout headers) and what the log records."""
    log = run_pool("paper-frontier", tmp_path)
    assert log.status == "success", log.error
    sent = {r.provider: {k.lower(): v for k, v in r.headers.items()} for r in standins.generations()}
    assert float(sent["openai"]["x-stainless-read-timeout"]) == 4380
    assert float(sent["anthropic"]["x-stainless-read-timeout"]) == 2220
    assert float(sent["google"]["x-server-timeout"]) == 4560
    record = log.samples[0].metadata["conductor"]
    assert record["worker_sdk"] == [
        {"sdk_read_timeout": 4380.0, "sdk_max_retries": 0},
        {"sdk_read_timeout": 4560.0, "sdk_max_retries": 0},
        {"sdk_read_timeout": 2220.0, "sdk_max_retries": 0},
    ]
