"""`open_websocket_client`: a `Client` over one WebSocket, the same API as over stdio.

A WebSocket carries whole JSON-RPC messages both ways on one connection, as stdio's
pipes do, so the client's runtime is stdio's: a `transports._client.stream.StreamDriver`
(one reader that never runs user code, calls cancelled with ``notifications/cancelled``,
listen streams told apart by ``subscriptionId``, legacy server requests answered in
tasks of their own); its `WebSocketLink` reads the messages from a
`transports._websocket.channel.WebSocketChannel` and writes them as masked text frames.

``auth=`` authenticates the opening handshake as the HTTP client authenticates its
requests: a bearer token (or a callable asked again after a 401), or `transports.OAuth`,
whose flow runs when the handshake is refused with 401 (or 403 ``insufficient_scope``),
after which the handshake is made again on a new connection, the token in it. The
resource's metadata is fetched over HTTP(S) from the same origin (``ws`` → ``http``,
``wss`` → ``https``).

The connection is watched with pings: a server that stops answering (and sends
nothing else) for `WebSocketLimits.pong_timeout` fails every pending call with
`ConnectionClosedError`, as does the server's Close frame (its code in the message) or
a connection lost. Closing the client sends a Close frame (1000), waits a little for
the server's (`WebSocketLimits.close_timeout`), and closes the connection.
"""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import AsyncIterator, Mapping
from contextlib import aclosing, asynccontextmanager
from typing import cast

import trio
from wsproto.connection import Connection
from wsproto.frame_protocol import CloseReason

from mcpcore.client import (
    DEFAULT_PROBE_TIMEOUT,
    ClientCallbacks,
    ConnectMode,
)
from mcpcore.types import Implementation
from transports._client.calls import DEFAULT_TIMEOUT, MAX_TOTAL_TIMEOUT
from transports._client.client import CLIENT_INFO, Client
from transports._client.errors import ConnectionClosedError
from transports._client.notifications import (
    NotificationCallback,
    NotificationDispatcher,
)
from transports._client.opening import ClientSettings, open_client
from transports._client.stream import StreamDriver
from transports._http.client.auth import Authenticator, BearerAuth, HttpAuth
from transports._http.client.oauth import OAuth
from transports._net.client_connection import peer_address
from transports._net.errors import HttpStatusError
from transports._net.pool import CONNECT_TIMEOUT
from transports._runtime.busypoll import BusyPolling, socket_fd
from transports._websocket.channel import WebSocketChannel
from transports._websocket.handshake import (
    WebSocketUrl,
    connect,
    header_fields,
    open_handshake,
    parse_ws_url,
)
from transports._websocket.limits import WebSocketLimits

# The refusals an authenticator is told about: 401 (no or a bad token), 403 (scope).
_CHALLENGES = frozenset({401, 403})
_GET = b"GET"

__all__ = ["WebSocketClient", "WebSocketLink", "open_websocket_client"]


class WebSocketClient(Client):
    """A `Client` whose server is reached over a WebSocket (see `open_websocket_client`)."""

    @property
    def _websocket(self) -> WebSocketLink:
        # (`open_websocket_client` gives every WebSocketClient a StreamDriver of one.)
        return cast("StreamDriver[WebSocketLink]", self._transport).link

    @property
    def url(self) -> str:
        """The server's WebSocket URL, as given."""
        return self._websocket.url.text

    @property
    def subprotocol(self) -> str | None:
        """The subprotocol the server selected (``"mcp"``), or None if it selected none."""
        return self._websocket.subprotocol

    @property
    def close_code(self) -> int | None:
        """The code of the server's Close frame, once one came (1000, 1001, 1009...)."""
        close = self._websocket.channel.peer_close
        return None if close is None else close[0]


