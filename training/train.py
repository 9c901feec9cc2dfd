"""GRPO training of a Conductor with TRL, from one YAML recipe (open-r1 style).

    nox -s train -- training/recipes/cpu-smoke.yaml [--max_steps 4 --output_dir runs/x ...]
    python training/train.py --config training/recipes/sim-routing.yaml --dry_run true
    torchrun --nproc_per_node 2 training/train.py training/recipes/cpu-smoke.yaml   # 2 CPU processes
    accelerate launch --config_file training/accelerate/zero3.yaml training/train.py \
        --config training/recipes/paper.yaml [--warmup_only true | --format_warmup_steps 0]

Recipe -> dataset -> reward -> trainer -> train -> save. A recipe holds the project's options
(training/options.py), TRL's `GRPOConfig` and `ModelConfig`; any key can be overridden on the command
line. The data: training/data.py; the policy: training/model_prep.py (`gguf:smollm2-135m` is the
embedded GGUF); the reward and trainer: training/trainer.py; the optional format warm-up before GRPO
(`format_warmup_steps`, off as in the paper): training/warmup.py; several processes:
training/parallel.py; output_dir and resume: training/output_dir.py; run_info.json:
training/run_info.py. `--dry_run true` does everything but load weights and train (CI). Checkpoints and
resume are TRL's (`--resume_from_checkpoint true|<dir>`); the final model and tokenizer (with its chat
template) are saved in `output_dir`, ready for `inspect eval ... --model-role conductor=hf/<output_dir>`.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from pathlib import Path

# ruff: noqa: E402 (the imports below need the project root on the path when run as a script)
if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from solvers.conducting import Settings, check_settings  # noqa: E402
from training.allocator import keep_freed_memory
from training.data import build_dataset
from training.model_prep import load_policy
from training.options import ScriptArguments, missing_train_extra, parse
from training.output_dir import claim_output_dir, resume_arg, supersede_rerun_steps
from training.parallel import (
    deepspeed_warmup_problem,
    launch_problem,
    leave_process_group_at_exit,
    quiet_replica,
    same_weights,
    uses_deepspeed,
)
from training.run_info import finish_info, start_info, write_run_info
from training.trainer import grpo_trainer, make_reward
from training.warmup import warm_up

log = logging.getLogger("training.train")


def settings_of(script: ScriptArguments) -> Settings:
    """The conductor's settings, as an evaluation of the trained model runs them."""
    return check_settings(
        Settings(
            max_steps=script.workflow_max_steps,
            few_shot=script.few_shot,
            access=script.access,  # type: ignore[arg-type]
            question=script.question,  # type: ignore[arg-type]
            max_depth=script.max_depth,
            max_recursions=script.max_recursions,
        )
    )


def main(argv: list[str] | None = None) -> dict:
    if problem := missing_train_extra() or launch_problem(os.environ):
        raise SystemExit(problem)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    allocator = keep_freed_memory()  # freed memory reused, not faulted in (training/allocator.py)
    script, config, model_args = parse(argv)
    leave_process_group_at_exit()
    main_process = config.process_index == 0  # several processes: see training/parallel.py
    if not config.should_log:
        quiet_replica()
    resume = resume_arg(config.resume_from_checkpoint)
    if problem := deepspeed_warmup_problem(uses_deepspeed(config), script, resume):
        raise SystemExit(problem)
    out = Path(config.output_dir)
    replaced = claim_output_dir(out, script, resume, move=main_process)
    config.distributed_state.wait_for_everyone()  # no process writes into output_dir before it is claimed

    started = time.time()
    settings = settings_of(script)
    dataset, provenance = build_dataset(script, settings)
    for domain, sub in provenance["substituted"].items():
        log.warning("training data: %s is unavailable here; its %d items come from %s", domain, sub["count"], sub["by"])
    reward = make_reward(script, settings, config)
    info = start_info(script, config, model_args, (dataset, provenance), reward, allocator, replaced)
    log.info("run: %s", json.dumps({k: v for k, v in info.items() if k != "script"}))
    if script.dry_run:
        info["dry_run"] = True
        if main_process:
            print(json.dumps(info, indent=2, default=str))
        return info

    model, tokenizer, policy = load_policy(script, model_args, config)
    info.update(policy)
    log.info("policy: %s", json.dumps(policy))
    out.mkdir(parents=True, exist_ok=True)
    if resume and main_process:
        info["superseded"] = supersede_rerun_steps(out, resume, script.rollout_log)
    if script.format_warmup_steps and not resume:  # a resumed run's checkpoint already holds the warm-up
        info["warmup"] = warm_up(model, tokenizer, dataset.to_list(), script, config, str(out / "warmup"))
        log.info("format warm-up: %s", json.dumps(info["warmup"]))
    write_run_info(out, info, main_process)
    if script.warmup_only:
        return info

    trainer, callbacks = grpo_trainer(script, config, model_args, (model, tokenizer), dataset, reward, out)
    trainer.train(resume_from_checkpoint=resume)
    callbacks.guard.raise_if_tripped(str(out))
    if digests := same_weights(trainer.model, config, "GRPO"):
        info["weights_sha256"] = digests
    trainer.save_model(str(out))  # model, tokenizer and chat template: evaluable as hf/<output_dir>
    finish_info(info, started, trainer, callbacks, config.device)
    write_run_info(out, info, main_process)
    log.info("saved %s (%d steps, %.0f s)", out, trainer.state.global_step, info["wall_s"])
    return info


if __name__ == "__main__":
    main()
