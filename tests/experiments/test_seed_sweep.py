"""The seed sweep (experiments/seeds/sweep.py) and the shared held-out protocol (experiments/heldout.py):
the commands of a dry run, --seeds parsing, the table from hand-made rows (mean, sd, the routes-both
rule, k of n, a failed seed), the resume/skip rule with stand-in commands, and the device that
train.py records. Nothing trains here."""

from __future__ import annotations

import json
import shlex
import sys
from types import SimpleNamespace

import pandas as pd
import pytest
from installed import needs

from experiments.heldout import conductor_options, sample_rows
from experiments.seeds.sweep import (
    best_singles,
    main,
    markdown_report,
    parse_seeds,
    routes,
    run_facts,
    seed_command,
    seed_table,
    summary,
    summary_lines,
    thread_env,
    train_all,
    warmup_facts,
)

pytestmark = needs("trl")

SMOKE = "training/recipes/cpu-smoke.yaml"


def test_dry_run_prints_one_command_per_seed_and_the_evals(tmp_path, capsys):
    out = tmp_path / "seeds"
    assert main([SMOKE, "--seeds", "0-2,5", "--out", str(out), "--dry_run", "--max_steps", "3"]) is None
    lines = capsys.readouterr().out.splitlines()
    commands = [shlex.split(line.removeprefix("would run: ")) for line in lines if line.startswith("would run: ")]
    assert [c[c.index("--seed") + 1] for c in commands] == ["0", "1", "2", "5"]
    for seed, command in zip([0, 1, 2, 5], commands, strict=True):
        assert command[1].endswith("training/train.py") and command[2] == SMOKE
        assert command[command.index("--output_dir") + 1] == str(out / f"seed-{seed}")
        assert command[command.index("--max_steps") + 1] == "3" and "--overwrite_output_dir" not in command
    assert not out.exists()  # nothing ran
    plan = [line.strip() for line in lines if line.strip().startswith("seed ")]
    assert len(plan) == 4 and all(f"conductor=hf/{out}/seed-{s} " in p for s, p in zip([0, 1, 2, 5], plan, strict=True))
    math, mmlu = (shlex.split(part) for part in plan[0].removeprefix("seed 0: ").split(" && "))
    assert math[:3] == ["inspect", "eval", "tasks/math500.py"] and "-T" not in math
    assert mmlu[:5] == ["inspect", "eval", "tasks/mmlu.py", "-T", "split=test"]
    from training.options import parse

    script, config, _ = parse([SMOKE])
    given = dict(math[i + 1].split("=", 1) for i, a in enumerate(math) if a == "-S")
    assert given == {k: str(v) for k, v in conductor_options(script, config, 0.1).items()}  # the in-process eval's
    assert math[math.index("--limit") + 1] == "40" and math[math.index("--seed") + 1] == "0"


def test_a_shared_warmup_runs_once_and_every_seed_starts_from_it(tmp_path, capsys):
    out = tmp_path / "seeds"
    assert main(["training/recipes/sim-routing.yaml", "--seeds", "3-4", "--out", str(out), "--shared_warmup",
                 "--dry_run"]) is None  # fmt: skip
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("would run: ")]
    warmup, *seeds = (shlex.split(line.removeprefix("would run: ")) for line in lines)
    assert warmup[warmup.index("--seed") + 1] == "3" and warmup[warmup.index("--warmup_only") + 1] == "true"
    assert warmup[warmup.index("--output_dir") + 1] == str(out / "warmup-run")
    assert [c[c.index("--seed") + 1] for c in seeds] == ["3", "4"]
    for command in seeds:
        assert command[command.index("--model_name_or_path") + 1] == str(out / "warmup-run" / "warmup")
        assert command[command.index("--format_warmup_steps") + 1] == "0"
    model = out / "warmup-run" / "warmup"  # a saved warm-up is not run again
    model.mkdir(parents=True)
    (model / "config.json").write_text("{}")
    main(["training/recipes/sim-routing.yaml", "--seeds", "3", "--out", str(out), "--shared_warmup", "--dry_run"])
    printed = capsys.readouterr().out
    assert printed.startswith("finished, skipped: ") and "--overwrite_output_dir" not in printed.splitlines()[0]
    (model / "config.json").unlink()  # an unfinished warm-up run is moved aside by train.py
    main(["training/recipes/sim-routing.yaml", "--seeds", "3", "--out", str(out), "--shared_warmup", "--dry_run"])
    assert capsys.readouterr().out.splitlines()[0].endswith("--overwrite_output_dir true")


