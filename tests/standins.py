"""Loopback stand-ins of the OpenAI, Anthropic, Google (Gemini) and vLLM HTTP APIs.

One stdlib `ThreadingHTTPServer` on 127.0.0.1 (random port) serves all four under a path
prefix each: `/openai/v1` (chat completions and the Responses API), `/anthropic/v1/messages`
(JSON, or SSE when the request streams), `/google/<version>/models/<m>:generateContent`
(and `:streamGenerateContent`), `/vllm/v1` (`GET /models`, chat completions). The real
SDKs (as Inspect calls them) are pointed here by `env()`, with dummy keys.

Every request is recorded (`requests`, a `Request` with the parsed body and what was
returned). Each request is checked against the rules the real API documents (sources in
the comments under "documented limits"); a breach is answered with that API's error shape
and HTTP status, so a pool setting a real API would refuse fails here too. `script()` makes
the next requests of a provider fail: an HTTP status (429 and 5xx carry a short retry-after,
so the SDKs' own retries stay fast) or a stall (the handler sleeps, bounded by `MAX_STALL`,
and wakes at `close()`). Replies are deterministic: text `ANSWER: 42 (reply <n>)` (`n` = the
request's index) and usage computed from the request.

Tests use the `standins` fixture (import it from this module): one server per process,
reset for each test, its URLs and dummy keys in the environment.
"""

from __future__ import annotations

import atexit
import json
import re
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

PROVIDERS = ("openai", "anthropic", "google", "vllm")
MAX_BODY = 4_000_000  # bytes: a larger request is refused (413)
MAX_STALL = 20.0  # seconds: the longest a stalled reply waits
REPLY = "ANSWER: 42 (reply {n})"
THOUGHT = "thinking about it"

# --- documented limits -------------------------------------------------------------
# OpenAI: GPT-5 has a 128,000 max output tokens (platform.openai.com/docs/models/gpt-5);
# reasoning models accept only the default temperature/top_p: a 400 "Unsupported value:
# 'temperature' does not support 0.2 with this model. Only the default (1) value is
# supported." (type invalid_request_error, param temperature, code unsupported_value);
# reasoning.effort is minimal|low|medium|high for GPT-5
# (platform.openai.com/docs/api-reference/responses/create).
OPENAI_MAX_OUTPUT = {"gpt-5": 128_000}
OPENAI_EFFORTS = ("minimal", "low", "medium", "high")
# Anthropic: Claude Sonnet 4 has a 64,000 max output (docs.anthropic.com/en/docs/about-claude/
# models/overview); thinking.budget_tokens "Must be >=1024 and less than max_tokens"
# (Messages API reference, extended thinking); API version 2026-10-21 (anthropic SDK >= 2.0,
# `anthropic._constants.ANTHROPIC_API_VERSION`) rejects temperature, top_p and top_k on every
# model (Inspect 0.3.285's anthropic provider drops them for that reason).
ANTHROPIC_MAX_OUTPUT = {"claude-sonnet-4-20250514": 64_000}
ANTHROPIC_MIN_BUDGET = 1024
ANTHROPIC_NO_SAMPLING_VERSION = "2026-10-21"
# Google: Gemini 2.5 Pro's thinkingBudget ranges 128..32768 and thinking cannot be turned
# off (0 is refused) (ai.google.dev/gemini-api/docs/thinking#set-budget); its output limit is
# 65,536 tokens (ai.google.dev/gemini-api/docs/models#gemini-2.5-pro); temperature 0..2.
GEMINI_BUDGET = {"gemini-2.5-pro": (128, 32_768)}
GEMINI_MAX_OUTPUT = {"gemini-2.5-pro": 65_536}
# vLLM: a request for a model the server does not serve is a 404 "The model `x` does not
# exist."; prompt + max_tokens must fit max_model_len (400); top_k is -1 (off) or >= 1;
# presence_penalty -2..2 (docs.vllm.ai, OpenAI-compatible server, SamplingParams).
VLLM_MAX_MODEL_LEN = 40_960
VLLM_MODELS = ("deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", "google/gemma-3-27b-it", "Qwen/Qwen3-32B")


