"""`python -m reports build --logs DIR --out DIR [--training-runs RUN ...]`: the report from logs.
`python -m reports reproduce [--logs DIR | --pool local --limit 2 ...] --out DIR`: run the evals
the tables need through the matrix runner (unless --logs is given), then build.
`python -m reports credit --logs DIR [--pool P] [--yes]`: counterfactual credit of the conductor's steps
(reports.credit).
`python -m reports reproduce` alone builds from the logs in `logs/baselines` (the matrix runner's
default) when it holds any; otherwise it runs every method on the SIMULATION pool `sim-scripted`
(`QUICK`: minutes on 2 cores), builds, and prints the commands that fill the tables with real
pools and their estimated cost (reports/estimate.py)."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from reports.console import Console

DEFAULT_OUT = "reports/out"
PRESENT_LOGS = "logs/baselines"  # where `nox -s baselines` and the matrix runner write by default
QUICK = {"pool": "sim-scripted", "limit": 6, "epochs": 3}  # every method with a standard error, in minutes
VERBOSE_HELP = (
    "print the detail too: Inspect's display of each eval, the build's timings, library warnings "
    "(always kept: the eval logs, <out>/report.log)"
)
REPORTS_EXTRA = 'pip install -e ".[reports]"'  # pandas, pyarrow, matplotlib, scipy (pyproject.toml)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m reports", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="tables, plots and the HTML page from existing logs")
    b.add_argument("--logs", required=True, help="directory of Inspect logs (searched recursively)")
    sub.add_parser(
        "credit", help="counterfactual credit of the conductor's steps (python -m reports credit -h)", add_help=False
    )
    r = sub.add_parser("reproduce", help="run the needed evals (matrix runner), then build")
    r.add_argument("--logs", default=None, help="build from these logs and run nothing")
    r.add_argument("--pool", default=None, help=f"pool to run on (default: build from {PRESENT_LOGS} when it "
                   f"holds logs, else run the SIMULATION pool {QUICK['pool']} with --limit {QUICK['limit']} "
                   f"--epochs {QUICK['epochs']})")  # fmt: skip
    r.add_argument("--tasks", default=None, help="task files to run (default: the paper's benchmarks whose data "
                   "needs no network)")  # fmt: skip
    r.add_argument("--limit", type=int, default=None, help="samples per task (default: 2; the quick simulation: 6)")
    r.add_argument("--epochs", type=int, default=None, help="epochs per sample (gives mean +- SE; default: 1)")
    r.add_argument("--methods", default=None, help="subset of the matrix's methods (default: all)")
    r.add_argument("--log-dir", default=None, help="where the runs write (default: logs/reproduce-<pool>)")
    for q in (b, r):
        q.add_argument("--out", default=DEFAULT_OUT, help=f"output directory (default: {DEFAULT_OUT})")
        q.add_argument("--training-runs", nargs="*", default=[], help="training run directories to plot")
        q.add_argument("--embed", action="store_true", help="inline the PNGs in the page (one self-contained file)")
        q.add_argument("--verbose", action="store_true", help=VERBOSE_HELP)
    return p


def default_tasks() -> str:
    """The task files of the paper's benchmarks whose data has an offline source (a pinned wheel)."""
    from tasks.catalog import benchmarks

    return ",".join(b.file for b in benchmarks() if b.paper_column and b.offline)


def has_logs(log_dir: str | Path) -> bool:
    """Whether a directory holds Inspect logs (searched recursively)."""
    from inspect_ai.log import list_eval_logs

    return Path(log_dir).is_dir() and bool(list_eval_logs(str(log_dir), recursive=True))


def plan(args: argparse.Namespace, found: Callable[[str], bool] = has_logs) -> tuple[argparse.Namespace, str]:
    """`reproduce` with neither --logs nor --pool: build from PRESENT_LOGS when it holds logs, else run
    the quick simulation (QUICK; --limit, --epochs given are kept). Returns (the arguments, what was decided)."""
    if args.command != "reproduce" or args.logs or args.pool:
        return args, ""
    if found(PRESENT_LOGS):
        return argparse.Namespace(**{**vars(args), "logs": PRESENT_LOGS}), f"building from the logs in {PRESENT_LOGS}"
    quick = {k: v if getattr(args, k) is None else getattr(args, k) for k, v in QUICK.items()}
    return argparse.Namespace(**{**vars(args), **quick}), (
        f"no logs in {PRESENT_LOGS} (the matrix runner's default; --logs DIR builds from others): running every "
        f"method on the SIMULATION pool {quick['pool']} (simulated workers, scripted conductor: the numbers test "
        "the harness and are not comparable to the paper's)"
    )