@pytest.mark.parametrize(("args", "match"), [
    (["--shared_warmup", "--format_warmup_steps", "0"], "sets --model_name_or_path and --format_warmup_steps"),
    (["--shared_warmup", "--model_name_or_path=x"], "drop --shared_warmup / --warmup"),
    (["--warmup", "nowhere"], "--warmup nowhere: no model there"),
    (["--shared_warmup", "--warmup", "x"], "not allowed with argument"),
])  # fmt: skip
def test_shared_warmup_refusals(args, match, tmp_path, capsys):
    with pytest.raises(SystemExit, match=match if "allowed" not in match else None):
        main(["training/recipes/sim-routing.yaml", "--out", str(tmp_path), "--dry_run", *args])
    if "allowed" in match:  # argparse's own refusal of both flags
        assert match in capsys.readouterr().err


def test_a_recipe_without_warmup_cannot_share_one(tmp_path):
    recipe = tmp_path / "no-warmup.yaml"
    text = open(SMOKE).read()
    recipe.write_text(text.replace("format_warmup_steps: 6", "format_warmup_steps: 0"))
    with pytest.raises(SystemExit, match="has no format warm-up"):
        main([str(recipe), "--out", str(tmp_path / "seeds"), "--dry_run", "--shared_warmup"])


def test_parallel_trainings_share_the_cores(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert thread_env(1, cores=2) is None  # one at a time: torch's own default
    assert thread_env(2, cores=2)["OMP_NUM_THREADS"] == "1" and thread_env(3, cores=16)["OMP_NUM_THREADS"] == "5"
    assert thread_env(4, cores=2)["OMP_NUM_THREADS"] == "1"
    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    assert thread_env(2, cores=2) is None  # the user's setting stands


def test_warmup_facts_name_the_model_seed_and_time(tmp_path):
    model = tmp_path / "warmup-run" / "warmup"
    model.mkdir(parents=True)
    assert "(seed 3, on a device not recorded)" in warmup_facts(model, 3)  # no run_info.json
    info = {"device": "cpu", "seed": 0, "warmup": {"wall_s": 1620.0}}
    (model.parent / "run_info.json").write_text(json.dumps(info))
    line = warmup_facts(model, 5)
    assert f"{model} (seed 0, 27.0 min, on cpu)" in line and "vary GRPO only" in line


@pytest.mark.parametrize(("text", "seeds"), [("0-7", list(range(8))), ("0,2,5", [0, 2, 5]), ("0-2, 6", [0, 1, 2, 6]),
                                             ("3", [3])])  # fmt: skip
def test_seeds_are_parsed(text, seeds):
    assert parse_seeds(text) == seeds


@pytest.mark.parametrize("text", ["", "7-0", "a", "0-", "-1", "1,1", "0-3,2", "0.5", "0-99999"])
def test_bad_seeds_are_refused(text):
    with pytest.raises(SystemExit, match="--seeds"):
        parse_seeds(text)


@pytest.mark.parametrize(("args", "match"), [(["--seed", "3"], "--seed: the sweep sets --seed and --output_dir"),
                                             (["--output_dir=x"], "use --seeds and --out"),
                                             (["--parallel", "0"], "--parallel 0: give at least 1")])  # fmt: skip
def test_what_the_sweep_sets_is_refused(args, match, tmp_path):
    with pytest.raises(SystemExit, match=match):
        main([SMOKE, "--out", str(tmp_path), "--dry_run", *args])


def rows(label, task, outcomes):
    """Hand-made sample rows: (workers used, score) per sample."""
    return [{"label": label, "task": task, "score": score, "cost_usd": 0.001, "agent_calls": 1, "workers_used": used}
            for used, score in outcomes]  # fmt: skip


def single(label, math, mmlu):
    return rows(label, "math500", [([label.rsplit("/")[-1]], s) for s in math]) + rows(
        label, "mmlu", [([label.rsplit("/")[-1]], s) for s in mmlu]
    )


SINGLES = ["sim/math-strong", "sim/choice-strong", "sim/premium"]
HAND_MADE = pd.DataFrame(
    single("sim/math-strong", [1, 1, 1, 1], [1, 0, 0, 0])  # MATH 1.00, MMLU 0.25
    + single("sim/choice-strong", [1, 0, 0, 0], [1, 1, 1, 1])  # MATH 0.25, MMLU 1.00
    + single("sim/premium", [1, 1, 1, 0], [1, 1, 1, 0])  # 0.75, 0.75
    # seed 0 routes both: math-strong on MATH, choice-strong on MMLU, all right -> 1.000
    + rows("seed 0", "math500", [(["math-strong"], 1)] * 4)
    + rows("seed 0", "mmlu", [(["choice-strong"], 1)] * 4)
    # seed 1: premium everywhere; one MMLU sample wrote no workflow (no score) -> 0.75, 0.50: 0.625
    + rows("seed 1", "math500", [(["premium"], 1)] * 3 + [(["premium"], 0)])
    + rows("seed 1", "mmlu", [(["premium"], 1)] * 2 + [(["premium"], 0), ([], None)])
    # seed 3 routes MATH only (math-strong 3 of 4, premium 1 of 4; MMLU premium) -> 0.75, 1.00: 0.875
    + rows("seed 3", "math500", [(["math-strong"], 1)] * 2 + [(["math-strong"], 0), (["premium"], 1)])
    + rows("seed 3", "mmlu", [(["premium"], 1)] * 4)
)
FACTS = {0: {"wall_s": 210.0, "device": "cuda: NVIDIA H100 80GB HBM3"}, 1: {"wall_s": 5700.0, "device": "cpu"},
         3: {"wall_s": 216.0, "device": "not recorded"}}  # fmt: skip


def test_table_mean_sd_routes_and_a_failed_seed():
    best = best_singles(HAND_MADE, SINGLES)
    assert best == {"math500": ({"math-strong"}, 1.0), "mmlu": ({"choice-strong"}, 1.0)}
    failed = {2: "training failed (exit 1, log runs/seeds/seed-2/train.log)"}
    table = seed_table(HAND_MADE, [0, 1, 2, 3], failed, FACTS, best).set_index("seed")
    assert table["both"].round(4).to_dict() == pytest.approx({0: 1.0, 1: 0.625, 2: float("nan"), 3: 0.875}, nan_ok=True)
    assert table.loc[1, "MMLU"] == 0.5 and table.loc[3, "MATH-500"] == 0.75 and table.loc[0, "n"] == 8
    assert table.loc[0, "worker MATH-500"] == "math-strong 1.00" and table.loc[0, "worker MMLU"] == "choice-strong 1.00"
    assert table.loc[3, "worker MATH-500"] == "math-strong 0.75, premium 0.25"
    assert table.loc[1, "worker MMLU"] == "premium 0.75"  # the sample without a workflow uses no worker
    assert table["routes both"].drop(2).to_dict() == {0: True, 1: False, 3: False}
    assert table.loc[1, "wall (min)"] == 95.0 and table.loc[0, "device"] == "cuda: NVIDIA H100 80GB HBM3"
    assert table.loc[2, "status"] == failed[2] and table.loc[2, ["MATH-500", "both", "routes both"]].isna().all()
    stats = summary(table.reset_index(), 0.93)
    assert stats["n"] == 3 and stats["failed"] == [2] and stats["reach"] == 1 and stats["routes"] == 1
    assert stats["mean"] == pytest.approx(2.5 / 3) and stats["sd"] == pytest.approx(0.190941, abs=1e-6)  # sample sd
    text = markdown_report(table.reset_index(), summary_lines(stats, best))
    assert "over 3 evaluated seed(s): 0.833 ± 0.191." in text and "1 of 3 seeds >= 0.93; 1 of 3 route both" in text
    assert "left out of the mean and the counts: seed(s) 2." in text
    assert "MATH-500 math-strong 1.000; MMLU choice-strong 1.000" in text
    assert "| 3 | ok | 0.750 | 1.000 | 0.875 | 8 | math-strong 0.75, premium 0.25 | premium 1.00 | False |" in text


def test_one_evaluated_seed_has_no_spread():
    table = seed_table(HAND_MADE, [0], {}, FACTS, best_singles(HAND_MADE, SINGLES))
    assert summary_lines(summary(table, 0.93), {})[0].endswith("over 1 evaluated seed(s): 1.000.")


@pytest.mark.parametrize(("shares", "best", "expected"), [
    ({"math-strong": 1.0}, {"math-strong"}, True),
    ({"math-strong": 0.9, "premium": 0.1}, {"math-strong"}, True),  # exactly 90%
    ({"math-strong": 0.57, "choice-strong": 0.43}, {"math-strong"}, False),  # a majority is not routing
    ({"math-strong": 0.8875, "premium": 0.1125}, {"math-strong"}, False),  # 71 of 80
    ({"premium": 0.9, "math-strong": 0.1}, {"math-strong"}, False),  # 90%, not to the best single worker
    ({"premium": 0.6, "math-strong": 0.35, "mediocre": 0.05}, {"math-strong", "premium"}, True),  # ties count together
    ({}, {"math-strong"}, False),  # no workflow
])  # fmt: skip
def test_routes_rule(shares, best, expected):
    assert routes(pd.Series(shares, dtype=float), best) is expected


def test_sample_rows_name_the_workers_of_the_workflow():
    from inspect_ai.log import EvalSample
    from inspect_ai.scorer import Score

    nested = {"steps": [{"model": "sim/premium"}, {"model": "sim/math-strong"}]}
    steps = [{"model": "sim/math-strong"}, {"model": "self", "round": nested}]
    meta = {"conductor": {"worker_cost_usd": 0.002, "agent_calls": 3, "round": {"steps": steps}}}
    samples = [EvalSample(id=1, epoch=1, input="q", target="4", metadata=meta, scores={"s": Score(value="C")}),
               EvalSample(id=2, epoch=1, input="q", target="4", metadata={}, scores={})]  # fmt: skip
    first, second = sample_rows("seed 0", "math500", samples)
    assert first == {"label": "seed 0", "task": "math500", "score": 1.0, "cost_usd": 0.002, "agent_calls": 3,
                     "workers_used": ["math-strong", "premium"]}  # fmt: skip
    assert second["score"] is None and second["workers_used"] == []


STAND_IN = """import json, pathlib, sys
code, finish, out = int(sys.argv[1]), sys.argv[2] == "finish", pathlib.Path(sys.argv[3])
out.mkdir(parents=True, exist_ok=True)
print("training", out.name)
if finish:
    (out / "run_info.json").write_text(json.dumps({"global_step": 2}))
sys.exit(code)
"""  # train.py's stand-in: prints, writes a finished run_info.json (when told) and exits with `code`


def fake_run(code: int, finish: bool, run) -> list[str]:
    return [sys.executable, "-c", STAND_IN, str(code), "finish" if finish else "stop", str(run)]


def test_finished_seeds_are_skipped_and_a_failing_seed_does_not_stop_the_others(tmp_path, capsys):
    out = tmp_path / "seeds"
    (out / "seed-0").mkdir(parents=True)
    (out / "seed-0" / "run_info.json").write_text(json.dumps({"global_step": 60, "wall_s": 200}))  # finished
    (out / "seed-1").mkdir()
    (out / "seed-1" / "run_info.json").write_text(json.dumps({"recipe": "x"}))  # stopped before its end
    assert "--overwrite_output_dir" not in seed_command(SMOKE, out, 0, [])  # finished: nothing to move
    assert seed_command(SMOKE, out, 1, [])[-2:] == ["--overwrite_output_dir", "true"]  # train.py moves it aside
    assert "--overwrite_output_dir" not in seed_command(SMOKE, out, 2, [])  # nothing there yet
    commands = {0: fake_run(3, False, out / "seed-0"), 1: fake_run(0, True, out / "seed-1"),
                2: fake_run(1, False, out / "seed-2"), 3: fake_run(0, False, out / "seed-3")}  # fmt: skip
    evaluated = []  # `then`: right after a seed trained to its end (a skipped seed is evaluated by the sweep later)
    failed = train_all(commands, out, parallel=2, dry_run=False, then=evaluated.append)
    assert evaluated == [1]
    printed = capsys.readouterr().out
    assert printed.startswith("finished, skipped: ")  # seed 0's command (exit 3) never ran
    assert set(failed) == {2, 3}  # 2 exits 1; 3 exits 0 without a finished run
    assert f"exit 1, log {out / 'seed-2' / 'train.log'}" in failed[2] and "exit 0" in failed[3]
    assert "training seed-2" in (out / "seed-2" / "train.log").read_text() and not list(out.glob("*.train.log"))
    assert (out / "seed-1" / "train.log").read_text().startswith("$ ") and not (out / "seed-0" / "train.log").exists()
    assert train_all(commands, out, parallel=1, dry_run=True) == {}
    assert run_facts(out / "seed-0") == {"wall_s": 200, "device": "not recorded"}  # from before train.py recorded it


def test_train_records_its_device(monkeypatch):
    import torch

    from training.run_info import device_name

    assert device_name(torch.device("cpu")) == "cpu"
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device: "NVIDIA H100 80GB HBM3")
    assert device_name(SimpleNamespace(type="cuda", index=0)) == "cuda: NVIDIA H100 80GB HBM3"


