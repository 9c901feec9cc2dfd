"""Generation without cache copies (training/lean_generation.py): seeded completions identical to plain
`generate` (alone, under one-prompt-pass sharing, under a caller's logits processor), keys and values
written in place, no key/value head repeated where no gradient flows, and only in the model made lean
(nothing of transformers changes, so any test order gives the same results), training gradients unchanged."""

from __future__ import annotations

import gc
import weakref

import pytest
from installed import Deferred, needs
from training_fixtures import grpo_prompts

pytestmark = needs("torch", "transformers")
torch = Deferred("torch")
guard = Deferred("training.guard")  # these three import torch
lean = Deferred("training.lean_generation")
shared_prompts = Deferred("training.shared_prompts")
SDPA = "transformers.integrations.sdpa_attention"


def gqa_llama(padsafe: bool = True):
    """A tiny Llama with grouped-query attention (4 query heads share 2 key/value heads), set up as train.py does
    (`padsafe=False`: transformers' own SDPA)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                         pad_token_id=0, eos_token_id=1, bos_token_id=None, attn_implementation="sdpa")  # fmt: skip
    torch.manual_seed(0)
    model = LlamaForCausalLM(config).eval()
    guard.mask_padded_attention(model)
    if padsafe:
        guard.padsafe_attention(model)
    return model


def sampled(model, ids, mask, **kwargs):
    from transformers import GenerationConfig

    config = GenerationConfig(max_new_tokens=12, do_sample=True, temperature=1.0, top_k=0, pad_token_id=0,
                              eos_token_id=1)  # fmt: skip
    torch.manual_seed(7)
    return model.generate(input_ids=ids, attention_mask=mask, generation_config=config, **kwargs)


@pytest.mark.parametrize("padsafe", [True, False], ids=["padsafe", "sdpa"])
@pytest.mark.parametrize("sharing", [False, True], ids=["alone", "shared-prompts"])
def test_seeded_completions_equal_plain_generates(sharing, padsafe):
    ids, mask = grpo_prompts()
    plain = sampled(gqa_llama(padsafe), ids, mask)
    model = lean.lean_generation(gqa_llama(padsafe))
    assert model.config._attn_implementation == ("sdpa_padsafe_lean" if padsafe else "sdpa_lean")
    out = sampled(shared_prompts.share_prompt_passes(model) if sharing else model, ids, mask)
    assert torch.equal(out, plain)
    assert len({tuple(row) for row in plain[:4, 30:].tolist()}) > 1  # the rollouts differ: sampling ran


def test_keys_and_values_are_written_in_place():
    model = shared_prompts.share_prompt_passes(lean.lean_generation(gqa_llama()))
    seen: list[tuple] = []

    def record(_module, _args, kwargs):  # noqa: ANN001, ANN202
        layer = kwargs["past_key_values"].layers[0]
        if layer.is_initialized:
            seen.append((type(layer).__name__, layer.buffers[0].data_ptr(), layer.keys.data_ptr(), layer.keys.shape))

    model.model.register_forward_pre_hook(record, with_kwargs=True)
    sampled(model, *grpo_prompts())
    assert len(seen) == 12  # a step per new token, after the prompts' pass
    assert {kind for kind, *_ in seen} == {"PreallocatedLayer"}
    assert len({buffer for _, buffer, _, _ in seen}) == 1  # one buffer through the whole call, never grown
    assert all(keys == buffer for _, buffer, keys, _ in seen)  # attention reads a view of it
    assert [shape[-2] for *_, shape in seen] == list(range(29, 41))  # the view grows by one position per step


@pytest.mark.parametrize("sharing", [False, True], ids=["alone", "shared-prompts"])
def test_every_layers_keys_and_values_lie_in_one_block(sharing):
    """One allocation for the whole cache (glibc maps it apart from the heap), rows reordered into a new one."""
    model = lean.lean_generation(gqa_llama())
    if sharing:
        model = shared_prompts.share_prompt_passes(model)
    caches = []
    model.model.register_forward_pre_hook(lambda _m, _a, kwargs: caches.append(kwargs["past_key_values"]),
                                          with_kwargs=True)  # fmt: skip
    sampled(model, *grpo_prompts())
    cache = caches[-1]
    assert isinstance(cache, lean.PreallocatedCache) and cache.block.shape[:3] == (2, 2, 8)  # layers, k|v, rows
    storages = {buffer.untyped_storage().data_ptr() for layer in cache.layers for buffer in layer.buffers}
    assert storages == {cache.block.untyped_storage().data_ptr()}
    gone = weakref.ref(cache.block)
    gc.disable()  # freed when the last reference goes (no cycle waits for the collector, holding the block)
    try:
        del cache
        caches.clear()
        assert gone() is None
    finally:
        gc.enable()


def test_no_head_is_repeated_without_a_gradient_in_the_lean_model_only(monkeypatch):
    """The lean model repeats no key/value head; a model beside it, built after it, still takes transformers'
    path, and transformers' functions are the ones they were."""
    from transformers import AttentionInterface
    from transformers.integrations import sdpa_attention

    before = (sdpa_attention.use_gqa_in_sdpa, sdpa_attention.repeat_kv, AttentionInterface()["sdpa"])
    calls = []

    def counting(hidden, n_rep):  # noqa: ANN001, ANN202
        calls.append(n_rep)
        return repeat_kv(hidden, n_rep)

    repeat_kv = sdpa_attention.repeat_kv
    ids, mask = grpo_prompts()
    lean_model = lean.lean_generation(gqa_llama())
    assert (sdpa_attention.use_gqa_in_sdpa, sdpa_attention.repeat_kv, AttentionInterface()["sdpa"]) == before
    monkeypatch.setattr(f"{SDPA}.repeat_kv", counting)
    for padsafe in (True, False):
        beside = gqa_llama(padsafe)
        assert beside.config._attn_implementation == ("sdpa_padsafe" if padsafe else "sdpa")
        sampled(lean_model, ids, mask)
        assert calls == []
        sampled(beside, ids, mask)
        assert calls and set(calls) == {2}  # transformers' own path repeats the heads under a mask
        calls.clear()


