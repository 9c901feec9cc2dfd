"""Inspect model provider `sim/<profile>`: simulated workers (workers/simulation.py).

SIMULATION: no model runs. Each call answers correctly with the profile's probability for
the item's domain (profiles: workers/sim_profiles.yaml, or `-M profiles=<file>`), decided
by a hash of (seed, profile, item, subtask); the seed is the call's `seed` config
(`--seed`, a pool entry's `config: {seed: 1}`), else `-M seed=`, else 0. A call waits a seeded
lognormal time when `latency` (median seconds, default 0: no wait) is set as a model arg
(`-M latency=6`, or a pool entry's `model_args: {latency: 6, latency_sigma: 0.6}`: about
2-20 s). Every output
starts with "(simulated answer from sim/<profile> ...)", its model name is `sim/<profile>`
and its metadata carries `simulated: true` with the domain, mode and whether it is correct.

The answer key (correct answer, domain, format) comes from, in order:
1. `answer_key(...)`, a context manager for code outside an Inspect sample (training
   rewards, router training)::

       with answer_key(target="C", domain="mmlu", choices=["..."] * 4, item_id="mmlu/12"):
           output = await get_model("sim/premium").generate("...")

   It sets a context variable, so set it inside the coroutine (asyncio task) that makes
   the calls: each task sees the key of its own context, concurrent rollouts do not mix.
2. Inspect's running sample: its target, choices (or `metadata["choices"]`), id, and its
   domain from `metadata["domain"]` or the task's name (its benchmark's declaration:
   `simulation.task_domain`). Epoch 2 and later draw afresh (as a model sampling again
   would), so epochs give a standard error.
Without either, the call fails with `SimError` naming both ways; it never guesses.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from startup.errors import start_checked
from workers.simulation import (
    DOMAINS,
    AnswerKey,
    SimError,
    latency,
    load_profiles,
    make_key,
    simulate,
    task_domain,
)

DEFAULT_LATENCY_SIGMA = 0.6  # lognormal shape: with a median of 6 s, 5% of calls under 2 s, 5% over 16 s

__all__ = ["SimError", "SimModelAPI", "answer_key", "current_key", "key_from_sample", "sim"]

_KEY: ContextVar[AnswerKey | None] = ContextVar("conductor_bench_sim_answer_key", default=None)
NO_KEY = (
    "sim/{profile} has no answer key: it is a simulated worker and must know the correct answer. "
    "Run it inside an Inspect sample of a bundled task (or one whose metadata has 'domain'), or "
    "wrap the calls in `with workers.sim_provider.answer_key(target=..., domain=...)`."
)


@contextmanager
def answer_key(
    target: str,
    domain: str | None = None,
    check: str | None = None,
    choices: Sequence[str] | None = None,
    item_id: str | int | None = None,
) -> Iterator[AnswerKey]:
    """Give simulated workers the item's answer for the calls made inside the block.

    domain: math | mmlu | rlpr | lcb; check: choice | math | numeric | lcb | code (each
    defaults from the other); item_id: the item's identity in the hash (pass it, so two
    items with the same answer draw independently).
    """
    token = _KEY.set(make_key(target, domain, check, choices, item_id))
    try:
        yield _KEY.get()  # type: ignore[misc]
    finally:
        _KEY.reset(token)


def current_key() -> AnswerKey | None:
    """The key of `answer_key`, else of Inspect's running sample, else None."""
    key = _KEY.get()
    if key is not None:
        return key
    from inspect_ai.log._samples import sample_active  # no public accessor (as solvers/team.py)

    active = sample_active()
    return key_from_sample(active.sample, active.task, active.epoch) if active is not None else None


def key_from_sample(sample: Any, task: str | None, epoch: int = 1) -> AnswerKey:
    """An answer key from an Inspect Sample (target, choices, metadata, id), task name and epoch:
    each later epoch is a fresh draw (its item id gets `/epoch<n>`), the first keeps the plain id."""
    metadata = sample.metadata or {}
    known = task_domain(task)
    # a task's own metadata may use "domain" for something else (GPQA: "Physics"): only a
    # simulation domain counts; otherwise the bundled task's domain decides
    given = metadata.get("domain")
    domain = given if given in DOMAINS else (known[0] if known else None)
    if domain is None:
        raise SimError(
            f"simulated worker: task {task!r} is not a bundled task and its samples' metadata "
            f"'domain' ({given!r}) is not a simulation domain; set metadata 'domain' to one of "
            f"{' | '.join(DOMAINS)}"
        )
    check = metadata.get("check") or (known[1] if known and known[0] == domain else None)
    target = sample.target[0] if isinstance(sample.target, list) and sample.target else sample.target
    choices = sample.choices or metadata.get("choices")
    item = f"{task}/{sample.id}" + (f"/epoch{epoch}" if epoch > 1 else "")
    return make_key(str(target or ""), domain, check, choices, item)


class SimModelAPI(ModelAPI):
    """A simulated worker: see the module docstring."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),
        seed: int = 0,
        profiles: str | None = None,
        latency: float = 0.0,
        latency_sigma: float = DEFAULT_LATENCY_SIGMA,
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        if model_args:
            raise SimError(
                f"sim/{model_name}: unknown model arg(s) {sorted(model_args)}; "
                "allowed: seed, profiles, latency, latency_sigma"
            )
        self.latency = (_seconds(model_name, "latency", latency), _seconds(model_name, "latency_sigma", latency_sigma))
        available = load_profiles(profiles)
        if model_name not in available:
            raise SimError(f"no simulated profile {model_name!r}; use sim/<one of {', '.join(available)}>")
        self.profile = available[model_name]
        self.seed = int(seed)

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        key = current_key()
        if key is None:
            raise SimError(NO_KEY.format(profile=self.profile.name))
        seed = config.seed if config.seed is not None else self.seed
        turns = [(message.role, message.text) for message in input]
        result = simulate(self.profile, key, turns, seed)
        wait = latency(*self.latency, seed, self.profile.name, key.seed_id, turns[-1][1] if turns else "")
        await asyncio.sleep(wait)
        output = ModelOutput.from_content(model=f"sim/{self.profile.name}", content=result.text)
        output.usage = ModelUsage(
            input_tokens=result.input_tokens,
            output_tokens=result.output_tokens,
            total_tokens=result.input_tokens + result.output_tokens,
            reasoning_tokens=self.profile.reasoning_tokens,
        )
        output.metadata = {
            "simulated": True,
            "profile": self.profile.name,
            "domain": key.domain,
            "check": key.check,
            "mode": result.mode,
            "correct": result.correct,
            "seed": seed,
            "latency_s": wait,
        }
        return output

    def max_connections(self) -> int:
        return 1000  # nothing remote: calls are instant (or wait only to simulate latency)

    def connection_key(self) -> str:
        return "sim"


def _seconds(model: str, name: str, value: Any) -> float:
    """A latency model arg: a finite number >= 0."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = float("nan")
    if not (math.isfinite(number) and number >= 0):
        raise SimError(f"sim/{model}: {name} must be a number >= 0, got {value!r} (e.g. -M {name}=2)")
    return number


@modelapi(name="sim")
def sim() -> type[ModelAPI]:
    return start_checked(SimModelAPI)
