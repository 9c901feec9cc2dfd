"""Recursion training: self-calls and forced calls as a TRL rollout_func (a scripted trainer and
a character tokenizer stand in for TRL's generation), and its reward arithmetic."""

import asyncio

import pytest
from scripted import scripted

import training.rewards
from solvers.conducting import Settings
from solvers.executor import Worker
from training.recursion import (
    RecursionRollout,
    _Barrier,
    forced_rows,
    policy_generate,
    prompt_key,
    tokenize_prompts,
    turn_suffix_ids,
    until_eos,
)
from training.rewards import ConductorReward, training_prompt
from training.rollouts import read_rollouts, recursive_reward
from workers.pools import ModelSpec, PoolSpec

QUESTION = "What is 6 x 7?"
POOL = PoolSpec(name="test", workers=tuple(ModelSpec(f"mockllm/w{i}", description=f"member {i}") for i in range(2)))
STEP = 'model_id = [{m}]\nsubtasks = ["Solve it; end with ANSWER: <number>."]\naccess_list = [["all"]]'
KEEP = "model_id = []\nsubtasks = []\naccess_list = []"
SELF_CALL = 'model_id = [0, 2]\nsubtasks = ["Solve it.", "Review."]\naccess_list = [[], ["all"]]'
EOS = "\u00b6"


class CharTokenizer:
    """One token per character; a chat template of [role]content<EOS>\\n turns."""

    eos_token_id = ord(EOS)

    def apply_chat_template(self, messages, add_generation_prompt=False, tokenize=True, **_):
        text = "".join(f"[{m['role']}]{m['content']}{EOS}\n" for m in messages)
        return self.encode(text + ("[assistant]" if add_generation_prompt else ""))

    @staticmethod
    def encode(text):
        return [ord(c) for c in text]

    def decode(self, ids, skip_special_tokens=True):
        return "".join(chr(t) for t in ids if t != self.eos_token_id)

    def batch_decode(self, ids, skip_special_tokens=True):
        return [self.decode(seq) for seq in ids]


class Trainer:
    """What RecursionRollout uses of a GRPOTrainer (public attributes only), generating through
    `vllm_generation` as with vLLM. First rounds come from `first` (in order), recursive rounds
    from `second(context text)`; every generation call is kept."""

    use_vllm = True

    def __init__(self, first, second, group):
        self.processing_class = CharTokenizer()
        self.num_generations = group
        self.model = type("Model", (), {"training": True})()
        self.chat_template, self.chat_template_kwargs = None, {}
        self.first, self.second = list(first), second
        self.calls = []  # the decoded prompts of each generation call
        self.vllm_generation = self

    def generate(self, prompts, images, num_generations):
        """TRL's VLLMGeneration.generate: (prompt ids, completion ids, top-k logprobs, their token ids)."""
        texts = ["".join(map(chr, ids)) for ids in prompts]
        self.calls.append(texts)
        replies = [self.second(t) if "Your workflow has run" in t else self.first.pop(0) for t in texts]
        ids = [self.processing_class.encode(r + EOS) for r in replies]
        return prompts, ids, [[[-0.5]] * len(row) for row in ids], None


@pytest.fixture
def pool(monkeypatch):
    models = [scripted("ANSWER: 41"), scripted("ANSWER: 42")]
    monkeypatch.setattr(
        training.rewards,
        "pool_workers",
        lambda pool, *a: [Worker(m, s.model) for m, s in zip(models, pool.workers, strict=True)],
    )
    return models


def dataset(self_call=False):
    settings = Settings(max_depth=1) if self_call else Settings()
    prompt = training_prompt(QUESTION, POOL, [0, 1], settings, self_id=2 if self_call else None)
    row = {"question": QUESTION, "target": "42", "check": "numeric", "choices": None, "pool_indices": [0, 1],
           "domain": "math", "item_id": "q1"}  # fmt: skip
    return prompt, [{"prompt": prompt, **row}], row, settings


def score(reward, prompt, row, out):
    n = len(out["recursion"])
    columns = {k: [row[k]] * n for k in row} | {"recursion": out["recursion"]}
    completions = CharTokenizer().batch_decode(out["completion_ids"])
    return asyncio.run(reward([prompt] * n, completions, **columns))


