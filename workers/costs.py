"""Pool prices in Inspect's cost machinery: `--cost-limit` stops a sample whose model calls
reach the limit, and Inspect's usage (per model, and per role: `conductor`, `workers`)
carries cost.

Every pool read (`workers.pools.load_pool`) registers its prices (USD per million tokens)
as Inspect `ModelCost`s. Prompt-cache reads and writes are priced at the input price, as the
project's own accounting does (`solvers.executor.output_usage`), so Inspect's totals and the
samples' `worker_cost_usd` / `conductor_cost_usd` agree. `register_eval_costs` (called when a
solver is built, before Inspect checks that every model of a `--cost-limit` eval has a price:
`solvers.team.register_eval_prices`) also prices the models the eval names outside its pool
and the `none` model of an eval without `--model` (it never generates: cost 0).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from inspect_ai.model import ModelCost, ModelInfo, set_model_info

if TYPE_CHECKING:
    from workers.pools import PoolSpec, Price

NO_MODEL = "none/none"  # Inspect's model of an eval run without --model


def model_cost(price: Price) -> ModelCost:
    """Inspect's ModelCost of a pool price (cache reads and writes at the input price)."""
    cache = price.input
    return ModelCost(input=price.input, output=price.output, input_cache_write=cache, input_cache_read=cache)


def register_cost(model: str, cost: ModelCost) -> None:
    """Give `model` this cost, keeping what Inspect's model database knows of it.

    Inspect's public `set_model_cost` refuses a model missing from its database (`sim/`,
    `local/`, `vllm/` ...) and the public lookup instantiates such a model's provider (for
    `vllm/` that can start a server), so the database is read without a provider.
    """
    from inspect_ai.model._model_info import _get_model_info_direct

    known = _get_model_info_direct(model)
    set_model_info(model, known.model_copy(update={"cost": cost}) if known is not None else ModelInfo(cost=cost))


def register_pool_costs(pool: PoolSpec) -> None:
    """Register the price of every priced model of a pool."""
    for spec in (*pool.workers, pool.conductor):
        if spec is not None and spec.price is not None:
            register_cost(spec.model, model_cost(spec.price))


def register_eval_costs(pool: PoolSpec, models: Iterable[str]) -> None:
    """Prices for an eval's start-up check: the `none` model at 0, each of `models` at
    `pool.price_of` (its entry's, else a bundled pool's), and `pool`'s own entries last (they win)."""
    register_cost(NO_MODEL, ModelCost(input=0, output=0, input_cache_write=0, input_cache_read=0))
    for model in models:
        if (price := pool.price_of(model)) is not None:
            register_cost(model, model_cost(price))
    register_pool_costs(pool)
