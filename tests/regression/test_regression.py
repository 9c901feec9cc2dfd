"""The regression gate's pure logic on hand-made numbers: metrics from sample records,
tolerances, the readable diff, baseline checks and rewrites, the scripted conductor."""

from __future__ import annotations

import copy
import json

import pytest

from regression.compare import (
    BaselineError,
    SampleRecord,
    aggregate,
    allowed_change,
    compare,
    failed_steps,
    report,
    updated_baseline,
)
from solvers.workflow import parse_workflow
from workers.scripted_workflows import prompt_parts, scripted_completion

TOLERANCES = {
    "sim": {
        "why": "deterministic",
        "metrics": {"accuracy": {"abs": 0}, "calls": {"abs": 0}, "input_tokens": {"rel": 0.02}},
    },
    "local": {"why": "loose", "metrics": {"accuracy": {"abs": 0.5}, "input_tokens": {"rel": 0.5, "abs": 10}}},
}


def entry(group="sim", task="gsm8k", solver="conductor", **metrics):
    base = {"accuracy": 0.5, "calls": 3.0, "input_tokens": 1000.0, "cost_usd": 0.01}
    return {"group": group, "task": task, "solver": solver, "metrics": {**base, **metrics}}


def baseline(**entries):
    return {"tolerances": copy.deepcopy(TOLERANCES), "entries": entries}


def test_identical_run_passes():
    b = baseline(**{"sim/gsm8k/conductor": entry()})
    assert compare(b, {"sim/gsm8k/conductor": entry()}) == []


def test_relative_tolerance_passes_within_and_fails_beyond():
    b = baseline(**{"sim/gsm8k/conductor": entry()})
    assert compare(b, {"sim/gsm8k/conductor": entry(input_tokens=1019.0)}) == []
    (diff,) = compare(b, {"sim/gsm8k/conductor": entry(input_tokens=1021.0)})
    assert (diff.key, diff.metric, diff.old, diff.new) == ("sim/gsm8k/conductor", "input_tokens", 1000.0, 1021.0)
    assert diff.allowed == pytest.approx(20.0)


def test_zero_tolerance_fails_on_any_accuracy_change_either_way():
    b = baseline(**{"sim/gsm8k/conductor": entry()})
    for new in (0.375, 0.625):
        (diff,) = compare(b, {"sim/gsm8k/conductor": entry(accuracy=new)})
        assert diff.metric == "accuracy" and diff.allowed == 0


def test_group_tolerance_applies_per_entry():
    b = baseline(**{"sim/gsm8k/conductor": entry(), "local/gpqa/conductor": entry(group="local", task="gpqa")})
    run = {"sim/gsm8k/conductor": entry(), "local/gpqa/conductor": entry(group="local", task="gpqa", accuracy=0.0)}
    assert compare(b, run) == []  # local allows 0.5
    run["local/gpqa/conductor"] = entry(group="local", task="gpqa", input_tokens=1600.0)
    (diff,) = compare(b, run)
    assert diff.key == "local/gpqa/conductor" and diff.allowed == pytest.approx(500.0)


def test_abs_is_a_floor_under_rel():
    assert allowed_change(4.0, {"rel": 0.5, "abs": 10}) == 10
    assert allowed_change(100.0, {"rel": 0.5, "abs": 10}) == 50
    assert allowed_change(100.0, None) == 0


def test_metric_without_tolerance_must_be_equal():
    b = baseline(**{"sim/gsm8k/conductor": entry()})
    (diff,) = compare(b, {"sim/gsm8k/conductor": entry(cost_usd=0.0100001)})
    assert diff.metric == "cost_usd"


def test_none_equals_only_none():
    b = baseline(**{"sim/gsm8k/conductor": entry(cost_usd=None)})
    assert compare(b, {"sim/gsm8k/conductor": entry(cost_usd=None)}) == []
    (diff,) = compare(b, {"sim/gsm8k/conductor": entry(cost_usd=0.5)})
    assert (diff.old, diff.new, diff.allowed) == (None, 0.5, None)


def test_missing_and_new_entries_fail():
    b = baseline(**{"sim/gsm8k/conductor": entry()})
    diffs = compare(b, {"sim/mmlu/conductor": entry(task="mmlu")})
    assert {(d.key, d.old) for d in diffs} == {
        ("sim/gsm8k/conductor", "in the baseline"),
        ("sim/mmlu/conductor", "not in the baseline"),
    }


def test_report_names_task_solver_metric_and_how_to_accept():
    b = baseline(**{"sim/gsm8k/single_worker[worker=3]": entry(solver="single_worker")})
    diffs = compare(b, {"sim/gsm8k/single_worker[worker=3]": entry(solver="single_worker", accuracy=0.25, calls=4.0)})
    text = report(diffs, 1, "regression/baseline.json")
    assert "FAILED, 2 difference(s)" in text
    assert "sim/gsm8k/single_worker[worker=3]  accuracy: 0.5 -> 0.25 (-0.25; tolerance +-0)" in text
    assert "sim/gsm8k/single_worker[worker=3]  calls: 3 -> 4 (+1; tolerance +-0)" in text
    assert "nox -s regression -- --update" in text
    assert report([], 3, "b.json") == "regression gate: OK (3 entries within tolerance of b.json)"


