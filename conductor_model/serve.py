"""An OpenAI-compatible Chat Completions endpoint over the `conductor/<pool>` model provider.

    python -m conductor_model.serve --pool local                       # 127.0.0.1:8000, no key
    CONDUCTOR_API_KEY=secret python -m conductor_model.serve --pool paper -M conductor=vllm/ckpt --port 9000

When it listens it prints three lines: the model it serves and its address, whether a key is required (never
the key), and the pool's size and limits; then nothing per request unless `--verbose` (uvicorn's start-up
lines and a line per request: method, path, status, seconds, and a round's steps, tokens and cost; never a
header or a body). Errors are logged as they happen. Any OpenAI client then
calls `POST /v1/chat/completions` (model `conductor/<pool>`, a pool file named by its stem); each
request is one conductor round (conductor_model/provider.py). The answer is the message
content; with `extra_body={"trace": true}` the response also has a `conductor` field: the
workflow, every step's worker, subtask, tokens, cost and latency (the round tree Inspect logs keep
per sample, redacted as those are: workers/redact.py). `usage` sums every call of the round,
conductor and workers; `conductor.cost_usd` prices it. Simulated pools (`sim/` workers) must be
told the correct answer, since that is what they simulate:
`extra_body={"simulation": {"target": "C", "domain": "mmlu", "choices": [...]}}`.

Limits: an optional API key (`--api-key-env`, default CONDUCTOR_API_KEY: Bearer auth on every
route but `GET /health` when that variable is set; without it only a loopback `--host`), a request
size cap (`--max-request-bytes`),
at most `--max-concurrency` rounds at once (more get 429 with Retry-After), a time limit per round
(`--request-timeout`, 504), a time limit to receive a request (`--read-timeout`), to keep an idle
connection (`--keep-alive-timeout`) and a cap on open connections (`--max-connections`;
conductor_model/slow_clients.py). A round that gives no answer (its conductor failed, its workflow was
rejected, its last step failed) is a 502 naming what failed. Not supported (400): streaming,
n > 1, tools, images and other non-text content. Errors use OpenAI's shape
(`{"error": {"message", "type", "param", "code"}}`) and never echo internals.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import copy
import hmac
import ipaddress
import json
import logging
import math
import os
import time
import uuid
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageSystem, ChatMessageUser, Model, get_model
from starlette.exceptions import HTTPException

from conductor_model.provider import ConductorInputError
from solvers.conducting import CONDUCTOR_ERROR
from startup.errors import StartError
from workers.providers import model_part
from workers.redact import pool_label
from workers.simulation import SimError, make_key

ROLES = {"system": ChatMessageSystem, "developer": ChatMessageSystem, "user": ChatMessageUser,
         "assistant": ChatMessageAssistant}  # fmt: skip
UNSUPPORTED = ("tools", "functions", "tool_choice", "response_format", "audio", "logprobs")
SIMULATION_KEYS = ("target", "domain", "check", "choices", "item_id")
HEALTH = "/health"
ROUTES = "POST /v1/chat/completions, GET /v1/models, GET /health"
NO_RETRY = {"x-should-retry": "false"}  # openai clients would otherwise re-run (and pay for) the round
log = logging.getLogger("conductor_model.serve")  # a line per request at INFO (--verbose); also under -m


@dataclass(frozen=True)
class Limits:
    api_key: str | None = None
    max_request_bytes: int = 1_000_000
    max_concurrency: int = 4
    request_timeout: float = 1800.0
    read_timeout: float = 30.0  # to receive a whole request (headers and body), from its first byte
    keep_alive_timeout: int = 5  # uvicorn's own: an idle kept-alive connection is closed after it
    max_connections: int = 256  # open at once, well under the usual 1,024 open files


class RequestError(Exception):
    """A request refused with an OpenAI-style error."""

    def __init__(self, status: int, message: str, kind: str = "invalid_request_error", param: str | None = None,
                 code: str | None = None) -> None:  # fmt: skip
        super().__init__(message)
        self.status, self.kind, self.param, self.code = status, kind, param, code

    def body(self) -> dict:
        return {"error": {"message": str(self), "type": self.kind, "param": self.param, "code": self.code}}


class OpenAIJSON(JSONResponse):
    """JSON with non-ASCII characters escaped: a reply always encodes, whatever text a round made."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, separators=(",", ":")).encode("ascii")


