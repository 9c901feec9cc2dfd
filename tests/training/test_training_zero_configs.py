"""The accelerate DeepSpeed configs (training/accelerate/*.yaml), loaded with accelerate's own
config loader, and the recipes that name them (`--config_file training/accelerate/<name>`) agree:
ZeRO stage, processes, mixed precision vs the recipe's bf16, gradient accumulation, and a
generation batch that holds whole GRPO groups. Running them: docs/training.md, Multi-process."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from installed import Deferred, needs

pytestmark = needs("accelerate")
accelerate_config = Deferred("accelerate.commands.config.config_args")  # accelerate imports torch
accelerate_utils = Deferred("accelerate.utils")
ROOT = Path(__file__).resolve().parents[2]
CONFIGS = sorted((ROOT / "training" / "accelerate").glob("*.yaml"))
RECIPES = sorted((ROOT / "training" / "recipes").glob("*.yaml"))
NAMED = re.compile(r"--config_file training/accelerate/(\S+)")
PAIRS = [(r, ROOT / "training" / "accelerate" / name) for r in RECIPES for name in NAMED.findall(r.read_text())]


def test_the_multi_gpu_recipes_name_a_config():
    assert {(r.stem, c.name) for r, c in PAIRS} >= {("paper", "zero3.yaml")}
    assert {c.name for c in CONFIGS} == {"zero2.yaml", "zero3.yaml"}


@pytest.mark.parametrize("path", CONFIGS, ids=[c.stem for c in CONFIGS])
def test_a_config_is_deepspeed_zero_on_one_machine_of_gpus(path):
    config = accelerate_config.load_config_from_file(str(path))
    assert config.distributed_type == accelerate_utils.DistributedType.DEEPSPEED
    assert config.deepspeed_config["zero_stage"] == int(path.stem.removeprefix("zero"))
    assert config.num_machines == 1 and config.num_processes >= 2 and not config.use_cpu
    if config.deepspeed_config["zero_stage"] == 3:  # the saved model must be evaluable as hf/<output_dir>
        assert config.deepspeed_config["zero3_save_16bit_model"] is True


@pytest.mark.parametrize("recipe,path", PAIRS, ids=[f"{r.stem}-{c.stem}" for r, c in PAIRS])
def test_a_recipe_agrees_with_its_config(recipe, path):
    assert path.is_file(), f"{recipe.name} names {path}, which does not exist"
    config, args = accelerate_config.load_config_from_file(str(path)), yaml.safe_load(recipe.read_text())
    assert config.mixed_precision == ("bf16" if args.get("bf16") else "no")
    accumulation = args.get("gradient_accumulation_steps", 1)
    assert config.deepspeed_config.get("gradient_accumulation_steps", accumulation) == accumulation
    generations = args["per_device_train_batch_size"] * config.num_processes * accumulation
    assert generations % args["num_generations"] == 0  # whole GRPO groups per optimizer step
    assert not args.get("use_cpu")


def test_a_deepspeed_launch_with_the_warm_up_is_refused_before_it_runs():
    """Accelerate makes one DeepSpeed Accelerator per process: measured with deepspeed 0.19.8 on CPU,
    GRPO's trainer failed after the warm-up had run. Now refused first, naming the two launches."""
    from training.options import ScriptArguments
    from training.parallel import deepspeed_warmup_problem

    warm = ScriptArguments(format_warmup_steps=5)
    assert "--warmup_only true" in deepspeed_warmup_problem(True, warm, None)
    assert deepspeed_warmup_problem(False, warm, None) is None  # one Accelerator kind: DDP, MULTI_CPU
    assert deepspeed_warmup_problem(True, ScriptArguments(format_warmup_steps=5, warmup_only=True), None) is None
    assert deepspeed_warmup_problem(True, warm, True) is None  # a resumed run skips the warm-up
    assert deepspeed_warmup_problem(True, ScriptArguments(), None) is None


def test_deepspeed_is_seen_from_accelerate_launch_or_the_deepspeed_option(monkeypatch):
    from types import SimpleNamespace

    from training.parallel import uses_deepspeed

    monkeypatch.delenv("ACCELERATE_USE_DEEPSPEED", raising=False)
    assert not uses_deepspeed(SimpleNamespace(deepspeed=None))
    assert uses_deepspeed(SimpleNamespace(deepspeed="ds.json"))
    monkeypatch.setenv("ACCELERATE_USE_DEEPSPEED", "true")  # what accelerate launch sets for a DeepSpeed config
    assert uses_deepspeed(SimpleNamespace(deepspeed=None))


@pytest.mark.slow
def test_warmup_only_saves_the_warm_up_and_trains_no_grpo(tmp_path):
    """The first of the two DeepSpeed launches (here on one process)."""
    from test_training_train import TINY_RECIPE, data_args
    from training_fixtures import data_files, tiny_model

    from training.train import main

    recipe = tmp_path / "tiny.yaml"
    recipe.write_text(TINY_RECIPE)
    out = tmp_path / "run"
    argv = [str(recipe), "--model_name_or_path", tiny_model(tmp_path / "model"), "--output_dir", str(out),
            *data_args(data_files(tmp_path))]  # fmt: skip
    with pytest.raises(SystemExit, match="format_warmup_steps > 0"):
        main([*argv, "--warmup_only", "true"])
    info = main([*argv, "--warmup_only", "true", "--format_warmup_steps", "1"])
    assert info["warmup"]["steps"] == 1 and "global_step" not in info
    assert (out / "warmup" / "model.safetensors").is_file() and (out / "run_info.json").is_file()
    assert not (out / "metrics.jsonl").exists() and not (out / "model.safetensors").exists()
