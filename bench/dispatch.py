"""The dispatch layer: ``tools/call`` through a whole client and server, in memory.

One operation is one call of ``get_weather`` made through a client's public API and
answered by a server's tool handler, in each era:

* ``mcpcore``: a `ClientSession` and a `mcpcore.server.Server` joined by a driver that
  hands each side's bytes to the other (`MemoryDriver`, below). Every byte is real: the
  client encodes its request, the server's `Connection` decodes and admits it, the
  `Server` validates the arguments, runs the handler and builds the result, which is
  encoded and decoded back. Modern (2026-07-28) requests carry their ``_meta`` envelope
  and results their ``resultType`` and ``serverInfo``.
* ``sdk``: ``mcp.Client`` against an in-process ``MCPServer``; ``sdk-lowlevel``: the same
  client against the low-level ``Server`` (see `bench.sdk_dispatch`). In 2026-07-28 the
  SDK's in-process path hands typed objects over without encoding them at all, so there
  it does less work than mcpcore.

All variants run in an asyncio loop, timed in batches of `bench._asyncbatch.BATCH`
calls; the rates are calls per second.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from bench._asyncbatch import BATCH, BatchRunner
from bench._layer import Context, Layer
from bench._results import MCPCORE, Target, WorkloadResult, from_samples
from mcpcore import (
    Connection,
    ErrorReceived,
    InvalidMessage,
    InvalidResponse,
    RequestReceived,
    ResponseReceived,
    types,
)
from mcpcore.client import ClientSession, Outcome
from mcpcore.server import Server
from mcpcore_cli.bench.timing import Samples, Variant, measure
from mcpcore_cli.bench.verify import BenchmarkError

__all__ = ["LAYER", "MemoryDriver", "connected_session", "run", "weather"]

INFO = types.Implementation(name="mcpcore-bench", version="1.0")
ARGUMENTS = {"location": "New York", "units": "metric"}
#: "ours vs the official SDK's in-memory client/server pair: >= 10x in both eras".
BEATS_SDK = Target("SDK >= 10x", "mcpcore/sdk", 10.0)
#: The same goal against the SDK's leanest server, which validates no arguments (and in
#: 2026-07-28 encodes no JSON): beyond the issue's comparison, kept in view.
BEATS_SDK_LOWLEVEL = Target("SDK low-level >= 10x (stretch)", "mcpcore/sdk-lowlevel", 10.0)
#: A fixed key and clock: the bench signs nothing, but a Server is built as in production.
_KEY = b"mcpcore-bench-key-of-32-bytes..."


def weather(location: str, units: str) -> str:
    """The tool's work, shared by every variant."""
    return f"Current weather in {location}: 22 degrees {'C' if units == 'metric' else 'F'}"


def build_server(*, awaited: bool = False) -> Server:
    """The mcpcore server with the one tool (``awaited``: as an ``async def``)."""
    server = Server("mcpcore-bench", "1.0", secret=_KEY, clock=lambda: 0.0)

    def get_weather(location: str, units: str = "metric") -> str:
        """The weather at a location."""
        return weather(location, units)

    async def get_weather_async(location: str, units: str = "metric") -> str:
        """The weather at a location."""
        return weather(location, units)

    server.tool(name="get_weather")(get_weather_async if awaited else get_weather)
    return server


class MemoryDriver:
    """The session's `Requester`, handing bytes straight to a `Server` and back.

    Every exchange completes inside the awaited call, so no task is needed.
    """

    def __init__(self, server: Server) -> None:
        self._server = server
        self._connection = server.connection()
        self._outbound = _ToClient(self)
        server.attach(self._connection, self._outbound)
        self.session = ClientSession(self, client_info=INFO)
        self._client: Connection = self.session.connection
        self._outcome: Outcome | None = None

    async def request(
        self, request_id: types.RequestId, data: bytes, *, timeout: float | None = None
    ) -> Outcome:
        """Requester: deliver a request, return the event that ends it."""
        server, connection = self._server, self._connection
        for event in connection.receive(data):
            if isinstance(event, RequestReceived):
                reply = await server.handle_request(connection, event, self._outbound)
                if reply is not None:
                    await self.to_client(reply)
            elif isinstance(event, InvalidMessage) and event.reply is not None:
                await self.to_client(event.reply)
        outcome, self._outcome = self._outcome, None
        if outcome is None or outcome.request_id != request_id:
            raise BenchmarkError(f"no answer to request {request_id!r}")
        return outcome

    async def send(self, data: bytes) -> None:
        """Requester: a client notification, to the server."""
        self._connection.receive(data)

    async def to_client(self, data: bytes) -> Outcome | None:
        """Deliver the server's bytes; keep the answer to our request, answer the server's."""
        answer: Outcome | None = None
        for event in self._client.receive(data):
            if isinstance(event, ResponseReceived | ErrorReceived | InvalidResponse):
                self._outcome = event
            elif isinstance(event, RequestReceived):
                reply = await self.session.handle_server_request(event)
                if reply is not None:
                    [received] = self._connection.receive(reply)
                    if isinstance(received, ResponseReceived | ErrorReceived | InvalidResponse):
                        answer = received
        return answer


