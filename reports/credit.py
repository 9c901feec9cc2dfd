"""Counterfactual credit of a conductor's workflow steps, from logged samples.

`python -m reports credit --logs DIR [--pool NAME_OR_PATH] [--out DIR] [--no-swap] [--limit N] [--yes]`

For every logged `conductor` sample whose root workflow ran without recursion, the recorded
workflow (the steps as executed: worker, subtask, access) is re-run as is ("replay") and with one
change at a time: one step removed (a later step that saw "all" then sees the steps left; from a
one-step workflow nothing is removed) or one step's worker replaced by each other worker of the
sample's pool. The runs use the project's executor (`solvers.executor.execute_workflow`) on the
pool's Inspect models with Inspect's model cache on (`CachePolicy(expiry=None)`), so a call whose
conversation a change leaves as it was (a step that does not see the changed one) is read from the
cache, not made again; simulated workers get the sample's answer key. Each run's final answer is
judged by the check of the sample's scorer (`scorers.checks.CHECKS`; a sample scored otherwise,
e.g. code, is skipped and counted).

Credit of a change = replay accuracy minus the changed workflow's, in percentage points, on the
same samples (`reports.paired.compare`: bootstrap CI, exact McNemar): per step position (the
step's index in the recorded workflow) and per worker (the recorded worker of the changed step).
Replacements count one pair per (sample, replacement worker).

Whose pool runs: `--pool NAME_OR_PATH` (the user's) re-runs every sample on that pool (it must list
the workers the log recorded). Without it, each log's own pool (any path a log names: data from
whoever wrote the log) runs only when every worker is simulated and offline
(`workers.endpoints.offline`); otherwise every endpoint it would call (provider, model, host, the
credential sent) is printed and the user must type `y` in a terminal; a run without a terminal is
refused, naming `--pool` (docs/security.md, "Commands that re-run from logs").

Before running, the number of model calls (distinct conversations over all runs: at most, the
cache may hold some already) and their estimated cost (each call priced at its worker's price with
the recorded tokens of the step at that position) are printed; a pool that can spend (a worker that is
neither simulated nor local) runs only after the user confirms, or with `--yes` on the user's `--pool`.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import sys
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from copy import copy
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from reports.csv_safe import write_csv
from reports.diagnostics import input_text
from reports.paired import compare
from reports.records import pool_makeup
from reports.safe_text import write_text
from reports.tables import markdown, md_text, pool_heading
from solvers.conducting import check_generation
from solvers.prompts import QUESTION_MODES
from solvers.workflow import DEFAULT_MAX_STEPS, Workflow, WorkflowError, validate
from workers.endpoints import Endpoint, endpoint, free, offline, shown
from workers.providers import any_simulated
from workers.redact import pool_label

DEFAULT_OUT = "reports/out/credit"
CONCURRENT_SAMPLES = 8
MAX_STEPS = 16  # a logged workflow with more steps is not re-run (runs grow with steps x workers)
REPLAY, REMOVE, SWAP = "replay", "remove", "swap"
COLUMNS = [
    "pool",
    "by",
    "value",
    "change",
    "pairs",
    "replay_accuracy",
    "changed_accuracy",
    "credit",
    "ci_low",
    "ci_high",
    "mcnemar_p",
]


@dataclass(frozen=True)
class Variant:
    """One run of a sample: the workflow, what was changed, and which recorded step each step is."""

    change: str  # replay | remove | swap
    position: int | None  # the recorded step changed
    replacement: int | None  # swap: the worker put in its place
    workflow: Workflow
    origin: tuple[int, ...]  # recorded index of each step


@dataclass(frozen=True)
class Logged:
    """A logged conductor sample, ready to re-run."""

    log: str
    task: str
    sample: Any  # inspect_ai.log.EvalSample
    pool: str
    params: Mapping[str, Any]  # the solver's options (worker_temperature, worker_max_tokens)
    workflow: Workflow
    workers: tuple[str, ...]  # recorded worker names, in the sample's pool order
    pool_indices: tuple[int, ...]
    question_mode: str
    scorer: str
    tokens: tuple[tuple[int, int], ...]  # recorded (input, output) tokens per step

    @property
    def question(self) -> str:
        return input_text(self.sample.input)

    @property
    def target(self) -> str:
        t = self.sample.target
        return str(t[0] if isinstance(t, list) and t else t or "")


# ----------------------------------------------------------------------------- variants (pure)


def removed(workflow: Workflow, k: int) -> Workflow:
    """`workflow` without step k: later steps' index access renumbered, "all" kept (the steps left)."""

    def access(entry: str | tuple[int, ...]) -> str | tuple[int, ...]:
        return entry if entry == "all" else tuple(j - (j > k) for j in entry if j != k)

    keep = [i for i in range(len(workflow)) if i != k]
    return Workflow(
        tuple(workflow.model_ids[i] for i in keep),
        tuple(workflow.subtasks[i] for i in keep),
        tuple(access(workflow.access[i]) for i in keep),
    )


