"""Time of the report build (every table and plot and the page) from 10,000 logged samples.

The logs are generated (`reports.synthetic.generated`: Inspect `.eval` files written with
`write_eval_log`; a conductor and baselines on four benchmarks, a simulated pool, 1-5 step
workflows, two epochs), then read and built exactly as `python -m reports build` does. Also
timed for comparison: reading the same samples with Inspect's plain log API
(`read_eval_log_samples`) instead of `inspect_ai.analysis.samples_df`. Goal: the whole build
under 30 s on 2 cores. Printed as a markdown table.

    python benchmarks/bench_reports.py [--samples 10000] [--logs DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

GOAL_S = 30.0


def plain_read(log_dir: Path) -> int:
    """Every sample's fields through `read_eval_log_samples` (the comparison path: same per-sample
    work as the loader, `reports.records.sample_fields`, without building the frame)."""
    from inspect_ai.log import list_eval_logs, read_eval_log_samples

    from reports.records import sample_fields

    n = 0
    for info in list_eval_logs(str(log_dir)):
        for sample in read_eval_log_samples(
            info, all_samples_required=False, exclude_fields={"messages", "events", "store", "attachments"}
        ):
            sample_fields((sample.metadata or {}).get("conductor"))
            n += 1
    return n


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--samples", type=int, default=10_000)
    p.add_argument("--logs", default=None, help="reuse (or keep) generated logs in this directory")
    p.add_argument("--keep", action="store_true", help="keep the temporary output (else removed)")
    args = p.parse_args()
    from reports import synthetic
    from reports.build import build

    root = Path(tempfile.mkdtemp(prefix="bench-reports-"))
    logs = Path(args.logs) if args.logs else root / "logs"
    if not logs.exists():
        t = time.perf_counter()
        synthetic.generated(logs, args.samples)
        print(f"generated {args.samples} samples in {time.perf_counter() - t:.1f} s (not timed below)", flush=True)
    t = time.perf_counter()
    n = plain_read(logs)
    plain = time.perf_counter() - t
    lines: list[str] = []
    t = time.perf_counter()
    report = build(logs, root / "out", progress=lines.append)
    total = time.perf_counter() - t
    print(
        f"\nReport build from {report.samples} logged samples ({os.cpu_count()} CPUs visible), "
        f"{len(report.tables)} tables, {len(report.plots)} plots\n"
    )
    print("| step | seconds |\n|---|---|")
    for name, seconds in report.timings.items():
        print(f"| {name} | {seconds:.2f} |")
    print(f"| **whole build** | **{total:.2f}** (goal < {GOAL_S:.0f}) |")
    print(f"| for comparison: read {n} samples with read_eval_log_samples | {plain:.2f} |")
    if args.keep:
        print(f"\noutput: {root / 'out'}")
    else:
        shutil.rmtree(root, ignore_errors=True)
    verdict = "within" if total < GOAL_S else "OVER (a busy machine inflates this; rerun when idle)"
    print(f"\n{verdict} the goal of {GOAL_S:.0f} s")
    return 0  # a measurement, not a gate


if __name__ == "__main__":
    raise SystemExit(main())
