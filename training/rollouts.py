"""Rollout rows and per-batch metrics of the conductor's GRPO reward. Pure Python: no torch,
TRL or Inspect import, so reports (training curves) and tests use it directly.

A rollout row is a plain dict (one JSONL line of the rollout log) with at least:
`reward`, `parsed`, `rejection`, `correct`, `steps` (root workflow length), `workers` (the pool
index of every executed worker step, nested rounds included), `refines`, `worker_input_tokens`,
`worker_output_tokens`, `worker_cost_usd` (None when a price is unknown), `conductor_tokens`,
`agent_calls`, `domain` and `error` (a harness failure, not a worker's); newer rows also
`cost_penalty` (what the reward's cost term took off) and `diag` (the round's
`solvers.diagnostics.round_features`, None when no workflow ran). In a data-parallel run each
row names the `process` that scored it (`RolloutLog(gather=...)`, training/parallel.py).

"Refines" (the verify/refine share): a workflow refines when some step after the first has an
access entry that includes at least one earlier step (["all"] or a non-empty index list), i.e.
a later step reads earlier work. Counted over the root workflow of parsed rollouts.

Recursion training (the paper's Sec. 3.2): a forced-recursion rollout has two conductor rounds.
Its reward is `recursive_reward(r1, r2)` = (0.25 * r1 + r2) / 1.25: the first round's reward
scaled by 0.25, and the weights normalised to sum to 1 so that a two-round reward stays on the
0..1 scale of the one-round rollouts it is compared with in the same GRPO group.
"""

from __future__ import annotations

import json
import math
import statistics
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from solvers.diagnostics import summarize

FIRST_ROUND_WEIGHT = 0.25  # the paper's scale of the initial round's reward in recursion training
MAX_LOGGED_CHARS = 4000  # per text field of a rollout row (completions, step outputs)


