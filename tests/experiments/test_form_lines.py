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
