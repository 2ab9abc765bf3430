"""The client's side of the opening handshake: a ``ws://`` URL, a connection, a 101.

The request asks for the subprotocol ``mcp`` (as the TypeScript SDK v1 and the Python
SDK 1.x do) and offers no extension. A server that selects no subprotocol is accepted
(it may not know ``mcp`` by that name and still speak MCP); one that selects a protocol
we did not offer is refused by wsproto. A server that answers with anything but 101
raises `transports.HttpStatusError` with its status (401 and 403 carry their
``WWW-Authenticate`` challenge), the same error the HTTP client raises.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from http import HTTPStatus
from typing import Final

import trio
from wsproto import ConnectionType, WSConnection
from wsproto.connection import Connection
from wsproto.events import AcceptConnection, RejectConnection, RejectData, Request
from wsproto.utilities import RemoteProtocolError

from transports._client.errors import ConnectionClosedError
from transports._net.errors import HttpStatusError
from transports._net.url import host_header, split_url
from transports._websocket.limits import MAX_HANDSHAKE_SIZE, READ_SIZE
from transports._websocket.upgrade import SUBPROTOCOL

__all__ = ["MAX_REFUSAL_BODY", "WebSocketUrl", "connect", "open_handshake", "parse_ws_url"]

#: Bytes of a refusal's body read (for nothing but draining it: the status says it all).
MAX_REFUSAL_BODY: Final = 64 * 1024
_DEFAULT_PORTS: Final = {"ws": 80, "wss": 443}
#: Headers the handshake sets itself; a caller may not send its own.
_RESERVED: Final = frozenset(
    {
        "host",
        "upgrade",
        "connection",
        "sec-websocket-key",
        "sec-websocket-version",
        "sec-websocket-protocol",
        "sec-websocket-extensions",
    }
)


@dataclass(frozen=True, slots=True)
class WebSocketUrl:
    """A ``ws`` or ``wss`` URL, split for the handshake.

    Attributes:
        text: The URL as given.
        tls: Whether it is ``wss`` (TLS).
        host: The host name or IP address (an IPv6 address without brackets).
        port: The port, the scheme's default when the URL names none.
        target: The request target: the path (``/`` when empty) and the query.
    """

    text: str
    tls: bool
    host: str
    port: int
    target: str

    @property
    def authority(self) -> str:
        """The ``Host`` header's value: the host, and the port unless it is the default."""
        return host_header(self.host, self.port, _DEFAULT_PORTS["wss" if self.tls else "ws"])


def parse_ws_url(url: str) -> WebSocketUrl:
    """Split a ``ws`` or ``wss`` URL.

    Raises:
        ValueError: Another scheme, no host, a bad port, user info or a fragment.
    """
    parts = split_url(url, _DEFAULT_PORTS, credentials_go_in="headers=")
    if parts.fragment:
        # "Fragment identifiers are meaningless in the context of WebSocket URIs and
        # MUST NOT be used on these URIs" (RFC 6455 §3).
        raise ValueError(f"a WebSocket URL has no fragment: {url!r}")
    return WebSocketUrl(
        text=url,
        tls=parts.scheme == "wss",
        host=parts.host,
        port=parts.port,
        target=parts.target,
    )


def header_fields(headers: Mapping[str, str] | None) -> list[tuple[bytes, bytes]]:
    """The caller's extra headers as fields.

    Raises:
        ValueError: One the handshake sets itself.
    """
    fields = []
    for name, value in (headers or {}).items():
        if name.lower() in _RESERVED:
            raise ValueError(f"the {name!r} header is set by the WebSocket handshake")
        fields.append((name.encode("ascii"), value.encode("latin-1")))
    return fields


async def connect(
    url: WebSocketUrl, *, ssl_context: ssl.SSLContext | None, timeout: float
) -> trio.abc.Stream:
    """A TCP connection to the URL's server (and TLS over it for ``wss``).

    Raises:
        ConnectionClosedError: It could not be opened in ``timeout`` seconds.
    """
    where = f"{url.host}:{url.port}"
    with trio.move_on_after(timeout):
        try:
            stream: trio.abc.Stream = await trio.open_tcp_stream(url.host, url.port)
        except OSError as exc:
            raise ConnectionClosedError(f"can't connect to {where}: {exc}") from exc
        if not url.tls:
            return stream
        context = ssl_context or ssl.create_default_context()
        tls = trio.SSLStream(stream, context, server_hostname=url.host, https_compatible=True)
        try:
            await tls.do_handshake()
        except (trio.BrokenResourceError, OSError) as exc:
            await trio.aclose_forcefully(tls)
            raise ConnectionClosedError(f"TLS with {where} failed: {exc.__cause__ or exc}") from exc
        except BaseException:
            await trio.aclose_forcefully(tls)
            raise
        return tls
    raise ConnectionClosedError(f"can't connect to {where}: no answer in {timeout:g} s")


async def open_handshake(
    stream: trio.abc.Stream,
    url: WebSocketUrl,
    fields: list[tuple[bytes, bytes]],
    *,
    timeout: float,
) -> tuple[Connection, str | None]:
    """Send the opening handshake and read the server's answer.

    Returns wsproto's frame protocol, open (and fed whatever came after the 101), and
    the subprotocol the server selected.

    Raises:
        HttpStatusError: The server refused the upgrade.
        ConnectionClosedError: It hung up, answered something that is no handshake, or
            took more than ``timeout`` seconds.
    """
    handshake = WSConnection(ConnectionType.CLIENT)
    request = Request(
        host=url.authority, target=url.target, subprotocols=[SUBPROTOCOL], extra_headers=fields
    )
    with trio.move_on_after(timeout):
        try:
            await stream.send_all(handshake.send(request))
            return await _read_answer(stream, handshake)
        except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
            raise ConnectionClosedError(f"the WebSocket handshake failed: {exc}") from exc
    raise ConnectionClosedError(
        f"the server did not answer the WebSocket handshake in {timeout:g} s"
    )


async def _read_answer(
    stream: trio.abc.Stream, handshake: WSConnection
) -> tuple[Connection, str | None]:
    received = 0
    refusal: RejectConnection | None = None
    while True:
        data = bytes(await stream.receive_some(READ_SIZE))
        if not data:
            raise ConnectionClosedError("the server closed the connection during the handshake")
        received += len(data)
        if received > MAX_HANDSHAKE_SIZE + MAX_REFUSAL_BODY:
            raise ConnectionClosedError("the server's handshake answer is too large")
        try:
            handshake.receive_data(data)
            for event in handshake.events():
                if isinstance(event, AcceptConnection):
                    assert handshake.connection is not None  # (accepting opened it)
                    return handshake.connection, event.subprotocol
                if isinstance(event, RejectConnection):
                    refusal = event
                    if not event.has_body:
                        raise _refused(event)
                elif isinstance(event, RejectData) and event.body_finished:
                    assert refusal is not None
                    raise _refused(refusal)
        except RemoteProtocolError as exc:
            raise ConnectionClosedError(
                f"the server's handshake answer is invalid: {exc}"
            ) from None


def _refused(event: RejectConnection) -> HttpStatusError:
    challenge = None
    for name, value in event.headers:
        if name.lower() == b"www-authenticate":
            challenge = value.decode("latin-1")
    try:
        reason = HTTPStatus(event.status_code).phrase
    except ValueError:
        reason = ""
    return HttpStatusError(event.status_code, reason, www_authenticate=challenge)
