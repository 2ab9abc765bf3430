"""Every benchmark row runs mcpcore and its raw ceiling under one IO policy (issue 16).

A ceiling that sleeps between messages next to an mcpcore that busy-polls is no ceiling:
"vs ceiling" passes 1 by unequal rules. These tests check how each row's variants are
configured, and that a variant's client and server are then given exactly that budget
(real server processes, their command lines read back; the ceilings' own registrations
recorded), never a timing.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio
from hypothesis import given
from hypothesis import strategies as st

import bench._busy_poll
import transports
from bench import stdio, storms, streamable_http, websocket
from bench._busy_poll import (
    OFF,
    RECOMMENDED_BUSY_POLL,
    parse_server_arguments,
    server_arguments,
)
from bench._http_ceiling import open_ceiling_http, serve_ceiling_http
from bench._layer import Context
from bench._optional import Availability
from bench._process_layer import ProcessVariant, Workload, rows
from bench._stdio_runner import child_processes
from bench._stdio_servers import serve_ceiling
from bench._workload_servers import serve_progress_ceiling
from bench._ws_ceiling import open_ceiling_ws, serve_ceiling_ws
from bench.stdio import EXPECTED_TEXT, exchanged_lines
from mcpcore_cli.bench.timing import Settings

#: Any budget but the recommended one: the rows must follow ``--busy-poll``.
BUDGET = 0.000321
#: The process layers: their variants for a context, and their workloads.
LAYERS: dict[str, tuple[Callable[[Context], list[ProcessVariant]], tuple[Workload, ...]]] = {
    "stdio": (stdio.variants, stdio.WORKLOADS),
    "http json": (
        functools.partial(streamable_http.variants, replies="json"),
        streamable_http.WORKLOADS,
    ),
    "http sse": (
        functools.partial(streamable_http.variants, replies="sse"),
        streamable_http.WORKLOADS,
    ),
    "websocket": (websocket.variants, websocket.WORKLOADS),
}


def context(busy_poll: float = BUDGET) -> Context:
    """A run's context whose busy-polling rows use ``busy_poll`` (the SDK if installed)."""
    return Context(
        Settings(repeat=1, target_seconds=0.01, quick=True), Availability(), busy_poll=busy_poll
    )


# ------------------------------------------------------------ the rows' definitions


@pytest.mark.parametrize("layer", LAYERS)
def test_every_row_has_mcpcore_and_its_ceiling_under_one_budget(layer: str) -> None:
    build, workloads = LAYERS[layer]
    run = context()
    variants = build(run)
    for workload in workloads:
        grouped = rows(variants, workload.budgets(run))
        # Sequential: a row per era with busy polling off, and one with it on.
        expected = {OFF, BUDGET} if workload.in_flight == 1 else {OFF}
        assert {budget for _, budget in grouped} == expected, workload.key
        assert len(grouped) == 2 * len(expected), workload.key  # (both eras)
        for (era, budget), row in grouped.items():
            columns = {variant.column: variant for variant in row}
            assert len(columns) == len(row), (era, budget)  # one variant per column
            assert columns["mcpcore"].busy_poll == budget, (workload.key, era)
            assert columns["ceiling"].busy_poll == budget, (workload.key, era)
            assert {variant.era for variant in row} == {era}
            # The SDK can't spin: the same variant (measured once) in both rows.
            if "sdk" in columns:
                assert columns["sdk"].busy_poll is None


@pytest.mark.parametrize("layer", LAYERS)
def test_a_zero_budget_leaves_the_busy_polling_rows_out(layer: str) -> None:
    build, workloads = LAYERS[layer]
    run = context(busy_poll=0.0)
    variants = build(run)
    assert {variant.busy_poll for variant in variants} <= {OFF, None}
    for workload in workloads:
        assert {budget for _, budget in rows(variants, workload.budgets(run))} == {OFF}


def test_by_default_the_busy_polling_rows_use_the_recommended_budget() -> None:
    assert RECOMMENDED_BUSY_POLL > 0
    assert Context(Settings(repeat=1, target_seconds=0.01), Availability()).busy_poll == (
        RECOMMENDED_BUSY_POLL
    )


def test_the_storms_run_mcpcore_and_the_ceiling_with_busy_polling_off() -> None:
    assert storms.STORMS_BUSY_POLL == OFF
    variants = storms.progress_variants(context(), 10, BUDGET)
    columns = {variant.column: variant.busy_poll for variant in variants}
    assert columns["mcpcore"] == columns["ceiling"] == BUDGET
    assert columns.get("sdk") is None


