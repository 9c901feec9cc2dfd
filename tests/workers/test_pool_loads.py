"""A pool is read once per eval: the option check, the prices, the eval header and every sample
share one `PoolSpec` (workers/pools.py `load_pool`, keyed by the file's resolved path, mtime and
size), and no other pool file is read when every model the eval names is in its pool."""

from __future__ import annotations

import contextlib
from collections import Counter
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.solver import SolverSpec

from workers import pools

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def reads(monkeypatch) -> Counter:
    """Pool files read (by file name) from now on, with nothing cached."""
    counted: Counter = Counter()
    read = pools._read_yaml

    def counting(path: Path):
        counted[path.name] += 1
        return read(path)

    monkeypatch.setattr(pools, "_read_yaml", counting)
    monkeypatch.setattr(pools, "_LOADED", {})
    pools.known_prices.cache_clear()
    return counted


def conductor_spec(pool: str) -> SolverSpec:
    """`--solver conductor -S pool=<pool>`: Inspect builds the solver inside the eval."""
    return SolverSpec("conductor", {"pool": pool}, {"pool": pool})


def run(tmp_path, pool: str, samples: int) -> None:
    """An offline eval as the command line builds it (the solver made inside the eval): the
    scripted conductor and simulated workers of `pool`."""
    with contextlib.chdir(ROOT):
        [log] = inspect_eval("tasks/gpqa.py", solver=conductor_spec(pool), limit=samples,
                             display="none", log_dir=str(tmp_path))  # fmt: skip
    assert log.status == "success", log.error
    assert log.eval.metadata["pool"] == Path(pool).stem and len(log.samples) == samples  # the header's pool


def test_an_eval_reads_its_pool_file_once_whatever_its_size(tmp_path, reads):
    run(tmp_path / "1", "sim-scripted", samples=1)
    assert reads == {"sim-scripted.yaml": 1}
    run(tmp_path / "3", "sim-scripted", samples=3)  # the same file, unchanged: not read again
    assert reads == {"sim-scripted.yaml": 1}


def test_every_spelling_of_a_pool_is_one_object_until_its_file_changes(tmp_path, reads):
    by_name = pools.load_pool("sim-scripted")
    assert pools.load_pool(str(pools.POOLS_DIR / "sim-scripted.yaml")) is by_name
    copy = tmp_path / "mine.yaml"
    copy.write_text((pools.POOLS_DIR / "sim-scripted.yaml").read_text())
    run(tmp_path / "logs", str(copy), samples=2)
    first = pools.load_pool(str(copy))
    assert reads == {"sim-scripted.yaml": 1, "mine.yaml": 1}
    copy.write_text(copy.read_text().replace("name: sim-scripted", "name: mine"))  # a new size, whatever the clock
    assert pools.load_pool(str(copy)) is not first and pools.load_pool(str(copy)).name == "mine"
    assert reads["mine.yaml"] == 2


def test_a_model_named_outside_the_pool_is_priced_from_the_bundled_pools(tmp_path, reads):
    """The bundled pools are read only to price a model the eval names outside its pool."""
    with contextlib.chdir(ROOT):
        [log] = inspect_eval("tasks/gpqa.py", solver=conductor_spec("sim"), limit=1,
                             model_roles={"conductor": "scripted/fixed-workflows"}, display="none",
                             log_dir=str(tmp_path))  # fmt: skip
    assert log.status == "success", log.error
    assert reads["sim.yaml"] == 1 and reads["sim-scripted.yaml"] == 1  # the bundled pool that prices it
    assert log.samples[0].metadata["conductor"]["conductor"] == "scripted/fixed-workflows"
