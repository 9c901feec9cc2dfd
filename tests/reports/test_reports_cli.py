"""`python -m reports build` end to end on hand-built logs: tables, missing cells, plots, the page."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pandas as pd
import pytest
from test_reports_html import browser, problems, render_check
from test_reports_plots import rollout, write_run
from waits import run_command

from reports import synthetic as syn
from reports.__main__ import main

SIM = ["sim/math-strong", "sim/choice-strong", "sim/mediocre", "sim/premium"]
LOCAL = ["local/smollm2-135m", "local/gemma3-270m"]


def write_logs(d: Path) -> None:
    """A simulated pool (conductor, two single workers) on two tasks, two epochs; a local-pool conductor
    with unknown costs on one task; a gsm8k run the paper does not report."""
    for task in ("math500", "gpqa_diamond"):
        rows = []
        for i in range(3):
            steps = [syn.step(0, 0, SIM[0]), syn.step(1, 3, SIM[3], [0])][: 1 + i % 2]
            meta = syn.record("conductor", SIM, steps, conductor="local/smollm2-135m")
            rows += [syn.sample(f"{task}{i}", e, "CI"[(i + e) % 2], meta) for e in (1, 2)]
        syn.write_log(d, task, "conductor", {"pool": "sim"}, rows, epochs=2)
        for w in (0, 1):
            meta = syn.record("single_worker", SIM, [syn.step(0, w, SIM[w])])
            rows = [syn.sample(f"{task}{i}", e, "C" if i else "I", meta) for i in range(3) for e in (1, 2)]
            syn.write_log(d, task, "single_worker", {"pool": "sim", "worker": w}, rows, epochs=2)
    meta = syn.record("conductor", LOCAL, [syn.step(0, 1, LOCAL[1])], conductor="local/smollm2-135m", cost=None)
    syn.write_log(
        d, "math500", "conductor", {"pool": "local"}, [syn.sample(f"l{i}", 1, "CI"[i % 2], meta) for i in range(2)]
    )
    meta = syn.record("single_worker", SIM, [syn.step(0, 2, SIM[2])])
    syn.write_log(d, "gsm8k", "single_worker", {"pool": "sim", "worker": 2}, [syn.sample("g0", 1, "C", meta)])


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli")
    write_logs(root / "logs")
    assert main(["build", "--logs", str(root / "logs"), "--out", str(root / "out")]) == 0
    return root


@pytest.mark.slow
def test_build_writes_tables_missing_cells_plots_and_page(built):
    out = built / "out"
    tables = (out / "tables.md").read_text()
    assert "SIMULATION: pool sim" in tables and "local pool local" in tables
    assert "Benchmarks the paper does not report" in tables and "GSM8K" not in tables  # task name as is
    assert "| conductor [conductor smollm2-135m] |" in tables
    # two epochs: conductor math500 epoch 1 scores I,C,I and epoch 2 C,I,C: every question is right
    # once, so the standard error clustered by question is 0 (over the epochs' means: 16.67)
    assert "50.00 ± 0.00 (n=3x2)" in tables
    local7 = (out / "tables" / "table7-local.md").read_text()
    assert "unknown (2/2 unpriced)" in local7
    long = pd.read_csv(out / "tables-long.csv")
    assert set(long["pool"]) == {"sim", "local"} and long["paper"].isna().all()  # nothing beside the paper
    gaps = (out / "missing.md").read_text()
    assert "python -m solvers.matrix --tasks livecodebench,mmlu,rlpr --pool sim" in gaps
    assert "--log-dir " + str(built / "logs") in gaps
    names = sorted(p.name for p in (out / "plots").glob("*.png"))
    assert "sim-accuracy-cost.png" in names and "local-accuracy-cost.png" in names
    page = (out / "index.html").read_text()
    # the benchmark the paper does not report (a user's own task) is the pool's first table
    sim = page[page.index("<h2>SIMULATION: pool sim") :]
    assert sim.index('id="table-benchmarks-the-paper-does-not-report') < sim.index('id="table-table-1-')
    assert page.count("<table") >= 9 + 9  # the pools' tables and the paper's reference tables
    for src in re.findall(r'<img src="([^"]+)"', page):
        assert (out / src).is_file()
    assert "python -m reports build --logs" in page  # provenance: the command that built it


@pytest.mark.skipif(browser() is None, reason="no chromium on PATH")
def test_built_page_renders_in_headless_chromium(built):
    page = built / "out" / "index.html"
    result = render_check(page, browser())
    pngs = sorted((built / "out" / "plots").glob("*.png"))
    tables = len(result["tables"])
    assert tables > 18
    assert problems(page, result, pngs, tables) == []


def test_an_empty_log_dir_builds_the_papers_numbers(tmp_path):
    from reports.build import build

    (tmp_path / "empty").mkdir()
    out = tmp_path / "out-empty"
    build(tmp_path / "empty", out)
    assert "No logs were found" in (out / "missing.md").read_text()
    page = (out / "index.html").read_text()
    assert "The paper&#x27;s numbers" in page or "The paper's numbers" in page


FIX = "fix: pass the directory your evals wrote to (`inspect eval --log-dir`, default ./logs; the matrix runner's: "


@pytest.mark.parametrize("command", ["build", "reproduce"])
def test_a_missing_or_empty_log_dir_is_refused_in_one_line(tmp_path, capsys, command):
    (tmp_path / "empty").mkdir()
    empty = "holds no Inspect eval log (none was written there yet)"  # was: exit 0 and a page of no runs
    for logs, problem in (("lgos", "is not a directory"), ("empty", empty)):
        assert main([command, "--logs", str(tmp_path / logs), "--out", str(tmp_path / "o")]) == 1
        assert capsys.readouterr().err == f"error: --logs {tmp_path / logs} {problem}; {FIX}logs/baselines)\n"
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("options", "error"),
    [
        (["--tasks", "gpqa,math5000"], "no task file tasks/math5000.py; use the file name of a bundled task"),
        (["--epochs", "0"], "--epochs 0: give an integer >= 1"),  # was dropped: one epoch ran
        (["--limit", "-3"], "--limit -3: give an integer >= 1"),
        (["--pool", "sim-scriptd"], "no pool file"),
        (["--methods", "conductr"], "unknown method(s) ['conductr']"),
    ],
)
@pytest.mark.parametrize("pool", [["--pool", "sim-scripted"], []], ids=["pool", "default-plan"])
def test_reproduce_refuses_a_mistake_in_one_line_before_any_eval_runs(tmp_path, capsys, options, error, pool):
    runs = tmp_path / "runs"
    argv = ["reproduce", *pool, "--log-dir", str(runs), "--out", str(tmp_path / "o"), *options]
    assert main(argv) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"error: {error}") and err.count("\n") == 1, out + err  # was 2-3 lines
    assert not runs.exists() and not (tmp_path / "o").exists()


@pytest.mark.slow
def test_reproduce_with_logs_runs_nothing_and_help_works(built, tmp_path):
    assert main(["reproduce", "--logs", str(built / "logs"), "--out", str(tmp_path / "o")]) == 0
    assert (tmp_path / "o" / "index.html").is_file()
    done = run_command([sys.executable, "-m", "reports", "build", "--help"])
    assert done.returncode == 0 and "--training-runs" in done.stdout


@pytest.mark.slow
def test_training_runs_get_their_own_section(built, tmp_path):
    run = write_run(tmp_path / "runs" / "tiny", [rollout(s, reward=s / 3) for s in range(3)])
    out = tmp_path / "o"
    assert main(["build", "--logs", str(built / "logs"), "--out", str(out), "--training-runs", str(run)]) == 0
    page = (out / "index.html").read_text()
    section = page[page.index("<h2>Training runs</h2>") :]
    section = section[: section.index("</section>")]
    assert 'src="plots/train-tiny-curves.png"' in section
    assert "train-tiny" not in page[: page.index("<h2>Training runs</h2>")]  # not inside a pool's section


def test_load_training_reads_a_run_with_the_plots_parser(tmp_path):
    from reports.frame import load_training

    run = write_run(tmp_path / "run", [rollout(0), rollout(1, parsed=False)])
    rows, info = load_training(run)
    assert len(rows) == 2 and info["simulated"] is True


@pytest.mark.slow
def test_an_unreadable_log_is_skipped_and_named(built, tmp_path, capsys):
    import shutil

    logs = tmp_path / "logs"
    shutil.copytree(built / "logs", logs)
    (logs / "99999_math500_broken.eval").write_bytes(b"not a zip")
    assert main(["build", "--logs", str(logs), "--out", str(tmp_path / "o")]) == 0
    err = capsys.readouterr().err
    assert "skipping unreadable log" in err and "99999_math500_broken.eval" in err
    assert "| conductor [conductor smollm2-135m] |" in (tmp_path / "o" / "tables.md").read_text()


@pytest.mark.slow
def test_a_pool_file_is_named_by_its_stem_never_its_host_path(tmp_path):
    """Logs whose pool option is a pool file's path: every table, CSV, command, plot and the page name the
    pool by the file's stem, and missing.md says the name is not a bundled pool."""
    pool = "/home/alice/secret/pools/mine.yaml"
    for solver, options, w in (("single_worker", {"pool": pool, "worker": 0}, 0), ("conductor", {"pool": pool}, 1)):
        meta = syn.record(solver, SIM, [syn.step(0, w, SIM[w])])
        syn.write_log(tmp_path / "logs", "math500", solver, options, [syn.sample("q0", 1, "C", meta)])
    assert main(["build", "--logs", str(tmp_path / "logs"), "--out", str(tmp_path / "out")]) == 0
    written = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert [str(p) for p in written if "alice" in p.name] == []
    assert [str(p) for p in written if p.suffix != ".png" and "alice" in p.read_text()] == []
    gaps = (tmp_path / "out" / "missing.md").read_text()
    assert "SIMULATION: pool mine (" in gaps and "-S pool=mine " in gaps
    assert "pool mine is not bundled: the report names a pool file by its stem" in gaps
    assert set(pd.read_csv(tmp_path / "out" / "tables-long.csv")["pool"]) == {"mine"}
