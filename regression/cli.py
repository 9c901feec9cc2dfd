"""Command line of the regression gate.

    python -m regression                 # run the suite, compare with regression/baseline.json
    python -m regression --update        # run it and rewrite the baseline (commit the file)
    python -m regression --groups sim    # only the simulated-pool group (seconds)

Exit status: 0 within tolerance, 1 differences (printed as a diff), 2 unusable input.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from regression.compare import BaselineError, check_baseline, compare, report, to_json, updated_baseline
from regression.suite import HERE, NOT_IN_SUITE, Group, default_groups, run_group

BASELINE = HERE / "baseline.json"
ABOUT = (
    "Regression baseline of `nox -s regression` (regression/suite.py). Metrics are per task and "
    "solver: samples, errors, accuracy (errored = wrong), parsed (share of parsed workflows), and "
    "per-sample means of input_tokens, output_tokens, calls, failed_steps (worker steps that failed), "
    "worker_cost_usd, cost_usd (None: a "
    "price is unknown, e.g. the scripted conductor). A metric fails when |new - old| > "
    "max(abs, rel * |old|) of its group's tolerance below; a metric without one must be equal. "
    "Rewrite on purpose with: nox -s regression -- --update"
)
TOLERANCES: dict[str, Any] = {
    "sim": {
        "why": "Simulated workers and the scripted conductor are deterministic by construction (sha256 "
        "of seed, item and subtask), so verdicts, calls and parse rate must not change at all; a "
        "changed verdict means the harness changed what a worker sees or how it is scored. Tokens "
        "and cost may drift 2% for small prompt edits; more is a change to accept with --update.",
        "metrics": {
            "samples": {"abs": 0},
            "errors": {"abs": 0},
            "accuracy": {"abs": 0},
            "parsed": {"abs": 0},
            "calls": {"abs": 0},
            "failed_steps": {"abs": 0},
            "input_tokens": {"rel": 0.02},
            "output_tokens": {"rel": 0.02},
            "worker_cost_usd": {"rel": 0.02},
            "cost_usd": {"rel": 0.02},
        },
    },
    "local": {
        "why": "Real llama.cpp generation, greedy with a fixed seed, 2 threads and one slot: repeatable on "
        "one machine, but float summation order differs between CPU kernels (AVX2, AVX-512, AMX), so "
        "another machine can pick a different token at a near tie and the text then diverges (measured: "
        "1 thread instead of 2 changed one worker output by a token). Exact: samples, errors, failed "
        "steps, parse rate (the grammar forces a valid workflow), cost (free local models); loose: "
        "calls +-1 per sample, tokens +-50%; accuracy not gated (2 near-chance samples).",
        "metrics": {
            "samples": {"abs": 0},
            "errors": {"abs": 0},
            "accuracy": {"abs": 1},
            "parsed": {"abs": 0},
            "calls": {"abs": 1},
            "failed_steps": {"abs": 0},
            "input_tokens": {"rel": 0.5},
            "output_tokens": {"rel": 0.5},
            "worker_cost_usd": {"abs": 0},
            "cost_usd": {"abs": 0},
        },
    },
}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m regression", description=__doc__.split("\n\n")[0])
    p.add_argument("--update", action="store_true", help="rewrite the baseline from this run")
    p.add_argument("--baseline", type=Path, default=BASELINE, help="baseline file (default: %(default)s)")
    p.add_argument("--log-dir", default="logs/regression", help="Inspect logs of the run (default: %(default)s)")
    p.add_argument("--groups", default="sim,local", help="comma-separated groups to run (default: %(default)s)")
    p.add_argument("--tasks", default="", help="comma-separated task names to run (default: all of the suite)")
    p.add_argument("--solvers", default="", help="comma-separated solver names to run (default: all of the suite)")
    p.add_argument("--sim-limit", type=int, default=8, help="samples per task in the sim group")
    p.add_argument("--local-limit", type=int, default=2, help="samples in the local group")
    p.add_argument(
        "--data-file", action="append", default=[], metavar="TASK=PATH", help="use a local data file for a task"
    )
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        data_files = dict(_pair(item) for item in args.data_file)
        wanted = [g.strip() for g in args.groups.split(",") if g.strip()]
        groups = [g for g in default_groups(args.sim_limit, args.local_limit, data_files) if g.name in wanted]
        unknown = set(wanted) - {g.name for g in groups}
        if unknown:
            raise BaselineError(
                f"unknown group(s) {sorted(unknown)}; use sim and/or local (local needs --local-limit > 0)"
            )
        groups = select(groups, _names(args.tasks), _names(args.solvers))
        baseline = _load(args.baseline, required=not args.update)
    except BaselineError as ex:
        print(f"regression: {ex}", file=sys.stderr)
        return 2
    for what, why in NOT_IN_SUITE.items():
        print(f"regression: not in the suite: {what} ({why})")
    current: dict[str, dict[str, Any]] = {}
    for group in groups:
        start = time.monotonic()
        current.update(run_group(group, args.log_dir))
        print(f"regression: group {group.name} took {time.monotonic() - start:.1f} s")
    if args.update:
        old = (baseline or {}).get("entries") or {}
        kept = {k: e for k, e in old.items() if not in_scope(e, groups)}
        new = updated_baseline(baseline, {**kept, **current}, TOLERANCES, ABOUT)
        args.baseline.write_text(to_json(new) + "\n")
        print(f"regression: wrote {len(new['entries'])} entries to {args.baseline}")
        return 0
    assert baseline is not None
    scoped = {**baseline, "entries": {k: e for k, e in baseline["entries"].items() if in_scope(e, groups)}}
    differences = compare(scoped, current)
    print(report(differences, len(current), str(args.baseline)))
    if differences:
        print(f"regression: the run's Inspect logs are in {args.log_dir} (inspect view --log-dir {args.log_dir})")
    return 1 if differences else 0


def _names(text: str) -> set[str]:
    return {name.strip() for name in text.split(",") if name.strip()}


def select(groups: list[Group], tasks: set[str], solvers: set[str]) -> list[Group]:
    """The groups cut to the named tasks and solvers (empty set: all); unknown names are an error."""
    for kind, wanted, known in (
        ("task", tasks, {t.name for g in groups for t in g.tasks}),
        ("solver", solvers, {s.solver for g in groups for s in g.solvers}),
    ):
        if wanted - known:
            raise BaselineError(f"unknown {kind}(s) {sorted(wanted - known)}; the suite has {sorted(known)}")
    cut = [
        replace(
            g,
            tasks=tuple(t for t in g.tasks if not tasks or t.name in tasks),
            solvers=tuple(s for s in g.solvers if not solvers or s.solver in solvers),
        )
        for g in groups
    ]
    return [g for g in cut if g.tasks and g.solvers]


def in_scope(entry: dict[str, Any], groups: list[Group]) -> bool:
    """Whether a baseline entry is one this selection of the suite runs."""
    return any(
        entry.get("group") == g.name
        and any(t.name == entry.get("task") for t in g.tasks)
        and any(s.solver == entry.get("solver") for s in g.solvers)
        for g in groups
    )


def _pair(item: str) -> tuple[str, str]:
    task, sep, path = item.partition("=")
    if not sep or not task or not path:
        raise BaselineError(
            f"--data-file {item!r}: expected TASK=PATH, e.g. --data-file gsm8k=tests/fixtures/gsm8k.jsonl"
        )
    return task, path


def _load(path: Path, required: bool) -> dict[str, Any] | None:
    if not path.exists():
        if required:
            raise BaselineError(f"no baseline at {path}; create it with: nox -s regression -- --update")
        return None
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as ex:
        raise BaselineError(f"cannot read the baseline {path}: {ex}; fix it or rewrite it with --update") from ex
    check_baseline(data)
    return data