@asynccontextmanager
async def open_websocket_client(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    auth: HttpAuth | OAuth | None = None,
    callbacks: ClientCallbacks | None = None,
    on_notification: NotificationCallback | None = None,
    client_info: Implementation = CLIENT_INFO,
    mode: ConnectMode = "auto",
    timeout: float = DEFAULT_TIMEOUT,
    probe_timeout: float = DEFAULT_PROBE_TIMEOUT,
    max_total_timeout: float = MAX_TOTAL_TIMEOUT,
    cache: bool = True,
    ssl_context: ssl.SSLContext | None = None,
    connect_timeout: float = CONNECT_TIMEOUT,
    limits: WebSocketLimits | None = None,
    busy_poll: float = 0.0,
) -> AsyncIterator[WebSocketClient]:
    """Connect to an MCP server over WebSocket and yield a connected client.

        async with open_websocket_client("ws://127.0.0.1:8000/ws") as client:
            result = await client.call_tool("add", {"a": 1, "b": 2})

    One JSON-RPC message per text frame, subprotocol ``mcp`` (the shape of the
    TypeScript SDK v1 and Python SDK 1.x; WebSocket is not part of the MCP
    specification). The era is chosen as ``mode`` says, as on stdio (``auto``: a
    2026-07-28 ``server/discover`` probe, then the ``initialize`` handshake).

    Args:
        url: The server's endpoint, ``ws://`` or ``wss://``.
        headers: Extra headers for the opening handshake.
        auth: A bearer token, or a callable (sync or async) returning one (asked again
            when the handshake is refused with 401), or `OAuth`: the client authorizes
            itself when the handshake is refused, and makes it again.
        callbacks: Elicitation, sampling and roots (they set what the client declares).
        on_notification: Called with each notification that is not on a listen
            stream, one at a time in a task of its own (see `open_stdio_client`).
        client_info: Our name and version.
        mode: ``"auto"``, ``"legacy"`` or ``"modern"``.
        timeout: Seconds each request waits by default, ``initialize`` included.
        probe_timeout: Seconds to wait for the ``server/discover`` probe.
        max_total_timeout: The hard limit of a call whose timeout progress resets.
        cache: Keep 2026-07-28 results for as long as their ``ttlMs`` allows.
        ssl_context: For ``wss``: the TLS settings; by default the system's
            certificate store, with verification.
        connect_timeout: Seconds to open the TCP (and TLS) connection.
        limits: Message size, pings, handshake and close timeouts (`WebSocketLimits`).
        busy_poll: Seconds to spin, at most, waiting for the server's next message before
            the event loop sleeps; 0 (the default) never spins. Opt in with
            `transports.RECOMMENDED_BUSY_POLL` (see `transports.BusyPolling`).

    Raises:
        ValueError: A bad URL, or a header the handshake sets itself.
        ConnectionClosedError: The server could not be reached, or went away.
        HttpStatusError: The server refused the handshake (401, 403, 404...).
        OAuthError: With `OAuth`: the authorization failed or was refused.
    """
    settings = ClientSettings(
        callbacks=callbacks,
        on_notification=on_notification,
        client_info=client_info,
        mode=mode,
        timeout=timeout,
        probe_timeout=probe_timeout,
        max_total_timeout=max_total_timeout,
        cache=cache,
    )
    parsed = parse_ws_url(url)
    fields = header_fields(headers)
    if auth is not None and any(name.lower() == b"authorization" for name, _ in fields):
        raise ValueError("pass the token either as auth= or as a header, not both")
    limits = limits or WebSocketLimits()
    opening = _Opening(parsed, fields, _authenticator(auth, parsed), ssl_context, connect_timeout)
    stream, protocol, subprotocol = await opening.open(limits.handshake_timeout)
    try:
        with BusyPolling(socket_fd(stream), busy_poll):  # (closed before the descriptor)
            link = WebSocketLink(
                parsed,
                stream,
                WebSocketChannel(stream, protocol, limits),
                subprotocol=subprotocol,
                close_timeout=limits.close_timeout,
            )

            def connect_driver(
                nursery: trio.Nursery, notifications: NotificationDispatcher | None
            ) -> StreamDriver[WebSocketLink]:
                return StreamDriver(nursery, link, timeout=timeout, notifications=notifications)

            async with open_client(settings, connect_driver, WebSocketClient) as client:
                yield client
    finally:
        await trio.aclose_forcefully(stream)


def _authenticator(auth: HttpAuth | OAuth | None, url: WebSocketUrl) -> Authenticator | None:
    if auth is None:
        return None
    if isinstance(auth, OAuth):
        # The resource's metadata and its authorization servers are HTTP(S) resources;
        # the WebSocket endpoint's origin serves them over HTTP (serve_websocket does).
        scheme = "https" if url.tls else "http"
        return auth.session(f"{scheme}://{url.authority}{url.target}")
    return BearerAuth(auth)


class _Opening:
    """A connection and its opening handshake, made again after an authorization."""

    def __init__(
        self,
        url: WebSocketUrl,
        fields: list[tuple[bytes, bytes]],
        auth: Authenticator | None,
        ssl_context: ssl.SSLContext | None,
        connect_timeout: float,
    ) -> None:
        self._url = url
        self._fields = fields
        self._auth = auth
        self._ssl_context = ssl_context
        self._connect_timeout = connect_timeout

    async def open(self, timeout: float) -> tuple[trio.abc.Stream, Connection, str | None]:
        """The connection, wsproto's frame protocol and the selected subprotocol.

        Raises:
            HttpStatusError: The handshake was refused (and no new token helped).
        """
        auth, attempt = self._auth, 0
        while True:
            fields, generation = self._fields, 0
            if auth is not None:
                extra = await auth.headers(_GET, self._url.target.encode("ascii"))
                generation = auth.generation  # (the headers about to be sent)
                fields = [*fields, *extra]
            stream = await connect(
                self._url, ssl_context=self._ssl_context, timeout=self._connect_timeout
            )
            try:
                protocol, subprotocol = await open_handshake(
                    stream, self._url, fields, timeout=timeout
                )
            except HttpStatusError as refused:
                peer = peer_address(stream)
                await trio.aclose_forcefully(stream)
                if auth is None or refused.status not in _CHALLENGES:
                    raise
                challenge = refused.www_authenticate
                if not await auth.challenged(
                    refused.status, challenge, generation, attempt, None, peer=peer
                ):
                    raise
                attempt += 1
                continue
            except BaseException:
                await trio.aclose_forcefully(stream)
                raise
            return stream, protocol, subprotocol


