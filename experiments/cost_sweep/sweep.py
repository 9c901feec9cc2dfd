"""Cost-weight sweep (issue 23.4): one conductor per `cost_weight` from ONE shared format warm-up,
each evaluated on the held-out protocol with the pool's single workers, and accuracy against worker
cost plotted with the single workers' Pareto front.

    python -m experiments.cost_sweep training/recipes/sim-routing.yaml --weights 0,0.1,0.25,0.4 \
        --out runs/cost-sweep [--charge always|correct] [--limit 40] [--dry_run] [train.py overrides]

1. warm-up: `train.py <recipe> --max_steps 1 --save_strategy no --output_dir <out>/warmup-run`
   (the recipe's format warm-up, saved in `<out>/warmup-run/warmup`, plus one GRPO step that is
   not used): the warm-up has no cost term, so every weight starts from the same model;
   `--warmup DIR` uses an existing warm-up model instead (e.g. an earlier run's `<run>/warmup`);
2. per weight w: `train.py <recipe> --model_name_or_path <warm-up model> --format_warmup_steps 0
   --cost_weight w --cost_charge <charge> --output_dir <out>/cost-w<w>`;
   a step whose `run_info.json` records its finished run is skipped (a stopped sweep continues);
3. held-out evals (`experiments/heldout.py`): the first `--limit` MATH-500 and MMLU
   `split=test` questions (the recipe's `math500_file` / `mmlu_file` if set), generation seed
   `--eval_seed`, every conductor with the recipe's few_shot, workflow_max_steps, access, question
   and max_completion_length at temperature `--eval_temperature`; every pool member alone
   (`single_worker`); logs in `<out>/logs`;
4. `<out>/points.csv` (per method: accuracy % and worker USD per question, the mean over the two
   benchmarks, `reports.plots.method_points`; whether a single worker is on the front) and
   `<out>/accuracy-cost.png/.svg`.

Extra arguments go to every `train.py` call (e.g. `--max_steps 30`, data files). `--dry_run`
prints the training commands and the eval plan and runs nothing.
"""

from __future__ import annotations

import argparse
import importlib.util
import shlex
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from experiments.heldout import BASELINE, conductor_method, conductor_options, eval_tasks, evaluate, single_workers
from reports.run_files import read_run_info

TRAIN = importlib.util.find_spec("training.train").origin  # the training script, run as a subprocess
DEFAULT_WEIGHTS = "0,0.1,0.25,0.4"


def parse_weights(text: str) -> list[float]:
    """Comma-separated cost weights, each checked (`training.rewards.check_cost_options`)."""
    from training.rewards import check_cost_options

    try:
        weights = [float(w) for w in text.split(",") if w.strip()]
        for w in weights:
            check_cost_options(w, "always")
    except ValueError as error:
        raise SystemExit(f"--weights {text!r}: {error}") from None
    if len(set(weights)) != len(weights) or not weights:
        raise SystemExit(f"--weights {text!r}: give distinct weights, comma-separated (e.g. {DEFAULT_WEIGHTS})")
    return weights


def run_dir(out: Path, weight: float) -> Path:
    return out / f"cost-w{weight:g}"


def warmup_command(recipe: str, out: Path, extra: Sequence[str]) -> list[str]:
    return [sys.executable, TRAIN, recipe, *extra, "--max_steps", "1", "--save_strategy", "no",
            "--output_dir", str(out / "warmup-run")]  # fmt: skip


def weight_command(recipe: str, out: Path, warmup: Path, weight: float, charge: str, extra: Sequence[str]) -> list[str]:
    return [sys.executable, TRAIN, recipe, *extra, "--model_name_or_path", str(warmup),
            "--format_warmup_steps", "0", "--cost_weight", f"{weight:g}", "--cost_charge", charge,
            "--output_dir", str(run_dir(out, weight))]  # fmt: skip


def saved_model(path: Path) -> bool:
    """Whether `path` holds a saved model (a warm-up's, a run's final one)."""
    return (path / "config.json").is_file()


def check_warmup(path: Path | None) -> None:
    """Refuse a `--warmup` directory that holds no saved model."""
    if path is not None and not saved_model(path):
        raise SystemExit(f"--warmup {path}: no model there (config.json); give a saved warm-up model directory")


def check_run_files(runs: Sequence[Path]) -> None:
    """Read every run folder's run_info.json a sweep will read (`reports.run_files.read_run_info`: a bad file
    ends the command naming it), before anything runs."""
    for run in runs:
        read_run_info(run)


def finished(run: Path) -> bool:
    """Whether `run` holds a finished training run (its run_info.json records the steps done)."""
    return read_run_info(run).get("global_step") is not None


def train(command: list[str], run: Path, dry_run: bool) -> None:
    print(("would run: " if dry_run else "running: ") + shlex.join(command), flush=True)
    if dry_run or finished(run):
        return
    subprocess.run(command, check=True)


def methods(script: Any, config: Any, out: Path, weights: Sequence[float], temperature: float) -> list[dict]:
    """Every method to evaluate: label, kind, solver, model roles and (for a conductor) its weight."""
    options = conductor_options(script, config, temperature)
    found = [{**conductor_method(f"conductor w={w:g}", run_dir(out, w), options), "weight": w} for w in weights]
    return found + [{**m, "weight": None} for m in single_workers(script.pool)]


