"""One logged sample's numbers, from its `metadata["conductor"]` and the eval spec (pure).

`sample_fields` turns the solver's stored summary (`solvers.conducting.summary`: method,
calls, tokens, costs, workers, settings and the round tree) into flat columns; `run_fields`
turns the eval spec (solver, its options, pool, conductor model) into the row identity the
tables group by. Nothing here names a method: rows are whatever the logs hold.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from solvers.strategy import NO_WORKFLOW, nested_step_models, step_models, strategy
from tasks.catalog import benchmark
from workers.pools import DEFAULT_POOL, bundled_pools, load_pool
from workers.providers import any_simulated, capabilities
from workers.redact import pool_label

HIDDEN_OPTIONS = {"pool"}  # shown as the table section, not in a row's label
ALWAYS_OPTIONS = {"worker"}  # part of the identity even at the solver's default (which worker ran)
GRAPH_CHARS = 160  # subtask text kept per step for drawing a workflow


def paper_column(task: str) -> str:
    """The paper's column of a task (its benchmark's declaration), else the task's own name."""
    declared = benchmark(task)
    return declared.paper_column if declared is not None and declared.paper_column else task


def paper_setting(pool: str) -> str:
    """The paper's setting a bundled pool declares (its file's `setting`), "" for any other pool."""
    return load_pool(pool).setting if pool in bundled_pools() else ""


def short(model: str | None) -> str:
    """A model name without its provider path: openai/gpt-5 -> gpt-5."""
    return str(model or "").rsplit("/", 1)[-1].lower()


def pool_kind(models: list[str]) -> str:
    """ "simulated" (any sim/ worker), "local" (any local/ worker), "api" otherwise."""
    if any_simulated(models):
        return "simulated"
    if any(capabilities(m).local_server for m in models):
        return "local"
    return "api" if models else "unknown"


def pool_makeup(models: list[str]) -> str:
    """What a pool's workers are: "simulated" (every one `sim/`), "mixed" (some simulated, some real
    models), else `pool_kind`'s "local", "api" or "unknown"."""
    simulated = sum(capabilities(m).simulated for m in models)
    if simulated and simulated < len(models):
        return "mixed"
    return pool_kind(models)


_SEPARATORS = re.compile(r"[\\/]")
_HOST_PATH = re.compile(r"^([A-Za-z0-9_.-]+/)?(/|~|[A-Za-z]:[\\/])")  # a path, maybe after a provider/


def no_host_path(value: object) -> object:
    """`value`, but an absolute path in it (an option's file, a model's checkpoint: `hf//home/me/ckpt`)
    shown by its last part (`hf/…/ckpt`): a host's folders stay out of the row labels."""
    if isinstance(value, str) and (found := _HOST_PATH.match(value)):
        last = _SEPARATORS.split(value.rstrip("/\\"))[-1]
        return f"{found[1] or ''}…/{last}"
    return value


def sample_fields(meta: Mapping[str, Any] | None, model_usage: Mapping[str, Any] | None = None) -> dict:
    """Flat numbers of one sample; costs are None when unknown (a price missing or no record)."""
    if not meta:
        usage = model_usage or {}
        tin = sum(int(u.get("input_tokens") or 0) for u in usage.values())
        tout = sum(int(u.get("output_tokens") or 0) for u in usage.values())
        return {
            "method": None,
            "recorded": False,
            "parsed": None,
            "steps": None,
            "agent_calls": None,
            "calls": None,
            "input_tokens": tin,
            "output_tokens": tout,
            "cost_usd": None,
            "conductor_model": None,
            "workers": [],
            "strategy": NO_WORKFLOW,
            "step_models": [],
            "nested_step_models": [],
            "graph": "",
            "settings": {},
        }
    round_ = meta.get("round") or {}
    return {
        "method": meta.get("method"),
        "recorded": True,
        "parsed": bool(meta.get("parsed")),
        "steps": meta.get("steps"),
        "agent_calls": meta.get("agent_calls"),
        "calls": meta.get("calls"),
        "input_tokens": meta.get("input_tokens"),
        "output_tokens": meta.get("output_tokens"),
        "cost_usd": meta.get("cost_usd"),
        "conductor_model": meta.get("conductor"),
        "workers": list(meta.get("workers") or []),
        "strategy": strategy(round_),
        "step_models": step_models(round_),
        "nested_step_models": nested_step_models(round_),
        "graph": json.dumps(graph(round_)),
        "settings": dict(meta.get("settings") or {}),
    }


def graph(round_: Mapping[str, Any]) -> list[dict]:
    """The root round's steps, small enough to keep per sample (for drawing)."""
    return [
        {
            "worker": s.get("worker"),
            "model": s.get("model"),
            "visible": list(s.get("visible") or []),
            "subtask": str(s.get("subtask") or "")[:GRAPH_CHARS],
            "ok": not s.get("error"),
            "nested": bool(s.get("round")),
        }
        for s in round_.get("steps") or []
    ]


def run_fields(
    solver: str | None,
    solver_args: Mapping[str, Any] | None,
    settings: Mapping[str, Any] | None,
    defaults: Mapping[str, Any] | None,
    workers: list[str],
    conductor_model: str | None,
    method: str | None = None,
) -> dict:
    """The row identity: method, options that differ from the solver's defaults, pool (by name:
    `workers.redact.pool_label`).

    `key` (method|option=value|...: worker as its pool index, model names without their
    provider) matches the paper reference file; `label` is for reading (worker by name)."""
    args = dict(solver_args or {})
    merged = {**(settings or {}), **args}

    def differs(k: str) -> bool:
        if k in ALWAYS_OPTIONS:
            return True
        if defaults is not None and k in defaults:
            return defaults[k] != merged[k]
        return k in args  # an option the solver's signature does not name: shown when passed

    changed = {k: merged[k] for k in sorted(merged) if k not in HIDDEN_OPTIONS and differs(k)}
    name = method or solver or "unknown"
    key_parts, label_parts = [name], []
    for k, v in changed.items():
        key_parts.append(f"{k}={short(v) if isinstance(v, str) else v}")
        if k == "worker" and isinstance(v, int) and 0 <= v < len(workers) and workers[v]:
            label_parts.append(no_host_path(workers[v]))
        else:
            label_parts.append(f"{k}={no_host_path(v)}")
    pool = pool_label(str(args.get("pool") or (settings or {}).get("pool") or DEFAULT_POOL))
    kind = pool_makeup([w for w in workers if w])  # "": a slot the samples did not use, no model known
    return {
        "method": name,
        "key": "|".join(key_parts),
        "label": name + (f" ({', '.join(label_parts)})" if label_parts else ""),
        "pool": pool,
        "pool_kind": kind,
        "setting": paper_setting(pool) if kind == "api" else "",
        "conductor_short": short(conductor_model) if conductor_model else "",
    }
