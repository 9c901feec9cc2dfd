"""The policy model: loaded with its tokenizer, optionally frozen below its top layers, and patched for
training (`load_policy`); the embedded GGUF made trainable (`resolve_model_path`).

A recipe names the embedded SmolLM2-135M-Instruct GGUF as `model_name_or_path: gguf:smollm2-135m`.
transformers de-quantizes a GGUF (`from_pretrained(dir, gguf_file=...)`, needs `gguf`) but
marks the model as quantized, which TRL refuses to train: the quantizer flags are cleared
before `save_pretrained`. The GGUF's own metadata names `<|im_start|>` as end of sequence;
the instruct model ends its turns with `<|im_end|>` (as the original tokenizer config), so
generation would never stop: both are set right. The result is cached under
`$CONDUCTOR_BENCH_CACHE/trainable/<name>-<sha of the GGUF>` and reused.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from tasks.sources import cache_dir
from workers.local_provider import content_sha256, resolve_model

GGUF_PREFIX = "gguf:"
END_OF_TURN = "<|im_end|>"  # SmolLM2-Instruct's end of turn (its original eos and pad token)
MARKER = "conductor-bench-prep.json"


def trainable_dir(name: str = "smollm2-135m", root: Path | None = None) -> Path:
    """The cached trainable checkpoint of a local GGUF model, built on first use."""
    local_name, gguf, _template = resolve_model(name)
    digest = content_sha256(gguf)
    out = (root or cache_dir() / "trainable") / f"{local_name}-{digest[:16]}"
    if (out / MARKER).is_file():
        return out
    _convert(gguf, out, digest)
    return out


def resolve_model_path(model_name_or_path: str) -> str:
    """`gguf:<local model>` -> its cached trainable dir; anything else unchanged."""
    if model_name_or_path.startswith(GGUF_PREFIX):
        return str(trainable_dir(model_name_or_path.removeprefix(GGUF_PREFIX)))
    return model_name_or_path


def load_policy(script: Any, model_args: Any, config: Any) -> tuple[Any, Any, dict]:
    """The policy and its tokenizer as GRPO trains them, and what run_info.json records of them: a `gguf:`
    model converted once (by the main process), loaded on every process at once (ZeRO-3 loads
    collectively), frozen below `train_top_layers`, and patched (each module says why)."""
    from training.completion_logps import score_completions_only
    from training.guard import mask_padded_attention, padsafe_attention
    from training.lean_generation import lean_generation
    from training.shared_prompts import share_prompt_passes

    with config.main_process_first(desc="converting the model"):
        resolve_model_path(model_args.model_name_or_path)
    model, tokenizer = load_model(model_args, config)
    info: dict[str, Any] = {"completion_only_logps": score_completions_only()}  # no prompt position scored
    if script.train_top_layers:
        info["trainable"] = freeze_below(model, script.train_top_layers)
    if script.checkpoint_trained_layers:  # after freezing: only the trained layers (training/checkpoint_layers.py)
        from training.checkpoint_layers import checkpoint_trained_layers

        info["checkpointed_layers"] = checkpoint_trained_layers(model)
    mask_padded_attention(model)  # a NaN at a padded position never reaches a real one (training/guard.py)
    padsafe_attention(model)  # no fully masked row reaches SDPA (training/guard.py)
    if not config.use_vllm:  # vLLM shares prompt prefixes itself
        lean_generation(model)  # a preallocated cache, this model's SDPA without head copies on a CPU (after padsafe)
        share_prompt_passes(model)  # a question's rollouts share its encoded prompt (training/shared_prompts.py)
    info["attention"] = model.config._attn_implementation  # sdpa_padsafe_lean, sdpa_padsafe or the model's own
    return model, tokenizer, info


def load_model(model_args: Any, config: Any) -> tuple[Any, Any]:
    """The policy and its tokenizer (a `gguf:` name is converted once and cached)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = resolve_model_path(model_args.model_name_or_path)
    dtype = model_args.dtype if model_args.dtype in (None, "auto") else getattr(torch, model_args.dtype)
    model = AutoModelForCausalLM.from_pretrained(
        path,
        revision=model_args.model_revision,
        dtype=dtype,
        attn_implementation=model_args.attn_implementation,
        trust_remote_code=config.trust_remote_code,
    )
    tokenizer = AutoTokenizer.from_pretrained(path, revision=model_args.model_revision)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    if not tokenizer.chat_template:
        raise SystemExit(f"{path}: the tokenizer has no chat template; a conductor is prompted as a chat")
    return model, tokenizer


def freeze_below(model: Any, top_layers: int) -> dict:
    """Train only the top `top_layers` decoder layers and the final norm; everything below,
    the embeddings and (tied or not) the output head stay fixed, so the backward pass stops
    `top_layers` layers down. Returns the trainable/total parameter counts."""
    layers = getattr(getattr(model, "model", None), "layers", None)
    norm = getattr(getattr(model, "model", None), "norm", None)
    if layers is None or norm is None:
        raise SystemExit(f"train_top_layers: {type(model).__name__} has no model.layers / model.norm; unset it")
    if top_layers > len(layers):
        raise SystemExit(f"train_top_layers: the model has {len(layers)} decoder layers, {top_layers} asked for")
    for param in model.parameters():
        param.requires_grad_(False)
    for module in [*layers[len(layers) - top_layers :], norm]:
        for param in module.parameters():
            param.requires_grad_(True)
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return {"top_layers": top_layers, "of_layers": len(layers), "trainable_params": trainable,
            "total_params": sum(p.numel() for p in model.parameters())}  # fmt: skip


def _convert(gguf: Path, out: Path, digest: str) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model.hf_quantizer = None  # de-quantized fp32 now; TRL refuses models marked quantized
    model.is_quantized = False
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    if END_OF_TURN in tokenizer.get_vocab():
        tokenizer.eos_token = END_OF_TURN
        tokenizer.pad_token = END_OF_TURN
        eos_id = tokenizer.convert_tokens_to_ids(END_OF_TURN)
        model.config.eos_token_id = eos_id
        model.config.pad_token_id = eos_id
        model.generation_config.eos_token_id = eos_id
        model.generation_config.pad_token_id = eos_id
    if not tokenizer.chat_template:
        raise ValueError(f"{gguf.name} carries no chat template; a conductor checkpoint needs one")
    tmp = out.with_name(out.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    (tmp / MARKER).write_text(json.dumps({"gguf": gguf.name, "sha256": digest}) + "\n")
    shutil.rmtree(out, ignore_errors=True)  # an unfinished earlier copy (no marker)
    tmp.rename(out)