class Refused(Exception):
    """A request the real API would refuse: HTTP status and message."""

    def __init__(self, status: int, message: str, param: str | None = None, kind: str = "invalid_request_error",
                 code: str | None = None):  # fmt: skip
        super().__init__(message)
        self.status, self.message, self.param, self.kind, self.code = status, message, param, kind, code


@dataclass(frozen=True)
class Fault:
    """What to do to one request instead of answering it: an HTTP `status`, or a `stall`. With
    `echo` the error's message quotes the credentials the request carried (a careless gateway);
    `code` is the error's code (OpenAI's `context_length_exceeded`: Inspect answers with a refusal)."""

    status: int | None = None
    stall: float = 0.0
    echo: bool = False
    code: str | None = None


@dataclass
class Request:
    """One request as received, and what the stand-in sent back."""

    index: int
    provider: str
    method: str
    path: str
    body: dict[str, Any]
    headers: dict[str, str]
    status: int = 200
    usage: tuple[int, int] | None = None  # (input, output) tokens returned
    text: str = ""

    @property
    def model(self) -> str:
        """The model named by the request (body, or Gemini's URL)."""
        if self.provider == "google":
            match = re.search(r"/models/([^/:]+):", self.path)
            return match.group(1) if match else ""
        return str(self.body.get("model", ""))

    def settings(self) -> dict[str, Any]:
        """The generate settings this request carries, under Inspect's `GenerateConfig` names
        (fields of the OpenAI-compatible body that Inspect does not model go in `extra_body`)."""
        return {k: v for k, v in SETTINGS[self.provider](self.body).items() if v is not None}


@dataclass
class StandIns:
    """The running stand-ins (see the module docstring); `close()` stops them."""

    requests: list[Request] = field(default_factory=list)
    faults: dict[str, deque[Fault]] = field(default_factory=lambda: {p: deque() for p in PROVIDERS})
    always: dict[str, Fault | None] = field(default_factory=lambda: dict.fromkeys(PROVIDERS))
    lock: threading.Lock = field(default_factory=threading.Lock)
    stop: threading.Event = field(default_factory=threading.Event)
    server: ThreadingHTTPServer | None = None

    def start(self) -> StandIns:
        handler = type("Handler", (_Handler,), {"standins": self})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def close(self) -> None:
        self.stop.set()  # wakes stalled handlers
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    @property
    def url(self) -> str:
        assert self.server is not None, "start() the stand-ins first"
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def env(self) -> dict[str, str]:
        """Environment pointing Inspect's providers here, with dummy keys."""
        return {
            "OPENAI_BASE_URL": f"{self.url}/openai/v1",
            "OPENAI_API_KEY": "sk-standin",
            "ANTHROPIC_BASE_URL": f"{self.url}/anthropic",
            "ANTHROPIC_API_KEY": "sk-ant-standin",
            "GOOGLE_BASE_URL": f"{self.url}/google",
            "GOOGLE_API_KEY": "standin",
            "VLLM_BASE_URL": f"{self.url}/vllm/v1",
            "VLLM_API_KEY": "standin",
        }

    def script(self, provider: str, *faults: Fault, always: Fault | None = None) -> None:
        """Apply `faults` to the provider's next generation requests, one each; `always` to
        every later one (None: answer normally)."""
        with self.lock:
            self.faults[provider].extend(faults)
            self.always[provider] = always

    def generations(self, provider: str | None = None) -> list[Request]:
        """Generation requests (not `GET /models` nor token counts), optionally of one provider."""
        return [
            r
            for r in self.requests
            if r.method == "POST" and not r.path.endswith("/count_tokens") and provider in (None, r.provider)
        ]

    def reset(self) -> None:
        """Forget the requests and faults so far."""
        with self.lock:
            self.requests.clear()
            for provider in PROVIDERS:
                self.faults[provider].clear()
                self.always[provider] = None

    def _next_fault(self, provider: str) -> Fault | None:
        with self.lock:
            queue = self.faults[provider]
            return queue.popleft() if queue else self.always[provider]


