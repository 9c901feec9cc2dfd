"""A random valid workflow over a pool (the sanity floor). Pure: no Inspect import.

Seeded by (seed, key): 1..max_steps steps, each run by a uniformly drawn worker; step 0 reads
nothing, every later step reads all earlier steps or none with equal chance, except that the
last step reads all earlier steps (so the answer step is never blind to the work before it).
Subtasks are filled in later (the solver gives every step the fixed "solve the question"
instruction of the no-subtasks ablation).
"""

from __future__ import annotations

import random

from solvers.workflow import Workflow

PLACEHOLDER = "Solve the question."


def random_workflow(n_workers: int, max_steps: int, seed: int, key: str) -> Workflow:
    """A reproducible random workflow for one sample (`key`: its id and epoch)."""
    if n_workers < 1 or max_steps < 1:
        raise ValueError(f"a random workflow needs workers and steps, got {n_workers} and {max_steps}")
    rng = random.Random(f"{seed}/{key}")
    steps = rng.randint(1, max_steps)
    models = tuple(rng.randrange(n_workers) for _ in range(steps))
    access: list[str | tuple[int, ...]] = [()]
    for i in range(1, steps):
        access.append("all" if i == steps - 1 or rng.random() < 0.5 else ())
    return Workflow(models, (PLACEHOLDER,) * steps, tuple(access))