class WebSocketLink:
    """The `transports._client.stream.StreamLink` of one WebSocket: frames and pings.

    Args:
        url: The server's URL.
        stream: The connection, its opening handshake done.
        channel: The WebSocket over it.
        subprotocol: The subprotocol the server selected.
        close_timeout: Seconds each step of closing may take (`WebSocketLimits`).

    Attributes:
        url: The server's URL.
        subprotocol: The subprotocol the server selected (``"mcp"``), or None.
        channel: The WebSocket.
        writer: Where every frame we send goes.
    """

    def __init__(
        self,
        url: WebSocketUrl,
        stream: trio.abc.Stream,
        channel: WebSocketChannel,
        *,
        subprotocol: str | None,
        close_timeout: float,
    ) -> None:
        self.url = url
        self.subprotocol = subprotocol
        self.channel = channel
        self.writer = channel.writer
        self._stream = stream
        self._close_timeout = close_timeout
        self._driver: StreamDriver[WebSocketLink] | None = None
        self._nursery: trio.Nursery | None = None
        self._writing = True  # the writer's task runs
        self._reader_done = trio.Event()

    def frame(self, message: bytes) -> bytes:
        """One message as a masked text frame (see `WebSocketChannel.frame`)."""
        return self.channel.frame(message)

    def start(self, nursery: trio.Nursery, driver: StreamDriver[WebSocketLink]) -> None:
        """Start the tasks: writer, reader, pings."""
        self._driver = driver
        self._nursery = nursery
        nursery.start_soon(self._write)
        nursery.start_soon(self._read)
        nursery.start_soon(self.channel.keep_alive, self._dead)

    # ----------------------------------------------------------------- tasks

    async def _write(self) -> None:
        try:
            await self.writer.run()
        finally:
            self._writing = False
        if self.writer.failure is not None:
            self._lost(f"writing to the server failed ({self.writer.failure!r})")

    async def _read(self) -> None:
        channel = self.channel
        assert self._driver is not None
        try:
            async with aclosing(channel.messages()) as messages:
                await self._driver.read(messages)
            if not channel.ended and not channel.closing:
                # The driver gave up on the server (it broke the protocol): say so, and
                # read on only to see its Close.
                await channel.close(CloseReason.POLICY_VIOLATION, "invalid JSON-RPC")
            with trio.move_on_after(self._close_timeout):
                await channel.drain()
            self._lost(channel.describe_end("the server"))
        finally:
            self._reader_done.set()

    def _dead(self) -> None:
        """The server stopped answering pings: fail everything, drop the connection."""
        assert self._nursery is not None
        self._lost(self.channel.describe_end("the server"))
        self._nursery.start_soon(trio.aclose_forcefully, self._stream)

    def _lost(self, reason: str) -> None:
        assert self._driver is not None
        self._driver.fail(ConnectionClosedError(reason))

    # ----------------------------------------------------------------- closing

    async def close(self) -> None:
        """Close the WebSocket (1000) once the driver failed what was pending.

        What is queued is flushed and the writer stopped; then our Close frame is
        written directly (so it goes out even when the client's tasks were cancelled
        with it), and the server's awaited, by the reader or, if the reader's task is
        gone too, here: each step within `WebSocketLimits.close_timeout`.
        """
        channel = self.channel
        await self.writer.aclose(flush_timeout=self._close_timeout)
        close = channel.take_close_frame(CloseReason.NORMAL_CLOSURE, "")
        if close and not self._writing:  # (else a write is stuck: give up on it)
            await self._write_directly(close)
        with trio.move_on_after(self._close_timeout):
            await self._reader_done.wait()
            await channel.drain()  # (returns at once unless the reader was cancelled)

    async def _write_directly(self, data: bytes) -> None:
        """Bytes written without the writer, whose task is gone (bounded, errors ignored)."""
        with (
            trio.move_on_after(self._close_timeout),
            contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError),
        ):
            await self._stream.send_all(data)
