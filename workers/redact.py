"""What a record or a trace may hold of a pool's settings, errors and paths (pure functions).

The rule, by kind of value, not by a list of secret names:

- a generate config keeps Inspect's typed settings (`max_tokens`, `temperature`,
  `reasoning_effort`...); inside a free-form mapping (`extra_headers`, `extra_body`, any
  dict-valued field) it keeps the keys, numbers, booleans and nulls, and every string value
  becomes `[redacted]`: a header value or a body string may be a gateway credential, a
  `top_k: 20` or `enable_thinking: false` cannot;
- error text (a provider's message, a dead conductor's exception) loses every string the
  conductor and the workers were given that may be a credential (API keys, model args, strings
  of those mappings), URL user info, and every token-shaped word (a run of 16+ letters and
  digits mixing both: `sk-...`, bearer tokens, JWTs), whatever it is called. It is applied
  where the text enters Inspect (workers/clean_errors.py: before a model event records it) and
  again to every error field of a round record;
- a pool is named by its bundled name or its file's stem, never by a host path.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import PureWindowsPath
from typing import Any

from workers.client_secrets import client_body_fields

REDACTED = "[redacted]"
ERROR_FIELDS = ("error", "rejection_message")  # round-record fields holding error text
_TOKEN_RUN = re.compile(r"[A-Za-z0-9]{16,}")
_WORD = re.compile(r"[^\s\"'`,;()<>\[\]{}]+")
_USERINFO = re.compile(r"(?<=://)[^/\s@]+@")
MIN_SECRET_CHARS = 4  # shorter configured strings are not looked for in error text


def redact_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """A generate config as a record may hold it (see the module docstring)."""
    return {k: _values_without_strings(v) if isinstance(v, Mapping) else v for k, v in config.items()}


def _values_without_strings(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _values_without_strings(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_values_without_strings(v) for v in value]
    if value is None or isinstance(value, bool | int | float):
        return value
    return REDACTED


def redact_text(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` without the given `secrets`, URL user info and token-shaped words."""
    for secret in sorted({s for s in secrets if len(s) >= MIN_SECRET_CHARS}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    text = _USERINFO.sub(REDACTED + "@", text)
    return _WORD.sub(lambda m: REDACTED if _token_shaped(m.group()) else m.group(), text)


def _token_shaped(word: str) -> bool:
    return any(re.search(r"\d", run) and re.search(r"[A-Za-z]", run) for run in _TOKEN_RUN.findall(word))


def redact_round(round_dict: Any, secrets: Iterable[str] = ()) -> Any:
    """A round tree (`RoundRecord.to_dict()`) with every step's `config` redacted and every
    error text (`error`, `rejection_message`) cleaned, nested rounds and attempts included."""
    secrets = tuple(secrets)
    if isinstance(round_dict, list):
        return [redact_round(v, secrets) for v in round_dict]
    if not isinstance(round_dict, dict):
        return round_dict
    out = {}
    for key, value in round_dict.items():
        if key == "config" and isinstance(value, Mapping):
            out[key] = redact_config(value)
        elif key in ERROR_FIELDS and isinstance(value, str):
            out[key] = redact_text(value, secrets)
        else:
            out[key] = redact_round(value, secrets)
    return out


def model_secrets(models: Sequence[Any]) -> list[str]:
    """Every string the models (conductor and workers) were given that may be a credential: their
    API keys, every string of their model args (headers included), of the body fields their HTTP
    client adds (workers/client_secrets.py) and of their free-form config mappings."""
    found: list[str] = []
    for model in models:
        found.append(getattr(getattr(model, "api", None), "api_key", None) or "")
        model_args = getattr(model, "model_args", None) or {}
        found += _strings(model_args)
        found += _strings(client_body_fields(model_args) or {})
        found += _strings([v for v in model.config.model_dump(exclude_none=True).values() if isinstance(v, Mapping)])
    return [s for s in found if s]


def _strings(value: Any) -> list[str]:
    if isinstance(value, Mapping):
        return _strings(list(value.values()))
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


def pool_label(pool: str) -> str:
    """A pool as a record or a client may see it: a bundled name as is, a file by its stem."""
    path = PureWindowsPath(pool)  # splits at both kinds of separator
    return path.stem if path.suffix in (".yaml", ".yml") else path.name