@given(
    st.floats(min_value=0, allow_infinity=False, allow_nan=False),
    st.lists(st.text(st.characters(blacklist_characters="\0"), max_size=8), max_size=4),
)
def test_a_server_script_reads_back_the_budget_it_was_given(budget: float, rest: list[str]) -> None:
    assert parse_server_arguments([*server_arguments(budget), *rest]) == (budget, rest)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [([], (OFF, [])), (["mcpcore"], (OFF, ["mcpcore"])), (["--busy-poll=0"], (0.0, []))],
)
def test_without_the_option_a_server_script_does_not_busy_poll(
    argv: list[str], expected: tuple[float, list[str]]
) -> None:
    assert parse_server_arguments(argv) == expected


@pytest.mark.parametrize("value", ["-1", "nan", "inf", "soon", ""])
def test_a_bad_budget_is_refused(value: str) -> None:
    with pytest.raises(ValueError, match=r"busy-poll|float"):
        parse_server_arguments([f"--busy-poll={value}", "mcpcore"])


# ------------------------------------------------------------ what the processes get


class Recorder:
    """What `transports.BusyPolling` (through `bench._busy_poll`) and the openers were given."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.registered: list[tuple[int, float]] = []  # (descriptor, budget)
        self.opened: list[float] = []  # busy_poll= of each transports.open_*_client
        recorder = self

        class RecordingBusyPolling(transports.BusyPolling):
            def __init__(self, fd: int, budget: float) -> None:
                recorder.registered.append((fd, budget))
                super().__init__(fd, budget)

        monkeypatch.setattr(bench._busy_poll, "BusyPolling", RecordingBusyPolling)
        for name in ("open_stdio_client", "open_http_client", "open_websocket_client"):
            monkeypatch.setattr(transports, name, self._recording(getattr(transports, name)))

    def _recording(self, opener: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(opener)
        def recording(*args: Any, **kwargs: Any) -> Any:
            self.opened.append(kwargs["busy_poll"])
            return opener(*args, **kwargs)

        return recording

    @property
    def budgets(self) -> set[float]:
        return {budget for _, budget in self.registered}


def server_budgets() -> list[float]:
    """The ``--busy-poll`` of each bench server process this process has running."""
    budgets = []
    for pid in child_processes():
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
        except OSError:  # (gone meanwhile)
            continue
        if any(arg.startswith(bench._busy_poll.OPTION) for arg in argv):
            budgets.append(parse_server_arguments(argv[2:])[0])
    return budgets


async def observe(variant: ProcessVariant) -> list[float]:
    """Open ``variant`` (its server starts), make one call; its servers' budgets."""
    async with variant.opener() as client:
        assert variant.text_of(await variant.call(client)) == EXPECTED_TEXT
        return server_budgets()


