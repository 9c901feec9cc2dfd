"""Format warm-up: a short supervised pass that teaches a small conductor the three-list
format before GRPO (recipe option `format_warmup_steps`, default 0 = off, as the paper's recipe).

Why: the untrained SmolLM2-135M almost never writes a parseable workflow without a grammar,
so every rollout scores 0 and GRPO has no signal. The warm-up shows it, on the training
prompts themselves, a completion that is only the three lists of a seeded random VALID
workflow (`workflow_text`): workers drawn uniformly from the prompt's models, 1..`max_steps`
steps, step 0 reads nothing, every later step reads all earlier steps (binary access), and
generic subtasks. The workers never depend on the question, its domain or the workers'
descriptions, so it teaches the format and no routing preference: which worker to pick is
left to GRPO. Trained with TRL's `SFTTrainer` (loss on the completion only).

No preference in fact, not only in expectation: the first workers are dealt per answer check
(every n rows of a form name each of the n workers once, `FirstWorkers`), the trainer reads the
rows in that order, and a step is `format_warmup_batch` rows (default: a GRPO step's), so every
step shows each form with every first worker equally often. Drawn independently and read in
micro-batches of 2 at a high constant rate, the last few rows decided the model's starting
preference (0.5-0.7 on one worker after the warm-up; docs/training.md, "Routing on every seed").

With `format_warmup_form: true` each completion starts with one line of reasoning that names
the question's form as its answer check sees it (`FORMS`: multiple choice, a value, a
program), the kind of free reasoning the conductor prompt invites before the lists. The
workers that follow stay uniform, so the line carries no preference either; it gives a small
model a token near its worker choice that depends on the question, which GRPO can then tie
to a worker from the reward alone.

With `format_warmup_form_worker: true` as well, that line ends by naming the first step's
worker ("The question is multiple choice: 2 answers first."), still drawn uniformly, and the
lists repeat it. The worker choice then sits right after the form words instead of eight tokens
later, after "model_id = [". Measured by experiments/sim_routing/coupling.py on the SmolLM2-135M warm-up models
(top 8 layers): the gradients of a worker choice on MATH and on MMLU prompts have cosine 0.97 in
the plain layout and 0.78 in this one, so GRPO can move the choice per form instead of moving both
forms at once (experiments/sim_routing: with this line the policy learned to route).
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any

FIRST = "Solve the question."
LATER = "Check the earlier answers and give the final answer."
VALUE = "The question asks for a value."
FORMS = {"choice": "The question is multiple choice.", "math": VALUE, "numeric": VALUE}
PROGRAM = "The question asks for a program."  # every code check (lcb, humaneval, bigcodebench)


def form_line(check: str) -> str:
    """The reasoning line naming a question's form, from its answer check's name."""
    return FORMS.get(check, PROGRAM)


def random_models(n_workers: int, max_steps: int, rng: random.Random) -> list[int]:
    """The workers of a random workflow: 1..max_steps steps, each worker uniform."""
    if n_workers < 1 or max_steps < 1:
        raise ValueError(f"a warm-up workflow needs workers and steps, got {n_workers} and {max_steps}")
    return [rng.randrange(n_workers) for _ in range(rng.randint(1, max_steps))]


class FirstWorkers:
    """First workers dealt per form: each form's rows take a fresh seeded permutation of the workers in
    turn, so any n consecutive rows of a form (n workers) name each worker once."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.decks: dict[tuple, list[int]] = {}

    def deal(self, form: str | None, n_workers: int) -> int:
        deck = self.decks.setdefault((form, n_workers), [])
        if not deck:
            deck.extend(self.rng.sample(range(n_workers), n_workers))
        return deck.pop()


def workflow_text(models: Sequence[int]) -> str:
    """The three lists of a valid workflow over `models` (step 0 reads nothing, later steps all)."""
    steps = len(models)
    subtasks = [FIRST] + [LATER] * (steps - 1)
    access = [[]] + [["all"]] * (steps - 1)
    return f"model_id = {json.dumps(models)}\nsubtasks = {json.dumps(subtasks)}\naccess_list = {json.dumps(access)}"


def worker_line(check: str, first: int) -> str:
    """The form line that also names the first worker, right after the form words."""
    return f"{form_line(check)[:-1]}: {first} answers first."