def logs_problem(logs: str) -> str | None:
    """What is wrong with a --logs directory (a typo, or no log in it yet), or None."""
    if not Path(logs).is_dir():
        return "is not a directory"
    if not has_logs(logs):
        return "holds no Inspect eval log (none was written there yet)"
    return None


def missing_extra() -> str | None:
    """One line naming the extra to install when the `reports` extra's packages are missing."""
    try:
        import matplotlib  # noqa: F401
        import pandas  # noqa: F401
        import pyarrow  # noqa: F401
        import scipy  # noqa: F401
    except ModuleNotFoundError as error:
        return f"python -m reports needs the `reports` extra ({error.name} is not installed): {REPORTS_EXTRA}"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    if missing := missing_extra():
        print(f"error: {missing}", file=sys.stderr)
        return 1
    if given[:1] == ["credit"]:  # its own options: python -m reports credit -h
        from reports.credit import main as credit_main

        return credit_main(given[1:])
    args, decided = plan(parser().parse_args(argv))
    if args.command == "reproduce":
        args.tasks = args.tasks or default_tasks()
    argv_text = " ".join(shlex.quote(a) for a in (sys.argv[1:] if argv is None else argv))
    if args.logs and (problem := logs_problem(args.logs)):
        print(f"error: --logs {args.logs} {problem}; fix: pass the directory your evals wrote to (`inspect eval "
              f"--log-dir`, default ./logs; the matrix runner's: {PRESENT_LOGS})", file=sys.stderr)  # fmt: skip
        return 1
    matrix_args = None if args.command != "reproduce" or args.logs else matrix_arguments(args)
    if matrix_args is not None:
        from solvers.matrix import parser as matrix_parser
        from solvers.matrix import refuse_mistakes

        try:
            refuse_mistakes(matrix_parser().parse_args(matrix_args))
        except ValueError as error:  # a task, pool, method or count it refuses: said alone, before anything runs
            print(f"error: {error}", file=sys.stderr)
            return 1
    console = Console(args.out, args.verbose)
    if decided:
        console.say(decided)
    with console.library_warnings():
        return run(args, matrix_args, decided, console, f"python -m reports {argv_text}")


def matrix_arguments(args: argparse.Namespace) -> list[str]:
    """The matrix runner's arguments for `reproduce` without --logs (sets args.pool, limit, log_dir)."""
    args.pool, args.limit = args.pool or "local", 2 if args.limit is None else args.limit
    args.log_dir = args.log_dir or f"logs/reproduce-{args.pool}"
    matrix_args = [
        "--tasks",
        args.tasks,
        "--pool",
        args.pool,
        "--limit",
        str(args.limit),
        "--log-dir",
        args.log_dir,
        "--display",
        "plain" if args.verbose else "none",  # none: a progress line per quarter of the evals
    ] + (["--methods", args.methods] if args.methods else [])
    return matrix_args + (["--epochs", str(args.epochs)] if args.epochs is not None else [])  # 0: refused, not dropped


def run(args: argparse.Namespace, matrix_args: list[str] | None, decided: str, console: Console, command: str) -> int:
    """Run the matrix (`matrix_args`: reproduce without --logs), then build; progress and the summary on `console`."""
    logs, code = args.logs, 0
    if matrix_args is not None:
        logs = args.log_dir
        console.say(f"running the matrix: python -m solvers.matrix {shlex.join(matrix_args)}")
        from solvers.matrix import main as matrix_main

        try:
            code = matrix_main(matrix_args)
        except ValueError as error:  # what refuse_mistakes cannot see before the evals (Inspect's own checks)
            print(f"error: {error}", file=sys.stderr)
            return 1
        if code:
            console.say(f"the matrix runner exited with {code}; building what the logs hold")
    from reports.build import Progress, build

    progress = Progress(write=lambda line: console.say(line, err=True))
    report = build(logs, args.out, training=args.training_runs, embed=args.embed, progress=progress, command=command)
    console.say(f"report: {report.page}")
    console.say(f"tables: {report.out / 'tables.md'}  missing cells: {report.out / 'missing.md'}")
    for name, seconds in report.timings.items():
        console.detail(f"  {name:16s} {seconds:7.2f} s")
    if decided:
        from reports.estimate import report_lines
        from reports.frame import load_samples

        console.say("\n".join(report_lines(load_samples(logs), [t for t in args.tasks.split(",") if t])))
    return 1 if code else 0  # an eval of the matrix failed or scored no sample: built, but not a success


if __name__ == "__main__":
    raise SystemExit(main())
