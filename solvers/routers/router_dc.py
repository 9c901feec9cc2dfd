"""RouterDC (Chen et al., NeurIPS 2024): a query encoder and one learnable embedding per
worker, trained with two contrastive losses from per-worker accuracy.

- sample-LLM loss: for each of a query's `top_k` best workers (skipped when its score is
  0), a softmax over that worker and the `last_k` worst workers (a worst worker scoring
  above 0.5 is left out) pulls the query towards the good worker;
- sample-sample loss: queries are clustered (k-means over their features); each query is
  pulled towards a query of its own cluster against `negatives` from other clusters.
Scores are cosine similarities (divided by `temperature` for the sample-LLM loss). The
router sends a query to the worker of highest similarity. Model selection: the step of
lowest sample-LLM loss on the validation split (the paper: best validation loss).

Simplified against the original: the encoder is a fixed embedding (see `features`) plus a
trainable linear head (the original fine-tunes mDeBERTa-v3-base); a positive worker is
never also one of its own negatives. Pure numpy.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from solvers.routers.nn import Adam, kmeans, normalize_backward, normalize_rows, softmax

KIND = "router_dc"


@dataclass(frozen=True)
class DCConfig:
    hidden: int = 32
    temperature: float = 1.0
    top_k: int = 3
    last_k: int = 3
    sample_weight: float = 1.0
    clusters: int = 5
    negatives: int = 3
    steps: int = 400
    batch_size: int = 64
    lr: float = 0.01
    eval_every: int = 10
    seed: int = 0


@dataclass
class RouterDC:
    """A trained RouterDC: `route(features)` -> worker index per row."""

    params: dict[str, np.ndarray]
    workers: list[str]
    source: dict
    temperature: float = 1.0
    info: dict = field(default_factory=dict)

    def similarities(self, x: np.ndarray) -> np.ndarray:
        q, _ = normalize_rows(x @ self.params["W"] + self.params["b"])
        e, _ = normalize_rows(self.params["E"])
        return q @ e.T

    def route(self, x: np.ndarray) -> np.ndarray:
        return np.argmax(self.similarities(x), axis=1)

    def to_dict(self) -> dict:
        return {
            "kind": KIND,
            "version": 1,
            "workers": self.workers,
            "source": self.source,
            "temperature": self.temperature,
            "params": {k: v.tolist() for k, v in self.params.items()},
            "info": self.info,
        }

    @classmethod
    def from_dict(cls, data: dict) -> RouterDC:
        if data.get("kind") != KIND:
            raise ValueError(f"not a {KIND} router file (kind={data.get('kind')!r}); train one with "
                             "`python -m solvers.routers.train router_dc ...`")  # fmt: skip
        params = {k: np.array(v, dtype=float) for k, v in data["params"].items()}
        return cls(
            params, list(data["workers"]), dict(data["source"]), float(data["temperature"]), data.get("info", {})
        )


def save(router: RouterDC, path: str | Path) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(router.to_dict()))


def sample_llm_terms(scores: np.ndarray, top_k: int, last_k: int) -> list[list[tuple[int, list[int]]]]:
    """Per query, its (positive worker, negative workers) contrast sets."""
    k = scores.shape[1]
    out = []
    for row in scores:
        order = np.argsort(-row, kind="stable")[: min(top_k, k)]
        worst = np.argsort(row, kind="stable")[: min(last_k, k)]
        terms = []
        for p in order:
            if row[p] <= 0:
                continue
            negatives = [int(n) for n in worst if n != p and row[n] <= 0.5]
            if negatives:
                terms.append((int(p), negatives))
        out.append(terms)
    return out


def sample_llm_loss(s: np.ndarray, terms: list, temperature: float) -> tuple[float, np.ndarray]:
    """Mean over queries of the summed contrast losses, and dL/d(similarity)."""
    n = len(terms)
    loss, grad = 0.0, np.zeros_like(s)
    for i, query_terms in enumerate(terms):
        for p, negatives in query_terms:
            cols = [p, *negatives]
            probs = softmax(s[i, cols] / temperature)
            loss -= np.log(probs[0] + 1e-12) / n
            delta = probs.copy()
            delta[0] -= 1.0
            np.add.at(grad[i], cols, delta / (temperature * n))
    return loss, grad


def sample_sample_loss(q: np.ndarray, labels: np.ndarray, negatives: int, rng: np.random.Generator):
    """RouterDC's cluster contrast over the normalised query embeddings `q`."""
    n = len(q)
    loss, grad, used = 0.0, np.zeros_like(q), 0
    triples = []
    for i in range(n):
        same = np.flatnonzero(labels == labels[i])
        others = np.flatnonzero(labels != labels[i])
        if len(others) < negatives:
            continue
        candidates = same[same != i] if len(same) > 1 else same
        cols = [int(rng.choice(candidates)), *rng.choice(others, negatives, replace=False).tolist()]
        triples.append((i, cols))
    for i, cols in triples:
        z = q[cols] @ q[i]
        probs = softmax(z)
        loss -= np.log(probs[0] + 1e-12)
        delta = probs.copy()
        delta[0] -= 1.0
        grad[i] += delta @ q[cols]
        np.add.at(grad, cols, delta[:, None] * q[i][None, :])
        used += 1
    if used:
        loss, grad = loss / used, grad / used
    return loss, grad


