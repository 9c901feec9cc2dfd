"""Smoothie (Guha et al., 2024): label-free choice among several models' outputs by embedding
agreement. Pure Python: no Inspect import.

Each model's output embedding is a noisy vote for an unknown true embedding. The triplet
method estimates each model's squared distance to the truth from the distances between
outputs: for voters i, j, k, E|l_i - y|^2 = (d_ij + d_ik - d_jk) / 2 with d the mean (over the
fitted samples) squared distance; the estimate for i is the mean over all pairs (j, k) of other
voters. The weights are theta_i = dim / (2 * delta_i), normalised; the output of the voter with
the largest weight is chosen. "dependent" (Smoothie-Local with one neighbour, as the authors'
runs) fits on the question's own outputs; "independent" (Smoothie-Global) fits one set of
weights over many questions. Where an estimate is not positive (weights undefined) the
voter with the smallest estimate is chosen, which equals the largest weight whenever all
estimates are positive; a tie goes to the lowest index.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

Vector = Sequence[float]
MODES = ("dependent", "independent")
MIN_VOTERS = 3  # the triplet method needs two other voters


@dataclass(frozen=True)
class Fit:
    deltas: list[float]  # estimated mean squared distance of each voter to the truth
    weights: list[float] | None  # normalised theta; None when some estimate is not positive
    chosen: int
    samples: int  # questions the fit used


def squared_distance(a: Vector, b: Vector) -> float:
    return sum((x - y) ** 2 for x, y in zip(a, b, strict=True))


def fit(samples: Sequence[Sequence[Vector]]) -> Fit:
    """Fit on `samples[question][voter]` embeddings (equal voters and dimension throughout)."""
    if not samples:
        raise ValueError("smoothie needs at least one question's outputs to fit")
    voters = len(samples[0])
    if voters < MIN_VOTERS or any(len(s) != voters for s in samples):
        raise ValueError(f"smoothie needs the same {MIN_VOTERS}+ voters in every question, got {voters}")
    dim = len(samples[0][0])
    distance = [[0.0] * voters for _ in range(voters)]
    for i, j in combinations(range(voters), 2):
        mean = sum(squared_distance(s[i], s[j]) for s in samples) / len(samples)
        distance[i][j] = distance[j][i] = mean
    deltas = []
    for i in range(voters):
        others = [v for v in range(voters) if v != i]
        pairs = list(combinations(others, 2))
        deltas.append(sum(distance[i][j] + distance[i][k] - distance[j][k] for j, k in pairs) / (2 * len(pairs)))
    weights = None
    if all(d > 0 for d in deltas):
        theta = [dim / (2 * d) for d in deltas]
        weights = [t / sum(theta) for t in theta]
    chosen = min(range(voters), key=lambda v: (deltas[v], v))
    return Fit(deltas, weights, chosen, len(samples))
