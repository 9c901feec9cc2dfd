"""Recursion training (the paper's Sec. 3.2) as a TRL `rollout_func`: one recursive conductor
call forced for a share of each batch.

    reward = ConductorReward(pool, ...)
    recursion = ForcedRecursion(reward, train_dataset, share=0.5)
    GRPOTrainer(..., reward_funcs=[reward], rollout_func=recursion)

For every prompt the policy writes its first-round workflow as usual. In each GRPO group the
last `share` of the rollouts (half by default) then get a forced recursive call, exactly the
conversation of the `conductor` solver's nested round when the conductor is the last step:
the first round's workflow runs on the pool, and the conductor's own conversation continues
with its completion and the recursion turn showing the last step's response
(`solvers.prompts.recursion_turn`); the policy writes the second round (new steps, or three
empty lists to keep the response). The trajectory trained on is
`first completion + recursion turn + second completion`, the turn's tokens masked out of the
loss (TRL's `env_mask`), both rounds' tokens trained. The reward scores the second round and
combines both rounds with `training.rollouts.recursive_reward` (first round x 0.25,
normalised), so one-round and two-round rollouts of a group share one 0..1 scale.

Limits (stated, not hidden): a first round that does not parse gets no second round (reward
0); the conductor is not offered as a worker inside the first round (a self-call in the middle
of a workflow would need a generation while the workflow runs), so recursion-training prompts
are built without `self_id`; the forced call always comes after the last step. It uses TRL's
private `_tokenize_prompts` / `_generate_single_turn` (as TRL's own tool loop does), pinned to
trl 1.16.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from solvers.prompts import recursion_turn
from training.rewards import ConductorReward, Recursion


def forced_rows(n: int, group: int, share: float) -> list[bool]:
    """Which of `n` rollouts (contiguous GRPO groups of `group`) get a forced recursive call:
    the last round(share x group) of every group."""
    if not 0 <= share <= 1:
        raise ValueError(f"recursion share must be within 0..1, got {share}")
    if group < 1 or n % group:
        raise ValueError(f"{n} rollouts do not split into groups of {group} (num_generations)")
    forced = round(share * group)
    return [i % group >= group - forced for i in range(n)]


def prompt_key(prompt: object) -> str:
    """The text that identifies a dataset prompt (plain, or the user messages' contents)."""
    if isinstance(prompt, str):
        return prompt
    return "\n".join(str(m["content"]) for m in prompt if isinstance(m, Mapping) and m.get("role") == "user")


def turn_suffix_ids(tokenizer: Any, text: str, chat_template: str | None = None, **template_kwargs: Any) -> list[int]:
    """Token ids that follow an assistant turn ending in EOS: a user turn with `text`, then the
    generation prompt (the difference of two renderings of a dummy conversation, aligned on
    the EOS as TRL's tool loop does)."""
    dummy = [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}]
    options = {"tokenize": True, "chat_template": chat_template, "return_dict": False, **template_kwargs}
    prefix = list(tokenizer.apply_chat_template(dummy, add_generation_prompt=False, **options))
    full = list(
        tokenizer.apply_chat_template(
            [*dummy, {"role": "user", "content": text}], add_generation_prompt=True, **options
        )
    )
    eos = [i for i, t in enumerate(prefix) if t == tokenizer.eos_token_id]
    if eos:
        prefix = prefix[: eos[-1] + 1]
    if full[: len(prefix)] != prefix:
        raise ValueError("the chat template does not render an added user turn as a suffix of the conversation")
    return full[len(prefix) :]