def test_forced_rows_are_the_last_share_of_every_group():
    assert forced_rows(8, 4, 0.5) == [False, False, True, True] * 2
    assert forced_rows(4, 4, 0.0) == [False] * 4 and forced_rows(4, 4, 1.0) == [True] * 4
    with pytest.raises(ValueError, match="groups of 3"):
        forced_rows(8, 3, 0.5)
    with pytest.raises(ValueError, match="0..1"):
        forced_rows(4, 4, 1.5)


def test_forced_calls_train_both_rounds_and_are_scored_with_the_discount(pool, tmp_path):
    prompt, data, row, settings = dataset()
    reward = ConductorReward(POOL, settings=settings, rollout_log=tmp_path / "r.jsonl")
    # rollouts 0, 1 stay one-round; 2 and 3 are forced; 3's first round does not parse
    first = [STEP.format(m=0), STEP.format(m=1), STEP.format(m=0), "no workflow here"]
    trainer = Trainer(first, second=lambda context: STEP.format(m=1), group=4)
    out = RecursionRollout(reward, data, share=0.5)([prompt] * 4, trainer)

    assert len(trainer.calls) == 2 and len(trainer.calls[1]) == 1  # one batch per round
    [second_prompt] = trainer.calls[1]
    tokenizer = CharTokenizer()
    conversation = [*prompt, {"role": "assistant", "content": first[2]}]
    assert second_prompt.startswith("".join(map(chr, tokenizer.apply_chat_template(conversation))))
    assert "<response>\nANSWER: 41\n</response>" in second_prompt and second_prompt.endswith("[assistant]")

    ids, mask = out["completion_ids"][2], out["env_mask"][2]
    first_len, second_len = len(first[2]) + 1, len(STEP.format(m=1)) + 1  # + EOS
    join = ids[first_len : len(ids) - second_len]
    assert mask == [1] * first_len + [0] * len(join) + [1] * second_len
    assert "Your workflow has run" in "".join(map(chr, join))
    assert out["env_mask"][0] == [1] * len(out["completion_ids"][0])
    assert [s.second_completion is not None for s in out["recursion"]] == [False, False, True, False]
    assert out["recursion"][2].tokens == first_len + second_len

    rewards = score(reward, prompt, row, out)
    assert rewards == [0.5, 1.0, pytest.approx(recursive_reward(0.5, 1.0)), 0.0]
    logged = read_rollouts(tmp_path / "r.jsonl")
    assert logged[2]["recursive"] and logged[2]["first_reward"] == 0.5 and logged[2]["workers"] == [0, 1]
    assert logged[2]["completion"] == first[2] and logged[2]["second_completion"] == STEP.format(m=1)
    assert logged[2]["answer"] == "ANSWER: 42" and logged[2]["conductor_tokens"] == first_len + second_len
    assert not logged[0]["recursive"]


def test_a_self_call_is_generated_in_the_same_batch_and_its_workflow_goes_on(pool):
    prompt, data, row, settings = dataset(self_call=True)
    reward = ConductorReward(POOL, settings=settings)
    # rollout 0 calls itself (Model 2) mid-workflow; rollout 1 (forced) gets the call after its last step
    trainer = Trainer([SELF_CALL, STEP.format(m=0)], second=lambda context: STEP.format(m=1), group=2)
    out = RecursionRollout(reward, data, share=0.5)([prompt] * 2, trainer)
    assert len(trainer.calls) == 2 and len(trainer.calls[1]) == 2  # both recursive rounds in one batch
    self_call, forced = out["recursion"]
    assert not self_call.forced and self_call.shown == "ANSWER: 41"  # step 0's response, shown to the call
    nested = self_call.record.steps[1].round
    assert nested.depth == 1 and nested.workflow["model_id"] == [1] and self_call.record.answer == "ANSWER: 42"
    assert forced.forced and forced.record.steps[-1].round is not None
    assert score(reward, prompt, row, out) == [pytest.approx(recursive_reward(0.5, 1.0))] * 2


def test_keeping_the_answer_in_the_recursive_round_scores_it(pool):
    prompt, data, row, settings = dataset()
    reward = ConductorReward(POOL, settings=settings)
    out = RecursionRollout(reward, data, share=1.0)(
        [prompt] * 2, Trainer([STEP.format(m=1), STEP.format(m=0)], lambda context: KEEP, group=2)
    )
    # a kept right answer: (0.25 x 1 + 1) / 1.25 = 1; a kept wrong one: 0.5
    assert score(reward, prompt, row, out) == [pytest.approx(1.0), pytest.approx(0.5)]


