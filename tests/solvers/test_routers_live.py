"""Live runs of the router solvers on the local GGUF pool (--limit 1, short budgets):
router_dc trained on the local pool by its training command, mas_router with a cascade
saved for the local pool's workers."""

from pathlib import Path

import pytest
from inspect_ai import eval
from inspect_ai.dataset import Sample
from inspect_ai.solver import SolverSpec

from solvers.routers import mas_router as mas
from solvers.routers import train
from solvers.routers.features import DEFAULT_SOURCE
from tasks.catalog import Benchmark
from tasks.gsm8k import gsm8k
from tasks.prompts import numeric_prompt

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "gsm8k.jsonl"
LOCAL = ["local/smollm2-135m", "local/gemma3-270m"]

pytestmark = pytest.mark.slow


def arithmetic(split: str) -> list[Sample]:
    numbers = (3, 4) if split == "train" else (7,)
    return [Sample(id=f"{split}{n}", input=numeric_prompt(f"What is {n} + {n}?"), target=str(2 * n),
                   metadata={"question": f"What is {n} + {n}?"}) for n in numbers]  # fmt: skip


def live(name: str, router_file: Path, tmp_path: Path):
    args = {"router_file": str(router_file), "max_tokens": 24}
    [log] = eval(gsm8k(data_file=str(FIXTURE)), solver=SolverSpec(name, args, args), limit=1, display="none",
                 log_dir=str(tmp_path / "logs"))  # fmt: skip
    assert log.status == "success", log.error
    meta = log.samples[0].metadata["conductor"]
    assert meta["method"] == name and meta["workers"] and meta["output_tokens"] > 0
    assert all(s["error"] is None for s in meta["round"]["steps"]), meta["round"]["steps"]
    return meta


def test_router_dc_trains_and_runs_on_the_local_pool(tmp_path, monkeypatch, declare):
    monkeypatch.setenv("CONDUCTOR_BENCH_CACHE", str(tmp_path / "cache"))
    declare(Benchmark("arithmetic", "arithmetic", domain="math", answer="numeric", router_samples=arithmetic))
    out = tmp_path / "dc.json"
    summary = train.main(["router_dc", "--pool", "local", "--task", "arithmetic", "--train-items", "2",
                          "--val-items", "1", "--runs", "1", "--steps", "5", "--out", str(out)])  # fmt: skip
    assert summary["outcomes"]["ran"] == 6 and summary["train_items"] == 2
    meta = live("router_dc", out, tmp_path)
    assert meta["calls"] == 1 and meta["router"]["choice"] in (0, 1)


def test_mas_router_runs_its_plan_on_the_local_pool(tmp_path):
    router = mas.MASRouter.init(DEFAULT_SOURCE["dim"], LOCAL, dict(DEFAULT_SOURCE), max_agents=2)
    router.params["mode"][-1, mas.MODES.index("chain")] = 50.0  # a two-agent chain
    mas.save(router, tmp_path / "mas.json")
    meta = live("mas_router", tmp_path / "mas.json", tmp_path)
    assert meta["router"]["plan"]["mode"] == "chain" and meta["calls"] == 2
