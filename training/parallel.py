"""Data-parallel training (several processes, one model replica each): what happens once and what
happens on every process.

    torchrun --nproc_per_node 2 training/train.py training/recipes/cpu-smoke.yaml         # CPU: gloo
    accelerate launch --config_file training/accelerate/zero2.yaml training/train.py ...  # GPUs

By design: every process builds the same dataset, loads the same weights (the main process
converts a `gguf:` model first), runs the format warm-up as a data-parallel SFT in step with the
others and generates and scores ITS OWN slice of each generation batch (TRL's GRPOTrainer: each
process's reward sees only its rollouts; the rewards are then gathered for the group advantages),
so every rollout is scored once. The main process alone logs at INFO, moves an earlier run aside,
writes run_info.json, metrics.jsonl, the rollout log (every process's rows, gathered at the end
of each step, each row naming its `process`) and the models. After the warm-up and after GRPO
every process digests its weights and the run stops if they differ (not under ZeRO-3: shards).
A warm-up and GRPO cannot share a DeepSpeed launch: `--warmup_only true` is the first of two.

`accelerate launch --cpu --num_processes N` starts ONE process (accelerate's multi-CPU launcher is
mpirun, given `--mpirun_hostfile`); `launch_problem` names that case and the fix.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Mapping
from typing import Any

WORLD_SIZE_VARS = ("WORLD_SIZE", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE")  # accelerate reads these


def launch_problem(env: Mapping[str, str]) -> str | None:
    """What is wrong with this launch, if anything: accelerate's simple launcher asked for several
    CPU processes (it sets MASTER_ADDR) without mpirun started one (no world size is set)."""
    cpu = env.get("ACCELERATE_USE_CPU", "").lower() in ("1", "true", "yes")
    if cpu and "MASTER_ADDR" in env and not any(name in env for name in WORLD_SIZE_VARS):
        return (
            "accelerate launch --cpu --num_processes N started ONE process (accelerate's multi-CPU launcher is"
            " mpirun: --mpirun_hostfile). Launch N CPU processes with: torchrun --nproc_per_node N"
            " training/train.py <recipe> (or drop --num_processes for one process)"
        )
    return None


def deepspeed_warmup_problem(deepspeed: bool, script: Any, resume: Any) -> str | None:
    """Under DeepSpeed the warm-up's SFTTrainer and GRPO's trainer cannot share a launch (accelerate
    makes one DeepSpeed Accelerator per process: the second refuses its plugin, after the warm-up
    has run); said before anything runs, with the two-launch fix."""
    if not deepspeed or not script.format_warmup_steps or script.warmup_only or resume:
        return None
    return (
        "format_warmup_steps under DeepSpeed: accelerate allows one DeepSpeed Accelerator per process, so the"
        " warm-up and GRPO need two launches: first the same command with --warmup_only true --output_dir"
        " <dir>, then with --model_name_or_path <dir>/warmup --format_warmup_steps 0"
    )


def uses_deepspeed(config: Any) -> bool:
    """Whether the trainers will run DeepSpeed: `--deepspeed <json>` or `accelerate launch` with a DeepSpeed config."""
    from accelerate.utils import parse_flag_from_env

    return bool(config.deepspeed) or parse_flag_from_env("ACCELERATE_USE_DEEPSPEED")


def quiet_replica() -> None:
    """A process other than the main one logs warnings only and shows no progress bars."""
    import datasets
    import transformers

    logging.getLogger().setLevel(logging.WARNING)
    datasets.disable_progress_bars()
    transformers.utils.logging.disable_progress_bar()


def leave_process_group_at_exit() -> None:
    """Destroy the process group when the interpreter exits: a process that exits with the
    group's threads still running can abort ("terminate called without an active exception",
    exit -6, seen once in CI after a finished 2-process run)."""
    import atexit

    import torch.distributed as dist

    def leave() -> None:
        if dist.is_available() and dist.is_initialized():
            dist.destroy_process_group()

    atexit.register(leave)


def weights_digest(model: Any) -> str:
    """sha256 of every parameter (name, dtype, shape and bytes, in the model's order)."""
    import torch

    digest = hashlib.sha256()
    for name, param in model.named_parameters():
        tensor = param.detach().cpu().contiguous()
        digest.update(f"{name}:{tensor.dtype}:{tuple(tensor.shape)};".encode())
        digest.update(tensor.view(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def check_same_weights(digests: list[str], what: str) -> list[str]:
    """The processes' weight digests, or a clear stop if any process's differ from process 0's."""
    differ = [i for i, d in enumerate(digests) if d != digests[0]]
    if differ:
        raise SystemExit(
            f"{what}: the {len(digests)} processes hold different weights (process {', '.join(map(str, differ))}"
            " differ from process 0); data-parallel training went out of step. Check that every process loaded"
            " the same model and that no callback changes one process's weights"
        )
    return digests


def same_weights(model: Any, config: Any, what: str) -> list[str] | None:
    """Every process's weight digest (a collective: all processes call it), checked equal; None in
    a one-process run, or under DeepSpeed ZeRO-3 (each process holds only its shard)."""
    from transformers.integrations import is_deepspeed_zero3_enabled

    if config.world_size == 1 or is_deepspeed_zero3_enabled():
        return None
    from accelerate.utils import gather_object

    return check_same_weights(gather_object([weights_digest(model)]), what)


def gather_rows(config: Any) -> Callable[[list[dict]], list[dict]] | None:
    """For `RolloutLog(gather=...)`: every process's held rows (each naming its `process`) on the
    main process, none on the others; None in a one-process run (rows are written at once)."""
    if config.world_size == 1:
        return None
    from accelerate.utils import gather_object

    index = config.process_index

    def gather(rows: list[dict]) -> list[dict]:
        everyone = gather_object([{**row, "process": index} for row in rows])
        return everyone if index == 0 else []

    return gather


def flush_callback(rollout_log: Any, config: Any) -> Any:
    """A TrainerCallback that, at the end of every step on every process, writes the step's rows of
    every process through `rollout_log.flush()` (main process), then waits for all: after a step
    each process reads the same rollout log (what training/budget.py's spend cap reads)."""
    from transformers import TrainerCallback

    class FlushRollouts(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):  # noqa: ANN001, ANN201
            rollout_log.flush()
            config.distributed_state.wait_for_everyone()

    return FlushRollouts()
