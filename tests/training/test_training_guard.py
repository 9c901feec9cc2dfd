"""The divergence guard (training/guard.py): a non-finite gradient skips its optimizer update, N in a
row stop the run with the last good weights saved; padded positions cannot carry a NaN into the
loss or the gradient."""

from __future__ import annotations

import functools
import json
import logging
import math

import pytest
from installed import Deferred, needs

pytestmark = needs("torch", "transformers")
torch = Deferred("torch")
transformers = Deferred("transformers")
training_guard = Deferred("training.guard")  # imports torch
VOCAB = 32


def tiny_llama(layers: int = 2, attn: str = "sdpa") -> transformers.LlamaForCausalLM:
    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=VOCAB, hidden_size=16, intermediate_size=32,
                                      num_hidden_layers=layers, num_attention_heads=2, num_key_value_heads=1,
                                      max_position_embeddings=64, pad_token_id=0, bos_token_id=None,
                                      eos_token_id=1)  # fmt: skip
    config._attn_implementation = attn
    return transformers.LlamaForCausalLM(config)


def left_padded_batch() -> tuple[torch.Tensor, torch.Tensor]:
    """Two sequences, the second left-padded by 3 (as GRPO pads prompts of different lengths)."""
    ids = torch.tensor([[5, 6, 7, 8, 9, 10, 11, 12], [0, 0, 0, 8, 9, 10, 11, 12]])
    return ids, (ids != 0).long()


def masked_logprob_loss(model, ids, mask) -> torch.Tensor:
    """TRL's shape of loss: per-token log-probabilities times the mask, summed over the mask."""
    logits = model(input_ids=ids, attention_mask=mask).logits[:, :-1]
    logps = torch.log_softmax(logits.float(), -1).gather(-1, ids[:, 1:, None]).squeeze(-1)
    keep = mask[:, 1:]
    return -(logps * keep).sum() / keep.sum()


def poison_padded_rows(model) -> None:
    """What a bf16 SDPA kernel may return for the fully masked rows of left padding: NaN."""
    ids, mask = left_padded_batch()

    def nan_rows(_module, _args, output):
        padded = (mask == 0)[:, -output[0].shape[1] :, None]
        return (output[0].masked_fill(padded, float("nan")), *output[1:])

    model.model.layers[0].self_attn.register_forward_hook(nan_rows)


def test_a_nan_at_padded_positions_reaches_neither_loss_nor_gradient():
    ids, mask = left_padded_batch()
    clean = masked_logprob_loss(tiny_llama(), ids, mask)

    model = tiny_llama()
    poison_padded_rows(model)
    assert math.isnan(masked_logprob_loss(model, ids, mask).item())  # unguarded: NaN * 0 = NaN downstream

    model = tiny_llama()
    poison_padded_rows(model)
    assert training_guard.mask_padded_attention(model) == 2
    loss = masked_logprob_loss(model, ids, mask)
    loss.backward()
    assert torch.isfinite(loss) and loss.item() == pytest.approx(clean.item(), rel=1e-5)  # real positions unchanged
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)


def test_masking_keeps_generation_with_a_cache_working():
    model = tiny_llama()
    training_guard.mask_padded_attention(model)
    ids, mask = left_padded_batch()
    out = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=3, do_sample=False, pad_token_id=0)
    assert out.shape == (2, 11)


def test_a_model_without_attention_layers_is_named():
    with pytest.raises(SystemExit, match="no decoder layer with a self_attn"):
        training_guard.mask_padded_attention(torch.nn.Linear(2, 2))


def train(tmp_path, poisoned, guard, max_steps):
    class Poison(transformers.TrainerCallback):
        """Makes the gradient of the given steps non-finite (after clipping, as a bf16 overflow would be)."""

        def __init__(self, steps):
            self.steps = set(steps)

        def on_pre_optimizer_step(self, args, state, control, model=None, **kwargs):
            if state.global_step + 1 in self.steps:
                next(model.parameters()).grad.fill_(float("nan"))

    class Record(transformers.TrainerCallback):
        """The weights after every step and every logged dict (as training/train.py's metrics file sees it)."""

        def __init__(self):
            self.weights, self.logs = [], []

        def on_step_end(self, args, state, control, model=None, **kwargs):
            self.weights.append(torch.cat([p.detach().flatten().clone() for p in model.parameters()]))

        def on_log(self, args, state, control, logs=None, **kwargs):
            self.logs.append(dict(logs))

    ids, mask = left_padded_batch()
    rows = [{"input_ids": ids[i % 2], "attention_mask": mask[i % 2], "labels": ids[i % 2]} for i in range(40)]
    args = transformers.TrainingArguments(output_dir=str(tmp_path), max_steps=max_steps,
                                          per_device_train_batch_size=2, learning_rate=1e-2, logging_steps=1,
                                          save_strategy="no", report_to=[], use_cpu=True,
                                          disable_tqdm=True)  # fmt: skip
    record = Record()
    trainer = transformers.Trainer(model=tiny_llama(1), args=args, train_dataset=rows,
                                   callbacks=[Poison(poisoned), guard, record])  # fmt: skip
    trainer.train()
    return trainer, record


