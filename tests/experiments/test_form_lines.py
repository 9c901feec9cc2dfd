"""The form-line table of a seed sweep's rollouts (experiments/seeds/form_lines.py)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("pandas")

from experiments.seeds.form_lines import form_table, line_of, main, read_rollouts  # noqa: E402

VALUE = "The question asks for a value: 0 answers first.\nmodel_id = [0]"
CHOICE = "The question is multiple choice: 1 answers first.\nmodel_id = [1]"


@pytest.mark.parametrize(("completion", "line"), [
    (VALUE, "value"),
    (CHOICE, "choice"),
    ("model_id = [0]\nThe question asks for a value:", "none"),  # only the first line counts
    ("", "none"),
    (None, "none"),
])  # fmt: skip
def test_line_of_reads_the_first_line(completion, line):
    assert line_of(completion) == line


def write_run(folder, rows):
    run = folder / "seed-7"
    run.mkdir(parents=True)
    (run / "rollouts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return run


def rollout(step, item, domain, completion):
    return {"step": step, "item_id": item, "domain": domain, "completion": completion, "reward": 1.0}


def test_form_table_counts_right_and_other_lines_and_mixed_groups(tmp_path):
    run = write_run(tmp_path, [
        rollout(0, "m1", "math", VALUE), rollout(0, "m1", "math", CHOICE),  # a mixed group
        rollout(0, "c1", "mmlu", CHOICE), rollout(0, "c1", "mmlu", CHOICE),
        rollout(2, "m2", "math", CHOICE), rollout(2, "m2", "math", CHOICE),  # one line, the wrong one
        rollout(2, "c2", "mmlu", "model_id = [2]"), rollout(2, "c2", "mmlu", CHOICE),
    ])  # fmt: skip
    table = form_table(read_rollouts(run), every=2).set_index(["domain", "steps"])
    assert table.loc[("math", "0-0")].to_dict() == {
        "rollouts": 2, "right form": 1, "other form": 1, "no line": 0, "groups": 1, "groups of mixed lines": 1,
    }  # fmt: skip
    assert table.loc[("math", "2-2"), "other form"] == 2 and table.loc[("math", "2-2"), "groups of mixed lines"] == 0
    assert table.loc[("mmlu", "2-2"), "no line"] == 1 and table.loc[("mmlu", "2-2"), "right form"] == 1
    assert table.loc[("mmlu", "0-0"), "right form"] == 2


def test_main_refuses_a_folder_without_rollouts(tmp_path):
    with pytest.raises(SystemExit, match="no seed-S/rollouts.jsonl"):
        main([str(tmp_path)])


def test_main_prints_a_table_per_seed(tmp_path, capsys):
    write_run(tmp_path, [rollout(0, "m1", "math", VALUE)])
    main([str(tmp_path), "--every", "1"])
    out = capsys.readouterr().out
    assert "seed-7" in out and "| math | 0-0 | 1 | 1 | 0 | 0 | 1 | 0 |" in out


def write_held_out(logs, conductor: str | None, task: str, completions):
    from inspect_ai.model import ModelConfig

    from reports import synthetic as syn

    rows = []
    for i, completion in enumerate(completions):
        meta = syn.record("conductor", ["sim/math-strong", "sim/choice-strong"], [syn.step(0, 0, "sim/math-strong")],
                          conductor=conductor)  # fmt: skip
        meta["round"]["completion"] = completion
        rows.append(syn.sample(f"{task}{i}", 1, "C", meta))
    roles = {"conductor": ModelConfig(model=conductor)} if conductor else None
    syn.write_log(logs, task, "conductor", {"pool": "sim"}, rows, roles=roles)


def test_held_out_lines_count_each_conductors_lines_per_domain(tmp_path, capsys):
    logs = tmp_path / "logs"
    write_held_out(logs, "hf/runs/sweep/seed-7", "math500", [VALUE, VALUE, CHOICE, None])
    write_held_out(logs, "hf/runs/sweep/seed-7", "mmlu", [CHOICE, CHOICE])
    write_held_out(logs, "hf/runs/sweep/seed-7/warmup", "math500", [VALUE])
    write_held_out(logs, None, "math500", [CHOICE])  # a single worker's eval: no conductor role, left out
    main([str(tmp_path), "--held-out"])
    table = capsys.readouterr().out
    assert "| seed-7 | math | 4 | 2 | 1 | 1 |" in table
    assert "| seed-7 | mmlu | 2 | 2 | 0 | 0 |" in table
    assert "| warmup | math | 1 | 1 | 0 | 0 |" in table
    assert len(table.strip().splitlines()) == 5  # header, rule and the three rows


def test_held_out_without_a_conductor_eval_is_refused(tmp_path):
    write_held_out(tmp_path / "logs", None, "math500", [CHOICE])
    with pytest.raises(SystemExit, match="no held-out eval of a conductor"):
        main([str(tmp_path), "--held-out"])
