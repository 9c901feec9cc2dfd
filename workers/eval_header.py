"""What the eval header names (`startup.eval_header`): the conductor and the pool a solver step
runs with, resolved from the eval's spec as `solvers.team` resolves them from the running eval.
`workers._registry` imports this module, which hands `what_ran` to the header."""

from __future__ import annotations

from typing import Any

from inspect_ai.log import EvalPlan, EvalSpec

from startup.eval_header import describe_with
from workers.pools import DEFAULT_POOL, PoolError, load_pool
from workers.providers import capabilities
from workers.redact import pool_label

CONDUCTOR_SOLVER = "conductor"


def what_ran(spec: EvalSpec, plan: EvalPlan) -> dict[str, str]:
    """`pool` (and `conductor`, for the conductor solver) of the eval's first solver step that
    takes a `pool` option: workers from `-S pool` (a file by its stem: no host path in the
    metadata), else `--model-role workers`, else the default pool; the conductor from
    `--model-role conductor`, else `--model`, else the pool's. Empty when no step takes a pool."""
    step = next((s for s in plan.steps if "pool" in s.params), None)
    if step is None:
        return {}
    roles = spec.model_roles or {}
    pool = step.params["pool"]
    ran = {"pool": pool_label(pool) if pool else _role_models(roles["workers"]) if "workers" in roles else DEFAULT_POOL}
    if step.solver.split("/")[-1] == CONDUCTOR_SOLVER:
        conductor = _conductor(roles, spec.model, pool or DEFAULT_POOL)
        if conductor:
            ran["conductor"] = conductor
    return ran


def _conductor(roles: dict[str, Any], eval_model: str, pool: str) -> str | None:
    if "conductor" in roles:
        return _role_models(roles["conductor"]).split(", ")[0]
    if not capabilities(eval_model).placeholder:
        return eval_model
    try:
        spec = load_pool(pool).conductor
    except PoolError:  # the solver refuses the pool at start
        return None
    return spec.model if spec else None


def _role_models(role: Any) -> str:
    configs = role if isinstance(role, list) else [role]
    return ", ".join(c.model for c in configs)


describe_with(what_ran)
