"""benchmarks/bench_train.py's logic, without training: the clock of each device, the arms' shapes, and the
table it prints (on the CPU different completions stop it; on a GPU they are counted in a note)."""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

import pytest

# benchmarks/ is a folder of scripts, not an installed package: load the script by its path
SPEC = importlib.util.spec_from_file_location(
    "bench_train", Path(__file__).resolve().parents[1] / "benchmarks" / "bench_train.py"
)
bench_train = importlib.util.module_from_spec(SPEC)
sys.modules["bench_train"] = bench_train
SPEC.loader.exec_module(bench_train)


def arm(name: str, peak_gib: float, step_s: list[float], completions: list[list[list[int]]]) -> dict:
    steps = [{"step": s, "generation": s / 2, "reward": 0.01, "loss_forward": s / 4, "backward": s / 8} for s in step_s]
    return {"arm": name, "peak": peak_gib * 2**30, "steps": steps, "completions": completions}


def args(device: str) -> argparse.Namespace:
    return argparse.Namespace(recipe="training/recipes/sim-routing.yaml", num_generations=2, steps=3, device=device)


SAME = [[[1, 2], [3, 4]]] * 3
OTHER = [[[1, 2], [3, 4]], [[1, 2], [3, 5]], [[1, 2], [3, 4]]]


def test_the_phase_clock_reads_the_clock_it_is_given():
    ticks = iter([0.0, 1.0, 3.5, 10.0])
    clock = bench_train.PhaseClock(lambda: next(ticks))
    clock.begin_step()
    assert clock.timed("generation", lambda: ([[7, 8]],))() == ([[7, 8]],)
    clock.end_step()
    assert clock.steps == [{"generation": 2.5, "reward": 0.0, "loss_forward": 0.0, "backward": 0.0, "step": 10.0}]
    assert clock.completions == [[[7, 8]]]


def test_a_gpu_bench_trains_both_arms_on_the_gpu():
    assert bench_train.shape_args("r.yaml", 3, 8, Path("o"))[-2:] == ["--logging_steps", "1"]
    assert bench_train.shape_args("r.yaml", 3, 8, Path("o"), "cuda")[-2:] == ["--use_cpu", "false"]


def test_the_gpu_table_gives_gpu_memory_and_wall_seconds_and_counts_differing_completions(capsys):
    bench_train.report([arm("bare_trl", 4.0, [9.0, 2.0, 2.2], SAME), arm("project", 1.0, [9.0, 1.0, 1.2], OTHER)],
                       args("cuda"))  # fmt: skip
    out = capsys.readouterr().out
    assert "1 of 6 completions differ between the arms" in out and "wall-seconds" in out
    assert "| arm | peak GPU memory (GiB) | wall s/step |" in out
    assert "| project | 1.00 | 1.100 | 0.550 | 0.010 | 0.275 | 0.138 |" in out
    assert "peak_gpu: 0.25x\n" in out and "wall_s: 0.52x\n" in out and "goal" not in out


def test_the_cpu_table_is_unchanged_and_refuses_different_completions(capsys):
    bench_train.report([arm("bare_trl", 4.0, [9.0, 2.0, 2.2], SAME), arm("project", 1.0, [9.0, 1.0, 1.2], SAME)],
                       args("cpu"))  # fmt: skip
    out = capsys.readouterr().out
    assert "1 thread, CPU-seconds (median of steps 2..n); completions identical in every step" in out
    assert "| arm | peak RSS (GiB) | CPU-s/step |" in out and "| project | 1.00 | 1.1 | 0.6 | 0.0 | 0.3 | 0.1 |" in out
    assert "peak_rss: 0.25x (meets the goal <= 0.35x)" in out and "cpu_s: 0.52x (meets the goal <= 0.8x)" in out
    with pytest.raises(SystemExit, match=r"different completions \(1 differ\)"):
        bench_train.report([arm("bare_trl", 4.0, [1.0], SAME), arm("project", 1.0, [1.0], OTHER)], args("cpu"))
