"""One HTTP exchange with the server: a request out, a `Response` to read.

`Sender` adds what every request carries (``Host``, the user's headers, the bearer
token) to what the protocol layer asks for, takes a connection from the pool, and gives
back a `Response` that owns the connection until `Response.close`:

* a keep-alive connection the server closed while it sat idle fails on first use
  without a byte of answer; the request then goes once more on a fresh connection
  (the server cannot have seen it);
* a 401 or a 403: the `Authenticator` (a token callable, or OAuth) may get a new
  token, and the request goes once more (as many times as it says).

A `Response` is read either whole (`Response.read_body`, bounded) or as an event
stream (`Response.read_events`, through a bounded `SSEParser`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from mcpcore.framing import SSEEvent, SSEParser
from mcpcore.http import media_type
from transports._client.errors import ConnectionClosedError
from transports._http.client.auth import Authenticator
from transports._net import http1
from transports._net.client_connection import Head, Headers, HttpConnection
from transports._net.pool import ConnectionPool
from transports._net.url import HttpUrl

__all__ = ["MAX_ERROR_BODY", "BodyTooLargeError", "Response", "Sender", "drain"]

#: Bytes of an error response's body read, looking for a JSON-RPC error in it. Such
#: errors are a few hundred bytes; an HTML error page from a proxy is not worth more.
MAX_ERROR_BODY: Final = 64 * 1024

_USER_AGENT: Final = b"mcpcore"
_WWW_AUTHENTICATE: Final = b"www-authenticate"
_DPOP_NONCE: Final = b"dpop-nonce"
# The statuses an authenticator is told about: 401 (no or a bad token), 403 (scope).
_CHALLENGES: Final = frozenset({401, 403})
# Headers the transport sets itself: a user's value for them would break the protocol.
_RESERVED: Final = frozenset(
    {
        "host",
        "content-length",
        "content-type",
        "transfer-encoding",
        "connection",
        "accept",
        "last-event-id",
        "mcp-protocol-version",
        "mcp-session-id",
        "mcp-method",
        "mcp-name",
    }
)


class BodyTooLargeError(Exception):
    """A response body (or one of its events) exceeded its limit; the connection is dropped."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the server's answer exceeds {limit} bytes")
        self.limit = limit


class Response:
    """A response whose head has arrived; it owns its connection until `close`."""

    __slots__ = ("_closed", "_pool", "connection", "head", "reauthenticated", "status")

    def __init__(
        self, pool: ConnectionPool, connection: HttpConnection, head: Head, reauthenticated: bool
    ) -> None:
        self._pool = pool
        self.connection = connection
        self.head = head
        self.status = head.status
        #: Whether the request went out again with a fresh token after a 401.
        self.reauthenticated = reauthenticated
        self._closed = False

    @property
    def media_type(self) -> str:
        """The body's media type, lower-cased (``""`` when none is given)."""
        return media_type(self.head.get(b"content-type"))

    def header(self, name: bytes) -> bytes | None:
        """A response header's value (``name`` lower-case)."""
        return self.head.get(name)

    async def read_body(self, limit: int) -> bytes:
        """The whole body, at most ``limit`` bytes.

        Raises:
            BodyTooLargeError: It is longer (the connection is dropped).
            ConnectionClosedError: The connection ended before the body did.
        """
        chunks: list[bytes] = []
        size = 0
        receive = self.connection.receive_data
        while chunk := await receive():
            size += len(chunk)
            if size > limit:
                self.abandon()
                raise BodyTooLargeError(limit)
            chunks.append(chunk)
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    async def read_events(self, parser: SSEParser) -> list[SSEEvent] | None:
        """The events the next chunk of an event stream completes; None at its end.

        Raises:
            BodyTooLargeError: An event exceeded the parser's limit.
            ConnectionClosedError: The connection broke.
        """
        chunk = await self.connection.receive_data()
        if not chunk:
            parser.end_of_stream()  # an unfinished last event is dropped, as WHATWG says
            return None
        try:
            return parser.feed(chunk)
        except ValueError as exc:  # SSEEventTooLarge
            self.abandon()
            raise BodyTooLargeError(parser.max_event_size) from exc

    def close(self) -> None:
        """Give the connection back: kept for reuse if the body was read to its end."""
        if not self._closed:
            self._closed = True
            self._pool.release(self.connection)

    def close_early(self) -> None:
        """Give the connection back after reading what mattered: kept only if nothing is left."""
        if self.connection.body_complete_now():
            self.close()
        else:
            self.abandon()

    def abandon(self) -> None:
        """Drop the connection (a body left unread, or a cancelled exchange)."""
        if not self._closed:
            self._closed = True
            self._pool.discard(self.connection)