@pytest.mark.parametrize(
    "bad, problem",
    [
        ({"entries": {}}, "no 'tolerances'"),
        ({"tolerances": {}}, "no 'entries'"),
        ({"tolerances": {"sim": {"metrics": {"accuracy": {"abs": -1}}}}, "entries": {}}, "accuracy.abs must be"),
        ({"tolerances": {"sim": {"metrics": {"accuracy": {"pct": 1}}}}, "entries": {}}, "'abs' and/or 'rel'"),
        ({"tolerances": {"sim": {"metrics": {}}}, "entries": {"k": {"group": "gpu", "metrics": {}}}}, "'gpu'"),
    ],
)
def test_bad_baseline_is_named(bad, problem):
    with pytest.raises(BaselineError, match=problem):
        compare(bad, {})


def test_aggregate_means_errors_and_unknown_cost():
    rows = [
        SampleRecord(
            1.0,
            False,
            {
                "parsed": True,
                "input_tokens": 100,
                "output_tokens": 10,
                "calls": 2,
                "worker_cost_usd": 0.5,
                "cost_usd": 0.5,
            },
        ),
        SampleRecord(1.0, True, {"parsed": False, "input_tokens": 50, "calls": 1, "cost_usd": None}),
        SampleRecord(
            None, False, {"parsed": True, "input_tokens": 0, "calls": 3, "worker_cost_usd": 0.25, "cost_usd": 0.25}
        ),
        SampleRecord(0.0, False, {}),
    ]
    m = aggregate(rows)
    assert m["samples"] == 4 and m["errors"] == 1
    assert m["accuracy"] == 0.25  # the errored and the unscored sample count as wrong
    assert m["parsed"] == 0.5
    assert m["input_tokens"] == 37.5 and m["output_tokens"] == 2.5 and m["calls"] == 1.5
    assert m["worker_cost_usd"] == pytest.approx(0.1875)
    assert m["cost_usd"] is None
    with pytest.raises(ValueError, match="no samples"):
        aggregate([])


def test_failed_steps_counts_nested_rounds():
    nested = {"steps": [{"error": "timeout"}, {"error": None}]}
    record = {"steps": [{"error": "SimError: x"}, {"error": None, "round": nested}, {"error": None}]}
    assert failed_steps(record) == 2
    assert failed_steps(None) == 0


def test_update_keeps_edited_tolerances_and_replaces_entries():
    old = baseline(**{"sim/gsm8k/conductor": entry(accuracy=0.1)})
    old["tolerances"]["sim"]["metrics"]["accuracy"] = {"abs": 0.2}
    defaults = {**copy.deepcopy(TOLERANCES), "gpu": {"why": "new", "metrics": {}}}
    new = updated_baseline(old, {"sim/gsm8k/conductor": entry()}, defaults, "about")
    assert new["tolerances"]["sim"]["metrics"]["accuracy"] == {"abs": 0.2}
    assert "gpu" in new["tolerances"] and new["about"] == "about"
    assert new["entries"]["sim/gsm8k/conductor"]["metrics"]["accuracy"] == 0.5


def conductor_prompt(question: str, n: int) -> str:
    models = "\n".join(f"Model {i}: worker {i}" for i in range(n))
    return f"Example.\nQUESTION:\nnot this one\n\nMore text.\nQUESTION:\n{question}\n\nMODELS:\n{models}\n"


def test_scripted_conductor_reads_the_last_question_and_the_workers():
    assert prompt_parts(conductor_prompt("What is 2+2?", 4)) == ("What is 2+2?", 4)
    assert prompt_parts("no markers") == ("", 1)


def test_scripted_conductor_is_deterministic_and_covers_every_shape():
    shapes = {}
    for i in range(200):
        prompt = conductor_prompt(f'Question {i}: \\frac{{1}}{{2}} + "x"?', 4)
        text = scripted_completion(prompt)
        assert text == scripted_completion(prompt)
        shape = int(text.split("shape ")[1].split(".")[0])
        shapes.setdefault(shape, set()).add(parse_workflow(text, range(4)).reason)
    assert set(shapes) == set(range(8))
    assert shapes[7] == {"unequal_lengths"}
    assert all(shapes[s] == {None} for s in range(7))


def test_baseline_json_round_trips_with_flat_objects_on_one_line():
    from regression.compare import to_json

    b = baseline(**{"sim/gsm8k/conductor": entry(cost_usd=None)})
    text = to_json(b)
    assert json.loads(text) == b
    assert '"metrics": {"accuracy": 0.5, "calls": 3.0, "input_tokens": 1000.0, "cost_usd": null}' in text
