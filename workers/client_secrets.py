"""A pool's settings that may hold credentials reach the provider's client, never Inspect's
GenerateConfig (the HTTP client that adds body fields is workers/body_fields.py).

Inspect records every call's whole GenerateConfig in the log's model events, and the request it
builds from it in the event's `call`. By the rule of workers/redact.py every header value and every
string of a request body may be a credential (a gateway's `Authorization: Bearer ...`), so a pool
entry's config is split before its model is made (`route_secrets`):

- `extra_headers` go to the SDK client as its `default_headers` model arg (providers whose entry
  in workers/providers.py has `headers`: Inspect's openai, openai-api, anthropic and local hand
  it to their client): sent with every request, recorded nowhere;
- the top-level `extra_body` fields that hold a string go to an HTTP client that adds them to every
  JSON request body (the `http_client` model arg of the OpenAI-SDK providers, `body`: openai,
  openai-api, local; not when the config batches, as batch files are built from the config); a field the
  call's own config also sets keeps the call's value, as with `extra_body`.
  Fields of numbers, booleans and nulls (`top_k: 20`, `chat_template_kwargs: {enable_thinking:
  false}`) stay in the config, where the log shows them;
- providers that send no request (`sends` false: `sim/`, `scripted/`, `mockllm/`, `conductor/`):
  both are dropped;
- any other provider takes them only in the config: `unroutable` names the field, and `load_pool`
  refuses the pool (workers/pools.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workers.providers import capabilities


def secret_settings(config: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str], dict[str, Any]]:
    """`config` without what may hold a credential, the headers, and the body fields holding a string."""
    kept = {k: v for k, v in config.items() if k not in ("extra_headers", "extra_body")}
    body = dict(config.get("extra_body") or {})
    secret_body = {k: v for k, v in body.items() if _holds_string(v)}
    if plain := {k: v for k, v in body.items() if k not in secret_body}:
        kept["extra_body"] = plain
    return kept, {str(k): str(v) for k, v in (config.get("extra_headers") or {}).items()}, secret_body


def unroutable(model: str, config: Mapping[str, Any]) -> str | None:
    """The field of `config` that `model`'s provider could take only in the config (None: none)."""
    provider = capabilities(model)
    if not provider.sends:
        return None
    _, headers, body = secret_settings(config)
    if headers and not provider.headers:
        return "extra_headers"
    if body and (not provider.body or config.get("batch")):  # a batch file is built from the config
        return f"extra_body.{next(iter(body))}"
    return None


def route_secrets(
    model: str, config: Mapping[str, Any], model_args: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The config without its headers and string body fields, and the model args that carry them
    to `model`'s client: `default_headers` (the pool's own lose to `extra_headers`, as on the wire)
    and an `http_client` adding the body fields (module docstring)."""
    kept, headers, body = secret_settings(config)
    args = dict(model_args)
    provider = capabilities(model)
    if not provider.sends:
        return kept, args
    if problem := unroutable(model, config):
        raise ValueError(f"{model}: {problem} cannot be kept out of Inspect's log (see workers/client_secrets.py)")
    if headers:
        args["default_headers"] = {**(args.get("default_headers") or {}), **headers}
    if body:
        from workers.body_fields import body_fields_client  # the HTTP stack: imported only when needed

        args["http_client"] = body_fields_client(body, trust_env=not provider.local_server)
    return kept, args


def client_body_fields(model_args: Mapping[str, Any]) -> dict[str, Any] | None:
    """The body fields a model's HTTP client adds (`route_secrets`; None: a plain client)."""
    return getattr(model_args.get("http_client"), "body_fields", None)  # workers.body_fields.BodyFieldsClient


def client_settings(model_args: Mapping[str, Any], config: Mapping[str, Any]) -> dict[str, Any]:
    """What `route_secrets` handed a model's client, as the config fields it came from (for a
    record: workers/redact.py redacts them); `config` is the model's config, whose body fields win."""
    settings: dict[str, Any] = {}
    if headers := model_args.get("default_headers"):
        settings["extra_headers"] = dict(headers)
    if fields := client_body_fields(model_args):
        settings["extra_body"] = {**fields, **(config.get("extra_body") or {})}
    return settings


def _holds_string(value: Any) -> bool:
    if isinstance(value, Mapping):
        return any(_holds_string(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_holds_string(v) for v in value)
    return isinstance(value, str)