@pytest.mark.slow
def test_a_failed_seed_is_marked_written_and_named_at_exit(tmp_path, monkeypatch):
    import experiments.seeds.sweep as sweep

    log = tmp_path / "seed-1" / "train.log"
    monkeypatch.setattr(sweep, "train_all", lambda *a: {1: f"training failed (exit 1, log {log})"})
    evaluated = []

    def evaluate(method, tasks, logs, limit, seed):  # the hand-made rows instead of Inspect evals
        evaluated.append(method["label"])
        label = method["label"].replace("seed 2", "seed 3")  # seed 2 answers as seed 3 above
        return [{**row, "label": method["label"]} for row in HAND_MADE[HAND_MADE["label"] == label].to_dict("records")]

    monkeypatch.setattr(sweep, "evaluate", evaluate)
    monkeypatch.setattr(sweep, "single_workers", lambda pool: [{"label": label} for label in SINGLES])
    monkeypatch.setattr(sweep, "run_facts", lambda run: {"wall_s": 60.0, "device": "cpu"})
    out = tmp_path / "seeds"
    with pytest.raises(SystemExit, match=rf"failed: seed 1: training failed \(exit 1, log {log}\)"):
        main([SMOKE, "--seeds", "0-2", "--out", str(out)])
    assert evaluated == [*SINGLES, "seed 0", "seed 2"]  # the failed seed is not evaluated
    table = pd.read_csv(out / "seeds.csv").set_index("seed")
    assert table.loc[1, "status"].startswith("training failed") and table.loc[2, "both"] == 0.875
    assert "mean ± sample sd over 2 evaluated seed(s): 0.938 ± 0.088." in (out / "seeds.md").read_text()