def points_table(rows: list[dict], found: Sequence[dict]) -> Any:
    """Per method: kind, weight, accuracy (%), worker USD and agent calls per question (mean over
    the benchmarks) and whether it is on the single workers' Pareto front."""
    import pandas as pd

    from reports.pareto import front_labels
    from reports.plots import method_points

    points = method_points(pd.DataFrame(rows))
    kinds = {m["label"]: (m["kind"], m["weight"]) for m in found}
    points["kind"] = [kinds[label][0] for label in points.index]
    points["weight"] = [kinds[label][1] for label in points.index]
    baselines = points[(points["kind"] == BASELINE) & points["cost"].notna()]
    points["on_front"] = points.index.isin(front_labels(baselines))
    return points.reset_index(names="label")


def sweep_title(pool: str, charge: str, recipe_name: str, limit: int) -> str:
    """The plot's title; it starts with SIMULATION when any pool worker is simulated (`sim/`)."""
    from workers.pools import load_pool

    simulated = load_pool(pool).simulated
    return (f"{'SIMULATION - ' if simulated else ''}cost-weight sweep, pool {pool} ({charge}), {recipe_name}: "
            f"held-out MATH-500 + MMLU, {limit} each")  # fmt: skip


def sweep_figure(points: Any, title: str) -> Any:
    """Accuracy against worker cost: single workers (grey), their Pareto front (line), conductors by weight."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.5, 4.6), dpi=100, layout="constrained")
    ax = fig.subplots()
    known = points[points["cost"].notna()]
    base = known[known["kind"] == BASELINE]
    ax.scatter(base["cost"], base["accuracy"], color="grey", marker="s", label="single worker", zorder=3)
    for _, p in base.iterrows():
        ax.annotate(str(p["label"]).rsplit("/", 1)[-1], (p["cost"], p["accuracy"]), fontsize=7,
                    xytext=(4, -10), textcoords="offset points")  # fmt: skip
    front = base[base["on_front"]].sort_values("cost")
    ax.step(front["cost"], front["accuracy"], where="post", color="grey", linestyle="--", label="Pareto front")
    ours = known[known["kind"] == "conductor"].sort_values("weight")
    ax.plot(ours["cost"], ours["accuracy"], color="tab:blue", marker="o", label="trained conductor", zorder=4)
    for _, p in ours.iterrows():
        ax.annotate(f"w={p['weight']:g}", (p["cost"], p["accuracy"]), fontsize=8, xytext=(4, 4),
                    textcoords="offset points")  # fmt: skip
    if len(known) and known["cost"].min() > 0:
        ax.set_xscale("log")
    ax.set_xlabel("worker USD per question")
    ax.set_ylabel("accuracy (%)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(title, fontsize=9)
    return fig


def main(argv: list[str] | None = None) -> Any:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    ap.add_argument("recipe", help="training recipe (YAML), e.g. training/recipes/sim-routing.yaml")
    ap.add_argument("--weights", default=DEFAULT_WEIGHTS, help="comma-separated cost weights (0: the paper's reward)")
    ap.add_argument("--charge", default="always", choices=["always", "correct"], help="cost_charge of every run")
    ap.add_argument("--out", type=Path, default=Path("runs/cost-sweep"), help="directory of the runs, logs, plot")
    ap.add_argument("--limit", type=int, default=40, help="held-out questions per benchmark")
    ap.add_argument("--eval_seed", type=int, default=0, help="generation seed of the evals")
    ap.add_argument("--eval_temperature", type=float, default=0.1, help="conductor temperature of the evals")
    ap.add_argument("--warmup", type=Path, help="an existing warm-up model to start every weight from (no warm-up run)")
    ap.add_argument("--dry_run", action="store_true", help="print the commands and the eval plan, run nothing")
    args, extra = ap.parse_known_args(argv)
    weights = parse_weights(args.weights)
    from training.options import parse

    script, config, _ = parse([args.recipe, *extra])  # the recipe and overrides, checked before anything runs
    warmup = args.warmup or args.out / "warmup-run" / "warmup"
    if args.warmup is None and script.format_warmup_steps < 1:
        raise SystemExit(f"{args.recipe}: the sweep shares one format warm-up; set format_warmup_steps > 0 or --warmup")
    check_warmup(args.warmup)
    check_run_files([args.out / "warmup-run", *(run_dir(args.out, w) for w in weights)])
    if args.warmup is None:
        train(warmup_command(args.recipe, args.out, extra), args.out / "warmup-run", args.dry_run)
    for w in weights:
        command = weight_command(args.recipe, args.out, warmup, w, args.charge, extra)
        train(command, run_dir(args.out, w), args.dry_run)
    found = methods(script, config, args.out, weights, args.eval_temperature)
    print(
        f"{'would evaluate' if args.dry_run else 'evaluating'} on MATH-500 and MMLU test (first {args.limit} each,"
        f" seed {args.eval_seed}): {', '.join(m['label'] for m in found)}",
        flush=True,
    )
    if args.dry_run:
        return None
    from reports.csv_safe import write_csv
    from reports.plots import save_figure

    logs = args.out / "logs"
    rows = [row for m in found for row in evaluate(m, eval_tasks(script), logs, args.limit, args.eval_seed)]
    points = points_table(rows, found)
    write_csv(points, args.out / "points.csv")
    title = sweep_title(script.pool, args.charge, script.recipe_name, args.limit)
    png, svg = save_figure(sweep_figure(points, title), args.out, "accuracy-cost")
    print(points.to_string(index=False))
    print(f"wrote {args.out / 'points.csv'}, {png}, {svg}")
    return points
