"""Which pool settings a provider drops before its request leaves (pure table, no imports of Inspect).

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

_ANTHROPIC = "the API version the anthropic SDK sends (2026-10-21) removed sampling parameters: the API default applies"
_REASONING = "GPT-5 with reasoning on (reasoning_effort other than none) takes only its default (1)"
_RESPONSES = "OpenAI's Responses API (Inspect's route for GPT-5) has no such parameter"


# GenerateConfig fields that steer the client (retries, time limits, concurrency) and are
# never part of a request
CLIENT_FIELDS = frozenset({"timeout", "attempt_timeout", "max_retries", "max_connections", "cache", "batch"})


@dataclass(frozen=True)
class Drop:
    """`field` is not sent for models matching `pattern` (fnmatch on the Inspect model
    name), unless the config sets every `unless` field to its value."""

    pattern: str
    field: str
    reason: str
    unless: tuple[tuple[str, Any], ...] = ()

    def applies(self, model: str, config: Mapping[str, Any]) -> bool:
        return (
            config.get(self.field) is not None
            and fnmatchcase(model, self.pattern)
            and not (self.unless and all(config.get(k) == v for k, v in self.unless))
        )


DROPS: tuple[Drop, ...] = (
    *(Drop("anthropic/*", f, _ANTHROPIC) for f in ("temperature", "top_p", "top_k")),
    *(Drop("openai/gpt-5*", f, _REASONING, (("reasoning_effort", "none"),)) for f in ("temperature", "top_p")),
    *(Drop("openai/gpt-5*", f, _RESPONSES) for f in ("presence_penalty", "frequency_penalty", "seed", "stop_seqs")),
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