def parse_request(body: Any, served: str) -> tuple[list[ChatMessage], bool, dict | None]:
    """(messages, trace wanted, answer key arguments) of a chat completion request, or
    `RequestError`. Everything is checked here, before a round spends a call."""
    if not isinstance(body, dict):
        raise RequestError(400, "the request body must be a JSON object")
    if (where := _unencodable(body)) is not None:
        raise RequestError(400, f"{where}: not valid Unicode (a lone surrogate); send UTF-8 text", param=where)
    if body.get("stream"):
        raise RequestError(400, "streaming is not supported: send stream=false", param="stream")
    if body.get("n", 1) != 1:
        raise RequestError(400, "n must be 1: a round gives one answer", param="n")
    for key in UNSUPPORTED:
        if body.get(key):
            raise RequestError(400, f"{key} is not supported by the conductor endpoint", param=key)
    model = body.get("model")
    if model not in (served, model_part(served)):
        raise RequestError(404, f"that model is not served here; this server serves {served!r}",
                           param="model", code="model_not_found")  # fmt: skip
    raw = body.get("messages")
    if not isinstance(raw, list) or not raw:
        raise RequestError(400, "messages must be a non-empty list", param="messages")
    messages = [_message(m, i) for i, m in enumerate(raw)]
    return messages, bool(body.get("trace")), _simulation(body.get("simulation"))


def _unencodable(body: Any) -> str | None:
    """Where in `body` a string (key or value) cannot be encoded as UTF-8, else None."""
    todo: list[tuple[str, Any]] = [("body", body)]
    while todo:
        where, value = todo.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                todo += [(f"{where} key", key), (f"{where}.{key}" if where != "body" else str(key), item)]
        elif isinstance(value, list):
            todo += [(f"{where}[{i}]", item) for i, item in enumerate(value)]
        elif isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return where.encode("ascii", "backslashreplace").decode()
    return None


def _message(raw: Any, index: int) -> ChatMessage:
    where = f"messages[{index}]"
    role = raw.get("role") if isinstance(raw, dict) else None
    if not isinstance(role, str) or role not in ROLES:
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
    return ROLES[role](content=content)


def _simulation(raw: Any) -> dict | None:
    """The answer key arguments of a `simulation` block, checked as the simulator checks them."""
    if raw is None:
        return None
    if not (isinstance(raw, dict) and isinstance(raw.get("target"), str)):
        raise RequestError(400, "simulation must be an object with a string target", param="simulation")
    unknown = sorted(set(raw) - set(SIMULATION_KEYS))
    if unknown:
        raise RequestError(400, f"simulation: unknown {', '.join(unknown)}; known: {', '.join(SIMULATION_KEYS)}",
                           param="simulation")  # fmt: skip
    problem = _simulation_type_problem(raw)
    try:
        if problem is None:
            make_key(**raw)
    except SimError as error:
        problem = str(error)
    if problem:
        raise RequestError(400, f"simulation: {problem}", param="simulation")
    return dict(raw)


def _simulation_type_problem(raw: dict) -> str | None:
    if any(not isinstance(raw.get(k), str | None) for k in ("domain", "check")):
        return "domain and check must be strings"
    choices, item_id = raw.get("choices"), raw.get("item_id")
    if choices is not None and not (isinstance(choices, list) and all(isinstance(c, str) for c in choices)):
        return "choices must be a list of strings"
    if item_id is not None and (isinstance(item_id, bool) or not isinstance(item_id, str | int)):
        return "item_id must be a string or an integer"
    return None


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


