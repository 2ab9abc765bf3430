"""Busy polling (transports._runtime.busypoll): the spin before the loop sleeps, and its bounds."""

from __future__ import annotations

import inspect
import os
import ssl
import threading
from collections.abc import Callable, Iterator
from contextlib import AsyncExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

import transports
from tests.transports.http_raw import build_test_server, running_server
from tests.transports.trio_helpers import PYTHON, REPOSITORY, trio_test
from tests.transports.ws_raw import running_ws
from transports import (
    RECOMMENDED_BUSY_POLL,
    open_http_client,
    open_stdio_client,
    open_websocket_client,
)
from transports._runtime import busypoll as _busypoll
from transports._runtime.busypoll import MAX_BACKOFF, SHORT_SLEEP_BUDGETS, BusyPolling, _BusyPoll

EVERYTHING = str(REPOSITORY / "examples" / "everything.py")


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    yield read_fd, write_fd
    os.close(read_fd)
    os.close(write_fd)


class _Clock:
    """A clock that moves only when told, or by ``step`` at every reading."""

    def __init__(self, step: float = 0.0) -> None:
        self.now = 0.0
        self.step = step
        self.readings = 0

    def __call__(self) -> float:
        self.readings += 1
        self.now += self.step
        return self.now


@contextmanager
def _watching(
    clock: _Clock, fd: int, budget: float, poller: _BusyPoll | None = None
) -> Iterator[_BusyPoll]:
    """A poller on ``clock`` (or ``poller``) watching ``fd`` for the block."""
    poller = poller or _BusyPoll(clock)
    poller.add(fd, budget)
    try:
        yield poller
    finally:
        poller.remove(fd, budget)


@trio_test
async def test_a_spin_returns_as_soon_as_a_registered_descriptor_has_data(
    pipe: tuple[int, int],
) -> None:
    read_fd, write_fd = pipe
    clock = _Clock(step=1e-6)
    with _watching(clock, read_fd, 1.0) as poller:
        os.write(write_fd, b"x")
        poller.before_io_wait(10.0)
        assert clock.readings == 1  # the deadline only: the first probe found the data
        poller.after_io_wait(10.0)
        os.read(read_fd, 1)
        clock.readings = 0
        poller.before_io_wait(10.0)  # still spinning: nothing caught, so the budget runs out
        assert clock.now == pytest.approx(1.0, abs=1e-5)


@trio_test
async def test_a_spin_that_catches_nothing_switches_spinning_off_until_a_short_sleep(
    pipe: tuple[int, int],
) -> None:
    read_fd, _ = pipe
    clock = _Clock(step=1e-6)
    with _watching(clock, read_fd, 100e-6) as poller:
        poller.before_io_wait(10.0)  # spins the budget, catches nothing
        spun = clock.readings
        assert spun > 50
        clock.now += 5.0  # a long sleep: the peer is slow
        poller.after_io_wait(10.0)
        clock.readings = 0
        poller.before_io_wait(10.0)
        assert clock.readings == 1  # no spin: only the time it went to sleep
        clock.now += 50e-6  # a sleep shorter than the budget: a spin would have caught it
        poller.after_io_wait(10.0)
        clock.readings = 0
        poller.before_io_wait(10.0)
        assert clock.readings > 50  # spinning again


@trio_test
async def test_misses_in_a_row_back_off_and_a_catch_resets_the_backoff(
    pipe: tuple[int, int],
) -> None:
    read_fd, write_fd = pipe
    clock = _Clock(step=1e-6)
    budget = 100e-6
    poller = _BusyPoll(clock)

    def wait(slept: float, data: bool = False) -> bool:
        """One idle turn of the loop: whether it spun."""
        if data:
            os.write(write_fd, b"x")
        spun = poller._short_sleeps_due <= 0
        poller.before_io_wait(10.0)
        clock.now += slept
        poller.after_io_wait(10.0)
        if data:
            os.read(read_fd, 1)
        return spun

    with _watching(clock, read_fd, budget, poller):
        short = SHORT_SLEEP_BUDGETS * budget * 0.9  # (wake-ups included: a spin may catch it)
        # After the n-th miss in a row, 2**(n-1) short sleeps (the miss's own included).
        assert wait(short)  # miss 1: its own short sleep brings spinning back
        assert wait(short)  # miss 2: two short sleeps
        assert not wait(short)
        assert wait(short, data=True)  # spins, and catches: the backoff is over
        assert wait(short)  # miss 1 again
        assert wait(short)  # miss 2
        assert not wait(short)
        assert wait(short)  # miss 3: four short sleeps
        assert [wait(short) for _ in range(4)] == [False, False, False, True]  # (miss 4)
        assert not wait(5.0)  # a long sleep does not count: still 7 short ones due
        assert [wait(short) for _ in range(8)] == [False] * 7 + [True]
        # A peer that stays too slow: spins come ever rarer, up to one per 2**(n-1) waits.
        spins = sum(wait(SHORT_SLEEP_BUDGETS * budget * 0.9) for _ in range(200))
        assert spins <= 2 + MAX_BACKOFF + 200 // 2 ** (MAX_BACKOFF - 1)


