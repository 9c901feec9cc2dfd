"""The conductor's GRPO reward for TRL: run each rollout's workflow on the pool, score its answer.

    reward = ConductorReward("sim", max_concurrency=32, rollout_log="runs/x/rollouts.jsonl")
    GRPOTrainer(model=..., reward_funcs=[reward], train_dataset=dataset, ...)

One code path with evaluation: each completion goes through `solvers.conducting.run_completion`
(parse, validate, execute on the workers, pick the answer: what the `conductor` solver does after
its generation) and the answer is scored by the pure checks the Inspect scorers wrap
(`check_choice`, `check_math`, `check_numeric`; LiveCodeBench's `check_livecodebench` with a
`BwrapRunner`). Reward: the paper's `paper_reward` (0 unparseable, 0.5 parseable and wrong, 1
correct). Optional cost term (`cost_weight` w > 0, see `cost_aware_reward`): minus w times the
rollout's worker cost normalised by `cost_reference_usd` (default `cost_reference`: the pool's most
expensive worker at 1,000 input + 1,000 output tokens) and clipped at 1, charged on every rollout
(`cost_charge="always"`) or only on correct ones ("correct"); with 0 <= w < 0.5 the reward stays in
0..1 and correct > parseable-and-wrong > unparseable whatever the costs. All rollouts of a batch
run concurrently on one event loop (TRL runs async reward
functions on its own loop), at most `max_concurrency` at a time. A worker failure is a failed
step (a wrong answer); any other failure of a rollout is logged as `error` and scored as a wrong
answer of a parseable workflow (or 0 if unparseable), never a crashed training step.

Dataset columns read (TRL passes every column as a keyword list): `question`, `target`, `check`
("choice" | "math" | "numeric" | "lcb"), `choices` (list or None), `pool_indices` (the pool
members the prompt lists as Model 0..k-1, in that order), `domain`, `item_id`; for `check="lcb"`
the problem comes from the tables of `scorers.code_lcb.register_problems` by `question_id` (else
`item_id`), or from an `lcb_record` column (a full dataset row).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect as pyinspect
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from scorers.checks import check_choice, check_math, check_numeric
from solvers.conducting import (
    Settings,
    answer_constraint_for,
    check_settings,
    conductor_messages,
    run_completion,
)
from solvers.diagnostics import answer_change, prior_output, round_features
from solvers.executor import RoundRecord, Worker
from solvers.team import pool_workers, sample_subset
from solvers.workflow import paper_reward, parse_workflow
from tasks.catalog import DOMAINS
from training.rollouts import (
    FIRST_ROUND_WEIGHT,
    RolloutLog,
    batch_metrics,
    clip,
    completion_text,
    recursive_reward,
    workflow_refines,
)
from workers.pools import PoolSpec, load_pool

log = logging.getLogger(__name__)

CHECKS = ("choice", "math", "numeric", "lcb")
COLUMNS = ("question", "target", "check", "pool_indices")  # required dataset columns
METRIC_PREFIX = "conductor/"
COST_CHARGES = ("always", "correct")
MAX_COST_WEIGHT = 0.5  # exclusive: a wrong answer at any cost stays above an unparseable one
REFERENCE_TOKENS = (1000, 1000)  # input, output tokens of the reference call of `cost_reference`


@dataclass
class Rollout:
    """One scored rollout: the round it ran (None if it never started), its reward and why."""

    reward: float
    parsed: bool
    correct: bool
    record: RoundRecord | None
    check_reason: str = ""
    error: str | None = None
    first_reward: float | None = None  # a forced-recursion rollout: its first round's reward
    prior_correct: bool | None = None  # the answer the final step was shown, when it differs from the final one
    cost_penalty: float = 0.0  # subtracted by the cost term (in `reward` already)


@dataclass
class Recursion:
    """One rollout of recursion training, run by `training.recursion.RecursionRollout`: its
    first-round completion, the executed round tree (a recursive call is a conductor step
    with its nested round), the response the recursive round was shown, and what was
    generated in it."""

    prompt: str  # the conductor's first user message
    first_completion: str
    forced: bool = False  # in the share of its group that gets a forced call
    record: RoundRecord | None = None
    shown: str | None = None
    second_completion: str | None = None
    tokens: int | None = None  # the policy's tokens in both rounds (the turn between them excluded)
    error: str | None = None


class ConductorReward:
    """TRL reward function (async): `await reward(prompts, completions, **columns)` -> rewards.

    Args:
        pool: bundled pool name, pool YAML path or `PoolSpec` whose workers run the workflows.
        settings: the conductor's `Settings` (or a dict of its fields); `on_error` must be
            "continue". Recursion is not offered by a rollout (no conductor to call); see
            `training/rollouts.py` for the recursion reward.
        max_concurrency: most rollouts running at once (each runs its workflow's worker calls).
        rollout_log: JSONL file that receives every rollout (appended per call), or a `RolloutLog`
            (a data-parallel run's, which gathers every process's rows: training/parallel.py).
        worker_temperature: overrides the pool's worker temperature.
        worker_max_tokens: overrides the pool's worker token budget.
        lcb_timeout: per-test limit of the LiveCodeBench check (official 6 s).
        runner: the sandbox of code checks (default: a `BwrapRunner`, made on first use).
        sample_context: a function of a row (dict of its columns) returning a context manager
            entered around that rollout (e.g. the simulated pool's answer key); default: the
            simulated provider's `answer_key` when the pool has `sim/` workers.
        recursion_first_weight: the first round's weight in a recursion-training reward.
        cost_weight: w of the cost term (module docstring), 0 <= w < 0.5; 0 = the paper's
            reward. Every pool worker needs a price.
        cost_charge: "always" (every rollout pays) or "correct" (only correct ones).
        cost_reference_usd: the USD that normalises a rollout's worker cost to 1 (default:
            `cost_reference` of the pool).
    """

    __name__ = "conductor_reward"  # TRL logs rewards under the function's name

    def __init__(
        self,
        pool: str | PoolSpec,
        *,
        settings: Settings | Mapping[str, Any] | None = None,
        max_concurrency: int = 16,
        rollout_log: str | Path | RolloutLog | None = None,
        worker_temperature: float | None = None,
        worker_max_tokens: int | None = None,
        lcb_timeout: float = 6.0,
        runner: Any = None,
        sample_context: Callable[[dict], contextlib.AbstractContextManager] | None = None,
        recursion_first_weight: float = FIRST_ROUND_WEIGHT,
        cost_weight: float = 0.0,
        cost_charge: str = "always",
        cost_reference_usd: float | None = None,
    ) -> None:
        self.pool = load_pool(pool) if isinstance(pool, str) else pool
        self.settings = check_settings(settings if isinstance(settings, Settings) else settings_from(settings or {}))
        if self.settings.on_error != "continue":
            raise ValueError(
                f"the training reward needs on_error='continue' (got {self.settings.on_error!r}): "
                "a failed worker step must be a wrong answer, not a crashed training step"
            )
        if not (isinstance(max_concurrency, int) and max_concurrency >= 1):
            raise ValueError(f"max_concurrency must be an integer >= 1, got {max_concurrency!r}")
        self.max_concurrency = max_concurrency
        if isinstance(rollout_log, RolloutLog) or not rollout_log:
            self.log = rollout_log or None
        else:
            self.log = RolloutLog(rollout_log)
        self.worker_temperature = worker_temperature
        self.worker_max_tokens = worker_max_tokens
        self.lcb_timeout = lcb_timeout
        self._runner = runner
        self.sample_context = sample_context or default_sample_context(self.pool)
        self.pool_names = [w.model for w in self.pool.workers]
        self._workers: dict[tuple, list[Worker]] = {}
        self.last_metrics: dict[str, float] = {}
        self.assigned: Callable[[], Sequence[Any]] | None = None  # exploring groups: training/explore.Assignment
        self.recursion_first_weight = recursion_first_weight
        check_cost_options(cost_weight, cost_charge)
        self.cost_weight, self.cost_charge = cost_weight, cost_charge
        self.cost_reference_usd = cost_reference_usd
        if cost_weight:
            self.cost_reference_usd = cost_reference(self.pool, cost_reference_usd)

    async def __call__(self, prompts: Sequence, completions: Sequence, **columns: Any) -> list[float]:
        rows = dataset_rows(len(completions), columns)
        texts = [
            row["recursion"].first_completion if row.get("recursion") else completion_text(c)
            for c, row in zip(completions, rows, strict=True)
        ]
        rollouts = await self.score(texts, rows)
        ids = columns.get("completion_ids")
        state = columns.get("trainer_state")
        step = getattr(state, "global_step", None)
        records = [
            rollout_row(r, row, text, _conductor_tokens(row, ids[i] if ids else None), step, self.pool_names)
            for i, (r, row, text) in enumerate(zip(rollouts, rows, texts, strict=True))
        ]
        assigned = self.assigned() if self.assigned else None
        if assigned is not None and len(assigned) == len(records):
            for record, given in zip(records, assigned, strict=True):
                record["assigned"] = given.worker if given else None  # assigned, not chosen: not the policy's routing
                record["first_worker_policy"] = self.policy_by_name(given.policy, record) if given else None
        if self.log:
            self.log.write(records)
        self.last_metrics = batch_metrics(records, self.pool_names)
        if callable(log_metric := columns.get("log_metric")):
            for name, value in self.last_metrics.items():
                log_metric(METRIC_PREFIX + name, value)
        if callable(log_extra := columns.get("log_extra")):
            log_extra("rejection", [r["rejection"] or "" for r in records])
            log_extra("workers", [" ".join(map(str, r["workers"])) for r in records])
            log_extra("answer", [clip(r["answer"], 200) or "" for r in records])
        return [r.reward for r in rollouts]

    def policy_by_name(self, policy: Sequence[float] | None, record: Mapping[str, Any]) -> dict[str, float] | None:
        """The policy's probability of each listed worker (by pool name) where an assigned row's worker was
        forced: what it would have chosen."""
        if policy is None:
            return None
        names = worker_names(self.pool_names, record["pool_indices"])
        return {name: round(p, 4) for name, p in zip(names, policy, strict=False)}

    async def score(self, completions: Sequence[str], rows: Sequence[dict]) -> list[Rollout]:
        """Every rollout at once, at most `max_concurrency` running."""
        gate = asyncio.Semaphore(self.max_concurrency)

        async def one(text: str, row: dict) -> Rollout:
            async with gate:
                return await self.rollout(text, row)

        return list(await asyncio.gather(*(one(t, r) for t, r in zip(completions, rows, strict=True))))

    async def rollout(self, completion: str, row: dict) -> Rollout:
        """Run one completion's workflow on the row's workers and score its answer (the cost
        term, if any, included)."""
        return self.charge(await self._rollout(completion, row))

    def charge(self, rollout: Rollout) -> Rollout:
        """The rollout with the cost term applied to its reward (unchanged at cost_weight 0)."""
        if not self.cost_weight:
            return rollout
        cost = rollout.record.worker_usage().cost if rollout.record is not None else 0.0
        reward = cost_aware_reward(
            rollout.reward,
            rollout.correct,
            cost,
            weight=self.cost_weight,
            charge=self.cost_charge,
            reference_usd=self.cost_reference_usd,
        )
        rollout.cost_penalty, rollout.reward = rollout.reward - reward, reward
        return rollout

    async def _rollout(self, completion: str, row: dict) -> Rollout:
        if isinstance(row.get("recursion"), Recursion):
            return await self.recursive_rollout(row["recursion"], row)
        try:
            workers = self.workers_for(row)
            with self.sample_context(row):
                record = await run_completion(completion, row["question"], workers, self.settings)
            return await self.score_record(record, row)
        except Exception as error:  # noqa: BLE001 - a broken rollout is data, never a crashed step
            message = f"{type(error).__name__}: {error}"[:2000]
            log.warning("rollout of item %s failed: %s", row.get("item_id"), message)
            parsed = self._parses(completion, row)
            return Rollout(paper_reward(parsed, False), parsed, False, None, "harness error", message)

    async def recursive_rollout(self, recursion: Recursion, row: dict) -> Rollout:
        """Score a rollout of recursion training (already executed): without a recursive call,
        the paper reward of its answer; with one, `recursive_reward(r1, r2)`: r1 the paper
        reward of the response the recursive round was shown, r2 the recursive round's (0 if
        its lists do not parse) judged on the final answer."""
        record = recursion.record
        if recursion.error is not None or record is None:
            parsed = self._parses(recursion.first_completion, row)
            return Rollout(paper_reward(parsed, False), parsed, False, record, "harness error", recursion.error)
        try:
            final = await self.score_record(record, row)
            nested = next((s.round for s in record.steps if s.recursed), None)
            if nested is None or not final.parsed:
                return final
            shown_correct = recursion.shown is not None and (await self.check(recursion.shown, row))[0]
            first = paper_reward(True, shown_correct)
            second = paper_reward(nested.rejection is None, final.correct)
            reward = recursive_reward(first, second, self.recursion_first_weight)
            return Rollout(reward, True, final.correct, record, final.check_reason, None, first, final.prior_correct)
        except Exception as error:  # noqa: BLE001 - a broken rollout is data, never a crashed step
            message = f"{type(error).__name__}: {error}"[:2000]
            log.warning("scoring the recursive rollout of item %s failed: %s", row.get("item_id"), message)
            return Rollout(0.5, True, False, record, "harness error", message)

    async def score_record(self, record: RoundRecord, row: dict) -> Rollout:
        """The paper reward of an executed round: 0 unparseable, else its answer's check; the
        answer the final step was shown is checked too when it differs (the diagnostics'
        answer change)."""
        parsed = record.rejection is None
        if not parsed or record.answer is None:
            return Rollout(paper_reward(parsed, False), parsed, False, record, "no answer")
        correct, reason = await self.check(record.answer, row)
        prior = prior_output(record.to_dict())
        prior_correct = (await self.check(prior, row))[0] if answer_change(record.answer, prior) == "changed" else None
        return Rollout(paper_reward(True, correct), True, correct, record, reason, prior_correct=prior_correct)

    def _parses(self, completion: str, row: dict) -> bool:
        s = self.settings
        return parse_workflow(completion, range(len(row["pool_indices"])), s.max_steps, False, s.access).ok

    def workers_for(self, row: dict) -> list[Worker]:
        """The pool members the row's prompt listed, in its order (Model 0..k-1)."""
        choices = row.get("choices")
        answer_format = "code" if row["check"] == "lcb" else None
        task = DOMAINS[row["domain"]].benchmark if row.get("domain") in DOMAINS else None  # its task_overrides
        key = (len(choices) if choices else 0, answer_format, task)
        if key not in self._workers:
            constraint = answer_constraint_for(list(choices) if choices else None, answer_format)
            self._workers[key] = pool_workers(
                self.pool, self.worker_temperature, self.worker_max_tokens, constraint, task
            )
        everyone = self._workers[key]
        return [everyone[i] for i in row["pool_indices"]]

    async def check(self, answer: str, row: dict) -> tuple[bool, str]:
        """The row's check on an answer: (correct, the check's reason)."""
        check, target = row["check"], str(row["target"])
        if check == "lcb":
            return await self._check_code(answer, row)
        if check == "math":  # math-verify can be slow: off the event loop, as the scorer does
            result = await asyncio.to_thread(check_math, answer, target)
        else:
            result = (check_choice if check == "choice" else check_numeric)(answer, target)
        return result.correct, result.reason

    async def _check_code(self, answer: str, row: dict) -> tuple[bool, str]:
        from scorers.code_lcb import check_livecodebench, lookup_problem

        if self._runner is None:
            from sandboxes.bwrap import BwrapRunner

            self._runner = BwrapRunner()
        question_id = str(row.get("question_id") or row.get("item_id"))
        problem = lookup_problem(question_id, metadata={"lcb_record": row.get("lcb_record")})
        result = await check_livecodebench(answer, problem, self._runner, timeout=self.lcb_timeout)
        return result.correct, result.reason


