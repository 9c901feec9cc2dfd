"""benchmarks/bench_train.py's logic, without training: the clock of each device, the arms' shapes, and the
table it prints (on the CPU different completions stop it; on a GPU they are counted in a note), its ratios
against each bare TRL arm and against the peer's best setting."""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

import pytest

# benchmarks/ is a folder of scripts, not an installed package: load the script by its path
SPEC = importlib.util.spec_from_file_location(
    "bench_train", Path(__file__).resolve().parents[2] / "benchmarks" / "bench_train.py"
)
bench_train = importlib.util.module_from_spec(SPEC)
sys.modules["bench_train"] = bench_train
SPEC.loader.exec_module(bench_train)


def arm(name: str, peak_gib: float, step_s: list[float], completions: list[list[list[int]]]) -> dict:
    steps = [{"step": s, "generation": s / 2, "reward": 0.01, "loss_forward": s / 4, "backward": s / 8,
              "kernel": s / 100} for s in step_s]  # fmt: skip
    return {"arm": name, "peak": peak_gib * 2**30, "steps": steps, "completions": completions}


def args(device: str) -> argparse.Namespace:
    return argparse.Namespace(recipe="training/recipes/sim-routing.yaml", num_generations=2, steps=3, device=device)


SAME = [[[1, 2], [3, 4]]] * 3
OTHER = [[[1, 2], [3, 4]], [[1, 2], [3, 5]], [[1, 2], [3, 4]]]


def test_the_phase_clock_reads_the_clock_it_is_given():
    ticks, kernel = iter([0.0, 1.0, 3.5, 10.0]), iter([2.0, 2.25])
    clock = bench_train.PhaseClock(lambda: next(ticks), lambda: next(kernel))
    clock.begin_step()
    assert clock.timed("generation", lambda: ([[7, 8]],))() == ([[7, 8]],)
    clock.end_step()
    assert clock.steps == [{"generation": 2.5, "reward": 0.0, "loss_forward": 0.0, "backward": 0.0, "step": 10.0,
                            "kernel": 0.25}]  # fmt: skip
    assert clock.completions == [[[7, 8]]]


def test_a_gpu_bench_trains_both_arms_on_the_gpu():
    assert bench_train.shape_args("r.yaml", 3, 8, Path("o"))[-2:] == ["--logging_steps", "1"]
    shape = bench_train.shape_args("r.yaml", 3, 8, Path("o"))
    assert shape[shape.index("--explore_workers") + 1] == "0"  # no arm forces a rollout's first worker
    assert bench_train.shape_args("r.yaml", 3, 8, Path("o"), "cuda")[-2:] == ["--use_cpu", "false"]


def test_the_gpu_table_gives_gpu_memory_and_wall_seconds_and_counts_differing_completions(capsys):
    bench_train.report([arm("bare_trl", 4.0, [9.0, 2.0, 2.2], SAME), arm("bare_trl_micro", 2.0, [9.0, 3.0, 3.0], SAME),
                        arm("project", 1.0, [9.0, 1.0, 1.2], OTHER)], args("cuda"))  # fmt: skip
    out = capsys.readouterr().out
    assert "up to 1 of 6 completions differ between the arms" in out and "wall-seconds" in out
    assert "| arm | peak GPU memory (GiB) | wall s/step |" in out
    assert "| project (`train.py`) | 1.00 | 1.100 | 0.550 | 0.010 | 0.275 | 0.138 | 0.011 |" in out
    assert "project / bare_trl: peak_gpu 0.25x, wall_s 0.52x\n" in out
    assert "project / bare_trl_micro: peak_gpu 0.50x, wall_s 0.37x\n" in out
    assert "best setting, peak_gpu: 0.50x\n" in out and "best setting, wall_s: 0.52x\n" in out and "goal" not in out


def test_the_cpu_table_compares_with_the_peers_best_setting_and_refuses_different_completions(capsys):
    bench_train.report([arm("bare_trl", 4.0, [9.0, 2.0, 2.2], SAME), arm("bare_trl_micro", 2.0, [9.0, 3.0, 3.0], SAME),
                        arm("project", 1.0, [9.0, 1.0, 1.2], SAME)], args("cpu"))  # fmt: skip
    out = capsys.readouterr().out
    assert "1 thread, CPU-seconds (median of steps 2..n); completions identical in every step" in out
    assert "| arm | peak RSS (GiB) | CPU-s/step | generation | reward | loss forward | backward | kernel |" in out
    assert "| bare TRL 1.16, the recipe's 2 x 8 micro-batches | 2.00 | 3.0 | 1.5 | 0.0 | 0.8 | 0.4 | 0.0 |" in out
    # the best setting: micro-batches' memory, the one batch's time
    assert "peer's best setting, peak_rss: 0.50x (meets the goal <= 0.5x)" in out
    assert "peer's best setting, cpu_s: 0.52x (misses the goal <= 0.5x)" in out
    with pytest.raises(SystemExit, match=r"\(1 differ; \{'project/bare_trl': 1, 'project/bare_trl_micro': 1\}\)"):
        bench_train.report([arm("bare_trl", 4.0, [1.0], SAME), arm("bare_trl_micro", 2.0, [1.0], SAME),
                            arm("project", 1.0, [1.0], OTHER)], args("cpu"))  # fmt: skip


def test_the_checkpointing_arm_is_the_micro_batch_arm_with_trls_gradient_checkpointing_on():
    micro = bench_train.bare_trl_shape(8, 8, micro=True, checkpointing=False)
    checkpointing = bench_train.bare_trl_shape(8, 8, micro=True, checkpointing=True)
    assert micro == ["--per_device_train_batch_size", "8", "--gradient_accumulation_steps", "2",
                     "--gradient_checkpointing", "false"]  # fmt: skip
    assert checkpointing == [*micro[:-1], "true"]  # nothing else differs
    assert bench_train.bare_trl_shape(8, 8, micro=False, checkpointing=False)[:4] == [
        "--per_device_train_batch_size", "16", "--gradient_accumulation_steps", "1"]  # fmt: skip
    assert bench_train.ARMS["bare_trl_micro_gc"].keywords == {"micro": True, "checkpointing": True}


def test_the_bench_runs_the_chosen_bare_arms_then_the_project(monkeypatch, tmp_path):
    started = []
    monkeypatch.setattr(bench_train, "start_arm", lambda arm, args, workdir: started.append(arm) or arm)
    monkeypatch.setattr(bench_train, "finish_arm", lambda arm, child, workdir: {"arm": child})
    chosen = argparse.Namespace(device="cpu", bare_arms=["bare_trl_micro_gc", "bare_trl_micro_gc"])
    assert [arm["arm"] for arm in bench_train.run_arms(chosen, tmp_path)] == ["bare_trl_micro_gc", "project"]
    assert started == ["bare_trl_micro_gc", "project"]
    default = argparse.Namespace(device="cuda", bare_arms=bench_train.BARE_DEFAULT)
    assert [arm["arm"] for arm in bench_train.run_arms(default, tmp_path)] == ["bare_trl", "bare_trl_micro", "project"]
