"""`AsgiApp` under generated requests, valid and hostile: a well-formed answer, never a crash.

"Hostile input of any shape gets a protocol error, never a crash." An ASGI server hands
the app whatever its clients send that HTTP lets through: any method and path, any
header fields and values (repeated, missing, contradicting the body), any body, in any
pieces, from a client that may leave at any time. Hypothesis draws sequences of such
requests against one app, so that what one request leaves behind (a known head, a
session, a 2024-11-05 stream) meets the next; the everything server answers them.

Each request must end (a stalled body meets its deadline, a stream ends when its client
leaves), and whatever the app sent must be one HTTP response: a start with a valid
status and byte fields, then body pieces, the last one final unless the client left
first. No answer is a 500 (the app's own failure), none shows a traceback, and a JSON
answer is JSON. The examples run on trio with a virtual clock, and fewer of them on
asyncio in real time with short deadlines: what differs is how a request is cancelled
(`transports._runtime.primitives.Interruptible`). The real servers' handling of the
same bytes (uvicorn, hypercorn) is ``tests/asgi``'s; this is the app's.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any, Final

import anyio
import pytest
import trio.testing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from examples.everything import build_server
from tests.transports.hostile_requests import (
    PRIMERS,
    SSE_SESSION,
    STREAM,
    Request,
    Seen,
    check_answer,
    head_fields,
    requests,
)
from tests.transports.test_asgi_app import Exchange
from transports import AsgiApp, HttpLimits

Message = MutableMapping[str, Any]


# ------------------------------------------------------------------ the client


class Hostile(Exchange):
    """One generated request handed to the app (an `Exchange`), as its client acts.

    Its fields and query get what the placeholders stand for when it is made; the client
    leaves (``hung_up``) once answered, or at once when the answer starts if it leaves
    early, or after `Backend.stay`.
    """

    def __init__(self, request: Request, seen: Seen) -> None:
        body = request.body
        bounds = [0, *request.cuts, len(body)]
        query = request.query.replace(SSE_SESSION.encode(), seen.sse_session)
        pieces = [body[a:b] for a, b in itertools.pairwise(bounds)]
        super().__init__(
            request.method, request.path, pieces=pieces, query=query, stall=request.stall
        )
        self.scope["headers"] = head_fields(request, seen)
        self.request = request
        self.seen = seen
        self.answered = anyio.Event()

    async def send(self, message: Message) -> None:
        """Record it, and keep what the placeholders stand for; leave if the client would."""
        await super().send(message)
        self._remember()
        if message["type"] == "http.response.start" and self.request.leave_early:
            self.hung_up.set()
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            self.answered.set()

    async def visit(self, app: AsgiApp, stay: float) -> None:
        """Hand the request to ``app``; leave once answered, or after ``stay`` seconds."""
        async with anyio.create_task_group() as group:

            async def leave() -> None:
                with anyio.move_on_after(stay):
                    await self.answered.wait()
                self.hung_up.set()

            group.start_soon(leave)
            await self.through(app)
            group.cancel_scope.cancel()

    def _remember(self) -> None:
        self.seen.remember(self.messages[0].get("headers", []), self.body)

    def check(self) -> None:
        """What the app sent is one HTTP response, and a well-formed answer."""
        if not self.messages:
            assert self.hung_up.is_set(), "the client stayed, and got no answer"
            return
        start, *pieces = self.messages
        assert start["type"] == "http.response.start"
        assert isinstance(start["status"], int)
        headers = start.get("headers", [])
        assert all(isinstance(n, bytes) and isinstance(v, bytes) for n, v in headers)
        assert all(p["type"] == "http.response.body" for p in pieces)
        assert all(isinstance(p.get("body", b""), bytes) for p in pieces)
        assert not any(p.get("more_body", False) is False for p in pieces[:-1])
        complete = bool(pieces) and self.complete
        check_answer(
            self.request.method,
            start["status"],
            headers,
            self.body,
            complete=complete,
            left=self.hung_up.is_set(),
        )


# ------------------------------------------------------------------ the test


@dataclass(frozen=True)
class Backend:
    """Where examples run: trio on a virtual clock, or asyncio (uvicorn's) in real time.

    Attributes:
        name: anyio's name for the library.
        limits: The app's: small, so that generated heads and bodies reach them.
        stay: Seconds a client stays after its request before it leaves: past the body
            deadline, so that a stalled body met it, and past a keep-alive comment.
        bound: Seconds an example may take (its requests, each bounded by ``stay``).
        examples: How many Hypothesis draws.
    """

    name: str
    limits: HttpLimits
    stay: float
    bound: float
    examples: int

    def run(self, sequence: list[Request]) -> list[Hostile]:
        """Serve ``sequence`` (see `_serve`) on this backend."""
        options = {}
        if self.name == "trio":
            options["clock"] = trio.testing.MockClock(autojump_threshold=0)
        exchanges: list[Hostile] = anyio.run(
            _serve, self, sequence, backend=self.name, backend_options=options
        )
        return exchanges


_SMALL: Final = {"max_body_size": 4096, "max_header_count": 24, "max_header_size": 2048}
BACKENDS: Final = [
    Backend("trio", HttpLimits(**_SMALL, body_timeout=10.0), 120.0, 3600.0, examples=300),
    # (Real time: short deadlines, few draws. The code that differs is the cancellation.)
    Backend(
        "asyncio",
        HttpLimits(**_SMALL, body_timeout=0.2, sse_keepalive_interval=0.1),
        stay=0.3,
        bound=60.0,
        examples=40,
    ),
]


async def _serve(backend: Backend, sequence: list[Request]) -> list[Hostile]:
    """The primers, then ``sequence``, one at a time, beside a 2024-11-05 stream."""
    app = AsgiApp(build_server(anyio.sleep), limits=backend.limits)
    seen = Seen()
    done = []
    with anyio.fail_after(backend.bound):
        async with app.lifespan(), anyio.create_task_group() as group:
            stream = Hostile(STREAM, seen)
            group.start_soon(stream.visit, app, math.inf)
            await seen.streaming.wait()
            for request in [*PRIMERS, *sequence]:
                exchange = Hostile(request, seen)
                await exchange.visit(app, backend.stay)
                done.append(exchange)
            stream.hung_up.set()
    return [stream, *done]


def _check(exchanges: list[Hostile]) -> None:
    stream, call, initialize, initialized = exchanges[:4]
    assert [call.status, initialize.status, initialized.status] == [200, 200, 202]
    assert stream.status == 200
    assert b"event: endpoint" in stream.body
    for exchange in exchanges:
        exchange.check()


@pytest.mark.parametrize("backend", BACKENDS, ids=[backend.name for backend in BACKENDS])
def test_every_request_gets_one_well_formed_answer_and_none_crashes(backend: Backend) -> None:
    @settings(
        max_examples=backend.examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(st.lists(requests(), min_size=1, max_size=5))
    def examples(sequence: list[Request]) -> None:
        _check(backend.run(sequence))

    examples()