def test_an_unparseable_recursive_round_scores_zero_for_that_round(pool):
    prompt, data, row, settings = dataset()
    reward = ConductorReward(POOL, settings=settings)
    out = RecursionRollout(reward, data, share=1.0)(
        [prompt] * 2, Trainer([STEP.format(m=1)] * 2, lambda context: "hmm", group=2)
    )
    assert out["recursion"][0].record.answer == "ANSWER: 42"  # the solver's fallback keeps the answer
    assert score(reward, prompt, row, out) == [pytest.approx(recursive_reward(1.0, 0.0))] * 2


def test_no_recursive_round_means_one_generation_and_a_failure_is_recorded(pool, monkeypatch):
    prompt, data, row, settings = dataset()
    reward = ConductorReward(POOL, settings=settings)
    trainer = Trainer(["nothing", "nothing either"], lambda context: KEEP, group=2)
    out = RecursionRollout(reward, data, share=1.0)([prompt] * 2, trainer)
    assert len(trainer.calls) == 1 and score(reward, prompt, row, out) == [0.0, 0.0]

    def broken(row):
        raise RuntimeError("pool unreachable")

    monkeypatch.setattr(reward, "workers_for", broken)
    out = RecursionRollout(reward, data, share=1.0)([prompt] * 2, Trainer([STEP.format(m=1)] * 2, None, group=2))
    assert all("pool unreachable" in s.error for s in out["recursion"])
    monkeypatch.undo()
    assert score(reward, prompt, row, out) == [0.5, 0.5]  # parseable, no answer: a recorded wrong answer


async def test_barrier_generates_once_and_refuses_a_late_request():
    batches = []
    barrier = _Barrier(3, lambda batch: (batches.append(batch) or [[7] * len(ids) for ids in batch], None))

    async def ask(ids):
        return await barrier.request(ids)

    results = await asyncio.gather(ask([1]), barrier.settle(), ask([2, 3]))
    assert batches == [[[1], [2, 3]]] and results[0] == ([7], None) and results[2] == ([7, 7], None)
    with pytest.raises(RuntimeError, match="after the batch"):
        await barrier.request([4])


def test_unknown_prompt_is_a_clear_error():
    _, data, _, _ = dataset()
    recursion = RecursionRollout(ConductorReward(POOL), data)
    with pytest.raises(KeyError, match="not in the dataset"):
        recursion.row([{"role": "user", "content": "another question"}])
    assert prompt_key("plain") == "plain"


def test_turn_suffix_follows_an_assistant_turn_ending_in_eos():
    tokenizer = CharTokenizer()
    suffix = "".join(map(chr, turn_suffix_ids(tokenizer, "review this")))
    assert suffix == "\n[user]review this" + EOS + "\n[assistant]"