def test_a_non_finite_step_is_skipped_counted_and_logged(tmp_path, caplog):
    guard = training_guard.NonFiniteGuard(max_in_a_row=3)
    with caplog.at_level(logging.WARNING, logger="training.guard"):
        trainer, record = train(tmp_path, poisoned=[2], guard=guard, max_steps=4)
    w = record.weights
    assert torch.equal(w[1], w[0])  # step 2: no update
    assert not torch.equal(w[2], w[1]) and not torch.equal(w[0], w[3])  # the others train
    assert all(torch.isfinite(x).all() for x in w)
    assert guard.skipped == [2] and trainer.state.global_step == 4
    assert "step 2: gradient norm nan, optimizer update skipped" in caplog.text
    assert [entry.get("nonfinite_skipped") for entry in record.logs if "loss" in entry] == [None, 1, 1, 1]
    [state] = [s for s in trainer.optimizer.state.values() if "step" in s][:1]
    assert int(state["step"]) == 3  # the optimizer's own state did not move on step 2 either
    guard.raise_if_tripped(str(tmp_path))  # one skip does not stop a run


@pytest.mark.slow
def test_n_in_a_row_stop_with_the_last_good_weights_saved(tmp_path):
    guard = training_guard.NonFiniteGuard(max_in_a_row=3)
    trainer, record = train(tmp_path, poisoned=range(2, 20), guard=guard, max_steps=10)
    assert trainer.state.global_step == 4 and guard.skipped == [2, 3, 4]
    checkpoint = tmp_path / "checkpoint-4"
    saved = transformers.LlamaForCausalLM.from_pretrained(checkpoint)
    assert torch.equal(torch.cat([p.detach().flatten() for p in saved.parameters()]), record.weights[0])
    with pytest.raises(SystemExit, match=r"3 steps in a row .*steps \[2, 3, 4\].*checkpoint-4"):
        guard.raise_if_tripped(str(tmp_path))


def test_the_guard_option_is_checked():
    with pytest.raises(SystemExit, match="max_nonfinite_steps must be >= 1"):
        training_guard.NonFiniteGuard(0)


@pytest.mark.slow
def test_a_training_run_stops_with_the_error_and_the_checkpoint(tmp_path, monkeypatch):
    """training/train.py wires the guard in: every step's gradient reads non-finite -> 2 skipped, stopped."""
    pytest.importorskip("trl")
    from test_training_train import TINY_RECIPE, data_args
    from training_fixtures import data_files, tiny_model

    import training.guard
    from training.train import main

    monkeypatch.setattr(training.guard, "gradient_norm", lambda model: float("inf"))
    recipe = tmp_path / "tiny.yaml"
    recipe.write_text(TINY_RECIPE)
    out = tmp_path / "run"
    with pytest.raises(SystemExit, match=r"2 steps in a row .*steps \[1, 2\].*checkpoint-2"):
        main([str(recipe), "--model_name_or_path", tiny_model(tmp_path / "model"), "--output_dir", str(out),
              "--max_steps", "5", "--max_nonfinite_steps", "2", "--save_strategy", "no",
              *data_args(data_files(tmp_path))])  # fmt: skip
    assert (out / "checkpoint-2" / "model.safetensors").is_file() and not (out / "model.safetensors").is_file()
    steps = [row for row in map(json.loads, (out / "metrics.jsonl").read_text().splitlines()) if "reward" in row]
    assert [row["nonfinite_skipped"] for row in steps] == [1, 2]


def masked_scores(query, key, attn_mask, scale, is_causal):
    """SDPA's scores with the mask applied (-inf where masked)."""
    scores = query @ key.transpose(-2, -1) * (scale or query.shape[-1] ** -0.5)
    if is_causal:
        causal = torch.ones(scores.shape[-2:], dtype=torch.bool).tril()
        attn_mask = causal if attn_mask is None else attn_mask & causal
    if attn_mask is not None:
        scores = scores.masked_fill(~attn_mask, float("-inf")) if attn_mask.dtype == torch.bool else scores + attn_mask
    return scores


def naive_sdpa(query, key, value, attn_mask=None, dropout_p=0.0, scale=None, is_causal=False, enable_gqa=False):
    """SDPA as a plain softmax: a fully masked row is NaN forward and backward."""
    return torch.softmax(masked_scores(query, key, attn_mask, scale, is_causal), -1) @ value


