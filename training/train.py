"""GRPO training of a Conductor with TRL, from one YAML recipe (open-r1 style).

    nox -s train -- training/recipes/cpu-smoke.yaml [--max_steps 4 --output_dir runs/x ...]
    python training/train.py --config training/recipes/sim-routing.yaml --dry_run true
    torchrun --nproc_per_node 2 training/train.py training/recipes/cpu-smoke.yaml   # 2 CPU processes
    accelerate launch --config_file training/accelerate/zero3.yaml training/train.py \
        --config training/recipes/paper.yaml [--warmup_only true | --format_warmup_steps 0]

A recipe holds three argument groups in one file: `ScriptArguments` below (pool, data
mixture, conductor settings, reward), TRL's `GRPOConfig` and TRL's `ModelConfig`; any key
can be overridden on the command line (`--key value`). `model_name_or_path: gguf:smollm2-135m`
trains the embedded GGUF (training/model_prep.py). The reward is `training.rewards.
ConductorReward`: each rollout's workflow runs on the recipe's pool and is scored by the
evaluation's own checks. `--dry_run true` does everything but load weights and train (CI).
`format_warmup_steps: N` (off by default, as in the paper) runs a short format warm-up before GRPO
(training/warmup.py), saved in `<output_dir>/warmup` (under DeepSpeed as its own launch,
`--warmup_only true`). Several processes: what each does is in training/parallel.py.
Checkpoints and resume are TRL's (`--resume_from_checkpoint true|<dir>`); the final model and
tokenizer (with its chat template) are saved in `output_dir`, ready for
`inspect eval ... --model-role conductor=hf/<output_dir>`.
"""

from __future__ import annotations

import difflib
import importlib.util
import json
import logging
import os
import re
import sys
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: the project root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from solvers.conducting import Settings, check_settings  # noqa: E402
from tasks.catalog import MATH500  # noqa: E402
from tasks.sources import load_records  # noqa: E402
from training.budget import check_max_usd, spend_cap  # noqa: E402
from training.data import PAPER_MIXTURE, build_items, build_rows, default_loaders, interleave_domains  # noqa: E402
from training.rollouts import supersede_after  # noqa: E402
from workers.pools import PoolError, load_pool  # noqa: E402

log = logging.getLogger("training.train")
REWARDS = ("conductor", "constant")
CPU_STAND_INS = ["--bf16", "false", "--use_cpu", "true"]  # a GPU recipe's dry run on a CPU machine
TRAIN_PACKAGES = ("torch", "transformers", "trl", "accelerate", "datasets")  # of the `train` extra
CPU_TORCH_INDEX = "https://download.pytorch.org/whl/cpu"  # as noxfile.py's TORCH_INDEX


