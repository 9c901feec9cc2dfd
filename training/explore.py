"""Exploring groups: some rollouts of every GRPO group are assigned their first worker (recipe
option `explore_workers`; 0 = off, the paper's sampling).

Why: GRPO learns only from reward differences inside a group. Once a question form's rollouts all
pick one worker, every rollout of a group gets the same outcome (a simulated worker's answer is
fixed per question and subtask), the group's advantages are zero and the choice can no longer
move: a collapse onto the wrong worker is permanent (docs/training.md, "Routing on every seed").
With `explore_workers: k`, the first k rollouts of each group have their first worker assigned,
every pool worker in turn from a seeded permutation, and the rest sample freely, so every group
compares every worker on its question and the advantage of the better one never vanishes.

How: `assign_first_workers(model, ...)` wraps `model.generate` (the public method TRL's GRPOTrainer
calls on its transformers path) and adds a logits processor. A row's first worker is its first
digit token (the warm-up's layouts write the first worker before any other digit: "...: 2 answers
first." or "model_id = [2"): at the first position where the model puts more than half of its
probability on digit tokens, an assigned row gets its worker's digit and nothing else. The forced
token is part of the completion, so GRPO's loss weighs its log-probability by the rollout's
advantage like any sampled token. Rows of one group are recognised as equal prompt rows. Where it
forces a row, it also keeps the policy's own probabilities over the worker ids at that position (the
choice the row would have sampled): the routing curves show those for assigned rows.

With `explore_prefix: greedy` the assigned rows also write everything before their worker id
greedily, so the rows of a group share that text (the warm-up's form line, "The question asks for
a value:"). GRPO's advantages sum to zero in a group, so text every row shares gets no net push and
cannot drift; sampled (the default), the line varies by chance within a group, is pushed with
whichever worker did well, and drifted to one value in both domains on the CPU seeds
(docs/training.md, "What decided a seed's fate").
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import torch
from transformers import LogitsProcessor, LogitsProcessorList

from training.shared_prompts import prompt_rows

MAX_WORKERS = 10  # one digit token per worker id


def group_assignments(rows: torch.Tensor, explore: int, n_workers: int, generator: torch.Generator) -> list[int | None]:
    """Per row of a generation batch, the worker assigned to it or None: in each group of equal
    rows (a prompt and its repeats, in batch order) the first `explore` rows take the workers of a
    seeded permutation, cycled; the others stay free."""
    _, group_of = torch.unique(rows, dim=0, return_inverse=True)
    out: list[int | None] = [None] * len(rows)
    for group in group_of.unique().tolist():
        members = (group_of == group).nonzero().flatten().tolist()[:explore]
        order = torch.randperm(n_workers, generator=generator).tolist()
        for slot, row in enumerate(members):
            out[row] = order[slot % n_workers]
    return out


class Assignment(NamedTuple):
    """An assigned row: its worker id, and the policy's probability of each worker id where the id was
    forced (None if the row never reached a worker id)."""

    worker: int
    policy: tuple[float, ...] | None


PREFIXES = ("sampled", "greedy")  # how an assigned row writes the text before its worker id


class FirstWorker(LogitsProcessor):
    """Forces each assigned row's first digit token (its first worker id) to the assigned worker, and
    keeps the policy's probabilities over the worker ids at that position (`policy`, per row). With
    `greedy_prefix`, an assigned row takes the model's likeliest token at each position before it."""

    def __init__(self, assigned: list[int | None], digit_ids: list[int], greedy_prefix: bool = False):
        self.assigned = assigned
        self.greedy_prefix = greedy_prefix
        self.digit_ids = torch.tensor(digit_ids)
        self.open = torch.tensor([worker is not None for worker in assigned])  # assigned, no digit written yet
        self.seen: int | None = None  # tokens already looked at: the prompt, then each step's new one
        self.policy: list[tuple[float, ...] | None] = [None] * len(assigned)

    def assignments(self) -> list[Assignment | None]:
        return [None if w is None else Assignment(w, p) for w, p in zip(self.assigned, self.policy, strict=True)]

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        digits = self.digit_ids.to(scores.device)
        if self.seen is not None:  # close the rows whose newest tokens include a digit
            self.open &= ~torch.isin(input_ids[:, self.seen :], digits).any(dim=1).cpu()
        self.seen = input_ids.size(1)
        if not self.open.any():
            return scores
        digit_probs = scores.float().softmax(-1)[:, digits].cpu()
        digit_mass = digit_probs.sum(-1)
        for row in (self.open & (digit_mass > 0.5)).nonzero().flatten().tolist():
            self.policy[row] = tuple((digit_probs[row] / digit_mass[row]).tolist())
            scores[row] = float("-inf")
            scores[row, digits[self.assigned[row]]] = 0.0
        if self.greedy_prefix:
            for row in (self.open & (digit_mass <= 0.5)).nonzero().flatten().tolist():
                likeliest = scores[row].argmax()
                scores[row] = float("-inf")
                scores[row, likeliest] = 0.0
        return scores


