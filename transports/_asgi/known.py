"""The heads of the 2026-07-28 calls an ASGI app answered in one pass: the next is answered at once.

A client sends each ``tools/call`` of a tool with the same head: the same path, ``Host``,
``Origin``, ``Accept``, ``Content-Type``, ``MCP-Protocol-Version``, ``Mcp-Method`` and
``Mcp-Name``; only ``Content-Length`` follows the body. Every check a POST goes through
before the server runs it then comes to the same verdict each time, if the body is a call
of the same tool with the same ``_meta``: the number and size of the head's fields
(`transports._asgi.reading.check_head`), the route, ``Host`` and ``Origin``
(`transports._asgi.posted`), the media types and the checks of the headers against the
body (`transports._http.server.modern`).

`KnownHeads` remembers the head (every field but ``Content-Length``, in the client's
order, with the path and the mount point) of each call the endpoint answered in one pass
(`ModernEndpoint.post`, `mcpcore.server.FastCalls`), with the call's ``_meta`` and its
tool's definition. A request with such a head and a ``Content-Length`` of at most
`PARTIAL_FLOOR` passes the head's checks without them; its body is read as any
(`transports._asgi.reading.read_body`, in one message or several), and if it is a call
`FastCalls` reads, of the same tool with the same ``_meta``, the tool's definition
unchanged, it is answered at once (`ModernEndpoint.answer_call`), inside the request's
watch and cancel scope as any request. Anything else takes the whole way: answers are the
same, byte for byte (``tests/transports/test_asgi_posted.py`` and
``tests/transports/test_asgi_known.py``).

What else the verdict reads does not change while the app runs: its limits, path,
allowed hosts and origins, supported versions. A tool registered again has a new
definition. Logging each answer (`transports._runtime.requestlog.logs_answers`) turns
one-pass calls off, and this with them. A request needing a token never comes here: the
route of such a request is not the short one, and nothing is learned from it.

Measured on the workload of ``python -m bench --only asgi`` (mcpcore's app on uvicorn
under wrk, a 2026-07-28 ``tools/call``), the tree before and after interleaved: answering
a known head at once, rather than reading it whole again, gains 22% to 26% of requests
per second from 8 connections on, 7% at 1 (bench/README.md, "Known heads").
"""

from __future__ import annotations

from typing import Any, Final

from mcpcore.server import FastCall, FastCalls
from mcpcore.types import Tool
from transports._asgi.reading import Scope
from transports._net.limits import HttpLimits
from transports._net.partial import PARTIAL_FLOOR
from transports._runtime.requestlog import logs_answers

__all__ = ["MAX_KNOWN_HEADS", "MAX_KNOWN_HEAD_SIZE", "Head", "Known", "KnownHeads"]

#: Heads remembered: one per kind of client and tool it calls; emptied when full, so that
#: ever new heads can't grow it.
MAX_KNOWN_HEADS: Final = 256
#: The largest head remembered, in bytes of path, mount point and fields: a client's are
#: a few hundred; a larger one takes the whole way each time. The memo stays under
#: `MAX_KNOWN_HEADS` times this, 512 KiB, plus Python's objects around each field (~120
#: bytes): under 4 MiB in all with `HttpLimits.max_header_count`'s default of 100.
MAX_KNOWN_HEAD_SIZE: Final = 2048

_CONTENT_LENGTH: Final = b"content-length"
#: A head as a key: the raw path, the mount point, then each field but Content-Length.
Head = tuple[Any, ...]


class Known:
    """What a head was answered with: the call's ``_meta`` and its tool's definition.

    (The definition names the tool: a call of another tool, or of one registered again,
    is not the call the head was answered with.)
    """

    __slots__ = ("definition", "meta_json")

    def __init__(self, call: FastCall) -> None:
        self.meta_json = call.meta_json
        self.definition: Tool = call.definition


class KnownHeads:
    """The heads an app's endpoint answered a call of in one pass (see the module docstring).

    Args:
        fast: The endpoint's `FastCalls` (None: it answers nothing in one pass).
        limits: The app's limits (a head is remembered only if any ``Content-Length``
            this takes passes them with it).
    """

    __slots__ = ("_digits", "_fast", "_heads", "_largest", "_limits")

    def __init__(self, fast: FastCalls | None, limits: HttpLimits) -> None:
        self._fast = fast
        self._limits = limits
        # (a body read as read_body reads one it may get whole: no buffer, no budget)
        self._largest = min(PARTIAL_FLOOR, limits.max_body_size)
        self._digits = len(str(self._largest))
        self._heads: dict[Head, Known] = {}

    def look(self, scope: Scope) -> tuple[Head | None, Known | None]:
        """The request's head as a key, and what it was answered with if remembered.

        The head is None for anything but a POST with a raw path and one
        ``Content-Length`` of at most `PARTIAL_FLOOR` (or the body size limit), while
        answers are logged, and for fields a server hands as lists (not hashable):
        such a request can't be answered at once, and nothing is learned from it.
        """
        if self._fast is None or scope.get("method") != "POST":
            return None, None
        raw_path = scope.get("raw_path")
        if not isinstance(raw_path, bytes):
            return None, None
        head: list[Any] = [raw_path, scope.get("root_path", "")]
        declared = None
        for field in scope.get("headers", ()):
            if field[0] != _CONTENT_LENGTH:
                head.append(field)
            elif declared is None:
                declared = field[1]
            else:
                return None, None  # (a repeated Content-Length: the head's checks decide)
        # (A size of at most _largest: digits, no more of them than _largest has.)
        if (
            declared is None
            or len(declared) > self._digits
            or not declared.isdigit()
            or int(declared) > self._largest
            or logs_answers()
        ):
            return None, None
        key = tuple(head)
        try:
            return key, self._heads.get(key)
        except TypeError:  # (a server handing its fields as lists: see above)
            return None, None

    def call(self, known: Known, body: bytes) -> FastCall | None:
        """The call in ``body`` to answer at once, a request with a known head's body.

        None: the request takes the whole way.
        """
        fast = self._fast
        if fast is None or len(body) > self._largest:
            return None
        call = fast.read(body)
        if call is None or call.definition is not known.definition:
            return None
        # (Every _meta FastCalls knows passes the checks with this head today: one
        # 2026-07-28-era version is spoken. The verdict was reached with this one.)
        meta_json = call.meta_json
        return call if meta_json is known.meta_json or meta_json == known.meta_json else None

    def learn(self, head: Head, call: FastCall) -> None:
        """The endpoint answered ``call`` in one pass, for a request with ``head``."""
        fields = head[2:]
        names_and_values = sum(len(name) + len(value) for name, value in fields)
        if len(head[0]) + len(head[1]) + names_and_values > MAX_KNOWN_HEAD_SIZE:
            return
        # (Any Content-Length taken, at most _largest, keeps the head within the limits.)
        limits = self._limits
        size = 4 * (len(fields) + 1) + names_and_values
        size += len(_CONTENT_LENGTH) + self._digits
        if len(fields) + 1 > limits.max_header_count or size > limits.max_header_size:
            return
        heads = self._heads
        if len(heads) >= MAX_KNOWN_HEADS:
            heads.clear()
        heads[head] = Known(call)
