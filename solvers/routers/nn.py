"""Small numpy pieces shared by the routers: Adam, row normalisation with its backward
pass, softmax, seeded k-means."""

from __future__ import annotations

import numpy as np

EPS = 1e-9


def normalize_rows(u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(u / |u| per row, the norms)."""
    norms = np.linalg.norm(u, axis=-1, keepdims=True) + EPS
    return u / norms, norms


def normalize_backward(v: np.ndarray, norms: np.ndarray, dv: np.ndarray) -> np.ndarray:
    """Gradient through v = u / |u| (row-wise), given dL/dv."""
    return (dv - v * np.sum(v * dv, axis=-1, keepdims=True)) / norms


def softmax(z: np.ndarray) -> np.ndarray:
    z = z - np.max(z, axis=-1, keepdims=True)
    e = np.exp(z)
    return e / np.sum(e, axis=-1, keepdims=True)


class Adam:
    """Adam over a dict of arrays (updated in place)."""

    def __init__(self, params: dict[str, np.ndarray], lr: float, betas=(0.9, 0.999)) -> None:
        self.params, self.lr, self.betas, self.t = params, lr, betas, 0
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}

    def step(self, grads: dict[str, np.ndarray]) -> None:
        self.t += 1
        b1, b2 = self.betas
        for name, grad in grads.items():
            self.m[name] = b1 * self.m[name] + (1 - b1) * grad
            self.v[name] = b2 * self.v[name] + (1 - b2) * grad**2
            m_hat = self.m[name] / (1 - b1**self.t)
            v_hat = self.v[name] / (1 - b2**self.t)
            self.params[name] -= self.lr * m_hat / (np.sqrt(v_hat) + 1e-8)


def kmeans(x: np.ndarray, k: int, seed: int = 0, iterations: int = 25) -> np.ndarray:
    """Cluster labels of the rows of `x` (seeded Lloyd's algorithm, k-means++ start)."""
    n = len(x)
    k = max(1, min(k, n))
    rng = np.random.default_rng(seed)
    centers = [x[rng.integers(n)]]
    for _ in range(1, k):
        d2 = np.min([np.sum((x - c) ** 2, axis=1) for c in centers], axis=0)
        total = d2.sum()
        centers.append(x[rng.choice(n, p=d2 / total)] if total > 0 else x[rng.integers(n)])
    c = np.array(centers)
    labels = np.zeros(n, dtype=int)
    for _ in range(iterations):
        labels = np.argmin(((x[:, None, :] - c[None]) ** 2).sum(-1), axis=1)
        for j in range(k):
            if np.any(labels == j):
                c[j] = x[labels == j].mean(0)
    return labels