def round_failure(round_tree: dict | None) -> RequestError | None:
    """The 502 of a round that gave no answer, naming what failed; None when it answered."""
    if not round_tree or round_tree.get("answer") is not None:
        return None
    rejection, why, steps = round_tree.get("rejection"), round_tree.get("rejection_message"), round_tree.get("steps")
    if rejection == CONDUCTOR_ERROR:
        what, code = f"the conductor failed: {why}", "conductor_failed"
    elif rejection:
        what, code = f"the conductor's workflow was rejected ({rejection}): {why}", "workflow_rejected"
    elif steps:
        last = steps[-1]
        what, code = f"its last step (step {last['index']}, {last['model']}) failed: {last['error']}", "worker_failed"
    else:
        what, code = "its workflow kept the previous answer and there is none", "no_answer"
    return RequestError(502, f"the round gave no answer: {what}", "server_error", code=code)


def authorized(header: str | None, key: str | None) -> bool:
    if key is None:
        return True
    given = (header or "").removeprefix("Bearer ").strip()
    return hmac.compare_digest(given.encode(), key.encode())


def error(problem: RequestError, extra: dict | None = None) -> JSONResponse:
    """The OpenAI-shaped response of `problem` (`extra`: more top-level fields)."""
    headers = {"Retry-After": "1"} if problem.status == 429 else NO_RETRY if problem.status in (500, 502) else None
    return OpenAIJSON({**problem.body(), **(extra or {})}, status_code=problem.status, headers=headers)


def make_app(model: Model, limits: Limits = Limits()) -> Any:
    """The FastAPI app serving `model` (a `conductor/<pool>` Inspect model): every route but
    `GET /health` needs the key when one is set; no docs or OpenAPI schema are served."""
    from workers.sim_provider import answer_key

    served = served_name(model)
    simulated = model.api.simulated  # type: ignore[attr-defined]  (resolved once when the model was built)
    app = FastAPI(title="conductor-bench endpoint", docs_url=None, redoc_url=None, openapi_url=None,
                  default_response_class=OpenAIJSON)  # fmt: skip
    busy = {"rounds": 0}

    @app.middleware("http")
    async def require_key(request: Request, call_next: Any) -> Any:
        started = time.monotonic()
        if request.url.path == HEALTH or authorized(request.headers.get("authorization"), limits.api_key):
            response = await call_next(request)
        else:
            response = error(RequestError(401, "invalid or missing API key", "authentication_error"))
        if log.isEnabledFor(logging.INFO):
            rounded = getattr(request.state, "round", None)
            log.info(request_line(request, response.status_code, time.monotonic() - started, rounded))
        return response

    @app.exception_handler(HTTPException)
    async def no_route(request: Request, problem: HTTPException) -> Any:
        return error(RequestError(problem.status_code, f"{problem.detail}; routes: {ROUTES}"))

    @app.exception_handler(Exception)
    async def internal(request: Request, problem: Exception) -> Any:  # uvicorn logs the traceback
        return error(RequestError(500, "internal error of the conductor endpoint; its log has the details",
                                  "server_error"))  # fmt: skip

    @app.get(HEALTH)
    async def health() -> Any:
        return {"status": "ok"}

    @app.get("/v1/models")
    async def models() -> Any:
        return {"object": "list", "data": [{"id": served, "object": "model", "owned_by": "conductor-bench"}]}

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Any:
        try:
            body = await _read_json(request, limits.max_request_bytes)
            messages, trace, simulation = parse_request(body, served)
            if simulated and simulation is None:
                raise RequestError(
                    400,
                    "this pool's workers are simulated and need the correct answer: pass "
                    "extra_body={'simulation': {'target': ..., 'domain': ...}}",
                    param="simulation",
                )
            if busy["rounds"] >= limits.max_concurrency:
                raise RequestError(429, f"{limits.max_concurrency} rounds are running; retry shortly",
                                   "rate_limit_error")  # fmt: skip
            busy["rounds"] += 1
            try:
                key = answer_key(**simulation) if simulation else contextlib.nullcontext()
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
        request.state.round = summary
        if failure := round_failure((summary or {}).get("round")):
            return error(failure, {"conductor": summary} if trace else None)
        return completion_body(served, output.completion, summary, trace)

    return app


