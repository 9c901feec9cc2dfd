"""Resolve who conducts and who works, from Inspect model roles or a pool file.

Workers: `--model-role workers=a,b,c` if given, else the pool file (`-S pool=...`, default
`local`). Conductor: `--model-role conductor=...`, else the eval model (`--model`), else the
pool's conductor. Every resolved model is an Inspect `Model`, so any provider works.
A pool entry's `task_overrides` apply when the running sample's task has that name (read
from Inspect's active sample). A conductor whose budget nobody set gets the paper's 1024
tokens (`CONDUCTOR_MAX_TOKENS`); `-S max_tokens`, `--max-tokens` or the pool override it.

`resolve_team` does all of it for one sample from the eval's one resolved pool (a `PoolSpec`,
or a name `load_pool` resolves to the same object) and hands the executor one `Team` (conductor,
workers with their prices and settings). `register_eval_prices` prices the eval's models once,
when the solver is built.
"""

from __future__ import annotations

import json
import random
from copy import copy
from dataclasses import dataclass, replace

from inspect_ai.model import GenerateConfig, Model, get_model, model_roles

from solvers.executor import Worker
from solvers.grammar import Constraint
from workers.call_budget import eval_call_budget
from workers.client_secrets import client_body_fields, route_secrets
from workers.costs import register_eval_costs
from workers.pools import DEFAULT_POOL, ModelSpec, PoolSpec, Price, known_prices, load_pool
from workers.provider_settings import sdk_model_args
from workers.providers import capabilities

CONDUCTOR_MAX_TOKENS = 1024  # the paper's conductor completion budget


@dataclass(frozen=True)
class Conductor:
    model: Model
    name: str
    price: Price | None
    grammar: bool


@dataclass(frozen=True)
class Overrides:
    """The solver's generation options: the conductor's and the workers' (None: the pool's)."""

    temperature: float | None = None
    max_tokens: int | None = None
    grammar: bool | None = None
    worker_temperature: float | None = None
    worker_max_tokens: int | None = None


@dataclass(frozen=True)
class Team:
    """Who conducts and who works for one sample: every worker slot, before a `pool_size` subset."""

    conductor: Conductor
    workers: list[Worker]


def resolve_team(
    pool: str | PoolSpec | None,
    overrides: Overrides,
    answer_constraint: Constraint | None = None,
    *,
    lead: Model | None = None,
    workers: list[Worker] | None = None,
    replace_workers: str | None = None,
) -> Team:
    """The team of one sample from the pool (`pool`, else `local`): `lead` conducts, else the pool's
    conductor; `workers` work, else the pool's; `replace_workers` runs every slot (`replaced_workers`).
    Inside an eval a sample reuses the team of an earlier sample of the same run with the same
    options (`_TEAMS`): building one (configs merged, models looked up) cost ~3 ms of CPU a sample."""
    spec = resolved_pool(pool)
    run = _eval_run()
    if workers is not None or run is None:  # the `workers` role's models, or outside an eval: built afresh
        return _built_team(spec, overrides, answer_constraint, lead, workers, replace_workers)
    key = (run, overrides, answer_constraint, replace_workers)
    cached = _TEAMS.get(key)
    if cached is None or cached[0] is not spec or cached[1] is not lead:
        if len(_TEAMS) >= TEAM_CACHE_SIZE:
            _TEAMS.clear()
        team = _built_team(spec, overrides, answer_constraint, lead, None, replace_workers)
        cached = _TEAMS[key] = (spec, lead, team)
    return cached[2]


TEAM_CACHE_SIZE = 256  # teams kept (one per eval run, answer constraint and solver options)
_TEAMS: dict[tuple, tuple[PoolSpec, Model | None, Team]] = {}


def _eval_run() -> tuple[str, str] | None:
    """(task, log location) of the eval run whose sample is running: its models, roles and call
    budget are fixed for the run. None outside a sample."""
    from inspect_ai.log._samples import sample_active  # no public accessor

    active = sample_active()
    return (active.task, active.log_location) if active is not None else None


def _built_team(
    spec: PoolSpec,
    overrides: Overrides,
    answer_constraint: Constraint | None,
    lead: Model | None,
    workers: list[Worker] | None,
    replace_workers: str | None,
) -> Team:
    o = overrides
    if lead is not None:
        conductor = model_conductor(lead, o.temperature, o.max_tokens, o.grammar, spec.price_of(str(lead)))
    else:
        conductor = pool_conductor(spec, o.temperature, o.max_tokens, o.grammar)
    task = current_task_name()
    if workers is None:
        workers = pool_workers(spec, o.worker_temperature, o.worker_max_tokens, answer_constraint, task)
    return with_replacement(Team(conductor, workers), replace_workers, spec, o, answer_constraint)


