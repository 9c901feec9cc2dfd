"""Seed sweep (issue 27.2): one training run per seed of a recipe, each final model evaluated on
the held-out protocol, and the per-seed table with mean, spread and how many seeds route.

    python -m experiments.seeds training/recipes/sim-routing.yaml --seeds 0-7 --out runs/seeds \
        [--parallel K] [--limit 40] [--eval_seed 0] [--eval_temperature 0.1] [--target 0.93] \
        [--shared_warmup | --warmup DIR] [--dry_run] [train.py overrides, e.g. --use_cpu false]

1. per seed S: `train.py <recipe> <overrides> --seed S --output_dir <out>/seed-S` (printed as an
   exact command), up to `--parallel` at a time (1: one after another, for a small CPU; on a
   GPU several fit), output in `<out>/seed-S/train.log`. A seed whose run finished
   (`cost_sweep.finished`) is skipped, so a stopped sweep resumes; an unfinished earlier run of a
   seed is moved aside by train.py (`--overwrite_output_dir true` is added). A failing seed is
   reported and the others go on; the exit status is then 1, naming the failed seeds and their logs.
   Several CPU trainings at a time get `OMP_NUM_THREADS` = cores / `--parallel` each (unless set),
   so they share the cores instead of oversubscribing them.
   `--shared_warmup` (a CPU budget): the recipe's format warm-up runs once, with the first seed
   (`train.py <recipe> --seed S0 --warmup_only true --output_dir <out>/warmup-run`, skipped once
   its model is saved), and every seed's GRPO starts from that model (`--model_name_or_path
   <out>/warmup-run/warmup --format_warmup_steps 0`): the seeds then vary GRPO only, and the table
   says so. `--warmup DIR` starts every seed from an existing warm-up model instead.
2. held-out evals (`experiments/heldout.py`, as `experiments/cost_sweep/sweep.py`): every pool member alone,
   then every trained seed's final model (the conductor options from the recipe); logs in
   `<out>/logs`. Each seed's evaluation is also printed as `inspect eval` lines. With `--parallel K`
   > 1 the seeds' evals run K at a time, each in a process of its own (`python -m experiments.heldout`,
   this interpreter, the trainings' thread share), its output in `<out>/seed-S/heldout.log`.
3. `<out>/seeds.csv` and `<out>/seeds.md` (printed): per seed MATH-500, MMLU and both (the mean of
   the two), the workers chosen per benchmark (share of samples whose workflow used the worker),
   whether it routes both domains, training wall time and device (run_info.json); then the mean
   ± sample sd over the evaluated seeds, and "k of n seeds >= target".

`--table_only`: no training and no seed's eval; the table from what the runs left on disk (each
seed's `heldout-rows.json`, written by the parallel evals, and its run_info.json), the single workers
evaluated again (no trained model, cheap): for a sweep cut short (a GPU session's deadline) or
copied off the machine it ran on. A seed without held-out rows is listed as not evaluated.

Routes both domains: on each benchmark, at least 90% of the samples (`ROUTES_SHARE`) use a best single
worker there (highest accuracy of the single-worker evals on the same questions; tied best workers count
together).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from experiments.cost_sweep.sweep import (
    TRAIN,
    check_run_files,
    check_warmup,
    finished,
    saved_model,
)
from experiments.heldout import (
    BASELINE,
    conductor_method,
    conductor_options,
    eval_command,
    eval_tasks,
    evaluate,
    process_command,
    single_workers,
)
from reports.run_files import read_run_info

DOMAINS = {"math500": "MATH-500", "mmlu": "MMLU"}  # Inspect task name -> column
COLUMNS = ["seed", "status", *DOMAINS.values(), "both", "n", *(f"worker {c}" for c in DOMAINS.values()), "routes both",
           "wall (min)", "device"]  # fmt: skip
SET_BY_SWEEP = ("--seed", "--output_dir")
SET_BY_SHARED_WARMUP = ("--model_name_or_path", "--format_warmup_steps")
_SEEDS = re.compile(r"(\d{1,6})(?:-(\d{1,6}))?")  # one item of --seeds: 3 or 0-7 (bounded, no nesting)
MAX_SEEDS = 1000


def parse_seeds(text: str) -> list[int]:
    """`0-7`, `0,2,5` or a mix (`0-3,6`): distinct non-negative seeds in the order given."""
    seeds: list[int] = []
    for item in text.split(","):
        match = _SEEDS.fullmatch(item.strip())
        if not match or (match[2] is not None and int(match[2]) < int(match[1])):
            raise SystemExit(f"--seeds {text!r}: {item.strip()!r} is not a seed or a range; give e.g. 0-7 or 0,2,5")
        last = int(match[2] if match[2] is not None else match[1])
        seeds += range(int(match[1]), last + 1)
        if len(seeds) > MAX_SEEDS:
            raise SystemExit(f"--seeds {text!r}: more than {MAX_SEEDS} seeds; give a shorter range")
    if len(set(seeds)) != len(seeds):
        raise SystemExit(f"--seeds {text!r}: a seed is given twice; give each seed once (e.g. 0-7)")
    return seeds


def check_overrides(extra: Sequence[str], shared_warmup: bool = False) -> None:
    """Refuse train.py overrides the sweep sets itself (the seed and output directory of each run;
    with a shared warm-up, the model every seed starts from)."""
    for arg in extra:
        name = arg.split("=", 1)[0]
        if name in SET_BY_SWEEP:
            raise SystemExit(f"{arg}: the sweep sets {' and '.join(SET_BY_SWEEP)} per seed; use --seeds and --out")
        if shared_warmup and name in SET_BY_SHARED_WARMUP:
            raise SystemExit(f"{arg}: with a shared warm-up the sweep sets {' and '.join(SET_BY_SHARED_WARMUP)};"
                             " drop it, or drop --shared_warmup / --warmup")  # fmt: skip


def warmup_dir(out: Path) -> Path:
    """The shared warm-up run of a sweep; its model is `<run>/warmup` (train.py)."""
    return out / "warmup-run"


def warmup_command(recipe: str, out: Path, seed: int, extra: Sequence[str]) -> list[str]:
    """train.py running the recipe's format warm-up alone, with `seed`, into the sweep's warm-up run."""
    run = warmup_dir(out)
    unfinished = run.is_dir() and any(run.iterdir()) and not saved_model(run / "warmup")
    replace = ["--overwrite_output_dir", "true"] if unfinished else []  # train.py moves an unfinished one aside
    return [sys.executable, TRAIN, recipe, *extra, "--seed", str(seed), "--warmup_only", "true",
            "--output_dir", str(run), *replace]  # fmt: skip


def shared_warmup(recipe: str, out: Path, seed: int, extra: Sequence[str], dry_run: bool) -> Path:
    """Run the sweep's format warm-up once (skipped when its model is saved); its model's path."""
    model = warmup_dir(out) / "warmup"
    command = warmup_command(recipe, out, seed, extra)
    done = saved_model(model)
    print(("finished, skipped: " if done else "would run: " if dry_run else "running: ") + shlex.join(command),
          flush=True)  # fmt: skip
    if not done and not dry_run:
        log = out / "warmup-run.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("a") as f:
            code = subprocess.run(command, stdout=f, stderr=subprocess.STDOUT, check=False).returncode
        if code != 0 or not saved_model(model):
            raise SystemExit(f"the shared format warm-up failed (exit {code}); its output is in {log}")
    return model


def warmup_facts(model: Path, seed: int | None = None) -> str:
    """The summary line of a shared warm-up: where, which seed (its run_info.json's, else `seed`),
    how long; as markdown text (`reports.tables.md_text`: the run folder may be anyone's)."""
    from reports.tables import md_text

    info = read_run_info(model.parent)
    warmup = info.get("warmup") or {}
    seed = info["seed"] if info.get("seed") is not None else seed
    wall = f", {warmup['wall_s'] / 60:.1f} min" if warmup.get("wall_s") is not None else ""
    seed_text = f" (seed {seed}" if seed is not None else " ("
    device = md_text(info.get("device") or "a device not recorded")
    return (f"Every seed's GRPO started from one format warm-up model, {md_text(model)}{seed_text}{wall}, on "
            f"{device}): the seeds vary GRPO only, and each row's wall time is its GRPO part.")  # fmt: skip


def seed_dir(out: Path, seed: int) -> Path:
    return out / f"seed-{seed}"


def rows_file(out: Path, seed: int) -> Path:
    """Where a seed's held-out rows are saved (JSON, one row per sample), read back by `--table_only`."""
    return seed_dir(out, seed) / "heldout-rows.json"


def seed_label(seed: int) -> str:
    return f"seed {seed}"


def seed_command(recipe: str, out: Path, seed: int, extra: Sequence[str], warmup: Path | None = None) -> list[str]:
    """train.py for one seed (from the `warmup` model, when given, with no warm-up of its own); an
    earlier unfinished run there is moved aside (`--overwrite_output_dir`)."""
    run = seed_dir(out, seed)
    replace = ["--overwrite_output_dir", "true"] if run.is_dir() and any(run.iterdir()) and not finished(run) else []
    start = ["--model_name_or_path", str(warmup), "--format_warmup_steps", "0"] if warmup else []
    return [sys.executable, TRAIN, recipe, *extra, *start, "--seed", str(seed), "--output_dir", str(run), *replace]


def thread_env(parallel: int, cores: int | None = None) -> dict[str, str] | None:
    """The environment of each training: with several at a time, `OMP_NUM_THREADS` = cores /
    `parallel` (at least 1) unless already set; None (inherit) otherwise."""
    if parallel < 2 or "OMP_NUM_THREADS" in os.environ:
        return None
    return {**os.environ, "OMP_NUM_THREADS": str(max(1, (cores or os.cpu_count() or 1) // parallel))}


def parallel_memory(args: argparse.Namespace, script: Any, config: Any, seeds: list[int]) -> str:
    """What `--parallel` runs side by side, or a SystemExit when they would not fit in memory
    (experiments/seeds/memory.py: the runs' measured peak, else the recipe's, at the loss's micro-batch):
    the machine's memory for CPU runs, the GPU's free memory for GPU runs (`--use_cpu false`)."""
    import yaml

    from experiments.seeds import memory

    micro = config.per_device_train_batch_size
    recipe_micro = yaml.safe_load(Path(args.recipe).read_text()).get("per_device_train_batch_size", micro)
    runs = [seed_dir(args.out, seed) for seed in seeds]
    gpu = not config.use_cpu
    field = "peak_gpu_gib" if gpu else "peak_rss_gib"  # the recipe's figure and the runs' records
    peak = memory.per_run_peak(getattr(script, field), recipe_micro, micro, runs, field=field)
    available = memory.available_gpu_gib() if gpu else memory.available_gib()
    return memory.parallel_plan(args.parallel, seeds, peak, available, "free on the GPU" if gpu else "available")


def train_log(out: Path, seed: int, running: bool) -> Path:
    """Where a seed's training output goes: `<out>/seed-S.train.log` while it runs (train.py
    claims an empty run directory), `<out>/seed-S/train.log` after."""
    return out / f"seed-{seed}.train.log" if running else seed_dir(out, seed) / "train.log"


def train_seed(command: list[str], out: Path, seed: int, env: Mapping[str, str] | None = None) -> int:
    """Run one seed's training, its output appended to its log; returns the exit status."""
    log = train_log(out, seed, running=True)
    log.parent.mkdir(parents=True, exist_ok=True)
    print(f"seed {seed}: started, output in {log}", flush=True)
    with log.open("a") as f:
        f.write(f"$ {shlex.join(command)}\n")
        f.flush()
        code = subprocess.run(command, stdout=f, stderr=subprocess.STDOUT, check=False, env=env).returncode
    done = train_log(out, seed, running=False)
    done.parent.mkdir(parents=True, exist_ok=True)
    with done.open("ab") as f:
        f.write(log.read_bytes())
    log.unlink()
    print(f"seed {seed}: exit {code}, output in {done}", flush=True)
    return code


def train_all(commands: Mapping[int, list[str]], out: Path, parallel: int, dry_run: bool,
              then: Callable[[int], None] | None = None) -> dict[int, str]:  # fmt: skip
    """Train every seed not finished yet, up to `parallel` at a time; the failed seeds and why. `then(seed)`
    runs right after a seed trained, in its place in the pool (its held-out eval: a sweep cut short by a
    deadline keeps the seeds evaluated so far)."""
    todo = {}
    for seed, command in commands.items():
        done = finished(seed_dir(out, seed))
        verb = "finished, skipped: " if done else "would run: " if dry_run else "to run: "
        print(verb + shlex.join(command), flush=True)
        if not done and not dry_run:
            todo[seed] = command
    env = thread_env(parallel)

    def train_then(seed: int) -> int:
        code = train_seed(todo[seed], out, seed, env)
        if then and code == 0 and finished(seed_dir(out, seed)):
            then(seed)
        return code

    with ThreadPoolExecutor(parallel) as pool:
        codes = dict(zip(todo, pool.map(train_then, todo), strict=True))
    failed = {}
    for seed, code in codes.items():
        if code != 0 or not finished(seed_dir(out, seed)):
            failed[seed] = f"training failed (exit {code}, log {train_log(out, seed, running=False)})"
            print(f"seed {seed}: {failed[seed]}", flush=True)
    return failed


def evaluate_in_process(command: list[str], rows: Path, out: Path, seed: int, env: Mapping[str, str] | None
                        ) -> list[dict]:  # fmt: skip
    """One seed's held-out eval in a process of its own (`process_command`, writing `rows`; output in
    `<out>/seed-S/heldout.log`): its rows, or a SystemExit naming the exit status and the log."""
    log = seed_dir(out, seed) / "heldout.log"
    print(f"seed {seed}: evaluating, output in {log}", flush=True)
    rows.unlink(missing_ok=True)  # an earlier eval's rows are never read as this one's
    with log.open("w") as f:
        f.write(f"$ {shlex.join(command)}\n")
        f.flush()
        code = subprocess.run(command, stdout=f, stderr=subprocess.STDOUT, check=False, env=env).returncode
    if code != 0 or not rows.is_file():
        raise SystemExit(f"exit {code}, log {log}")
    return json.loads(rows.read_text())


def seed_evaluator(args: argparse.Namespace, script: Any, config: Any, extra: Sequence[str]
                   ) -> Callable[[int], list[dict]]:  # fmt: skip
    """One seed's held-out eval, its rows also saved as `<out>/seed-S/heldout-rows.json`: in this process
    (`--parallel 1`), else in a process of its own."""
    options, logs = conductor_options(script, config, args.eval_temperature), args.out / "logs"

    def in_this_process(seed: int) -> list[dict]:
        method = conductor_method(seed_label(seed), seed_dir(args.out, seed), options)
        rows = evaluate(method, eval_tasks(script), logs, args.limit, args.eval_seed)
        saved = rows_file(args.out, seed)  # as the parallel evals save them
        saved.parent.mkdir(parents=True, exist_ok=True)
        saved.write_text(json.dumps(rows))
        return rows

    def in_own_process(seed: int) -> list[dict]:
        run = seed_dir(args.out, seed)
        rows = rows_file(args.out, seed)
        command = process_command(args.recipe, extra, seed_label(seed), run, args.limit, args.eval_seed,
                                  args.eval_temperature, logs, rows)  # fmt: skip
        return evaluate_in_process(command, rows, args.out, seed, thread_env(args.parallel))

    return in_this_process if args.parallel == 1 else in_own_process


def evaluate_seeds(evaluate_one: Callable[[int], list[dict]], parallel: int, seeds: Sequence[int],
                   failed: dict[int, str], done: Mapping[int, list[dict] | str]) -> list[dict]:  # fmt: skip
    """Every seed's held-out rows: those `done` (evaluated right after training), the others now, `parallel`
    at a time; a seed whose eval fails is added to `failed` and the others go on."""
    todo = [seed for seed in seeds if seed not in done]
    if parallel == 1:  # in this process: Inspect in the main thread
        results = {**done, **{seed: outcome(evaluate_one, seed) for seed in todo}}
    else:
        with ThreadPoolExecutor(parallel) as pool:
            results = {**done, **dict(zip(todo, pool.map(outcome, [evaluate_one] * len(todo), todo), strict=True))}
    rows = []
    for seed in seeds:
        result = results[seed]
        if isinstance(result, str):  # this seed's eval failed; the other seeds go on
            failed[seed] = f"evaluation failed ({result})"
            print(f"seed {seed}: {failed[seed]}", flush=True)
        else:
            rows += result
    return rows


def outcome(evaluate_one: Callable[[int], list[dict]], seed: int) -> list[dict] | str:
    """The rows `evaluate_one(seed)` returns, or the message of the SystemExit it raised."""
    try:
        return evaluate_one(seed)
    except SystemExit as error:
        return str(error)


def run_facts(run: Path) -> dict:
    """Training wall time (s) and device of a finished run, from its run_info.json (`read_run_info`)."""
    info = read_run_info(run)
    return {"wall_s": info.get("wall_s"), "device": info.get("device") or "not recorded"}


def sample_shares(rows: Any) -> Any:
    """(label, task) x worker: the share of that method's samples on that benchmark whose
    workflow used the worker (a sample without a workflow counts in no worker's share)."""
    import pandas as pd

    used = rows[["label", "task", "workers_used"]].explode("workers_used").dropna()
    counts = pd.crosstab([used["label"], used["task"]], used["workers_used"])
    samples = rows.groupby(["label", "task"]).size()
    return counts.reindex(samples.index, fill_value=0).div(samples, axis=0)


def best_singles(rows: Any, labels: Sequence[str]) -> dict[str, tuple[set[str], float]]:
    """Per benchmark: the short names of the single workers (`labels`) with the highest accuracy
    there, and that accuracy (0-1)."""
    from reports.plots import method_points
    from reports.records import short

    best = {}
    for task, part in rows[rows["label"].isin(labels)].groupby("task"):
        accuracy = method_points(part)["accuracy"] / 100
        best[task] = ({short(label) for label in accuracy.index[accuracy == accuracy.max()]}, float(accuracy.max()))
    return best


def chosen(shares: Any) -> str:
    """The most used worker, and the runner-up when the first is not used by every sample:
    "premium 0.60, mediocre 0.28"."""
    top = shares[shares > 0].sort_values(ascending=False, kind="stable")
    shown = top.iloc[:1] if len(top) and top.iloc[0] >= 1 else top.iloc[:2]
    return ", ".join(f"{worker} {share:.2f}" for worker, share in shown.items()) or "no workflow"


ROUTES_SHARE = 0.9  # "routes": this share of a domain's held-out questions go to its best single worker(s)


def routes(shares: Any, best: set[str]) -> bool:
    """At least `ROUTES_SHARE` of the samples go to a best single worker (tied best workers count together)."""
    return bool(len(shares) and shares[shares.index.isin(best)].sum() >= ROUTES_SHARE)


def seed_table(rows: Any, seeds: Sequence[int], failed: Mapping[int, str], facts: Mapping[int, dict],
               best: Mapping[str, tuple[set[str], float]]) -> Any:  # fmt: skip
    """A row per seed (`COLUMNS`): status, accuracy per benchmark and both (their mean), n, worker
    chosen per benchmark, routes both (against `best_singles`), wall time (min), device; a failed
    seed has its status and nothing else."""
    import pandas as pd

    from reports.plots import method_points

    shares = sample_shares(rows)
    out = []
    for seed in seeds:
        label = seed_label(seed)
        if seed in failed:
            out.append({"seed": seed, "status": failed[seed]})
            continue
        mine = rows[rows["label"] == label]
        both = method_points(mine).loc[label]
        row = {"seed": seed, "status": "ok"}
        for task, column in DOMAINS.items():
            row[column] = method_points(mine[mine["task"] == task]).loc[label, "accuracy"] / 100
        row |= {"both": both["accuracy"] / 100, "n": int(both["n"])}
        for task, column in DOMAINS.items():
            row[f"worker {column}"] = chosen(shares.loc[(label, task)])
        row["routes both"] = all(routes(shares.loc[(label, task)], best[task][0]) for task in DOMAINS)
        row["wall (min)"] = round(facts[seed]["wall_s"] / 60, 1) if facts[seed]["wall_s"] is not None else None
        row["device"] = facts[seed]["device"]
        out.append(row)
    return pd.DataFrame(out, columns=COLUMNS).astype({"n": "Int64"})


def summary(table: Any, target: float) -> dict:
    """Over the evaluated seeds: mean and sample sd of both, how many reach `target`, how many
    route both domains; the seeds left out (failed)."""
    ok = table[table["status"] == "ok"]
    both = ok["both"].astype(float)
    return {"n": len(ok), "mean": both.mean(), "sd": both.std(ddof=1), "reach": int((both >= target).sum()),
            "target": target, "routes": int(ok["routes both"].astype(bool).sum()),
            "failed": [int(s) for s in table.loc[table["status"] != "ok", "seed"]]}  # fmt: skip


def _num(value: Any) -> str:
    """An accuracy to 3 decimals; "" when missing (None or NaN)."""
    return "" if value is None or value != value else f"{value:.3f}"


def summary_lines(stats: Mapping[str, Any], best: Mapping[str, tuple[set[str], float]]) -> list[str]:
    """The sentences under the table: mean ± sd, k of n, routes, failed seeds, the best single workers."""
    n, sd = stats["n"], _num(stats["sd"])
    spread = f"{_num(stats['mean'])} ± {sd}" if sd else _num(stats["mean"])
    lines = [
        f"Held-out accuracy (both benchmarks), mean ± sample sd over {n} evaluated seed(s): {spread or 'n/a'}.",
        f"{stats['reach']} of {n} seeds >= {stats['target']:g}; {stats['routes']} of {n} route both domains.",
    ]
    if stats["failed"]:
        lines.append(f"Failed (see their status), left out of the mean and the counts: seed(s) "
                     f"{', '.join(map(str, stats['failed']))}.")  # fmt: skip
    singles = "; ".join(f"{DOMAINS.get(t, t)} {' = '.join(sorted(w))} {a:.3f}" for t, (w, a) in best.items())
    lines.append(f"Best single worker per benchmark (single-worker evals, same questions): {singles}.")
    return lines


def markdown_report(table: Any, lines: Sequence[str]) -> str:
    """The table (accuracies to 3 decimals) and the summary sentences, as markdown."""
    from reports.tables import markdown

    shown = table.copy()
    for column in [*DOMAINS.values(), "both"]:
        if column in shown:
            shown[column] = shown[column].map(_num)
    return markdown(shown.astype(object).where(shown.notna(), "")) + "\n" + "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> Any:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    ap.add_argument("recipe", help="training recipe (YAML), e.g. training/recipes/sim-routing.yaml")
    ap.add_argument("--seeds", default="0-7", help="seeds: a range 0-7, a list 0,2,5, or both (0-3,6)")
    ap.add_argument("--out", type=Path, default=Path("runs/seeds"), help="directory of the runs, logs and tables")
    ap.add_argument("--parallel", type=int, default=1, help="trainings at a time (1 on a small CPU; 8 fit one H100)")
    ap.add_argument("--limit", type=int, default=40, help="held-out questions per benchmark")
    ap.add_argument("--eval_seed", type=int, default=0, help="generation seed of the evals")
    ap.add_argument("--eval_temperature", type=float, default=0.1, help="conductor temperature of the evals")
    ap.add_argument("--target", type=float, default=0.93, help="held-out accuracy a seed should reach (issue 27)")
    ap.add_argument("--dry_run", action="store_true", help="print the commands and the eval plan, run nothing")
    ap.add_argument("--table_only", action="store_true",
                    help="train and evaluate no seed: the table from the seeds' saved held-out rows")  # fmt: skip
    shared = ap.add_mutually_exclusive_group()
    shared.add_argument(
        "--shared_warmup",
        action="store_true",
        help="run the format warm-up once (first seed) and start every seed's GRPO from it",
    )
    shared.add_argument("--warmup", type=Path, help="an existing warm-up model every seed's GRPO starts from")
    args, extra = ap.parse_known_args(argv)
    seeds = parse_seeds(args.seeds)
    if args.parallel < 1:
        raise SystemExit(f"--parallel {args.parallel}: give at least 1 (trainings at a time)")
    check_overrides(extra, args.shared_warmup or args.warmup is not None)
    check_warmup(args.warmup)
    shared_run = [warmup_dir(args.out)] if args.shared_warmup else [args.warmup.parent] if args.warmup else []
    check_run_files([*(seed_dir(args.out, s) for s in seeds), *shared_run])  # others' run folders: checked first
    from training.options import parse

    script, config, model_args = parse([args.recipe, *extra])  # the recipe and overrides, checked before anything runs
    if args.shared_warmup and script.format_warmup_steps < 1:
        raise SystemExit(f"--shared_warmup: {args.recipe} has no format warm-up (format_warmup_steps 0); drop the flag")
    if args.table_only:
        if not args.out.is_dir():
            raise SystemExit(f"error: --table_only: {args.out} is no folder; fix: --out the folder of the seed-S runs")
        return write_report(args, script, seeds, {}, None)
    if (args.parallel > 1 or args.shared_warmup) and not args.dry_run:  # runs would race to build the checkpoint
        from training.model_prep import resolve_model_path

        resolve_model_path(model_args.model_name_or_path)
    if args.parallel > 1:
        print(parallel_memory(args, script, config, seeds), flush=True)
    warmup = args.warmup
    if args.shared_warmup:
        warmup = shared_warmup(args.recipe, args.out, seeds[0], extra, args.dry_run)
    commands = {seed: seed_command(args.recipe, args.out, seed, extra, warmup) for seed in seeds}
    evaluate_one, evaluated = seed_evaluator(args, script, config, extra), {}
    then = None  # --parallel 1 (in this process): the evals after the trainings, as Inspect runs in the main thread
    if args.parallel > 1:
        then = lambda seed: evaluated.update({seed: outcome(evaluate_one, seed)})  # noqa: E731
    failed = train_all(commands, args.out, args.parallel, args.dry_run, then)
    options = conductor_options(script, config, args.eval_temperature)
    singles = single_workers(script.pool)
    print(f"{'would evaluate' if args.dry_run else 'evaluating'} on MATH-500 and MMLU test (first {args.limit} each,"
          f" seed {args.eval_seed}): {', '.join(m['label'] for m in singles)} ({BASELINE}), then each seed's"
          " final model:", flush=True)  # fmt: skip
    for seed in seeds:
        run = seed_dir(args.out, seed)
        print(f"  {seed_label(seed)}: {eval_command(script, options, run, args.limit, args.eval_seed)}", flush=True)
    if args.dry_run:
        return None
    return write_report(args, script, seeds, failed, warmup, evaluate_one, evaluated)


def saved_rows(out: Path, seeds: Sequence[int], failed: dict[int, str]) -> list[dict]:
    """The held-out rows each seed's eval saved (`<out>/seed-S/heldout-rows.json`); a seed without them
    is added to `failed` as not evaluated."""
    rows = []
    for seed in seeds:
        path = rows_file(out, seed)
        if path.is_file():
            rows += json.loads(path.read_text())
        else:
            failed[seed] = f"not evaluated (no {path.relative_to(out)})"
    return rows


def write_report(args: argparse.Namespace, script: Any, seeds: Sequence[int], failed: dict[int, str],
                 warmup: Path | None, evaluate_one: Callable[[int], list[dict]] | None = None,
                 evaluated: Mapping[int, list[dict] | str] | None = None) -> Any:  # fmt: skip
    """Evaluate the single workers, and the seeds not `evaluated` yet with `evaluate_one` (`--table_only`:
    read the seeds' saved rows instead), write seeds.csv and seeds.md, print the table; exits non-zero
    naming the seeds that failed."""
    import pandas as pd

    from reports.csv_safe import write_csv
    from reports.safe_text import write_text

    rows, singles = [], single_workers(script.pool)
    for method in singles:
        rows += evaluate(method, eval_tasks(script), args.out / "logs", args.limit, args.eval_seed)
    if args.table_only:
        rows += saved_rows(args.out, seeds, failed)
    else:
        ok = [s for s in seeds if s not in failed]
        rows += evaluate_seeds(evaluate_one, args.parallel, ok, failed, {s: r for s, r in evaluated.items() if s in ok})
    frame = pd.DataFrame(rows)
    best = best_singles(frame, [m["label"] for m in singles])
    facts = {s: run_facts(seed_dir(args.out, s)) for s in seeds if s not in failed}
    table = seed_table(frame, seeds, failed, facts, best)
    lines = summary_lines(summary(table, args.target), best)
    if warmup:
        lines.append(warmup_facts(warmup, seeds[0] if args.shared_warmup else None))
    text = markdown_report(table, lines)
    args.out.mkdir(parents=True, exist_ok=True)
    write_csv(table, args.out / "seeds.csv")
    write_text(args.out / "seeds.md", text)
    print(text + f"wrote {args.out / 'seeds.csv'}, {args.out / 'seeds.md'}")
    if failed:
        raise SystemExit("failed: " + "; ".join(f"seed {s}: {why}" for s, why in failed.items()))
    return table
