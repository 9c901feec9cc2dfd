"""A training run's files (run_info.json, metrics.jsonl) read as anyone's (`reports.run_files`): a file
that is not what train.py writes ends the command that reads it (the training plots, curves.py,
gpu_check.py, the seeds sweep's memory check) with one line naming the file and the field."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from test_reports_plots import rollout, write_run
from waits import run_command

from reports import plots
from reports.run_files import read_metrics, read_run_info

ROOT = Path(__file__).resolve().parents[2]

BAD_RUN_INFO = [
    ("{not json", "not JSON"),
    ("[1, 2]", "a JSON list, not an object"),
    ('{"global_step": "60"}', "field global_step is '60', not a whole number"),
    ('{"global_step": true}', "field global_step is True, not a whole number"),
    ('{"global_step": 60, "wall_s": "3 min"}', "field wall_s is '3 min', not seconds"),
    ('{"global_step": 60, "wall_s": NaN}', "field wall_s is nan, not seconds"),
    ('{"global_step": 60, "device": 5}', "field device is 5, not text"),
    ('{"seed": 1.5}', "field seed is 1.5, not a whole number"),
    ('{"warmup": {"wall_s": [1]}}', r"field warmup.wall_s is \[1\], not seconds"),
    ('{"warmup": "yes"}', "field warmup is 'yes', not an object"),
    ('{"data": "sim"}', "field data is 'sim', not an object"),
    ('{"data": {"pool_workers": 5}}', "field data.pool_workers is 5, not a list of text"),
    ('{"script": {"pool": ["a"]}}', r"field script.pool is \['a'\], not text"),
    ('{"simulated": "no"}', "field simulated is 'no', not true or false"),
    ('{"peak_rss_gib": -1}', "field peak_rss_gib is -1, not GiB"),
    ('{"generations_per_step": 0}', "field generations_per_step is 0, not a whole number >= 1"),
]  # fmt: skip


def one_line(refused: pytest.ExceptionInfo, path: Path) -> bool:
    return str(refused.value).startswith(f"{path}") and "\n" not in str(refused.value)


@pytest.mark.parametrize(("text", "match"), BAD_RUN_INFO)
def test_a_bad_run_info_is_named_with_its_field(text, match, tmp_path):
    (tmp_path / "run_info.json").write_text(text)
    with pytest.raises(SystemExit, match=match) as refused:
        read_run_info(tmp_path)
    assert one_line(refused, tmp_path / "run_info.json")


def test_a_run_info_is_optional_unless_a_field_is_required(tmp_path):
    assert read_run_info(tmp_path) == {}
    with pytest.raises(SystemExit, match="run_info.json is missing; pass a training output_dir"):
        read_run_info(tmp_path, required=["generations_per_step"])
    (tmp_path / "run_info.json").write_text('{"generations_per_step": null}')
    with pytest.raises(SystemExit, match="field generations_per_step is missing"):
        read_run_info(tmp_path, required=["generations_per_step"])


@pytest.mark.parametrize(("lines", "match"), [
    ('{"step": 1}\n{"step": 2, "lo', "line 2: not JSON"),
    ('{"step": 1}\n\n[1]\n', "line 3: a JSON list, not an object"),
    ('{"step": 1, "grad_norm": "big"}\n', "line 1: field grad_norm is 'big', not a number"),
    ('{"step": -1}\n', "line 1: field step is -1, not a whole number >= 0"),
])  # fmt: skip
def test_a_bad_metrics_line_is_named_with_its_field(lines, match, tmp_path):
    (tmp_path / "metrics.jsonl").write_text(lines)
    with pytest.raises(SystemExit, match=match) as refused:
        read_metrics(tmp_path)
    assert one_line(refused, tmp_path / "metrics.jsonl")


def test_metrics_lines_are_read_with_non_finite_numbers(tmp_path):
    assert read_metrics(tmp_path) == []
    (tmp_path / "metrics.jsonl").write_text('{"step": 1, "loss": NaN}\n\n{"step": 2, "grad_norm": 1.5}\n')
    rows = read_metrics(tmp_path)
    assert [r["step"] for r in rows] == [1, 2] and rows[0]["loss"] != rows[0]["loss"]


HOSTILE = ["{not json", "[1]", '{"data": "sim"}', '{"data": {"pool_workers": 5}}', '{"script": 3}']


@pytest.mark.parametrize("text", HOSTILE)
def test_the_training_plots_and_curves_refuse_a_bad_run_info(text, tmp_path):
    from experiments.curves import main as curves

    run = write_run(tmp_path / "run", [rollout(0), rollout(1)])
    (run / "run_info.json").write_text(text)
    with pytest.raises(SystemExit) as refused:
        plots.training_plots([run], tmp_path / "out")
    assert one_line(refused, run / "run_info.json")
    with pytest.raises(SystemExit) as refused:
        curves([str(run), "--out", str(tmp_path / "c" / "curves")])
    assert one_line(refused, run / "run_info.json")


def test_curves_cli_ends_with_one_line_and_a_non_zero_exit(tmp_path):
    run = write_run(tmp_path / "run", [rollout(0)])
    (run / "run_info.json").write_text('{"data": {"pool_workers": 5}}')
    done = run_command([sys.executable, "-m", "experiments.curves", str(run)], cwd=ROOT)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        f"{run / 'run_info.json'}: field data.pool_workers is 5, not a list of text; fix it or move the run folder "
        "aside (train.py writes this file)"
    ]


@pytest.fixture()
def gpu_check_after_training(monkeypatch):
    """experiments/gpu_check.py's main as on a GPU machine, the training stage a no-op (its files are the test's)
    and the eval stage failing (no accuracy)."""
    import torch

    from experiments import gpu_check

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda index: "a test GPU")
    monkeypatch.setattr(gpu_check, "_run", lambda command, failures, what: what == "training")
    return gpu_check.main


def test_gpu_check_reads_the_runs_files(gpu_check_after_training, tmp_path):
    (tmp_path / "run_info.json").write_text(json.dumps({"generations_per_step": 8}))
    metric = {"step": 1, "loss": 0.1, "grad_norm": 2.0, "completions/mean_length": 10.0, "step_wall_s": 4.0}
    (tmp_path / "metrics.jsonl").write_text(json.dumps(metric) + "\n")
    assert gpu_check_after_training(["--out", str(tmp_path), "--fix_steps", "0"]) == 0
    assert "| 1 | 4 | 20 |" in (tmp_path / "gpu_check.md").read_text()


@pytest.mark.parametrize(("info", "metrics", "where", "match"), [
    ("{}", "", "run_info.json", "field generations_per_step is missing"),
    ('{"generations_per_step": "8"}', "", "run_info.json", "field generations_per_step is '8', not a whole number"),
    ('{"generations_per_step": 8}', '{"step": 1}\n{"st', "metrics.jsonl", "line 2: not JSON"),
    ('{"generations_per_step": 8}', '["step"]\n', "metrics.jsonl", "line 1: a JSON list, not an object"),
])  # fmt: skip
def test_gpu_check_refuses_bad_run_files(gpu_check_after_training, tmp_path, info, metrics, where, match):
    (tmp_path / "run_info.json").write_text(info)
    (tmp_path / "metrics.jsonl").write_text(metrics)
    with pytest.raises(SystemExit, match=match) as refused:
        gpu_check_after_training(["--out", str(tmp_path), "--fix_steps", "0"])
    assert one_line(refused, tmp_path / where)


def test_the_memory_check_refuses_a_bad_run_info(tmp_path):
    from experiments.seeds.memory import per_run_peak

    runs = [tmp_path / "seed-0", tmp_path / "seed-1"]
    for run, text in zip(runs, ('{"peak_rss_gib": 2.5}', '{"peak_rss_gib": "3 GiB"}'), strict=True):
        run.mkdir()
        (run / "run_info.json").write_text(text)
    assert per_run_peak(1.0, 4, 4, runs[:1])[0] == 2.5
    with pytest.raises(SystemExit, match="seed-1/run_info.json: field peak_rss_gib is '3 GiB', not GiB") as refused:
        per_run_peak(1.0, 4, 4, runs)
    assert one_line(refused, runs[1] / "run_info.json")


def test_run_folder_text_utf8_cannot_hold_is_plotted_and_written_escaped(tmp_path):
    """Lone surrogates (JSON's `\\udc80`) in run_info.json and rollouts.jsonl: curves.py and the training
    plots write their PNG, SVG and CSV with each as its escape, not a crash in the font or the encoder."""
    from experiments.curves import main as curves

    run = write_run(tmp_path / "run", [rollout(0, names=("a\udc80", "b")), rollout(1, names=("b",))])
    info = {"recipe": "r\ud800", "model": "m\udfff", "data": {"pool": "p\udc80", "pool_workers": ["sim/x\udc80"]}}
    (run / "run_info.json").write_text(json.dumps(info))  # json.dumps writes each as \udXXX
    curves([str(run), "--out", str(tmp_path / "c" / "curves")])
    written = {p.name: p.read_bytes() for p in (tmp_path / "c").iterdir()}
    assert {"curves.png", "curves.svg", "curves.csv", "curves-routing.csv", "curves-credit.csv"} <= set(written)
    assert b"a\\udc80" in written["curves-routing.csv"] and b"m\\udfff" in written["curves.svg"]
    plotted = plots.training_plots([run], tmp_path / "out")
    assert plotted and all(p.png.is_file() and p.svg.is_file() for p in plotted)


def test_read_run_files_hold_only_writable_text(tmp_path):
    (tmp_path / "run_info.json").write_text('{"device": "\\udc80", "data": {"pool_workers": ["\\ud800x"]}}')
    (tmp_path / "metrics.jsonl").write_text('{"step": 1, "\\udc80": "\\udfff"}\n')
    assert read_run_info(tmp_path) == {"device": "\\udc80", "data": {"pool_workers": ["\\ud800x"]}}
    assert read_metrics(tmp_path) == [{"step": 1, "\\udc80": "\\udfff"}]
