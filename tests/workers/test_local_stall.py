"""The `local` provider against a server with fewer slots than callers (issue 32.2).

llama.cpp queues requests beyond its parallel slots inside the server; a loopback stand-in
does the same here (a request waits for one of `slots`, then takes `seconds`), so these run
in a second without a model. Warnings are awaited, not timed: the server holds a call until
the warnings it waits for were given, so a busy machine cannot make a test miss them. A warning
is one line on stderr (and an INFO record for the logs), never a wrapped block.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace

import anyio
import pytest
from standins import send_json
from waits import WAIT_S

from workers import local_provider as lp

COMPLETION = {
    "id": "c1", "object": "chat.completion", "created": 0, "model": "fake",
    "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "4"}}],
    "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
    "timings": {"prompt_n": 3, "prompt_ms": 12.5, "predicted_n": 1, "predicted_ms": 40.0},
}  # fmt: skip


class SlotHandler(BaseHTTPRequestHandler):
    """POST: wait for a slot, take the server's `seconds`, answer; GET: llama.cpp's /slots shape."""

    server: SlotServer

    def do_GET(self) -> None:  # noqa: N802
        self.reply([{"id": 0, "is_processing": True, "next_token": [{"n_decoded": 7}]}])

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.server.count(+1) == 1 and self.server.fail_first:
            self.server.count(-1)
            self.send_error(400, "bad request")  # not retried: the call fails at once
            return
        with self.server.free:  # queued inside the server, as llama.cpp does
            time.sleep(self.server.seconds)
            if self.server.meet and self.server.requests > 1:  # the first call goes alone
                self.server.full.wait(HOLD_CAP_S)
            self.server.until.wait(HOLD_CAP_S)
        self.server.count(-1)
        self.reply(COMPLETION)

    def reply(self, data: object) -> None:
        send_json(self, data)

    def log_message(self, *_: object) -> None:
        pass


HOLD_CAP_S = WAIT_S  # the longest a request waits for `until` or for the slots to fill


class SlotServer(ThreadingHTTPServer):
    """A loopback server with `slots` parallel slots and `seconds` per request, each also held
    until `until` is set (set from the start by default); with `meet`, each but the first is also
    held until `slots` requests have once been open together (calls that may overlap do, however
    slow the machine). It records how many requests were open at once, and at each request's
    arrival (`arrivals`)."""

    daemon_threads = True

    def __init__(self, slots: int, seconds: float, fail_first: bool = False, until=None, meet: bool = False) -> None:
        super().__init__(("127.0.0.1", 0), SlotHandler)
        self.free, self.seconds, self.lock = threading.Semaphore(slots), seconds, threading.Lock()
        self.slots, self.full, self.meet = slots, threading.Event(), meet
        self.until = until or threading.Event()
        if until is None:
            self.until.set()
        self.requests = self.open = self.most_open = 0
        self.arrivals: list[int] = []
        self.fail_first = fail_first
        self.address = f"http://127.0.0.1:{self.server_address[1]}"
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def count(self, step: int) -> int:
        """Count a request in (+1) or out (-1); returns the number of requests so far."""
        with self.lock:
            self.requests += step > 0
            self.open += step
            self.most_open = max(self.most_open, self.open)
            if self.open >= self.slots:
                self.full.set()
            if step > 0:
                self.arrivals.append(self.open)
            return self.requests

    def close(self) -> None:
        self.shutdown()
        self.server_close()


@pytest.fixture(autouse=True)
def _inspect_dirs(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("xdg_data")))


@pytest.fixture
def served(monkeypatch):
    """served(slots, seconds, ..., **model_args) -> (a `local/fake` model, its SlotServer)."""
    servers: list[SlotServer] = []

    def make(slots: int, seconds: float, config=None, fail_first=False, until=None, meet=False, **model_args):
        from inspect_ai.model import GenerateConfig, get_model

        server = SlotServer(slots, seconds, fail_first, until, meet)
        servers.append(server)
        stub = SimpleNamespace(
            address=server.address, base_url=server.address + "/v1", settings=lp.ServerSettings(n_parallel=slots)
        )
        monkeypatch.setattr(lp, "resolve_model", lambda name: ("fake", Path("fake.gguf"), None))
        monkeypatch.setattr(lp, "get_server", lambda path, settings: stub)
        model = get_model("local/fake", memoize=False, config=config or GenerateConfig(), **model_args)
        return model, server

    yield make
    for server in servers:
        server.until.set()
        server.full.set()
        server.close()


@contextmanager
def warnings_awaited(count: int):
    """(records, event): the provider's slow-call records as logged (each also printed as one
    warning line); the event is set at the `count`-th."""
    records: list[logging.LogRecord] = []
    enough = threading.Event()

    class Handler(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)
            if len(records) >= count:
                enough.set()

    logger = logging.getLogger("workers.local_provider")
    handler, level = Handler(logging.INFO), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield records, enough
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


async def test_no_more_requests_in_flight_than_the_server_has_slots(served):
    model, server = served(slots=2, seconds=0.15, meet=True)
    outputs = await asyncio.gather(*(model.generate(f"{i}+1?") for i in range(6)))
    assert [o.completion for o in outputs] == ["4"] * 6
    assert server.requests == 6 and server.most_open == 2
    timings = outputs[0].metadata["llama_timings"]
    assert timings == {
        "prompt_tokens": 3, "prompt_s": 0.013, "generated_tokens": 1, "generation_s": 0.04,
        "slot_wait_s": timings["slot_wait_s"],
    }  # fmt: skip  # the server's own timings: a log tells generation from waiting
    waits = [o.metadata["llama_timings"]["slot_wait_s"] for o in outputs]
    assert waits[0] < min(waits[1:])  # the first call found a slot at once; the others waited for it
    assert waits[-1] >= 0.3  # 6 calls, 2 slots, 0.15 s each


async def test_the_first_call_runs_alone_so_the_others_reuse_its_cached_prompt(served):
    """llama.cpp shares a finished call's prompt prefix with every slot, but calls that start
    together on a cold server each process their whole prompt: the first call goes alone."""
    model, server = served(slots=2, seconds=0.2, meet=True)
    outputs = await asyncio.gather(*(model.generate(f"{i}+1?") for i in range(3)))
    assert [o.completion for o in outputs] == ["4"] * 3
    assert server.arrivals == [1, 1, 2], "the second call waited for the first; then both slots"


async def test_a_call_held_back_by_the_first_is_named_so_on_the_console(served):
    with warnings_awaited(1) as (records, warned):
        model, _ = served(slots=2, seconds=0.0, until=warned, warn_after=0.3)  # answers once warned
        await asyncio.gather(model.generate("1+1?"), model.generate("2+2?"))
    messages = [r.getMessage() for r in records]
    assert any(
        "1/2 slots busy from this process, 1 call(s) waiting for one (the first call runs alone" in m for m in messages
    ), messages


async def test_a_failed_first_call_does_not_hold_the_others_back(served):
    model, server = served(slots=2, seconds=0.1, fail_first=True, meet=True)
    with anyio.fail_after(WAIT_S):  # a hang guard: held back, the others would wait forever
        outputs = await asyncio.gather(*(model.generate(f"{i}+1?") for i in range(3)), return_exceptions=True)
    assert isinstance(outputs[0], Exception)
    assert [o.completion for o in outputs[1:]] == ["4", "4"]
    assert server.arrivals[1:] == [1, 2]


@pytest.mark.slow
async def test_the_attempt_clock_starts_when_a_slot_is_free(served):
    """Fourteen calls on one slot, 0.5 s each, 6 s per attempt: the last waits at least 6.5 s for
    the slot (longer on a busy machine), yet no attempt times out, since each waits for the
    slot before its clock starts (and each has 12 times its 0.5 s for its own round trip)."""
    model, server = served(slots=1, seconds=0.5, attempt_timeout=6, max_retries=0)
    outputs = await asyncio.gather(*(model.generate(f"{i}+1?") for i in range(14)))
    assert [o.completion for o in outputs] == ["4"] * 14
    assert server.requests == 14  # no attempt was abandoned and retried
    assert outputs[-1].metadata["llama_timings"]["slot_wait_s"] >= 6.5  # past the attempt timeout


async def test_a_slow_call_is_warned_about_while_it_runs(served, capsys):
    with warnings_awaited(2) as (warnings, warned):
        model, _ = served(slots=1, seconds=0.0, until=warned, warn_after=0.3)  # answers after 2 warnings
        output = await model.generate("2+2?")
    assert output.completion == "4"
    assert len(warnings) >= 2, "one warning per warn_after seconds while the call runs"
    lines = capsys.readouterr().err.splitlines()
    assert lines == [f"warning: {w.getMessage()}" for w in warnings]  # one line each on the console
    message = warnings[0].getMessage()
    assert "local model fake" in message and "without an answer" in message
    assert "1/1 slots busy from this process, 0 call(s) waiting" in message
    assert "server: 1/1 slots processing (slot 0: 7 tokens)" in message


async def test_a_call_no_slower_than_one_already_said_is_only_logged(served, capsys):
    """On a loaded machine every call runs long: the console says how long the slowest so far has run
    (a line each time a call runs longer than any before it), the eval log keeps every call's records."""
    until = threading.Event()
    with warnings_awaited(2) as (records, warned):
        model, _ = served(slots=1, seconds=0.0, until=until, warn_after=0.3)
        first = asyncio.ensure_future(model.generate("1+1?"))
        await anyio.to_thread.run_sync(warned.wait, WAIT_S)
        until.set()  # the first call answers after its 2 warnings (or 3, on a slow machine)
        assert (await first).completion == "4"
        said = len(records)
        first_lines = capsys.readouterr().err.splitlines()
        assert first_lines == [f"warning: {r.getMessage()}" for r in records]  # each a longer run than before
    until.clear()
    with warnings_awaited(said) as (records, warned):  # the second call as long as the first, no longer
        second = asyncio.ensure_future(model.generate("2+2?"))
        await anyio.to_thread.run_sync(warned.wait, WAIT_S)
        until.set()
        assert (await second).completion == "4"
    assert len(records) >= said and capsys.readouterr().err == ""  # was a line per record: one per call a minute


async def test_a_quick_call_is_not_warned_about(served, monkeypatch, capsys):
    """The watcher starts with the attempt and ends with it, so it cannot warn later."""
    lifecycle = []
    watch = lp.warn_while_running

    async def watched(*args):
        lifecycle.append("started")
        try:
            await watch(*args)
        finally:
            lifecycle.append("ended")

    monkeypatch.setattr(lp, "warn_while_running", watched)
    with warnings_awaited(1) as (warnings, _):
        model, _ = served(slots=1, seconds=0.05, warn_after=WAIT_S)  # a busy machine cannot take that long
        await model.generate("2+2?")
        assert lifecycle == ["started", "ended"]
    assert warnings == [] and capsys.readouterr().err == ""


def test_one_llama_thread_by_default_and_warn_after_checked(served):
    assert lp.ServerSettings().resolved().n_threads == 1  # OpenMP threads spin on shared cores
    with pytest.raises(ValueError, match="warn_after must be a number of seconds > 0"):
        served(slots=1, seconds=0.1, warn_after=0)