def loss_and_grads(params, x, terms, labels, config: DCConfig, rng) -> tuple[float, dict]:
    u = x @ params["W"] + params["b"]
    q, q_norms = normalize_rows(u)
    e, e_norms = normalize_rows(params["E"])
    s = q @ e.T
    loss, ds = sample_llm_loss(s, terms, config.temperature)
    dq, de = ds @ e, ds.T @ q
    if config.sample_weight and labels is not None:
        extra, dq_extra = sample_sample_loss(q, labels, config.negatives, rng)
        loss += config.sample_weight * extra
        dq = dq + config.sample_weight * dq_extra
    du = normalize_backward(q, q_norms, dq)
    return loss, {"W": x.T @ du, "b": du.sum(0), "E": normalize_backward(e, e_norms, de)}


def routed_accuracy(router: RouterDC, x: np.ndarray, scores: np.ndarray) -> float:
    """Mean accuracy of the chosen worker (over its recorded runs)."""
    if not len(x):
        return float("nan")
    return float(scores[np.arange(len(x)), router.route(x)].mean())


def train(
    x: np.ndarray,
    scores: np.ndarray,
    x_val: np.ndarray,
    scores_val: np.ndarray,
    workers: list[str],
    source: dict,
    config: DCConfig = DCConfig(),
) -> RouterDC:
    """Train on (features, per-worker accuracy) rows; keep the parameters of lowest
    validation sample-LLM loss."""
    if len(x) == 0 or len(x_val) == 0:
        raise ValueError("RouterDC needs training and validation items with outcomes for every worker")
    rng = np.random.default_rng(config.seed)
    d, k = x.shape[1], scores.shape[1]
    params = {
        "W": rng.normal(0, 1 / np.sqrt(d), (d, config.hidden)),
        "b": np.zeros(config.hidden),
        "E": rng.normal(0, 0.78, (k, config.hidden)),
    }
    labels = kmeans(x, config.clusters, config.seed)
    terms, val_terms = (sample_llm_terms(s, config.top_k, config.last_k) for s in (scores, scores_val))
    optimizer = Adam(params, config.lr)
    router = RouterDC(params, workers, source, config.temperature)

    def val_loss() -> float:
        return loss_and_grads(params, x_val, val_terms, None, DCConfig(**{**asdict(config), "sample_weight": 0}), rng)[
            0
        ]

    best = (val_loss(), 0, {k: v.copy() for k, v in params.items()})
    history = []
    for step in range(1, config.steps + 1):
        batch = rng.choice(len(x), min(config.batch_size, len(x)), replace=False)
        loss, grads = loss_and_grads(params, x[batch], [terms[i] for i in batch], labels[batch], config, rng)
        optimizer.step(grads)
        if step % config.eval_every == 0 or step == config.steps:
            current = val_loss()
            history.append({"step": step, "train_loss": round(float(loss), 5), "val_loss": round(float(current), 5),
                            "val_accuracy": round(routed_accuracy(router, x_val, scores_val), 4)})  # fmt: skip
            if current < best[0]:
                best = (current, step, {k: v.copy() for k, v in params.items()})
    router.params = best[2]
    router.info = {
        "config": asdict(config),
        "best_step": best[1],
        "val_loss": float(best[0]),
        "train_accuracy": routed_accuracy(router, x, scores),
        "val_accuracy": routed_accuracy(router, x_val, scores_val),
        "val_oracle_accuracy": float(scores_val.max(1).mean()),
        "val_worker_accuracy": scores_val.mean(0).round(4).tolist(),
        "history": history,
    }
    return router
