"""A real 2-step GRPO run on a tiny randomly initialised model (built in code) over the
simulated pool, then a resume from its checkpoint; every recipe's dry run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from installed import needs
from training_fixtures import data_files, tiny_model

from training.train import main

pytestmark = needs("trl")

RECIPES = sorted((Path(__file__).resolve().parents[2] / "training" / "recipes").glob("*.yaml"))
TINY_RECIPE = """
recipe_name: tiny-test
pool: sim
pool_size: 3
mixture: math=3,mmlu=3,rlpr=2
substitute: rlpr=math
few_shot: none
max_concurrency: 4
dtype: float32
use_cpu: true
seed: 0
max_steps: 2
per_device_train_batch_size: 4
num_generations: 2
max_completion_length: 8
learning_rate: 1.0e-3
beta: 0.0
logging_steps: 1
save_strategy: steps
save_steps: 2
report_to: none
"""


def data_args(files: dict[str, str]) -> list[str]:
    return [a for k, v in files.items() for a in (f"--{k}", v)]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny")
    recipe = root / "tiny.yaml"
    recipe.write_text(TINY_RECIPE)
    return {"model": tiny_model(root / "model"), "recipe": str(recipe), "files": data_files(root), "root": root}


def run(tiny, out: Path, *extra: str) -> dict:
    return main([tiny["recipe"], "--model_name_or_path", tiny["model"], "--output_dir", str(out),
                 *data_args(tiny["files"]), *extra])  # fmt: skip


@pytest.mark.slow
def test_two_grpo_steps_then_resume(tiny):
    out = tiny["root"] / "run"
    info = run(tiny, out)
    assert info["global_step"] == 2 and info["simulated"] is True
    metrics = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    steps = [m for m in metrics if "reward" in m]
    assert [m["step"] for m in steps] == [1, 2]
    assert all(0.0 <= m["reward"] <= 1.0 for m in steps)
    rollouts = [json.loads(line) for line in (out / "rollouts.jsonl").read_text().splitlines()]
    assert len(rollouts) == 2 * 4  # 2 steps x (2 prompts x 2 generations)
    for r in rollouts:
        assert r["reward"] in (0.0, 0.5, 1.0) and len(r["pool_indices"]) == 3
        assert r["parsed"] or r["rejection"]  # an unparseable rollout names its reason
    checkpoint = out / "checkpoint-2"
    assert (checkpoint / "optimizer.pt").is_file() and (checkpoint / "trainer_state.json").is_file()
    saved = json.loads((out / "tokenizer_config.json").read_text())
    assert (out / "chat_template.jinja").is_file() or saved.get("chat_template")
    assert (out / "model.safetensors").is_file()

    evaluate_saved_model(out)

    resumed = run(tiny, out, "--max_steps", "3", "--resume_from_checkpoint", str(checkpoint))
    assert resumed["global_step"] == 3
    state = json.loads((out / "checkpoint-3" / "trainer_state.json").read_text())
    assert [h["step"] for h in state["log_history"] if "reward" in h] == [1, 2, 3]  # continued, not restarted

    again = run(tiny, out, "--max_steps", "3", "--resume_from_checkpoint", str(checkpoint))  # step 3 re-run
    assert again["superseded"]["checkpoint_step"] == 2 and again["superseded"]["rollout_rows"] == 4
    rows = [json.loads(line) for line in (out / "rollouts.jsonl").read_text().splitlines()]
    assert sorted(r["step"] for r in rows) == [0] * 4 + [1] * 4 + [2] * 4  # the first attempt of step 3 moved aside
    assert len((out / "rollouts.jsonl.superseded").read_text().splitlines()) == 4
    assert [m["step"] for m in map(json.loads, (out / "metrics.jsonl").read_text().splitlines()) if "reward" in m] == [
        1, 2, 3]  # fmt: skip


@pytest.mark.slow
def test_the_heap_is_trimmed_before_every_steps_generation(tiny, monkeypatch):
    import training.allocator

    calls = []
    monkeypatch.setattr(training.allocator, "trim_before_generation", lambda: calls.append(1) or True)
    generate = []
    monkeypatch.setattr("trl.GRPOTrainer._generate_single_turn", record_order(generate, calls))
    info = run(tiny, tiny["root"] / "trimmed", "--save_strategy", "no", "--trim_heap_each_step", "true")
    assert info["global_step"] == 2 and len(calls) == 2
    assert generate == [1, 2]  # each step's generation after that step's trim


def record_order(generations: list, trims: list):  # noqa: ANN201 - wraps TRL's generation method
    """TRL's generation method, noting how many trims came before each call."""
    from trl import GRPOTrainer

    original = GRPOTrainer._generate_single_turn

    def generate(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        generations.append(len(trims))
        return original(self, *args, **kwargs)

    return generate


def evaluate_saved_model(out: Path) -> None:
    """The saved dir is a conductor Inspect's hf provider runs as is (one GSM8K sample)."""
    from inspect_ai import eval as inspect_eval

    from solvers.conductor import conductor
    from tasks.gsm8k import gsm8k

    fixture = Path(__file__).parents[1] / "fixtures" / "gsm8k.jsonl"
    [log] = inspect_eval(
        gsm8k(data_file=str(fixture)),
        solver=conductor(pool="sim", max_tokens=8, temperature=1.0),
        model_roles={"conductor": f"hf/{out}"},
        limit=1,
        display="none",
        log_dir=None,
    )
    assert log.status == "success", log.error
    meta = log.samples[0].metadata["conductor"]
    assert meta["conductor_calls"] == 1 and (meta["parsed"] or meta["rejection"])


@pytest.mark.parametrize("recipe", RECIPES, ids=[r.stem for r in RECIPES])
def test_recipe_dry_run(recipe, tmp_path):
    """Parsed, pool resolved, dataset built (offline fixtures in the sources' formats),
    trainer arguments constructed; no weights loaded."""
    files = data_files(tmp_path, n_math=800, n_mmlu=500)
    info = main([str(recipe), "--dry_run", "true", "--output_dir", str(tmp_path / "out"), *data_args(files)])
    assert info["dry_run"] and info["recipe"] == recipe.stem
    assert info["rows"] == sum(info["data"]["mixture"].values())
    assert info["generations_per_step"] % info["num_generations"] == 0
    assert info["data"]["pool_workers"]


@pytest.mark.slow
def test_recursion_training_step(tiny):
    """One step with the policy offered as a worker and half of each group forced to recurse."""
    out = tiny["root"] / "recursion"
    info = run(tiny, out, "--max_steps", "1", "--max_depth", "1", "--recursion_share", "0.5", "--save_strategy", "no")
    assert info["global_step"] == 1
    rollouts = [json.loads(line) for line in (out / "rollouts.jsonl").read_text().splitlines()]
    assert len(rollouts) == 4 and all(0.0 <= r["reward"] <= 1.0 for r in rollouts)


def test_recursion_needs_depth(tiny, tmp_path):
    with pytest.raises(SystemExit, match="max_depth"):
        main([tiny["recipe"], "--dry_run", "true", "--recursion_share", "0.5", *data_args(tiny["files"])])


def test_unknown_recipe_key_is_refused(tiny, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(TINY_RECIPE + "zzz: 1\ncost_wieght: 0.2\n")
    with pytest.raises(SystemExit) as refused:
        main([str(bad), "--dry_run", "true", *data_args(tiny["files"])])
    assert str(refused.value) == (
        "error: train.py has no option --zzz (see train.py --help); "
        "train.py has no option --cost_wieght (did you mean --cost_weight?)"
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (["--max_stepz", "2"], "error: train.py has no option --max_stepz (did you mean --max_steps?)"),
        (["--pool", "nope"], "error: --pool nope: no pool file"),
        (["--num_generations", "3"], "error: generation_batch_size (4) must be divisible by num_generations (3)."),
    ],
)
def test_a_bad_command_line_ends_with_one_line(tiny, args, message):
    with pytest.raises(SystemExit) as refused:
        main([tiny["recipe"], "--dry_run", "true", *data_args(tiny["files"]), *args])
    assert str(refused.value).startswith(message) and "\n" not in str(refused.value)


@pytest.mark.slow
def test_interleaved_domains_give_every_step_both_domains(tiny):
    out = tiny["root"] / "balanced"
    info = run(tiny, out, "--interleave_domains", "true", "--mixture", "math=4,mmlu=4,rlpr=0")
    assert info["data"]["order"].startswith("domains interleaved")
    rollouts = [json.loads(line) for line in (out / "rollouts.jsonl").read_text().splitlines()]
    by_step: dict[int, list[str]] = {}
    for r in rollouts:
        by_step.setdefault(r["step"], []).append(r["domain"])
    assert len(by_step) == 2  # 2 steps x (1 math + 1 mmlu prompt) x 2 rollouts
    assert all(sorted(d) == ["math", "math", "mmlu", "mmlu"] for d in by_step.values())