def completion_text(completion: object) -> str:
    """The text of a TRL completion: a plain string, or a conversational list of messages
    (the assistant messages' contents joined)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence):
        parts = [
            _content(m.get("content"))
            for m in completion
            if isinstance(m, Mapping) and m.get("role", "assistant") == "assistant"
        ]
        return "".join(parts)
    raise TypeError(
        f"a completion must be a string or a list of chat messages, got {type(completion).__name__}; "
        "fix: pass TRL's `completions` argument unchanged"
    )


def _content(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):  # typed content blocks: keep the text ones
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, Mapping) and b.get("type") == "text")
    return "" if content is None else str(content)


def workflow_refines(workflow: Mapping | None) -> bool:
    """Whether a parsed workflow (its dict form) has a step after the first that reads an
    earlier step (access ["all"] or a non-empty list of indices)."""
    if not workflow:
        return False
    return any(bool(entry) for entry in list(workflow.get("access_list", []))[1:])


def recursive_reward(first: float, second: float, first_weight: float = FIRST_ROUND_WEIGHT) -> float:
    """Reward of a forced-recursion rollout: the first round's reward scaled by `first_weight`,
    plus the recursive round's, normalised by the sum of the weights (result in the 0..1 range
    of the inputs)."""
    if first_weight < 0:
        raise ValueError(f"first_weight must be >= 0, got {first_weight}")
    return (first_weight * first + second) / (first_weight + 1.0)


def batch_metrics(rows: Sequence[Mapping], pool_names: Sequence[str] | None = None) -> dict[str, float]:
    """Aggregate metrics of one reward call (one GRPO generation batch).

    reward_mean / reward_std (population), accuracy, parse_rate, rejection/<reason> (share of
    all rollouts), steps_mean (parsed rollouts), refine_share (parsed rollouts), agent_calls_mean,
    worker_share/<name> (share of all executed worker steps; `pool_names[i]` names pool index i,
    else `pool_<i>`), worker_tokens_mean, worker_cost_usd_mean (only when every cost is known;
    else cost_unknown_share), conductor_tokens_mean, harness_error_rate, recursion_share, and
    reward_mean/<domain>, accuracy/<domain> for each domain present; cost_penalty_mean when the
    rows carry the cost term; diag/<name>: the workflow diagnostics of the rows' `diag`
    (`solvers.diagnostics.summarize`: copy_rate, single_step_share, single_worker_share,
    verify_refine_share, answer_changed/better/worse_share, worker_entropy/<domain>).
    """
    n = len(rows)
    if n == 0:
        return {}
    rewards = [float(r["reward"]) for r in rows]
    mean = sum(rewards) / n
    metrics: dict[str, float] = {
        "reward_mean": mean,
        "reward_std": math.sqrt(sum((x - mean) ** 2 for x in rewards) / n),
        "accuracy": _share(rows, lambda r: bool(r.get("correct"))),
        "parse_rate": _share(rows, lambda r: bool(r.get("parsed"))),
        "harness_error_rate": _share(rows, lambda r: bool(r.get("error"))),
        "recursion_share": _share(rows, lambda r: bool(r.get("recursive"))),
        "agent_calls_mean": sum(int(r.get("agent_calls") or 0) for r in rows) / n,
        "conductor_tokens_mean": sum(int(r.get("conductor_tokens") or 0) for r in rows) / n,
        "worker_tokens_mean": sum(
            int(r.get("worker_input_tokens") or 0) + int(r.get("worker_output_tokens") or 0) for r in rows
        )
        / n,
    }
    for reason, count in sorted(Counter(str(r["rejection"]) for r in rows if r.get("rejection")).items()):
        metrics[f"rejection/{reason}"] = count / n
    parsed = [r for r in rows if r.get("parsed")]
    if parsed:
        metrics["steps_mean"] = sum(int(r.get("steps") or 0) for r in parsed) / len(parsed)
        metrics["refine_share"] = _share(parsed, lambda r: bool(r.get("refines")))
    costs = [r.get("worker_cost_usd") for r in rows]
    if all(c is not None for c in costs):
        metrics["worker_cost_usd_mean"] = sum(float(c) for c in costs) / n
    else:
        metrics["cost_unknown_share"] = sum(c is None for c in costs) / n
    if any("cost_penalty" in r for r in rows):
        metrics["cost_penalty_mean"] = sum(float(r.get("cost_penalty") or 0.0) for r in rows) / n
    metrics.update(worker_shares(rows, pool_names))
    metrics.update({f"diag/{k}": v for k, v in summarize(r["diag"] for r in rows if r.get("diag")).items()})
    for domain in sorted({str(r["domain"]) for r in rows if r.get("domain")}):
        group = [r for r in rows if r.get("domain") == domain]
        metrics[f"reward_mean/{domain}"] = sum(float(r["reward"]) for r in group) / len(group)
        metrics[f"accuracy/{domain}"] = _share(group, lambda r: bool(r.get("correct")))
    return metrics


def worker_shares(rows: Iterable[Mapping], pool_names: Sequence[str] | None = None) -> dict[str, float]:
    """worker_share/<name>: each pool member's share of all executed worker steps."""
    counts = Counter(w for r in rows for w in r.get("workers") or [])
    total = sum(counts.values())
    if not total:
        return {}
    return {f"worker_share/{_pool_name(i, pool_names)}": c / total for i, c in sorted(counts.items())}


def _pool_name(index: int, pool_names: Sequence[str] | None) -> str:
    if pool_names is not None and 0 <= index < len(pool_names):
        return f"{index}:{pool_names[index]}"
    return f"pool_{index}"


def _share(rows: Sequence[Mapping], test) -> float:  # noqa: ANN001 - a predicate
    return sum(1 for r in rows if test(r)) / len(rows) if rows else 0.0


def clip(text: str | None, limit: int = MAX_LOGGED_CHARS) -> str | None:
    """A text field clipped for the log (the clipped length is stated)."""
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + f"... [{len(text) - limit} more chars]"


