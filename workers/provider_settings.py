"""Which pool settings a provider drops before its request leaves (a pure table; no Inspect import).

Inspect 0.3.285's providers do not send every `GenerateConfig` field they are given; a pool
asking for the paper's temperature 0.2 on Claude gets the API default, with one log line.
`DROPS` lists the known cases by Inspect model-name pattern (a provider's own `unsent` fields and
`top_k`, workers/providers.py, plus GPT-5's); `provider_changes` says what
happens to one worker's config and `effective_config` is the config that reaches the API.
The table is checked against the requests Inspect sends through the providers' real SDKs
(tests/workers/test_api_settings.py, loopback stand-ins), so it cannot drift from Inspect's behaviour.

A provider's `sdk` entry (workers/providers.py) says how its SDK client is built: its HTTP read
timeout and its own retries, both under Inspect's call budget. `sdk_model_args` gives a pool worker the model args
that make the SDK agree with that budget; `sdk_settings` records what the SDK then enforces
(tests/workers/test_sdk_timeouts.py checks both on the clients and requests of the real SDKs).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from workers.providers import PROVIDERS, SdkClient, capabilities, provider_name

_REASONING = "GPT-5 always reasons and then takes only the default (1)"
_NO_TOP_K = "Inspect's OpenAI-compatible providers do not send top_k (a pool puts it in extra_body)"
_RESPONSES = "OpenAI's Responses API (Inspect's route for GPT-5) has no such parameter"
# GPT-5 and its mini/nano/dated variants reason by default and refuse reasoning effort
# "none"; later versions (gpt-5.1, ...) and gpt-5-chat do not, and are not in the table
GPT5 = ("openai/gpt-5", "openai/gpt-5-20*", "openai/gpt-5-mini*", "openai/gpt-5-nano*")

# GenerateConfig fields that steer the client (retries, time limits, concurrency) and are
# never part of a request
CLIENT_FIELDS = frozenset({"timeout", "attempt_timeout", "max_retries", "max_connections", "cache", "batch"})


@dataclass(frozen=True)
class Drop:
    """`field` is not sent for models matching one of `patterns` (fnmatch on the Inspect
    model name)."""

    patterns: tuple[str, ...]
    field: str
    reason: str

    def applies(self, model: str, config: Mapping[str, Any]) -> bool:
        return config.get(self.field) is not None and any(fnmatchcase(model, p) for p in self.patterns)


DROPS: tuple[Drop, ...] = (
    *(Drop((f"{p.name}/*",), f, p.unsent_reason) for p in PROVIDERS.values() for f in p.unsent),
    *(Drop(GPT5, f, _REASONING) for f in ("temperature", "top_p")),
    *(Drop(GPT5, f, _RESPONSES) for f in ("presence_penalty", "frequency_penalty", "seed", "stop_seqs")),
    Drop(tuple(f"{p.name}/*" for p in PROVIDERS.values() if not p.top_k), "top_k", _NO_TOP_K),
)


@dataclass(frozen=True)
class Change:
    """One pool setting the provider does not send."""

    field: str
    value: Any
    reason: str

    def describe(self) -> str:
        return f"{self.field}={self.value!r} is not sent ({self.reason})"


def provider_changes(model: str, config: Mapping[str, Any]) -> list[Change]:
    """The settings of `config` that the provider of `model` drops, in `DROPS` order."""
    return [Change(d.field, config[d.field], d.reason) for d in DROPS if d.applies(model, config)]


def effective_config(model: str, config: Mapping[str, Any]) -> dict[str, Any]:
    """`config` (set fields only) without the fields the provider drops: what the API gets."""
    dropped = {c.field for c in provider_changes(model, config)}
    return {k: v for k, v in config.items() if v is not None and k not in dropped}


class SdkTimeoutError(ValueError):
    """An attempt limit that `model`'s provider SDK would cut short, and no model arg can raise."""

    def __init__(self, model: str, problem: str, fix: str) -> None:
        super().__init__(f"{model}: {problem}; fix: {fix}")
        self.problem, self.fix = problem, fix


def sdk_client(model: str) -> SdkClient | None:
    """The SDK client entry of `model`'s provider; None for providers without one (sim/, hf/, ...)."""
    return capabilities(model).sdk


def _default_read_timeout(client: SdkClient, config: Mapping[str, Any], model_args: Mapping[str, Any]) -> float:
    if client.timeout_from_config and config.get("timeout") is not None:
        return float(config["timeout"])
    if client.flex_timeout is not None and model_args.get("service_tier") == "flex":
        return client.flex_timeout
    return client.read_timeout


def attempt_limit(config: Mapping[str, Any]) -> float | None:
    """The longest one attempt may run under `config`: its attempt_timeout, never past the
    whole call's timeout; None when neither is set."""
    limits = [float(config[k]) for k in ("attempt_timeout", "timeout") if config.get(k) is not None]
    return min(limits, default=None)


def sdk_model_args(model: str, config: Mapping[str, Any], model_args: Mapping[str, Any]) -> dict[str, Any]:
    """`model_args` plus what makes the provider SDK agree with the call budget in `config`: a
    read timeout of at least one attempt's limit (only where that exceeds the SDK's default) and
    no retries of the SDK's own (Inspect retries, `max_retries`). An arg the pool sets wins.

    Raises SdkTimeoutError when the provider's SDK timeout cannot be raised to the attempt's limit."""
    args = dict(model_args)
    client = sdk_client(model)
    if client is None:
        return args
    if client.retries_arg is not None:
        args.setdefault(client.retries_arg, 0)
    limit, sdk = attempt_limit(config), _default_read_timeout(client, config, args)
    if limit is None or limit <= sdk or (client.timeout_arg is not None and client.timeout_arg in model_args):
        return args
    if client.timeout_arg is not None:
        args[client.timeout_arg] = limit
        return args
    if client.timeout_from_config:
        raise SdkTimeoutError(model, f"attempt_timeout {limit:g} s is cut short: the Google SDK's timeout is {sdk:g} s "
                              "(Inspect sends `timeout` as that timeout, and it is unset)",
                              f"set `timeout` (the whole call's budget) to at least {limit:g}")  # fmt: skip
    raise SdkTimeoutError(model, f"an attempt may take {limit:g} s but Inspect's {provider_name(model)} provider has "
                          f"no model arg for its SDK's read timeout ({sdk:g} s), which would cut it short",
                          f"set attempt_timeout (or timeout) to at most {sdk:g}")  # fmt: skip


def sdk_settings(model: str, config: Mapping[str, Any], model_args: Mapping[str, Any]) -> dict[str, Any]:
    """The read timeout (s) and retries of `model`'s provider SDK as built from `model_args`
    and `config` (a record of what the SDK enforces); {} for providers without an SDK client."""
    client = sdk_client(model)
    if client is None:
        return {}
    timeout = model_args.get(client.timeout_arg) if client.timeout_arg else None
    retries = model_args.get(client.retries_arg) if client.retries_arg else None
    return {
        "sdk_read_timeout": _default_read_timeout(client, config, model_args) if timeout is None else timeout,
        "sdk_max_retries": client.retries if retries is None else retries,
    }
