"""What each worker of a pool would contact, and with which credential: read from the pool entry
alone (pure; the environment is passed in), so a command can show it before anything runs.

A command that re-runs the workers of a pool someone else named (a log's: `python -m reports
credit`) shows every worker's `Endpoint` and asks, unless the pool is `offline` (docs/security.md,
"Commands that re-run from logs"). Classification is per worker, by what it would contact: one
worker with a network endpoint makes the pool a network pool, however many simulated workers it has.

- in-process: simulated and scripted providers (`sim/`, `scripted/`, `mockllm/`) whose model_args
  are only the provider's own offline options; they answer in this process, send nothing;
- local: `local/` (a llama.cpp server this process starts on 127.0.0.1; no key);
- network: everything else, including an in-process provider given any other model arg. The host is
  the entry's `base_url`, else the provider's `<PROVIDER>_BASE_URL` variable, else its default host;
  the credential is the entry's own `api_key`, else the provider's key variable.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from workers.pools import ModelSpec

IN_PROCESS, LOCAL, NETWORK = "in-process", "local", "network"
# in-process providers and the model_args that keep them offline (any other makes the worker `network`)
OFFLINE_ARGS = {"sim": {"seed", "profiles", "latency", "latency_sigma"}, "scripted": set(),
                "mockllm": {"custom_outputs"}}  # fmt: skip
DEFAULT_HOSTS = {
    "openai": "api.openai.com", "anthropic": "api.anthropic.com", "google": "generativelanguage.googleapis.com",
    "mistral": "api.mistral.ai", "groq": "api.groq.com", "together": "api.together.xyz", "openrouter": "openrouter.ai",
    "grok": "api.x.ai", "fireworks": "api.fireworks.ai", "deepseek": "api.deepseek.com",
    "perplexity": "api.perplexity.ai", "ollama": "localhost:11434", "hf": "huggingface.co (model download)",
    "vllm": "a vLLM server started on localhost", "sglang": "an SGLang server started on localhost",
}  # fmt: skip
ENV_PREFIX = {"grok": "XAI"}  # Inspect's variable prefix where it is not the provider's name
KEY_VARS = {"hf": "HF_TOKEN", "ollama": None, "bedrock": "AWS credentials"}  # else <PREFIX>_API_KEY
SHOWN_ARG = 200  # characters of another model arg's value shown


@dataclass(frozen=True)
class Endpoint:
    """Where one worker's calls go: `kind` (IN_PROCESS, LOCAL, NETWORK), the host and the credential
    sent (None: none), and its other model args (shown: they may steer the provider)."""

    model: str
    provider: str
    kind: str
    host: str | None
    credential: str | None
    args: tuple[str, ...] = ()

    def describe(self) -> str:
        """One line for a terminal (the pool's text shown with `ascii` unless printable ASCII)."""
        if self.kind == IN_PROCESS:
            where = "answered in this process (simulated), no network, no credential"
        else:
            where = f"calls {self.host}, sends {self.credential or 'no credential'}"
        extra = f"; other model_args: {', '.join(self.args)}" if self.args else ""
        return f"{shown(self.model)} ({shown(self.provider)}): {where}{extra}"


def endpoint(spec: ModelSpec, env: Mapping[str, str]) -> Endpoint:
    """What the pool entry `spec` would contact (module docstring), with `env` as the environment."""
    provider, _, rest = spec.model.partition("/")
    args = dict(spec.model_args)
    if provider in OFFLINE_ARGS and set(args) <= OFFLINE_ARGS[provider]:
        return Endpoint(spec.model, provider, IN_PROCESS, None, None)
    if provider == "local" and not set(args) & {"base_url", "api_key"}:
        return Endpoint(spec.model, provider, LOCAL, "127.0.0.1 (a llama.cpp server this process starts)", None,
                        _others(args))  # fmt: skip
    if provider == "conductor":  # conductor/<pool>: a whole pool behind one worker
        return Endpoint(spec.model, provider, NETWORK, f"what pool {shown(rest)} calls (list it on its own)",
                        "the credentials that pool uses", _others(args))  # fmt: skip
    prefix = ENV_PREFIX.get(provider, provider)
    if provider == "openai-api":  # openai-api/<service>/<model>: the service's variables
        prefix = rest.partition("/")[0]
    prefix = prefix.upper().replace("-", "_")
    if args.get("base_url"):
        host = f"{shown(args['base_url'])} (base_url in the pool file)"
    elif env.get(f"{prefix}_BASE_URL"):
        host = f"{shown(env[f'{prefix}_BASE_URL'])} (${prefix}_BASE_URL)"
    else:
        host = f"{DEFAULT_HOSTS.get(provider, 'the provider default host')} (the provider default)"
    if args.get("api_key"):
        credential = "the api_key in the pool file"
    else:
        var = KEY_VARS.get(provider, f"{prefix}_API_KEY")
        credential = None if var is None else var if " " in var else f"${shown(var)}"
    return Endpoint(spec.model, provider, NETWORK, host, credential, _others(args))


def offline(endpoints: Iterable[Endpoint]) -> bool:
    """True when no worker contacts anything (every one in-process): no network, no credential."""
    return all(e.kind == IN_PROCESS for e in endpoints)


def free(endpoints: Iterable[Endpoint]) -> bool:
    """True when no worker can spend money: every one in-process or local."""
    return all(e.kind in (IN_PROCESS, LOCAL) for e in endpoints)


def _others(args: Mapping[str, Any]) -> tuple[str, ...]:
    out = []
    for key, value in sorted(args.items(), key=lambda kv: str(kv[0])):
        if key not in ("base_url", "api_key"):
            text = shown(value)
            cut = f"... ({len(text) - SHOWN_ARG} more characters)" if len(text) > SHOWN_ARG else ""
            out.append(f"{shown(key)}={text[:SHOWN_ARG]}{cut}")
    return tuple(out)


def shown(value: Any) -> str:
    """`value` as text that cannot move a terminal's cursor, hide a part or pass a look-alike letter
    (`ascii` unless printable ASCII)."""
    text = str(value)
    return text if text.isascii() and text.isprintable() else ascii(text)
