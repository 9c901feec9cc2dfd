"""workers/provider_settings.py against what Inspect really sends (real SDKs, stand-ins).

For every bundled pool worker and for configs that set every field the table knows, the
request the stand-in receives carries exactly `effective_config` (the pool's config minus
the table's drops): a drop Inspect stops making, or one it starts making, fails here. The
stand-ins also refuse what the real APIs refuse (their documented limits).
"""

from __future__ import annotations

import pytest
from inspect_ai.model import ChatMessageUser, GenerateConfig, get_model
from installed import needs
from standins import standins  # noqa: F401 (fixture)
from test_api_pools import wire

from workers.pools import bundled_pools, load_pool
from workers.provider_errors import describe_error
from workers.provider_settings import DROPS, effective_config, provider_changes

pytestmark = needs("anthropic", "google.genai", extra="api")  # the API pools' SDKs

SAMPLING = {"temperature": 0.5, "top_p": 0.9, "presence_penalty": 0.5, "frequency_penalty": 0.25, "seed": 7}
EVERYTHING = {**SAMPLING, "max_tokens": 1000, "top_k": 5, "stop_seqs": ["STOP"]}
EXTRA_CASES = [
    ("anthropic/claude-sonnet-4-20250514", {"max_tokens": 1000, "temperature": 0.5, "top_p": 0.9, "top_k": 5}),
    ("openai/gpt-5", {k: v for k, v in EVERYTHING.items() if k != "top_k"}),
    ("openai/gpt-5-mini", {"max_tokens": 1000, "temperature": 0.5, "top_p": 0.9}),
    ("google/gemini-2.5-pro", {**EVERYTHING, "reasoning_tokens": 1024}),
    ("vllm/Qwen/Qwen3-32B", EVERYTHING),
]
POOL_CASES = {
    f"{w.model} {w.config_for(task)}": (w.model, w.config_for(task))
    for pool in bundled_pools()
    if pool.startswith("paper")
    for w in load_pool(pool).workers
    for task in (None, "bigcodebench")
}
CASES = [*EXTRA_CASES, *POOL_CASES.values()]


async def sent(standins, model: str, config: dict):  # noqa: F811
    """The request Inspect sends for one generation of `model` with `config`."""
    output = await get_model(model, config=GenerateConfig(**config)).generate([ChatMessageUser(content="6 * 7?")])
    assert not output.error, output.error
    [request] = [r for r in standins.generations() if r.text == output.completion]
    return request


@pytest.mark.parametrize("model, config", CASES, ids=[f"{m}-{i}" for i, (m, _) in enumerate(CASES)])
async def test_table_matches_the_request_inspect_sends(model, config, standins):  # noqa: F811
    request = await sent(standins, model, config)
    assert request.settings() == wire(effective_config(model, config))


def test_every_drop_in_the_table_is_checked_against_a_request():
    checked = {(d.field, p) for model, config in CASES for d in DROPS if d.applies(model, config) for p in d.patterns}
    exercised = {d.field for d in DROPS if any((d.field, p) in checked for p in d.patterns)}
    assert exercised == {d.field for d in DROPS}


def test_changes_name_field_value_and_reason():
    [change] = provider_changes("anthropic/claude-sonnet-4-20250514", {"max_tokens": 4096, "temperature": 0.2})
    assert change.describe().startswith("temperature=0.2 is not sent (the API version the anthropic SDK sends")
    assert provider_changes("openai/gpt-5.1", {"temperature": 0.2}) == []  # not GPT-5 itself: not in the table
    assert effective_config("openai/gpt-5", {"max_tokens": 10, "temperature": 0.2, "seed": None}) == {"max_tokens": 10}


@pytest.mark.parametrize(
    "model, config, refusal",
    [
        ("anthropic/claude-sonnet-4-20250514", {"max_tokens": 4096, "reasoning_tokens": 512},
         "anthropic HTTP 400 (BadRequestError): thinking.budget_tokens: must be >= 1024"),
        ("anthropic/claude-sonnet-4-20250514", {"max_tokens": 70000},
         "anthropic HTTP 400 (BadRequestError): max_tokens: 70000 > 64000"),
        ("google/gemini-2.5-pro", {"max_tokens": 4096, "reasoning_tokens": 64},
         "google HTTP 400 (ClientError): The thinking budget 64 is invalid"),
        ("openai/gpt-5", {"max_tokens": 200000}, "openai HTTP 400 (BadRequestError): max_output_tokens is too large"),
        ("vllm/Qwen/Qwen3-32B", {"max_tokens": 100, "extra_body": {"top_k": 0}},
         "vllm HTTP 400 (BadRequestError): top_k must be -1 (disable), or at least 1, got 0."),
    ],
)  # fmt: skip
async def test_standins_refuse_what_the_api_refuses(model, config, refusal, standins):  # noqa: F811
    with pytest.raises(Exception) as caught:
        await get_model(model, config=GenerateConfig(max_retries=0, **config)).generate("6 * 7?")
    assert describe_error(caught.value, model).startswith(refusal), describe_error(caught.value, model)


async def test_gpt5_through_chat_completions_gets_the_same_settings(standins):  # noqa: F811
    """The stand-in's chat-completions route (Inspect's `responses_api=False`) for GPT-5."""
    config = {"max_tokens": 1000, "temperature": 0.5, "reasoning_effort": "low"}
    model = get_model("openai/gpt-5", config=GenerateConfig(**config), responses_api=False)
    output = await model.generate("6 * 7?")
    [request] = [r for r in standins.generations() if r.text == output.completion]
    assert request.path == "/v1/chat/completions"
    assert request.settings() == wire(effective_config("openai/gpt-5", config))
