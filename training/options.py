"""A training recipe's options: `ScriptArguments` (what TRL's `GRPOConfig` and `ModelConfig` do not
cover), the recipe parser and the checks that refuse a bad recipe before anything slow starts.

`parse` reads one YAML recipe holding all three groups (TRL's `TrlParser`, open-r1 style); any key
can be overridden on the command line (`--key value`), and a first argument ending in .yaml is the
recipe. A GPU recipe (bf16) parses on a CPU machine for a dry run only (`CPU_STAND_INS`).
"""

from __future__ import annotations

import difflib
import importlib.util
import re
import sys
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from training.budget import check_max_usd
from training.data import PAPER_MIXTURE
from workers.pools import PoolError, load_pool

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
    checkpoint_trained_layers: bool = field(
        default=False,
        metadata={
            "help": "keep half the trained layers' activations, recompute the rest in the backward pass:"
            " the same gradients, less memory (training/checkpoint_layers.py)"
        },  # fmt: skip
    )
    trim_heap_each_step: bool = field(
        default=False,
        metadata={
            "help": "return the heap's free pages to the kernel at each step's start, before its generation:"
            " a lower peak RSS for one page fault per page per step (training/allocator.py)"
        },  # fmt: skip
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
    format_warmup_batch: int | None = field(
        default=None,
        metadata={
            "help": "examples per warm-up step, all processes together, in gradient-accumulated micro-batches of"
            " per_device_train_batch_size (default: a GRPO step's, per_device x gradient_accumulation x processes)"
        },
    )
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
    explore_prefix: str = field(
        default="sampled",
        metadata={
            "help": "sampled | greedy: how assigned rows write the text before their worker id; greedy, the rows"
            " of a group share it, so GRPO gives it no net push and it cannot drift (training/explore.py)"
        },
    )
    form_anchor_rows: int = field(
        default=0,
        metadata={
            "help": "training questions per GRPO step whose form line (up to the worker id) adds the warm-up's loss,"
            " the forms in turn (0: off, the paper's): holds the line where the warm-up left it on questions GRPO"
            " never sees (training/form_anchor.py); a multiple of gradient_accumulation_steps"
        },
    )
    form_anchor_weight: float = field(
        default=1.0, metadata={"help": "weight of the form anchor's mean NLL in each step's loss (> 0)"}
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
    # read by the seeds sweep only (`python -m experiments.seeds --parallel N`, experiments/seeds/memory.py):
    peak_rss_gib: float | None = field(
        default=None,
        metadata={"help": "not used by training: a run's peak memory (GiB) at the recipe's shapes, for seed sweeps"},
    )
    peak_gpu_gib: float | None = field(
        default=None,
        metadata={"help": "not used by training: a GPU run's peak GPU memory (GiB), for seed sweeps on a GPU"},
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
    check_form_anchor(script, config)
    if script.format_warmup_steps:
        warmup_accumulation(script, config)  # refuses a batch the micro-batches cannot make
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

    if not script.explore_workers and script.explore_prefix == "sampled":  # off: nothing to check, no pool to read
        return
    try:
        n_workers = pool_listing_size(script) if script.explore_workers else 0
        check_explore(script.explore_workers, config.num_generations, n_workers, config.use_vllm, script.max_depth,
                      script.explore_prefix)  # fmt: skip
    except ValueError as error:
        raise SystemExit(f"error: {error}") from None


def check_form_anchor(script: ScriptArguments, config: Any) -> None:
    """Refuse a form anchor that cannot work, naming the fix."""
    rows, micro = script.form_anchor_rows, config.gradient_accumulation_steps
    if not rows:
        return
    if rows < 0 or rows % micro:
        raise SystemExit(
            f"error: form_anchor_rows must be 0 (off) or a positive multiple of gradient_accumulation_steps ({micro}),"
            f" got {rows}"
        )
    if not script.format_warmup_form or not script.format_warmup_steps:
        raise SystemExit("error: form_anchor_rows holds the warm-up's form line: set format_warmup_steps > 0 and"
                         " format_warmup_form true too")  # fmt: skip
    if config.gradient_checkpointing or script.checkpoint_trained_layers:
        raise SystemExit("error: form_anchor_rows is not combined with gradient_checkpointing or"
                         " checkpoint_trained_layers (the padded-attention hook, training/guard.py, holds the last"
                         " forward's mask; a checkpointed backward would recompute GRPO's layers under the anchor's):"
                         " set gradient_checkpointing false and checkpoint_trained_layers false")  # fmt: skip
    if not script.form_anchor_weight > 0:
        raise SystemExit(f"error: form_anchor_weight must be > 0, got {script.form_anchor_weight}")


def warmup_accumulation(script: ScriptArguments, config: Any) -> int:
    """Micro-batches per warm-up step: `format_warmup_batch` examples (default: a GRPO step's) in
    micro-batches of per_device_train_batch_size on every process."""
    micro = config.per_device_train_batch_size * config.world_size
    batch = script.format_warmup_batch or micro * config.gradient_accumulation_steps
    if batch < 1 or batch % micro:
        raise SystemExit(
            f"format_warmup_batch must be a positive multiple of per_device_train_batch_size x processes ({micro}),"
            f" got {batch}"
        )
    return batch // micro


def pool_listing_size(script: ScriptArguments) -> int:
    """How many workers a training prompt lists (Model 0..n-1)."""
    return script.pool_size or len(load_pool(script.pool).workers)


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
