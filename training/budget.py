"""Training spending cap: `max_usd` (a recipe or command-line option) stops a run cleanly,
with a checkpoint saved, once the workers' spend reaches it.

The spend is `worker_cost_usd` summed over the rollout log (training/rewards.py writes one
row per rollout) and over the rows a resumed run moved to `<log>.superseded` (billed all the
same). It is read at the end of every optimizer step: the run stops after the step in which
the spend reached the cap, so it can overshoot by at most one step's worker spend (a step's
rollouts run together). Checked in one process (accelerate runs with several processes are
not tested).
"""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path
from typing import Any

from workers.pools import PoolSpec

log = logging.getLogger(__name__)


def check_max_usd(max_usd: float | None, pool: PoolSpec, reward: str) -> None:
    """Refuse a cap that cannot be kept: not a number > 0, a reward that runs no worker, or a
    pool worker without a price (its spend would be unknown)."""
    if max_usd is None:
        return
    number = isinstance(max_usd, int | float) and not isinstance(max_usd, bool)
    if not (number and math.isfinite(max_usd) and max_usd > 0):
        raise SystemExit(f"max_usd must be a number of US dollars > 0 (or unset: no cap), got {max_usd!r}")
    if reward != "conductor":
        raise SystemExit(f"max_usd caps the workers' spend, but reward {reward!r} runs no worker; unset max_usd")
    unpriced = [w.model for w in pool.workers if w.price is None]
    if unpriced:
        raise SystemExit(
            f"max_usd needs every worker's price, but pool {pool.name!r} gives none for {', '.join(unpriced)}; "
            "fix: add `price: {input: ..., output: ...}` (USD per million tokens) to those entries"
        )


class SpendMeter:
    """The workers' spend so far, from a rollout log and its `.superseded` rows, read
    incrementally (only whole lines: a line being written is read next time)."""

    def __init__(self, rollout_log: str | Path) -> None:
        path = Path(rollout_log)
        self.offsets = {path.with_name(path.name + ".superseded"): 0, path: 0}
        self.spent = 0.0

    def update(self) -> float:
        for path, offset in self.offsets.items():
            if not path.is_file():
                continue
            with path.open("rb") as handle:
                handle.seek(offset)
                data = handle.read()
            whole = data[: data.rfind(b"\n") + 1]
            self.offsets[path] = offset + len(whole)
            self.spent += sum(_cost(line) for line in whole.splitlines())
        return self.spent


def _cost(line: bytes) -> float:
    try:
        cost = json.loads(line).get("worker_cost_usd")
    except (ValueError, AttributeError):
        return 0.0
    return float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else 0.0


def spend_cap(max_usd: float, rollout_log: str | Path) -> Any:
    """A TrainerCallback that stops training and saves a checkpoint at the end of the step in
    which the workers' spend reaches `max_usd`; `.summary()` reports the spend."""
    from transformers import TrainerCallback

    class SpendCap(TrainerCallback):
        def __init__(self) -> None:
            self.meter = SpendMeter(rollout_log)
            self.stopped_at: int | None = None

        def on_step_end(self, args, state, control, **kwargs):  # noqa: ANN001, ANN201
            if self.meter.update() >= max_usd and self.stopped_at is None:
                self.stopped_at = state.global_step
                control.should_training_stop = True
                control.should_save = True
                log.warning("max_usd: workers spent $%.4f >= $%.4f; stopping after step %d (checkpoint saved)",
                            self.meter.spent, max_usd, state.global_step)  # fmt: skip
            return control

        def summary(self) -> dict:
            return {"max_usd": max_usd, "spent_usd": self.meter.update(), "stopped_at_step": self.stopped_at}

    return SpendCap()
