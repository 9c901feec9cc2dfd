"""The format warm-up: its workflows are valid, routing-neutral, and a real SFT pass runs
before GRPO on a tiny model built in code."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from training_fixtures import data_files, tiny_model

from solvers.workflow import parse_workflow
from training.warmup import (
    FORMS,
    PROGRAM,
    FirstWorkers,
    form_line,
    random_models,
    warmup_rows,
    worker_line,
    workflow_text,
)


@pytest.mark.parametrize("n_workers,max_steps", [(1, 1), (4, 5), (3, 2)])
def test_warmup_workflows_parse_as_valid(n_workers, max_steps):
    rng = random.Random(0)
    for _ in range(200):
        text = workflow_text(random_models(n_workers, max_steps, rng))
        result = parse_workflow(text, range(n_workers), max_steps, False, "binary")
        assert result.ok, (text, result.reason)
        assert 1 <= len(result.workflow) <= max_steps
        assert result.workflow.access[0] == ()  # the first step reads nothing


def test_warmup_workers_are_uniform_and_ignore_the_question():
    prompts = [[{"role": "user", "content": f"question {i} about {'math' if i % 2 else 'history'}"}] for i in range(8)]
    rows = [{"prompt": p, "pool_indices": [0, 1, 2, 3]} for p in prompts]
    data = warmup_rows(rows, 2000, 3, seed=1)
    assert len(data) == 2000 and {json.dumps(d["prompt"]) for d in data} == {json.dumps(p) for p in prompts}
    per_domain = {"math": Counter(), "history": Counter()}
    for d in data:
        workflow = parse_workflow(d["completion"][0]["content"], range(4), 3).workflow
        domain = "math" if "math" in d["prompt"][0]["content"] else "history"
        per_domain[domain].update(workflow.model_ids)
    for counts in per_domain.values():
        total = sum(counts.values())
        assert set(counts) == {0, 1, 2, 3}
        assert all(abs(c / total - 0.25) < 0.04 for c in counts.values()), counts  # no worker preferred


def test_form_line_names_the_form_and_leaves_workers_uniform():
    rows = [
        {"prompt": [{"role": "user", "content": f"q{i}"}], "pool_indices": [0, 1, 2, 3], "check": check}
        for i, check in enumerate(["choice", "math", "lcb", "choice"])
    ]
    data = warmup_rows(rows, 2000, 1, seed=2, form=True)
    by_check = {row["prompt"][0]["content"]: row["check"] for row in rows}
    workers = {"choice": Counter(), "math": Counter(), "lcb": Counter()}
    for d in data:
        text = d["completion"][0]["content"]
        line, lists = text.split("\n", 1)
        check = by_check[d["prompt"][0]["content"]]
        assert line == form_line(check)
        result = parse_workflow(text, range(4), 1)  # the line is free reasoning before the lists
        assert result.ok and lists.startswith("model_id = ")
        workers[check].update(result.workflow.model_ids)
    assert form_line("choice") == FORMS["choice"] and form_line("humaneval") == PROGRAM
    assert form_line("numeric") == form_line("math") != PROGRAM
    for counts in workers.values():
        total = sum(counts.values())
        assert all(abs(counts[w] / total - 0.25) < 0.06 for w in range(4)), counts
    plain = warmup_rows(rows, 8, 1, seed=2)
    assert all(d["completion"][0]["content"].startswith("model_id = ") for d in plain)


def test_worker_line_names_the_first_worker_right_after_the_form():
    rows = [
        {"prompt": [{"role": "user", "content": f"q{i}"}], "pool_indices": [0, 1, 2, 3], "check": check}
        for i, check in enumerate(["choice", "math"])
    ]
    data = warmup_rows(rows, 2000, 3, seed=3, form=True, worker=True)
    by_check = {row["prompt"][0]["content"]: row["check"] for row in rows}
    firsts = {"choice": Counter(), "math": Counter()}
    for d in data:
        text = d["completion"][0]["content"]
        check = by_check[d["prompt"][0]["content"]]
        result = parse_workflow(text, range(4), 3)
        assert result.ok, text
        first = result.workflow.model_ids[0]
        assert text.split("\n", 1)[0] == worker_line(check, first)
        firsts[check][first] += 1
    assert worker_line("choice", 2) == "The question is multiple choice: 2 answers first."
    assert worker_line("math", 0) == "The question asks for a value: 0 answers first."
    for counts in firsts.values():  # the named worker is still uniform in every form
        total = sum(counts.values())
        assert all(abs(counts[w] / total - 0.25) < 0.06 for w in range(4)), counts


def test_first_workers_are_dealt_evenly_in_every_form():
    """Any 4 consecutive rows of one form name each of 4 workers once, so every warm-up step (the next
    `batch` rows, read in order) is balanced up to one part-dealt deck per form."""
    checks = ["choice", "math", "math", "choice", "numeric", "choice"]
    rows = [{"prompt": [{"role": "user", "content": f"q{i}"}], "pool_indices": [0, 1, 2, 3], "check": c}
            for i, c in enumerate(checks)]  # fmt: skip
    data = warmup_rows(rows, 400, 3, seed=5, form=True, worker=True)
    by_prompt = {r["prompt"][0]["content"]: r["check"] for r in rows}
    per_form: dict[str, list[int]] = {}
    for d in data:
        first = parse_workflow(d["completion"][0]["content"], range(4), 3).workflow.model_ids[0]
        per_form.setdefault(by_prompt[d["prompt"][0]["content"]], []).append(first)
    for firsts in per_form.values():
        for start in range(0, len(firsts) - 3, 4):
            assert sorted(firsts[start : start + 4]) == [0, 1, 2, 3], firsts[start : start + 4]
    assert per_form["choice"][:8] != per_form["math"][:8]  # each form its own seeded deck order
    deck = FirstWorkers(random.Random(0))
    assert sorted(deck.deal("x", 3) for _ in range(3)) == [0, 1, 2]


def test_warmup_step_is_a_grpo_step_unless_set():
    from types import SimpleNamespace

    from training.options import warmup_accumulation

    config = SimpleNamespace(per_device_train_batch_size=2, gradient_accumulation_steps=8, world_size=1)
    assert warmup_accumulation(SimpleNamespace(format_warmup_batch=None), config) == 8  # 16 rows a step
    assert warmup_accumulation(SimpleNamespace(format_warmup_batch=4), config) == 2
    two = SimpleNamespace(per_device_train_batch_size=8, gradient_accumulation_steps=16, world_size=2)
    assert warmup_accumulation(SimpleNamespace(format_warmup_batch=16), two) == 1  # paper.yaml: 8 per device
    for bad in (3, -2):
        with pytest.raises(SystemExit, match="multiple of per_device_train_batch_size x processes \\(2\\)"):
            warmup_accumulation(SimpleNamespace(format_warmup_batch=bad), config)


def test_warmup_refuses_empty_input():
    with pytest.raises(ValueError, match="no training rows"):
        warmup_rows([], 4, 3)
    with pytest.raises(ValueError, match="workers and steps"):
        random_models(0, 3, random.Random(0))


@pytest.mark.slow
def test_warmup_then_grpo_with_the_form_anchor_on_a_tiny_model(tmp_path):
    pytest.importorskip("trl")
    from training.train import main

    files = data_files(tmp_path)
    recipe = tmp_path / "tiny.yaml"
    recipe.write_text(
        "pool: sim\nmixture: math=4,mmlu=4\nsubstitute: ''\nfew_shot: none\nworkflow_max_steps: 2\n"
        "dtype: float32\nuse_cpu: true\nseed: 0\nmax_steps: 1\nper_device_train_batch_size: 4\n"
        "num_generations: 2\nmax_completion_length: 8\nlearning_rate: 1.0e-3\nbeta: 0.0\n"
        "logging_steps: 1\nsave_strategy: 'no'\nreport_to: none\n"
        "format_warmup_steps: 6\nformat_warmup_lr: 3.0e-3\nformat_warmup_form: true\nformat_warmup_max_steps: 1\n"
        "format_warmup_form_worker: true\nform_anchor_rows: 2\ngradient_checkpointing: false\n"
    )
    out = tmp_path / "run"
    argv = [str(recipe), "--model_name_or_path", tiny_model(tmp_path / "model"), "--output_dir", str(out)]
    info = main([*argv, *[a for k, v in files.items() for a in (f"--{k}", v)]])
    warm = info["warmup"]
    assert warm["steps"] == 6 and warm["examples"] == 24 and warm["batch"] == 4 and warm["max_steps"] == 1
    assert warm["form_line"] and warm["form_worker"]
    assert warm["loss_last"] < warm["loss_first"]  # the fixed format is being learned
    assert (out / "warmup" / "model.safetensors").is_file() and info["global_step"] == 1
    saved = json.loads((out / "run_info.json").read_text())
    assert saved["warmup"]["checkpoint"] == str(out / "warmup")
    logged = json.loads((out / "metrics.jsonl").read_text().splitlines()[0])
    assert logged["form_anchor/nll"] > 0  # the form anchor's rows went into the GRPO step


def test_negative_warmup_steps_are_refused(tmp_path):
    pytest.importorskip("trl")
    from training.train import main

    with pytest.raises(SystemExit, match="format_warmup_steps"):
        main(["--dry_run", "true", "--format_warmup_steps", "-1", "--output_dir", str(tmp_path)])
    with pytest.raises(SystemExit, match="format_warmup_max_steps must be in 1..workflow_max_steps"):
        main(["--dry_run", "true", "--workflow_max_steps", "3", "--format_warmup_max_steps", "4",
              "--output_dir", str(tmp_path)])  # fmt: skip
    with pytest.raises(SystemExit, match="set format_warmup_form true too"):
        main(["--dry_run", "true", "--format_warmup_form_worker", "true", "--output_dir", str(tmp_path)])
    with pytest.raises(SystemExit, match="format_warmup_batch must be a positive multiple"):
        main(["--dry_run", "true", "--format_warmup_steps", "2", "--format_warmup_batch", "12",
              "--per_device_train_batch_size", "8", "--output_dir", str(tmp_path)])  # fmt: skip


def test_train_top_layers_freezes_everything_below():
    pytest.importorskip("trl")
    from transformers import LlamaConfig, LlamaForCausalLM

    from training.model_prep import freeze_below

    config = LlamaConfig(vocab_size=50, hidden_size=16, intermediate_size=32, num_hidden_layers=3,
                         num_attention_heads=2, num_key_value_heads=2, tie_word_embeddings=True)  # fmt: skip
    model = LlamaForCausalLM(config)
    counts = freeze_below(model, 1)
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    assert trainable and all(n.startswith(("model.layers.2.", "model.norm.")) for n in trainable)
    assert counts["trainable_params"] == sum(p.numel() for n, p in model.named_parameters() if n in trainable)
    assert not model.get_input_embeddings().weight.requires_grad  # tied head stays fixed too
    with pytest.raises(SystemExit, match="3 decoder layers"):
        freeze_below(model, 4)


def test_routing_curves_per_domain(tmp_path):
    """curves.py writes the per-domain worker shares of each step (CSV) and their plot."""
    from experiments import curves

    rows = []
    for step in (1, 2):
        for domain, names in (("math", ["sim/a", "sim/a", "sim/b"]), ("mmlu", ["sim/b"] * step)):
            rows.append({"step": step, "domain": domain, "worker_names": names, "reward": 0.5, "parsed": True,
                         "correct": False, "steps": 1})  # fmt: skip
    rows.append({"step": 2, "domain": "math", "worker_names": [], "reward": 0.0, "parsed": False, "correct": False,
                 "steps": 0})  # fmt: skip
    run = tmp_path / "run"
    run.mkdir()
    (run / "rollouts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    curves.main([str(run), "--out", str(tmp_path / "out" / "c"), "--window", "2"])
    import csv

    table = list(csv.DictReader(open(tmp_path / "out" / "c-routing.csv")))
    math1 = next(r for r in table if r["step"] == "1" and r["domain"] == "math")
    assert abs(float(math1["sim/a"]) - 2 / 3) < 1e-9 and abs(float(math1["sim/b"]) - 1 / 3) < 1e-9
    assert all(float(r["sim/b"]) == 1.0 for r in table if r["domain"] == "mmlu")
    assert (tmp_path / "out" / "c-routing.png").stat().st_size > 1000
