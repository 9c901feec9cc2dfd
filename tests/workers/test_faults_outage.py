"""Local model server outages: a call ends with a clear error within its budget.

The `local` provider is pointed at loopback HTTP servers that stall, refuse or fail
(no model is loaded); budgets are a few seconds so the tests stay fast. What ended a call is
read from its attempts and its message, never from a clock: a busy machine is slow, not wrong.
"""

from __future__ import annotations

import re
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace

import pytest
from standins import send_json

from workers import local_provider as lp
from workers.call_budget import DEFAULT_ATTEMPT_TIMEOUT, DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT, CallBudget

COMPLETION = {
    "id": "c1", "object": "chat.completion", "created": 0, "model": "fake",
    "choices": [{"index": 0, "finish_reason": "stop",
                 "message": {"role": "assistant", "content": "ANSWER: 4"}}],
    "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
}  # fmt: skip


class FakeServer:
    """A loopback HTTP server; `mode` is 'stall' (never answers), 'flaky' (503 for the
    first `failures` requests, then a completion) or 'ok'."""

    def __init__(self, mode: str, failures: int = 0) -> None:
        self.mode, self.failures, self.requests = mode, failures, 0
        self.release = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                outer.requests += 1
                if outer.mode == "stall":
                    outer.release.wait(30)
                    return
                failing = outer.mode == "flaky" and outer.requests <= outer.failures
                send_json(self, {"error": {"message": "busy"}} if failing else COMPLETION, 503 if failing else 200)

            def log_message(self, *_: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.address = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def _closed_port_address() -> str:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there: connections are refused
    return f"http://127.0.0.1:{port}"


@pytest.fixture(autouse=True)
def _inspect_dirs(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("xdg_data")))


@pytest.fixture
def serve(monkeypatch):
    """serve(address) -> a `local/fake` model whose server is `address` (no GGUF loaded)."""

    def make(address: str, config=None, **model_args):
        from inspect_ai.model import GenerateConfig, get_model

        stub = SimpleNamespace(address=address, base_url=address + "/v1", settings=lp.ServerSettings(n_parallel=1))
        monkeypatch.setattr(lp, "resolve_model", lambda name: ("fake", Path("fake.gguf"), None))
        monkeypatch.setattr(lp, "get_server", lambda path, settings: stub)
        return get_model("local/fake", memoize=False, config=config or GenerateConfig(), **model_args)

    return make


async def _failure(model, **config) -> str:
    """The message of the LocalServerUnavailable that ends the call."""
    from inspect_ai.model import GenerateConfig

    with pytest.raises(lp.LocalServerUnavailable) as err:
        await model.generate("2+2?", config=GenerateConfig(**config))
    return str(err.value)


def _attempts(message: str) -> int:
    """How many attempts the provider says it made."""
    found = re.search(r"gave up after (\d+) attempt\(s\)", message)
    assert found, message
    return int(found[1])


# The stalled-server tests count the provider's attempts rather than time a loaded machine: a stalled
# attempt lasts its attempt_timeout (1 s) and backoff waits at least 1 s, so a slow machine makes fewer
# attempts, never more (under load one, before the 6 s deadline), while a broken limit makes many (50
# retries left; 60 s left); that a stall is retried is test_stalled_server_fails_after_max_retries's.
# The server sees at most one request per attempt (none hidden in the SDK; a starved attempt may end
# before its request is out).


@pytest.mark.slow
async def test_stalled_server_fails_at_the_overall_deadline(serve):
    server = FakeServer("stall")
    try:
        model = serve(server.address, timeout=6, attempt_timeout=1, max_retries=50)
        message = await _failure(model)
    finally:
        server.close()
    assert 1 <= _attempts(message) <= 6, message  # the 6 s deadline ended it, not the 51 attempts
    assert server.requests <= _attempts(message)
    assert server.address in message and "stalls" in message
    assert "timeout=6 s" in message and "-M timeout=" in message


@pytest.mark.slow
async def test_stalled_server_fails_after_max_retries(serve):
    server = FakeServer("stall")
    try:
        model = serve(server.address, timeout=600, attempt_timeout=1, max_retries=1)
        message = await _failure(model)
    finally:
        server.close()
    assert _attempts(message) == 2  # one attempt and one retry: the retry budget ended it, not timeout=600
    assert server.requests <= 2


@pytest.mark.slow
async def test_refused_connection_fails_fast_with_a_clear_message(serve):
    model = serve(_closed_port_address(), max_retries=2, timeout=600)
    message = await _failure(model)
    assert "APIConnectionError" in message and _attempts(message) == 3  # the retries ended it, not timeout=600
    assert "Is the server up?" in message


@pytest.mark.slow
async def test_generate_config_wins_over_model_args(serve):
    server = FakeServer("stall")
    try:
        model = serve(server.address, timeout=600, attempt_timeout=600, max_retries=9)
        message = await _failure(model, timeout=2, attempt_timeout=1, max_retries=0)
    finally:
        server.close()
    assert _attempts(message) == 1 and server.requests <= 1  # model_args' max_retries=9 would retry
    assert "attempt_timeout=1 s" in message  # not model_args' 600 s


async def test_transient_failures_are_retried_then_succeed(serve):
    server = FakeServer("flaky", failures=1)
    try:
        model = serve(server.address, timeout=600, max_retries=2)
        out = await model.generate("2+2?")
        assert out.completion == "ANSWER: 4" and server.requests == 2
        assert len(model.api._calls) == 0  # the finished call is forgotten
    finally:
        server.close()


def test_defaults_are_finite_and_model_args_are_validated():
    budget = CallBudget.from_args()
    assert (budget.timeout, budget.attempt_timeout, budget.max_retries) == (
        DEFAULT_TIMEOUT, DEFAULT_ATTEMPT_TIMEOUT, DEFAULT_MAX_RETRIES,
    )  # fmt: skip
    assert budget.timeout < float("inf") and budget.max_retries < 10
    assert CallBudget.from_args("30", None, "0") == CallBudget(30.0, DEFAULT_ATTEMPT_TIMEOUT, 0)
    for bad in ({"timeout": 0}, {"timeout": -5}, {"attempt_timeout": "soon"}, {"max_retries": 1.5},
                {"max_retries": -1}):  # fmt: skip
        with pytest.raises(ValueError, match=f"-M {next(iter(bad))}="):
            CallBudget.from_args(**bad)


async def test_a_stalled_worker_fails_its_step_and_the_workflow_goes_on(serve):
    """Through the workflow executor: the dead worker's step records the clear error,
    the other step still answers."""
    from solvers.executor import Worker, execute_workflow
    from solvers.workflow import Workflow

    dead, alive = FakeServer("stall"), FakeServer("ok")
    try:
        dead_model = serve(dead.address, timeout=2, attempt_timeout=1, max_retries=0)
        alive_model = serve(alive.address)
        workers = [Worker(dead_model, "dead"), Worker(alive_model, "alive")]
        workflow = Workflow(model_ids=(0, 1), subtasks=("a", "b"), access=((), ()))
        records = await execute_workflow(workflow, "2+2?", workers)
    finally:
        dead.close()
        alive.close()
    assert not records[0].ok and "LocalServerUnavailable" in records[0].error
    assert _attempts(records[0].error) == 1 and dead.requests <= 1  # its own budget ended it
    assert dead.address in records[0].error
    assert records[1].ok and records[1].output == "ANSWER: 4"
