"""The GRPO trainer of a run: the reward, the project's callbacks and TRL's `GRPOTrainer` over them.

The reward is `training.rewards.ConductorReward` (each rollout's workflow run on the recipe's pool and
scored by the evaluation's checks) or, for benchmarks, `constant_reward`. The callbacks: the divergence
guard (training/guard.py), `metrics.jsonl` with each step's wall time, a data-parallel run's rollout-log
gather (training/parallel.py) and the `max_usd` spend cap (training/budget.py). Recursion training
(`recursion_share`) generates through `training.recursion.RecursionRollout`; exploring groups
(`explore_workers`) assign first workers at generation (training/explore.py); the form anchor
(`form_anchor_rows`) adds the warm-up's loss on the form line of a few training questions to each step
(training/form_anchor.py, through `AnchoredGRPOTrainer`'s `compute_loss`).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from training.budget import spend_cap
from training.options import pool_listing_size
from training.parallel import flush_callback, gather_rows


def constant_reward(completions: list, **_: Any) -> list[float]:
    """The same score for every rollout: the bare-TRL baseline of benchmarks/bench_train.py."""
    return [1.0] * len(completions)


def make_reward(script: Any, settings: Any, config: Any) -> Any:
    """The reward (`settings`: the conductor's, as an evaluation runs it); a data-parallel run's rollout
    log gathers every process's rows (training/parallel.py)."""
    if script.reward == "constant":
        return constant_reward
    from training.rewards import ConductorReward
    from training.rollouts import RolloutLog

    rollout_log = RolloutLog(script.rollout_log or Path(config.output_dir) / "rollouts.jsonl", gather_rows(config))
    return ConductorReward(
        script.pool,
        settings=settings,
        max_concurrency=script.max_concurrency,
        rollout_log=rollout_log,
        worker_temperature=script.worker_temperature,
        worker_max_tokens=script.worker_max_tokens,
        cost_weight=script.cost_weight,
        cost_charge=script.cost_charge,
        cost_reference_usd=script.cost_reference_usd,
    )


def metrics_callback(path: Path) -> Any:
    """A TrainerCallback appending every logged dict (with its step and the wall seconds of
    that step, `step_wall_s`) to `path` (JSONL); `.step_seconds` keeps every step's wall time."""
    from transformers import TrainerCallback

    class MetricsFile(TrainerCallback):
        def __init__(self) -> None:
            self.step_seconds: list[float] = []
            self.started = time.perf_counter()

        def on_step_begin(self, args, state, control, **kwargs):  # noqa: ANN001, ANN201
            self.started = time.perf_counter()

        def on_step_end(self, args, state, control, **kwargs):  # noqa: ANN001, ANN201
            self.step_seconds.append(time.perf_counter() - self.started)

        def on_log(self, args, state, control, logs=None, **kwargs):  # noqa: ANN001, ANN201
            if state.is_world_process_zero and logs:
                wall = self.step_seconds[-1] if self.step_seconds else None
                with open(path, "a") as f:
                    f.write(json.dumps({"step": state.global_step, **logs, "step_wall_s": wall}) + "\n")

    return MetricsFile()


@dataclass
class RunCallbacks:
    """The project's callbacks of a GRPO run, in the order the trainer calls them."""

    guard: Any  # training.guard.NonFiniteGuard
    metrics: Any  # metrics_callback's
    flushes: list = field(default_factory=list)
    spend: Any | None = None  # training.budget's cap, with max_usd
    trim: Any | None = None  # training.allocator's heap trim, with trim_heap_each_step

    def all(self) -> list:
        optional = [callback for callback in (self.spend, self.trim) if callback is not None]
        return [self.guard, self.metrics, *self.flushes, *optional]


def run_callbacks(script: Any, config: Any, reward: Any, out: Path) -> RunCallbacks:
    from training.allocator import heap_trim_callback
    from training.guard import NonFiniteGuard

    rollout_log = getattr(reward, "log", None)  # the conductor reward's; gathered at each step's end
    return RunCallbacks(
        guard=NonFiniteGuard(script.max_nonfinite_steps),
        metrics=metrics_callback(out / "metrics.jsonl"),
        flushes=[flush_callback(rollout_log, config)] if rollout_log and rollout_log.gather else [],
        spend=spend_cap(script.max_usd, reward.log.path) if script.max_usd is not None else None,
        trim=heap_trim_callback() if script.trim_heap_each_step else None,
    )


def anchored_trainer_class() -> type:
    """TRL's GRPOTrainer, whose loss adds the form anchor's term (training/form_anchor.py) while it trains,
    and whose logs carry the anchor's NLL; with no anchor set it is GRPOTrainer unchanged."""
    from trl import GRPOTrainer

    class AnchoredGRPOTrainer(GRPOTrainer):
        form_anchor = None  # training.form_anchor.AnchoredLoss, set by grpo_trainer

        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):  # noqa: ANN001, ANN201
            loss = super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
            if self.form_anchor is not None and model.training:
                loss = loss + self.form_anchor.term(model, inputs["prompt_ids"].device)
            return loss

        def log(self, logs, start_time=None):  # noqa: ANN001, ANN201
            if self.form_anchor is not None and "loss" in logs:
                logs.update(self.form_anchor.logged())
            super().log(logs, start_time)

    return AnchoredGRPOTrainer


def form_anchor(script: Any, config: Any, tokenizer: Any, dataset: Any) -> Any:
    """The run's form anchor (training/form_anchor.py), or None when `form_anchor_rows` is 0."""
    if not script.form_anchor_rows:
        return None
    from training.form_anchor import AnchoredLoss

    return AnchoredLoss(tokenizer, dataset.to_list(), script.form_anchor_rows, config.gradient_accumulation_steps,
                        script.form_anchor_weight, script.format_warmup_form_worker,
                        seed=config.seed * 1000 + config.process_index)  # fmt: skip


def grpo_trainer(script: Any, config: Any, model_args: Any, policy: tuple[Any, Any], dataset: Any, reward: Any,
                 out: Path) -> tuple[Any, RunCallbacks]:  # fmt: skip
    """TRL's GRPOTrainer of `policy` (model, tokenizer) after any warm-up, and the run's callbacks."""
    from trl import get_peft_config

    model, tokenizer = policy
    if script.explore_workers:  # after the warm-up: only GRPO's rollouts explore (training/explore.py)
        from training.explore import assign_first_workers

        reward.assigned = assign_first_workers(
            model, tokenizer, script.explore_workers, pool_listing_size(script), config.seed, script.explore_prefix
        )
    rollout_func = None
    if script.recursion_share:
        from training.recursion import RecursionRollout

        rollout_func = RecursionRollout(reward, dataset.to_list(), share=script.recursion_share)
    callbacks = run_callbacks(script, config, reward, out)
    trainer = anchored_trainer_class()(
        model=model,
        reward_funcs=[reward],
        args=config,
        train_dataset=dataset,
        processing_class=tokenizer,
        peft_config=get_peft_config(model_args),
        rollout_func=rollout_func,
        callbacks=callbacks.all(),
    )
    trainer.form_anchor = form_anchor(script, config, tokenizer, dataset)
    return trainer, callbacks
