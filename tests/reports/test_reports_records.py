"""Per-sample fields and row identity (reports.records), from stored conductor metadata."""

from __future__ import annotations

import json

from reports import records as rec
from reports import synthetic as syn
from solvers import strategy as st

SIM = ["sim/math-strong", "sim/choice-strong", "sim/mediocre", "sim/premium"]


def test_sample_fields_from_a_recorded_workflow():
    steps = [syn.step(0, 1, SIM[1]), syn.step(1, 3, SIM[3], [0], subtask="Check step 0. " + "y" * 500)]
    meta = syn.record(
        "conductor",
        SIM,
        steps,
        conductor="local/smollm2-135m",
        cost=0.0042,
        tokens=(700, 90),
        settings={"few_shot": "ood"},
    )
    f = rec.sample_fields(meta)
    assert f["method"] == "conductor" and f["recorded"] and f["parsed"]
    assert (f["steps"], f["agent_calls"], f["calls"]) == (2, 2, 3)
    assert (f["input_tokens"], f["output_tokens"], f["cost_usd"]) == (700, 90, 0.0042)
    assert f["conductor_model"] == "local/smollm2-135m"
    assert f["strategy"] == st.REFINE and f["step_models"] == [SIM[1], SIM[3]] and f["nested_step_models"] == []
    graph = json.loads(f["graph"])
    assert [g["worker"] for g in graph] == [1, 3] and graph[1]["visible"] == [0]
    assert len(graph[1]["subtask"]) == rec.GRAPH_CHARS
    assert f["settings"] == {"few_shot": "ood"}


def test_unknown_cost_stays_unknown_and_missing_record_uses_model_usage():
    meta = syn.record("single_worker", SIM, [syn.step(0, 0, SIM[0])], cost=None)
    assert rec.sample_fields(meta)["cost_usd"] is None
    usage = {"a": {"input_tokens": 5, "output_tokens": 2}, "b": {"input_tokens": 1, "output_tokens": None}}
    bare = rec.sample_fields(None, usage)
    assert bare["recorded"] is False and bare["cost_usd"] is None and bare["agent_calls"] is None
    assert (bare["input_tokens"], bare["output_tokens"]) == (6, 2)
    assert bare["strategy"] == st.NO_WORKFLOW


def test_run_fields_key_label_pool_and_setting():
    paper = ["google/gemini-2.5-pro", "anthropic/claude-sonnet-4", "openai/gpt-5"]
    f = rec.run_fields(
        "single_worker", {"pool": "paper-constrained", "worker": 2, "max_tokens": 20480}, None, None, paper, None
    )
    assert f["key"] == "single_worker|max_tokens=20480|worker=2"
    assert f["label"] == "single_worker (max_tokens=20480, openai/gpt-5)"
    assert (f["pool"], f["pool_kind"], f["setting"]) == ("paper-constrained", "api", "constrained")
    # an option equal to the solver's default is not part of the identity; a changed one is
    f = rec.run_fields(
        "conductor",
        {"pool": "paper", "few_shot": "ood", "replace_workers": "openai/gpt-5"},
        None,
        {"few_shot": "ood", "replace_workers": None},
        paper,
        "openai/gpt-5",
    )
    assert f["key"] == "conductor|replace_workers=gpt-5" and f["setting"] == "unconstrained"
    assert f["conductor_short"] == "gpt-5"


def test_pool_kind_and_no_pool_means_default():
    assert rec.pool_kind(["local/a", "openai/b"]) == "local"
    assert rec.pool_kind(["sim/a", "local/b"]) == "simulated"
    assert rec.pool_kind(["openai/gpt-5"]) == "api" and rec.pool_kind([]) == "unknown"
    f = rec.run_fields("conductor", {}, None, None, ["sim/a"], None)
    assert f["pool"] == rec.DEFAULT_POOL and f["pool_kind"] == "simulated" and f["setting"] == ""
    assert rec.short("openai/gpt-5") == "gpt-5" and rec.short(None) == ""


def test_a_mixed_pool_is_headed_mixed_not_simulation():
    from reports.plots import pool_title
    from reports.tables import pool_heading

    f = rec.run_fields("conductor", {"pool": "half"}, None, None, ["sim/math-strong", "openai/gpt-5"], None)
    assert f["pool_kind"] == "mixed" and f["setting"] == ""
    assert pool_heading("half", "mixed", "").startswith("MIXED: pool half (simulated and real workers")
    assert pool_title("half", "mixed").startswith("MIXED (pool half")


def test_nested_round_models_are_kept_apart():
    inner = {"depth": 1, "steps": [syn.step(0, 3, SIM[3]), syn.step(1, 2, SIM[2], [0])]}
    steps = [syn.step(0, 0, SIM[0]), syn.step(1, 4, "local/smollm2-135m", [0], round=inner)]
    f = rec.sample_fields(syn.record("conductor", SIM, steps, conductor="local/smollm2-135m"))
    assert f["step_models"] == [SIM[0], SIM[3], SIM[2]]  # a recursive step counts its round's workers
    assert f["nested_step_models"] == [SIM[3], SIM[2]]
    assert json.loads(f["graph"])[1]["nested"] is True


def test_row_labels_show_no_host_path():
    """An option's file or a model's checkpoint given as an absolute path is labelled by its last part."""
    f = rec.run_fields(
        "conductor",
        {
            "pool": "/home/me/pools/mine.yaml",
            "few_shot": "/home/me/shots.json",
            "replace_workers": "hf//home/me/ckpt/final",
            "max_steps": 3,
        },
        None,
        {"few_shot": "ood", "replace_workers": None, "max_steps": 5},
        ["sim/a"],
        None,
    )
    assert f["label"] == "conductor (few_shot=…/shots.json, max_steps=3, replace_workers=hf/…/final)"
    assert f["pool"] == "mine" and "/home" not in f["key"]
    worker = rec.run_fields("single_worker", {"worker": 0}, None, {}, ["vllm//srv/me/model-7b"], None)
    assert worker["label"] == "single_worker (vllm/…/model-7b)"
    assert rec.no_host_path("openai/gpt-5") == "openai/gpt-5" and rec.no_host_path("C:\\m\\x.gguf") == "…/x.gguf"
