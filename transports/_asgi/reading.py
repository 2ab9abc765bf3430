"""An ASGI request, read whole within the limits, as the router's `HttpRequest`.

The ASGI server parsed the head; what is left to us is what ``serve_http``'s connection
checks itself (`transports._net.server_connection`): the number and size of the header
fields (431), the body's size (413, before it is read when ``Content-Length`` says so),
the process's budget for partial messages (413 with ``Retry-After``,
`transports._net.partial`). The time the body may take (408) is the request's watcher's
(`transports._asgi.watching`): a cancel scope of its own would cost every request.

The path the router sees is the one below the app's mount point: ASGI's ``path`` holds
the whole path, ``root_path`` the prefix a framework mounted the app under (ASGI 3
HTTP scope; Starlette's ``Mount`` and uvicorn's ``--root-path`` set it), and the
prefix is cut off when the path starts with it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Final

from transports._net.limits import HttpLimits
from transports._net.partial import (
    PARTIAL_BUDGET,
    PARTIAL_FLOOR,
    PARTIAL_RETRY_AFTER,
    MessageBuffer,
)
from transports._net.reply import Header
from transports._net.request import HttpRequest

__all__ = [
    "TIMED_OUT",
    "Receive",
    "Refusal",
    "Scope",
    "check_head",
    "path_of",
    "read_body",
    "request_of",
]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]


class Refusal:
    """A request that can't be served: answer ``status`` (with ``headers``) and close."""

    __slots__ = ("headers", "message", "status")

    def __init__(self, status: int, message: str, headers: tuple[Header, ...] = ()) -> None:
        self.status = status
        self.message = message
        self.headers = headers


_TOO_MANY_FIELDS: Final = Refusal(431, "Too many header fields")
_HEAD_TOO_LARGE: Final = Refusal(431, "Request header fields too large")
_TOO_LARGE: Final = Refusal(413, "Request body too large")
#: See `transports._net.server_connection`: "if the condition is temporary, the server
#: SHOULD generate a Retry-After" (RFC 9110 §15.5.14).
_BUSY: Final = Refusal(
    413,
    "Request body too large for now: too many large requests at once, retry later",
    ((b"retry-after", str(PARTIAL_RETRY_AFTER).encode()),),
)
#: A body not whole within `HttpLimits.body_timeout` (answered by the app).
TIMED_OUT: Final = Refusal(408, "Request timed out")
_BAD_LENGTH: Final = Refusal(400, "Bad request: invalid Content-Length")


def path_of(scope: Scope) -> tuple[bytes, str]:
    """The request's path below the mount point (no query), and the mount point.

    ASGI 3 puts the mount point in ``path`` too; a server that does not (an older
    uvicorn with ``--root-path``) hands the path below it, taken as it is.
    """
    raw = scope.get("raw_path")
    path = raw if isinstance(raw, bytes) else str(scope.get("path", "/")).encode("utf-8")
    root = str(scope.get("root_path", ""))
    prefix = root.encode("utf-8")
    if prefix and path.startswith(prefix):
        path = path[len(prefix) :] or b"/"
    return path, root


def target_of(scope: Scope) -> tuple[bytes, str]:
    """The request target below the mount point (path and query), and the mount point."""
    path, root = path_of(scope)
    query: bytes = scope.get("query_string", b"")
    return (path + b"?" + query if query else path), root


def check_head(fields: list[tuple[bytes, bytes]], limits: HttpLimits) -> int | Refusal | None:
    """The declared body size (None: none), or the refusal the head earns.

    431 for a head with too many fields, or larger than `HttpLimits.max_header_size`;
    400 for a ``Content-Length`` that is not a number, 413 for one past the limit.
    """
    count = len(fields)
    if count > limits.max_header_count:
        return _TOO_MANY_FIELDS
    size = 4 * count  # (": " and CRLF)
    declared: int | None = None
    for name, value in fields:
        size += len(name) + len(value)
        if declared is None and name == b"content-length":
            declared = int(value) if value.isdigit() else _length(value)
    if size > limits.max_header_size:
        return _HEAD_TOO_LARGE
    if declared is None:
        return None
    if declared < 0:
        return _BAD_LENGTH
    return _TOO_LARGE if declared > limits.max_body_size else declared


async def read_body(
    receive: Receive, limits: HttpLimits, declared: int | None
) -> bytes | Refusal | None:
    """The body of a request whose head passed `check_head`; None: the client left."""
    if declared is not None and declared > PARTIAL_FLOOR:
        return await _buffered_body(receive, limits, declared)
    # Most bodies come whole in the first message: no buffer to reserve or join.
    first = await receive()
    if first.get("type") == "http.request" and not first.get("more_body", False):
        body: bytes = first.get("body", b"")
        return _TOO_LARGE if len(body) > limits.max_body_size else body
    return await _buffered_body(receive, limits, declared, first)


def request_of(scope: Scope, fields: list[tuple[bytes, bytes]], body: bytes) -> HttpRequest:
    """The router's `HttpRequest` for an ASGI ``http`` scope and its body."""
    version = str(scope.get("http_version", "1.1")).encode("ascii", "replace")
    target, root = target_of(scope)
    return HttpRequest(str(scope.get("method", "GET")), target, fields, body, version, root=root)


async def _buffered_body(
    receive: Receive,
    limits: HttpLimits,
    declared: int | None,
    first: MutableMapping[str, Any] | None = None,
) -> bytes | Refusal | None:
    """A body in several messages (or announced past the free floor), within the budget."""
    buffer = MessageBuffer(PARTIAL_BUDGET)
    try:
        if declared is not None and not buffer.expect(declared):
            return _BUSY  # (before the client sends it)
        message = first if first is not None else await receive()
        while True:
            kind = message.get("type")
            if kind == "http.disconnect":
                return None
            if kind == "http.request":
                data = message.get("body", b"")
                if buffer.size + len(data) > limits.max_body_size:
                    return _TOO_LARGE
                if data and not buffer.add(data):
                    return _BUSY  # (a chunked body, reserved as it comes)
                if not message.get("more_body", False):
                    return buffer.take()
            message = await receive()
    finally:
        buffer.clear()


def _length(value: bytes) -> int:
    """A ``Content-Length`` value (-1: not a number).

    (The ASGI server refused malformed framing; a comma list is one value repeated.)
    """
    first = value.split(b",", 1)[0].strip()
    return int(first) if first.isdigit() else -1
