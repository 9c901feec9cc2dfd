"""The form anchor: which text it holds, the rows it deals, the tokens it labels, and that its term
pulls a model's form line back (training/form_anchor.py); the recipe checks that refuse it."""

from __future__ import annotations

from collections import Counter
from itertools import islice

import pytest
from installed import Deferred, needs
from training_fixtures import tiny_model

pytestmark = needs("torch")
torch = Deferred("torch")
anchor = Deferred("training.form_anchor")  # imports torch


def rows(n_math: int, n_choice: int) -> list[dict]:
    def row(i: int, check: str) -> dict:
        return {"prompt": [{"role": "user", "content": f"question {check} {i}"}], "check": check, "id": f"{check}{i}"}

    return [row(i, "math") for i in range(n_math)] + [row(i, "choice") for i in range(n_choice)]


def test_the_anchor_holds_the_form_line_up_to_the_worker_id():
    assert anchor.anchor_text("math", worker=True) == "The question asks for a value:"
    assert anchor.anchor_text("choice", worker=True) == "The question is multiple choice:"
    assert anchor.anchor_text("choice", worker=False) == "The question is multiple choice."
    assert anchor.anchor_text("numeric", worker=True) == anchor.anchor_text("math", worker=True)


def test_rows_are_dealt_the_forms_in_turn_each_row_once_a_pass():
    dealt = list(islice(anchor.dealt_rows(rows(6, 3), seed=0), 12))
    forms = [r["check"] for r in dealt]
    assert forms == ["math", "choice"] * 6
    assert sorted(r["id"] for r in dealt[1::2][:3]) == ["choice0", "choice1", "choice2"]  # a pass: each once
    assert Counter(r["id"] for r in dealt[0::2]) == Counter(f"math{i}" for i in range(6))
    assert [r["id"] for r in islice(anchor.dealt_rows(rows(6, 3), seed=0), 12)] == [r["id"] for r in dealt]  # seeded
    assert [r["id"] for r in islice(anchor.dealt_rows(rows(6, 3), seed=1), 12)] != [r["id"] for r in dealt]
    with pytest.raises(ValueError, match="no training rows"):
        next(anchor.dealt_rows([], seed=0))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = tiny_model(tmp_path_factory.mktemp("anchor") / "model")
    return AutoModelForCausalLM.from_pretrained(path), AutoTokenizer.from_pretrained(path)


def test_only_the_anchor_text_is_labelled_after_the_prompt_as_generation_sees_it(tiny):
    _, tokenizer = tiny
    two = rows(1, 1)
    batch = anchor.anchor_batch(tokenizer, two, worker=True)
    for i, row in enumerate(two):
        prompt = list(tokenizer.apply_chat_template(row["prompt"], add_generation_prompt=True, tokenize=True,
                                                    return_dict=False))  # fmt: skip
        line = tokenizer(anchor.anchor_text(row["check"], True), add_special_tokens=False).input_ids
        length, pad = len(prompt) + len(line), batch["input_ids"].size(1) - len(prompt) - len(line)
        assert batch["input_ids"][i, pad:].tolist() == prompt + line  # left-padded: the line ends the row
        assert batch["labels"][i].tolist() == [anchor.IGNORE] * (pad + len(prompt)) + line
        assert batch["attention_mask"][i].tolist() == [0] * pad + [1] * length
    assert batch["attention_mask"][:, 0].tolist() != [1, 1]  # the two rows differ in length: one is padded


def test_the_nll_from_the_last_positions_is_the_models_own_loss(tiny):
    model, tokenizer = tiny
    batch = anchor.anchor_batch(tokenizer, rows(1, 1), worker=True)
    with torch.no_grad():
        assert anchor.mean_nll(model, batch).item() == pytest.approx(model(**batch).loss.item(), rel=1e-5)


def test_a_steps_terms_add_up_to_the_weight_times_the_mean_nll(tiny):
    model, tokenizer = tiny
    loss = anchor.AnchoredLoss(tokenizer, rows(4, 4), rows_per_step=4, micro_batches=2, weight=0.5, worker=True, seed=0)
    with torch.no_grad():
        terms = [loss.term(model, "cpu").item() for _ in range(2)]
    nlls = loss.nlls[:]
    assert terms == pytest.approx([0.5 * nll / 2 for nll in nlls])
    assert loss.logged() == {"form_anchor/nll": pytest.approx(sum(nlls) / 2)}
    assert loss.logged() == {}  # cleared once logged


def test_descending_on_the_term_pulls_the_form_line_back(tiny):
    model, tokenizer = tiny
    model = type(model).from_pretrained(model.name_or_path)  # a copy: the fixture's model stays as built
    loss = anchor.AnchoredLoss(tokenizer, rows(4, 4), rows_per_step=8, micro_batches=1, weight=1.0, worker=True, seed=0)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    for _ in range(15):
        optimizer.zero_grad()
        loss.term(model, "cpu").backward()
        optimizer.step()
    assert loss.nlls[-1] < 0.5 * loss.nlls[0]


@pytest.mark.parametrize(
    "args, words",
    [
        (["--form_anchor_rows", "12", "--gradient_accumulation_steps", "8"], "a positive multiple of"),
        (["--form_anchor_rows", "-8"], "a positive multiple of"),
        (
            ["--form_anchor_rows", "8", "--format_warmup_form", "false", "--format_warmup_form_worker", "false"],
            "set format_warmup_steps > 0 and",
        ),
        (["--form_anchor_rows", "8", "--format_warmup_steps", "0"], "set format_warmup_steps > 0 and"),
        (["--form_anchor_rows", "8", "--form_anchor_weight", "0"], "form_anchor_weight must be > 0"),
        (["--form_anchor_rows", "8", "--gradient_checkpointing", "true"], "set gradient_checkpointing false"),
        (["--form_anchor_rows", "8", "--checkpoint_trained_layers", "true"], "checkpoint_trained_layers false"),
    ],
)
def test_an_anchor_that_cannot_work_is_refused_with_the_fix(args, words, tmp_path):
    pytest.importorskip("trl")
    from training.train import main

    with pytest.raises(SystemExit, match=words):
        main(["training/recipes/sim-routing.yaml", "--dry_run", "true", "--output_dir", str(tmp_path), *args])