def warmup_rows(
    rows: Sequence[dict], count: int, max_steps: int, seed: int = 0, form: bool = False, worker: bool = False
) -> list[dict]:
    """`count` prompt/completion rows: the training rows' prompts in a seeded order (cycled),
    each with a random workflow over the workers its prompt lists (`pool_indices`; the
    conductor itself, offered when recursion is on, is never drawn; the first worker dealt per
    answer check by `FirstWorkers`), after the row's `form_line` when `form` is set (its
    `worker_line` when `worker` is set too)."""
    if not rows:
        raise ValueError("warm-up: no training rows")
    rng = random.Random(f"warmup/{seed}")
    firsts = FirstWorkers(rng)
    order = list(range(len(rows)))
    out = []
    while len(out) < count:
        rng.shuffle(order)
        for i in order[: count - len(out)]:
            row = rows[i]
            models = random_models(len(row["pool_indices"]), max_steps, rng)
            models[0] = firsts.deal(row.get("check"), len(row["pool_indices"]))
            text = workflow_text(models)
            if form:
                line = worker_line(row["check"], models[0]) if worker else form_line(row["check"])
                text = f"{line}\n{text}"
            out.append({"prompt": row["prompt"], "completion": [{"role": "assistant", "content": text}]})
    return out


def run_warmup(model: Any, tokenizer: Any, rows: Sequence[dict], script: Any, config: Any, out_dir: str) -> dict:
    """Train `model` in place for `script.format_warmup_steps` SFT steps and save it to `out_dir`
    (the warm-up-only checkpoint: the "untrained" conductor of a comparison). Returns a summary."""
    import time

    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    from training.options import warmup_accumulation

    accumulation = warmup_accumulation(script, config)
    batch = config.per_device_train_batch_size * accumulation * config.world_size  # rows per step
    max_steps = script.format_warmup_max_steps or script.workflow_max_steps
    data = warmup_rows(  # read in order: each step takes the next `batch` rows over all processes
        rows, script.format_warmup_steps * batch, max_steps, config.seed,
        script.format_warmup_form, script.format_warmup_form_worker,
    )  # fmt: skip
    args = SFTConfig(
        output_dir=out_dir,
        max_steps=script.format_warmup_steps,
        per_device_train_batch_size=config.per_device_train_batch_size,
        gradient_accumulation_steps=accumulation,
        train_sampling_strategy="sequential",  # the dealt rows in order: every step stays balanced
        learning_rate=script.format_warmup_lr,
        lr_scheduler_type="constant",
        logging_steps=max(1, script.format_warmup_steps // 10),
        save_strategy="no",
        report_to="none",
        use_cpu=config.use_cpu,
        bf16=config.bf16,
        seed=config.seed,
        completion_only_loss=True,
        gradient_checkpointing=False,  # SFTConfig turns it on by default; a small model does not need it
        max_length=None,  # never cut a prompt (GRPO does not either): the completion must survive
        dataloader_num_workers=0,
    )
    started = time.time()
    trainer = SFTTrainer(model=model, args=args, train_dataset=Dataset.from_list(data), processing_class=tokenizer)
    result = trainer.train()
    trainer.save_model(out_dir)
    losses = [e["loss"] for e in trainer.state.log_history if "loss" in e]
    return {
        "steps": script.format_warmup_steps,
        "examples": len(data),
        "batch": batch,
        "learning_rate": script.format_warmup_lr,
        "form_line": script.format_warmup_form,
        "form_worker": script.format_warmup_form_worker,
        "max_steps": max_steps,
        "loss_first": losses[0] if losses else None,
        "loss_last": losses[-1] if losses else None,
        "train_loss": result.training_loss,
        "wall_s": round(time.time() - started, 1),
        "checkpoint": out_dir,
    }


def warm_up(model: Any, tokenizer: Any, rows: Sequence[dict], script: Any, config: Any, out_dir: str) -> dict:
    """A GRPO run's format warm-up (`run_warmup`); on several processes, then checked that every replica
    holds the same weights (training/parallel.py)."""
    from training.parallel import same_weights

    summary = run_warmup(model, tokenizer, rows, script, config, out_dir)
    if digests := same_weights(model, config, "format warm-up"):
        summary["weights_sha256"] = digests
    return summary
