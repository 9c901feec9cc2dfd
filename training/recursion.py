"""Recursion training (the paper's Sec. 3.2) as a TRL `rollout_func`: the conductor may call
itself, and one recursive call is forced for a share of each batch.

    reward = ConductorReward(pool, settings={"max_depth": 1, ...})
    GRPOTrainer(..., reward_funcs=[reward], rollout_func=Recursion(reward, train_rows, share=0.5))

Each call: (1) the policy writes every rollout's first round (one batched generation);
(2) every first round runs on the pool through the solver's own code (`run_completion`, the
policy as the conductor): a step naming the conductor (offered when the reward's settings have
`max_depth >= 1`) is a recursive call, and in each GRPO group the last `share` of the rollouts
that did not call themselves get one forced call after their last step (the conversation the
solver builds when the conductor is the last step); (3) once every rollout has finished or is
waiting in such a call, all recursive rounds are generated in one batch (`continue_round`:
the conductor's conversation continued with the recursion turn) and the workflows go on.
A process always makes exactly two generation calls, so several processes stay in step.

The trajectory trained on is `first completion + recursion turn + second completion`, the
turn's tokens masked out of the loss (TRL's `env_mask`). The reward (`ConductorReward`) then
only scores: a rollout that recursed gets `recursive_reward(r1, r2)`, r1 the paper reward of
the response the recursive round was shown, r2 that of the recursive round (0 if its lists do
not parse) with the final answer; first round x 0.25, normalised (see training/rollouts.py).

At most one recursive call per rollout (the reward's `max_recursions` is capped at 1 here).
Only TRL's public surface is used (trl 1.16): the rollout_func contract, the trainer's public
attributes (`processing_class`, `chat_template`, `vllm_generation`, `generation_config`, ...)
and `trl.models.unwrap_model_for_generation` (`policy_generate`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageUser, GenerateConfig, ModelOutput, ModelUsage

from solvers.conducting import Budget, continue_round, run_completion
from solvers.executor import RoundRecord, StepRecord, final_answer, run_recursion
from solvers.team import Conductor
from training.rewards import ConductorReward, Recursion

FORCED_CALL = "(forced recursive call after the last step)"


def forced_rows(n: int, group: int, share: float) -> list[bool]:
    """Which of `n` rollouts (contiguous GRPO groups of `group`) may get a forced recursive
    call: the last round(share x group) of every group."""
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
    turn = {"role": "user", "content": text}
    full = list(tokenizer.apply_chat_template([*dummy, turn], add_generation_prompt=True, **options))
    eos = [i for i, t in enumerate(prefix) if t == tokenizer.eos_token_id]
    if eos:
        prefix = prefix[: eos[-1] + 1]
    if full[: len(prefix)] != prefix:
        raise ValueError("the chat template does not render an added user turn as a suffix of the conversation")
    return full[len(prefix) :]


Completions = tuple[list[list[int]], list[list[float]] | None]  # token ids, their logprobs (vLLM) or None
Generate = Callable[[list[list[int]]], Completions]


def chat_options(trainer: Any) -> dict:
    """How the trainer renders a conversation: its chat template and template kwargs."""
    return {"chat_template": trainer.chat_template, **trainer.chat_template_kwargs}


def tokenize_prompts(trainer: Any, prompts: Sequence) -> list[list[int]]:
    """Each conversational prompt rendered as the trainer renders it, with the generation prompt."""
    if any(isinstance(p, str) for p in prompts):
        raise ValueError("recursion training needs conversational prompts (lists of messages), as build_rows makes")
    tokenizer, options = trainer.processing_class, chat_options(trainer)
    return [
        list(tokenizer.apply_chat_template(p, add_generation_prompt=True, tokenize=True, return_dict=False, **options))
        for p in prompts
    ]


def until_eos(ids: Sequence[int], eos_ids: Iterable[int]) -> list[int]:
    """A generated row up to and including its first EOS (what follows is padding)."""
    stops = set(eos_ids)
    end = next((k + 1 for k, t in enumerate(ids) if t in stops), len(ids))
    return list(ids[:end])


def policy_generate(trainer: Any, prompt_ids: list[list[int]], num_generations: int) -> Completions:
    """The policy's completions of `prompt_ids` (one per row; rows repeat a prompt per GRPO group,
    as TRL's sampler gives them), as TRL's own generation makes them: with vLLM through the trainer's
    `vllm_generation` (TRL syncs its weights before it calls a rollout_func), else the model's
    `generate` with the trainer's generation config, prompts left-padded."""
    if trainer.use_vllm:
        _, ids, logprobs, _ = trainer.vllm_generation.generate(
            prompts=prompt_ids, images=None, num_generations=num_generations
        )
        return ids, [[top[0] for top in row] for row in logprobs]  # the sampled token's logprob
    import torch
    from trl.models import unwrap_model_for_generation

    width, pad = max(map(len, prompt_ids)), trainer.processing_class.pad_token_id
    device = trainer.accelerator.device
    input_ids = torch.tensor([[pad] * (width - len(ids)) + list(ids) for ids in prompt_ids], device=device)
    mask = torch.tensor([[0] * (width - len(ids)) + [1] * len(ids) for ids in prompt_ids], device=device)
    with (
        unwrap_model_for_generation(
            trainer.model_wrapped,
            trainer.accelerator,
            gather_deepspeed3_params=trainer.args.ds3_gather_for_generation,
            generation_kwargs=trainer.generation_kwargs,
            gradient_checkpointing_kwargs=trainer.args.gradient_checkpointing_kwargs,
        ) as model,
        torch.no_grad(),
    ):
        out = model.generate(input_ids=input_ids, attention_mask=mask, generation_config=trainer.generation_config)
    return [until_eos(row, trainer.eos_token_ids) for row in out[:, width:].tolist()], None


