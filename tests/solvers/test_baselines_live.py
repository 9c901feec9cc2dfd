"""One live run of each baseline on the local GGUF pool (--limit 1, short budgets), the
solvers found by name through the project's Inspect registry, as `--solver <name>` finds them."""

import math
from pathlib import Path

import pytest
from inspect_ai import eval
from inspect_ai.solver import SolverSpec

from tasks.gsm8k import gsm8k

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "gsm8k.jsonl"
SHORT = {"max_tokens": 24}
THREE = ["local/smollm2-135m", "local/gemma3-270m", "local/smollm2-135m"]  # smoothie needs 3 voters

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    "name, args, calls",
    [
        ("single_worker", {"worker": 1}, 1),
        ("self_reflection", {"rounds": 1, "stop": "never"}, 2),
        ("consensus", {"samples": 3}, 3),
        ("mixture_of_agents", {"seed": 0}, 3),
        ("random_workflow", {"seed": 0, "max_steps": 2}, None),
    ],
)
def test_baseline_runs_on_the_local_pool(name, args, calls, tmp_path):
    log = live(name, {**args, **SHORT}, tmp_path)
    meta = log.samples[0].metadata["conductor"]
    assert meta["method"] == name and meta["workers"]
    assert meta["calls"] == (calls or meta["steps"]) and meta["output_tokens"] > 0
    assert all(s["error"] is None for s in meta["round"]["steps"]), meta["round"]["steps"]


def test_smoothie_runs_with_the_local_embedding_endpoint(tmp_path):
    log = live("smoothie", {"embeddings": "local", **SHORT}, tmp_path, model_roles={"workers": THREE})
    meta = log.samples[0].metadata["conductor"]
    selection = meta["selection"]
    assert selection["embeddings"].startswith("local:smollm2-135m")
    assert meta["calls"] == 3 and len(selection["deltas"]) == 3
    assert all(math.isfinite(d) for d in selection["deltas"])
    assert meta["round"]["answer"] == meta["round"]["steps"][selection["chosen_step"]]["output"]


def test_smoothie_runs_on_the_two_worker_local_pool_with_two_samples_each(tmp_path):
    log = live("smoothie", {"embeddings": "local", "samples_per_worker": 2, **SHORT}, tmp_path)
    meta = log.samples[0].metadata["conductor"]
    selection = meta["selection"]
    assert meta["calls"] == 4 and selection["candidates"] == [[0, 0], [0, 1], [1, 0], [1, 1]]
    assert [s["model"] for s in meta["round"]["steps"]] == ["local/smollm2-135m"] * 2 + ["local/gemma3-270m"] * 2
    assert all(math.isfinite(d) for d in selection["deltas"]) and len(selection["deltas"]) == 4


def live(name, args, tmp_path, **options):
    [log] = eval(
        gsm8k(data_file=str(FIXTURE)),
        solver=SolverSpec(name, args, args),
        limit=1,
        display="none",
        log_dir=str(tmp_path),
        **options,
    )
    assert log.status == "success", log.error
    assert log.eval.solver == name
    return log
