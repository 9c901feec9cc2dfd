"""Micro-batches (issue 33.2): a step that runs its loss in micro-batches (gradient accumulation)
generates the same completions and makes the same update as one full batch, under the loss type the
recipes use (TRL's default "dapo": the loss is normalised by the generation batch's completion tokens);
the CPU recipes generate as many completions per step as before, in micro-batches."""

from __future__ import annotations

import pytest
from installed import Deferred, needs
from test_training_train import RECIPES
from training_fixtures import tiny_model

from training.options import parse

pytestmark = needs("trl")
torch = Deferred("torch")
GENERATION_BATCH = 8  # 2 prompts x 4 rollouts


def one_step(model_dir: str, out: str, micro_batch: int) -> tuple[dict, list[str]]:
    """One GRPO step over the same 8 completions, its loss in micro-batches of `micro_batch`. In float64:
    the gradient is a sum of terms that cancel (advantages sum to 0 per group), so in fp32 the order
    of the sum alone moves small gradients by ~0.2%; in float64 they agree to ~1e-15."""
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    class Capture(TrainerCallback):
        """The summed gradients the optimizer is about to apply."""

        grads: dict

        def on_pre_optimizer_step(self, args, state, control, model=None, **kwargs):  # noqa: ANN001, ANN201
            self.grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}

    seen: list[str] = []

    def length_reward(completions: list, **_: object) -> list[float]:  # distinct rewards: non-zero advantages
        seen.extend(c[0]["content"] for c in completions)
        return [float(len(c[0]["content"])) for c in completions]

    prompts = [{"prompt": [{"role": "user", "content": f"model_id = [{i}, 1]" * (1 + 3 * i)}]} for i in range(4)]
    config = GRPOConfig(output_dir=out, use_cpu=True, seed=0, max_steps=1, per_device_train_batch_size=micro_batch,
                        gradient_accumulation_steps=GENERATION_BATCH // micro_batch, num_generations=4,
                        max_completion_length=6, learning_rate=1e-3, beta=0.0, report_to="none",
                        save_strategy="no", logging_steps=1)  # fmt: skip
    assert config.loss_type == "dapo" and config.generation_batch_size == GENERATION_BATCH
    capture = Capture()
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float64)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    trainer = GRPOTrainer(model=model, reward_funcs=[length_reward], args=config, callbacks=[capture],
                          train_dataset=Dataset.from_list(prompts), processing_class=tokenizer)  # fmt: skip
    trainer.train()
    return capture.grads, seen


@pytest.mark.slow
def test_micro_batches_make_the_full_batchs_update(tmp_path):
    model = tiny_model(tmp_path / "model")
    full, full_completions = one_step(model, str(tmp_path / "full"), GENERATION_BATCH)
    micro, micro_completions = one_step(model, str(tmp_path / "micro"), 2)
    assert micro_completions == full_completions and len(set(full_completions)) > 1
    assert full.keys() == micro.keys() and any(g.abs().sum() > 0 for g in full.values())
    scale = max(float(g.abs().max()) for g in full.values())
    for name, grad in full.items():  # a sum in 4 parts instead of one: equal to fp64 rounding, and to fp32
        fp32 = name.startswith("lm_head.")  # rounding for the head, whose TRL kernel accumulates in fp32
        torch.testing.assert_close(
            micro[name], grad, rtol=1e-6 if fp32 else 1e-9, atol=scale * (1e-6 if fp32 else 1e-12)
        )


@pytest.mark.parametrize("recipe", [r for r in RECIPES if r.stem in ("cpu-smoke", "sim-routing")], ids=lambda r: r.stem)
def test_cpu_recipes_run_the_loss_in_micro_batches_of_an_unchanged_generation_batch(recipe):
    _, config, _ = parse([str(recipe)])
    assert config.loss_type == "dapo"  # normalised over the generation batch: micro-batches change no update
    assert config.gradient_accumulation_steps > 1 and config.steps_per_generation == config.gradient_accumulation_steps
    assert config.generation_batch_size == {"cpu-smoke": 4, "sim-routing": 16}[recipe.stem]