@dataclass
class ScriptArguments:
    """What TRL's configs do not cover: pool, data, conductor settings, reward."""

    recipe_name: str = field(default="custom", metadata={"help": "name recorded with the run"})
    pool: str = field(default="local", metadata={"help": "bundled pool name or pool YAML path of the workers"})
    pool_size: int | None = field(default=None, metadata={"help": "random k-of-n pool subset per prompt"})
    pool_seed: int = field(default=0, metadata={"help": "seed of the per-prompt pool subsets"})
    mixture: str = field(default=PAPER_MIXTURE, metadata={"help": "domain=count,... (math, mmlu, rlpr, lcb)"})
    substitute: str = field(
        default="rlpr=math,lcb=math", metadata={"help": "missing=replacement for domains with no source here"}
    )
    mixture_seed: int = field(default=0, metadata={"help": "seed of the item draw and order"})
    math_file: str | None = field(default=None, metadata={"help": "MATH train file instead of the wheel"})
    mmlu_file: str | None = field(default=None, metadata={"help": "MMLU file instead of the wheel"})
    rlpr_file: str | None = field(default=None, metadata={"help": "RLPR records (hub-only otherwise)"})
    lcb_file: str | None = field(default=None, metadata={"help": "LiveCodeBench v1 records (hub-only otherwise)"})
    math500_file: str | None = field(
        default=None, metadata={"help": "MATH-500 problems never trained on (default: the bundled MATH-500)"}
    )
    allow_hub: bool = field(default=False, metadata={"help": "load RLPR / LCB v1 from the Hugging Face hub"})
    workflow_max_steps: int = field(default=5, metadata={"help": "most steps a workflow may have"})
    few_shot: str = field(default="ood", metadata={"help": "few-shot set of the conductor prompt"})
    access: str = field(default="binary", metadata={"help": "binary | indices"})
    question: str = field(default="first", metadata={"help": "first | every"})
    max_depth: int = field(default=0, metadata={"help": "1: the conductor is offered as a worker (recursion)"})
    max_recursions: int = field(default=1, metadata={"help": "recursive calls per rollout after the root"})
    recursion_share: float = field(
        default=0.0, metadata={"help": "share of a GRPO group forced to recurse once (paper 0.5; max_depth 1)"}
    )
    worker_temperature: float | None = field(default=None, metadata={"help": "override the pool's"})
    worker_max_tokens: int | None = field(default=None, metadata={"help": "override the pool's"})
    max_concurrency: int = field(default=16, metadata={"help": "rollouts running at once in the reward"})
    train_top_layers: int | None = field(
        default=None,
        metadata={"help": "train only the top N decoder layers and the final norm (CPU budget; default: all)"},
    )
    format_warmup_steps: int = field(
        default=0,
        metadata={"help": "format warm-up SFT steps before GRPO on random valid workflows (0: off, the paper's)"},
    )
    warmup_only: bool = field(
        default=False,
        metadata={
            "help": "run the format warm-up, save it in <output_dir>/warmup and stop (no GRPO): the first of"
            " two launches under DeepSpeed, whose GRPO then starts from that model"
        },
    )
    format_warmup_lr: float = field(default=5.0e-5, metadata={"help": "learning rate of the format warm-up"})
    format_warmup_max_steps: int | None = field(
        default=None, metadata={"help": "most steps of a warm-up workflow (default: workflow_max_steps)"}
    )
    format_warmup_form: bool = field(
        default=False,
        metadata={"help": "warm-up completions open with a line naming the question's form (no worker preference)"},
    )
    format_warmup_form_worker: bool = field(
        default=False,
        metadata={
            "help": "with format_warmup_form: the line ends naming the first worker (still uniform),"
            " right after the form words"
        },
    )
    interleave_domains: bool = field(
        default=False,
        metadata={
            "help": "domains take turns in the data and the trainer reads it in order (shuffle_dataset off):"
            " balanced steps"
        },
    )
    explore_workers: int = field(
        default=0,
        metadata={
            "help": "rows of each GRPO group whose first worker is assigned, every worker in turn (0: off, the"
            " paper's sampling): a group always compares every worker, so a collapsed choice can recover"
            " (training/explore.py)"
        },
    )
    reward: str = field(default="conductor", metadata={"help": "conductor | constant (benchmarks only)"})
    cost_weight: float = field(
        default=0.0,
        metadata={"help": "cost term: reward minus w x normalised worker cost, 0 <= w < 0.5 (0: the paper's reward)"},
    )
    cost_charge: str = field(default="always", metadata={"help": "always | correct: which rollouts pay the cost term"})
    cost_reference_usd: float | None = field(
        default=None,
        metadata={"help": "USD that normalises the cost to 1 (default: the pool's priciest worker at 1k in + 1k out)"},
    )
    rollout_log: str | None = field(default=None, metadata={"help": "JSONL of every rollout (default in output_dir)"})
    max_usd: float | None = field(
        default=None, metadata={"help": "stop cleanly (checkpoint saved) once the workers' spend reaches this (USD)"}
    )
    dry_run: bool = field(default=False, metadata={"help": "build everything but load no weights, train nothing"})
    overwrite_output_dir: bool = field(
        default=False,
        metadata={"help": "a fresh run into a non-empty output_dir moves the old run aside (<dir>.replaced-<time>)"},
    )
    cpu_stand_ins: str | None = field(default=None, metadata={"help": "set by a GPU recipe's dry run on a CPU"})
    max_nonfinite_steps: int = field(
        default=3,
        metadata={"help": "steps in a row with a non-finite gradient norm (each skipped) that stop the run"},
    )
    peak_rss_gib: float | None = field(
        default=None,
        metadata={
            "help": "a run's peak memory (GiB) as benchmarks/bench_train.py measured it at the recipe's shapes:"
            " seed_sweep --parallel checks that its runs fit (training/run_memory.py)"
        },
    )
    peak_gpu_gib: float | None = field(
        default=None,
        metadata={"help": "a GPU run's peak GPU memory (GiB): seed_sweep --parallel checks GPU runs fit with it"},
    )


