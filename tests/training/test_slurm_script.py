"""training/slurm/grpo.slurm: valid bash, and the trainer flags it adds parse with the paper recipe."""

import re
import subprocess
from pathlib import Path

from training.options import parse

SCRIPT = Path(__file__).resolve().parents[2] / "training" / "slurm" / "grpo.slurm"


def test_slurm_script_is_valid_bash():
    done = subprocess.run(["bash", "-n", str(SCRIPT)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_trainer_flags_of_the_script_parse_with_the_paper_recipe():
    flags = re.findall(r"--(use_vllm|vllm_mode|vllm_server_host|vllm_server_port)\b", SCRIPT.read_text())
    assert flags == ["use_vllm", "vllm_mode", "vllm_server_host", "vllm_server_port"]
    script, config, _ = parse(
        [
            "training/recipes/paper.yaml",
            "--use_vllm",
            "true",
            "--vllm_mode",
            "server",
            "--vllm_server_host",
            "node9",
            "--vllm_server_port",
            "8000",
            "--dry_run",
            "true",
        ]
    )
    assert (config.use_vllm, config.vllm_mode, config.vllm_server_host, config.vllm_server_port) == (
        True,
        "server",
        "node9",
        8000,
    )
    assert script.dry_run


def test_the_two_warmup_launches_of_the_script_parse_with_the_paper_recipe():
    text = SCRIPT.read_text()
    assert "--warmup_only true" in text and "--format_warmup_steps 0" in text
    script, _, model = parse(["training/recipes/paper.yaml", "--warmup_only", "true", "--output_dir", "runs/p-warmup",
                              "--dry_run", "true"])  # fmt: skip
    assert script.warmup_only and script.format_warmup_steps > 0
    script, _, model = parse(["training/recipes/paper.yaml", "--model_name_or_path", "runs/p-warmup/warmup",
                              "--format_warmup_steps", "0", "--dry_run", "true"])  # fmt: skip
    assert script.format_warmup_steps == 0 and model.model_name_or_path == "runs/p-warmup/warmup"
