"""How much memory a training run takes, and whether N of them fit side by side (`--parallel` of
`python -m experiments.seeds`).

A run's peak is measured: train.py records its process's peak RSS in run_info.json (`peak_rss_gib`,
training/run_info.py), and a recipe states the figure benchmarks/bench_train.py measured at its shapes
(`peak_rss_gib`, an option training itself does not read). Most
of a CPU step's peak is the saved activations of the loss's micro-batch, so a run whose micro-batch
is larger than the recipe's is taken to grow in proportion (a smaller one keeps the recipe's figure).
A GPU run (`--use_cpu false`) is checked the same way against the GPU's free memory, from the runs'
`peak_gpu_gib` (torch's peak reserved memory, which train.py records too) else the recipe's.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from reports.run_files import read_run_info

HEADROOM = 0.9  # of the available memory: the sweep's own process, the workers, the page cache


def available_gpu_gib() -> float | None:
    """Free memory of the first CUDA GPU (GiB, as the driver reports it); None without one."""
    import torch

    if not torch.cuda.is_available():
        return None
    return torch.cuda.mem_get_info(0)[0] / 2**30


def available_gib(meminfo: Path = Path("/proc/meminfo")) -> float | None:
    """Memory available to new processes (MemAvailable, GiB); None where the system does not say."""
    try:
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 2**20
    except (OSError, ValueError, IndexError):
        return None
    return None


def measured_peak(runs: Iterable[Path], field: str = "peak_rss_gib") -> float | None:
    """The largest `field` (peak_rss_gib, peak_gpu_gib) recorded by earlier runs (their run_info.json,
    checked: `reports.run_files`); None if none did."""
    peaks = [read_run_info(run).get(field) for run in runs]
    return max((float(p) for p in peaks if p is not None), default=None)


def per_run_peak(recipe_peak: float | None, recipe_micro: int, micro: int, runs: Iterable[Path],
                 field: str = "peak_rss_gib") -> tuple[float, str]:  # fmt: skip
    """A run's expected peak (GiB) of `field` (peak_rss_gib: CPU memory; peak_gpu_gib: GPU memory) and
    where the figure comes from: earlier runs of this sweep, else the recipe's figure scaled to the
    loss's micro-batch."""
    if (peak := measured_peak(runs, field)) is not None:
        return peak, f"the largest {field} measured by this sweep's runs (run_info.json)"
    if recipe_peak is None:
        raise SystemExit(
            f"--parallel: the recipe states no {field} and no run of this sweep recorded one, so it is unknown"
            " whether the runs fit in memory. Run one seed first (--parallel 1), or measure the recipe with"
            f" benchmarks/bench_train.py and add {field} to it"
        )
    scale = max(1.0, micro / recipe_micro)
    return recipe_peak * scale, f"the recipe's {field} at micro-batch {micro} (recipe's {recipe_micro})"


def parallel_plan(parallel: int, seeds: list[int], peak: tuple[float, str], available: float | None,
                  what: str = "available") -> str:  # fmt: skip
    """What runs side by side, or a SystemExit naming how many fit and the fix; `what` says which memory
    `available` is in the messages ("available": the machine's; "free on the GPU")."""
    per_run, source = peak
    if available is None:
        return f"--parallel {parallel}: each run ~{per_run:.1f} GiB ({source}); the memory {what} is unknown"
    fits = max(0, int(available * HEADROOM // per_run))
    if parallel > fits:
        raise SystemExit(
            f"--parallel {parallel}: {parallel} runs x ~{per_run:.1f} GiB ({source}) do not fit in the"
            f" {available:.1f} GiB {what} ({HEADROOM:.0%} usable); {fits or 'not even one'} would."
            f" Pass --parallel {max(1, fits)}, or free memory"
        )
    first, rest = seeds[:parallel], seeds[parallel:]
    then = f", then {','.join(map(str, rest))} as runs end" if rest else ""
    return (f"--parallel {parallel}: seeds {','.join(map(str, first))} side by side{then}; each run ~{per_run:.1f} GiB"
            f" ({source}): ~{per_run * len(first):.1f} of {available:.1f} GiB {what}")  # fmt: skip