def parse(argv: list[str] | None = None) -> tuple[Any, Any, Any]:
    """(ScriptArguments, GRPOConfig, ModelConfig) from a recipe and overrides; a first
    argument ending in .yaml/.yml is the recipe (`--config` is implied)."""
    from trl import GRPOConfig, ModelConfig, TrlParser

    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0].endswith((".yaml", ".yml")):
        argv = ["--config", *argv]
    if "--config" in argv:
        recipe = Path(argv[argv.index("--config") + 1])
        if not recipe.is_file():
            raise SystemExit(f"recipe not found: {recipe} (the recipes are in training/recipes/)")
    kinds = (ScriptArguments, GRPOConfig, ModelConfig)
    parser = TrlParser(kinds)
    try:
        script, config, model = parser.parse_args_and_config(argv)
    except ValueError as error:  # a GPU recipe checked on a CPU machine (CI): dry runs only
        if "bf16" not in str(error):
            raise SystemExit(refused_arguments(error, kinds)) from None
        script, config, model = parser.parse_args_and_config([*argv, *CPU_STAND_INS])
        if not script.dry_run:
            raise
        script.cpu_stand_ins = f"{' '.join(CPU_STAND_INS)} ({error})"
    check(script)
    check_exploration(script, config)
    if script.interleave_domains:
        config.shuffle_dataset = False  # the sampler must keep the turns, or the balance is lost
    return script, config, model


def refused_arguments(error: ValueError, kinds: tuple[type, ...]) -> str:
    """One line for a recipe or command line TRL's parser refuses: an unknown name gets the
    closest one the recipe's dataclasses take, any other problem TRL's own message."""
    given = re.findall(r"'--([\w-]+)'", str(error))
    if "Unknown arguments" not in str(error) and "not used by the HfArgumentParser" not in str(error) or not given:
        return f"error: {' '.join(str(error).split())}"
    known = [f.name for kind in kinds for f in fields(kind)]
    unknown = []
    for name in given:
        close = difflib.get_close_matches(name.replace("-", "_"), known, n=1, cutoff=0.6)
        fix = f"did you mean --{close[0]}?" if close else "see train.py --help"
        unknown.append(f"train.py has no option --{name} ({fix})")
    return "error: " + "; ".join(unknown)


