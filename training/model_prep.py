"""The embedded SmolLM2-135M-Instruct GGUF made trainable (fp32 transformers checkpoint).

transformers de-quantizes a GGUF (`from_pretrained(dir, gguf_file=...)`, needs `gguf`) but
marks the model as quantized, which TRL refuses to train: the quantizer flags are cleared
before `save_pretrained`. The GGUF's own metadata names `<|im_start|>` as end of sequence;
the instruct model ends its turns with `<|im_end|>` (as the original tokenizer config), so
generation would never stop: both are set right. The result is cached under
`$CONDUCTOR_BENCH_CACHE/trainable/<name>-<sha of the GGUF>` and reused.

A recipe names it as `model_name_or_path: gguf:smollm2-135m` (`resolve_model_path`).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

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
