"""Checkpointing the trained layers only (training/checkpoint_layers.py): the same gradients as keeping every
activation, fewer activations kept, generation untouched, frozen layers never recomputed."""

from __future__ import annotations

import gc
import platform

import pytest
from installed import Deferred, needs
from training_fixtures import grpo_prompts

pytestmark = needs("torch", "transformers")
torch = Deferred("torch")
guard = Deferred("training.guard")  # these import torch
lean = Deferred("training.lean_generation")
shared_prompts = Deferred("training.shared_prompts")
checkpoint_layers = Deferred("training.checkpoint_layers")
model_prep = Deferred("training.model_prep")


def tiny_llama(checkpointed: bool):
    """A 3-layer Llama with grouped-query attention, its bottom layer frozen, set up as train.py does."""
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=3,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                         pad_token_id=0, eos_token_id=1, bos_token_id=None, attn_implementation="sdpa")  # fmt: skip
    torch.manual_seed(0)
    model = LlamaForCausalLM(config)
    model_prep.freeze_below(model, 2)
    guard.mask_padded_attention(model)
    guard.padsafe_attention(model)
    shared_prompts.share_prompt_passes(lean.lean_generation(model))
    if checkpointed:
        assert checkpoint_layers.checkpoint_trained_layers(model) == 2
    return model


def loss_of(model, ids, mask):  # noqa: ANN001, ANN201
    """A GRPO-like loss: the labelled positions' log-probs, the cache the model builds itself (use_cache)."""
    model.train()
    return model(input_ids=ids, attention_mask=mask, labels=ids.masked_fill(mask == 0, -100)).loss


@pytest.mark.parametrize("use_cache", [True, False], ids=["model-cache", "no-cache"])
def test_gradients_equal_keeping_every_activation(use_cache):
    ids, mask = grpo_prompts(rollouts=2)
    grads = []
    for checkpointed in (False, True):
        model = tiny_llama(checkpointed)
        model.config.use_cache = use_cache
        loss_of(model, ids, mask).backward()
        grads.append({name: p.grad.clone() for name, p in model.named_parameters() if p.grad is not None})
    assert grads[0].keys() == grads[1].keys() and len(grads[0]) > 9  # two layers and the norm train
    assert not any(name.startswith("model.layers.0.") for name in grads[0])
    assert any(g.abs().sum() > 0 for g in grads[0].values())
    for name, grad in grads[0].items():
        assert torch.equal(grads[1][name], grad), name


def heap_in_use() -> int:
    """Bytes glibc's malloc has handed out (torch's CPU tensors included)."""
    import ctypes

    class Info(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in
                    "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()]  # fmt: skip

    mallinfo2 = ctypes.CDLL(None).mallinfo2
    mallinfo2.restype = Info
    info = mallinfo2()
    return info.uordblks + info.hblkhd


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="measured through glibc's mallinfo2")
def test_fewer_activations_are_kept_and_frozen_layers_are_not_recomputed():
    ids, mask = grpo_prompts(rollouts=8)
    kept, runs = [], []
    for checkpointed in (False, True):
        model = tiny_llama(checkpointed)
        loss_of(model, ids, mask).backward()  # a first step: lazily built buffers exist in both
        model.zero_grad(set_to_none=True)
        calls = []
        for index, layer in enumerate(model.model.layers):  # (module hooks do not fire in a recompute)
            layer.mlp.forward = lambda x, run=layer.mlp.forward, i=index, seen=calls: (seen.append(i), run(x))[1]
        gc.collect()
        before = heap_in_use()
        loss = loss_of(model, ids, mask)
        gc.collect()
        kept.append(heap_in_use() - before)  # what the graph holds for the backward pass, and the loss
        calls.append("backward")
        loss.backward()
        runs.append(calls)
    assert runs[0] == [0, 1, 2, "backward"] and runs[1] == [0, 1, 2, "backward", 2, 1]  # the frozen layer: once
    assert 0 < kept[1] < 0.75 * kept[0]  # measured: ~0.6 (the logits, the same in both, included)


def test_generation_is_unchanged():
    from transformers import GenerationConfig

    ids, mask = grpo_prompts()
    config = GenerationConfig(max_new_tokens=12, do_sample=True, temperature=1.0, top_k=0, pad_token_id=0,
                              eos_token_id=1)  # fmt: skip
    outs = []
    for checkpointed in (False, True):
        model = tiny_llama(checkpointed).train()  # TRL generates with the model in training mode
        torch.manual_seed(7)
        outs.append(model.generate(input_ids=ids, attention_mask=mask, generation_config=config))
    assert torch.equal(outs[0], outs[1]) and outs[0].shape[1] > ids.shape[1]