def _conductor_tokens(row: Mapping[str, Any], ids: Sequence[int] | None) -> int | None:
    recursion = row.get("recursion")
    if isinstance(recursion, Recursion) and recursion.tokens is not None:
        return recursion.tokens
    return len(ids) if ids is not None else None


def check_cost_options(weight: float, charge: str) -> None:
    """Refuse a cost term outside its documented range, naming the fix."""
    if not (isinstance(weight, int | float) and 0 <= weight < MAX_COST_WEIGHT):
        raise ValueError(
            f"cost_weight must satisfy 0 <= cost_weight < {MAX_COST_WEIGHT}, got {weight!r} (0: the paper's reward; "
            "below 0.5 a wrong answer at any cost still scores above an unparseable workflow)"
        )
    if charge not in COST_CHARGES:
        raise ValueError(f"cost_charge must be {' | '.join(COST_CHARGES)}, got {charge!r}")


def cost_reference(pool: PoolSpec, reference_usd: float | None = None) -> float:
    """The USD that normalises a rollout's worker cost to 1: `reference_usd` if given, else the
    pool's most expensive worker at `REFERENCE_TOKENS` (1,000 input + 1,000 output). Every worker
    needs a price (an unpriced one's cost is unknown, so no cost can be charged)."""
    unpriced = [w.model for w in pool.workers if w.price is None]
    if unpriced:
        raise ValueError(
            f"cost_weight: pool {pool.name!r} worker {', '.join(unpriced)} has no price; "
            "fix: give every worker a `price` in the pool file, or set cost_weight 0"
        )
    if reference_usd is None:
        reference_usd = max(w.price.cost(*REFERENCE_TOKENS) for w in pool.workers)  # type: ignore[union-attr]
        if reference_usd <= 0:
            raise ValueError(f"pool {pool.name!r} prices every worker at 0: set cost_reference_usd (USD > 0)")
    if not reference_usd > 0:
        raise ValueError(f"cost_reference_usd must be > 0 USD, got {reference_usd!r}")
    return float(reference_usd)


