"""Which pool settings a provider drops before its request leaves (a pure table; no Inspect import).

Inspect 0.3.285's providers do not send every `GenerateConfig` field they are given; a pool
asking for the paper's temperature 0.2 on Claude gets the API default, with one log line.
`DROPS` lists the known cases by Inspect model-name pattern; `provider_changes` says what
happens to one worker's config and `effective_config` is the config that reaches the API.
The table is checked against the requests Inspect sends through the providers' real SDKs
(tests/test_api_settings.py, loopback stand-ins), so it cannot drift from Inspect's behaviour.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from workers.pools import NO_TOP_K_PROVIDERS

_ANTHROPIC = "the API version the anthropic SDK sends (2026-10-21) removed sampling parameters: the API default applies"
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
    *(Drop(("anthropic/*",), f, _ANTHROPIC) for f in ("temperature", "top_p", "top_k")),
    *(Drop(GPT5, f, _REASONING) for f in ("temperature", "top_p")),
    *(Drop(GPT5, f, _RESPONSES) for f in ("presence_penalty", "frequency_penalty", "seed", "stop_seqs")),
    Drop(tuple(f"{p}*" for p in NO_TOP_K_PROVIDERS), "top_k", _NO_TOP_K),
    Drop(("google/*",), "seed", "Inspect's google provider does not send seed"),
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