class _Barrier:
    """Collects the recursive generations of one batch and makes them in one call, once every
    rollout has either asked for one or finished without."""

    def __init__(self, rollouts: int, generate: Generate):
        self.left, self.generate = rollouts, generate
        self.pending: list[tuple[list[int], asyncio.Future]] = []
        self.flushed = False

    async def request(self, ids: list[int]) -> tuple[list[int], list[float] | None]:
        if self.flushed:
            raise RuntimeError("a second recursive generation was asked for after the batch was generated")
        future = asyncio.get_running_loop().create_future()
        self.pending.append((ids, future))
        await self.settle()
        return await future

    async def settle(self) -> None:
        """One rollout is settled (waiting for its generation, or finished)."""
        self.left -= 1
        if self.left > 0 or self.flushed:
            return
        self.flushed = True
        batch = self.pending
        try:
            ids, logprobs = await asyncio.to_thread(self.generate, [b[0] for b in batch])
        except BaseException as error:
            for _, future in batch:
                future.set_exception(error)
            return
        for k, (_, future) in enumerate(batch):
            future.set_result((ids[k], logprobs[k] if logprobs is not None else None))


class PolicyModel:
    """The policy under training as the conductor of one rollout (an Inspect-style model:
    `config` and `generate`): its only generation is the recursive round, continuing the
    rollout's own token ids with the recursion turn."""

    def __init__(self, barrier: _Barrier, tokenizer: Any, context_ids: list[int], template: dict) -> None:
        self.barrier, self.tokenizer, self.context_ids, self.template = barrier, tokenizer, context_ids, template
        self.config = GenerateConfig()
        self.segment: tuple[list[int], list[int], list[float] | None] | None = None  # (turn ids, ids, logprobs)
        self.text: str | None = None

    async def generate(self, messages: Sequence[ChatMessage], config: GenerateConfig | None = None) -> ModelOutput:
        if self.segment is not None or len(messages) != 3:
            raise RuntimeError("the policy writes one recursive round per rollout (max_recursions 1, depth 1)")
        eos = self.tokenizer.eos_token_id
        join = [] if self.context_ids and self.context_ids[-1] == eos else [eos]
        join += turn_suffix_ids(self.tokenizer, messages[-1].text, **self.template)
        self.segment = (join, [], None)
        ids, logprobs = await self.barrier.request(self.context_ids + join)
        self.segment = (join, list(ids), list(logprobs) if logprobs is not None else None)
        self.text = self.tokenizer.decode(ids, skip_special_tokens=True)
        output = ModelOutput.from_content(model="policy", content=self.text)
        tokens_in = len(self.context_ids) + len(join)
        output.usage = ModelUsage(input_tokens=tokens_in, output_tokens=len(ids), total_tokens=tokens_in + len(ids))
        return output