def cost_aware_reward(
    reward: float, correct: bool, cost_usd: float, *, weight: float, charge: str, reference_usd: float
) -> float:
    """`reward` minus `weight` x min(cost_usd / reference_usd, 1), charged always or only when
    `correct` (`charge`), clipped at 0 (a low recursion-training reward)."""
    if not weight or (charge == "correct" and not correct):
        return reward
    return max(0.0, reward - weight * min(cost_usd / reference_usd, 1.0))


def settings_from(options: Mapping[str, Any]) -> Settings:
    """`Settings` from a dict of its fields; an unknown name fails with the valid ones listed."""
    valid = {f.name for f in fields(Settings)}
    if unknown := sorted(set(options) - valid):
        raise ValueError(f"unknown conductor setting(s) {', '.join(unknown)}; valid: {', '.join(sorted(valid))}")
    return Settings(**options)


def dataset_rows(n: int, columns: Mapping[str, Any]) -> list[dict]:
    """Per-rollout dicts of the dataset columns TRL passed (each a list of length n),
    validated: a missing column or a bad value fails with the column and the fix named."""
    missing = [c for c in COLUMNS if c not in columns]
    if missing:
        raise ValueError(
            f"the conductor reward needs the dataset columns {', '.join(missing)}; "
            "fix: build the dataset with training/data.py (columns: question, target, check, choices, "
            "pool_indices, domain, item_id)"
        )
    skip = {"trainer_state", "log_extra", "log_metric", "completion_ids", "environments"}
    # `recursion` (a Recursion or None per row) comes from training.recursion's rollout_func
    names = [k for k, v in columns.items() if k not in skip and isinstance(v, list) and len(v) == n]
    rows = [{k: columns[k][i] for k in names} for i in range(n)]
    for row in rows:
        if row["check"] not in CHECKS:
            raise ValueError(f"column check={row['check']!r} is not one of {' | '.join(CHECKS)}")
        indices = row["pool_indices"]
        if not indices or not all(isinstance(i, int) and i >= 0 for i in indices) or len(set(indices)) != len(indices):
            raise ValueError(
                f"column pool_indices={indices!r} must be distinct pool indices >= 0 (one per listed model)"
            )
    return rows