@functools.cache
def fused_kernel():
    class FusedKernel(torch.autograd.Function):
        """Attention as CUDA's fused kernels compute it: the forward pass keeps each row's logsumexp and returns 0
        for a row with no key (torch >= 2.5); the backward pass rebuilds the probabilities as exp(score - lse),
        for such a row exp(-inf + inf) = NaN, which reaches every gradient even where the upstream one is 0."""

        @staticmethod
        def forward(ctx, query, key, value, scores):
            lse = torch.logsumexp(scores, -1, keepdim=True)  # -inf on a row with no key
            ctx.save_for_backward(query, key, value, scores, lse)
            return torch.exp(scores - lse).nan_to_num(0.0) @ value

        @staticmethod
        def backward(ctx, grad_out):
            query, key, value, scores, lse = ctx.saved_tensors
            probs = torch.exp(scores - lse)
            grad_probs = grad_out @ value.transpose(-2, -1)
            grad_scores = probs * (grad_probs - (probs * grad_probs).sum(-1, keepdim=True))
            scale = query.shape[-1] ** -0.5
            return (
                grad_scores @ key * scale,
                (grad_scores.transpose(-2, -1) @ query * scale).sum_to_size(key.shape),
                (probs.transpose(-2, -1) @ grad_out).sum_to_size(value.shape),
                None,
            )

    return FusedKernel


def fused_sdpa(query, key, value, attn_mask=None, dropout_p=0.0, scale=None, is_causal=False, enable_gqa=False):
    """SDPA through `fused_kernel()` (the default scale, as the tiny model's)."""
    assert scale in (None, query.shape[-1] ** -0.5)
    scores = masked_scores(query.detach(), key.detach(), attn_mask, None, is_causal)
    return fused_kernel().apply(query, key, value, scores)


def grads(model) -> list:
    return [p.grad for p in model.parameters() if p.grad is not None]


def test_the_fused_kernels_backward_gives_the_gpus_nan_gradient_under_a_finite_loss(monkeypatch):
    """What the H100 measured with the padding hook alone (docs/training.md): a finite loss, a NaN gradient."""
    ids, mask = left_padded_batch()
    clean = masked_logprob_loss(tiny_llama(), ids, mask)
    real = tiny_llama()
    masked_logprob_loss(real, ids[:1], mask[:1]).backward()  # no padding, no empty row
    monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention", fused_sdpa)
    stand_in = tiny_llama()
    masked_logprob_loss(stand_in, ids[:1], mask[:1]).backward()
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(grads(stand_in), grads(real), strict=True))

    model = tiny_llama()
    training_guard.mask_padded_attention(model)
    loss = masked_logprob_loss(model, ids, mask)
    loss.backward()
    assert loss.item() == pytest.approx(clean.item(), rel=1e-5)
    assert not all(torch.isfinite(g).all() for g in grads(model))


@pytest.mark.parametrize("kernel", [naive_sdpa, fused_sdpa], ids=["naive", "fused"])
def test_padsafe_attention_hands_sdpa_no_fully_masked_row(monkeypatch, kernel):
    ids, mask = left_padded_batch()
    clean = masked_logprob_loss(tiny_llama(), ids, mask)
    monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention", kernel)

    model = tiny_llama()
    training_guard.mask_padded_attention(model)
    masked_logprob_loss(model, ids, mask).backward()  # zeroed outputs do not help: the backward pass spreads NaN
    assert not all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)

    model = tiny_llama()
    training_guard.mask_padded_attention(model)
    assert training_guard.padsafe_attention(model) and model.config._attn_implementation == "sdpa_padsafe"
    loss = masked_logprob_loss(model, ids, mask)
    loss.backward()
    assert loss.item() == pytest.approx(clean.item(), rel=1e-5)  # real positions unchanged
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)


def test_padsafe_attention_keeps_sdpa_off_its_cudnn_backend(monkeypatch):
    """cuDNN's backward gives NaN on H100/H200 with a mask (module docstring): padsafe calls SDPA without it."""
    seen = []

    def recording_sdpa(*args, **kwargs):
        seen.append(torch.backends.cuda.cudnn_sdp_enabled())
        return naive_sdpa(*args, **kwargs)

    monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention", recording_sdpa)
    ids, mask = left_padded_batch()
    model = tiny_llama()
    training_guard.padsafe_attention(model)
    model(input_ids=ids, attention_mask=mask)
    assert seen == [False, False] and torch.backends.cuda.cudnn_sdp_enabled()  # two layers; restored after


def test_padsafe_leaves_other_attention_alone_and_masks_without_empty_rows_as_they_are():
    attendable = training_guard.attendable
    assert not training_guard.padsafe_attention(tiny_llama(attn="eager"))
    full = torch.ones(1, 1, 3, 3, dtype=torch.bool).tril()
    assert attendable(full) is full and attendable(None) is None
    empty_row = full.clone()
    empty_row[..., 0, :] = False
    opened = attendable(empty_row)
    assert opened[..., 0, :].all() and torch.equal(opened[..., 1:, :], full[..., 1:, :])
    additive = torch.zeros(1, 1, 2, 2).masked_fill(torch.tensor([[True, True], [False, True]]), float("-inf"))
    opened = attendable(additive)
    assert torch.equal(opened[0, 0, 0], torch.zeros(2)) and torch.isneginf(opened[0, 0, 1, 1])