def resolved_pool(pool: str | PoolSpec | None) -> PoolSpec:
    """`pool` itself when resolved, else the pool it names (`local` when None)."""
    return pool if isinstance(pool, PoolSpec) else load_pool(pool or DEFAULT_POOL)


def register_eval_prices(pool: PoolSpec, replace_workers: str | None = None) -> None:
    """Price the eval's models with Inspect before it checks a `--cost-limit` (workers/costs.py): the
    pool's, and the models the eval names (`--model`, `--model-role`, `replace_workers`). A solver
    built outside an eval (Python API, before `eval()`) cannot see them: every bundled pool's then."""
    from inspect_ai.model._model import active_model  # no public accessor: None outside an eval

    if (model := active_model()) is None:
        named = list(known_prices())
    else:
        roles = [m for r in model_roles().values() for m in (r if isinstance(r, list) else [r])]
        named = [str(m) for m in (model, *roles) if not capabilities(m).placeholder]
        named += [replace_workers] if replace_workers else []
    register_eval_costs(pool, named)


def with_replacement(
    team: Team,
    model: str | None,
    pool: str | PoolSpec,
    overrides: Overrides,
    answer_constraint: Constraint | None = None,
) -> Team:
    """`team` with every worker slot run by `model` (`replaced_workers`); `team` itself when `model` is None."""
    if not model:
        return team
    o = overrides
    return Team(team.conductor, replaced_workers(team.workers, model, pool, o.worker_temperature, o.worker_max_tokens,
                                                 answer_constraint))  # fmt: skip


def eval_conductor() -> Model | None:
    """The `conductor` role, else the eval model (`--model`) as Inspect's "conductor" role (so
    per-role usage shows its spend); None when neither is set."""
    role = model_roles().get("conductor")
    if role is not None:
        return role[0] if isinstance(role, list) else role
    active = get_model()
    return None if capabilities(active).placeholder else get_model(role="conductor", default=active)


def role_workers(
    pool: str | None, temperature: float | None = None, max_tokens: int | None = None
) -> list[Worker] | None:
    """The `workers` role's models when no pool is named (None otherwise)."""
    role = model_roles().get("workers")
    if role is None or pool is not None:
        return None
    overrides = GenerateConfig(temperature=temperature, max_tokens=max_tokens)
    return [_role_worker(m, overrides) for m in (role if isinstance(role, list) else [role])]


def resolve_workers(
    pool: str | None,
    temperature: float | None = None,
    max_tokens: int | None = None,
    answer_constraint: Constraint | None = None,
) -> list[Worker]:
    """The worker pool, with the solver's generation overrides applied."""
    given = role_workers(pool, temperature, max_tokens)
    if given is not None:
        return given
    return pool_workers(pool or DEFAULT_POOL, temperature, max_tokens, answer_constraint, current_task_name())


def pool_workers(
    pool: str | PoolSpec,
    temperature: float | None = None,
    max_tokens: int | None = None,
    answer_constraint: Constraint | None = None,
    task: str | None = None,
) -> list[Worker]:
    """The workers of a pool (bundled name, YAML path or a loaded `PoolSpec`), outside any
    eval too (training); `task` selects the entries' `task_overrides`."""
    overrides = GenerateConfig(temperature=temperature, max_tokens=max_tokens)
    spec = resolved_pool(pool)
    return [_spec_worker(s, overrides, answer_constraint, task) for s in spec.workers]


def model_conductor(
    model: Model,
    temperature: float | None = None,
    max_tokens: int | None = None,
    grammar: bool | None = None,
    price: Price | None = None,
) -> Conductor:
    """A given model as the conductor at `price`, with the solver's overrides (the paper's 1024
    tokens unless a budget is set); a grammar when its provider takes one (unless `grammar` says)."""
    overrides = GenerateConfig(temperature=temperature, max_tokens=max_tokens)
    name = str(model)
    if overrides.max_tokens is None and model.config.max_tokens is None:
        overrides = overrides.merge(GenerateConfig(max_tokens=CONDUCTOR_MAX_TOKENS))
    use_grammar = capabilities(name).grammar if grammar is None else grammar
    return Conductor(_with_config(model, overrides), name, price, use_grammar)


def pool_conductor(
    pool: str | PoolSpec, temperature: float | None = None, max_tokens: int | None = None, grammar: bool | None = None
) -> Conductor:
    """The conductor a pool file names, with the solver's overrides."""
    overrides = GenerateConfig(temperature=temperature, max_tokens=max_tokens)
    spec = _pool_conductor(resolved_pool(pool))
    if overrides.max_tokens is None and "max_tokens" not in spec.config:
        overrides = overrides.merge(GenerateConfig(max_tokens=CONDUCTOR_MAX_TOKENS))
    return Conductor(
        _spec_model(spec, overrides, current_task_name(), role="conductor"),
        spec.model,
        spec.price,
        spec.grammar if grammar is None else grammar,
    )