def worker_names(pool_names: Sequence[str], indices: Sequence[int]) -> list[str]:
    """The pool names of worker indices (an index past the pool: `pool_<i>`)."""
    return [pool_names[i] if i < len(pool_names) else f"pool_{i}" for i in indices]


def rollout_row(
    rollout: Rollout,
    row: Mapping[str, Any],
    completion: str,
    conductor_tokens: int | None,
    step: int | None,
    pool_names: Sequence[str],
) -> dict:
    """The JSONL line of one rollout (see `training.rollouts` for the fields)."""
    record, indices = rollout.record, list(row["pool_indices"])
    steps = record.steps if record is not None else []
    used = pool_steps(record, indices) if record is not None else []
    usage = record.worker_usage() if record is not None else None
    return {
        "step": step,
        "item_id": row.get("item_id"),
        "domain": row.get("domain"),
        "pool_indices": indices,
        "completion": clip(completion),
        "parsed": rollout.parsed,
        "rejection": record.rejection if record is not None else None,
        "rejection_message": record.rejection_message if record is not None else None,
        "workflow": record.workflow if record is not None else None,
        "steps": len(steps),
        "workers": used,
        "worker_names": worker_names(pool_names, used),
        "refines": workflow_refines(record.workflow if record is not None else None),
        "step_records": [
            {"worker": s.worker, "visible": s.visible, "error": s.error, "output": clip(s.output, 1000)} for s in steps
        ],
        "answer": record.answer if record is not None else None,
        "correct": rollout.correct,
        "check_reason": clip(rollout.check_reason, 500),
        "reward": rollout.reward,
        "agent_calls": record.agent_calls() if record is not None else 0,
        "conductor_tokens": conductor_tokens,
        "worker_input_tokens": usage.input_tokens if usage else 0,
        "worker_output_tokens": usage.output_tokens if usage else 0,
        "worker_cost_usd": usage.cost if usage else 0.0,
        "recursive": any(s.recursed for s in steps),
        "first_reward": rollout.first_reward,
        "cost_penalty": rollout.cost_penalty,
        "diag": None
        if record is None
        else round_features(
            record.to_dict(),
            str(row.get("question") or ""),
            row.get("domain"),
            final_correct=rollout.correct,
            prior_correct=rollout.prior_correct,
        ),
        "second_completion": clip(row["recursion"].second_completion) if row.get("recursion") else None,
        "error": rollout.error,
    }