class RolloutLog:
    """Appends rollout rows to a JSONL file, one line per rollout (safe across threads).

    With `gather` (a data-parallel run, training/parallel.py) `write` holds the rows and `flush()`,
    which every process calls at the same point, writes `gather(held)`: every process's rows on
    the main process, nothing on the others. One file, each rollout once."""

    def __init__(self, path: str | Path, gather: Callable[[list[Mapping]], list[Mapping]] | None = None):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.gather = gather
        self._held: list[Mapping] = []
        self._lock = threading.Lock()

    def write(self, rows: Iterable[Mapping]) -> None:
        if self.gather is None:
            self._append(rows)
            return
        with self._lock:
            self._held.extend(rows)

    def flush(self) -> None:
        """Write the rows every process holds (a collective with `gather`; nothing to do without)."""
        if self.gather is None:
            return
        with self._lock:
            held, self._held = self._held, []
        self._append(self.gather(held))

    def _append(self, rows: Iterable[Mapping]) -> None:
        lines = "".join(json.dumps(row, default=str) + "\n" for row in rows)
        if not lines:
            return
        with self._lock, self.path.open("a", encoding="utf-8") as handle:
            handle.write(lines)


def supersede_after(path: str | Path, first_step: int) -> int:
    """Move the JSONL lines of `path` whose "step" is >= `first_step` to `<path>.superseded`
    (appended; nothing is lost) and return how many moved. A run resumed from a checkpoint
    re-runs the steps after it; their first attempt must not count twice."""
    path = Path(path)
    if not path.is_file():
        return 0
    keep, moved = [], []
    for line in path.read_text(encoding="utf-8").splitlines(keepends=True):
        try:
            late = int(json.loads(line)["step"]) >= first_step
        except (ValueError, KeyError, TypeError):  # a half line of a killed run, or no step: keep as is
            late = False
        (moved if late else keep).append(line)
    if moved:
        with path.with_name(path.name + ".superseded").open("a", encoding="utf-8") as handle:
            handle.writelines(moved)
        path.write_text("".join(keep), encoding="utf-8")
    return len(moved)


GRPO_STD_EPS = 1e-4  # TRL's: advantage = (reward - group mean) / (group std + 1e-4)


def credit_by_domain(rows: Sequence[Mapping]) -> list[dict]:
    """What GRPO credited: per domain and final worker (the last executed worker step; "none"
    when nothing ran), the rollouts, their mean reward and the sum of their group-normalised
    advantages (groups = the rollouts of one question in one step, TRL's "group" scaling with
    the sample std). A positive sum pushes that choice up; the sums show which way the reward
    pushes each domain, whatever the policy then does."""
    groups: dict[tuple, list[Mapping]] = {}
    for row in rows:
        groups.setdefault((row["step"], row.get("item_id")), []).append(row)
    cells: dict[tuple[str, str], dict] = {}
    for group in groups.values():
        rewards = [float(r["reward"]) for r in group]
        mean = sum(rewards) / len(rewards)
        std = statistics.stdev(rewards) if len(rewards) > 1 else 0.0
        for row, reward in zip(group, rewards, strict=True):
            names = row.get("worker_names") or []
            key = (str(row.get("domain")), str(names[-1]) if names else "none")
            cell = cells.setdefault(key, {"domain": key[0], "worker": key[1], "rollouts": 0, "reward_sum": 0.0,
                                          "advantage_sum": 0.0})  # fmt: skip
            cell["rollouts"] += 1
            cell["reward_sum"] += reward
            cell["advantage_sum"] += (reward - mean) / (std + GRPO_STD_EPS)
    return [
        {"domain": c["domain"], "worker": c["worker"], "rollouts": c["rollouts"],
         "reward_mean": round(c["reward_sum"] / c["rollouts"], 3), "advantage_sum": round(c["advantage_sum"], 2)}
        for _, c in sorted(cells.items())
    ]  # fmt: skip


def read_rollouts(path: str | Path) -> list[dict]:
    """The rows of a rollout log (for reports and tests)."""
    with Path(path).open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]
