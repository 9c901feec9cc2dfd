"""Bounds uvicorn lacks: a time limit on reading a request, and a cap on open connections.

uvicorn (0.54) closes a keep-alive connection idle for `timeout_keep_alive` seconds, but a
connection that sends half a request, or nothing, is held forever, and it accepts connections
until the process runs out of file descriptors: about 1,100 such connections (slowloris) and
nobody else gets an answer. `guarded_protocol` is uvicorn's own h11 protocol with two more rules:

- a request (headers and body) must arrive within `read_timeout` seconds of its first byte,
  and a new connection must complete one within that time; else the connection is closed. A
  request whose bytes came early, buffered behind the one being answered (HTTP pipelining), is
  read from when that answer is sent: its clock starts then, as no new byte may ever arrive;
- past `max_connections` open connections, the one waiting longest without a request in
  progress (sending one slowly, or idle) is closed; a connection whose request is being
  answered is never closed, and when every connection is busy the new one is refused.

It relies on uvicorn's `H11Protocol` hooks (`connection_made`, `data_received`,
`on_response_complete`) and attributes (`conn`, `connections`, `transport`, `loop`):
tests/conductor_model/test_serve_slow_clients.py fails loudly if upstream changes them.
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

WAITING = (h11.IDLE, h11.SEND_BODY)  # the client's side of a request still to come or arriving


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a request read deadline and a connection cap."""

    read_timeout: float = 30.0
    max_connections: int = 256

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.idle_since: float | None = self.loop.time()
        self.read_deadline: asyncio.TimerHandle | None = self.loop.call_later(self.read_timeout, self._read_timed_out)
        if sum(not c.transport.is_closing() for c in self.connections) > self.max_connections:
            self._shed()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._track(arrived=True)

    def on_response_complete(self) -> None:
        self.idle_since = self.loop.time()
        super().on_response_complete()  # starts reading a pipelined request already buffered, if any
        if not self.transport.is_closing():
            self._track(arrived=self.conn.their_state is h11.SEND_BODY or bool(self.conn.trailing_data[0]))

    def _track(self, arrived: bool) -> None:
        """Disarm the deadline once a request is in; arm it when bytes of the next one are here
        (`arrived`: just received, or buffered behind the answer just sent)."""
        if self.conn.their_state not in WAITING:  # the request is in (or the connection ends)
            self.idle_since = None
            self._disarm()
        elif arrived and self.read_deadline is None:  # the first bytes of a request on a kept-alive connection
            self.read_deadline = self.loop.call_later(self.read_timeout, self._read_timed_out)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _disarm(self) -> None:
        if self.read_deadline is not None:
            self.read_deadline.cancel()
            self.read_deadline = None

    def _read_timed_out(self) -> None:
        self.read_deadline = None
        if self.conn.their_state in WAITING:
            self.transport.close()

    def _shed(self) -> None:
        """Close the open connection waiting longest without a request in progress (this one
        when every other is busy)."""
        waiting = [c for c in self.connections if getattr(c, "idle_since", None) is not None
                   and not c.transport.is_closing()]  # fmt: skip
        min(waiting, key=lambda c: c.idle_since).transport.close()


def guarded_protocol(read_timeout: float, max_connections: int) -> type[GuardedH11Protocol]:
    """The protocol class to give uvicorn (`Config(http=...)`) for these limits."""
    limits: dict[str, Any] = {"read_timeout": read_timeout, "max_connections": max_connections}
    return type("GuardedH11Protocol", (GuardedH11Protocol,), limits)
