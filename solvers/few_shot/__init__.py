"""Few-shot example workflows shown to the conductor, stored as JSON data files.

Sets (`-S few_shot=`): `ood` (default; the paper's best, Table 4), `in_distribution`,
`mixed` (half of each), `legacy` (the project's earlier examples; needs access=indices) and
`none`. Each example: a question, a reasoning paragraph and the three lists in the paper's
format, with its provenance. Worker ids in the files span 0..6 (the paper's 7-worker pool);
for a pool of k < 7 workers each id is shown modulo k, so every example stays a valid
workflow for the pool in use. Pure Python: no Inspect import.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

HERE = Path(__file__).parent
FEW_SHOT_SETS = ("ood", "in_distribution", "mixed", "legacy", "none")


@dataclass(frozen=True)
class Example:
    id: str
    question: str
    reasoning: str
    model_id: tuple[int, ...]
    subtasks: tuple[str, ...]
    access_list: tuple[object, ...]
    provenance: str

    def for_pool(self, n_workers: int) -> Example:
        """The example with worker ids shown modulo the pool size."""
        ids = tuple(i % n_workers for i in self.model_id)
        return Example(self.id, self.question, self.reasoning, ids, self.subtasks, self.access_list, self.provenance)

    def render(self) -> str:
        return (
            f"Question: {self.question}\n"
            f"Response: {self.reasoning}\n"
            f"model_id = {json.dumps(list(self.model_id))}\n"
            f"subtasks = {json.dumps(list(self.subtasks), ensure_ascii=False)}\n"
            f"access_list = {json.dumps(list(self.access_list))}"
        )


def set_access(name: str) -> str | None:
    """The access scheme a set requires ("indices" for legacy), or None for any."""
    return None if name == "none" else _read(name).get("access")


@cache
def load_examples(name: str) -> tuple[Example, ...]:
    """The examples of a few-shot set (empty for "none")."""
    if name not in FEW_SHOT_SETS:
        raise ValueError(f"unknown few-shot set {name!r}; choose one of {', '.join(FEW_SHOT_SETS)}")
    if name == "none":
        return ()
    return tuple(_resolve(entry) for entry in _read(name)["examples"])


def render_examples(name: str, n_workers: int) -> str:
    """The examples as the conductor sees them, ids fitted to a pool of `n_workers`."""
    return "\n\n".join(
        f"Example {i + 1}.\n{example.for_pool(n_workers).render()}" for i, example in enumerate(load_examples(name))
    )


@cache
def _read(name: str) -> dict:
    return json.loads((HERE / f"{name}.json").read_text(encoding="utf-8"))


def _resolve(entry: dict) -> Example:
    if "ref" in entry:
        set_name, example_id = entry["ref"].split("/", 1)
        [example] = [e for e in load_examples(set_name) if e.id == example_id]
        return example
    return Example(
        id=entry["id"],
        question=entry["question"],
        reasoning=entry["reasoning"],
        model_id=tuple(entry["model_id"]),
        subtasks=tuple(entry["subtasks"]),
        access_list=tuple(entry["access_list"]),
        provenance=entry["provenance"],
    )
