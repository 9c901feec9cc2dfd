"""Query features for the routers: an embedding source named in the router file.

RouterDC and MASRouter embed queries with pretrained encoders (mDeBERTa, a sentence
encoder) that are unavailable offline. The default source here is `hashed_ngrams`: word
unigrams and bigrams hashed (blake2b, signed) into `dim` buckets, log counts, L2-normalised;
deterministic on every machine, no download. `{"kind": "embeddings", "spec": ...}` uses any
source of `workers.embeddings` instead (`local` for the local GGUF through llama.cpp's
embedding endpoint, or an embedding model name). A router saves its source, so the solver
embeds test questions exactly as training did.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

MAX_CHARS = 8000  # inputs are clipped before tokenising (bounded time)
DEFAULT_SOURCE = {"kind": "hashed_ngrams", "dim": 512}
_TOKEN = re.compile(r"[a-z0-9]+|[^\sa-z0-9]")  # one class per alternative, no nesting: linear


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text[:MAX_CHARS].lower())


def _bucket(token: str, dim: int) -> tuple[int, float]:
    digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return value % dim, 1.0 if (value >> 63) & 1 else -1.0


def hashed_ngrams(texts: Sequence[str], dim: int) -> np.ndarray:
    """One L2-normalised row per text (a text without tokens is the zero row)."""
    out = np.zeros((len(texts), dim))
    for row, text in enumerate(texts):
        words = tokens(text)
        grams = words + [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)]
        counts: dict[int, float] = {}
        for gram in grams:
            index, sign = _bucket(gram, dim)
            counts[index] = counts.get(index, 0.0) + sign
        for index, count in counts.items():
            out[row, index] = np.sign(count) * np.log1p(abs(count))
        norm = np.linalg.norm(out[row])
        if norm > 0:
            out[row] /= norm
    return out


def featurize(texts: Sequence[str], source: dict | None = None) -> np.ndarray:
    """Feature rows for `texts` from the embedding source `source` (default: hashed n-grams)."""
    source = source or DEFAULT_SOURCE
    kind = source.get("kind")
    if kind == "hashed_ngrams":
        dim = source.get("dim")
        if not isinstance(dim, int) or dim < 8:
            raise ValueError(f"hashed_ngrams source needs an integer dim >= 8, got {dim!r}")
        return hashed_ngrams(texts, dim)
    if kind == "embeddings":
        from workers.embeddings import embedding_source

        rows = embedding_source(str(source.get("spec"))).embed(list(texts))
        return np.array(rows, dtype=float).reshape(len(texts), -1)
    raise ValueError(f"unknown embedding source {kind!r} in the router file; known: hashed_ngrams, embeddings")


def source_from_option(value: str | None) -> dict:
    """A router's embedding source from the `--embeddings` option (None: hashed n-grams)."""
    if value is None or value in ("hashed_ngrams", "ngrams"):
        return dict(DEFAULT_SOURCE)
    return {"kind": "embeddings", "spec": value}