def replaced_workers(
    workers: list[Worker],
    model: str,
    pool: str | PoolSpec | None,
    temperature: float | None = None,
    max_tokens: int | None = None,
    answer_constraint: Constraint | None = None,
) -> list[Worker]:
    """Every worker slot run by one model (`-S replace_workers=`, the paper's Table 10): each
    slot keeps its description, so the conductor's prompt is unchanged. The model runs with its
    own entry's config and price when the pool (`pool`, else `local`) lists it, else with
    Inspect's defaults and the known list price."""
    overrides = GenerateConfig(temperature=temperature, max_tokens=max_tokens)
    listed = resolved_pool(pool)
    spec = next((s for s in listed.workers if s.model == model), None)
    if spec is not None:
        base = _spec_worker(spec, overrides, answer_constraint, current_task_name())
    else:
        grammar = capabilities(model).grammar
        config = overrides if overrides.model_dump(exclude_none=True) else None
        base = Worker(
            get_model(model, config=config or GenerateConfig()),
            model,
            price=listed.price_of(model),
            answer_constraint=answer_constraint if grammar else None,
        )
    return [replace(base, description=w.description) for w in workers]


def sample_subset(n: int, k: int | None, seed: int, key: str) -> list[int]:
    """A reproducible k-of-n choice of pool members for one sample (all when k is None)."""
    if k is None or k >= n:
        return list(range(n))
    if k < 1:
        raise ValueError(f"pool_size must be at least 1, got {k}")
    return sorted(random.Random(f"{seed}/{key}").sample(range(n), k))


def _pool_conductor(pool: PoolSpec) -> ModelSpec:
    if pool.conductor is None:
        raise ValueError(
            f"pool '{pool.name}' names no conductor; pass --model-role conductor=<model> or --model <model>"
        )
    return pool.conductor


def _role_worker(model: Model, overrides: GenerateConfig) -> Worker:
    name = str(model)
    return Worker(_with_config(model, overrides), name, price=known_prices().get(name))


def current_task_name() -> str | None:
    """Name of the task whose sample is running (None outside a sample)."""
    from inspect_ai.log._samples import sample_active  # no public accessor for the task name

    active = sample_active()
    return active.task if active is not None else None


def _spec_worker(
    spec: ModelSpec, overrides: GenerateConfig, answer_constraint: Constraint | None, task: str | None
) -> Worker:
    return Worker(
        _spec_model(spec, overrides, task),
        spec.model,
        spec.description,
        spec.price,
        answer_constraint if spec.grammar else None,
    )


def _spec_model(spec: ModelSpec, overrides: GenerateConfig, task: str | None = None, role: str = "workers") -> Model:
    """The pool entry's model; its usage counts under Inspect's `role` (unless that role is bound
    to other models by --model-role); the eval's call budget wins over the entry's, and the
    provider SDK's read timeout and retries agree with it (`sdk_model_args`); header values and
    body strings reach the provider's client, not the config the log records (`route_secrets`)."""
    config = GenerateConfig(**spec.config_for(task)).merge(overrides).merge(GenerateConfig(**eval_call_budget()))
    role_name = None if role in model_roles() else role
    settings = config.model_dump(exclude_none=True)
    model_args = sdk_model_args(spec.model, settings, spec.model_args)
    settings, model_args = route_secrets(spec.model, settings, model_args)
    return _model(spec.model, role_name, GenerateConfig(**settings), model_args)


_BODY_FIELD_MODELS: dict[str, Model] = {}


def _model(name: str, role: str | None, config: GenerateConfig, model_args: dict) -> Model:
    """`get_model`, memoized by Inspect, or here for a model whose HTTP client adds body fields:
    Inspect's memo key cannot tell two such clients apart."""
    fields = client_body_fields(model_args)
    if fields is None:
        return get_model(name, role=role, config=config, **model_args)
    others = {k: v for k, v in model_args.items() if k != "http_client"}
    key = json.dumps([name, role, config.model_dump(exclude_none=True), others, fields], default=str)
    if key not in _BODY_FIELD_MODELS:
        _BODY_FIELD_MODELS[key] = get_model(name, role=role, config=config, memoize=False, **model_args)
    return _BODY_FIELD_MODELS[key]


def _with_config(model: Model, overrides: GenerateConfig) -> Model:
    """A shallow copy of `model` whose default config carries the solver's overrides and the
    eval's call budget (Inspect gives a role model no --attempt-timeout)."""
    overrides = overrides.merge(GenerateConfig(**eval_call_budget()))
    if not overrides.model_dump(exclude_none=True):
        return model
    clone = copy(model)
    clone.config = model.config.merge(overrides)
    return clone
