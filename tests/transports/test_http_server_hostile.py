"""`serve_http` under generated requests, written as raw HTTP/1.1: well-formed answers, no crash.

The requests of `tests.transports.hostile_requests` (a client's, often with faults), as
`tests/transports/test_asgi_hostile.py` hands them to the ASGI app, here written byte
for byte to the trio driver, one TCP connection each: fields of any bytes (a name with
a colon or a line end, a value with a CR), bodies in pieces, bodies that stop coming,
clients that leave as the answer starts. Beside them, a 2024-11-05 client's stream stays
open, after a 2025-11-25 session was opened.

Each request gets an answer whose head parses (or its client left), and that answer is
well-formed (`tests.transports.hostile_requests.check_answer`); no connection of the
server ends in an error (`tests.transports.http_raw.running_server` fails the test on
any). Real sockets, so real time, with short deadlines: a stalled body meets its
deadline within a client's stay.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Final

import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from examples.everything import build_server
from tests.transports.hostile_requests import (
    PRIMERS,
    SSE_SESSION,
    STREAM,
    Fields,
    Request,
    Seen,
    check_answer,
    head_fields,
    requests,
)
from tests.transports.http_raw import RawConnection, running_server
from transports import HttpLimits

#: The server's limits: small sizes, so that generated heads and bodies reach them, and
#: short deadlines (real time).
LIMITS: Final = HttpLimits(
    max_body_size=4096,
    max_header_count=24,
    max_header_size=2048,
    body_timeout=0.2,
    header_timeout=0.2,
    sse_keepalive_interval=0.1,
)
#: Seconds a client waits for its answer to end before it leaves: past the deadlines.
STAY: Final = 0.4
#: Seconds an example may take.
EXAMPLE_BOUND: Final = 60.0
#: Exceptions of a write to a server that closed the connection first (it refused the
#: head before the body came, say): the client goes on to read the answer.
_WRITE_REFUSED: Final = (trio.BrokenResourceError, trio.ClosedResourceError)


@dataclass
class Visit:
    """One request written to the server, and what came back."""

    request: Request
    status: int = 0
    headers: Fields = field(default_factory=list)
    body: bytes = b""
    complete: bool = False
    left: bool = False

    def check(self) -> None:
        """A head came (unless the client left first), and a well-formed answer."""
        if not self.status:
            assert self.left, "the server closed the connection without an answer"
            return
        check_answer(
            self.request.method,
            self.status,
            self.headers,
            self.body,
            complete=self.complete,
            left=self.left,
        )


def _bytes(request: Request, seen: Seen) -> list[bytes]:
    """The request's head and body pieces as written (the last held back if it stalls)."""
    query = request.query.replace(SSE_SESSION.encode(), seen.sse_session)
    target = request.path.encode() + (b"?" + query if query else b"")
    head = request.method.encode() + b" " + target + b" HTTP/1.1\r\n"
    head += b"".join(name + b": " + value + b"\r\n" for name, value in head_fields(request, seen))
    body = request.body
    bounds = [0, *request.cuts, len(body)]
    pieces = [body[a:b] for a, b in itertools.pairwise(bounds)]
    if request.stall:
        pieces = pieces[:-1]
    return [head + b"\r\n", *pieces]


async def _visit(port: int, request: Request, seen: Seen, stay: float) -> Visit:
    """Write ``request`` on a new connection; read its answer until it ends or ``stay``."""
    visit = Visit(request)
    async with await RawConnection.open(port) as http:
        try:
            for piece in _bytes(request, seen):
                await http.send(piece)
        except _WRITE_REFUSED:
            pass
        with trio.move_on_after(stay) as waited:
            try:
                head = await http.read_head()
            except EOFError:
                return visit  # (checked: no answer)
            visit.status = head.status
            visit.headers = [
                (k.encode("latin-1"), v.encode("latin-1")) for k, v in head.headers.items()
            ]
            seen.remember(visit.headers, b"")
            if request.leave_early or request.method == "HEAD":
                visit.left = request.leave_early
                visit.complete = request.method == "HEAD"
                return visit
            while chunk := await http.read_chunk():
                visit.body += chunk
                seen.remember(visit.headers, visit.body)
            visit.complete = True
        visit.left = waited.cancelled_caught
    return visit


@asynccontextmanager
async def _stream(port: int, seen: Seen) -> AsyncIterator[None]:
    """A 2024-11-05 client's stream, open (and read) for the block, once it is served."""
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_visit, port, STREAM, seen, float("inf"))
        await seen.streaming.wait()  # (its endpoint event came: it fills SSE_SESSION)
        yield
        nursery.cancel_scope.cancel()


async def _serve(sequence: list[Request]) -> list[Visit]:
    """The primers, then ``sequence``, one connection each, beside a 2024-11-05 stream."""
    seen = Seen()
    visits = []
    with trio.fail_after(EXAMPLE_BOUND):
        async with (
            running_server(build_server(trio.sleep), limits=LIMITS) as server,
            _stream(server.port, seen),
        ):
            for request in [*PRIMERS, *sequence]:
                visits.append(await _visit(server.port, request, seen, STAY))
    return visits


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(requests(), min_size=1, max_size=5))
def test_every_request_gets_one_well_formed_answer_and_no_connection_fails(
    sequence: list[Request],
) -> None:
    visits = trio.run(_serve, sequence)
    assert [visit.status for visit in visits[: len(PRIMERS)]] == [200, 200, 202]
    for visit in visits:
        visit.check()
