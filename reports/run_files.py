"""A training run's own files, read as anyone's: `run_info.json` and `metrics.jsonl`, which
training/train.py writes in its output_dir. A run folder may come from elsewhere, so a file that is not
what train.py writes ends the command (`SystemExit`) with one line naming the file, the field (or
line) and the fix, never a traceback. Only the fields something reads are checked (`RUN_FIELDS`,
`METRIC_FIELDS`); each may be absent or null (unknown) unless a reader requires it. Every string read
is made writable (`reports.safe_text`: a lone surrogate becomes its escape), so no text of a run
folder can crash a table, CSV or plot written from it.

The training plots (`reports.plots.read_run`), experiments/curves.py, experiments/gpu_check.py,
experiments/seeds/memory.py and both sweeps under experiments/ read run folders through this module."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from reports.safe_text import writable_data

RUN_INFO = "run_info.json"
METRICS = "metrics.jsonl"
MAX_RUN_INFO = 16 * 2**20  # bytes: a run_info.json train.py writes is a few kB
MAX_METRICS_LINE = 2**20  # bytes: a metrics.jsonl line (one logged step) is a few kB
FIX = "fix it or move the run folder aside (train.py writes this file)"

Check = tuple[str, Callable[[Any], bool]]  # (what the value must be, in words; its test)
WHOLE: Check = ("a whole number", lambda v: type(v) is int)
COUNT: Check = ("a whole number >= 0", lambda v: type(v) is int and v >= 0)
SIZE: Check = ("a whole number >= 1", lambda v: type(v) is int and v >= 1)
SECONDS: Check = ("seconds (a finite number >= 0)", lambda v: type(v) in (int, float) and 0 <= v < math.inf)
GIB: Check = ("GiB (a finite number >= 0)", SECONDS[1])
NUMBER: Check = ("a number", lambda v: type(v) in (int, float))  # NaN allowed: a non-finite loss is a finding
TEXT: Check = ("text", lambda v: isinstance(v, str))
FLAG: Check = ("true or false", lambda v: type(v) is bool)
TEXTS: Check = ("a list of text", lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v))

# run_info.json fields read by the plots, the checks and the sweeps; a mapping: an object and its fields
RUN_FIELDS: Mapping[str, Any] = {
    "recipe": TEXT,
    "model": TEXT,
    "device": TEXT,
    "simulated": FLAG,
    "global_step": COUNT,
    "generations_per_step": SIZE,
    "seed": WHOLE,
    "wall_s": SECONDS,
    "peak_rss_gib": GIB,
    "peak_gpu_gib": GIB,
    "warmup": {"wall_s": SECONDS},
    "data": {"pool": TEXT, "simulated": FLAG, "pool_workers": TEXTS},
    "script": {"pool": TEXT},
}
# metrics.jsonl fields (TRL's logged dicts, one per line) that gpu_check.py reads
METRIC_FIELDS: Mapping[str, Any] = {
    "step": COUNT,
    "step_wall_s": NUMBER,
    "loss": NUMBER,
    "grad_norm": NUMBER,
    "reward": NUMBER,
    "conductor/parse_rate": NUMBER,
    "completions/mean_length": NUMBER,
}


def read_run_info(run: str | Path, required: Sequence[str] = ()) -> dict:
    """`run`'s run_info.json ({} when there is none and nothing is `required`), its `RUN_FIELDS` checked
    and the `required` top-level fields present."""
    path = Path(run) / RUN_INFO
    if not path.is_file():
        if required:
            raise SystemExit(f"{path} is missing; pass a training output_dir (train.py writes this file)")
        return {}
    if path.stat().st_size > MAX_RUN_INFO:
        raise SystemExit(f"{path}: larger than {MAX_RUN_INFO // 2**20} MiB, not a run_info.json; {FIX}")
    info = _object(path.read_bytes(), str(path))
    _check_fields(info, RUN_FIELDS, str(path), "")
    for name in required:
        if info.get(name) is None:
            raise SystemExit(f"{path}: field {name} is missing; {FIX}")
    return info


def read_metrics(run: str | Path) -> list[dict]:
    """`run`'s metrics.jsonl, one dict per line ([] when there is none), each line's `METRIC_FIELDS` checked."""
    path = Path(run) / METRICS
    if not path.is_file():
        return []
    rows = []
    with path.open("rb") as handle:
        for number, line in enumerate(iter(lambda: handle.readline(MAX_METRICS_LINE + 1), b""), 1):
            where = f"{path} line {number}"
            if len(line) > MAX_METRICS_LINE:
                raise SystemExit(f"{where}: longer than {MAX_METRICS_LINE // 2**20} MiB, not a logged step; {FIX}")
            if line.strip():
                row = _object(line, where)
                _check_fields(row, METRIC_FIELDS, where, "")
                rows.append(row)
    return rows


def _object(data: bytes, where: str) -> dict:
    """`data` parsed as one JSON object, else the one-line refusal."""
    try:
        value = json.loads(data)
    except (ValueError, RecursionError) as error:  # JSONDecodeError, bad UTF-8, nesting too deep
        raise SystemExit(f"{where}: not JSON ({' '.join(str(error).split())[:120]}); {FIX}") from None
    if not isinstance(value, dict):
        raise SystemExit(f"{where}: a JSON {type(value).__name__}, not an object; {FIX}")
    return writable_data(value)


def _check_fields(info: dict, fields: Mapping[str, Any], where: str, prefix: str) -> None:
    for name, check in fields.items():
        value = info.get(name)
        if value is None:
            continue
        what, ok = ("an object", lambda v: isinstance(v, dict)) if isinstance(check, Mapping) else check
        if not ok(value):
            raise SystemExit(f"{where}: field {prefix}{name} is {ascii(value)[:80]}, not {what}; {FIX}")
        if isinstance(check, Mapping):
            _check_fields(value, check, where, f"{prefix}{name}.")
