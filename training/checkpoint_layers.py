"""Activation checkpointing of the trained decoder layers only (`checkpoint_trained_layers`).

With `train_top_layers` the loss's backward pass stops at the lowest trained layer, but every trained
layer keeps its activations for it: at sim-routing's micro-batch (2 rollouts x ~630 positions) ~0.6 GiB,
most of a CPU step's peak above its weights and optimizer state. `checkpoint_trained_layers(model)`
has each trained layer keep the outputs of its matrix products and of its attention kernel and
recompute the rest (the norms, the rotary embedding, repeated key/value heads, the activation function
and the products between them: cheap elementwise work) in the backward pass, with torch's selective
activation checkpointing (non-reentrant `checkpoint` with a policy). At sim-routing's shape this keeps
about half the activations for a few percent of the loss's CPU; the recomputed ops are the same
computation on the same inputs, so the gradients are unchanged
(tests/training/test_training_checkpoint_layers.py).

TRL's own `gradient_checkpointing` is not this: transformers' `gradient_checkpointing_enable`
checkpoints every layer and makes the embeddings' output require a gradient, so with frozen lower
layers the backward pass runs down through all of them (sim-routing: 30 layers, not 8). Here a layer
is checkpointed only while a gradient is recorded (generation runs under `no_grad`, untouched), and
only when the cache handed to it holds nothing of its own yet: a recompute would write that layer's
keys and values into the cache a second time, so the layer is given no cache (the loss reads none).
"""

from __future__ import annotations

import functools
from typing import Any

KEPT_OPS = ("mm", "addmm", "bmm", "_scaled_dot_product_flash_attention_for_cpu", "_scaled_dot_product_flash_attention",
            "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention")  # fmt: skip


def keep_products(kept: frozenset) -> Any:
    """The policy: keep the outputs of `kept` ops (aten overloads), recompute every other op."""
    from torch.utils.checkpoint import CheckpointPolicy

    def policy(_context, op, *_args, **_kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        return CheckpointPolicy.MUST_SAVE if op in kept else CheckpointPolicy.PREFER_RECOMPUTE

    return policy


def checkpoint_trained_layers(model: Any) -> int:
    """Checkpoint (selectively, `KEPT_OPS` kept) every decoder layer of `model` that has a parameter
    requiring a gradient (call after freezing). Returns how many layers are checkpointed."""
    import torch
    from torch.utils.checkpoint import checkpoint, create_selective_checkpoint_contexts

    kept = frozenset(getattr(torch.ops.aten, name).default for name in KEPT_OPS if hasattr(torch.ops.aten, name))
    context = functools.partial(create_selective_checkpoint_contexts, keep_products(kept))
    layers = getattr(getattr(model, "model", None), "layers", None)
    if layers is None:
        raise SystemExit(f"checkpoint_trained_layers: {type(model).__name__} has no model.layers; unset it")
    wrapped = 0
    for index, layer in enumerate(layers):
        if not any(param.requires_grad for param in layer.parameters()):
            continue
        forward = layer.forward

        def checkpointed(hidden_states, *args, past_key_values=None, _forward=forward, _index=index, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
            if torch.is_grad_enabled() and (past_key_values is None or past_key_values.get_seq_length(_index) == 0):
                return checkpoint(_forward, hidden_states, *args, past_key_values=None, use_reentrant=False,
                                  context_fn=context, **kwargs)  # fmt: skip
            return _forward(hidden_states, *args, past_key_values=past_key_values, **kwargs)

        layer.forward = checkpointed
        wrapped += 1
    return wrapped
