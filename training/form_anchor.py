"""The form anchor: warm-up rows mixed into GRPO's steps, holding the form line where the warm-up left it
(recipe option `form_anchor_rows`; 0 = off, as the paper's recipe, which has no form line).

Why: with `explore_prefix: greedy` the rows of a group share the form line ("The question asks for a
value:"), so GRPO gives the line itself no net push on the questions it trains on. It still drifted on
questions GRPO never saw: seed 5001's warm-up model wrote "value" on 40 of 40 held-out MATH-500
questions, its final model "multiple choice" on 7 (word problems), because the worker choice's updates
move weights the line also reads (docs/training.md, "The shared line on seeds 5000-5002").

How: every GRPO step also takes `form_anchor_rows` training questions, drawn from the whole training set
(not only the step's), the forms in turn, and adds `form_anchor_weight` x the mean negative
log-likelihood of each question's form line, up to the colon before the worker id, to the loss. That is
the warm-up's own loss on the line's tokens alone: the worker id and the lists carry none, so the anchor
holds which form a question is and says nothing about which worker to pick. It is spread over the step's
micro-batches (`AnchoredLoss.next_batch`), each adding its share, so a step adds the weight x the mean
over its rows whatever the accumulation.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from typing import Any

import torch

from training.warmup import form_line

IGNORE = -100  # the label of a token that carries no loss (transformers' convention)


def anchor_text(check: str, worker: bool) -> str:
    """The text the anchor holds for a question of answer check `check`: the warm-up's form line, up to the
    colon before the worker id when the line names one (`format_warmup_form_worker`)."""
    line = form_line(check)
    return f"{line[:-1]}:" if worker else line


def dealt_rows(rows: Sequence[dict], seed: int) -> Iterator[dict]:
    """The training rows forever, the forms in turn (each form's rows in a fresh seeded order each pass),
    so any run of rows holds every form equally often."""
    rng = random.Random(f"form-anchor/{seed}")
    by_form: dict[str, list[dict]] = {}
    for row in rows:
        by_form.setdefault(form_line(row["check"]), []).append(row)
    if not by_form:
        raise ValueError("form anchor: no training rows")
    decks: dict[str, list[dict]] = {form: [] for form in by_form}
    while True:
        for form, members in by_form.items():
            if not decks[form]:
                decks[form] = rng.sample(members, len(members))
            yield decks[form].pop()


def anchor_batch(tokenizer: Any, rows: Sequence[dict], worker: bool) -> dict[str, torch.Tensor]:
    """input_ids, attention_mask and labels of `rows`: each row's chat prompt (with the generation prompt,
    as GRPO's rollouts start) then its anchor text, labelled on the anchor text only; left-padded, as GRPO
    pads its prompts, so every row's anchor text ends the row."""
    sequences, labels = [], []
    for row in rows:
        prompt = list(tokenizer.apply_chat_template(row["prompt"], add_generation_prompt=True, tokenize=True,
                                                    return_dict=False))  # fmt: skip
        line = tokenizer(anchor_text(row["check"], worker), add_special_tokens=False).input_ids
        sequences.append(prompt + line)
        labels.append([IGNORE] * len(prompt) + line)
    width = max(map(len, sequences))
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id

    def padded(seqs: list[list[int]], fill: int) -> torch.Tensor:
        return torch.tensor([[fill] * (width - len(s)) + s for s in seqs])

    return {
        "input_ids": padded(sequences, pad),
        "attention_mask": padded([[1] * len(s) for s in sequences], 0),
        "labels": padded(labels, IGNORE),
    }


def mean_nll(model: Any, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """The mean negative log-likelihood of `batch`'s labelled tokens, from logits of the last positions only
    (the labelled tokens end every row): the model's full forward, so its hooks see the call."""
    labels = batch["labels"]
    labelled = (labels != IGNORE).any(dim=0).nonzero()
    keep = labels.size(1) - int(labelled.min()) + 1  # the first labelled token's predicting position onwards
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], logits_to_keep=keep,
                   use_cache=False).logits  # fmt: skip
    return torch.nn.functional.cross_entropy(
        logits[:, :-1].flatten(0, 1).float(), labels[:, -(keep - 1) :].flatten(), ignore_index=IGNORE
    )


class AnchoredLoss:
    """The anchor of one run: `rows_per_step` dealt rows per optimizer step, split over the step's
    `micro_batches` (a multiple of them: training.options.check_form_anchor); `term(model)` is one
    micro-batch's share of `weight` x the step's mean NLL, and the NLLs since the last log are kept for
    `logged`."""

    def __init__(self, tokenizer: Any, rows: Sequence[dict], rows_per_step: int, micro_batches: int, weight: float,
                 worker: bool, seed: int) -> None:  # fmt: skip
        self.tokenizer = tokenizer
        self.rows = dealt_rows(rows, seed)
        self.per_micro = rows_per_step // micro_batches
        self.micro_batches = micro_batches
        self.weight = weight
        self.worker = worker
        self.nlls: list[float] = []

    def next_batch(self) -> dict[str, torch.Tensor]:
        return anchor_batch(self.tokenizer, [next(self.rows) for _ in range(self.per_micro)], self.worker)

    def term(self, model: Any, device: torch.device) -> torch.Tensor:
        nll = mean_nll(model, {k: v.to(device) for k, v in self.next_batch().items()})
        self.nlls.append(nll.item())
        return self.weight * nll / self.micro_batches

    def logged(self) -> dict[str, float]:
        """The mean NLL of the anchor rows since the last call (the metrics' `form_anchor/nll`)."""
        if not self.nlls:
            return {}
        mean = sum(self.nlls) / len(self.nlls)
        self.nlls.clear()
        return {"form_anchor/nll": mean}
