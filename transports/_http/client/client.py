"""`open_http_client`: a `Client` over Streamable HTTP (or, failing that, 2024-11-05 HTTP+SSE)."""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from functools import partial

import trio

from mcpcore.client import DEFAULT_PROBE_TIMEOUT, ClientCallbacks, ClientSession, ConnectMode
from mcpcore.framing import MAX_EVENT_SIZE, MAX_MESSAGE_SIZE
from mcpcore.http import InvalidTool
from mcpcore.types import Implementation
from transports._client.calls import DEFAULT_TIMEOUT, MAX_TOTAL_TIMEOUT
from transports._client.client import CLIENT_INFO, Client
from transports._client.notifications import NotificationCallback, NotificationDispatcher
from transports._client.opening import ClientSettings, open_client
from transports._http.client.auth import Authenticator, BearerAuth, HttpAuth
from transports._http.client.exchange import Sender
from transports._http.client.oauth import OAuth
from transports._http.client.streamable import StreamableTransport
from transports._net.pool import (
    CONNECT_TIMEOUT,
    MAX_CLIENT_CONNECTIONS,
    MAX_IDLE_CONNECTIONS,
    ConnectionPool,
)
from transports._net.url import HttpUrl, parse_url

__all__ = ["HttpClient", "open_http_client"]


class HttpClient(Client):
    """A `Client` whose server is reached over HTTP (see `open_http_client`)."""

    def __init__(
        self,
        session: ClientSession,
        transport: StreamableTransport,
        url: HttpUrl,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_total_timeout: float = MAX_TOTAL_TIMEOUT,
        notifications: NotificationDispatcher | None = None,
    ) -> None:
        super().__init__(
            session,
            transport,
            timeout=timeout,
            max_total_timeout=max_total_timeout,
            notifications=notifications,
        )
        self._http = transport
        self._url = url

    @property
    def url(self) -> str:
        """The server's MCP endpoint, as given."""
        return self._url.text

    @property
    def session_id(self) -> str | None:
        """The legacy session's ``Mcp-Session-Id``, when the server issued one."""
        return self._http.session_id

    @property
    def uses_http_sse(self) -> bool:
        """Whether the server speaks the 2024-11-05 HTTP+SSE transport (the fallback)."""
        return self._http.uses_http_sse

    @property
    def invalid_tools(self) -> tuple[InvalidTool, ...]:
        """Tools dropped from listings for invalid ``x-mcp-header`` annotations.

        "Invalid annotations → (C) MUST drop that tool from the tools/list result and
        SHOULD log a warning" (2026-07-28 server/tools): the client does no logging;
        show these where your application logs. The latest `MAX_INVALID_TOOLS` are kept.
        """
        return self._http.tools.invalid


@asynccontextmanager
async def open_http_client(
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
    max_connections: int = MAX_CLIENT_CONNECTIONS,
    max_idle_connections: int = MAX_IDLE_CONNECTIONS,
    max_message_size: int = MAX_MESSAGE_SIZE,
    max_event_size: int = MAX_EVENT_SIZE,
    get_stream: bool = True,
    terminate_session: bool = True,
    busy_poll: float = 0.0,
) -> AsyncIterator[HttpClient]:
    """Connect to an MCP server over HTTP and yield a connected client.

        async with open_http_client("http://127.0.0.1:8000/mcp") as client:
            result = await client.call_tool("add", {"a": 1, "b": 2})

    The era is chosen as ``mode`` says (``auto``: a 2026-07-28 ``server/discover``
    probe, then the ``initialize`` handshake, then, if the server refuses that POST with
    400, 404 or 405, the 2024-11-05 HTTP+SSE transport at the same URL). On exit (or
    `Client.aclose`) pending calls fail, and a legacy session is ended with a DELETE.

    Args:
        url: The MCP endpoint, ``http://`` or ``https://``.
        headers: Extra headers sent with every request.
        auth: A bearer token, or a callable (sync or async) returning one (called
            again when the server answers 401), or `OAuth`: the client then authorizes
            itself when the server answers 401 (and 403 ``insufficient_scope``).
        callbacks: Elicitation, sampling and roots (they set what the client declares).
        on_notification: Called with each notification that is not on a listen
            stream, one at a time in a task of its own (see `open_stdio_client`).
        client_info: Our name and version.
        mode: ``"auto"``, ``"legacy"`` or ``"modern"``.
        timeout: Seconds each request waits by default, ``initialize`` included.
        probe_timeout: Seconds to wait for the ``server/discover`` probe.
        max_total_timeout: The hard limit of a call whose timeout progress resets.
        cache: Keep 2026-07-28 results for as long as their ``ttlMs`` allows.
        ssl_context: For ``https``: the TLS settings; by default the system's
            certificate store, with verification.
        connect_timeout: Seconds to open a connection (`CONNECT_TIMEOUT`).
        max_connections: Connections open at once, streams included (`MAX_CLIENT_CONNECTIONS`).
        max_idle_connections: Idle keep-alive connections kept (`MAX_IDLE_CONNECTIONS`).
        busy_poll: Seconds to spin, at most, waiting for the server's answer before the
            event loop sleeps; 0 (the default) never spins. Opt in with
            `transports.RECOMMENDED_BUSY_POLL` (see `transports.BusyPolling`).
        max_message_size: The largest JSON answer accepted, in bytes.
        max_event_size: The largest server-sent event accepted, in bytes.
        get_stream: Legacy: open the GET stream the server sends its own messages on.
        terminate_session: Legacy: DELETE the session on close.

    Raises:
        ValueError: A bad URL, or a header the transport sets itself.
        ConnectionClosedError: The server could not be reached, or went away.
        HttpStatusError: The server refused us at the HTTP level (401, 403...).
        OAuthError: With `OAuth`: the authorization failed or was refused.
    """
    parsed = parse_url(url)
    authenticator: Authenticator | None
    if auth is None:
        authenticator = None
    elif isinstance(auth, OAuth):
        authenticator = auth.session(url)
    else:
        authenticator = BearerAuth(auth)
    pool = ConnectionPool(
        parsed,
        ssl_context=ssl_context,
        max_connections=max_connections,
        max_idle=max_idle_connections,
        connect_timeout=connect_timeout,
        busy_poll=busy_poll,
    )
    sender = Sender(pool, parsed, headers=headers, auth=authenticator)
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

    def connect(
        nursery: trio.Nursery, notifications: NotificationDispatcher | None
    ) -> StreamableTransport:
        return StreamableTransport(
            parsed,
            sender,
            nursery,
            timeout=timeout,
            notifications=notifications,
            max_message_size=max_message_size,
            max_event_size=max_event_size,
            get_stream=get_stream,
            terminate=terminate_session,
        )

    try:
        async with open_client(settings, connect, partial(HttpClient, url=parsed)) as client:
            yield client
    finally:
        with trio.CancelScope(shield=True):
            await pool.aclose()