def check(script: ScriptArguments) -> None:
    if script.reward not in REWARDS:
        raise SystemExit(f"reward must be one of {', '.join(REWARDS)}, got {script.reward!r}")
    if script.train_top_layers is not None and script.train_top_layers < 1:
        raise SystemExit(f"train_top_layers must be >= 1 (or unset: every layer), got {script.train_top_layers}")
    if script.format_warmup_steps < 0:
        raise SystemExit(f"format_warmup_steps must be >= 0 (0: no warm-up), got {script.format_warmup_steps}")
    if script.warmup_only and not script.format_warmup_steps:
        raise SystemExit("warmup_only runs the format warm-up alone: set format_warmup_steps > 0 too")
    if script.format_warmup_form_worker and not script.format_warmup_form:
        raise SystemExit("format_warmup_form_worker names the worker in the form line: set format_warmup_form true too")
    warmup_steps = script.format_warmup_max_steps
    if warmup_steps is not None and not 1 <= warmup_steps <= script.workflow_max_steps:
        raise SystemExit(
            f"format_warmup_max_steps must be in 1..workflow_max_steps ({script.workflow_max_steps}),"
            f" got {warmup_steps}"
        )
    from training.rewards import check_cost_options

    try:
        check_cost_options(script.cost_weight, script.cost_charge)
    except ValueError as error:
        raise SystemExit(str(error)) from None
    if script.recursion_share and (script.max_depth < 1 or script.reward != "conductor"):
        raise SystemExit("recursion_share needs max_depth: 1 and the conductor reward (the policy calls itself)")
    try:
        pool = load_pool(script.pool)
    except PoolError as error:
        raise SystemExit(f"error: --pool {script.pool}: {error}") from None
    check_max_usd(script.max_usd, pool, script.reward)


def check_exploration(script: ScriptArguments, config: Any) -> None:
    from training.explore import check_explore

    if not script.explore_workers:  # off: nothing to check, no pool to read
        return
    try:
        check_explore(script.explore_workers, config.num_generations, pool_listing_size(script), config.use_vllm,
                      script.max_depth)  # fmt: skip
    except ValueError as error:
        raise SystemExit(f"error: {error}") from None


def pool_listing_size(script: ScriptArguments) -> int:
    """How many workers a training prompt lists (Model 0..n-1)."""
    return script.pool_size or len(load_pool(script.pool).workers)


def settings_of(script: ScriptArguments) -> Settings:
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


def build_dataset(script: ScriptArguments, settings: Settings) -> tuple[Any, dict]:
    """The trainer dataset (a `datasets.Dataset`) and the data provenance."""
    from datasets import Dataset

    pool = load_pool(script.pool)
    files = {"math": script.math_file, "mmlu": script.mmlu_file, "rlpr": script.rlpr_file, "lcb": script.lcb_file}
    exclude = (lambda: load_records("math500", MATH500, data_file=script.math500_file)) if script.math500_file else None
    items, provenance = build_items(
        script.mixture, script.substitute, script.mixture_seed, default_loaders(files, script.allow_hub), exclude
    )
    if script.interleave_domains:
        items = interleave_domains(items)
        provenance["order"] = "domains interleaved, read in order (shuffle_dataset false)"
    descriptions = [w.description for w in pool.workers]
    rows = build_rows(items, descriptions, settings, script.pool_size, script.pool_seed)
    provenance.update(pool=pool.name, pool_workers=[w.model for w in pool.workers], pool_size=script.pool_size)
    provenance["simulated"] = pool.simulated
    return Dataset.from_list(rows), provenance


def constant_reward(completions: list, **_: Any) -> list[float]:
    """The same score for every rollout: the bare-TRL baseline of benchmarks/bench_train.py."""
    return [1.0] * len(completions)


def make_reward(script: ScriptArguments, settings: Settings, config: Any) -> Any:
    """The reward; a data-parallel run's rollout log gathers every process's rows (training/parallel.py)."""
    if script.reward == "constant":
        return constant_reward
    from training.parallel import gather_rows
    from training.rewards import ConductorReward
    from training.rollouts import RolloutLog

    rollout_log = RolloutLog(script.rollout_log or Path(config.output_dir) / "rollouts.jsonl", gather_rows(config))
    return ConductorReward(
        script.pool,
        settings=settings,
        max_concurrency=script.max_concurrency,
        rollout_log=rollout_log,
        worker_temperature=script.worker_temperature,
        worker_max_tokens=script.worker_max_tokens,
        cost_weight=script.cost_weight,
        cost_charge=script.cost_charge,
        cost_reference_usd=script.cost_reference_usd,
    )