@pytest.mark.parametrize("layer", LAYERS)
def test_a_busy_polling_row_gives_its_budget_to_every_client_and_server(
    layer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorder = Recorder(monkeypatch)
    build, workloads = LAYERS[layer]
    run = context()
    [sequential] = [workload for workload in workloads if workload.in_flight == 1]
    row = rows(build(run), sequential.budgets(run))["legacy", BUDGET]
    variants = {variant.column: variant for variant in row}
    # mcpcore: its server process and its client (transports' busy_poll=).
    assert trio.run(observe, variants["mcpcore"]) == [BUDGET]
    assert recorder.opened == [BUDGET]
    assert recorder.registered == []
    # The ceiling: its server process, and its client's own registrations.
    assert trio.run(observe, variants["ceiling"]) == [BUDGET]
    assert recorder.registered
    assert recorder.budgets == {BUDGET}
    assert recorder.opened == [BUDGET]  # (no transports client of its own)


def test_the_progress_storm_gives_its_budget_to_both_clients_and_servers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    recorder = Recorder(monkeypatch)
    variants = storms.progress_variants(context(), 3, BUDGET)
    columns = {variant.column: variant for variant in variants}

    async def open_both() -> list[float]:
        budgets = []
        for column in ("mcpcore", "ceiling"):
            async with columns[column].opener() as client:
                outcome = await columns[column].storm(client)
                assert outcome.problem is None, column
                budgets += server_budgets()
        return budgets

    assert trio.run(open_both) == [BUDGET, BUDGET]
    assert recorder.opened == [BUDGET]
    assert recorder.budgets == {BUDGET}


# ------------------------------------------------------------ the ceilings' servers

#: The ceilings' servers get another budget than their clients here, to tell them apart.
SERVER_BUDGET = 0.000123


def result_of(era: str) -> Any:
    """The result mcpcore's server sends in ``era``, as the ceilings answer with it."""
    return msgspec.json.decode(exchanged_lines(era)[1])["result"]


@asynccontextmanager
async def tcp_server(serve: Callable[..., Any], *args: Any, **kwargs: Any) -> AsyncIterator[int]:
    """``serve`` running on a free port of 127.0.0.1 until the block ends; the port."""
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(functools.partial(serve, 0, *args, **kwargs))
        yield listeners[0].socket.getsockname()[1]
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize("sse", [False, True])
def test_the_http_ceiling_busy_polls_each_connection_on_both_sides(
    sse: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorder = Recorder(monkeypatch)
    request = exchanged_lines("modern")[0]

    async def exchange() -> None:
        server = functools.partial(serve_ceiling_http, sse=sse, busy_poll=SERVER_BUDGET)
        async with (
            tcp_server(server, result_of("modern")) as port,
            open_ceiling_http(port, request, [], sse=sse, busy_poll=BUDGET) as client,
        ):
            assert stdio.ceiling_text(await client.call()) == EXPECTED_TEXT

    trio.run(exchange)
    # One connection: the client's socket and the server's, each with its side's budget.
    assert sorted(budget for _, budget in recorder.registered) == [SERVER_BUDGET, BUDGET]
    assert len({fd for fd, _ in recorder.registered}) == 2


def test_the_websocket_ceiling_busy_polls_its_socket_on_both_sides(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    recorder = Recorder(monkeypatch)
    request = exchanged_lines("legacy")[0]

    async def exchange() -> None:
        server = functools.partial(serve_ceiling_ws, busy_poll=SERVER_BUDGET)
        async with (
            tcp_server(server, result_of("legacy")) as port,
            open_ceiling_ws(port, request, busy_poll=BUDGET) as client,
        ):
            assert stdio.ceiling_text(await client.call()) == EXPECTED_TEXT

    trio.run(exchange)
    assert sorted(budget for _, budget in recorder.registered) == [SERVER_BUDGET, BUDGET]
    assert len({fd for fd, _ in recorder.registered}) == 2


@contextlib.contextmanager
def pipes() -> Iterator[tuple[int, int, int, int]]:
    """A server's stdin and stdout as pipes: (its stdin, ours to it, ours from it, its stdout)."""
    stdin, to_server = os.pipe()
    from_server, stdout = os.pipe()
    try:
        yield stdin, to_server, from_server, stdout
    finally:
        for fd in (stdin, to_server, from_server, stdout):
            os.close(fd)


async def answer_lines(
    serve: Callable[..., Any], request: bytes, last: Callable[[Any], bool]
) -> list[Any]:
    """Run a stdio server on pipes, send it ``request``; the lines until ``last`` holds."""
    with pipes() as (stdin, to_server, from_server, stdout):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(functools.partial(serve, stdin_fd=stdin, stdout_fd=stdout))
            sending = trio.lowlevel.FdStream(os.dup(to_server))
            receiving = trio.lowlevel.FdStream(os.dup(from_server))
            async with sending, receiving:
                await sending.send_all(request + b"\n")
                received = b""
                lines: list[Any] = []
                while not lines or not last(lines[-1]):
                    received += await receiving.receive_some()
                    *complete, received = received.split(b"\n")
                    lines += [msgspec.json.decode(line) for line in complete]
            nursery.cancel_scope.cancel()
    return lines


def test_the_stdio_ceiling_server_busy_polls_its_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    recorder = Recorder(monkeypatch)
    serve = functools.partial(serve_ceiling, result_of("legacy"), SERVER_BUDGET)
    request = exchanged_lines("legacy")[0]
    [answer] = trio.run(answer_lines, serve, request, lambda line: True)
    assert stdio.ceiling_text(answer["result"]) == EXPECTED_TEXT
    assert recorder.budgets == {SERVER_BUDGET}
    assert len(recorder.registered) == 1


def test_the_progress_ceiling_server_busy_polls_its_stdin(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    recorder = Recorder(monkeypatch)
    request = msgspec.json.encode(
        {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {
                "name": "progress_storm",
                "arguments": {"count": 3},
                "_meta": {"progressToken": "t"},
            },
        }
    )
    serve = functools.partial(serve_progress_ceiling, SERVER_BUDGET)
    lines = trio.run(answer_lines, serve, request, lambda line: line.get("id") == 7)
    assert [line["params"]["progress"] for line in lines[:-1]] == [1, 2, 3]
    assert recorder.budgets == {SERVER_BUDGET}
    assert len(recorder.registered) == 1