def swapped(workflow: Workflow, k: int, worker: int) -> Workflow:
    """`workflow` with step k run by `worker`."""
    ids = list(workflow.model_ids)
    ids[k] = worker
    return replace(workflow, model_ids=tuple(ids))


def variants(workflow: Workflow, n_workers: int, *, swap: bool = True) -> list[Variant]:
    """The replay, every one-step removal (workflows of 2+ steps) and, with `swap`, every replacement."""
    n = len(workflow)
    out = [Variant(REPLAY, None, None, workflow, tuple(range(n)))]
    if n > 1:
        out += [Variant(REMOVE, k, None, removed(workflow, k), tuple(i for i in range(n) if i != k)) for k in range(n)]
    if swap:
        out += [
            Variant(SWAP, k, w, swapped(workflow, k, w), tuple(range(n)))
            for k in range(n)
            for w in range(n_workers)
            if w != workflow.model_ids[k]
        ]
    return out


def call_keys(
    variant: Variant, names: Sequence[str], question_mode: str, constrained: Callable[[str], bool] = lambda name: False
) -> list[tuple]:
    """What each step's request depends on (its worker, subtask, and recursively what it saw; for a worker
    with an answer grammar, whether it is the last step): equal keys send the same request, so the second
    is a cache hit."""
    keys: list[tuple] = []
    flow = variant.workflow
    first = question_mode == "first"
    for i in range(len(flow)):
        name = names[flow.model_ids[i]]
        seen = tuple((keys[j], first and j == 0) for j in flow.visible(i))
        keys.append((name, flow.subtasks[i], first and i == 0, constrained(name) and i == len(flow) - 1, seen))
    return keys


@dataclass(frozen=True)
class Estimate:
    calls: int
    usd: float | None  # None: a worker has no price
    samples: int
    runs: int


def estimate(
    items: Sequence[tuple[Logged, list[Variant]]],
    prices: Callable[[str], Any],
    constrained: Callable[[str], bool] = lambda name: False,
) -> Estimate:
    """Distinct calls over every run of every sample (`call_keys`) and their cost at recorded token counts."""
    calls, usd, runs = 0, 0.0, 0
    for logged, runs_of in items:
        seen: dict[tuple, tuple[str, int]] = {}
        for v in runs_of:
            for i, key in enumerate(call_keys(v, logged.workers, logged.question_mode, constrained)):
                seen.setdefault(key, (logged.workers[v.workflow.model_ids[i]], v.origin[i]))
        runs += len(runs_of)
        calls += len(seen)
        for name, origin in seen.values():
            price = prices(name)
            usd = None if usd is None or price is None else usd + price.cost(*logged.tokens[origin])
    return Estimate(calls, usd, len(items), runs)


# ----------------------------------------------------------------------------- logs


