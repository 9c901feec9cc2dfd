"""What each worker of a pool would contact, and with which credential: read from the pool entry
alone (pure; the environment is passed in), so a command can show it before anything runs.

A command that re-runs the workers of a pool someone else named (a log's: `python -m reports
credit`) shows every worker's `Endpoint` and asks, unless the pool is `offline` (docs/security.md,
"Commands that re-run from logs"). Classification is per worker, by what it would contact: one
worker with a network endpoint makes the pool a network pool, however many simulated workers it has.

- in-process: simulated and scripted providers (`sim/`, `scripted/`, `mockllm/`) whose model_args
  are only the provider's own offline options (its `offline_args`, workers/providers.py); they
  answer in this process, send nothing;
- local: a provider with a `local_server`, `local/` (a llama.cpp server this process starts on
  127.0.0.1; no key);
- network: everything else, including an in-process provider given any other model arg. The host is
  the entry's `base_url`, else the provider's `<PROVIDER>_BASE_URL` variable, else its default host;
  the credential is the entry's own `api_key`, else the provider's key variable (both from the
  provider's entry in workers/providers.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from workers.pools import ModelSpec
from workers.providers import capabilities

IN_PROCESS, LOCAL, NETWORK = "in-process", "local", "network"
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
    able = capabilities(spec.model)
    if able.offline_args is not None and set(args) <= able.offline_args:
        return Endpoint(spec.model, provider, IN_PROCESS, None, None)
    if able.local_server and not set(args) & {"base_url", "api_key"}:
        return Endpoint(spec.model, provider, LOCAL, "127.0.0.1 (a llama.cpp server this process starts)", None,
                        _others(args))  # fmt: skip
    if able.nested_pool:  # conductor/<pool>: a whole pool behind one worker
        return Endpoint(spec.model, provider, NETWORK, f"what pool {shown(rest)} calls (list it on its own)",
                        "the credentials that pool uses", _others(args))  # fmt: skip
    prefix = able.env(spec.model)
    if args.get("base_url"):
        host = f"{shown(args['base_url'])} (base_url in the pool file)"
    elif env.get(f"{prefix}_BASE_URL"):
        host = f"{shown(env[f'{prefix}_BASE_URL'])} (${prefix}_BASE_URL)"
    else:
        host = f"{able.host} (the provider default)"
    if args.get("api_key"):
        credential = "the api_key in the pool file"
    else:
        var = None if able.key_var is None else able.key_var.format(prefix=prefix)
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
