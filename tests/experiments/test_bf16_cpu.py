"""experiments/bf16_cpu.py: the CPU's SDPA kernels on fully masked rows, and the share of weights one AdamW step
changes in bf16 and fp32 (on the tiny model)."""

import pytest
from installed import Deferred, needs

pytestmark = needs("torch", "transformers")
torch = Deferred("torch")
bf16_cpu = Deferred("experiments.bf16_cpu")


@pytest.mark.parametrize("backend", ["math", "flash"])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_the_cpus_kernels_give_no_nan_on_fully_masked_rows(dtype, backend):
    assert bf16_cpu.empty_rows(getattr(torch, dtype), backend) == {
        "dtype": dtype, "backend": backend, "output_nan": False, "grad_nan": False}  # fmt: skip


def test_bf16_weights_drop_most_of_a_small_adamw_step():
    from test_training_guard import left_padded_batch, tiny_llama

    ids, mask = left_padded_batch()
    batch = {"input_ids": ids, "attention_mask": mask}
    assert bf16_cpu.changed_share(tiny_llama(), batch, 1e-5) > 0.9  # fp32: all but unused embedding rows move
    shares = [bf16_cpu.changed_share(tiny_llama().to(torch.bfloat16), batch, lr) for lr in (1e-5, 2e-4)]
    assert shares[0] < 0.25 and shares[0] < shares[1]  # measured 0.15 and 0.91
