"""Two CPU measurements behind `gpu-small`'s settings (docs/training.md, "Divergence guard" and "GPU check").

1. `empty_rows`: torch's own SDPA kernels on fully masked query rows (left padding), per backend and dtype:
   NaN in the output or in the gradients of q, k, v, the upstream gradient of those rows zero.
2. `changed_share`: the share of a model's weights that one AdamW step changes at all, in bf16 and fp32.

    python -m experiments.bf16_cpu          # the embedded SmolLM2-135M (cached trainable checkpoint)
"""

from __future__ import annotations

from typing import Any

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = {"math": SDPBackend.MATH, "flash": SDPBackend.FLASH_ATTENTION}  # the CPU's kernels


def empty_rows(dtype: torch.dtype, backend: str, padded: int = 3, length: int = 8) -> dict:
    """One sequence left-padded by `padded` of `length` beside an unpadded one: whether SDPA's output or
    the q/k/v gradients hold a NaN (the padded rows' upstream gradient zero, as the padding hook makes it)."""
    generator = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 2, length, 16, generator=generator, dtype=dtype).requires_grad_() for _ in range(3))
    mask = torch.ones(2, 1, length, length, dtype=torch.bool).tril()
    mask[1, :, :, :padded] = False  # rows 0..padded-1 of sequence 2 attend to no key
    with sdpa_kernel([BACKENDS[backend]]):
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    keep = mask.any(-1, keepdim=True).to(dtype)
    (out * keep).float().sum().backward()
    return {"dtype": str(dtype).removeprefix("torch."), "backend": backend, "output_nan": bool(out.isnan().any()),
            "grad_nan": any(bool(t.grad.isnan().any()) for t in (q, k, v))}  # fmt: skip


def changed_share(model: Any, batch: dict, lr: float) -> float:
    """The share of `model`'s weights that one backward pass of its LM loss on `batch` and one
    `torch.optim.AdamW` step (no weight decay) change at all."""
    before = [p.detach().clone() for p in model.parameters()]
    model(**batch, labels=batch["input_ids"]).loss.backward()
    torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0).step()
    changed = sum(int((p.detach() != b).sum()) for p, b in zip(model.parameters(), before, strict=True))
    return changed / sum(b.numel() for b in before)


def main() -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from training.model_prep import trainable_dir

    for dtype in (torch.float32, torch.bfloat16):
        for backend in BACKENDS:
            print(empty_rows(dtype, backend))
    path = trainable_dir()
    tokenizer = AutoTokenizer.from_pretrained(path)
    texts = ["The answer is 42 because six times seven is forty-two.",
             "Paris is the capital of France, said the model."]  # fmt: skip
    batch = tokenizer(texts, padding=True, return_tensors="pt")
    for dtype in (torch.bfloat16, torch.float32):
        for lr in (1e-5, 4e-5, 2e-4):
            model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype, attn_implementation="eager")
            print(f"{str(dtype).removeprefix('torch.')} lr {lr:g}: {changed_share(model, dict(batch), lr):.3f} changed")


if __name__ == "__main__":
    main()