def request_line(request: Any, status: int, seconds: float, summary: dict | None = None) -> str:
    """The --verbose line of a request: method, path, status, seconds and a round's steps, tokens and cost;
    never a header, a query or a body."""
    line = f"{request.method} {request.url.path} {status} in {seconds:.1f} s"
    if summary:
        steps = len((summary.get("round") or {}).get("steps") or [])
        tokens = int(summary.get("input_tokens") or 0) + int(summary.get("output_tokens") or 0)
        cost = summary.get("cost_usd")
        line += f": {steps} step(s), {tokens:,} tokens, " + (f"${cost:.4f}" if cost is not None else "cost unknown")
    return line


def start_lines(model: Model, limits: Limits, url: str, key_env: str) -> list[str]:
    """What the endpoint says when it listens: address and model, whether a key is required, pool and limits."""
    auth = (f"auth: the key in ${key_env} (Bearer) on every route but {HEALTH}" if limits.api_key else
            f"auth: none (loopback only; set {key_env} to require a key)")  # fmt: skip
    api: Any = model.api
    simulated = " (simulated: each request names its answer)" if api.simulated else ""
    return [
        f"serving {served_name(model)} on {url} (Ctrl+C stops)",
        auth,
        f"pool: {api.team_size} workers{simulated}; {limits.max_concurrency} rounds at once, "
        f"{limits.request_timeout:g} s each; --verbose: a line per request",
    ]


def served_name(model: Model) -> str:
    """The model name clients use: `conductor/<pool name or pool file stem>`, never a path."""
    return f"conductor/{pool_label(model.api.pool)}"  # type: ignore[attr-defined]


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
        return json.loads(data, parse_constant=_not_a_number)
    except json.JSONDecodeError as problem:
        raise RequestError(400, f"the request body is not valid JSON: {problem.msg} (line {problem.lineno}, "
                           f"column {problem.colno})") from None  # fmt: skip
    except UnicodeDecodeError:
        raise RequestError(400, "the request body is not UTF-8 JSON") from None
    except RecursionError:
        raise RequestError(400, "the request body nests too deeply") from None
    except ValueError:  # an integer past Python's 4,300-digit limit, NaN or Infinity
        raise RequestError(400, "the request body has a number that is too long or not finite") from None


