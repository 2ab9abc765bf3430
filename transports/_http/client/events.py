"""Event streams into the router: the SSE answer to a POST, a resumed stream, a GET stream.

MCP messages travel as ``message`` events (the default type) whose data is one
JSON-RPC message. Events of other types are not MCP's (the 2024-11-05 ``endpoint``
event is read by its own transport), and an event with empty data is a priming event:
it only sets the ``Last-Event-ID`` to resume from (2025-11-25 basic/transports). SSE
comments (keep-alives) never reach here: the parser drops them.

How long to wait before resuming: "(S) SHOULD send a retry: field, which (C) MUST honour
before reconnecting" (2025-11-25); `retry_delay` applies it, within bounds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from mcpcore.framing import SSEParser
from transports._http.client.exchange import Response
from transports._http.client.router import Router

__all__ = ["DEFAULT_RETRY", "MAX_RETRY", "pump", "retry_delay"]

#: Seconds to wait before resuming a stream when the server named no ``retry`` time
#: (the official SDKs wait 1 s too).
DEFAULT_RETRY: Final = 1.0
#: The longest ``retry`` honoured, in seconds: a server asking for an hour between
#: reconnections is clamped to this (the call's own timeout still applies).
MAX_RETRY: Final = 60.0

_MESSAGE: Final = "message"


async def pump(
    response: Response,
    parser: SSEParser,
    router: Router,
    *,
    until: Callable[[], bool] | None = None,
) -> bool:
    """Feed an event stream's messages to ``router`` until it ends.

    Args:
        response: A ``text/event-stream`` response.
        parser: The stream's parser (it keeps the last event id and ``retry``).
        router: Where the messages go.
        until: Checked after each chunk: stop reading once it returns True.

    Returns:
        True when ``until`` stopped the reading, False at the end of the stream.

    Raises:
        BodyTooLargeError: An event exceeded the parser's limit.
        ConnectionClosedError: The connection broke.
    """
    receive = router.receive
    while True:
        events = await response.read_events(parser)
        if events is None:
            return False
        for event in events:
            if event.data and event.event == _MESSAGE:
                await receive(event.data.encode())
        if until is not None and until():
            return True


def retry_delay(parser: SSEParser) -> float:
    """Seconds to wait before resuming the stream ``parser`` read."""
    retry = parser.retry
    if retry is None:
        return DEFAULT_RETRY
    return min(retry / 1000, MAX_RETRY)
