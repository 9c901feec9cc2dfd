"""One prompt pass per distinct prompt (training/shared_prompts.py): seeded completions identical to plain
`generate`, each distinct prompt encoded once."""

from __future__ import annotations

from installed import Deferred, needs
from training_fixtures import grpo_prompts

pytestmark = needs("torch", "transformers")
torch = Deferred("torch")
guard = Deferred("training.guard")  # these two import torch
shared_prompts = Deferred("training.shared_prompts")


def tiny_llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=256,
                         pad_token_id=0, eos_token_id=1, bos_token_id=None)  # fmt: skip
    torch.manual_seed(0)
    model = LlamaForCausalLM(config).eval()
    guard.mask_padded_attention(model)  # as training/train.py runs it
    return model


def sampled(model, ids, mask):
    from transformers import GenerationConfig

    config = GenerationConfig(max_new_tokens=12, do_sample=True, temperature=1.0, top_k=0, pad_token_id=0,
                              eos_token_id=1)  # fmt: skip
    torch.manual_seed(7)
    return model.generate(input_ids=ids, attention_mask=mask, generation_config=config)


def test_seeded_completions_equal_plain_generates():
    ids, mask = grpo_prompts()
    plain = sampled(tiny_llama(), ids, mask)
    shared = sampled(shared_prompts.share_prompt_passes(tiny_llama()), ids, mask)
    assert torch.equal(shared, plain)
    assert len({tuple(row) for row in plain[:4, 30:].tolist()}) > 1  # the rollouts differ: sampling ran


def test_each_distinct_prompt_is_encoded_once():
    model = shared_prompts.share_prompt_passes(tiny_llama())
    batches: list[tuple[int, int]] = []
    model.model.register_forward_pre_hook(lambda _m, _a, kw: batches.append(tuple(kw["input_ids"].shape)),
                                          with_kwargs=True)  # fmt: skip
    ids, mask = grpo_prompts(rollouts=8)
    sampled(model, ids, mask)
    assert batches[0] == (2, 29)  # the prompts but their last token, once per question
    assert all(shape == (16, 1) for shape in batches[1:])  # then one token per row per step


def test_a_batch_without_repeats_is_generated_as_before():
    ids, mask = grpo_prompts(rollouts=1)
    shared = sampled(shared_prompts.share_prompt_passes(tiny_llama()), ids, mask)
    assert torch.equal(shared, sampled(tiny_llama(), ids, mask))