class RecursionRollout:
    """TRL `rollout_func(prompts, trainer)`: first rounds, self-calls and forced calls.

    Args:
        reward: the run's `ConductorReward` (its pool, settings and concurrency run the rounds;
            it scores them afterwards).
        dataset: the training rows (with `prompt` and the reward's columns): the rollout
            function receives prompts only and finds each one's row here.
        share: share of each GRPO group that gets a forced call when it did not call itself.
        generate: `(trainer, prompt_ids, num_generations) -> (ids, logprobs)`, the policy's
            generation (default `policy_generate`).
    """

    __name__ = "recursion_rollout"

    def __init__(
        self,
        reward: ConductorReward,
        dataset: Iterable[Mapping[str, Any]],
        share: float = 0.5,
        generate: Callable[[Any, list[list[int]], int], Completions] = policy_generate,
    ) -> None:
        forced_rows(2, 2, share)  # validates share
        self.reward, self.share, self.generate = reward, share, generate
        self.settings = replace(reward.settings, max_recursions=min(1, reward.settings.max_recursions))
        self.rows = {prompt_key(r["prompt"]): {k: v for k, v in r.items() if k != "prompt"} for r in dataset}

    def row(self, prompt: object) -> dict:
        key = prompt_key(prompt)
        if key not in self.rows:
            raise KeyError("a prompt of the batch is not in the dataset given to RecursionRollout; pass the train rows")
        return self.rows[key]

    def __call__(self, prompts: Sequence, trainer: Any) -> dict[str, Any]:
        tokenizer = trainer.processing_class
        group = trainer.num_generations if trainer.model.training else trainer.num_generations_eval
        prompt_ids = tokenize_prompts(trainer, prompts)
        first_ids, first_logprobs = self.generate(trainer, prompt_ids, group)
        texts = tokenizer.batch_decode(first_ids, skip_special_tokens=True)
        forced = forced_rows(len(prompts), group, self.share)
        rows = [self.row(p) for p in prompts]  # a prompt missing from the dataset is a setup error
        template = chat_options(trainer)
        barrier = _Barrier(len(prompts), lambda batch: _generate_second(self.generate, trainer, batch, prompt_ids[0]))
        policies = [
            PolicyModel(barrier, tokenizer, list(prompt_ids[i]) + list(first_ids[i]), template)
            for i in range(len(prompts))
        ]
        states = _run(trainer, self._rounds(prompts, rows, texts, forced, policies, barrier))
        completion_ids = [list(ids) for ids in first_ids]
        env_mask = [[1] * len(ids) for ids in completion_ids]
        logprobs = [list(lp) for lp in first_logprobs] if first_logprobs is not None else None
        for i, policy in enumerate(policies):
            if policy.segment is not None and policy.text is not None:
                join, ids, lp = policy.segment
                completion_ids[i] += join + ids
                env_mask[i] += [0] * len(join) + [1] * len(ids)
                if logprobs is not None:
                    logprobs[i] += [0.0] * len(join) + (lp if lp is not None else [0.0] * len(ids))
                states[i].second_completion = policy.text
            states[i].tokens = sum(env_mask[i])
        return {
            "prompt_ids": prompt_ids,
            "completion_ids": completion_ids,
            "logprobs": logprobs,
            "env_mask": env_mask,
            "recursion": states,
        }

    async def _rounds(self, prompts, rows, texts, forced, policies, barrier) -> list[Recursion]:  # noqa: ANN001
        # every rollout at once: one waiting at the barrier must not hold a slot that a
        # rollout the barrier waits for needs (the models' own connection limits still apply)
        async def one(i: int) -> Recursion:
            try:
                return await self._round(prompts[i], rows[i], texts[i], forced[i], policies[i])
            finally:
                if policies[i].segment is None:  # never asked for a generation
                    await barrier.settle()

        return list(await asyncio.gather(*(one(i) for i in range(len(prompts)))))

    async def _round(self, prompt: object, row: dict, text: str, forced: bool, policy: PolicyModel) -> Recursion:
        """Run one rollout's first round (and its recursive call, if any); errors are recorded."""
        state = Recursion(prompt=prompt_key(prompt), first_completion=text, forced=forced)
        try:
            workers = self.reward.workers_for(row)
            lead = Conductor(policy, "policy", None, False)  # type: ignore[arg-type] - an Inspect-style model
            budget = Budget(self.settings.max_recursions)
            with self.reward.sample_context(row):
                record = await run_completion(text, row["question"], workers, self.settings, lead, budget=budget)
                state.record = record
                if forced and record.rejection is None and record.steps and not _recursed(record):
                    await self._forced_call(record, row["question"], state.prompt, text, lead, workers)
            state.shown = shown_response(record)
        except Exception as error:  # noqa: BLE001 - a broken rollout is data, never a crashed step
            state.error = f"{type(error).__name__}: {error}"[:2000]
        return state

    async def _forced_call(  # noqa: ANN001
        self, record: RoundRecord, question: str, prompt: str, text: str, lead, workers
    ) -> None:
        """Append a conductor step after the last one, as the solver runs a final self-call."""
        last = len(record.steps) - 1
        shown = record.steps[last].ok  # the recursion turn shows the last step's response, if any
        step = StepRecord(last + 1, len(workers), "conductor", FORCED_CALL, [last] if shown else [])
        previous = (record.steps[last].subtask, record.steps[last].output, last == 0) if shown else None
        conversation = [ChatMessageUser(content=prompt)]

        async def recurse(before):  # noqa: ANN001, ANN202
            return await continue_round(
                question, lead, workers, self.settings, conversation, text, before, 0, Budget(1)
            )

        await run_recursion(step, previous, recurse)
        record.steps.append(step)
        record.answer = final_answer(record.steps)


def shown_response(record: RoundRecord) -> str | None:
    """The response the rollout's recursive round was shown (what the conductor step that
    called the conductor recorded as seen), or None (no recursion, or that step failed)."""
    for step in record.steps:
        if step.recursed:
            return record.steps[step.visible[0]].output if step.visible else None
    return None


def _recursed(record: RoundRecord) -> bool:
    return any(step.recursed for step in record.steps)


def _generate_second(generate: Callable, trainer: Any, batch: list[list[int]], filler: list[int]) -> Completions:
    """The batched recursive generations (one per request). With several processes an empty
    batch still generates once (discarded) so that every process makes the same calls."""
    processes = getattr(getattr(trainer, "accelerator", None), "num_processes", 1)
    if not batch and processes <= 1:
        return [], None
    ids, logprobs = generate(trainer, batch or [list(filler)], 1)
    return (ids, logprobs) if batch else ([], None)


def _run(trainer: Any, coroutine: Any) -> Any:
    """Run a coroutine on TRL's reward event loop (the one the async reward's models use)."""
    loop = getattr(trainer, "async_loop", None)
    if loop is not None:
        return asyncio.run_coroutine_threadsafe(coroutine, loop).result()
    return asyncio.run(coroutine)
