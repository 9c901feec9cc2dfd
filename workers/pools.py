"""Worker pools as data: which models a conductor may call, with budgets and prices.

A pool is a YAML file (see workers/pools/*.yaml): a conductor entry and a list of workers,
each an Inspect model name with its generate config, an optional description shown to the
conductor, per-million-token prices in USD, whether the provider accepts llama.cpp
grammars, and per-task config overrides (`task_overrides: {bigcodebench: {...}}`).
`load_pool` takes a bundled pool's name or a path to the user's own file and validates it
whole before use (types, ranges, unknown keys, generate-config keys against Inspect's
`GenerateConfig`): a bad file fails with one message naming the file, the entry, the
field and the fix. Inspect is imported only to validate `config` blocks.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from workers.client_secrets import unroutable
from workers.provider_settings import SdkTimeoutError, sdk_model_args
from workers.providers import any_simulated, capabilities, model_part, provider_name, takers

POOLS_DIR = Path(__file__).parent / "pools"
DEFAULT_POOL = "local"
FORMAT_HINT = "see workers/pools/local.yaml for the format"

POOL_KEYS = ("name", "description", "setting", "conductor", "workers")
SETTINGS = ("constrained", "unconstrained")  # the paper's two settings
ENTRY_KEYS = ("model", "description", "config", "model_args", "price", "grammar", "task_overrides")
PRICE_KEYS = ("input", "output")


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input + output_tokens * self.output) / 1_000_000


@dataclass(frozen=True)
class ModelSpec:
    """One model of a pool: an Inspect model name plus how to call it."""

    model: str
    description: str = ""
    config: dict[str, Any] = field(default_factory=dict)
    model_args: dict[str, Any] = field(default_factory=dict)
    price: Price | None = None
    grammar: bool = False
    task_overrides: dict[str, dict[str, Any]] = field(default_factory=dict)

    def config_for(self, task: str | None) -> dict[str, Any]:
        """The generate config for a task: `config` updated by the task's override, if any.

        A task matches by its name or by the last part of a registry name (`pkg/bigcodebench`).
        """
        if not task or not self.task_overrides:
            return dict(self.config)
        key = task if task in self.task_overrides else task.rsplit("/", 1)[-1]
        return {**self.config, **self.task_overrides.get(key, {})}


@dataclass(frozen=True)
class PoolSpec:
    name: str
    workers: tuple[ModelSpec, ...]
    conductor: ModelSpec | None = None
    description: str = ""
    setting: str = ""  # the paper's setting whose numbers its results stand beside (SETTINGS), "" none

    @property
    def simulated(self) -> bool:
        """Whether any worker is simulated (it needs the sample's answer key)."""
        return any_simulated(w.model for w in self.workers)

    def price_of(self, model: str) -> Price | None:
        """`model`'s price: its entry's in this pool, else a bundled pool's (`known_prices`)."""
        entry = next((s for s in (self.conductor, *self.workers) if s is not None and s.model == model), None)
        return entry.price if entry is not None and entry.price is not None else known_prices().get(model)


class PoolError(ValueError):
    """A pool name or file that cannot be used."""


def bundled_pools() -> list[str]:
    return sorted(p.stem for p in POOLS_DIR.glob("*.yaml"))


def load_pool(name_or_path: str = DEFAULT_POOL) -> PoolSpec:
    """Load a bundled pool by name (`local`, `paper`, ...) or a pool YAML file by path.

    One object per file: a pool is read once and the same `PoolSpec` returned for any spelling of
    its path until the file changes (the cache key is the resolved path, its modification time and
    size), so an eval's option check, prices, header and samples share it. On reading, its prices
    are registered with Inspect (workers/costs.py), the pools its `conductor/<pool>` entries run are
    loaded too, and a cycle of them is refused."""
    path = Path(name_or_path)
    if not path.suffix:
        path = POOLS_DIR / f"{name_or_path}.yaml"
    if not path.is_file():
        raise PoolError(
            f"no pool file {path}; use a bundled pool ({', '.join(bundled_pools())}) "
            f"or the path to your own pool YAML ({FORMAT_HINT})"
        )
    stat = path.stat()
    key = (path.resolve(), stat.st_mtime_ns, stat.st_size)
    if key not in _LOADED:
        _LOADED[key] = _read_pool(path, name_or_path)
    return _LOADED[key]


_LOADED: dict[tuple[Path, int, int], PoolSpec] = {}  # load_pool's: (file, mtime, size) -> pool


def _read_pool(path: Path, name: str) -> PoolSpec:
    try:
        data = _read_yaml(path)
    except OSError as error:
        raise PoolError(f"pool file {path} cannot be read: {error.strerror}; fix: check its permissions") from None
    except (yaml.YAMLError, UnicodeDecodeError) as error:
        detail = " ".join(str(error).split())  # one line
        raise PoolError(f"pool file {path} is not valid YAML: {detail}; fix: {FORMAT_HINT}") from None
    try:
        pool = parse_pool(data, default_name=path.stem)
    except _Invalid as error:
        raise PoolError(f"pool file {path}: {error}") from None
    _load_nested_pools(pool, path, name)
    from workers.costs import register_pool_costs  # Inspect's cost data (--cost-limit, usage)

    register_pool_costs(pool)
    return pool


def _read_yaml(path: Path) -> Any:
    """The YAML data of a pool file (the one read of it: tests/workers/test_pool_loads.py counts them)."""
    return yaml.safe_load(path.read_text())


# pools being loaded in this context, outermost first: (file, name as written), to name a cycle
_LOADING: ContextVar[tuple[tuple[Path, str], ...]] = ContextVar("pools_loading", default=())


def _load_nested_pools(pool: PoolSpec, path: Path, name: str) -> None:
    """Load every pool that `pool`'s entries run (`conductor/<pool>`); a chain that leads back
    to a pool being loaded is refused with the cycle named (it would recurse without end)."""
    chain = _LOADING.get()
    files = [file for file, _ in chain]
    if path.resolve() in files:
        cycle = " -> ".join([shown for _, shown in chain[files.index(path.resolve()) :]] + [name])
        raise PoolError(f"pools run each other in a cycle: {cycle} (each `conductor/<pool>` entry runs that "
                        f"pool); fix: remove or replace the entry of the cycle that leads back to {name}")  # fmt: skip
    token = _LOADING.set((*chain, (path.resolve(), name)))
    try:
        for spec in (pool.conductor, *pool.workers):
            if spec is not None and capabilities(spec.model).nested_pool:
                load_pool(model_part(spec.model))
    finally:
        _LOADING.reset(token)


class _Invalid(ValueError):
    """One problem in a pool's data, located by `where` (e.g. `workers[2].price.input`)."""

    def __init__(self, where: str, problem: str, fix: str) -> None:
        super().__init__(f"{where}: {problem}; fix: {fix}")


def parse_pool(data: Any, default_name: str) -> PoolSpec:
    """A validated PoolSpec from the YAML data of a pool file."""
    if not isinstance(data, Mapping):
        raise _Invalid(
            "top level", f"expected a mapping, got {_kind(data)}", f"start the file with `workers:` ({FORMAT_HINT})"
        )
    _check_keys(data, POOL_KEYS, "top level")
    workers = data.get("workers")
    if not isinstance(workers, list) or not workers:
        raise _Invalid("workers", f"expected a non-empty list of models, got {_kind(workers)}",
                       "list at least one worker, e.g. `workers: [openai/gpt-5]`")  # fmt: skip
    conductor = data.get("conductor")
    setting = _text(data, "setting", "top level")
    if setting and setting not in SETTINGS:
        raise _Invalid("setting", f"expected {' or '.join(SETTINGS)}, got {setting!r}",
                       "name the paper's setting whose budgets the pool follows, or leave it out")  # fmt: skip
    return PoolSpec(
        name=_text(data, "name", "top level") or default_name,
        description=_text(data, "description", "top level"),
        setting=setting,
        workers=tuple(_model(w, f"workers[{i}]") for i, w in enumerate(workers)),
        conductor=_model(conductor, "conductor") if conductor is not None else None,
    )


def _model(entry: Any, where: str) -> ModelSpec:
    if isinstance(entry, str):
        entry = {"model": entry}
    if not isinstance(entry, Mapping):
        raise _Invalid(where, f"expected a model name or a mapping, got {_kind(entry)}",
                       "write `- provider/model` or `- {model: provider/model, ...}`")  # fmt: skip
    model = entry.get("model")
    if not isinstance(model, str) or not model.strip():
        raise _Invalid(f"{where}.model", f"expected an Inspect model name, got {_kind(model)}",
                       "give `model: provider/name`, e.g. `openai/gpt-5`")  # fmt: skip
    where = f"{where} ({model})"
    _check_keys(entry, ENTRY_KEYS, where)
    grammar = entry.get("grammar", False)
    if not isinstance(grammar, bool):
        raise _Invalid(f"{where}.grammar", f"expected true or false, got {_kind(grammar)}",
                       "write `grammar: true` or `grammar: false` without quotes")  # fmt: skip
    model_args = entry.get("model_args") or {}
    if not isinstance(model_args, Mapping):
        raise _Invalid(f"{where}.model_args", f"expected a mapping, got {_kind(model_args)}",
                       "write `model_args: {base_url: ...}`")  # fmt: skip
    if "default_headers" in model_args:
        check_headers(model_args["default_headers"], f"{where}.model_args.default_headers")
    spec = ModelSpec(
        model=model,
        description=_text(entry, "description", where),
        config=generate_config(entry.get("config"), f"{where}.config"),
        model_args=dict(model_args),
        price=_price(entry.get("price"), f"{where}.price"),
        grammar=grammar,
        task_overrides=_task_overrides(entry.get("task_overrides"), f"{where}.task_overrides"),
    )
    _check_top_k(spec, where)
    _check_sim_profile(spec, where)
    _check_sdk_timeout(spec, where)
    _check_secret_routes(spec, where)
    return spec


def _config_blocks(spec: ModelSpec) -> dict[str, dict[str, Any]]:
    """The entry's generate configs by where they are written: `config` and each task's, merged."""
    return {"config": spec.config, **{f"task_overrides.{t}": spec.config_for(t) for t in spec.task_overrides}}


def _check_sim_profile(spec: ModelSpec, where: str) -> None:
    """Refuse a simulated worker whose profile does not exist (the sample would fail on it)."""
    if not capabilities(spec.model).simulated:
        return
    name = model_part(spec.model)
    from workers.simulation import SimError, load_profiles  # a simulated pool's check only

    try:
        profiles = load_profiles(spec.model_args.get("profiles"))
    except SimError as error:
        raise _Invalid(f"{where}.model_args.profiles", str(error), "give the path of a profiles YAML file") from None
    if name not in profiles:
        close = difflib.get_close_matches(name, list(profiles), n=1)
        fix = f"did you mean 'sim/{close[0]}'?" if close else f"use sim/<one of {', '.join(profiles)}>"
        raise _Invalid(f"{where}.model", f"no simulated profile {name!r}", fix)


def _check_sdk_timeout(spec: ModelSpec, where: str) -> None:
    """Refuse an attempt_timeout that the provider's SDK would cut short (workers/provider_settings.py)."""
    for name, config in _config_blocks(spec).items():
        try:
            sdk_model_args(spec.model, config, spec.model_args)
        except SdkTimeoutError as error:
            raise _Invalid(f"{where}.{name}", error.problem, error.fix) from None


def _check_secret_routes(spec: ModelSpec, where: str) -> None:
    """Refuse a header or body string that the provider could take only in its GenerateConfig,
    which Inspect's log records whole (workers/client_secrets.py)."""
    for name, config in _config_blocks(spec).items():
        if problem := unroutable(spec.model, config):
            provider = provider_name(spec.model)
            able = ", ".join(takers("headers" if problem == "extra_headers" else "body"))
            who, fix = (
                f"Inspect's {provider} provider",
                (
                    f"remove it, or reach the model through a provider whose client takes it ({able}; e.g. "
                    "`openai-api/<service>/<model>` with `model_args: {base_url: ...}` for an OpenAI-compatible server)"
                ),
            )
            if capabilities(spec.model).body and config.get("batch"):
                who, fix = f"a batching {provider} worker (its batch files are built from it)", "remove it or `batch`"
            raise _Invalid(f"{where}.{name}.{problem}", f"{who} takes it only in the generate config, which every "
                           "model event of the .eval log records whole (a header or body string may be a "
                           "credential)", fix)  # fmt: skip


def _check_top_k(spec: ModelSpec, where: str) -> None:
    """Refuse a top_k that the provider would silently drop."""
    if capabilities(spec.model).top_k:
        return
    for name, config in _config_blocks(spec).items():
        if config.get("top_k") is not None:
            provider = provider_name(spec.model)
            raise _Invalid(f"{where}.{name}.top_k", f"Inspect's {provider} provider does not send top_k",
                           f"move it into extra_body: `extra_body: {{top_k: {config['top_k']}}}`")  # fmt: skip


def _price(value: Any, where: str) -> Price | None:
    if value is None:
        return None
    fix = "write `price: {input: 1.25, output: 10.0}` (USD per million tokens, >= 0)"
    if not isinstance(value, Mapping):
        raise _Invalid(where, f"expected a mapping, got {_kind(value)}", fix)
    _check_keys(value, PRICE_KEYS, where)
    amounts = []
    for key in PRICE_KEYS:
        amount = value.get(key)
        if isinstance(amount, bool) or not isinstance(amount, int | float):
            raise _Invalid(f"{where}.{key}", f"expected a number, got {_kind(amount)}", fix)
        if not math.isfinite(amount) or amount < 0:
            raise _Invalid(f"{where}.{key}", f"must be a finite number >= 0, got {amount}", fix)
        amounts.append(float(amount))
    return Price(*amounts)


def _task_overrides(value: Any, where: str) -> dict[str, dict[str, Any]]:
    if value is None:
        return {}
    fix = "write `task_overrides: {bigcodebench: {reasoning_effort: medium}}` (task name -> config)"
    if not isinstance(value, Mapping):
        raise _Invalid(where, f"expected a mapping, got {_kind(value)}", fix)
    overrides = {}
    for task, config in value.items():
        if not isinstance(task, str) or not task:
            raise _Invalid(where, f"task names must be strings, got {_kind(task)}", fix)
        if not isinstance(config, Mapping) or not config:
            raise _Invalid(f"{where}.{task}", f"expected a non-empty config mapping, got {_kind(config)}", fix)
        overrides[task] = generate_config(config, f"{where}.{task}")
    return overrides


def generate_config(value: Any, where: str) -> dict[str, Any]:
    """A pool `config` block checked against Inspect's GenerateConfig (names and types)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _Invalid(where, f"expected a mapping of generate options, got {_kind(value)}",
                       "write e.g. `config: {max_tokens: 4096, temperature: 0.2}`")  # fmt: skip
    from inspect_ai.model import GenerateConfig
    from pydantic import ValidationError

    _check_keys(value, tuple(GenerateConfig.model_fields), where, "Inspect GenerateConfig field")
    if value.get("extra_headers") is not None:  # before Inspect's check, whose message would show a value
        check_headers(value["extra_headers"], f"{where}.extra_headers")
    try:
        GenerateConfig.model_validate(dict(value))
    except ValidationError as error:
        first = error.errors()[0]
        key = ".".join(str(p) for p in first["loc"])
        raise _Invalid(f"{where}.{key}", f"{first['msg']} (got {first.get('input')!r})",
                       "use the type Inspect's GenerateConfig documents for this option") from None  # fmt: skip
    for key, (low, inclusive) in _CONFIG_BOUNDS.items():
        number = value.get(key)
        if number is not None and not (number >= low if inclusive else number > low):
            relation, fix = (">=", "at least") if inclusive else (">", "more than")
            raise _Invalid(f"{where}.{key}", f"must be {relation} {low}, got {number!r}",
                           f"set {key} to {fix} {low} or leave it out")  # fmt: skip
    return dict(value)


# generate options whose type Inspect checks but not their range: (bound, bound allowed)
_CONFIG_BOUNDS = {
    "max_tokens": (0, False),
    "timeout": (0, False),
    "attempt_timeout": (0, False),
    "max_connections": (0, False),
    "max_retries": (0, True),
    "temperature": (0, True),
    "top_p": (0, False),
    "top_k": (0, False),
    "num_choices": (0, False),
}


# RFC 9110 5.1 and 5.5: a field name is a token; a value is visible characters with single spaces or
# tabs between them, here ASCII only (httpx encodes a str value as ASCII; h11 refuses any other shape)
_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_HEADER_VALUE = re.compile(r"(?:[\x21-\x7e]+(?:[ \t]+[\x21-\x7e]+)*)?")


def check_headers(headers: Any, where: str) -> None:
    """Refuse headers HTTP cannot carry (every call would fail), naming the header and the fix;
    a value may be a credential, so a message never shows it."""
    if not isinstance(headers, Mapping):
        raise _Invalid(where, f"expected a mapping of header names to values, got {type(headers).__name__}",
                       "write `{X-Api-Key: ...}`")  # fmt: skip
    for name, value in headers.items():
        if not isinstance(name, str) or not _HEADER_NAME.fullmatch(name):
            raise _Invalid(where, f"header name {ascii(name)[:60]} is not an HTTP token",
                           "use letters, digits and !#$%&'*+-.^_`|~ only, e.g. X-Api-Key")  # fmt: skip
        if not isinstance(value, str):
            raise _Invalid(f"{where}.{name}", f"expected text, got {type(value).__name__}", "quote the value")
        if not _HEADER_VALUE.fullmatch(value):
            raise _Invalid(f"{where}.{name}", *_header_value_problem(value))


def _header_value_problem(value: str) -> tuple[str, str]:
    """(what is wrong with a header value HTTP cannot carry, the fix), without the value."""
    if any(c in value for c in "\r\n\0"):
        return "the value holds a line break or NUL (it would end the header)", "put the value on one line"
    if not value.isascii():
        return ("the value holds a non-ASCII character (HTTP clients send header values as ASCII)",
                "encode it as the receiving service expects (e.g. percent- or base64-encoded)")  # fmt: skip
    if value != value.strip(" \t"):
        return "the value starts or ends with white space", "remove the leading and trailing spaces"
    return "the value holds a control character", "remove it (a header value is visible text)"


def _text(data: Mapping, key: str, where: str) -> str:
    value = data.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _Invalid(f"{where}.{key}", f"expected text, got {_kind(value)}", f'quote it: `{key}: "..."`')
    return value


def _check_keys(data: Mapping, allowed: tuple[str, ...], where: str, what: str = "key") -> None:
    for key in data:
        if key not in allowed:
            close = difflib.get_close_matches(str(key), allowed, n=1)
            hint = f"did you mean `{close[0]}`?" if close else f"allowed: {', '.join(allowed)}"
            raise _Invalid(f"{where}.{key}", f"unknown {what}", hint)


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    return f"{type(value).__name__} {value!r}"[:80]


@cache
def known_prices() -> dict[str, Price]:
    """Prices of every model named in the bundled pools, for models given on the command line
    (read only when an eval names a model outside its pool: `PoolSpec.price_of`)."""
    prices: dict[str, Price] = {}
    for name in bundled_pools():
        pool = load_pool(name)
        for spec in (*pool.workers, pool.conductor):
            if spec is not None and spec.price is not None:
                prices.setdefault(spec.model, spec.price)
    return prices