class ForcedRecursion:
    """TRL `rollout_func(prompts, trainer)` forcing one recursive call for `share` of each group.

    Args:
        reward: the run's `ConductorReward` (runs the first rounds here, scores both later).
        dataset: the training rows (with `prompt` and the reward's columns), to find each
            prompt's row (the rollout function receives prompts only).
        share: share of each GRPO group that gets the forced call (the paper: half).
    """

    __name__ = "forced_recursion"

    def __init__(self, reward: ConductorReward, dataset: Iterable[Mapping[str, Any]], share: float = 0.5) -> None:
        forced_rows(2, 2, share)  # validates share
        self.reward, self.share = reward, share
        self.rows = {prompt_key(r["prompt"]): {k: v for k, v in r.items() if k != "prompt"} for r in dataset}

    def row(self, prompt: object) -> dict:
        key = prompt_key(prompt)
        if key not in self.rows:
            raise KeyError(
                "a prompt of the batch is not in the dataset given to ForcedRecursion; pass the train dataset"
            )
        return self.rows[key]

    def __call__(self, prompts: Sequence, trainer: Any) -> dict[str, Any]:
        tokenizer = trainer.processing_class
        group = trainer.num_generations if trainer.model.training else trainer.num_generations_eval
        prompt_ids, _images, _fields = trainer._tokenize_prompts(prompts)
        first_ids, first_logprobs = trainer._generate_single_turn(prompt_ids, None, {}, group)
        texts = tokenizer.batch_decode(first_ids, skip_special_tokens=True)
        forced = [i for i, f in enumerate(forced_rows(len(prompts), group, self.share)) if f]
        rows = [self.row(prompts[i]) for i in forced]
        firsts = _run(trainer, self.reward.score([texts[i] for i in forced], rows))
        eos = tokenizer.eos_token_id
        state: list[Recursion | None] = [None] * len(prompts)
        second_at, second_prompts, joins = [], [], []
        for i, row, first in zip(forced, rows, firsts, strict=True):
            turn_text = _turn(first, len(row["pool_indices"]), self.reward.settings.max_steps)
            state[i] = Recursion(prompt_key(prompts[i]), texts[i], first, turn_text, None)
            if not first.parsed or first.record is None:
                continue
            join = ([] if first_ids[i] and first_ids[i][-1] == eos else [eos]) + turn_suffix_ids(
                tokenizer, turn_text, trainer.chat_template, **trainer.chat_template_kwargs
            )
            second_at.append(i)
            joins.append(join)
            second_prompts.append(list(prompt_ids[i]) + list(first_ids[i]) + join)
        completion_ids = [list(ids) for ids in first_ids]
        env_mask = [[1] * len(ids) for ids in completion_ids]
        logprobs = [list(lp) for lp in first_logprobs] if first_logprobs is not None else None
        if second_prompts:
            second_ids, second_logprobs = trainer._generate_single_turn(second_prompts, None, {}, 1)
            second_texts = tokenizer.batch_decode(second_ids, skip_special_tokens=True)
            for k, i in enumerate(second_at):
                completion_ids[i] += joins[k] + list(second_ids[k])
                env_mask[i] += [0] * len(joins[k]) + [1] * len(second_ids[k])
                if logprobs is not None and second_logprobs is not None:
                    logprobs[i] += [0.0] * len(joins[k]) + list(second_logprobs[k])
                state[i].second_completion = second_texts[k]
        for i in forced:
            state[i].tokens = sum(env_mask[i])
        return {
            "prompt_ids": prompt_ids,
            "completion_ids": completion_ids,
            "logprobs": logprobs,
            "env_mask": env_mask,
            "recursion": state,
        }


def _turn(first: Any, workers: int, max_steps: int) -> str:
    """The recursion turn after the first round: the last step's response (none if it failed)."""
    steps = first.record.steps if first.record is not None else []
    response = steps[-1].output if steps and steps[-1].ok else None
    return recursion_turn(response, max_steps, can_recurse=False, self_id=workers)


def _run(trainer: Any, coroutine: Any) -> Any:
    """Run a coroutine on TRL's reward event loop (the one the async reward's models use)."""
    loop = getattr(trainer, "async_loop", None)
    if loop is not None:
        return asyncio.run_coroutine_threadsafe(coroutine, loop).result()
    return asyncio.run(coroutine)
