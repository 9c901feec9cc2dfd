"""Text embedding sources for label-free selection (smoothie) and routers.

An embedding source is anything with a `name` (recorded with every result) and
`embed(texts) -> list[list[float]]` (blocking; call it from a thread inside an event loop).
`embedding_source(spec)` builds one from a short spec:

    hash | hash:<dim>        deterministic hashed bag of words (offline, for tests; dim 256)
    local | local:<model>    a local GGUF (default smollm2-135m, any `local/` model name or
                             a .gguf path) served by llama.cpp (xllamacpp) with its embedding
                             endpoint, mean pooled, in this process on 127.0.0.1
    <model name>             an OpenAI-compatible `/v1/embeddings` endpoint: `base_url`, else
                             $EMBEDDINGS_BASE_URL, else $OPENAI_BASE_URL, else api.openai.com;
                             key from $EMBEDDINGS_API_KEY, else $OPENAI_API_KEY

Texts are clipped to their first MAX_TEXT_CHARS characters (an encoder truncates too).
"""

from __future__ import annotations

import atexit
import hashlib
import json
import math
import os
import re
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

MAX_TEXT_CHARS = 4000
HASH_DIM = 256
DEFAULT_LOCAL_MODEL = "smollm2-135m"
OPENAI_URL = "https://api.openai.com/v1"
_WORD = re.compile(r"[a-z0-9]+")
_LOOPBACK = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never proxy 127.0.0.1


class EmbeddingSource(Protocol):
    name: str

    def embed(self, texts: list[str]) -> list[list[float]]: ...


class EmbeddingError(RuntimeError):
    """An embedding source could not embed (endpoint down, bad reply)."""


@dataclass(frozen=True)
class HashedBagOfWords:
    """Counts of lower-cased words hashed (blake2b) into `dim` signed buckets, L2-normalised.
    Deterministic across processes; texts sharing words get similar vectors."""

    dim: int = HASH_DIM

    @property
    def name(self) -> str:
        return f"hash:{self.dim}"

    def embed(self, texts: list[str]) -> list[list[float]]:
        return [self._one(t) for t in texts]

    def _one(self, text: str) -> list[float]:
        vector = [0.0] * self.dim
        for word in _WORD.findall(text[:MAX_TEXT_CHARS].lower()):
            digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
            value = int.from_bytes(digest, "big")
            vector[value % self.dim] += 1.0 if value >> 63 else -1.0
        return normalized(vector)


@dataclass(frozen=True)
class OpenAICompatible:
    """An OpenAI-style `POST {base_url}/embeddings` endpoint (OpenAI, vLLM, llama.cpp, ...)."""

    model: str
    base_url: str
    api_key: str | None = field(default=None, repr=False)
    timeout: float = 120.0

    @property
    def name(self) -> str:
        return f"{self.model}@{self.base_url}"

    def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        body = json.dumps({"model": self.model, "input": [t[:MAX_TEXT_CHARS] or " " for t in texts]}).encode()
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(f"{self.base_url.rstrip('/')}/embeddings", body, headers)
        loopback = self.base_url.startswith(("http://127.0.0.1", "http://localhost"))
        try:
            with (_LOOPBACK if loopback else urllib.request.build_opener()).open(request, timeout=self.timeout) as r:
                reply = json.loads(r.read())
        except (urllib.error.URLError, OSError, ValueError) as error:
            raise EmbeddingError(f"embedding endpoint {self.name} failed: {error}") from error
        return parse_reply(reply, len(texts), self.name)


def parse_reply(reply: object, count: int, name: str) -> list[list[float]]:
    """The vectors of an OpenAI-style embeddings reply, in input order."""
    data = reply.get("data") if isinstance(reply, dict) else None
    if not isinstance(data, list) or len(data) != count:
        raise EmbeddingError(f"embedding endpoint {name} returned no list of {count} embeddings: {str(reply)[:200]}")
    ordered = sorted(data, key=lambda d: d.get("index", 0) if isinstance(d, dict) else 0)
    vectors = []
    for item in ordered:
        vector = item.get("embedding") if isinstance(item, dict) else None
        if not isinstance(vector, list) or not all(isinstance(x, (int, float)) for x in vector):
            raise EmbeddingError(f"embedding endpoint {name} returned a non-numeric embedding")
        vectors.append([float(x) for x in vector])
    return vectors