def metrics_callback(path: Path) -> Any:
    """A TrainerCallback appending every logged dict (with its step and the wall seconds of
    that step, `step_wall_s`) to `path` (JSONL); `.step_seconds` keeps every step's wall time."""
    from transformers import TrainerCallback

    class MetricsFile(TrainerCallback):
        def __init__(self) -> None:
            self.step_seconds: list[float] = []
            self.started = time.perf_counter()

        def on_step_begin(self, args, state, control, **kwargs):  # noqa: ANN001, ANN201
            self.started = time.perf_counter()

        def on_step_end(self, args, state, control, **kwargs):  # noqa: ANN001, ANN201
            self.step_seconds.append(time.perf_counter() - self.started)

        def on_log(self, args, state, control, logs=None, **kwargs):  # noqa: ANN001, ANN201
            if state.is_world_process_zero and logs:
                wall = self.step_seconds[-1] if self.step_seconds else None
                with open(path, "a") as f:
                    f.write(json.dumps({"step": state.global_step, **logs, "step_wall_s": wall}) + "\n")

    return MetricsFile()


def load_model(model_args: Any, config: Any) -> tuple[Any, Any]:
    """The policy and its tokenizer (a `gguf:` name is converted once and cached)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from training.model_prep import resolve_model_path

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


def resume_arg(value: str | bool | None) -> str | bool | None:
    """`--resume_from_checkpoint true` = the latest checkpoint in output_dir; a path = that one."""
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return value or None


def supersede_rerun_steps(out: Path, resume: str | bool, rollout_log: str | None) -> dict:
    """Before a resumed run re-runs the steps after its checkpoint, move their first attempt out
    of the logs (to `*.superseded`): rollout rows are numbered from step 0 (the step being
    taken), metrics rows from 1 (the step just done)."""
    from transformers.trainer_utils import get_last_checkpoint

    checkpoint = get_last_checkpoint(str(out)) if resume is True else str(resume)
    state = Path(checkpoint or "") / "trainer_state.json"
    if not checkpoint or not state.is_file():
        raise SystemExit(f"resume_from_checkpoint: no checkpoint with a trainer_state.json at {checkpoint or out}")
    done = int(json.loads(state.read_text())["global_step"])
    rollouts = Path(rollout_log) if rollout_log else out / "rollouts.jsonl"
    return {"checkpoint_step": done, "rollout_rows": supersede_after(rollouts, done),
            "metric_rows": supersede_after(out / "metrics.jsonl", done + 1)}  # fmt: skip


def old_run_paths(out: Path, rollout_log: str | None) -> list[Path]:
    """What an earlier run left where a fresh one would write: a non-empty `out`, and a non-empty
    rollout log outside it."""
    found = [out] if out.is_dir() and any(out.iterdir()) else []
    log_file = Path(rollout_log) if rollout_log else None
    if log_file and log_file.is_file() and log_file.stat().st_size and out not in log_file.parents:
        found.append(log_file)
    return found


def claim_output_dir(out: Path, script: ScriptArguments, resume: str | bool | None, move: bool = True) -> list[str]:
    """A fresh run writes into no earlier run's files (its rows would append to theirs): refused
    unless it resumes or `overwrite_output_dir` moves them aside (to `<path>.replaced-<UTC time>`,
    returned; a dry run only checks, and so does every process but the main one, `move` False)."""
    found = [] if resume else old_run_paths(out, script.rollout_log)
    if found and not script.overwrite_output_dir:
        raise SystemExit(
            f"{', '.join(map(str, found))}: not empty, it holds an earlier run (a fresh run would append to its"
            " logs). Pass --overwrite_output_dir true to move it aside, --resume_from_checkpoint true to continue"
            " it, or another --output_dir"
        )
    if script.dry_run or not move:
        return []
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    moved = [path.rename(path.with_name(f"{path.name}.replaced-{stamp}")) for path in found]
    for old, new in zip(found, moved, strict=True):
        log.warning("overwrite_output_dir: the earlier run's %s moved to %s", old, new)
    return [str(path) for path in moved]


def device_name(device: Any) -> str:
    """The training device as run_info.json records it: "cpu", or "cuda: <GPU name>"."""
    if device.type != "cuda":
        return device.type
    import torch

    return f"cuda: {torch.cuda.get_device_name(device)}"


def write_run_info(out: Path, info: dict, main_process: bool) -> None:
    if main_process:
        (out / "run_info.json").write_text(json.dumps(info, indent=2, default=str) + "\n")


def missing_train_extra() -> str | None:
    """One line naming the fix when the `train` extra's packages are not installed (found without
    importing them, so it is said before anything slow starts), or None."""
    missing = [name for name in TRAIN_PACKAGES if importlib.util.find_spec(name) is None]
    if not missing:
        return None
    return (
        f"error: training needs the train extra ({', '.join(missing)} not installed): "
        f'pip install -e ".[train]" --extra-index-url {CPU_TORCH_INDEX} (CPU torch), '
        "or run it with nox -s train -- <recipe>"
    )


def main(argv: list[str] | None = None) -> dict:
    if problem := missing_train_extra():
        raise SystemExit(problem)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    from training.allocator import keep_freed_memory  # freed memory reused, not faulted in (training/allocator.py)

    allocator = keep_freed_memory()
    from training.parallel import (
        deepspeed_warmup_problem,
        flush_callback,
        launch_problem,
        leave_process_group_at_exit,
        quiet_replica,
        same_weights,
        uses_deepspeed,
    )

    if problem := launch_problem(os.environ):
        raise SystemExit(problem)
    script, config, model_args = parse(argv)
    leave_process_group_at_exit()
    main_process = config.process_index == 0  # several processes: see training/parallel.py
    if not config.should_log:
        quiet_replica()
    resume = resume_arg(config.resume_from_checkpoint)
    if problem := deepspeed_warmup_problem(uses_deepspeed(config), script, resume):
        raise SystemExit(problem)
    replaced = claim_output_dir(Path(config.output_dir), script, resume, move=main_process)
    config.distributed_state.wait_for_everyone()  # no process writes into output_dir before it is claimed
    from training.completion_logps import score_completions_only
    from training.guard import NonFiniteGuard, mask_padded_attention, padsafe_attention
    from training.lean_generation import lean_generation
    from training.run_memory import peak_gpu_gib, peak_rss_gib
    from training.shared_prompts import share_prompt_passes

    guard = NonFiniteGuard(script.max_nonfinite_steps)
    settings = settings_of(script)
    started = time.time()
    dataset, provenance = build_dataset(script, settings)
    for domain, sub in provenance["substituted"].items():
        log.warning("training data: %s is unavailable here; its %d items come from %s", domain, sub["count"], sub["by"])
    reward = make_reward(script, settings, config)
    info = {
        "recipe": script.recipe_name,
        "script": asdict(script),
        "model": model_args.model_name_or_path,
        "data": provenance,
        "rows": len(dataset),
        "reward": getattr(reward, "__name__", type(reward).__name__),
        "generations_per_step": config.per_device_train_batch_size
        * config.gradient_accumulation_steps
        * config.world_size,
        "processes": config.world_size,
        "device": device_name(config.device),
        "num_generations": config.num_generations,
        "max_steps": config.max_steps,
        "seed": config.seed,
        "simulated": provenance["simulated"],
        "allocator": allocator,
    }
    if replaced:
        info["replaced"] = replaced
    log.info("run: %s", json.dumps({k: v for k, v in info.items() if k != "script"}))
    if script.dry_run:
        info["dry_run"] = True
        if main_process:
            print(json.dumps(info, indent=2, default=str))
        return info

    from trl import GRPOTrainer, get_peft_config

    from training.model_prep import resolve_model_path

    rollout_func = None
    if script.recursion_share:
        from training.recursion import RecursionRollout

        rollout_func = RecursionRollout(reward, dataset.to_list(), share=script.recursion_share)

    with config.main_process_first(desc="converting the model"):  # a gguf: model once, by the main process
        resolve_model_path(model_args.model_name_or_path)
    model, tokenizer = load_model(model_args, config)  # on all processes at once (ZeRO-3 loads collectively)
    info["completion_only_logps"] = score_completions_only()  # TRL's head scores no prompt position (CPU too)
    if script.train_top_layers:
        info["trainable"] = freeze_below(model, script.train_top_layers)
        log.info("trainable: %s", json.dumps(info["trainable"]))
    mask_padded_attention(model)  # a NaN at a padded position never reaches a real one (training/guard.py)
    padsafe_attention(model)  # no fully masked row reaches SDPA (training/guard.py)
    if not config.use_vllm:  # vLLM shares prompt prefixes itself
        lean_generation(model)  # a preallocated cache, this model's SDPA without head copies on a CPU (after padsafe)
        share_prompt_passes(model)  # a question's rollouts share its encoded prompt (training/shared_prompts.py)
    info["attention"] = model.config._attn_implementation  # sdpa_padsafe_lean, sdpa_padsafe or the model's own
    out = Path(config.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    if resume and main_process:
        info["superseded"] = supersede_rerun_steps(out, resume, script.rollout_log)
    if script.format_warmup_steps and not resume:  # a resumed run's checkpoint already holds the warm-up
        from training.warmup import run_warmup

        info["warmup"] = run_warmup(model, tokenizer, dataset.to_list(), script, config, str(out / "warmup"))
        if digests := same_weights(model, config, "format warm-up"):
            info["warmup"]["weights_sha256"] = digests
        log.info("format warm-up: %s", json.dumps(info["warmup"]))
    write_run_info(out, info, main_process)
    if script.warmup_only:
        return info
    if script.explore_workers:  # after the warm-up: only GRPO's rollouts explore (training/explore.py)
        from training.explore import assign_first_workers

        reward.assigned = assign_first_workers(
            model, tokenizer, script.explore_workers, pool_listing_size(script), config.seed
        )
    rollout_log = getattr(reward, "log", None)  # the conductor reward's; gathered at each step's end
    flushes = [flush_callback(rollout_log, config)] if rollout_log and rollout_log.gather else []
    caps = [spend_cap(script.max_usd, reward.log.path)] if script.max_usd is not None else []
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=[reward],
        args=config,
        train_dataset=dataset,
        processing_class=tokenizer,
        peft_config=get_peft_config(model_args),
        rollout_func=rollout_func,
        callbacks=[guard, timer := metrics_callback(out / "metrics.jsonl"), *flushes, *caps],
    )
    trainer.train(resume_from_checkpoint=resume)
    guard.raise_if_tripped(str(out))
    if digests := same_weights(trainer.model, config, "GRPO"):
        info["weights_sha256"] = digests
    trainer.save_model(str(out))  # model, tokenizer and chat template: evaluable as hf/<output_dir>
    info["wall_s"] = round(time.time() - started, 1)
    info["global_step"] = trainer.state.global_step
    info["step_wall_s"] = [round(x, 3) for x in timer.step_seconds]
    info["nonfinite_skipped"] = guard.skipped
    info["peak_rss_gib"] = peak_rss_gib()  # this process's; seed_sweep --parallel reads it (training/run_memory.py)
    if (gpu := peak_gpu_gib(config.device)) is not None:
        info["peak_gpu_gib"] = gpu  # a GPU run's, read alike
    if caps:
        info["spend"] = caps[0].summary()
    write_run_info(out, info, main_process)
    log.info("saved %s (%d steps, %.0f s)", out, trainer.state.global_step, info["wall_s"])
    return info


if __name__ == "__main__":
    main()
