"""Did the evals of a command run? A line per eval that failed or scored no sample, for the
commands that must exit non-zero then (`inspect eval` itself exits 0 on both): the nox
sessions, the matrix runner and the training sweeps.

    python -m solvers.eval_status --log-dir logs --since 1764201600.0
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable, Sequence

from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log


def eval_problems(logs: Iterable[EvalLog]) -> list[str]:
    """A line per log whose eval did not finish, or finished with no scored sample."""
    problems = []
    for log in logs:
        where = f"{log.eval.task} ({log.location})"
        if log.status != "success":
            reason = log.error.message.strip().splitlines()[-1] if log.error else "no error recorded"
            problems.append(f"{where}: {log.status}: {reason}")
        elif not (log.results and log.results.completed_samples and log.results.scores):
            problems.append(f"{where}: scored no sample (check --limit, --sample-id and the task's filters)")
    return problems


def logs_since(log_dir: str, since: float) -> list[EvalLog]:
    """The headers of the logs in `log_dir` written at or after `since` (seconds since the epoch)."""
    infos = list_eval_logs(log_dir, recursive=True) if os.path.isdir(log_dir) else []
    return [read_eval_log(info, header_only=True) for info in infos if (info.mtime or 0) / 1000 >= since]  # mtime: ms


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m solvers.eval_status", description=__doc__.split("\n")[0])
    p.add_argument("--log-dir", default=os.environ.get("INSPECT_LOG_DIR", "logs"))
    p.add_argument("--since", type=float, default=0.0, help="only logs written since (seconds since the epoch)")
    args = p.parse_args(argv)
    logs = logs_since(args.log_dir, args.since)
    problems = eval_problems(logs) or ([] if logs else [f"no eval log written in {args.log_dir}"])
    for line in problems:
        print(f"error: {line}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
