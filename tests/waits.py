"""How long tests wait on a busy machine: nets against a hang and room for code under a time limit,
never a bound a test asserts.

Work beside the tests (other jobs, a niced pytest) slows a command, a server or a sandboxed program
many times over without changing what it does: here `python -m experiments.gpu_check --dry_run`
took 12.2 s of CPU and 424 s of wall time at nice 10 beside three training runs (load 3.5), and
`python -m conductor_model.serve --help` 2.0 s of CPU and 39 s of wall time. So:

- `HANG_S`: how long a command line may run (`run_command`) before the test calls it a hang;
- `WAIT_S`: how long a test waits for an event inside its own process (a server up, a socket
  closed, a sandbox gone, calls that meet);
- `ROOMY_S`: the time limit a test gives sandboxed code whose verdict it reads (a control that must
  pass, a forgery whose refusal it names). The graders' limits are wall-clock time, as the official
  harnesses' are (human-eval's and LiveCodeBench's alarms, BigCodeBench's per-task limit), so a
  test that needs the verdict, not a time-out, gives the code room; a test that expects a time-out
  keeps a short limit (a busy machine cannot make an endless loop finish).
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence

import pytest

HANG_S = 1800
WAIT_S = 300
ROOMY_S = 300.0


def run_command(command: Sequence[str], **kwargs) -> subprocess.CompletedProcess:
    """`subprocess.run(command, **kwargs)`, output captured as text unless said otherwise; a command
    still running after `HANG_S` is killed and the test fails as a hang."""
    kwargs = {"capture_output": True, "text": True, **kwargs}
    try:
        return subprocess.run(command, timeout=HANG_S, **kwargs)
    except subprocess.TimeoutExpired:
        pytest.fail(f"hang guard: {list(command)} still ran after {HANG_S} s (a busy machine needs far less)")
