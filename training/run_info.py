"""run_info.json: what a training run records in its output_dir (recipe, data provenance, device, the
format warm-up, each step's wall time, peak memory, spend); `reports.run_files` reads it back, checked.

Peak memory: `peak_rss_gib` is the main process's peak resident memory, `peak_gpu_gib` (a CUDA run's)
torch's peak reserved GPU memory; the seed sweeps size `--parallel` with them (experiments/seeds/memory.py).
"""

from __future__ import annotations

import json
import resource
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any


def start_info(script: Any, config: Any, model_args: Any, data: tuple[Any, dict], reward: Any, allocator: dict,
               replaced: list[str]) -> dict:  # fmt: skip
    """What is known of a run before its model loads (all a dry run prints); `data` is
    `training.data.build_dataset`'s (dataset, provenance)."""
    dataset, provenance = data
    info = {
        "recipe": script.recipe_name,
        "script": asdict(script),
        "model": model_args.model_name_or_path,
        "data": provenance,
        "rows": len(dataset),
        "reward": getattr(reward, "__name__", type(reward).__name__),
        "generations_per_step": config.per_device_train_batch_size
        * config.gradient_accumulation_steps
        * config.world_size,
        "processes": config.world_size,
        "device": device_name(config.device),
        "num_generations": config.num_generations,
        "max_steps": config.max_steps,
        "seed": config.seed,
        "simulated": provenance["simulated"],
        "allocator": allocator,
    }
    if replaced:
        info["replaced"] = replaced
    return info


def finish_info(info: dict, started: float, trainer: Any, callbacks: Any, device: Any) -> None:
    """Add what GRPO measured (`callbacks`: training.trainer.RunCallbacks) to `info`."""
    info["wall_s"] = round(time.time() - started, 1)
    info["global_step"] = trainer.state.global_step
    info["step_wall_s"] = [round(x, 3) for x in callbacks.metrics.step_seconds]
    info["nonfinite_skipped"] = callbacks.guard.skipped
    info["peak_rss_gib"] = peak_rss_gib()
    if (gpu := peak_gpu_gib(device)) is not None:
        info["peak_gpu_gib"] = gpu
    if callbacks.spend is not None:
        info["spend"] = callbacks.spend.summary()


def device_name(device: Any) -> str:
    """The training device as run_info.json records it: "cpu", or "cuda: <GPU name>"."""
    if device.type != "cuda":
        return device.type
    import torch

    return f"cuda: {torch.cuda.get_device_name(device)}"


def peak_rss_gib() -> float:
    """This process's peak resident memory so far (GiB; Linux reports ru_maxrss in KiB)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2)


def peak_gpu_gib(device: Any) -> float | None:
    """The peak GPU memory torch reserved on `device` in this process (GiB); None off a CUDA device."""
    import torch

    if getattr(device, "type", None) != "cuda":
        return None
    return round(torch.cuda.max_memory_reserved(device) / 2**30, 2)


def write_run_info(out: Path, info: dict, main_process: bool) -> None:
    if main_process:
        (out / "run_info.json").write_text(json.dumps(info, indent=2, default=str) + "\n")
