"""The short way of a 2026-07-28 POST through an ASGI app: straight to the endpoint.

Every other request becomes the router's `HttpRequest` (each header field decoded to
text, the target split) and goes through the `Router`'s steps. A POST that needs no
token, passes ``Host``, ``Origin`` and the path, and whose era is 2026-07-28
(`Router.serves_modern_post`: the router's own decision) would only reach
``Router.modern.post`` that way; the app hands it there itself, as a `Posted`, which
decodes only the fields the endpoint reads. Same rules, same answers: the endpoint,
and every check in it, is the one the router would have called.

Measured with ``python -m bench.asgi_profile`` (the app alone, 2026-07-28
``tools/call``): this way saves about a sixth of the app's time per request.

Requests the router must see whole keep its way: a repeated header field (the router
sees repeated fields joined, RFC 9110 §5.3), a token to check, another path, a refused
``Host`` or ``Origin``, a legacy era.
"""

from __future__ import annotations

from typing import Final

from transports._asgi.reading import Scope, path_of
from transports._http.server.router import Router

__all__ = [
    "MAX_REMEMBERED_ROUTES",
    "MAX_ROUTE_KEY_SIZE",
    "MAX_WIRE_NAMES",
    "Posted",
    "Shortcut",
]

# Header values are bytes on the wire; latin-1 maps any byte to one character
# (as `transports._net.request`).
_CODEC: Final = "latin-1"
#: Header names kept in their wire form (lower-cased bytes). The endpoint asks for a
#: handful (``Accept``, the ``Mcp-*`` fields, a tool's ``Mcp-Param-*``); past this many,
#: a name is converted each time it is asked for.
MAX_WIRE_NAMES: Final = 128
_WIRE_NAMES: dict[str, bytes] = {}
#: Decisions remembered (`Shortcut`), by path, ``Host``, ``Origin`` and protocol version:
#: one per kind of client; emptied when full, so that ever new values can't grow it.
MAX_REMEMBERED_ROUTES: Final = 256
#: The largest decision remembered, in bytes of path, mount point and header values: a
#: client's are a few dozen; longer ones are decided each time (the memo stays under
#: `MAX_REMEMBERED_ROUTES` times this, 256 KiB).
MAX_ROUTE_KEY_SIZE: Final = 1024


class Posted:
    """A 2026-07-28 POST's header fields as the ASGI server gave them, and its body.

    It is what `transports._http.server.modern.ModernEndpoint.post` reads of a
    request (`~transports._http.server.modern.PostedRequest`).

    Attributes:
        body: The whole body (set once it is read).
    """

    __slots__ = ("_fields", "body")

    def __init__(self, fields: dict[bytes, bytes]) -> None:
        self._fields = fields
        self.body = b""

    def header(self, name: str) -> str | None:
        """A header's value by name, in any case (None when absent)."""
        wire = _WIRE_NAMES.get(name)
        if wire is None:
            wire = name.lower().encode(_CODEC)
            if len(_WIRE_NAMES) < MAX_WIRE_NAMES:
                _WIRE_NAMES[name] = wire
        value = self._fields.get(wire)
        return None if value is None else value.decode(_CODEC)


class Shortcut:
    """Which POSTs go straight to ``router``'s 2026-07-28 endpoint (`Shortcut.take`).

    The decision reads the path, ``Host``, ``Origin`` and ``MCP-Protocol-Version``; a
    client sends the same ones with each request, so it is remembered by their bytes
    (`MAX_REMEMBERED_ROUTES`), and the router decides only for new ones.
    """

    __slots__ = ("_decided", "_router")

    def __init__(self, router: Router) -> None:
        self._router = router
        self._decided: dict[tuple[object, ...], bool] = {}

    def take(self, scope: Scope, fields: list[tuple[bytes, bytes]]) -> Posted | None:
        """The request as a `Posted`, if it goes straight to the endpoint; else None.

        ``scope`` is a POST's; ``fields`` its header fields, which passed the head's
        checks.
        """
        head = dict(fields)
        if len(head) < len(fields):
            return None  # a repeated field: the router joins them
        raw_path = scope.get("raw_path")
        if not isinstance(raw_path, bytes):
            return Posted(head) if self._decide(scope, head) else None
        key = (
            raw_path,
            scope.get("root_path", ""),
            head.get(b"host"),
            head.get(b"origin"),
            head.get(b"mcp-protocol-version"),
        )
        decided = self._decided.get(key)
        if decided is None:
            decided = self._decide(scope, head)
            if sum(len(part) for part in key if part) <= MAX_ROUTE_KEY_SIZE:
                if len(self._decided) >= MAX_REMEMBERED_ROUTES:
                    self._decided.clear()
                self._decided[key] = decided
        return Posted(head) if decided else None

    def _decide(self, scope: Scope, head: dict[bytes, bytes]) -> bool:
        path, _ = path_of(scope)
        return self._router.serves_modern_post(
            path.decode(_CODEC),
            _text(head, b"host"),
            _text(head, b"origin"),
            _text(head, b"mcp-protocol-version"),
        )


def _text(head: dict[bytes, bytes], name: bytes) -> str | None:
    value = head.get(name)
    return None if value is None else value.decode(_CODEC)