def digit_token_ids(tokenizer: Any, n_workers: int) -> list[int]:
    """The token of each worker id 0..n_workers-1 (each must be one token)."""
    ids = []
    for i in range(n_workers):
        tokens = tokenizer(str(i), add_special_tokens=False).input_ids
        if len(tokens) != 1:
            raise ValueError(f"explore_workers: worker id {i} is {len(tokens)} tokens for this tokenizer, not one")
        ids.append(tokens[0])
    return ids


def check_explore(explore: int, num_generations: int, n_workers: int, use_vllm: bool, max_depth: int,
                  prefix: str = "sampled") -> None:  # fmt: skip
    """Refuse settings under which exploring groups cannot work, naming the fix."""
    if explore < 0 or explore > num_generations:
        raise ValueError(f"explore_workers must be in 0..num_generations ({num_generations}), got {explore}")
    if prefix not in PREFIXES:
        raise ValueError(f"explore_prefix must be one of {', '.join(PREFIXES)}, got {prefix!r}")
    if not explore:
        if prefix != "sampled":
            raise ValueError("explore_prefix acts on the rows explore_workers assigns: set explore_workers > 0")
        return
    if n_workers > MAX_WORKERS:
        raise ValueError(f"explore_workers assigns one-digit worker ids: the pool has {n_workers} workers (at most 10)")
    if use_vllm:
        raise ValueError("explore_workers acts on the transformers generation path: set use_vllm false")
    if max_depth:
        raise ValueError("explore_workers is not combined with recursion training (max_depth): set one to 0")


def assign_first_workers(
    model: Any, tokenizer: Any, explore: int, n_workers: int, seed: int, prefix: str = "sampled"
) -> Callable[[], list[Assignment | None]]:
    """Wrap `model.generate` so that each group's first `explore` rows get assigned first workers
    (training only: call it on the GRPO model after the format warm-up), writing the text before the
    worker id as `prefix` says. Returns a function giving the last generation batch's assignments
    (an `Assignment` or None per row), for the rollout log."""
    generate = model.generate
    digit_ids = digit_token_ids(tokenizer, n_workers)
    generator = torch.Generator().manual_seed(seed)
    last: list[FirstWorker | None] = [None]

    @functools.wraps(generate)
    def generate_exploring(input_ids=None, attention_mask=None, logits_processor=None, **kwargs):  # noqa: ANN001, ANN202
        if not isinstance(input_ids, torch.Tensor) or input_ids.dim() != 2:
            return generate(input_ids=input_ids, attention_mask=attention_mask, logits_processor=logits_processor,
                            **kwargs)  # fmt: skip
        assigned = group_assignments(prompt_rows(input_ids, attention_mask).cpu(), explore, n_workers, generator)
        last[0] = FirstWorker(assigned, digit_ids, greedy_prefix=prefix == "greedy")
        processors = LogitsProcessorList([*(logits_processor or []), last[0]])
        return generate(input_ids=input_ids, attention_mask=attention_mask, logits_processor=processors, **kwargs)

    model.generate = generate_exploring
    return lambda: last[0].assignments() if last[0] else []
