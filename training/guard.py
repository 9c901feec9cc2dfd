"""Training that never diverges silently.

`mask_padded_attention(model)`: padded positions (attention_mask 0) leave every self-attention
layer as exact zeros (`torch.where`, never a product with the mask, so a NaN there cannot turn
into NaN * 0 = NaN). What SDPA returns for a fully masked row in bf16 (the left padding of a
GRPO batch) then never reaches a real position through the next layer's attention, nor the loss.

`padsafe_attention(model)`: SDPA is never handed a query row that may attend to no key. Left
padding makes such rows (a padded query sees only earlier padding); CUDA's bf16 SDPA kernels turn
them into NaN that their backward pass spreads into the gradients of real keys and values, a NaN
gradient at step 1 (measured on an H100 and an H200 with `gpu-small`). The model's attention
becomes `sdpa_padsafe`: the same mask and kernel, except that a row with no key to attend to may
attend to every key. Real rows are unchanged; a padded row's finite output is then zeroed by
`mask_padded_attention` and gets no gradient. Why the backward pass: a fused kernel keeps each row's
logsumexp from the forward pass and rebuilds the probabilities as exp(score - logsumexp), which for a
row with no key is exp(-inf + inf) = NaN, times a zero upstream gradient still NaN (the loss stays
finite). The CPU's kernels (torch 2.13: math and flash) return zeros there, forward and backward,
in fp32 and bf16 (docs/training.md, "Divergence guard"). `sdpa_padsafe` also keeps SDPA off its cuDNN
backend (`NOT_CUDNN`), the default for a masked call on H100/H200 since torch 2.11, whose backward
gives NaN even without an empty row where a row's logsumexp is below -88.7 (pytorch/pytorch#196678,
huggingface/trl#7181); the other CUDA kernels take the same mask.

`NonFiniteGuard`: a TrainerCallback that checks the gradients before every optimizer update; a
non-finite gradient norm (what a non-finite loss gives too) SKIPS that update (the gradients are
dropped, so the optimizer leaves the weights and its state as they were), is logged with its step
and counted (`nonfinite_skipped` in the logged metrics); after `max_in_a_row` such steps in a row
the run stops with the unchanged, last good weights saved as a checkpoint, and `raise_if_tripped`
names the steps and that checkpoint. The update is skipped only where the gradients are the
parameters' own (`param.grad`: one process or DDP); under DeepSpeed they are not, and the guard
sees none to check.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from transformers import TrainerCallback

log = logging.getLogger("training.guard")


def mask_padded_attention(model: Any) -> int:
    """Hook every decoder layer's `self_attn` so that its output at padded positions is zero;
    the attention mask is taken from each forward call. Returns the number of hooked layers."""
    mask: dict[str, torch.Tensor | None] = {"now": None}

    def remember(_module, _args, kwargs):  # noqa: ANN001, ANN202
        given = kwargs.get("attention_mask")
        mask["now"] = given if isinstance(given, torch.Tensor) and given.dim() == 2 else None

    def zero_padded(_module, _args, output):  # noqa: ANN001, ANN202
        keep = mask["now"]
        hidden = output[0] if isinstance(output, tuple) else output
        if keep is None or keep.shape[0] != hidden.shape[0] or keep.shape[1] < hidden.shape[1]:
            return output
        keep = keep[:, -hidden.shape[1] :].bool().unsqueeze(-1)  # generation with a cache: the newest positions
        hidden = torch.where(keep, hidden, torch.zeros((), dtype=hidden.dtype, device=hidden.device))
        return (hidden, *output[1:]) if isinstance(output, tuple) else hidden

    layers = [m for m in model.modules() if hasattr(m, "self_attn")]
    if not layers:
        raise SystemExit(f"{type(model).__name__}: no decoder layer with a self_attn module to mask padding in")
    model.register_forward_pre_hook(remember, with_kwargs=True)
    for layer in layers:
        layer.self_attn.register_forward_hook(zero_padded)
    return len(layers)


PADSAFE = "sdpa_padsafe"
NOT_CUDNN = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]  # every SDPA kernel but cuDNN


def attendable(mask: torch.Tensor | None) -> torch.Tensor | None:
    """The attention mask with every fully masked query row opened to all keys (a bool mask:
    True = attend; an additive one: -inf = masked). None (no mask) stays None."""
    if mask is None:
        return None
    blocked = ~mask if mask.dtype == torch.bool else torch.isneginf(mask)
    empty = blocked.all(dim=-1, keepdim=True)
    if not bool(empty.any()):
        return mask
    if mask.dtype == torch.bool:
        return mask | empty
    return mask.masked_fill(empty, 0.0)


def padsafe_attention(model: Any) -> bool:
    """Switch a model that uses SDPA to `sdpa_padsafe` (module docstring); other attention
    implementations are left as they are. Returns whether it switched."""
    from transformers import AttentionInterface
    from transformers.integrations.sdpa_attention import sdpa_attention_forward
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    if model.config._attn_implementation not in ("sdpa", PADSAFE):
        return False

    def forward(module, query, key, value, attention_mask, **kwargs):  # noqa: ANN001, ANN202
        with sdpa_kernel(NOT_CUDNN):  # a CPU has no cuDNN kernel: its choice is the same either way
            return sdpa_attention_forward(module, query, key, value, attendable(attention_mask), **kwargs)

    AttentionInterface.register(PADSAFE, forward)
    AttentionMaskInterface.register(PADSAFE, sdpa_mask)
    model.set_attn_implementation(PADSAFE)
    return True


def gradient_norm(model: Any) -> float | None:
    """The total L2 norm of the parameters' gradients (None: no gradient held on the parameters)."""
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    return float(torch.nn.utils.get_total_norm(grads)) if grads else None