class Sender:
    """Sends requests to one server, with the headers every request carries.

    Args:
        pool: Where connections come from.
        url: The server's URL (for ``Host``).
        headers: The user's extra headers, sent on every request.
        auth: What authenticates each request (a bearer token, OAuth), if anything.

    Raises:
        ValueError: A header the transport sets itself is among ``headers``, or a
            malformed one (a value with CR or LF would split the request).
    """

    def __init__(
        self,
        pool: ConnectionPool,
        url: HttpUrl,
        *,
        headers: Mapping[str, str] | None = None,
        auth: Authenticator | None = None,
    ) -> None:
        self._pool = pool
        self._auth = auth
        extra: Headers = []
        for name, value in (headers or {}).items():
            lowered = name.lower()
            if lowered in _RESERVED or lowered.startswith("mcp-param-"):
                raise ValueError(f"the transport sets {name} itself")
            if lowered == "authorization" and auth is not None:
                raise ValueError("pass the token either as auth= or as a header, not both")
            extra.append((lowered.encode("ascii"), value.encode("latin-1")))
        # Built once: the headers of every request, before its own.
        self._base: Headers = [
            (b"host", url.authority.encode("ascii")),
            (b"user-agent", _USER_AGENT),
            *extra,
        ]
        # Checked now, as every request is checked when it is framed, so that a
        # malformed header (a value with CR or LF would split the request) fails here
        # rather than on every call.
        try:
            http1.ClientConnection().send_request(b"POST", url.target.encode("ascii"), self._base)
        except http1.LocalProtocolError as exc:
            raise ValueError(str(exc)) from None

    async def send(
        self, method: bytes, target: bytes, headers: Headers, body: bytes = b""
    ) -> Response:
        """Send a request; return its response once the head has arrived.

        ``headers`` are the request's own (``Accept``, ``Content-Type``, the MCP ones).

        Raises:
            ConnectionClosedError: No connection, or it broke before an answer.
        """
        all_headers = self._base + headers
        auth = self._auth
        if auth is None:
            return await self._exchange(method, target, all_headers, body)
        attempt = 0
        while True:
            extra = await auth.headers(method, target)
            generation = auth.generation  # (the headers about to be sent)
            sent = [*all_headers, *extra] if extra else all_headers
            response = await self._exchange(method, target, sent, body)
            response.reauthenticated = attempt > 0
            # RFC 9449 §9: a resource server may give a new nonce with any response.
            nonce = response.header(_DPOP_NONCE)
            text_nonce = None if nonce is None else nonce.decode("latin-1")
            if response.status not in _CHALLENGES:
                if text_nonce is not None:
                    auth.noticed_nonce(text_nonce)
                return response
            # "Invalid or expired [token] → 401", "insufficient_scope → 403": the
            # authenticator may get a (better) token; then the request goes again.
            challenge = response.header(_WWW_AUTHENTICATE)
            text = None if challenge is None else challenge.decode("latin-1")
            try:
                again = await auth.challenged(
                    response.status,
                    text,
                    generation,
                    attempt,
                    text_nonce,
                    peer=response.connection.peer_address,
                )
            except BaseException:
                response.abandon()
                raise
            if not again:
                return response
            response.abandon()
            attempt += 1

    async def _exchange(
        self, method: bytes, target: bytes, headers: Headers, body: bytes
    ) -> Response:
        pool = self._pool
        connection = await pool.acquire()
        try:
            head = await connection.round_trip(method, target, headers, body)
        except ConnectionClosedError:
            pool.discard(connection)
            if connection.exchanges == 1 or connection.got_response_bytes:
                raise
            # A reused connection that the server had closed: it saw nothing.
            connection = await pool.fresh()
            try:
                head = await connection.round_trip(method, target, headers, body)
            except BaseException:
                pool.discard(connection)
                raise
        except BaseException:
            pool.discard(connection)
            raise
        return Response(pool, connection, head, False)


async def drain(response: Response, limit: int = MAX_ERROR_BODY) -> bytes:
    """Read a (small) body whole, or as much as ``limit`` allows; b"" if it is longer.

    For error responses: the connection is kept when the body was read to its end.
    """
    try:
        body = await response.read_body(limit)
    except BodyTooLargeError:
        return b""
    except ConnectionClosedError:
        response.abandon()
        return b""
    except BaseException:
        response.abandon()
        raise
    response.close()
    return body