def test_the_table_is_rebuilt_from_the_saved_rows_without_training_or_evaluating_a_seed(tmp_path, monkeypatch):
    import experiments.seeds.sweep as sweep

    evaluated = []

    def evaluate(method, tasks, logs, limit, seed):  # the hand-made rows instead of Inspect evals
        evaluated.append(method["label"])
        return HAND_MADE[HAND_MADE["label"] == method["label"]].to_dict("records")

    monkeypatch.setattr(sweep, "evaluate", evaluate)
    monkeypatch.setattr(sweep, "train_all", lambda *a: {})
    monkeypatch.setattr(sweep, "single_workers", lambda pool: [{"label": label} for label in SINGLES])
    monkeypatch.setattr(sweep, "run_facts", lambda run: {"wall_s": 60.0, "device": "cpu"})
    out = tmp_path / "seeds"
    main([SMOKE, "--seeds", "0-1", "--out", str(out)])  # in this process: each seed's rows saved as well
    first = (out / "seeds.md").read_text()
    (out / "seeds.md").unlink()
    evaluated.clear()
    monkeypatch.setattr(sweep, "train_all", lambda *a: pytest.fail("--table_only trained"))
    main([SMOKE, "--seeds", "0-1", "--out", str(out), "--table_only"])
    assert evaluated == SINGLES and (out / "seeds.md").read_text() == first
    (out / "seed-1" / "heldout-rows.json").unlink()  # a seed cut before its eval
    with pytest.raises(SystemExit, match=r"failed: seed 1: not evaluated \(no .*seed-1/heldout-rows.json\)"):
        main([SMOKE, "--seeds", "0-1", "--out", str(out), "--table_only"])
    table = pd.read_csv(out / "seeds.csv").set_index("seed")
    assert table.loc[1, "status"].startswith("not evaluated") and table.loc[0, "both"] == 1.0
    with pytest.raises(SystemExit, match="is no folder; fix: --out the folder of the seed-S runs"):
        main([SMOKE, "--seeds", "0-1", "--out", str(tmp_path / "typo"), "--table_only"])
    assert not (tmp_path / "typo").exists()


