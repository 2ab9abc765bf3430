"""`serve_http` is fair to its connections: none waits many rounds for its answer.

Measured in counts, never in time: every client request notes how many responses the
server gave *other* connections between the request and its answer (its "bypass
count"). A server that serves its connections in turn answers each request within a
few rounds, a round being one answer to each open connection; issue 15 found new
connections of a burst waiting hundreds of rounds (seconds under ``wrk``) while the
connections already open were served, because the accept loop took one connection per
turn of the scheduler.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
import trio

from examples.everything import build_server
from tests.transports.http_raw import (
    RawConnection,
    http_test,
    modern_body,
    modern_headers,
    running_server,
)
from transports import RECOMMENDED_BUSY_POLL

#: Connections sending requests back to back, all along.
BUSY: int = 16
#: Connections opened at once while they do, each sending one request.
BURST: int = 64
#: Rounds a fair server may make a request wait: its own turn, plus slack for the
#: order in which trio runs a turn's tasks (random), the client's own turns, and the
#: connections of the burst starting up. Measured: ~85 answers (about one round) once
#: the accept loop takes every queued connection at each turn; ~575 (7 rounds) when it
#: took one per turn, the last of the burst waiting for all the busy connections' turns.
FAIR_ROUNDS: int = 3

HEADERS = modern_headers("tools/call", "test_simple_text")
BODY = modern_body("tools/call", {"name": "test_simple_text"})


@dataclass
class _Tally:
    """What every connection's requests saw, together."""

    answered: int = 0  # responses received so far, on all connections
    worst: int = 0  # the largest bypass count of one request
    newcomers_answered: int = 0


async def _call(http: RawConnection, tally: _Tally) -> None:
    before = tally.answered
    response = await http.request(headers=HEADERS, body=BODY)
    assert response.status == 200, response
    tally.worst = max(tally.worst, tally.answered - before)
    tally.answered += 1


async def _keep_busy(
    port: int, tally: _Tally, stop: trio.Event, *, task_status: trio.TaskStatus[None]
) -> None:
    async with await RawConnection.open(port) as http:
        await _call(http, tally)
        task_status.started()
        while not stop.is_set():
            await _call(http, tally)


async def _newcomer(port: int, tally: _Tally) -> None:
    async with await RawConnection.open(port) as http:
        await _call(http, tally)
        tally.newcomers_answered += 1


@pytest.mark.parametrize("busy_poll", [0.0, RECOMMENDED_BUSY_POLL])
@http_test
async def test_a_burst_of_new_connections_waits_a_few_rounds_at_most(busy_poll: float) -> None:
    tally = _Tally()
    stop = trio.Event()
    server = build_server(trio.sleep)
    async with running_server(server, busy_poll=busy_poll) as running, trio.open_nursery() as busy:
        for _ in range(BUSY):
            await busy.start(_keep_busy, running.port, tally, stop)
        # Every busy connection is open and answered: the burst comes now.
        async with trio.open_nursery() as burst:
            for _ in range(BURST):
                burst.start_soon(_newcomer, running.port, tally)
        stop.set()
    assert tally.newcomers_answered == BURST
    assert tally.worst <= FAIR_ROUNDS * (BUSY + BURST), tally
