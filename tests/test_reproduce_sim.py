"""`nox -s reproduce_tables` without logs: the simulated pool with a scripted conductor, epochs that
give a standard error, and the cost estimate of the real pools' commands."""

from __future__ import annotations

import yaml
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.solver import generate

from scorers.inspect_scorers import numeric_match
from workers.pools import POOLS_DIR


def test_simulated_epochs_draw_afresh_and_the_first_epoch_is_unchanged():
    samples = [Sample(id=i, input=f"What is {i} + 1?", target=str(i + 1), metadata={"domain": "math"})
               for i in range(40)]  # fmt: skip
    task = Task(dataset=samples, solver=generate(), scorer=numeric_match())
    one = eval(task, model="sim/mediocre", display="none", log_format="json")[0]
    three = eval(task, model="sim/mediocre", epochs=3, display="none", log_format="json")[0]
    verdicts: dict[int, dict] = {}
    for s in three.samples:
        verdicts.setdefault(s.epoch, {})[s.id] = s.output.metadata["correct"]
    assert verdicts[1] == {s.id: s.output.metadata["correct"] for s in one.samples}  # epoch 1 as before
    assert verdicts[2] != verdicts[1] and verdicts[3] != verdicts[2]  # p = 0.5: 40 identical draws is 1e-12


def test_the_sim_scripted_pool_has_the_sim_pools_workers():
    sim, scripted = (yaml.safe_load((POOLS_DIR / f"{name}.yaml").read_text()) for name in ("sim", "sim-scripted"))
    assert scripted["workers"] == sim["workers"]
    assert scripted["conductor"]["model"] == "scripted/fixed-workflows"