def _not_a_number(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON number")


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


def make_server(
    model: Model, limits: Limits, host: str, port: int, verbose: bool = False, key_env: str = "CONDUCTOR_API_KEY"
) -> Any:
    """The uvicorn server of the endpoint, with its read, idle and connection limits; `verbose`: uvicorn's
    start-up lines and a line per request (`request_line`)."""
    import uvicorn

    from conductor_model.slow_clients import guarded_protocol

    class Announcing(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            if self.started:
                host, port = self.servers[0].sockets[0].getsockname()[:2]
                address = f"[{host}]" if ":" in host else host
                print("\n".join(start_lines(model, limits, f"http://{address}:{port}/v1", key_env)), flush=True)

    config = uvicorn.Config(
        make_app(model, limits), host=host, port=port, log_level="info" if verbose else "warning", ws="none",
        access_log=False, log_config=log_config(verbose),
        http=guarded_protocol(limits.read_timeout, limits.max_connections),
        timeout_keep_alive=limits.keep_alive_timeout,
    )  # fmt: skip
    return Announcing(config)


def log_config(verbose: bool) -> dict:
    """uvicorn's logging, with this module's request lines on its handler (INFO with --verbose, else WARNING)."""
    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    level = "INFO" if verbose else "WARNING"
    config["loggers"][log.name] = {"handlers": ["default"], "level": level, "propagate": False}
    return config


EXAMPLE = """example:
  python -m conductor_model.serve --pool sim
  then, from Python (a simulated pool is told the correct answer):
    OpenAI(base_url="http://127.0.0.1:8000/v1", api_key="none").chat.completions.create(
        model="conductor/sim", messages=[{"role": "user", "content": "Which is prime? A) 4 B) 6 C) 7 D) 9"}],
        extra_body={"simulation": {"target": "C", "domain": "mmlu"}})
"""


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    pass


def is_loopback(host: str) -> bool:
    """Whether `host` is reachable from this machine only."""
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:  # another host name: it may resolve beyond this machine
        return False


# numeric start options: (type, lowest, highest, whether the lowest itself is refused)
NUMBERS: dict[str, tuple[type, int, int, bool]] = {
    "port": (int, 0, 65_535, False),
    "max_request_bytes": (int, 1, 2**30, False),
    "max_concurrency": (int, 1, 10_000, False),
    "request_timeout": (float, 0, 7 * 86_400, True),
    "read_timeout": (float, 0, 86_400, True),
    "keep_alive_timeout": (int, 1, 86_400, False),
    "max_connections": (int, 1, 100_000, False),
}


def start_numbers(args: argparse.Namespace) -> tuple[dict[str, Any], list[str]]:
    """Every numeric start option (`NUMBERS`) as its number, and a problem for each one that is
    not a finite number in its range (a word, NaN, infinity, a fraction where a count is due)."""
    values, problems = {}, []
    for name, (kind, low, high, open_low) in NUMBERS.items():
        text = str(getattr(args, name)).strip()
        try:
            value = kind(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and (low < value if open_low else low <= value) and value <= high):
            what = "a whole number" if kind is int else "a finite number of seconds"
            problems.append(f"--{name.replace('_', '-')} {ascii(text)[:40]} is not {what} in "
                            f"{'(' if open_low else '['}{low}, {high}]")  # fmt: skip
        values[name] = value
    return values, problems


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m conductor_model.serve",
        description="OpenAI-compatible endpoint for a conductor round on a pool",
        formatter_class=_HelpFormatter,
        epilog=EXAMPLE,
    )
    parser.add_argument("--pool", default="local", help="bundled pool name or pool YAML path")
    parser.add_argument("-M", dest="model_args", action="append", default=[], metavar="KEY=VALUE",
                        help="conductor option, as `-M` of the conductor/<pool> model (repeatable)")  # fmt: skip
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", default=8000, help="port to listen on (0: any free port)")
    parser.add_argument("--api-key-env", default="CONDUCTOR_API_KEY", help="variable holding the required key")
    parser.add_argument("--max-request-bytes", default=Limits.max_request_bytes, help="413 past it")
    parser.add_argument("--max-concurrency", default=Limits.max_concurrency, help="rounds at once (429 past it)")
    parser.add_argument("--request-timeout", default=Limits.request_timeout, help="s per round (504)")
    parser.add_argument("--read-timeout", default=Limits.read_timeout,
                        help="s to receive a whole request; a slower connection is closed")  # fmt: skip
    parser.add_argument("--keep-alive-timeout", default=Limits.keep_alive_timeout,
                        help="s an idle connection is kept open")  # fmt: skip
    parser.add_argument("--max-connections", default=Limits.max_connections,
                        help="open connections; past it the longest-waiting idle one is closed")  # fmt: skip
    parser.add_argument("--verbose", action="store_true", help="uvicorn's start-up lines and a line per request")
    args = parser.parse_args(argv)
    numbers, problems = start_numbers(args)
    if problems:
        parser.exit(2, f"{parser.prog}: {'; '.join(problems)}; fix: give each a number in its range\n")
    limits = Limits(os.environ.get(args.api_key_env) or None, **{n: v for n, v in numbers.items() if n != "port"})
    if limits.api_key is None and not is_loopback(args.host):
        parser.exit(2, f"{parser.prog}: --host {args.host} opens the endpoint (and the pool's spend) beyond this "
                    f"machine with no key; fix: set {args.api_key_env} to a secret (clients send it as their API "
                    "key), or listen on 127.0.0.1\n")  # fmt: skip
    try:
        model = get_model(f"conductor/{args.pool}", **model_args(args.model_args))
    except ValueError as problem:  # a bad pool or -M option, named with its fix (a StartError is printed already)
        parser.exit(2, "" if isinstance(problem, StartError) else f"{parser.prog}: {problem}\n")
    make_server(model, limits, args.host, numbers["port"], args.verbose, args.api_key_env).run()


if __name__ == "__main__":
    main()
