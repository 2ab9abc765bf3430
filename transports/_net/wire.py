"""HTTP/1.1 messages with a known length, written as bytes without h11's send path.

h11 parses every byte the other side sends and frames every event stream. A whole
message with a ``Content-Length`` is simple enough to write ourselves, and h11's send
path for one (building and validating its event, its state machine, its writers)
costs about 40 µs per message in CPython, on each side as much as the MCP work of a
``tools/call``. So the server writes whole responses with `encode_response` (and
starts the next request on a fresh ``h11.Connection``), and the client writes its
requests with `encode_request` (h11, which parses the response, is shown a stand-in
request of the same method: `transports._net.client_connection`).

What h11 would check or add, this module does too:

* header names must be tokens, values visible ASCII, obs-text, spaces and tabs (RFC
  9110 §5.1, §5.5): a value with CR or LF would split the message;
* ``Content-Length`` (a body, or a response: one with none says 0);
* ``Connection: close`` on a response after which the connection ends: because we
  close it, or because the client asked (``Connection: close``, or HTTP/1.0, which has
  no keep-alive in h11 either, `keeps_alive`);
* a response to ``HEAD`` carries the headers of its body, not the body (RFC 9110 §9.3.2).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from http import HTTPStatus
from typing import Final

import h11

__all__ = ["Header", "encode_request", "encode_response", "field_error", "keeps_alive", "reason"]

#: A header field: lower-case name, value.
Header = tuple[bytes, bytes]

_REASONS: Final = {status.value: status.phrase.encode() for status in HTTPStatus}
#: Anything but a token character (RFC 9110 §5.6.2).
_NOT_TOKEN: Final = re.compile(rb"[^!#$%&'*+\-.^_`|~0-9A-Za-z]")
#: Anything but visible ASCII, obs-text, space and tab (RFC 9110 §5.5).
_NOT_FIELD_VALUE: Final = re.compile(rb"[^\t\x20-\x7e\x80-\xff]")
#: Anything but what a request target may hold (RFC 3986 characters and %).
_NOT_TARGET: Final = re.compile(rb"[^\x21-\x7e]")
_CLOSE: Final = b"connection: close\r\n"


def reason(status: int) -> bytes:
    """The standard reason phrase of ``status`` (empty for an unknown one)."""
    return _REASONS.get(status, b"")


def encode_response(
    status: int,
    fields: Sequence[Header],
    body: bytes,
    *,
    close: bool = False,
    head_only: bool = False,
) -> bytes:
    """A complete response: status line, ``fields``, ``Content-Length``, and ``body``.

    ``close`` adds ``Connection: close``; ``head_only`` (the request was ``HEAD``)
    leaves the body out but still declares its length.

    Raises:
        h11.LocalProtocolError: A header name or value is malformed (as h11 would).
    """
    parts = [b"HTTP/1.1 %d %s\r\n" % (status, reason(status))]
    _add_fields(parts, fields)
    parts.append(b"content-length: %d\r\n" % len(body))
    if close:
        parts.append(_CLOSE)
    parts.append(b"\r\n")
    if not head_only:
        parts.append(body)
    return b"".join(parts)


def encode_request(method: bytes, target: bytes, fields: Sequence[Header], body: bytes) -> bytes:
    """A complete request: request line, ``fields``, ``Content-Length`` with a body, and ``body``.

    ``fields`` include ``Host``.

    Raises:
        h11.LocalProtocolError: The method, target or a header is malformed.
    """
    if _NOT_TOKEN.search(method) is not None or not method:
        raise h11.LocalProtocolError(f"illegal method {method!r}")
    if _NOT_TARGET.search(target) is not None or not target:
        raise h11.LocalProtocolError(f"illegal request target {target!r}")
    parts = [b"%s %s HTTP/1.1\r\n" % (method, target)]
    _add_fields(parts, fields)
    if body:
        parts.append(b"content-length: %d\r\n" % len(body))
    parts.append(b"\r\n")
    parts.append(body)
    return b"".join(parts)


def field_error(name: bytes, value: bytes) -> str | None:
    """What is wrong with a header field (RFC 9110 §5.1, §5.5), or None."""
    if _NOT_TOKEN.search(name) is not None or not name:
        return f"illegal header name {name!r}"
    if _NOT_FIELD_VALUE.search(value) is not None:
        return f"illegal value of header {name.decode('latin-1')}"
    return None


def _add_fields(parts: list[bytes], fields: Sequence[Header]) -> None:
    for name, value in fields:
        problem = field_error(name, value)
        if problem is not None:
            raise h11.LocalProtocolError(problem)
        parts.append(b"%s: %s\r\n" % (name, value))


def keeps_alive(http_version: bytes, fields: Sequence[Header]) -> bool:
    """Whether a request lets the connection carry another one after its response.

    Not for HTTP/1.0 nor with a ``close`` token in ``Connection`` (RFC 9112 §9.3),
    the rule h11 applies. ``fields`` are h11's: names lower-cased.
    """
    if http_version < b"1.1":
        return False
    for name, value in fields:
        if name == b"connection" and any(
            token.strip().lower() == b"close" for token in value.split(b",")
        ):
            return False
    return True