class _ToClient:
    """The server's `Outbound`: notifications and (legacy) requests, to the client."""

    def __init__(self, driver: MemoryDriver) -> None:
        self._driver = driver

    async def send(self, data: bytes) -> None:
        await self._driver.to_client(data)

    async def request(self, request_id: types.RequestId, data: bytes) -> Outcome:
        answer = await self._driver.to_client(data)
        if not isinstance(answer, ResponseReceived | ErrorReceived | InvalidResponse):
            raise BenchmarkError(f"the client did not answer request {request_id!r}")
        return answer


def connected_session(era: str) -> Callable[[], Any]:
    """What opens a `ClientSession` connected to a fresh server in ``era``."""

    @asynccontextmanager
    async def opener() -> AsyncIterator[ClientSession]:
        session = MemoryDriver(build_server()).session
        await session.connect("modern" if era == "modern" else "legacy")
        yield session

    return opener


async def _call(session: ClientSession) -> types.CallToolResult:
    return await session.call_tool("get_weather", ARGUMENTS)


def _text_of(result: Any) -> str:
    [block] = result.content
    return str(block.text)


def _checked(name: str, runner: BatchRunner[Any]) -> Variant:
    """A variant whose result is checked once, outside the timing."""
    result = runner.operation()
    if _text_of(result) != weather("New York", "metric") or getattr(result, "is_error", False):
        raise BenchmarkError(f"{name}: the tool did not answer: {result!r}")
    return Variant(name, runner.operation)


_NOTES = {
    "legacy": (
        "client API to tool handler and back, asyncio, one call at a time; "
        "every variant encodes and decodes JSON-RPC",
    ),
    "modern": (
        "client API to tool handler and back, asyncio, one call at a time",
        "the SDK's in-process 2026-07-28 path hands typed objects across (no JSON); "
        "mcpcore encodes and decodes every message",
    ),
}

ERAS = (
    ("legacy", "tools/call via Server dispatch, legacy (2025-11-25)"),
    ("modern", "tools/call via Server dispatch, modern (2026-07-28)"),
)


def run(context: Context) -> list[WorkloadResult]:
    """Measure both eras."""
    results = []
    with_sdk = "sdk" in context.available
    for era, name in ERAS:
        context.log(f"dispatch: {name}")
        runners: dict[str, BatchRunner[Any]] = {MCPCORE: BatchRunner(connected_session(era), _call)}
        if with_sdk:
            from bench import sdk_dispatch

            call = sdk_dispatch.call_tool(ARGUMENTS)
            for variant, server in (
                ("sdk", sdk_dispatch.high_level_server(weather)),
                ("sdk-lowlevel", sdk_dispatch.low_level_server(weather)),
            ):
                runners[variant] = BatchRunner(sdk_dispatch.open_client(server, era), call)
        try:
            variants = [_checked(variant, runner) for variant, runner in runners.items()]
            measured = measure(variants, context.settings)
        finally:
            for runner in runners.values():
                runner.close()
        per_call = {
            variant: Samples(tuple(rate * BATCH for rate in samples.rates), samples.iterations)
            for variant, samples in measured.items()
        }
        results.append(
            from_samples(
                LAYER.name,
                name,
                size_bytes=None,
                unit="round trips/s",
                measured=per_call,
                unavailable=() if with_sdk else ("sdk", "sdk-lowlevel"),
                targets=(BEATS_SDK, BEATS_SDK_LOWLEVEL),
                notes=_NOTES[era],
            )
        )
    return results


LAYER = Layer("dispatch", "tools/call from a client's API to a server's handler, in memory", run)
