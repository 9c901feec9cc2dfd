"""Pure logic of the regression gate: per-sample records -> metrics, metrics vs baseline.

No Inspect import. A baseline file (JSON) holds tolerance groups and entries:

    {"tolerances": {"sim": {"why": "...", "metrics": {"accuracy": {"abs": 0.0}, ...}}, ...},
     "entries": {"sim/gsm8k/conductor": {"group": "sim", "task": "gsm8k", "solver": "conductor",
                                         "metrics": {"accuracy": 0.5, ...}}, ...}}

A metric passes when |new - old| <= max(abs, rel * |old|) of its group's tolerance; a
metric with no tolerance must be equal. None (e.g. an unknown price) equals only None.
Every entry of the baseline must be in the run and every entry of the run in the baseline.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

METRICS = (
    "samples",
    "errors",
    "accuracy",
    "parsed",
    "input_tokens",
    "output_tokens",
    "calls",
    "failed_steps",
    "worker_cost_usd",
    "cost_usd",
)
UPDATE_HINT = "If the change is intended, rewrite the baseline: nox -s regression -- --update (then commit it)."


class BaselineError(ValueError):
    """A baseline file that cannot be used (bad shape, unknown group, bad tolerance)."""


@dataclass(frozen=True)
class SampleRecord:
    """One sample as the gate sees it: its score (0..1, None when unscored), whether it
    errored, and the `conductor` metadata the solvers record (tokens, calls, cost)."""

    score: float | None
    error: bool
    meta: Mapping[str, Any]


@dataclass(frozen=True)
class Difference:
    key: str
    metric: str
    old: Any
    new: Any
    allowed: float | None  # None: not a numeric comparison (missing entry, None vs number)

    def line(self) -> str:
        if self.metric == "(entry)":
            return f"  {self.key}: {self.old} -> {self.new}"
        if self.allowed is None:
            return f"  {self.key}  {self.metric}: {fmt(self.old)} -> {fmt(self.new)}"
        delta = self.new - self.old
        return (
            f"  {self.key}  {self.metric}: {fmt(self.old)} -> {fmt(self.new)} "
            f"({delta:+.6g}; tolerance +-{self.allowed:.6g})"
        )


def fmt(value: Any) -> str:
    return "None" if value is None else f"{value:.6g}" if isinstance(value, float) else str(value)


def entry_key(group: str, task: str, solver: str) -> str:
    return f"{group}/{task}/{solver}"


def aggregate(samples: Iterable[SampleRecord]) -> dict[str, Any]:
    """Per-entry metrics: counts, accuracy (an errored or unscored sample counts 0), share
    of parsed workflows, and means per sample of tokens, calls, failed worker steps and cost
    (cost_usd is None when any sample's cost is unknown)."""
    rows = list(samples)
    n = len(rows)
    if n == 0:
        raise ValueError("no samples to aggregate: the run produced no samples (check --limit and the task data)")

    def mean(values: Iterable[float]) -> float:
        return _round(sum(values) / n)

    costs = [r.meta.get("cost_usd") for r in rows]
    return {
        "samples": n,
        "errors": sum(1 for r in rows if r.error),
        "accuracy": mean(0.0 if r.error or r.score is None else float(r.score) for r in rows),
        "parsed": mean(1.0 if r.meta.get("parsed") else 0.0 for r in rows),
        "input_tokens": mean(_num(r.meta.get("input_tokens")) for r in rows),
        "output_tokens": mean(_num(r.meta.get("output_tokens")) for r in rows),
        "calls": mean(_num(r.meta.get("calls")) for r in rows),
        "failed_steps": mean(failed_steps(r.meta.get("round")) for r in rows),
        "worker_cost_usd": mean(_num(r.meta.get("worker_cost_usd")) for r in rows),
        "cost_usd": None if any(c is None for c in costs) else mean(float(c) for c in costs),
    }


def failed_steps(round_record: Any, depth: int = 0) -> int:
    """Worker steps that failed in a recorded round tree (nested rounds included)."""
    if not isinstance(round_record, Mapping) or depth > 32:
        return 0
    total = 0
    for step in round_record.get("steps") or []:
        if isinstance(step, Mapping):
            nested = step.get("round")
            total += failed_steps(nested, depth + 1) if nested else int(step.get("error") is not None)
    return total


def _num(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _round(value: float) -> float:
    return float(f"{value:.10g}")  # stable JSON across runs: drop float noise


def allowed_change(old: float, tolerance: Mapping[str, float] | None) -> float:
    """The largest |new - old| a tolerance allows (0 without one)."""
    if not tolerance:
        return 0.0
    return max(float(tolerance.get("abs", 0.0)), float(tolerance.get("rel", 0.0)) * abs(old))


def compare(baseline: Mapping[str, Any], current: Mapping[str, Mapping[str, Any]]) -> list[Difference]:
    """Every difference beyond tolerance between a baseline file's entries and the run's
    metrics (`current`: entry key -> {"group": ..., "metrics": {...}})."""
    check_baseline(baseline)
    groups = baseline["tolerances"]
    entries = baseline["entries"]
    found: list[Difference] = []
    for key in sorted(set(entries) - set(current)):
        found.append(Difference(key, "(entry)", "in the baseline", "not in this run", None))
    for key in sorted(set(current) - set(entries)):
        found.append(Difference(key, "(entry)", "not in the baseline", "in this run", None))
    for key in sorted(set(entries) & set(current)):
        old_metrics = entries[key]["metrics"]
        new_metrics = current[key]["metrics"]
        tolerances = groups[entries[key]["group"]]["metrics"]
        for metric in sorted(set(old_metrics) | set(new_metrics), key=_metric_order):
            old, new = old_metrics.get(metric), new_metrics.get(metric)
            diff = _compare_value(key, metric, old, new, tolerances.get(metric))
            if diff is not None:
                found.append(diff)
    return found


def _metric_order(metric: str) -> tuple[int, str]:
    return (METRICS.index(metric) if metric in METRICS else len(METRICS), metric)


def _compare_value(key: str, metric: str, old: Any, new: Any, tolerance: Mapping[str, float] | None):
    numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (old, new))
    if not numeric:
        return None if old == new else Difference(key, metric, old, new, None)
    if math.isnan(old) or math.isnan(new):
        return Difference(key, metric, old, new, None)
    allowed = allowed_change(old, tolerance)
    return None if abs(new - old) <= allowed + 1e-12 else Difference(key, metric, old, new, allowed)


def check_baseline(baseline: Mapping[str, Any]) -> None:
    """Raise BaselineError naming the problem when a baseline file has the wrong shape."""
    if not isinstance(baseline, Mapping) or not isinstance(baseline.get("tolerances"), Mapping):
        raise BaselineError("baseline has no 'tolerances' object; rewrite it with: nox -s regression -- --update")
    if not isinstance(baseline.get("entries"), Mapping):
        raise BaselineError("baseline has no 'entries' object; rewrite it with: nox -s regression -- --update")
    for name, group in baseline["tolerances"].items():
        metrics = group.get("metrics") if isinstance(group, Mapping) else None
        if not isinstance(metrics, Mapping):
            raise BaselineError(f"tolerance group {name!r} has no 'metrics' object")
        for metric, tol in metrics.items():
            if not isinstance(tol, Mapping) or set(tol) - {"abs", "rel"}:
                raise BaselineError(f"tolerance {name}.{metric} must be an object with 'abs' and/or 'rel', got {tol!r}")
            for kind, value in tol.items():
                if not isinstance(value, int | float) or isinstance(value, bool) or value < 0:
                    raise BaselineError(f"tolerance {name}.{metric}.{kind} must be a number >= 0, got {value!r}")
    for key, entry in baseline["entries"].items():
        if not isinstance(entry, Mapping) or not isinstance(entry.get("metrics"), Mapping):
            raise BaselineError(f"baseline entry {key!r} has no 'metrics' object")
        if entry.get("group") not in baseline["tolerances"]:
            raise BaselineError(
                f"baseline entry {key!r} names tolerance group {entry.get('group')!r}, "
                f"which is not one of {sorted(baseline['tolerances'])}"
            )


def report(differences: list[Difference], n_entries: int, baseline_path: str) -> str:
    """The readable verdict: OK with counts, or every difference and how to accept it."""
    if not differences:
        return f"regression gate: OK ({n_entries} entries within tolerance of {baseline_path})"
    lines = [f"regression gate: FAILED, {len(differences)} difference(s) beyond tolerance of {baseline_path}:"]
    lines += [d.line() for d in differences]
    lines.append(UPDATE_HINT)
    return "\n".join(lines)


def updated_baseline(
    baseline: Mapping[str, Any] | None,
    current: Mapping[str, Mapping[str, Any]],
    default_tolerances: Mapping[str, Any],
    about: str,
) -> dict[str, Any]:
    """The baseline rewritten from this run: entries replaced; tolerance groups kept from the
    old file (edited values win) and added from the defaults where missing."""
    tolerances = {**default_tolerances, **dict((baseline or {}).get("tolerances") or {})}
    result = {
        "about": about,
        "tolerances": tolerances,
        "entries": {key: dict(current[key]) for key in sorted(current)},
    }
    check_baseline(result)
    return result


def to_json(value: Any, indent: int = 0) -> str:
    """A baseline as JSON for review in diffs: objects of plain values on one line."""
    if not isinstance(value, Mapping) or not value:
        return json.dumps(value)
    if all(not isinstance(v, Mapping | list) for v in value.values()):
        return json.dumps(value)
    pad = " " * (indent + 1)
    items = ",\n".join(f"{pad}{json.dumps(k)}: {to_json(v, indent + 1)}" for k, v in value.items())
    return "{\n" + items + "\n" + " " * indent + "}"