def test_a_bad_run_file_stops_the_sweep_before_anything_runs(tmp_path, monkeypatch):
    """A finished seed whose wall_s is text: refused when first read, not after every training and eval."""
    import experiments.seeds.sweep as sweep

    ran = []

    def evaluate(method, tasks, logs, limit, seed):  # the hand-made rows instead of Inspect evals
        ran.append(method["label"])
        return HAND_MADE[HAND_MADE["label"] == method["label"]].to_dict("records")

    monkeypatch.setattr(sweep, "train_all", lambda *a: ran.append("train") or {})
    monkeypatch.setattr(sweep, "evaluate", evaluate)
    monkeypatch.setattr(sweep, "single_workers", lambda pool: [{"label": label} for label in SINGLES])
    out = tmp_path / "seeds"
    for seed, wall in ((0, 210.0), (1, "95 min")):
        (out / f"seed-{seed}").mkdir(parents=True)
        (out / f"seed-{seed}" / "run_info.json").write_text(json.dumps({"global_step": 60, "wall_s": wall}))
    with pytest.raises(SystemExit, match=r"seed-1/run_info.json: field wall_s is '95 min'"):
        main([SMOKE, "--seeds", "0-1", "--out", str(out)])
    assert ran == []
    warm = tmp_path / "warm" / "warmup"  # a --warmup model whose run folder holds a bad file
    warm.mkdir(parents=True)
    (warm / "config.json").write_text("{}")
    (warm.parent / "run_info.json").write_text('{"seed": "0"}')
    with pytest.raises(SystemExit, match=r"warm/run_info.json: field seed is '0'"):
        main([SMOKE, "--seeds", "0", "--out", str(tmp_path / "other"), "--warmup", str(warm)])
    assert ran == []


