"""`python -m experiments.seeds --parallel` checks that its runs fit in memory (experiments/seeds/memory.py):
from the runs' measured peak, else the recipe's bench figure at the loss's micro-batch;
it says what runs side by side."""

from __future__ import annotations

import json

import pytest
from installed import needs

import experiments.seeds.memory as memory
from experiments.seeds.memory import available_gib, parallel_plan, per_run_peak
from experiments.seeds.sweep import main
from training.run_info import peak_gpu_gib, peak_rss_gib

pytestmark = needs("trl")

SIM = "training/recipes/sim-routing.yaml"


def test_runs_that_fit_are_named_with_the_memory_they_take():
    plan = parallel_plan(2, [0, 1, 2], (3.0, "bench"), available=20.0)
    assert plan.startswith("--parallel 2: seeds 0,1 side by side, then 2 as runs end; each run ~3.0 GiB (bench)")
    assert "~6.0 of 20.0 GiB available" in plan


def test_runs_that_do_not_fit_are_refused_with_how_many_would():
    with pytest.raises(SystemExit, match=r"--parallel 4: 4 runs x ~3.0 GiB \(bench\) do not fit in the 10.0 GiB .*"
                                         r"3 would. Pass --parallel 3"):  # fmt: skip
        parallel_plan(4, [0, 1, 2, 3], (3.0, "bench"), available=10.0)


def test_the_runs_measured_peak_comes_first_then_the_recipes_at_the_micro_batch(tmp_path):
    runs = [tmp_path / "seed-0", tmp_path / "seed-1", tmp_path / "seed-2"]
    for run, peak in zip(runs[:2], (2.5, 3.25), strict=True):
        run.mkdir()
        (run / "run_info.json").write_text(json.dumps({"peak_rss_gib": peak}))
    assert per_run_peak(1.0, 4, 4, runs)[0] == 3.25
    assert per_run_peak(1.5, 4, 8, runs[2:])[0] == 3.0 and per_run_peak(1.5, 4, 2, runs[2:])[0] == 1.5
    with pytest.raises(SystemExit, match="states no peak_rss_gib .* Run one seed first"):
        per_run_peak(None, 4, 4, runs[2:])


def test_memory_is_read_from_the_system(tmp_path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       25165824 kB\nMemAvailable:   12582912 kB\n")
    assert available_gib(meminfo) == 12.0 and available_gib(tmp_path / "absent") is None
    assert 0 < peak_rss_gib() < 64


def test_the_sweep_checks_its_parallel_runs_before_training(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(memory, "available_gib", lambda: 4.0)
    out = str(tmp_path / "seeds")
    with pytest.raises(SystemExit, match="--parallel 3: 3 runs x .* do not fit in the 4.0 GiB"):
        main([SIM, "--seeds", "0-2", "--parallel", "3", "--out", out, "--dry_run", "--peak_rss_gib", "2.0"])
    main([SIM, "--seeds", "0-2", "--parallel", "2", "--out", out, "--dry_run", "--peak_rss_gib", "1.5"])
    assert "--parallel 2: seeds 0,1 side by side, then 2 as runs end; each run ~1.5 GiB" in capsys.readouterr().out


def test_gpu_runs_are_checked_against_the_gpus_free_memory(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(memory, "available_gpu_gib", lambda: 20.0)
    monkeypatch.setattr(memory, "available_gib", lambda: 1.0)  # the machine's memory is not what GPU runs fill
    out = str(tmp_path / "seeds")
    gpu = ["--use_cpu", "false", "--out", out, "--dry_run", "--peak_gpu_gib", "7.0"]
    with pytest.raises(SystemExit, match=r"--parallel 3: 3 runs x ~7.0 GiB \(the recipe's peak_gpu_gib .* do not fit"
                                         r" in the 20.0 GiB free on the GPU \(90% usable\); 2 would"):  # fmt: skip
        main([SIM, "--seeds", "0-2", "--parallel", "3", *gpu])
    main([SIM, "--seeds", "0-2", "--parallel", "2", *gpu])
    assert "~14.0 of 20.0 GiB free on the GPU" in capsys.readouterr().out


def test_a_gpu_runs_measured_peak_is_its_own_field(tmp_path):
    run = tmp_path / "seed-0"
    run.mkdir()
    (run / "run_info.json").write_text(json.dumps({"peak_rss_gib": 2.0, "peak_gpu_gib": 6.5}))
    assert per_run_peak(7.0, 2, 2, [run], field="peak_gpu_gib") == (
        6.5, "the largest peak_gpu_gib measured by this sweep's runs (run_info.json)")  # fmt: skip
    with pytest.raises(SystemExit, match="states no peak_gpu_gib"):
        per_run_peak(None, 2, 2, [tmp_path / "none"], field="peak_gpu_gib")
    assert peak_gpu_gib(__import__("torch").device("cpu")) is None
