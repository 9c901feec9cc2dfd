"""A training run's output_dir: a fresh run never appends to an earlier run's files, and a resumed run
moves the first attempt of the steps it re-runs out of its logs.

`--resume_from_checkpoint true` continues from the latest checkpoint in output_dir (a path: that one);
`--overwrite_output_dir true` moves an earlier run aside to `<dir>.replaced-<UTC time>`.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

from training.rollouts import supersede_after

log = logging.getLogger(__name__)


def resume_arg(value: str | bool | None) -> str | bool | None:
    """`--resume_from_checkpoint true` = the latest checkpoint in output_dir; a path = that one."""
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return value or None


def supersede_rerun_steps(out: Path, resume: str | bool, rollout_log: str | None) -> dict:
    """Before a resumed run re-runs the steps after its checkpoint, move their first attempt out
    of the logs (to `*.superseded`): rollout rows are numbered from step 0 (the step being
    taken), metrics rows from 1 (the step just done)."""
    from transformers.trainer_utils import get_last_checkpoint

    checkpoint = get_last_checkpoint(str(out)) if resume is True else str(resume)
    state = Path(checkpoint or "") / "trainer_state.json"
    if not checkpoint or not state.is_file():
        raise SystemExit(f"resume_from_checkpoint: no checkpoint with a trainer_state.json at {checkpoint or out}")
    done = int(json.loads(state.read_text())["global_step"])
    rollouts = Path(rollout_log) if rollout_log else out / "rollouts.jsonl"
    return {"checkpoint_step": done, "rollout_rows": supersede_after(rollouts, done),
            "metric_rows": supersede_after(out / "metrics.jsonl", done + 1)}  # fmt: skip


def old_run_paths(out: Path, rollout_log: str | None) -> list[Path]:
    """What an earlier run left where a fresh one would write: a non-empty `out`, and a non-empty
    rollout log outside it."""
    found = [out] if out.is_dir() and any(out.iterdir()) else []
    log_file = Path(rollout_log) if rollout_log else None
    if log_file and log_file.is_file() and log_file.stat().st_size and out not in log_file.parents:
        found.append(log_file)
    return found


def claim_output_dir(out: Path, script: Any, resume: str | bool | None, move: bool = True) -> list[str]:
    """A fresh run writes into no earlier run's files (its rows would append to theirs): refused
    unless it resumes or `overwrite_output_dir` moves them aside (to `<path>.replaced-<UTC time>`,
    returned; a dry run only checks, and so does every process but the main one, `move` False)."""
    found = [] if resume else old_run_paths(out, script.rollout_log)
    if found and not script.overwrite_output_dir:
        raise SystemExit(
            f"{', '.join(map(str, found))}: not empty, it holds an earlier run (a fresh run would append to its"
            " logs). Pass --overwrite_output_dir true to move it aside, --resume_from_checkpoint true to continue"
            " it, or another --output_dir"
        )
    if script.dry_run or not move:
        return []
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    moved = [path.rename(path.with_name(f"{path.name}.replaced-{stamp}")) for path in found]
    for old, new in zip(found, moved, strict=True):
        log.warning("overwrite_output_dir: the earlier run's %s moved to %s", old, new)
    return [str(path) for path in moved]