def pool_steps(record: RoundRecord, pool_indices: Sequence[int]) -> list[int]:
    """The pool index of every executed worker step (nested rounds included): the prompt's
    Model j is pool member `pool_indices[j]`."""
    out: list[int] = []
    for step in record.steps:
        if step.round is not None:
            out += pool_steps(step.round, pool_indices)
        elif step.worker < len(pool_indices):
            out.append(pool_indices[step.worker])
    return out


def training_prompt(
    question: str,
    pool: str | PoolSpec,
    pool_indices: Sequence[int],
    settings: Settings | None = None,
    self_id: int | None = None,
) -> list[dict[str, str]]:
    """The conversational TRL prompt of one training item: exactly the `conductor` solver's
    prompt (`conductor_messages`) listing the pool members `pool_indices` as Model 0..k-1."""
    spec = load_pool(pool) if isinstance(pool, str) else pool
    descriptions = [spec.workers[i].description for i in pool_indices]
    messages = conductor_messages(question, descriptions, settings or Settings(), self_id)
    return [{"role": m.role, "content": m.text} for m in messages]


def random_pool(n: int, k: int | None, seed: int, key: str, shuffle: bool = False) -> list[int]:
    """A seeded random k-of-n choice of pool members for one training prompt (the same draw
    as the solver's `-S pool_size`), in pool order or, with `shuffle`, in a seeded random
    order (so that a model's number says nothing about which member it is)."""
    chosen = sample_subset(n, k, seed, key)
    if shuffle:
        import random

        random.Random(f"{seed}/{key}/order").shuffle(chosen)
    return chosen


def default_sample_context(pool: PoolSpec) -> Callable[[dict], contextlib.AbstractContextManager]:
    """The simulated provider's answer key around each rollout when the pool has `sim/`
    workers (they need the correct answer outside an Inspect sample); else nothing."""
    if not pool.simulated:
        return lambda row: contextlib.nullcontext()
    from workers.sim_provider import answer_key  # the simulated pool's provider (CONTRACTS item 3)

    parameters = pyinspect.signature(answer_key).parameters.values()
    takes_all = any(p.kind is p.VAR_KEYWORD for p in parameters)
    accepted = {p.name for p in parameters}

    def enter(row: dict) -> contextlib.AbstractContextManager:
        return answer_key(**{k: v for k, v in row.items() if takes_all or k in accepted})

    return enter
