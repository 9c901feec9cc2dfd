"""Seeded train/validation/test splits for benchmarks whose paper split is unpublished.

Items are ranked by sha256(salt + key); the first 3/5 are train, the next 1/5 validation,
the rest test. The ranking depends only on the keys (not on input order, platform or
Python version), so a split is reproducible anywhere. Pure Python.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

SPLITS = ("train", "validation", "test", "all")


def hash_split(keys: Iterable[str], salt: str) -> dict[str, str]:
    """key -> "train" | "validation" | "test" (equal keys share a split)."""
    ranked = sorted(set(keys), key=lambda k: hashlib.sha256((salt + k).encode()).hexdigest())
    n_train, n_validation = len(ranked) * 3 // 5, len(ranked) // 5
    return {
        key: "train" if i < n_train else "validation" if i < n_train + n_validation else "test"
        for i, key in enumerate(ranked)
    }


def check_split(benchmark: str, split: str) -> None:
    if split not in SPLITS:
        raise ValueError(f"{benchmark}: unknown split {split!r}; use one of {', '.join(SPLITS)}")