class LocalGGUF:
    """A local GGUF served by llama.cpp in embedding mode (mean pooling), started once per
    process and model on 127.0.0.1; requests go through its `/v1/embeddings`."""

    _servers: dict[str, object] = {}
    _lock = threading.Lock()

    def __init__(self, model: str = DEFAULT_LOCAL_MODEL, n_threads: int = 2, n_ctx: int = 2048):
        from workers.local_provider import resolve_model

        self.model, self.path, _ = resolve_model(model)
        self.n_threads, self.n_ctx = n_threads, n_ctx
        self.name = f"local:{self.model} (llama.cpp mean pooling)"

    def embed(self, texts: list[str]) -> list[list[float]]:
        url = self._start()
        return OpenAICompatible(self.model, url).embed([t[: self.n_ctx] for t in texts])

    def _start(self) -> str:
        import xllamacpp  # lazy: loads the native library

        with self._lock:
            server = self._servers.get(str(self.path))
            if server is None:
                params = xllamacpp.CommonParams()
                params.model.path = str(self.path)
                params.hostnames, params.port = ["127.0.0.1"], 0
                params.embedding = True
                params.pooling_type = xllamacpp.llama_pooling_type.LLAMA_POOLING_TYPE_MEAN
                params.n_ctx, params.n_batch, params.n_ubatch = self.n_ctx, self.n_ctx, self.n_ctx
                params.cpuparams.n_threads = params.cpuparams_batch.n_threads = self.n_threads
                params.verbosity = int(os.environ.get("CONDUCTOR_BENCH_LLAMA_VERBOSITY", 1))
                server = xllamacpp.Server(params)
                _wait_healthy(server.listening_address.rstrip("/"))
                self._servers[str(self.path)] = server
        return server.listening_address.rstrip("/") + "/v1"


@atexit.register
def _stop_servers() -> None:
    """Drop the embedding servers (the native destructor stops each) before interpreter exit."""
    with LocalGGUF._lock:
        LocalGGUF._servers.clear()


def _wait_healthy(address: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with _LOOPBACK.open(address + "/health", timeout=2) as r:
                if r.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            time.sleep(0.05)
    raise EmbeddingError(f"llama.cpp embedding server at {address} did not become healthy in {timeout:.0f} s")


def embedding_source(spec: str, base_url: str | None = None) -> EmbeddingSource:
    """The source a spec names (module docstring); ValueError naming the fix when it is bad."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"embedding source {spec!r}: expected hash[:dim], local[:model] or an embedding model name")
    spec = spec.strip()
    kind, _, arg = spec.partition(":")
    if kind == "hash":
        if arg and not (arg.isdigit() and int(arg) >= 8):
            raise ValueError(f"embedding source {spec!r}: the dimension after hash: must be an integer >= 8")
        return HashedBagOfWords(int(arg) if arg else HASH_DIM)
    if kind == "local":
        if arg and not (arg.endswith(".gguf") or "/" not in arg):
            raise ValueError(f"embedding source {spec!r}: name a local model (smollm2-135m) or a .gguf path")
        return LocalGGUF(str(Path(arg).expanduser()) if arg.endswith(".gguf") else arg or DEFAULT_LOCAL_MODEL)
    url = base_url or os.environ.get("EMBEDDINGS_BASE_URL") or os.environ.get("OPENAI_BASE_URL") or OPENAI_URL
    key = os.environ.get("EMBEDDINGS_API_KEY") or os.environ.get("OPENAI_API_KEY")
    return OpenAICompatible(spec, url, key)


def normalized(vector: list[float]) -> list[float]:
    """`vector` scaled to unit length (a zero vector stays zero)."""
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm else list(vector)