@pytest.mark.slow
def test_run_file_text_utf8_cannot_hold_is_written_escaped(tmp_path, monkeypatch):
    """A run folder's device holding a lone surrogate (JSON's `\\udc80`): the sweep's table, CSV and the
    warm-up line are written with it escaped, not a UnicodeEncodeError after every training and eval."""
    import experiments.seeds.sweep as sweep

    monkeypatch.setattr(sweep, "train_all", lambda *a: {})
    monkeypatch.setattr(sweep, "evaluate", lambda method, *a: HAND_MADE[HAND_MADE["label"] == method["label"]]
                        .to_dict("records"))  # fmt: skip
    monkeypatch.setattr(sweep, "single_workers", lambda pool: [{"label": label} for label in SINGLES])
    out, warm = tmp_path / "seeds", tmp_path / "warm" / "warmup"
    for run, device in ((out / "seed-0", "gpu \\udc80 A"), (out / "seed-1", "\\ud800|x"), (warm.parent, "w \\udfff")):
        run.mkdir(parents=True, exist_ok=True)
        (run / "run_info.json").write_text(f'{{"global_step": 60, "wall_s": 60.0, "device": "{device}", "seed": 0}}')
    warm.mkdir()
    (warm / "config.json").write_text("{}")
    main([SMOKE, "--seeds", "0-1", "--out", str(out), "--warmup", str(warm)])
    text = (out / "seeds.md").read_text(encoding="utf-8")
    assert "| gpu \\\\udc80 A |" in text and "| \\\\ud800\\|x |" in text and "on w \\\\udfff)" in text
    table = pd.read_csv(out / "seeds.csv", encoding="utf-8").set_index("seed")
    assert table["device"].to_dict() == {0: "gpu \\udc80 A", 1: "\\ud800|x"}