class _Handler(BaseHTTPRequestHandler):
    standins: StandIns
    protocol_version = "HTTP/1.1"

    def log_message(self, *_: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802
        self._handle("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._handle("POST")

    def _handle(self, method: str) -> None:
        provider, _, rest = self.path.lstrip("/").partition("/")
        length = int(self.headers.get("Content-Length") or 0)
        if provider not in PROVIDERS or length > MAX_BODY:
            self._json(404 if provider not in PROVIDERS else 413, {"error": {"message": f"no route {self.path}"}})
            return
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {"_unparsed": raw[:200].decode(errors="replace")}
        stand = self.standins
        with stand.lock:
            request = Request(len(stand.requests), provider, method, "/" + rest, body, dict(self.headers))
            stand.requests.append(request)
        if method == "GET":
            self._get(request)
            return
        fault = stand._next_fault(provider)
        if fault is not None and fault.stall:
            stand.stop.wait(min(fault.stall, MAX_STALL))
            request.status = 0  # no reply
            return
        if fault is not None and fault.status:
            kind = _fault_kind(fault.status)
            message = f"stand-in fault {fault.status}" + (f": refused {_credentials(request)}" if fault.echo else "")
            self._error(request, Refused(fault.status, message, kind=kind, code=fault.code))
            return
        try:
            _check_auth(request)
            reply = ANSWERS[provider](request)
        except Refused as refused:
            self._error(request, refused)
            return
        if isinstance(reply, list):
            self._sse(reply)
        else:
            self._json(200, reply)

    def _get(self, request: Request) -> None:
        if request.provider == "vllm" and request.path.rstrip("/") == "/v1/models":
            data = [{"id": m, "object": "model", "owned_by": "vllm", "max_model_len": VLLM_MAX_MODEL_LEN}
                    for m in VLLM_MODELS]  # fmt: skip
            self._json(200, {"object": "list", "data": data})
            return
        request.status = 404
        self._json(404, {"error": {"message": f"no route GET {request.path}", "type": "not_found_error"}})

    def _error(self, request: Request, refused: Refused) -> None:
        request.status = refused.status
        headers = {"retry-after-ms": "10", "retry-after": "0.01"} if refused.status in (429, 500, 502, 503, 529) else {}
        self._json(refused.status, ERRORS[request.provider](refused), headers)

    def _json(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _sse(self, events: list[tuple[str, dict]]) -> None:
        data = "".join(f"event: {name}\ndata: {json.dumps(payload)}\n\n" for name, payload in events).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def send_json(handler: BaseHTTPRequestHandler, data: object, status: int = 200) -> None:
    """Answer a request of a plain loopback stand-in with `data` as JSON."""
    body = json.dumps(data).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def _fault_kind(status: int) -> str:
    return {429: "rate_limit_error", 529: "overloaded_error"}.get(status, "api_error")


def _credentials(request: Request) -> str:
    """Every credential-like header value of a request (a key header, any X- header but the SDKs' own)."""
    headers = {k.lower(): v for k, v in request.headers.items()}
    return ", ".join(f"{k}={v}" for k, v in headers.items() if k in ("authorization", "x-api-key", "x-goog-api-key")
                     or (k.startswith("x-") and not k.startswith(("x-stainless", "x-goog-api-client"))))  # fmt: skip


def _check_auth(request: Request) -> None:
    headers = {k.lower(): v for k, v in request.headers.items()}
    key = headers.get("authorization") or headers.get("x-api-key") or headers.get("x-goog-api-key")
    if not key:
        raise Refused(401, "missing API key", kind="authentication_error")


def _tokens(request: Request) -> int:
    """Input tokens of a request: a deterministic count (about 4 characters a token)."""
    text = json.dumps(request.body.get("messages") or request.body.get("input") or request.body.get("contents"))
    return max(1, len(text) // 4)


def _finish(request: Request, text: str, tokens_in: int, tokens_out: int) -> None:
    request.text, request.usage = text, (tokens_in, tokens_out)


# --- OpenAI ------------------------------------------------------------------------
def _openai(request: Request) -> dict:
    body, model = request.body, request.model
    reasoning = model.startswith(("gpt-5", "o1", "o3", "o4"))
    for param in ("temperature", "top_p"):
        value = body.get(param)
        if reasoning and value is not None and value != 1:
            raise Refused(400, f"Unsupported value: '{param}' does not support {value} with this model. "
                          "Only the default (1) value is supported.", param)  # fmt: skip
    responses = request.path.rstrip("/") == "/v1/responses"
    limit_key = "max_output_tokens" if responses else "max_completion_tokens"
    if not responses and reasoning and "max_tokens" in body:
        raise Refused(400, "Unsupported parameter: 'max_tokens' is not supported with this model. "
                      "Use 'max_completion_tokens' instead.", "max_tokens")  # fmt: skip
    cap = OPENAI_MAX_OUTPUT.get(model)
    limit = body.get(limit_key) or body.get("max_tokens")
    if cap and limit and limit > cap:
        raise Refused(400, f"{limit_key} is too large: {limit}. This model supports at most {cap} "
                      "completion tokens.", limit_key)  # fmt: skip
    effort = (body.get("reasoning") or {}).get("effort") if responses else body.get("reasoning_effort")
    if effort is not None and effort not in OPENAI_EFFORTS:
        raise Refused(400, f"Unsupported value: '{effort}' is not supported with this model. "
                      f"Supported values are: {', '.join(OPENAI_EFFORTS)}.", "reasoning.effort")  # fmt: skip
    text, tokens_in = REPLY.format(n=request.index), _tokens(request)
    thought = 7 if reasoning and effort != "minimal" else 0
    tokens_out = len(text) // 4 + thought
    _finish(request, text, tokens_in, tokens_out)
    if responses:
        return _openai_response(request, text, tokens_in, tokens_out, thought)
    return _chat_completion(request, text, tokens_in, tokens_out)


def _openai_response(request: Request, text: str, tokens_in: int, tokens_out: int, thought: int) -> dict:
    return {
        "id": f"resp_{request.index}", "object": "response", "created_at": 0, "status": "completed",
        "model": request.model, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
        "output": [
            {"type": "reasoning", "id": f"rs_{request.index}", "summary": []},
            {"type": "message", "id": f"msg_{request.index}", "status": "completed", "role": "assistant",
             "content": [{"type": "output_text", "text": text, "annotations": []}]},
        ],
        "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out, "total_tokens": tokens_in + tokens_out,
                  "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens_details": {"reasoning_tokens": thought}},
    }  # fmt: skip


def _chat_completion(request: Request, text: str, tokens_in: int, tokens_out: int) -> dict:
    return {
        "id": f"chatcmpl-{request.index}", "object": "chat.completion", "created": 0, "model": request.model,
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": tokens_in, "completion_tokens": tokens_out, "total_tokens": tokens_in + tokens_out},
    }  # fmt: skip


def _openai_error(refused: Refused) -> dict:
    code = refused.code or ("unsupported_value" if refused.status == 400 and refused.param else None)
    return {"error": {"message": refused.message, "type": refused.kind, "param": refused.param, "code": code}}


# --- Anthropic ---------------------------------------------------------------------
def _anthropic(request: Request) -> dict | list[tuple[str, dict]]:
    body, model = request.body, request.model
    if request.path.rstrip("/") == "/v1/messages/count_tokens":
        return {"input_tokens": _tokens(request)}
    version = {k.lower(): v for k, v in request.headers.items()}.get("anthropic-version", "")
    max_tokens = body.get("max_tokens")
    if not isinstance(max_tokens, int):
        raise Refused(400, "max_tokens: Field required")
    cap = ANTHROPIC_MAX_OUTPUT.get(model)
    if cap and max_tokens > cap:
        raise Refused(400, f"max_tokens: {max_tokens} > {cap}, which is the maximum allowed number of output "
                      f"tokens for {model}")  # fmt: skip
    if version >= ANTHROPIC_NO_SAMPLING_VERSION:
        for param in ("temperature", "top_p", "top_k"):
            if param in body:
                raise Refused(400, f"{param}: Extra inputs are not permitted")
    thinking = body.get("thinking") or {}
    budget = thinking.get("budget_tokens") if thinking.get("type") == "enabled" else None
    if budget is not None and not ANTHROPIC_MIN_BUDGET <= budget < max_tokens:
        raise Refused(400, f"thinking.budget_tokens: must be >= {ANTHROPIC_MIN_BUDGET} and less than "
                      f"max_tokens ({max_tokens}), got {budget}")  # fmt: skip
    text, tokens_in = REPLY.format(n=request.index), _tokens(request)
    tokens_out = len(text) // 4 + (len(THOUGHT) if budget else 0)
    _finish(request, text, tokens_in, tokens_out)
    blocks = ([{"type": "thinking", "thinking": THOUGHT, "signature": "sig"}] if budget else []) + [
        {"type": "text", "text": text}
    ]
    message = {"id": f"msg_{request.index}", "type": "message", "role": "assistant", "model": model,
               "content": blocks, "stop_reason": "end_turn", "stop_sequence": None,
               "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out}}  # fmt: skip
    return _anthropic_events(message) if body.get("stream") else message


def _anthropic_events(message: dict) -> list[tuple[str, dict]]:
    """The message as the SSE events of a streamed reply."""
    start = {**message, "content": [], "stop_reason": None, "usage": {**message["usage"], "output_tokens": 1}}
    events: list[tuple[str, dict]] = [("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(message["content"]):
        thinking = block["type"] == "thinking"
        empty = {"type": "thinking", "thinking": "", "signature": ""} if thinking else {"type": "text", "text": ""}
        deltas = (
            [{"type": "thinking_delta", "thinking": block["thinking"]},
             {"type": "signature_delta", "signature": block["signature"]}]
            if thinking else [{"type": "text_delta", "text": block["text"]}]
        )  # fmt: skip
        events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": empty}))
        events += [("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}) for d in deltas]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn",
                   "stop_sequence": None}, "usage": {"output_tokens": message["usage"]["output_tokens"]}}))  # fmt: skip
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def _anthropic_error(refused: Refused) -> dict:
    return {"type": "error", "error": {"type": refused.kind, "message": refused.message}}


# --- Google ------------------------------------------------------------------------
def _google(request: Request) -> dict | list[tuple[str, dict]]:
    model = request.model
    config = request.body.get("generationConfig") or request.body.get("generation_config") or {}
    thinking = config.get("thinkingConfig") or config.get("thinking_config") or {}
    budget = thinking.get("thinkingBudget", thinking.get("thinking_budget"))
    low, high = GEMINI_BUDGET.get(model, (0, 1 << 30))
    if budget is not None and budget != -1 and not low <= budget <= high:
        raise Refused(400, f"The thinking budget {budget} is invalid. Please choose a value between {low} and "
                      f"{high}.")  # fmt: skip
    limit = config.get("maxOutputTokens", config.get("max_output_tokens"))
    cap = GEMINI_MAX_OUTPUT.get(model)
    if cap and limit and limit > cap:
        raise Refused(400, f"The maximum number of output tokens ({limit}) exceeds the limit ({cap}).")
    temperature = config.get("temperature")
    if temperature is not None and not 0 <= temperature <= 2:
        raise Refused(400, f"temperature must be between 0 and 2, got {temperature}")
    text, tokens_in = REPLY.format(n=request.index), _tokens(request)
    thoughts = 9 if model.startswith("gemini-2.5") else 0
    tokens_out = len(text) // 4
    _finish(request, text, tokens_in, tokens_out + thoughts)
    reply = {
        "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": tokens_in, "candidatesTokenCount": tokens_out,
                          "thoughtsTokenCount": thoughts, "totalTokenCount": tokens_in + tokens_out + thoughts},
        "modelVersion": model,
    }  # fmt: skip
    return [("message", reply)] if request.path.endswith(":streamGenerateContent") else reply


def _google_error(refused: Refused) -> dict:
    status = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED",
              500: "INTERNAL", 503: "UNAVAILABLE"}.get(refused.status, "UNKNOWN")  # fmt: skip
    return {"error": {"code": refused.status, "message": refused.message, "status": status}}


# --- vLLM --------------------------------------------------------------------------
def _vllm(request: Request) -> dict:
    body, model = request.body, request.model
    if model not in VLLM_MODELS:
        raise Refused(404, f"The model `{model}` does not exist.", kind="NotFoundError")
    tokens_in = _tokens(request)
    limit = body.get("max_tokens") or body.get("max_completion_tokens") or 0
    if tokens_in + limit > VLLM_MAX_MODEL_LEN:
        raise Refused(400, f"This model's maximum context length is {VLLM_MAX_MODEL_LEN} tokens. However, you "
                      f"requested {tokens_in + limit} tokens ({tokens_in} in the messages, {limit} in the "
                      "completion).", kind="BadRequestError")  # fmt: skip
    top_k = body.get("top_k")
    if top_k is not None and top_k != -1 and top_k < 1:
        raise Refused(400, f"top_k must be -1 (disable), or at least 1, got {top_k}.", kind="BadRequestError")
    penalty = body.get("presence_penalty")
    if penalty is not None and not -2 <= penalty <= 2:
        raise Refused(400, f"presence_penalty must be in [-2, 2], got {penalty}.", kind="BadRequestError")
    text = REPLY.format(n=request.index)
    tokens_out = len(text) // 4
    _finish(request, text, tokens_in, tokens_out)
    return _chat_completion(request, text, tokens_in, tokens_out)


def _openai_settings(body: dict) -> dict[str, Any]:
    reasoning = body.get("reasoning") or {}
    return {"max_tokens": body.get("max_output_tokens", body.get("max_completion_tokens")),
            "temperature": body.get("temperature"), "top_p": body.get("top_p"),
            "reasoning_effort": reasoning.get("effort", body.get("reasoning_effort")),
            **{k: body.get(k) for k in ("presence_penalty", "frequency_penalty", "seed")},
            "stop_seqs": body.get("stop")}  # fmt: skip


def _anthropic_settings(body: dict) -> dict[str, Any]:
    thinking = body.get("thinking") or {}
    return {"max_tokens": body.get("max_tokens"), "reasoning_tokens": thinking.get("budget_tokens"),
            **{k: body.get(k) for k in ("temperature", "top_p", "top_k")}}  # fmt: skip


def _google_settings(body: dict) -> dict[str, Any]:
    config = body.get("generationConfig") or {}
    thinking = config.get("thinkingConfig") or {}
    return {"max_tokens": config.get("maxOutputTokens"), "temperature": config.get("temperature"),
            "top_p": config.get("topP"), "top_k": config.get("topK"),
            "presence_penalty": config.get("presencePenalty"), "frequency_penalty": config.get("frequencyPenalty"),
            "seed": config.get("seed"), "stop_seqs": config.get("stopSequences"),
            "reasoning_tokens": thinking.get("thinking_budget", thinking.get("thinkingBudget"))}  # fmt: skip


_CHAT_FIELDS = {
    "max_tokens": "max_tokens",
    "temperature": "temperature",
    "top_p": "top_p",
    "seed": "seed",
    "presence_penalty": "presence_penalty",
    "frequency_penalty": "frequency_penalty",
    "stop": "stop_seqs",
}
_CHAT_PLUMBING = ("model", "messages", "stream", "stream_options", "tools", "tool_choice", "n")  # not settings


def _chat_settings(body: dict) -> dict[str, Any]:
    extra = {k: v for k, v in body.items() if k not in _CHAT_FIELDS and k not in _CHAT_PLUMBING}
    return {**{name: body.get(key) for key, name in _CHAT_FIELDS.items()}, "extra_body": extra or None}


SETTINGS = {"openai": _openai_settings, "anthropic": _anthropic_settings, "google": _google_settings,
            "vllm": _chat_settings}  # fmt: skip
ANSWERS = {"openai": _openai, "anthropic": _anthropic, "google": _google, "vllm": _vllm}
ERRORS = {"openai": _openai_error, "anthropic": _anthropic_error, "google": _google_error, "vllm": _openai_error}


_shared: list[StandIns] = []


def shared() -> StandIns:
    """The stand-ins of this process, started on first use and stopped at exit: Inspect
    memoizes models, and a model keeps the base URL (port) it was built with, so every test
    module must see the same server (a session fixture imported into two modules is two)."""
    if not _shared:
        _shared.append(StandIns().start())
        atexit.register(_shared[0].close)
    return _shared[0]


@pytest.fixture
def standins_server() -> StandIns:
    """The shared stand-ins as they are (no reset, environment untouched)."""
    return shared()


@pytest.fixture
def standins(monkeypatch: pytest.MonkeyPatch):
    """The shared stand-ins, reset (no requests, no faults), with every provider's base URL
    and a dummy key in the environment for this test."""
    stand = shared()
    stand.reset()
    for name, value in stand.env().items():
        monkeypatch.setenv(name, value)
    yield stand
    stand.reset()
