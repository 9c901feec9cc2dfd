"""`python -m reports build --logs DIR --out DIR [--training-runs RUN ...]`: the report from logs.
`python -m reports reproduce [--logs DIR | --pool local --limit 2 ...] --out DIR`: run the evals
the tables need through the matrix runner (unless --logs is given), then build.
`python -m reports credit --logs DIR [--yes]`: counterfactual credit of the conductor's steps (reports.credit)."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence

DEFAULT_OUT = "reports/out"
DEFAULT_TASKS = "gpqa,math500,mmlu,aime2025"  # the offline benchmarks of the paper's tables


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m reports", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="tables, plots and the HTML page from existing logs")
    b.add_argument("--logs", required=True, help="directory of Inspect logs (searched recursively)")
    sub.add_parser("credit", help="counterfactual credit of the conductor's steps (python -m reports credit -h)",
                   add_help=False)
    r = sub.add_parser("reproduce", help="run the needed evals (matrix runner), then build")
    r.add_argument("--logs", default=None, help="build from these logs and run nothing")
    r.add_argument("--pool", default="local", help="pool to run on when no --logs (default: local; sim is fast)")
    r.add_argument("--tasks", default=DEFAULT_TASKS, help=f"task files to run (default: {DEFAULT_TASKS})")
    r.add_argument("--limit", type=int, default=2, help="samples per task (default: 2)")
    r.add_argument("--epochs", type=int, default=None, help="epochs per sample (gives mean +- SE; default: 1)")
    r.add_argument("--methods", default=None, help="subset of the matrix's methods (default: all)")
    r.add_argument("--log-dir", default=None, help="where the runs write (default: logs/reproduce-<pool>)")
    for q in (b, r):
        q.add_argument("--out", default=DEFAULT_OUT, help=f"output directory (default: {DEFAULT_OUT})")
        q.add_argument("--training-runs", nargs="*", default=[], help="training run directories to plot")
        q.add_argument("--embed", action="store_true", help="inline the PNGs in the page (one self-contained file)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    if given[:1] == ["credit"]:  # its own options: python -m reports credit -h
        from reports.credit import main as credit_main

        return credit_main(given[1:])
    args = parser().parse_args(argv)
    argv_text = " ".join(shlex.quote(a) for a in (sys.argv[1:] if argv is None else argv))
    logs = args.logs
    if args.command == "reproduce" and not logs:
        logs = args.log_dir or f"logs/reproduce-{args.pool}"
        run = ["--tasks", args.tasks, "--pool", args.pool, "--limit", str(args.limit), "--log-dir", logs,
               "--display", "plain"] + (["--methods", args.methods] if args.methods else [])
        run += ["--epochs", str(args.epochs)] if args.epochs else []
        print(f"running the matrix: python -m solvers.matrix {' '.join(shlex.quote(x) for x in run)}", flush=True)
        from solvers.matrix import main as matrix_main

        code = matrix_main(run)
        if code:
            print(f"the matrix runner exited with {code}; building what the logs hold", flush=True)
    from reports.build import build

    report = build(logs, args.out, training=args.training_runs, embed=args.embed,
                   command=f"python -m reports {argv_text}")
    print(f"report: {report.page}")
    print(f"tables: {report.out / 'tables.md'}  missing cells: {report.out / 'missing.md'}")
    for name, seconds in report.timings.items():
        print(f"  {name:16s} {seconds:7.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
