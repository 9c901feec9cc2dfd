"""Generation that copies no key/value cache on the CPU (transformers path; vLLM manages its own cache).

Profiled on SmolLM2-135M (grouped-query attention: 9 query heads share 3 key/value heads) at the
sim-routing shape, 41% of generation's CPU went to `aten::copy_` and `aten::cat`: transformers'
`DynamicCache` concatenates every new token onto every layer's keys and values (the whole cache is
copied at each step), and its SDPA call repeats the key/value heads for every query head
(`repeat_kv`) whenever there is an attention mask, as a padded batch always has.

`lean_generation(model)` removes both copies:
- `PreallocatedCache`: each layer's keys and values live in one buffer sized for the call (prompt +
  `max_new_tokens`; a longer call doubles it); a step writes its token in place and attention reads a
  view of the filled part. The keys and values are the same numbers as `DynamicCache`'s.
- `lean_attention(model)`: that model's SDPA on a CPU takes the key/value heads as they are
  (`enable_gqa=True`, which torch's CPU kernel supports with a mask; the result is bit-identical to
  repeating the heads) wherever no gradient flows through the attention; a layer that is trained keeps
  transformers' path, so the gradients of the loss are as before. It is an attention implementation of
  its own name, selected in that model's config: no other model, and nothing of transformers, changes.
`model.generate` is wrapped to hand a call that brings no cache a `PreallocatedCache`; training/
shared_prompts.py encodes its distinct prompts into one, so both compose (wrap this one first).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import torch
from transformers import DynamicCache
from transformers.cache_utils import DynamicLayer

from training.guard import PADSAFE, attendable


class PreallocatedLayer(DynamicLayer):
    """A `DynamicLayer` whose keys and values are views of a buffer of `capacity` positions (the
    cache's one block when it has one: `block`)."""

    def __init__(self, capacity: int, block: Callable | None = None) -> None:
        super().__init__()
        self.capacity = capacity
        self.length = 0
        self.block = block  # (keys, values) -> this layer's two buffers in the cache's block, or None

    def lazy_initialization(self, key_states: torch.Tensor, value_states: torch.Tensor) -> None:
        self.dtype, self.device = key_states.dtype, key_states.device
        shared = self.block(key_states, value_states) if self.block else None
        self.buffers = shared or [states.new_empty(*states.shape[:2], self.capacity, states.shape[-1])
                                  for states in (key_states, value_states)]  # fmt: skip
        self.length = 0
        self.is_initialized = True
        self.publish()

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs) -> tuple:  # noqa: ANN002, ANN003
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
        elif self.keys is not self.views[0]:  # a DynamicLayer method (crop, batch select) replaced the views
            self.adopt(self.keys, self.values)
        end = self.length + key_states.shape[-2]
        if end > self.buffers[0].shape[-2]:  # a longer call than sized for: double (amortized copies)
            self.adopt(*self.views, room=max(end, 2 * self.buffers[0].shape[-2]))
        for buffer, states in zip(self.buffers, (key_states, value_states), strict=True):
            buffer[:, :, self.length : end].copy_(states)
        self.length = end
        return self.publish()

    def publish(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Point `keys` and `values` at the filled part of the buffers."""
        self.views = tuple(buffer[:, :, : self.length] for buffer in self.buffers)
        self.keys, self.values = self.views
        return self.views

    def adopt(self, keys: torch.Tensor, values: torch.Tensor, room: int | None = None) -> None:
        """Copy `keys` and `values` into new buffers of `room` positions (default: the current capacity)."""
        room = max(room or self.buffers[0].shape[-2], keys.shape[-2])
        self.buffers = [states.new_empty(*states.shape[:2], room, states.shape[-1]) for states in (keys, values)]
        for buffer, states in zip(self.buffers, (keys, values), strict=True):
            buffer[:, :, : states.shape[-2]].copy_(states)
        self.length = keys.shape[-2]
        self.publish()

    def reorder_cache(self, beam_idx: torch.LongTensor) -> None:
        """Rows in a new order (shared prompts: every row gets its prompt's), the buffers' room kept."""
        if self.get_seq_length() > 0:
            self.buffers = [buffer.index_select(0, beam_idx.to(buffer.device)) for buffer in self.buffers]
            self.publish()


class Block:
    """One allocation for the keys and values of every layer of a cache: [layer, keys|values, batch, heads,
    capacity, head dim], made at the first layer's first update."""

    def __init__(self, layers: int, capacity: int) -> None:
        self.layers, self.capacity = layers, capacity
        self.tensor: torch.Tensor | None = None

    def buffers(self, index: int, keys: torch.Tensor, values: torch.Tensor) -> list[torch.Tensor] | None:
        """Layer `index`'s key and value buffers in the block, or None when its keys and values do not fit
        the block's shape (that layer then gets buffers of its own)."""
        shape = (*keys.shape[:2], self.capacity, keys.shape[-1])
        if self.tensor is None and keys.shape == values.shape:
            self.tensor = keys.new_empty(self.layers, 2, *shape)
        if self.tensor is None or keys.shape != values.shape or self.tensor[index, 0].shape != shape:
            return None
        return [self.tensor[index, 0], self.tensor[index, 1]]


class PreallocatedCache(DynamicCache):
    """A `DynamicCache` of `PreallocatedLayer`s, one per decoder layer (full attention only), whose keys
    and values all lie in ONE block allocated at the first layer's first update (layers of another
    shape get buffers of their own). One block: glibc maps it on its own (it is far above malloc's mmap
    threshold) and returns it whole when the call ends, where per-layer buffers would be carved from
    the heap and leave it fragmented for the loss that follows (training/allocator.py)."""

    def __init__(self, config: Any, capacity: int) -> None:
        super().__init__()
        layers = config.get_text_config(decoder=True).num_hidden_layers
        self.shared = Block(layers, capacity)  # the layers hold it, it holds no layer: no reference cycle
        self.layers = [PreallocatedLayer(capacity, functools.partial(self.shared.buffers, index))
                       for index in range(layers)]  # fmt: skip
        self.layer_class_to_replicate = None

    @property
    def block(self) -> torch.Tensor | None:
        return self.shared.tensor

    def reorder_cache(self, beam_idx: torch.LongTensor) -> None:
        """Rows in a new order (shared prompts: every row gets its prompt's) into a new block, each layer's
        room kept; layers outside the block reorder their own buffers."""
        old = self.shared.tensor
        if old is None:
            super().reorder_cache(beam_idx)
            return
        index = beam_idx.to(old.device)
        new = self.shared.tensor = old.new_empty(*old.shape[:2], len(index), *old.shape[3:])
        for number, layer in enumerate(self.layers):
            if layer.is_initialized and layer.buffers[0].data_ptr() == old[number, 0].data_ptr():
                for kind in range(2):
                    torch.index_select(old[number, kind], 0, index, out=new[number, kind])
                layer.buffers = [new[number, 0], new[number, 1]]
                layer.publish()
            else:
                layer.reorder_cache(beam_idx)


def generation_cache(config: Any, capacity: int) -> DynamicCache:
    """A `PreallocatedCache` for a model whose every layer attends to all positions, else transformers'
    `DynamicCache` (sliding-window and linear-attention layers keep their own kinds)."""
    text = config.get_text_config(decoder=True)
    if all(kind == "full_attention" for kind in getattr(text, "layer_types", None) or ()):
        return PreallocatedCache(config, capacity)
    return DynamicCache(config=config)


LEAN = "_lean"  # the suffix of the attention implementation `lean_attention` registers for a model


def grouped_sdpa(base: str) -> Callable:
    """The attention implementation `base` ("sdpa" or guard's "sdpa_padsafe"), except that on a CPU, with a
    mask and no gradient through the call, the grouped key/value heads go to torch as they are
    (`enable_gqa=True`) where transformers would repeat them: the kernel call transformers makes without
    a mask, bit-identical to repeating the heads."""
    from transformers import AttentionInterface

    base_forward = AttentionInterface()[base]
    rows_opened = attendable if base == PADSAFE else None

    def forward(module, query, key, value, attention_mask, **kwargs):  # noqa: ANN001, ANN202
        if (
            attention_mask is None  # transformers groups the heads itself then
            or getattr(module, "num_key_value_groups", 1) == 1
            or key.device.type != "cpu"
            or any(states.requires_grad for states in (query, key, value))  # trained: transformers' gradients
            or key.shape[-1] != value.shape[-1]
            or kwargs.get("position_bias") is not None
        ):
            return base_forward(module, query, key, value, attention_mask, **kwargs)
        mask = rows_opened(attention_mask) if rows_opened else attention_mask
        dropout, scale = kwargs.get("dropout", 0.0), kwargs.get("scaling")
        out = torch.nn.functional.scaled_dot_product_attention(
            query, key, value, attn_mask=mask, dropout_p=dropout, scale=scale, enable_gqa=True
        )
        return out.transpose(1, 2).contiguous(), None

    return forward


def lean_attention(model: Any) -> bool:
    """Switch this model's SDPA attention ("sdpa", or guard's "sdpa_padsafe": apply that first) to its own
    implementation `<name>_lean` (`grouped_sdpa`), selected through the model's config: transformers' own
    functions and every other model are left as they are. Returns whether the model's attention is lean."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    base = model.config._attn_implementation
    if base in (f"sdpa{LEAN}", f"{PADSAFE}{LEAN}"):
        return True
    if base not in ("sdpa", PADSAFE):
        return False
    AttentionInterface.register(base + LEAN, grouped_sdpa(base))
    AttentionMaskInterface.register(base + LEAN, sdpa_mask)
    model.set_attn_implementation(base + LEAN)
    return True


def cache_capacity(model: Any, input_ids: torch.Tensor, config: Any, kwargs: dict) -> int:
    """Positions a generate call fills: its prompt and its new tokens (or `max_length`)."""
    config = config or model.generation_config
    new = kwargs.get("max_new_tokens") or config.max_new_tokens
    return input_ids.shape[-1] + new if new else max(kwargs.get("max_length") or config.max_length, input_ids.shape[-1])


def lean_generation(model: Any) -> Any:
    """This model's SDPA without head copies on the CPU (`lean_attention`), and `model.generate` given a
    `generation_cache` wherever a call brings no cache and names no cache implementation. Returns the model."""
    lean_attention(model)
    generate = model.generate

    @functools.wraps(generate)
    def generate_lean(input_ids=None, generation_config=None, **kwargs):  # noqa: ANN001, ANN202
        config = generation_config or model.generation_config
        if (
            isinstance(input_ids, torch.Tensor)
            and kwargs.get("past_key_values") is None
            and config.use_cache is not False
            and kwargs.get("use_cache") is not False
            and config.cache_implementation is None  # generate takes no cache object beside one named
            and (config.num_beams or 1) == 1
            and (config.num_return_sequences or 1) == 1
        ):
            capacity = cache_capacity(model, input_ids, config, kwargs)
            kwargs["past_key_values"] = generation_cache(model.config, capacity)
        return generate(input_ids=input_ids, generation_config=generation_config, **kwargs)

    model.generate = generate_lean
    return model
