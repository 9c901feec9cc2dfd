"""Generation without cache copies (training/lean_generation.py): seeded completions identical to plain
`generate` (alone, under one-prompt-pass sharing, under a caller's logits processor), keys and values
written in place, no key/value head repeated where no gradient flows, training gradients unchanged."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from transformers.integrations import sdpa_attention  # noqa: E402

from training.guard import mask_padded_attention, padsafe_attention  # noqa: E402
from training.lean_generation import PreallocatedCache, generation_cache, lean_generation  # noqa: E402
from training.shared_prompts import share_prompt_passes  # noqa: E402


@pytest.fixture(autouse=True)
def restore_sdpa(monkeypatch):
    """lean_generation changes transformers' SDPA choice process-wide: undone after each test."""
    monkeypatch.setattr(sdpa_attention, "use_gqa_in_sdpa", sdpa_attention.use_gqa_in_sdpa)
    monkeypatch.setattr(sdpa_attention, "repeat_kv", sdpa_attention.repeat_kv)


def gqa_llama():
    """A tiny Llama with grouped-query attention (4 query heads share 2 key/value heads), set up as train.py does."""
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                         pad_token_id=0, eos_token_id=1, bos_token_id=None, attn_implementation="sdpa")  # fmt: skip
    torch.manual_seed(0)
    model = LlamaForCausalLM(config).eval()
    mask_padded_attention(model)
    padsafe_attention(model)
    return model


def grpo_prompts(rollouts: int = 4):
    """Two questions of different lengths (one left-padded), each repeated `rollouts` times."""
    generator = torch.Generator().manual_seed(1)
    long, short = torch.randint(2, 300, (30,), generator=generator), torch.randint(2, 300, (21,), generator=generator)
    ids = torch.stack([long] * rollouts + [torch.cat([torch.zeros(9, dtype=torch.long), short])] * rollouts)
    mask = torch.ones_like(ids)
    mask[rollouts:, :9] = 0
    return ids, mask


def sampled(model, ids, mask, **kwargs):
    from transformers import GenerationConfig

    config = GenerationConfig(max_new_tokens=12, do_sample=True, temperature=1.0, top_k=0, pad_token_id=0,
                              eos_token_id=1)  # fmt: skip
    torch.manual_seed(7)
    return model.generate(input_ids=ids, attention_mask=mask, generation_config=config, **kwargs)


@pytest.mark.parametrize("sharing", [False, True], ids=["alone", "shared-prompts"])
def test_seeded_completions_equal_plain_generates(sharing):
    ids, mask = grpo_prompts()
    plain = sampled(gqa_llama(), ids, mask)
    lean = lean_generation(gqa_llama())
    out = sampled(share_prompt_passes(lean) if sharing else lean, ids, mask)
    assert torch.equal(out, plain)
    assert len({tuple(row) for row in plain[:4, 30:].tolist()}) > 1  # the rollouts differ: sampling ran


def test_keys_and_values_are_written_in_place():
    model = share_prompt_passes(lean_generation(gqa_llama()))
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


def test_no_head_is_repeated_without_a_gradient(monkeypatch):
    calls = []

    def counting(hidden, n_rep):  # noqa: ANN001, ANN202
        calls.append(n_rep)
        return repeat_kv(hidden, n_rep)

    repeat_kv = sdpa_attention.repeat_kv
    monkeypatch.setattr(sdpa_attention, "repeat_kv", counting)
    ids, mask = grpo_prompts()
    sampled(gqa_llama(), ids, mask)
    assert calls  # transformers' own path repeats the heads under a mask
    calls.clear()
    sampled(lean_generation(gqa_llama()), ids, mask)
    assert calls == []


def test_training_gradients_are_unchanged():
    ids, mask = grpo_prompts(rollouts=1)

    def gradients(model):  # noqa: ANN001, ANN202
        model.train()
        loss = model(input_ids=ids, attention_mask=mask, labels=ids.masked_fill(mask == 0, -100)).loss
        loss.backward()
        return [p.grad.clone() for p in model.parameters()]

    before = gradients(gqa_llama())
    after = gradients(lean_generation(gqa_llama()))
    assert all(torch.equal(a, b) for a, b in zip(before, after, strict=True))


def test_a_cache_too_small_grows_and_gives_the_same_completions():
    ids, mask = grpo_prompts()
    model = gqa_llama()
    plain = sampled(model, ids, mask)
    cache = PreallocatedCache(model.config, capacity=8)
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
    model = share_prompt_passes(lean_generation(gqa_llama()))
    out = sampled(model, ids, mask, logits_processor=LogitsProcessorList([Force()]))
    assert (out[:, ids.shape[1] :] == 5).all()


def test_a_model_with_sliding_window_layers_keeps_transformers_cache():
    from transformers import DynamicCache, Qwen2Config

    sliding = Qwen2Config(num_hidden_layers=2, layer_types=["sliding_attention", "full_attention"],
                          use_sliding_window=True, sliding_window=4)  # fmt: skip
    assert type(generation_cache(sliding, 16)) is DynamicCache
    assert type(generation_cache(gqa_llama().config, 16)) is PreallocatedCache
