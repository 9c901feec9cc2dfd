"""The endpoint's connection limits on real loopback sockets (conductor_model/slow_clients.py): a
connection sending half a request, or nothing, is closed within the read time-out; past the
connection cap the longest-waiting idle one is closed; well-behaved clients are served meanwhile.
Counts and times are scaled down (120 slow connections against a cap of 40, 1 s time-outs).
Closing is awaited, not timed: a wait of MARGIN far past each time-out ends when the socket closes,
and what a missing or renewed time-out would do (keep it open while it trickles) outlasts it."""

from __future__ import annotations

import itertools
import socket
import threading

import httpx
import pytest
from inspect_ai.model import get_model
from scripted import scripted
from test_serve import QUESTION, SIMULATION, WORKFLOW, held_conductor, running
from uvicorn.protocols.http.h11_impl import H11Protocol
from waits import WAIT_S

from conductor_model.serve import Limits
from conductor_model.slow_clients import GuardedH11Protocol

LIMITS = Limits(read_timeout=1.0, keep_alive_timeout=1, max_connections=40)
MARGIN = WAIT_S  # s past a time-out to wait for a close: a wait, not a bound (a busy machine is slow, not wrong)
PARTIAL = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"


def sim_model():
    return get_model("conductor/sim", conductor=scripted(WORKFLOW), few_shot="none", memoize=False)


def address(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").removesuffix("/v1").split(":")
    return host, int(port)


def open_slow(url: str, n: int, first_bytes: bytes = PARTIAL) -> list[socket.socket]:
    """`n` connections that send `first_bytes` (every other one: nothing) and then wait."""
    socks = []
    for i in range(n):
        sock = socket.create_connection(address(url), timeout=MARGIN + 2)
        if i % 2 == 0 and first_bytes:
            sock.sendall(first_bytes)
        socks.append(sock)
    return socks


def closed_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closes `sock` within `seconds` (it sends nothing else first)."""
    sock.settimeout(seconds)
    try:
        return sock.recv(65536) == b"" or closed_within(sock, seconds)
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False


def served(url: str) -> httpx.Response:
    body = {"model": "conductor/sim", "messages": [{"role": "user", "content": QUESTION}], "simulation": SIMULATION}
    return httpx.post(f"{url}/chat/completions", json=body, timeout=WAIT_S)


def test_the_guard_still_hooks_into_uvicorns_h11_protocol():
    """Fails loudly when uvicorn renames what conductor_model/slow_clients.py extends."""
    for hook in ("connection_made", "data_received", "on_response_complete", "connection_lost"):
        assert hook in vars(H11Protocol), f"uvicorn's H11Protocol has no {hook} any more"
    with running(sim_model(), LIMITS) as (url, server):
        httpx.get(f"{url.removesuffix('/v1')}/health", timeout=WAIT_S)
        assert server.config.http_protocol_class.__mro__[1] is GuardedH11Protocol


def test_slowloris_connections_are_closed_and_capped_while_others_are_served():
    with running(sim_model(), LIMITS) as (url, server):
        assert server.config.http_protocol_class.read_timeout == LIMITS.read_timeout
        slow = open_slow(url, 120)
        assert served(url).status_code == 200  # a well-behaved client among 120 slow ones
        open_now = [c for c in server.server_state.connections if not c.transport.is_closing()]
        assert len(open_now) <= LIMITS.max_connections
        assert all(closed_within(s, LIMITS.read_timeout + MARGIN) for s in slow)
        assert served(url).status_code == 200
    for sock in slow:
        sock.close()


def test_a_trickled_request_is_closed_at_its_deadline_from_the_first_byte():
    """Sending a header line now and then does not renew the read time-out; nor does a body
    that stops short of its Content-Length. The drip goes on until the socket closes, so a
    renewed time-out would keep it open past any wait."""
    with running(sim_model(), LIMITS) as (url, _):
        trickle = socket.create_connection(address(url))
        short_body = socket.create_connection(address(url))
        short_body.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
        stop = threading.Event()

        def drip() -> None:
            lines = itertools.chain([PARTIAL], (f"X-{i}: y\r\n".encode() for i in itertools.count()))
            while not stop.wait(0.2):
                try:
                    trickle.sendall(next(lines))
                except OSError:
                    return

        threading.Thread(target=drip, daemon=True).start()
        assert closed_within(trickle, LIMITS.read_timeout + MARGIN)
        assert closed_within(short_body, LIMITS.read_timeout + MARGIN)
        stop.set()
    trickle.close()
    short_body.close()


PIPELINED = [PARTIAL, b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"]


@pytest.mark.parametrize("pipelined", PIPELINED, ids=["half-headers", "half-body"])
def test_a_pipelined_request_buffered_behind_another_has_a_deadline(pipelined):
    """Bytes of a second request sent with the first (HTTP pipelining) are read only once the
    first is answered, and no byte may come after them: that request is timed from then."""
    with running(sim_model(), LIMITS) as (url, _):
        sock = socket.create_connection(address(url))
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n" + pipelined)
        sock.settimeout(WAIT_S)
        assert b" 200 " in sock.recv(65536).split(b"\r\n")[0]
        assert closed_within(sock, LIMITS.read_timeout + MARGIN)
    sock.close()


def test_an_idle_kept_alive_connection_is_closed():
    with running(sim_model(), LIMITS) as (url, server):
        assert server.config.timeout_keep_alive == LIMITS.keep_alive_timeout  # not uvicorn's 5 s
        sock = socket.create_connection(address(url))
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        sock.settimeout(WAIT_S)
        assert b"200" in sock.recv(65536).split(b"\r\n")[0]
        assert closed_within(sock, LIMITS.keep_alive_timeout + MARGIN)
    sock.close()


def test_a_connection_whose_round_runs_is_never_shed():
    """Past the cap, idle connections make room; the one waiting on a round keeps its answer."""
    conductor, started, release = held_conductor()  # the round runs until the slow connections are in
    model = get_model("conductor/sim", conductor=conductor, few_shot="none", memoize=False)
    with running(model, LIMITS) as (url, _):
        answer: list[httpx.Response] = []
        asking = threading.Thread(target=lambda: answer.append(served(url)))
        asking.start()
        try:
            assert started.wait(WAIT_S), f"hang guard: the round had not called its conductor after {WAIT_S} s"
            slow = open_slow(url, 3 * LIMITS.max_connections)
        finally:
            release.set()
            asking.join(timeout=WAIT_S)
        assert answer and answer[0].status_code == 200
    for sock in slow:
        sock.close()