class NonFiniteGuard(TrainerCallback):
    """Skip an optimizer update whose gradient norm is not finite; stop after `max_in_a_row`."""

    def __init__(self, max_in_a_row: int = 3) -> None:
        if max_in_a_row < 1:
            raise SystemExit(f"max_nonfinite_steps must be >= 1, got {max_in_a_row}")
        self.max_in_a_row = max_in_a_row
        self.skipped: list[int] = []
        self.in_a_row = 0
        self.stopped_at: int | None = None

    def on_pre_optimizer_step(self, args, state, control, model=None, **kwargs):  # noqa: ANN001, ANN201
        norm = gradient_norm(model)
        if norm is None or math.isfinite(norm):
            self.in_a_row = 0
            return
        step = state.global_step + 1
        model.zero_grad(set_to_none=True)  # no gradient: the optimizer leaves these weights as they are
        self.skipped.append(step)
        self.in_a_row += 1
        log.warning("step %d: gradient norm %s, optimizer update skipped (%d in a row, stop at %d)",
                    step, norm, self.in_a_row, self.max_in_a_row)  # fmt: skip

    def on_step_end(self, args, state, control, **kwargs):  # noqa: ANN001, ANN201
        if self.in_a_row >= self.max_in_a_row and self.stopped_at is None:
            self.stopped_at = state.global_step
            control.should_save = True  # the weights are the last good step's: the update since was skipped
            control.should_training_stop = True
        return control

    def on_log(self, args, state, control, logs=None, **kwargs):  # noqa: ANN001, ANN201
        if logs is not None and self.skipped:
            logs["nonfinite_skipped"] = len(self.skipped)

    def raise_if_tripped(self, output_dir: str) -> None:
        """After training: the clear error of a run the guard stopped."""
        if self.stopped_at is None:
            return
        last = self.skipped[-self.max_in_a_row :]
        raise SystemExit(
            f"training stopped: {self.max_in_a_row} steps in a row with a non-finite gradient norm (steps {last};"
            f" all skipped: {self.skipped}). The weights are the last good step's, saved in"
            f" {output_dir}/checkpoint-{self.stopped_at}. Look for the cause (a bf16 attention kernel, a too high"
            " learning_rate) before resuming from it; --max_nonfinite_steps sets how many in a row stop a run"
        )
