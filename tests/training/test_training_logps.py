"""Completion-only log-probs (training/completion_logps.py): the same numbers as TRL's fused LM head,
from the completion positions alone. These tests fail when TRL changes the private name it hooks."""

from __future__ import annotations

from installed import Deferred, needs

from training.completion_logps import HOOK, score_completions_only

pytestmark = needs("torch", "trl")
torch = Deferred("torch")
TRL_UTILS = "trl.trainer.utils"
trl_utils = Deferred(TRL_UTILS)
trl_kernels = Deferred("trl.kernels.chunked_logprob")  # where TRL defines the rule it reads

KEEP = 12  # completion length: TRL's `logits_to_keep`


def tiny_llama():
    """A 2-layer random Llama with an untied head (its weight gradient is checked too)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=256,
                         pad_token_id=0, tie_word_embeddings=False)  # fmt: skip
    torch.manual_seed(0)
    model = LlamaForCausalLM(config)
    trl_utils.add_fused_lm_head(model, temperature=0.7, outputs=("log_probs", "entropy"))  # GRPOTrainer's call
    return model


def grpo_batch():
    """Left-padded prompts + completions, labelled as GRPOTrainer._get_per_token_logps_and_entropies does."""
    generator = torch.Generator().manual_seed(1)
    ids = torch.randint(1, 300, (6, 40), generator=generator)
    mask = torch.ones_like(ids)
    mask[0, :5] = mask[3, :9] = 0  # left padding
    mask[1, -3:] = 0  # a completion that ended early
    labels = ids.masked_fill(mask == 0, -100)
    labels[:, :-KEEP] = -100
    return ids, mask, labels, torch.randn(6, 1, generator=generator)


def scored(model):
    """Completion log-probs, entropies and every parameter's gradient of a GRPO-like loss."""
    ids, mask, labels, advantages = grpo_batch()
    out = model(input_ids=ids, attention_mask=mask, labels=labels, fused_lm_head=True)
    logps, entropy = out.log_probs[:, -KEEP:], out.entropy[:, -KEEP:]
    ((logps * advantages).sum() + 0.1 * entropy.sum()).backward()
    return logps.detach(), entropy.detach(), {n: p.grad for n, p in model.named_parameters()}


def test_completion_only_scoring_equals_trls_log_probs_and_gradients(monkeypatch):
    monkeypatch.setattr(f"{TRL_UTILS}.{HOOK}", trl_kernels._use_triton)  # TRL's own rule, whatever ran before
    trl_logps, trl_entropy, trl_grads = scored(tiny_llama())  # TRL on a CPU: every position scored
    assert score_completions_only()
    logps, entropy, grads = scored(tiny_llama())
    assert torch.equal(logps, trl_logps) and torch.equal(entropy, trl_entropy)
    head = {n for n in grads if n.startswith("lm_head.")}
    for name in grads.keys() - head:  # everything the hidden states reach: bit-identical
        assert torch.equal(grads[name], trl_grads[name]), name
    for name in head:  # the head's own weight: a sum over fewer (zero) rows, equal to fp32 rounding
        torch.testing.assert_close(grads[name], trl_grads[name], rtol=1e-5, atol=1e-6)


def test_only_the_completion_positions_reach_the_head(monkeypatch):
    monkeypatch.setattr(f"{TRL_UTILS}.{HOOK}", trl_kernels._use_triton)
    apply = trl_utils._ChunkedLogProbFunction.apply  # the tiled head TRL's fused forward calls
    rows: list[int] = []
    monkeypatch.setattr(trl_utils._ChunkedLogProbFunction, "apply", lambda h, *a: rows.append(len(h)) or apply(h, *a))
    ids, mask, labels, _ = grpo_batch()
    model = tiny_llama()
    model(input_ids=ids, attention_mask=mask, labels=labels, fused_lm_head=True)
    assert rows == [ids.numel() - ids.size(0)], "TRL on a CPU scores every position (this test's baseline)"
    score_completions_only()
    model(input_ids=ids, attention_mask=mask, labels=labels, fused_lm_head=True)
    assert rows[1] == int((labels[:, 1:] != -100).sum()) == 6 * KEEP - 3


def test_a_trl_without_the_hook_is_named(monkeypatch, caplog):
    monkeypatch.delattr(f"{TRL_UTILS}.{HOOK}")
    assert not score_completions_only()
    assert "no _use_triton" in caplog.text and "every prompt position is scored" in caplog.text
