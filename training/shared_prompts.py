"""One prompt pass per distinct prompt during generation (transformers path; vLLM shares prefixes itself).

A GRPO generation batch holds every question `num_generations` times, and `model.generate` encodes
each row's prompt: 7 of every 8 prompt passes of the sim-routing recipe repeat one already done.
`share_prompt_passes(model)` wraps the model's `generate` (the public method TRL's GRPOTrainer calls
on its transformers path): the distinct prompts of a batch are encoded once (all but their last token,
with generate's own position ids) into a preallocated cache sized for the whole call (training/
lean_generation.py), their KV cache is copied to every row that repeats them (`Cache.reorder_cache`) and
`generate` continues from it with the batch as given. The sampled tokens
draw from the same generator in the same order; the cache holds the same keys and values, computed in a
smaller batch, so a completion differs only where fp32 rounding moves a sampled token across a boundary
(tests/training/test_training_shared_prompts.py checks seeded completions are identical to plain `generate`).
"""

from __future__ import annotations

import functools
from typing import Any

import torch

from training.lean_generation import cache_capacity, generation_cache


def position_ids(attention_mask: torch.Tensor) -> torch.Tensor:
    """What `generate` gives a left-padded batch: positions count real tokens only (padding: 0)."""
    return (attention_mask.long().cumsum(-1) - 1).masked_fill(attention_mask == 0, 0)


def prompt_rows(input_ids: torch.Tensor, attention_mask: torch.Tensor | None) -> torch.Tensor:
    """[input_ids | attention_mask] per row: equal rows are one prompt (a GRPO group repeats it)."""
    return input_ids if attention_mask is None else torch.cat([input_ids, attention_mask.to(input_ids.dtype)], dim=1)


def encoded_prompts(model: Any, distinct: torch.Tensor, row_of: torch.Tensor, capacity: int) -> Any:
    """The KV cache of every row's prompt but its last token, computed once per distinct prompt:
    `distinct` holds the distinct rows of [input_ids | attention_mask], `row_of` each row's index there;
    the cache has room for `capacity` positions."""
    ids, mask = distinct.chunk(2, dim=1)
    cache = generation_cache(model.config, capacity)
    with torch.no_grad():
        model(input_ids=ids[:, :-1], attention_mask=mask[:, :-1], position_ids=position_ids(mask)[:, :-1],
              past_key_values=cache, use_cache=True, logits_to_keep=1)  # fmt: skip
    cache.reorder_cache(row_of)  # every row gets its prompt's keys and values
    return cache


def share_prompt_passes(model: Any) -> Any:
    """Wrap `model.generate` so that a batch repeating prompts encodes each distinct prompt once.
    Calls it cannot serve as given (no 2-D ids and mask, a cache or several sequences per row
    already asked for, a cache implementation named, no repeated prompt) go to `generate` unchanged.
    Returns the model."""
    generate = model.generate

    @functools.wraps(generate)
    def generate_sharing(input_ids=None, attention_mask=None, generation_config=None, **kwargs):  # noqa: ANN001, ANN202
        plain = functools.partial(generate, input_ids=input_ids, attention_mask=attention_mask,
                                  generation_config=generation_config)  # fmt: skip
        config = generation_config or model.generation_config
        if (
            not isinstance(input_ids, torch.Tensor)
            or not isinstance(attention_mask, torch.Tensor)
            or input_ids.dim() != 2
            or input_ids.size(1) < 2
            or kwargs.get("past_key_values") is not None
            or (config.num_return_sequences or 1) > 1
            or config.cache_implementation is not None  # generate takes no cache object beside one named
        ):
            return plain(**kwargs)
        distinct, row_of = torch.unique(prompt_rows(input_ids, attention_mask), dim=0, return_inverse=True)
        if len(distinct) == len(input_ids):
            return plain(**kwargs)
        cache = encoded_prompts(model, distinct, row_of, cache_capacity(model, input_ids, config, kwargs))
        return plain(past_key_values=cache, **kwargs)

    model.generate = generate_sharing
    return model