def collect(log_dir: str | Path, limit: int | None = None) -> tuple[list[Logged], Counter]:
    """The logged conductor samples that can be re-run, and why the others cannot (counted)."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    from scorers.checks import CHECKS

    found, skipped = [], Counter()
    for info in list_eval_logs(str(log_dir), recursive=True):
        log = read_eval_log(info)
        steps = [s for s in (log.plan.steps if log.plan else []) if s.solver]
        params = dict(steps[-1].params if steps else log.eval.solver_args or {})
        task = str(log.eval.task).rsplit("/", 1)[-1]
        for sample in log.samples or []:
            if limit is not None and len(found) >= limit:
                return found, skipped
            meta = (sample.metadata or {}).get("conductor") or {}
            scorer = next(iter(sample.scores or {}), "")
            why = reason_to_skip(meta, sample, scorer in CHECKS, params)
            if why:
                skipped[why if why != "scorer" else f"scorer {scorer or 'none'} has no pure check"] += 1
                continue
            try:
                found.append(logged_sample(log.location, task, sample, meta, params, scorer))
            except (WorkflowError, TypeError, ValueError, KeyError) as error:  # a log is data: it may lie
                skipped[f"the recorded workflow does not validate ({type(error).__name__}: {str(error)[:160]})"] += 1
    return found, skipped


def reason_to_skip(meta: Mapping, sample: Any, checked: bool, params: Mapping) -> str | None:
    """Why a logged sample is not re-run (None: it is)."""
    round_ = meta.get("round") or {}
    if meta.get("method") != "conductor":
        return "not a conductor sample"
    if sample.error:
        return "errored sample"
    if not round_.get("steps") or not round_.get("workflow"):
        return "no workflow"
    if any(s.get("round") for s in round_["steps"]):
        return "recursive step (the conductor would write the nested round again)"
    if (meta.get("settings") or {}).get("replace_workers"):
        return "replace_workers run"
    if params.get("pool") is not None and not isinstance(params.get("pool"), str):
        return "pool option is not a name"
    return None if checked else "scorer"


def logged_sample(location: str, task: str, sample: Any, meta: Mapping, params: Mapping, scorer: str) -> Logged:
    """The sample as re-runnable; its workflow (the executed steps' workers and subtasks, the recorded access)
    checked by the workflow language's own rules (`solvers.workflow.validate`: workers of the pool, at most
    the run's max_steps, access to earlier steps only), else `WorkflowError`."""
    round_ = meta["round"]
    steps = round_["steps"]
    settings = meta.get("settings") or {}
    max_steps = settings.get("max_steps") if type(settings.get("max_steps")) is int else DEFAULT_MAX_STEPS
    lists = {
        "model_id": [s["worker"] for s in steps],
        "subtasks": [s["subtask"] for s in steps],
        "access_list": round_["workflow"]["access_list"],
    }
    flow = validate(lists, range(len(meta.get("workers") or [])), min(max_steps, MAX_STEPS), access="indices")
    tokens = tuple(
        (int((s.get("usage") or {}).get("input_tokens") or 0), int((s.get("usage") or {}).get("output_tokens") or 0))
        for s in steps
    )
    workers = tuple(str(w) for w in meta.get("workers") or [])
    indices = tuple(int(i) for i in meta.get("pool_indices") or [])
    question = settings.get("question") or "first"
    if question not in QUESTION_MODES:
        raise ValueError(f"question mode {question!r} is not one of {', '.join(QUESTION_MODES)}")
    check_generation(
        worker_temperature=params.get("worker_temperature"), worker_max_tokens=params.get("worker_max_tokens")
    )
    return Logged(
        location,
        task,
        sample,
        str(params.get("pool") or "local"),
        params,
        flow,
        workers,
        indices,
        question,
        scorer,
        tokens,
    )


def with_pools(found: Sequence[Logged]) -> tuple[list[Logged], dict[str, Any], Counter]:
    """The samples whose pool loads and lists the workers they recorded, the pools (`PoolSpec` by name), and
    why the others are skipped (a pool named by a log is data: it may not exist or may hold other models)."""
    from workers.pools import load_pool

    pools, errors = {}, {}
    for name in sorted({s.pool for s in found}):
        try:
            pools[name] = load_pool(name)
        except Exception as error:  # noqa: BLE001  (any unloadable pool: its samples are skipped, named)
            errors[name] = f"pool {name!r} does not load ({type(error).__name__}: {str(error)[:200]})"
    kept, skipped = [], Counter()
    for s in found:
        if s.pool in errors:
            skipped[errors[s.pool]] += 1
            continue
        names = [w.model for w in pools[s.pool].workers]
        chosen = tuple(names[i] for i in (s.pool_indices or range(len(names))) if 0 <= i < len(names))
        if chosen != s.workers:
            skipped[f"its workers are not pool {s.pool!r}'s: pass --pool with the pool the log was made with"] += 1
            continue
        kept.append(s)
    return kept, pools, skipped


# ----------------------------------------------------------------------------- running


def cached_workers(logged: Logged) -> list:
    """The sample's workers (its pool, its subset, its generation options) with Inspect's cache on; the
    pool holds the workers the log recorded (`with_pools`)."""
    from inspect_ai.model import CachePolicy, GenerateConfig

    from solvers.conducting import answer_constraint_for
    from solvers.team import pool_workers

    meta = logged.sample.metadata or {}
    choices = logged.sample.choices or meta.get("choices")
    constraint = answer_constraint_for([str(c) for c in choices] if choices else None, meta.get("answer_format"))
    every = pool_workers(
        logged.pool,
        logged.params.get("worker_temperature"),
        logged.params.get("worker_max_tokens"),
        constraint,
        logged.task,
    )
    chosen = [every[i] for i in (logged.pool_indices or range(len(every)))]  # checked by `with_pools`
    out = []
    for w in chosen:
        model = copy(w.model)
        model.config = w.model.config.merge(GenerateConfig(cache=CachePolicy(expiry=None)))
        out.append(replace(w, model=model))
    return out


async def run_sample(logged: Logged, runs: Sequence[Variant]) -> list[bool]:
    """Each run's final answer judged right or wrong (replay first, so changed runs read its calls)."""
    from scorers.checks import CHECKS
    from solvers.executor import execute_workflow, final_answer
    from workers.sim_provider import answer_key, key_from_sample

    workers = cached_workers(logged)
    check = CHECKS[logged.scorer]

    async def judged(v: Variant) -> bool:
        records = await execute_workflow(v.workflow, logged.question, workers, question_mode=logged.question_mode)
        answer = final_answer(records)
        return answer is not None and bool(check(answer, logged.target).correct)

    if not any_simulated(logged.workers):
        return [await judged(v) for v in runs]
    key = key_from_sample(logged.sample, logged.task)
    with answer_key(key.target, key.domain, key.check, key.choices, key.item_id):
        return [await judged(v) for v in runs]


async def run_all(items: Sequence[tuple[Logged, list[Variant]]], say: Callable[[str], None]) -> list[list[bool]]:
    gate = asyncio.Semaphore(CONCURRENT_SAMPLES)
    done = 0

    async def one(logged: Logged, runs: list[Variant]) -> list[bool]:
        nonlocal done
        async with gate:
            result = await run_sample(logged, runs)
        done += 1
        if done % 10 == 0 or done == len(items):
            say(f"{done}/{len(items)} samples re-run")
        return result

    return await asyncio.gather(*(one(logged, runs) for logged, runs in items))


# ----------------------------------------------------------------------------- tables


def outcomes(items: Sequence[tuple[Logged, list[Variant]]], results: Sequence[list[bool]]) -> pd.DataFrame:
    """One row per changed run: its sample, what changed, the replay's and its correctness."""
    rows = []
    for (logged, runs), correct in zip(items, results, strict=True):
        replay = float(correct[0])
        for v, ok in zip(runs[1:], correct[1:], strict=True):
            rows.append(
                {
                    "pool": logged.pool,
                    "log": logged.log,
                    "task": logged.task,
                    "sample_id": str(logged.sample.id),
                    "epoch": logged.sample.epoch,
                    "change": v.change,
                    "position": v.position,
                    "worker": logged.workers[logged.workflow.model_ids[v.position]],
                    "replacement": logged.workers[v.replacement] if v.replacement is not None else "",
                    "replay": replay,
                    "changed": float(ok),
                    "logged_score": _logged(logged),
                }
            )
    return pd.DataFrame(rows)


def _logged(logged: Logged) -> float:
    """The logged sample's score as a number (C = 1; none: 0)."""
    from inspect_ai.scorer import value_to_float

    score = next(iter((logged.sample.scores or {}).values()), None)
    return float(value_to_float()(score.value)) if score is not None else 0.0


def credit_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Per pool, by step position and by worker, per change: replay minus changed accuracy (`COLUMNS`)."""
    out = []
    for by in ("position", "worker"):
        for (pool, value, change), part in runs.groupby(["pool", by, "change"], sort=True) if len(runs) else ():
            c = compare(part["replay"], part["changed"])
            out.append(
                {
                    "pool": pool,
                    "by": by,
                    "value": value,
                    "change": change,
                    "pairs": c["n"],
                    "replay_accuracy": c["a_accuracy"],
                    "changed_accuracy": c["b_accuracy"],
                    "credit": c["difference"],
                    "ci_low": c["ci_low"],
                    "ci_high": c["ci_high"],
                    "mcnemar_p": c["mcnemar_p"],
                }
            )
    return pd.DataFrame(out, columns=COLUMNS)


def by_name(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with each pool by its name (`workers.redact.pool_label`), not the path a log named."""
    return frame.assign(pool=frame["pool"].map(lambda p: pool_label(str(p)))) if len(frame) else frame


def readable(table: pd.DataFrame) -> pd.DataFrame:
    ci = [
        "—" if math.isnan(lo) else f"[{lo:+.1f}, {hi:+.1f}]"
        for lo, hi in zip(table["ci_low"], table["ci_high"], strict=True)
    ]
    return pd.DataFrame(
        {
            "by": table["by"],
            "step / worker": table["value"],
            "change": table["change"],
            "pairs": table["pairs"],
            "replay %": table["replay_accuracy"].map("{:.1f}".format),
            "changed %": table["changed_accuracy"].map("{:.1f}".format),
            "credit (points)": table["credit"].map("{:+.1f}".format),
            "95% CI": ci,
            "McNemar p": table["mcnemar_p"].map("{:.3g}".format),
        }
    )


# ----------------------------------------------------------------------------- command


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m reports credit", description=__doc__.split("\n")[0])
    p.add_argument("--logs", required=True, help="directory of Inspect logs (searched recursively)")
    p.add_argument(
        "--pool",
        default=None,
        help="re-run on this pool (bundled name or YAML path) instead of the "
        "pool each log names, which runs only when offline or after you confirm its endpoints",
    )
    p.add_argument("--out", default=DEFAULT_OUT, help=f"output directory (default: {DEFAULT_OUT})")
    p.add_argument("--no-swap", action="store_true", help="only remove steps (no worker replacements)")
    p.add_argument("--limit", type=int, default=None, help="re-run at most this many samples")
    p.add_argument("--yes", action="store_true", help="run your --pool's API models without asking about the cost")
    return p


def check_pool(name: str) -> None:
    """Refuse a --pool that does not load, with the pool loader's message (it names the fix)."""
    from workers.pools import PoolError, load_pool

    try:
        load_pool(name)
    except PoolError as error:
        raise SystemExit(f"--pool {name}: {error}") from None


def endpoints(pools: Mapping[str, Any], env: Mapping[str, str]) -> dict[str, list[Endpoint]]:
    """Per pool, what each of its workers would contact (`workers.endpoints.endpoint`)."""
    return {name: [endpoint(w, env) for w in pool.workers] for name, pool in pools.items()}


def confirm(
    found: Mapping[str, list[Endpoint]],
    user_pool: bool,
    yes: bool,
    ask: Callable[[str], str] | None,
    say: Callable[[str], None],
) -> bool:
    """Whether to run. The user's --pool: when it cannot spend (`free`), with --yes, or a typed 'y'. The logs'
    pools: when offline, else after every endpoint is printed and a typed 'y' (refused without a terminal)."""
    if user_pool:
        if yes or all(free(e) for e in found.values()):
            return True
        if ask is None:
            raise SystemExit(
                "this would call API models and spend money: run it in a terminal to confirm, or pass --yes"
            )
        return ask("run them? [y/N] ").strip().lower() in ("y", "yes")
    online = {name: e for name, e in found.items() if not offline(e)}
    if not online:
        return True
    for name, workers in online.items():
        say(f"pool {shown(name)} (named by the logs, not by you) would call, with your credentials:")
        for e in workers:
            say(f"  {e.describe()}")
    if ask is None:
        names = " ".join(sorted(shown(n) for n in online))
        raise SystemExit(
            f"the logs name pool(s) {names} whose workers call the endpoints above with your "
            "credentials; pass the pool yourself (--pool NAME_OR_PATH) or run in a terminal to "
            "review and confirm"
        )
    return ask("run these workers, at the cost above, with your credentials? [y/N] ").strip().lower() in ("y", "yes")


def main(
    argv: Sequence[str] | None = None,
    *,
    ask: Callable[[str], str] | None = None,
    say: Callable[[str], None] | None = None,
) -> int:
    args = parser().parse_args(argv)
    say = say or (lambda line: print(line, flush=True))
    if ask is None and sys.stdin.isatty():
        ask = input
    if not Path(args.logs).is_dir():
        raise SystemExit(f"no log directory {args.logs!r}: pass --logs DIR with the conductor's Inspect logs")
    found, skipped = collect(args.logs, args.limit)
    if args.pool is not None:
        check_pool(args.pool)
        found = [replace(s, pool=args.pool) for s in found]
    found, pools, unusable = with_pools(found)
    for why, n in sorted((skipped + unusable).items()):
        say(f"skipped {n} sample(s): {md_text(why)}")
    if not found:
        say("no logged conductor sample to re-run")
        return 1
    items = [(s, variants(s.workflow, len(s.workers), swap=not args.no_swap)) for s in found]
    from workers.pools import known_prices

    specs = {w.model: w for pool in pools.values() for w in pool.workers}
    prices = {**known_prices(), **{name: w.price for name, w in specs.items()}}
    est = estimate(items, prices.get, lambda name: name in specs and bool(specs[name].grammar))
    kinds = {pool_makeup([w.model for w in pool.workers]) for pool in pools.values()}
    cost = "unknown (a worker has no price)" if est.usd is None else f"{est.usd:.4f} USD"
    say(
        f"{est.samples} sample(s), {est.runs} workflow runs: at most {est.calls} model calls "
        f"(the rest are cache hits), estimated cost {cost}; pool kind: {', '.join(sorted(kinds))}"
    )
    if not confirm(endpoints(pools, os.environ), args.pool is not None, args.yes, ask, say):
        say("nothing run")
        return 1
    results = asyncio.run(run_all(items, say))
    runs = outcomes(items, results)
    table = credit_table(runs)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_csv(by_name(runs), out / "credit-runs.csv")
    write_csv(by_name(table), out / "credit.csv")
    agree = sum(float(r[0]) == _logged(s) for (s, _), r in zip(items, results, strict=True))
    parts = [
        f"# Counterfactual credit\n\nReplay agrees with the logged score on {agree} of {len(items)} samples. "
        "credit = replay accuracy - changed accuracy (points; positive: the step, or the worker at it, "
        "earned accuracy).\n"
    ]
    for pool, part in table.groupby("pool", sort=True):
        kind = pool_makeup([w.model for w in pools[pool].workers])
        parts.append(f"## {md_text(pool_heading(pool_label(str(pool)), kind, ''))}\n\n{markdown(readable(part))}")
    text = "\n".join(parts)
    write_text(out / "credit.md", text)
    say(text)
    say(f"wrote {out / 'credit.md'}, {out / 'credit.csv'} and {out / 'credit-runs.csv'}")
    return 0