def test_the_lean_path_keeps_padsafe_rows_and_runs_grouped(monkeypatch):
    """Under `sdpa_padsafe` the lean path too hands SDPA no fully masked row, and passes the grouped heads."""
    real = torch.nn.functional.scaled_dot_product_attention
    seen = []

    def watching(query, key, value, attn_mask=None, **kwargs):  # noqa: ANN001, ANN202
        if attn_mask is not None:
            blocked = ~attn_mask if attn_mask.dtype == torch.bool else torch.isneginf(attn_mask)
            seen.append((kwargs.get("enable_gqa", False), key.shape[1] < query.shape[1], bool(blocked.all(-1).any())))
        return real(query, key, value, attn_mask=attn_mask, **kwargs)

    monkeypatch.setattr("torch.nn.functional.scaled_dot_product_attention", watching)
    sampled(lean.lean_generation(gqa_llama()), *grpo_prompts())
    assert seen and all(gqa and grouped for gqa, grouped, _ in seen)
    assert not any(empty for *_, empty in seen)
    seen.clear()
    sampled(lean.lean_generation(gqa_llama(padsafe=False)), *grpo_prompts())
    assert any(empty for *_, empty in seen)  # the left padding does make such rows where padsafe is off


def test_only_sdpa_is_switched_and_switching_twice_changes_nothing():
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                         num_attention_heads=4, num_key_value_heads=2, attn_implementation="eager")  # fmt: skip
    eager = LlamaForCausalLM(config)
    assert not lean.lean_attention(eager) and eager.config._attn_implementation == "eager"
    model = gqa_llama()
    assert lean.lean_attention(model) and lean.lean_attention(model)
    assert model.config._attn_implementation == "sdpa_padsafe_lean"


def test_training_gradients_are_unchanged():
    ids, mask = grpo_prompts(rollouts=1)

    def gradients(model):  # noqa: ANN001, ANN202
        model.train()
        loss = model(input_ids=ids, attention_mask=mask, labels=ids.masked_fill(mask == 0, -100)).loss
        loss.backward()
        return [p.grad.clone() for p in model.parameters()]

    before = gradients(gqa_llama())
    after = gradients(lean.lean_generation(gqa_llama()))
    assert all(torch.equal(a, b) for a, b in zip(before, after, strict=True))


def test_a_cache_too_small_grows_and_gives_the_same_completions():
    ids, mask = grpo_prompts()
    model = gqa_llama()
    plain = sampled(model, ids, mask)
    cache = lean.PreallocatedCache(model.config, capacity=8)
    assert torch.equal(sampled(model, ids, mask, past_key_values=cache), plain)
    assert cache.layers[0].buffers[0].shape[-2] >= plain.shape[1] - 1


def test_a_callers_logits_processor_still_applies():
    """training/explore.py wraps generate and passes its processor through kwargs."""
    from transformers import LogitsProcessor, LogitsProcessorList

    class Force(LogitsProcessor):
        def __call__(self, input_ids, scores):  # noqa: ANN001, ANN204
            scores[:] = float("-inf")
            scores[:, 5] = 0.0
            return scores

    ids, mask = grpo_prompts()
    model = shared_prompts.share_prompt_passes(lean.lean_generation(gqa_llama()))
    out = sampled(model, ids, mask, logits_processor=LogitsProcessorList([Force()]))
    assert (out[:, ids.shape[1] :] == 5).all()


def test_a_model_with_sliding_window_layers_keeps_transformers_cache():
    from transformers import DynamicCache, Qwen2Config

    sliding = Qwen2Config(num_hidden_layers=2, layer_types=["sliding_attention", "full_attention"],
                          use_sliding_window=True, sliding_window=4)  # fmt: skip
    assert type(lean.generation_cache(sliding, 16)) is DynamicCache
    assert type(lean.generation_cache(gqa_llama().config, 16)) is lean.PreallocatedCache