@pytest.mark.slow
def test_real_grpo_trainer_trains_forced_recursion_trajectories(tmp_path, monkeypatch):
    """TRL's GRPOTrainer (pinned 1.16) with this rollout_func: a tiny random model, its
    first rounds replaced by valid workflows so that half of each group gets a second round."""
    pytest.importorskip("trl")
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    import torch
    from datasets import Dataset
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
    from trl import GRPOConfig, GRPOTrainer

    from solvers.conducting import Settings

    vocab = {t: i for i, t in enumerate(["<|im_start|>", "<|im_end|>", "\n", *map(chr, range(32, 127))])}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token=" "))
    core.pre_tokenizer = pre_tokenizers.Split(pattern="", behavior="isolated")
    core.decoder = decoders.Fuse()
    core.add_special_tokens(["<|im_start|>", "<|im_end|>"])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, eos_token="<|im_end|>", pad_token="<|im_end|>")
    tokenizer.chat_template = (
        "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(vocab), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=4096,
                         eos_token_id=1, pad_token_id=1, bos_token_id=None)  # fmt: skip
    settings = Settings(few_shot="none")
    questions = [f"What is {i} + 40?" for i in range(2)]
    rows = [
        {"prompt": training_prompt(q, "sim", [0, 1, 2, 3], settings), "question": q, "target": str(i + 40),
         "check": "numeric", "choices": None, "pool_indices": [0, 1, 2, 3], "domain": "math", "item_id": f"q{i}"}
        for i, q in enumerate(questions)
    ]  # fmt: skip
    reward = ConductorReward("sim", settings=settings, rollout_log=tmp_path / "r.jsonl")

    def valid_first_rounds(trainer, prompt_ids, n):
        ids, logprobs = policy_generate(trainer, prompt_ids, n)
        for k, text in enumerate(tokenizer.batch_decode(prompt_ids)):
            if "Your workflow has run" not in text:
                workflow = f'model_id = [{k % 4}]\nsubtasks = ["Solve."]\naccess_list = [[]]'
                ids[k] = tokenizer.encode(workflow, add_special_tokens=False) + [tokenizer.eos_token_id]
        return ids, logprobs

    args = GRPOConfig(output_dir=str(tmp_path / "out"), per_device_train_batch_size=4, num_generations=4,
                      max_completion_length=16, max_steps=1, logging_steps=1, report_to=[], use_cpu=True,
                      save_strategy="no", beta=0.0)  # fmt: skip
    trainer = GRPOTrainer(model=LlamaForCausalLM(config), processing_class=tokenizer, reward_funcs=[reward],
                          args=args, train_dataset=Dataset.from_list(rows),
                          rollout_func=RecursionRollout(reward, rows, generate=valid_first_rounds))  # fmt: skip
    trainer.train()
    [logged] = [h for h in trainer.state.log_history if "loss" in h]
    rollouts = read_rollouts(tmp_path / "r.jsonl")
    assert len(rollouts) == 4 and [r["second_completion"] is not None for r in rollouts] == [False, False, True, True]
    assert logged["conductor/recursion_share"] == 0.5 and logged["conductor/parse_rate"] == 1.0
    assert logged["reward"] == pytest.approx(sum(r["reward"] for r in rollouts) / 4)
    for r in rollouts[2:]:  # a random model's second round does not parse: 0.25 x r1 / 1.25
        assert r["reward"] == pytest.approx(recursive_reward(r["first_reward"], 0.0))
    # the trained tokens exclude the turn between the rounds (TRL counts env_mask=1 tokens)
    first_len = len(tokenizer.encode('model_id = [0]\nsubtasks = ["Solve."]\naccess_list = [[]]')) + 1
    assert logged["completions/max_length"] <= first_len + 16


def test_several_processes_generate_the_second_batch_even_when_empty():
    from training.recursion import _generate_second

    trainer = Trainer([], lambda context: KEEP, group=1)
    trainer.first = ["filler reply"]
    assert _generate_second(policy_generate, trainer, [], [1, 2]) == ([], None) and trainer.calls == []  # no call
    trainer.accelerator = type("Accelerator", (), {"num_processes": 2})()
    assert _generate_second(policy_generate, trainer, [], [ord("a")]) == ([], None)
    assert trainer.calls == [["a"]]  # the filler was generated (and discarded) to stay in step


def test_generation_goes_through_trl_public_names_only():
    """The rollout_func tokenizes and generates through TRL's public surface (trl 1.16)."""
    import re
    from pathlib import Path

    trainer = Trainer([STEP.format(m=0)], None, group=1)
    [ids] = tokenize_prompts(trainer, [[{"role": "user", "content": "hi"}]])
    assert "".join(map(chr, ids)) == "[user]hi" + EOS + "\n[assistant]"
    reply = CharTokenizer.encode(STEP.format(m=0) + EOS)
    assert policy_generate(trainer, [ids], 1) == ([reply], [[-0.5] * len(reply)])  # the sampled tokens' logprobs
    with pytest.raises(ValueError, match="conversational prompts"):
        tokenize_prompts(trainer, ["plain text"])
    assert until_eos([5, 1, 9, 1], [1]) == [5, 1] and until_eos([5, 6], [1]) == [5, 6]
    for source in (Path(__file__).resolve().parents[2] / "training").glob("*.py"):
        private = re.findall(r"trainer\._\w+|\b_tokenize_prompts\b|\b_generate_single_turn\b", source.read_text())
        assert not private, f"{source.name} uses TRL-private names: {private}"
