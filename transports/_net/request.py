"""One HTTP request, read whole: head and body (the body is bounded, so it fits)."""

from __future__ import annotations

from typing import Final

__all__ = ["HttpRequest"]

# A header's value is bytes on the wire; field values are ASCII in practice, and
# latin-1 maps any byte to one character, so decoding never fails (RFC 9110 §5.5).
_CODEC: Final = "latin-1"


class HttpRequest:
    """A request as the router sees it.

    Attributes:
        method: ``GET``, ``POST``...
        path: The target's path (before any ``?``).
        query: The target's query (after ``?``), or ``""``.
        headers: Header fields by lower-cased name; repeated fields joined with ``", "``
            (RFC 9110 §5.3).
        body: The whole body.
        http_version: ``b"1.1"`` or ``b"1.0"``.
        root: The prefix the server is mounted under, which `path` does not hold
            (ASGI's ``root_path``; ``""`` for ``serve_http``): URLs given to clients
            start with it.
    """

    __slots__ = ("body", "headers", "http_version", "method", "path", "query", "root")

    def __init__(
        self,
        method: str,
        target: bytes,
        fields: list[tuple[bytes, bytes]],
        body: bytes,
        http_version: bytes = b"1.1",
        *,
        root: str = "",
    ) -> None:
        self.method = method
        self.root = root
        path, _, query = target.partition(b"?")
        self.path = path.decode(_CODEC)
        self.query = query.decode(_CODEC)
        # (`http1` lower-cases the names.) Repeated fields are rare: joined only when found.
        headers = {name.decode(_CODEC): value.decode(_CODEC) for name, value in fields}
        if len(headers) < len(fields):
            headers = {}
            for name, value in fields:
                key = name.decode(_CODEC)
                text = value.decode(_CODEC)
                headers[key] = f"{headers[key]}, {text}" if key in headers else text
        self.headers = headers
        self.body = body
        self.http_version = http_version

    def header(self, name: str) -> str | None:
        """A header's value by name, in any case (None when absent)."""
        return self.headers.get(name.lower())

    def query_parameter(self, name: str) -> str | None:
        """The first value of a query parameter (None when absent); not percent-decoded.

        Only our own parameters are read (``sessionId``, which is URL-safe).
        """
        for pair in self.query.split("&"):
            key, _, value = pair.partition("=")
            if key == name:
                return value
        return None
