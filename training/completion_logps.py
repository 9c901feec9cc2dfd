"""Completion-only log-probs from TRL's fused LM head on every device (TRL's private name, isolated here).

TRL 1.16's `GRPOTrainer` gets its per-token log-probs from `trl.trainer.utils.add_fused_lm_head`:
the model's forward with `fused_lm_head=True` projects hidden states through the LM head in tiles
of 4,096 tokens x 32,768 vocabulary entries (fp32: 512 MiB each) and returns the log-prob of each
labelled token. On a Triton device (CUDA, XPU) it projects only the labelled (completion)
positions; on any other device, a CPU included, it projects EVERY position, the prompt's too, and
masks the prompt's results to zero afterwards (so that XLA-like devices see one tile shape and do
not recompile). A GRPO batch is mostly prompt (sim-routing: ~690 prompt tokens per 72 completion
tokens), so a CPU step computes and keeps ~10x the head's work and memory for nothing.

The choice is one module-level name, `trl.trainer.utils._use_triton(device)`, read at each fused
forward. `score_completions_only()` rebinds that name (there only: TRL's kernels keep their own
`_use_triton`, which picks Triton or torch tiles) to "compact on every device". The labelled
positions' log-probs and entropies are bit-identical, and so is every gradient that flows through
the hidden states; the LM head weight's own gradient sums over fewer (all-zero) rows, so it agrees
to fp32 rounding (the recipes freeze the head: `train_top_layers`). tests/training/test_training_logps.py
checks both and fails when TRL renames the name or stops reading it.

Proposed upstream fix (docs/training.md): let `add_fused_lm_head` take `compact: bool | None`
(None: today's device rule) and GRPOConfig pass it, or score compactly on every device whose
kernels do not recompile per shape (CPU, MPS), keeping the full-width tiles for XLA devices only.
"""

from __future__ import annotations

import logging

log = logging.getLogger("training.completion_logps")
HOOK = "_use_triton"  # the name trl.trainer.utils.add_fused_lm_head reads to pick compact scoring


def _compact_everywhere(device: object) -> bool:
    """TRL asks "is this a Triton device?" only to decide compact scoring: yes, on every device."""
    return True


def score_completions_only() -> bool:
    """Make TRL's fused LM head score only the completion positions on every device (idempotent).
    False, with a warning, where this TRL has no such hook: training is then TRL's, unchanged."""
    import trl.trainer.utils as trl_utils

    if not callable(getattr(trl_utils, HOOK, None)):
        log.warning(
            "completion-only log-probs are off: trl.trainer.utils has no %s (TRL %s changed its fused LM head);"
            " every prompt position is scored, which costs memory on a CPU (docs/training.md)",
            HOOK,
            getattr(__import__("trl"), "__version__", "?"),
        )
        return False
    setattr(trl_utils, HOOK, _compact_everywhere)
    return True