def test_run_file_text_in_seeds_md_is_escaped(tmp_path):
    model = tmp_path / "warm|up" / "warmup"
    model.mkdir(parents=True)
    device = "cpu | injected |\n# heading <img src=x>"
    (model.parent / "run_info.json").write_text(json.dumps({"device": device, "seed": 2}))
    line = warmup_facts(model)
    assert "\n" not in line and " <img" not in line and " | injected" not in line and "warm|up" not in line
    assert "on cpu \\| injected \\| \\# heading \\<img src=x\\>)" in line and "warm\\|up" in line and "(seed 2" in line


ROWS_STAND_IN = """
import json, sys
rows, code = json.loads(sys.argv[1]), int(sys.argv[2])
if code == 0:
    open(sys.argv[sys.argv.index("--rows") + 1], "w").write(json.dumps(rows))
print("evaluating", flush=True)
sys.exit(code)
"""  # experiments.heldout's stand-in: writes the given rows where --rows says (on exit 0)


def test_parallel_seeds_are_evaluated_each_in_its_own_process(tmp_path, monkeypatch):
    import experiments.seeds.sweep as sweep

    children = []

    def process_command(recipe, extra, label, run, limit, seed, temperature, logs, rows):
        children.append((label, list(extra), limit))
        mine = [{**row, "label": label} for row in HAND_MADE[HAND_MADE["label"] == label.replace("seed 2", "seed 3")]
                .to_dict("records")]  # fmt: skip  # seed 2 answers as seed 3
        return [sys.executable, "-c", ROWS_STAND_IN, json.dumps(mine), "1" if label == "seed 1" else "0", "--rows",
                str(rows)]  # fmt: skip

    monkeypatch.setattr(sweep, "train_all", lambda *a: {})
    monkeypatch.setattr(sweep, "process_command", process_command)
    monkeypatch.setattr(sweep, "evaluate", lambda method, *a: HAND_MADE[HAND_MADE["label"] == method["label"]]
                        .to_dict("records"))  # fmt: skip  # the single workers, in this process
    monkeypatch.setattr(sweep, "single_workers", lambda pool: [{"label": label} for label in SINGLES])
    monkeypatch.setattr(sweep, "run_facts", lambda run: {"wall_s": 60.0, "device": "cuda: H100"})
    monkeypatch.setattr(sweep, "parallel_memory", lambda *a: "fits")
    monkeypatch.setattr("training.model_prep.resolve_model_path", lambda path: path)  # no GGUF conversion here
    out = tmp_path / "seeds"
    for seed in range(3):
        (out / f"seed-{seed}").mkdir(parents=True)
    with pytest.raises(SystemExit, match=r"failed: seed 1: evaluation failed \(exit 1, log .*seed-1/heldout.log\)"):
        main([SMOKE, "--seeds", "0-2", "--parallel", "3", "--out", str(out), "--limit", "4", "--max_steps", "2"])
    assert sorted(children) == [(f"seed {s}", ["--max_steps", "2"], 4) for s in range(3)]
    assert (out / "seed-1" / "heldout.log").read_text().endswith("\nevaluating\n")  # the command, then its output
    table = pd.read_csv(out / "seeds.csv").set_index("seed")
    assert table.loc[0, "both"] == 1.0 and table.loc[2, "both"] == 0.875
    assert table.loc[1, "status"].startswith("evaluation failed")


def test_the_held_out_process_takes_the_command_the_sweep_builds(tmp_path, monkeypatch):
    import experiments.heldout as heldout

    seen = {}

    def evaluate(method, tasks, logs, limit, seed):
        seen.update(label=method["label"], roles=method["roles"], logs=logs, limit=limit, seed=seed, tasks=len(tasks))
        return [{"label": method["label"], "task": "math500", "score": 1.0}]

    monkeypatch.setattr(heldout, "evaluate", evaluate)
    rows = tmp_path / "rows.json"
    command = heldout.process_command(SMOKE, ["--max_completion_length", "64"], "seed 3", tmp_path / "seed-3", 7, 2,
                                      0.1, tmp_path / "logs", rows)  # fmt: skip
    assert command[:3] == [sys.executable, "-m", "experiments.heldout"]
    heldout.main(command[3:])
    assert seen == {"label": "seed 3", "roles": {"conductor": f"hf/{tmp_path / 'seed-3'}"}, "logs": tmp_path / "logs",
                    "limit": 7, "seed": 2, "tasks": 2}  # fmt: skip
    assert json.loads(rows.read_text()) == [{"label": "seed 3", "task": "math500", "score": 1.0}]