@trio_test
async def test_no_spin_when_tasks_are_runnable_or_past_the_loops_deadline(
    pipe: tuple[int, int],
) -> None:
    read_fd, _ = pipe
    clock = _Clock(step=1e-6)
    with _watching(clock, read_fd, 1.0) as poller:
        poller.before_io_wait(0.0)  # the loop only polls: tasks are runnable
        assert clock.readings == 0
        poller.before_io_wait(20e-6)  # a deadline comes first: the spin stops there
        assert clock.now == pytest.approx(20e-6, abs=3e-6)


@trio_test
async def test_the_budget_is_the_largest_registered_one(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    clock = _Clock(step=1e-6)
    poller = _BusyPoll(clock)
    poller.add(read_fd, 10e-6)
    poller.add(write_fd, 30e-6)  # (never readable: a pipe's write end)
    poller.before_io_wait(1.0)
    assert clock.now == pytest.approx(30e-6, abs=3e-6)
    poller.remove(write_fd, 30e-6)
    poller.after_io_wait(1.0)  # (slept 0 s: spinning stays on)
    clock.now = 0.0
    poller.before_io_wait(1.0)
    assert clock.now == pytest.approx(10e-6, abs=3e-6)
    poller.remove(read_fd, 10e-6)


@trio_test
async def test_a_task_waiting_on_a_busy_polled_pipe_gets_data_written_later(
    pipe: tuple[int, int],
) -> None:
    read_fd, write_fd = pipe
    chunks = []
    with BusyPolling(read_fd, 200e-6):
        for delay in (0.0, 50e-6, 0.02):  # caught by the spin, near its end, after a sleep
            writer = threading.Timer(delay, os.write, (write_fd, b"ping"))
            writer.start()
            await trio.lowlevel.wait_readable(read_fd)  # (trio_test bounds the wait)
            chunks.append(os.read(read_fd, 100))
            writer.join()
    assert chunks == [b"ping"] * 3


@trio_test
async def test_registrations_share_one_instrument_removed_with_the_last(
    pipe: tuple[int, int],
) -> None:
    read_fd, write_fd = pipe
    first = BusyPolling(read_fd, 100e-6)
    second = BusyPolling(read_fd, 100e-6)  # (the same descriptor twice: counted)
    poller = _busypoll._RUN_POLLER.get()
    first.close()
    first.close()  # idempotent
    assert _installed(poller)  # the second registration still holds it
    second.close()
    assert not _installed(poller)  # uninstalled: the loop sleeps at once again
    # And it can be installed again in the same run.
    with BusyPolling(write_fd, 100e-6):
        assert _installed(poller)
    assert not _installed(poller)


def _installed(poller: _BusyPoll) -> bool:
    return poller._probe is not None


@trio_test
async def test_nothing_is_registered_without_a_budget_or_a_second_cpu(
    pipe: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    read_fd, _ = pipe
    with BusyPolling(read_fd, 0.0), pytest.raises(LookupError):
        _busypoll._RUN_POLLER.get()
    monkeypatch.setattr(_busypoll, "_CAN_SPIN", False)
    with BusyPolling(read_fd, 200e-6), pytest.raises(LookupError):
        _busypoll._RUN_POLLER.get()


@trio_test
async def test_a_regular_file_is_not_watched(tmp_path: Path, pipe: tuple[int, int]) -> None:
    # (epoll refuses regular files, which are always readable anyway: `server < file`.)
    path = tmp_path / "requests.jsonl"
    path.write_bytes(b"{}\n")
    fd = os.open(path, os.O_RDONLY)
    try:
        with BusyPolling(fd, 200e-6):
            assert not _installed(_busypoll._RUN_POLLER.get())
        read_fd, _ = pipe
        with BusyPolling(read_fd, 200e-6), BusyPolling(fd, 200e-6):
            assert _installed(_busypoll._RUN_POLLER.get())  # the pipe still is
    finally:
        os.close(fd)


def test_socket_fd_sees_through_tls_and_refuses_other_streams() -> None:
    async def main() -> None:
        left, right = trio.socket.socketpair()
        stream = trio.SocketStream(left)
        assert _busypoll.socket_fd(stream) == left.fileno()
        tls = trio.SSLStream(stream, ssl.create_default_context())
        assert _busypoll.socket_fd(tls) == left.fileno()
        assert _busypoll.socket_fd(trio.testing.memory_stream_pair()[0]) == -1
        await stream.aclose()
        right.close()

    trio.run(main)


# ------------------------------------------------------ opt-in, and scoped to who asks


@pytest.fixture
def instruments_added(monkeypatch: pytest.MonkeyPatch) -> list[trio.abc.Instrument]:
    """Every instrument added to a trio run from now on (recorded, then added)."""
    added: list[trio.abc.Instrument] = []
    add = trio.lowlevel.add_instrument

    def record(instrument: trio.abc.Instrument) -> None:
        added.append(instrument)
        add(instrument)

    monkeypatch.setattr(trio.lowlevel, "add_instrument", record)
    return added


OPENERS_AND_SERVERS: list[Callable[..., Any]] = [
    transports.serve_stdio,
    transports.serve_http,
    transports.serve_websocket,
    transports.open_stdio_client,
    transports.open_http_client,
    transports.open_websocket_client,
]


@pytest.mark.parametrize("function", OPENERS_AND_SERVERS, ids=lambda f: f.__name__)
def test_busy_polling_is_off_by_default_everywhere(function: Callable[..., Any]) -> None:
    assert inspect.signature(function).parameters["busy_poll"].default == 0


@trio_test
async def test_an_application_that_never_asks_gets_no_instrument_and_no_spin(
    instruments_added: list[trio.abc.Instrument],
) -> None:
    # Every transport, both sides in this run (stdio's server is a subprocess).
    server, _ = build_test_server()
    async with (
        running_ws(server) as ws_port,
        running_server(server) as http,
        AsyncExitStack() as clients,
    ):
        for opening in (
            open_websocket_client(f"ws://127.0.0.1:{ws_port}/ws"),
            open_http_client(f"http://127.0.0.1:{http.port}/mcp"),
            open_stdio_client(PYTHON, [EVERYTHING, "--transport", "stdio"]),
        ):
            client = await clients.enter_async_context(opening)
            result = await client.call_tool("test_simple_text")
            assert not result.is_error
    assert instruments_added == []
    with pytest.raises(LookupError):
        _busypoll._RUN_POLLER.get()  # no poller was ever made in this run


@trio_test
async def test_one_connection_asking_watches_its_own_socket_only(
    instruments_added: list[trio.abc.Instrument],
) -> None:
    server, _ = build_test_server()
    async with running_ws(server) as port:
        url = f"ws://127.0.0.1:{port}/ws"
        async with open_websocket_client(url) as quiet:
            async with open_websocket_client(url, busy_poll=RECOMMENDED_BUSY_POLL) as eager:
                await eager.call_tool("test_simple_text")
                await quiet.call_tool("test_simple_text")
                [poller] = instruments_added
                assert isinstance(poller, _BusyPoll)
                # Only the asking client's socket is probed, with its budget; the
                # other client's socket and the server's sockets are not.
                assert list(poller._budgets.values()) == [[RECOMMENDED_BUSY_POLL]]
                assert poller._budget == RECOMMENDED_BUSY_POLL
            # The asking connection closed: the instrument left the run, while the
            # other connection goes on without it.
            assert not _installed(poller)
            assert poller._budgets == {}
            result = await quiet.call_tool("test_simple_text")
            assert not result.is_error
    assert len(instruments_added) == 1
