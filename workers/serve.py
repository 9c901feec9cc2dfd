"""An OpenAI-compatible Chat Completions endpoint over the `conductor/<pool>` model provider.

    python -m workers.serve --pool local                       # 127.0.0.1:8000, no key
    CONDUCTOR_API_KEY=secret python -m workers.serve --pool paper -M conductor=vllm/ckpt --port 9000

Any OpenAI client then calls `POST /v1/chat/completions` (model `conductor/<pool>`); each request
is one conductor round (workers/conductor_provider.py). The answer is the message content; with
`extra_body={"trace": true}` the response also has a `conductor` field: the workflow, every step's
worker, subtask, tokens, cost and latency (the round tree Inspect logs keep per sample).
`usage` sums every call of the round, conductor and workers; `conductor.cost_usd` prices it.
Simulated pools (`sim/` workers) must be told the correct answer, since that is what they
simulate: `extra_body={"simulation": {"target": "C", "domain": "mmlu", "choices": [...]}}`.

Limits: an optional API key (`--api-key-env`, default CONDUCTOR_API_KEY: Bearer auth when that
variable is set), a request size cap (`--max-request-bytes`), at most `--max-concurrency` rounds
at once (more get 429 with Retry-After), a time limit per round (`--request-timeout`, 504). Not
supported (400): streaming, n > 1, tools, images and other non-text content. Errors use OpenAI's
shape (`{"error": {"message", "type", "param", "code"}}`) and never echo internals.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hmac
import json
import os
import time
import uuid
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageSystem, ChatMessageUser, Model, get_model

from workers.conductor_provider import ConductorInputError

ROLES = {"system": ChatMessageSystem, "developer": ChatMessageSystem, "user": ChatMessageUser,
         "assistant": ChatMessageAssistant}  # fmt: skip
UNSUPPORTED = ("tools", "functions", "tool_choice", "response_format", "audio", "logprobs")


@dataclass(frozen=True)
class Limits:
    api_key: str | None = None
    max_request_bytes: int = 1_000_000
    max_concurrency: int = 4
    request_timeout: float = 1800.0


class RequestError(Exception):
    """A request refused with an OpenAI-style error."""

    def __init__(self, status: int, message: str, kind: str = "invalid_request_error", param: str | None = None,
                 code: str | None = None) -> None:  # fmt: skip
        super().__init__(message)
        self.status, self.kind, self.param, self.code = status, kind, param, code

    def body(self) -> dict:
        return {"error": {"message": str(self), "type": self.kind, "param": self.param, "code": self.code}}


def parse_request(body: Any, served: str) -> tuple[list[ChatMessage], bool, dict | None]:
    """(messages, trace wanted, simulation key) of a chat completion request, or `RequestError`."""
    if not isinstance(body, dict):
        raise RequestError(400, "the request body must be a JSON object")
    if body.get("stream"):
        raise RequestError(400, "streaming is not supported: send stream=false", param="stream")
    if body.get("n", 1) != 1:
        raise RequestError(400, "n must be 1: a round gives one answer", param="n")
    for key in UNSUPPORTED:
        if body.get(key):
            raise RequestError(400, f"{key} is not supported by the conductor endpoint", param=key)
    model = body.get("model")
    if model not in (served, served.removeprefix("conductor/")):
        raise RequestError(404, f"model {model!r} is not served here; this server serves {served!r}",
                           param="model", code="model_not_found")  # fmt: skip
    raw = body.get("messages")
    if not isinstance(raw, list) or not raw:
        raise RequestError(400, "messages must be a non-empty list", param="messages")
    messages = [_message(m, i) for i, m in enumerate(raw)]
    simulation = body.get("simulation")
    if simulation is not None and not (isinstance(simulation, dict) and isinstance(simulation.get("target"), str)):
        raise RequestError(400, "simulation must be an object with a string target", param="simulation")
    return messages, bool(body.get("trace")), simulation


def _message(raw: Any, index: int) -> ChatMessage:
    where = f"messages[{index}]"
    if not isinstance(raw, dict) or raw.get("role") not in ROLES:
        raise RequestError(400, f"{where}: role must be one of {', '.join(ROLES)}", param=where)
    content = raw.get("content")
    if isinstance(content, list):
        if any(not isinstance(p, dict) or p.get("type") != "text" or not isinstance(p.get("text"), str)
               for p in content):  # fmt: skip
            raise RequestError(400, f"{where}: only text content parts are supported", param=where)
        content = "\n".join(p["text"] for p in content)
    if not isinstance(content, str):
        raise RequestError(400, f"{where}: content must be a string or a list of text parts", param=where)
    if raw.get("tool_calls") or raw.get("tool_call_id"):
        raise RequestError(400, f"{where}: tool calls are not supported", param=where)
    return ROLES[raw["role"]](content=content)


def completion_body(served: str, answer: str, summary: dict | None, trace: bool) -> dict:
    """The Chat Completions response of one round; `usage` sums conductor and worker calls."""
    summary = summary or {}
    tokens_in, tokens_out = int(summary.get("input_tokens") or 0), int(summary.get("output_tokens") or 0)
    body = {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": served,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": answer},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": tokens_in, "completion_tokens": tokens_out, "total_tokens": tokens_in + tokens_out},
    }  # fmt: skip
    if trace:
        body["conductor"] = summary
    return body


def authorized(header: str | None, key: str | None) -> bool:
    if key is None:
        return True
    given = (header or "").removeprefix("Bearer ").strip()
    return hmac.compare_digest(given.encode(), key.encode())


def make_app(model: Model, limits: Limits = Limits()) -> Any:
    """The FastAPI app serving `model` (a `conductor/<pool>` Inspect model)."""
    from workers.sim_provider import answer_key

    served = str(model)
    simulated = any(str(w.model).startswith("sim/") for w in model.api.workers())  # type: ignore[attr-defined]
    app = FastAPI(title=f"conductor-bench: {served}", docs_url=None, redoc_url=None)
    busy = {"rounds": 0}

    def error(problem: RequestError) -> JSONResponse:
        headers = {"Retry-After": "1"} if problem.status == 429 else None
        return JSONResponse(problem.body(), status_code=problem.status, headers=headers)

    @app.get("/v1/models")
    async def models(request: Request) -> Any:
        if not authorized(request.headers.get("authorization"), limits.api_key):
            return error(RequestError(401, "invalid or missing API key", "authentication_error"))
        return {"object": "list", "data": [{"id": served, "object": "model", "owned_by": "conductor-bench"}]}

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Any:
        try:
            if not authorized(request.headers.get("authorization"), limits.api_key):
                raise RequestError(401, "invalid or missing API key", "authentication_error")
            body = await _read_json(request, limits.max_request_bytes)
            messages, trace, simulation = parse_request(body, served)
            if simulated and simulation is None:
                raise RequestError(400, "this pool's workers are simulated and need the correct answer: pass "
                                   "extra_body={'simulation': {'target': ..., 'domain': ...}}", param="simulation")
            if busy["rounds"] >= limits.max_concurrency:
                raise RequestError(429, f"{limits.max_concurrency} rounds are running; retry shortly",
                                   "rate_limit_error")  # fmt: skip
            busy["rounds"] += 1
            try:
                key = answer_key(**_key_args(simulation)) if simulation else contextlib.nullcontext()
                with key:
                    output = await asyncio.wait_for(model.generate(messages), limits.request_timeout)
            finally:
                busy["rounds"] -= 1
        except RequestError as problem:
            return error(problem)
        except ConductorInputError as problem:
            return error(RequestError(400, str(problem)))
        except TimeoutError:
            return error(RequestError(504, f"the round took over {limits.request_timeout:g} s", "timeout_error"))
        summary = (output.metadata or {}).get("conductor")
        return completion_body(served, output.completion, summary, trace)

    return app


def _key_args(simulation: dict) -> dict:
    allowed = ("target", "domain", "check", "choices", "item_id")
    unknown = sorted(set(simulation) - set(allowed))
    if unknown:
        raise RequestError(400, f"simulation: unknown {', '.join(unknown)}; known: {', '.join(allowed)}",
                           param="simulation")  # fmt: skip
    return {k: simulation[k] for k in allowed if k in simulation}


async def _read_json(request: Any, limit: int) -> Any:
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise RequestError(413, f"the request is over {limit} bytes", code="request_too_large")
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
        if len(data) > limit:
            raise RequestError(413, f"the request is over {limit} bytes", code="request_too_large")
    try:
        return json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        raise RequestError(400, "the request body is not valid JSON") from None


def model_args(pairs: list[str]) -> dict[str, Any]:
    """`-M key=value` pairs, values read as YAML scalars (as Inspect reads `-M`)."""
    import yaml

    args = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise SystemExit(f"-M takes key=value, got {pair!r}")
        args[key] = yaml.safe_load(value)
    return args


def main(argv: list[str] | None = None) -> None:
    import uvicorn

    parser = argparse.ArgumentParser(description="OpenAI-compatible endpoint for a conductor round on a pool")
    parser.add_argument("--pool", default="local", help="bundled pool name or pool YAML path")
    parser.add_argument("-M", dest="model_args", action="append", default=[], help="conductor option key=value")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--api-key-env", default="CONDUCTOR_API_KEY", help="variable holding the required key")
    parser.add_argument("--max-request-bytes", type=int, default=Limits.max_request_bytes)
    parser.add_argument("--max-concurrency", type=int, default=Limits.max_concurrency)
    parser.add_argument("--request-timeout", type=float, default=Limits.request_timeout)
    args = parser.parse_args(argv)
    if args.max_concurrency < 1 or args.max_request_bytes < 1 or args.request_timeout <= 0:
        raise SystemExit("--max-concurrency, --max-request-bytes and --request-timeout must be positive")
    limits = Limits(os.environ.get(args.api_key_env) or None, args.max_request_bytes, args.max_concurrency,
                    args.request_timeout)  # fmt: skip
    model = get_model(f"conductor/{args.pool}", **model_args(args.model_args))
    uvicorn.run(make_app(model, limits), host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
