"""Debug logging of what a server answers, the same on every transport.

Every transport (stdio, Streamable HTTP in both eras, WebSocket) answers a request
through `answer`, answers a message the protocol refuses through `log_protocol_error`,
and refuses an HTTP request (or a WebSocket handshake) through `Reply.refuse`, which
calls `log_refusal`. Each logs one line at debug level to the ``mcpcore.requests``
logger (``mcpcore serve -v`` shows them):

    request 7 tools/call 'grep': ok in 3.1 ms
    request 8 resources/read 'file:///etc/passwd': error -32602 (Invalid params...) in 0.2 ms
    request 9 tools/call 'slow': cancelled after 1204.0 ms
    protocol error answered: -32700 (Parse error)
    refused with HTTP 421: Misdirected Request: unknown Host

Off (the level above debug, the default), a request costs one ``isEnabledFor`` check
and nothing else: `answer` hands the handler's coroutine back without wrapping it.
Times are read from the running library's clock; the core never reads one.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import Final

import msgspec

from mcpcore import Connection, RequestReceived
from mcpcore.http import peek_message
from mcpcore.server import Outbound, Ran, Server
from transports._runtime import primitives

__all__ = [
    "LOGGER_NAME",
    "MAX_LOGGED_TEXT",
    "answer",
    "log_protocol_error",
    "log_refusal",
    "logs_answers",
]

#: The logger of these lines (under ``mcpcore``, as ``mcpcore.serve``'s).
LOGGER_NAME: Final = "mcpcore.requests"
#: Characters of a name or message a line shows: they come from clients, and a log line
#: should stay one short line whatever a client sends (longer ones end with "...").
MAX_LOGGED_TEXT: Final = 200
_LISTEN: Final = "subscriptions/listen"
_DEBUG: Final = logging.DEBUG

_log = logging.getLogger(LOGGER_NAME)


class _Error(msgspec.Struct):
    code: int = 0
    message: str = ""


class _Reply(msgspec.Struct):
    error: _Error | None = None


_decode_reply = msgspec.json.Decoder(_Reply).decode


def logs_answers() -> bool:
    """Whether `answer` logs each request (the debug level is on)."""
    return _log.isEnabledFor(_DEBUG)


def answer(
    server: Server,
    connection: Connection,
    event: RequestReceived,
    outbound: Outbound,
    *,
    principal: str | None = None,
    ran: Ran | None = None,
) -> Awaitable[bytes | None]:
    """`Server.handle_request`, with a debug line for the request when that level is on."""
    if logs_answers():
        return _answer_logged(server, connection, event, outbound, principal=principal, ran=ran)
    return server.handle_request(connection, event, outbound, principal=principal, ran=ran)


async def _answer_logged(
    server: Server,
    connection: Connection,
    event: RequestReceived,
    outbound: Outbound,
    *,
    principal: str | None,
    ran: Ran | None,
) -> bytes | None:
    started = primitives.current_time()
    try:
        reply = await server.handle_request(
            connection, event, outbound, principal=principal, ran=ran
        )
    except BaseException as exc:
        cancelled = isinstance(exc, primitives.cancelled_class())
        outcome = "cancelled" if cancelled else f"failed ({type(exc).__name__})"
        _log.debug("%s: %s after %.1f ms", _request(event), outcome, _elapsed_ms(started))
        raise
    _log.debug("%s: %s in %.1f ms", _request(event), _outcome(event, reply), _elapsed_ms(started))
    return reply


def log_protocol_error(reply: bytes) -> None:
    """Log an error answer the core wrote to a message it refused (debug level)."""
    if _log.isEnabledFor(_DEBUG):
        _log.debug("protocol error answered: %s", _error_of(reply))


def log_refusal(status: int, reason: str) -> None:
    """Log an HTTP request refused with ``status`` (debug level)."""
    if _log.isEnabledFor(_DEBUG):
        _log.debug("refused with HTTP %d: %s", status, _short(reason))


def _elapsed_ms(started: float) -> float:
    return (primitives.current_time() - started) * 1000


def _request(event: RequestReceived) -> str:
    params = event.params
    name = getattr(params, "name", None) or getattr(params, "uri", None)
    named = f" {_short(name)!r}" if isinstance(name, str) else ""
    return f"request {_short(str(event.request_id))} {_short(event.method)}{named}"


def _outcome(event: RequestReceived, reply: bytes | None) -> str:
    if reply is None:
        # No answer: the client cancelled meanwhile, or a listen stream stays open.
        return "stream open" if event.method == _LISTEN else "cancelled"
    if peek_message(reply).kind == "error":
        return f"error {_error_of(reply)}"
    return "ok"


def _error_of(reply: bytes) -> str:
    """``code (message)`` of an encoded error response."""
    try:
        error = _decode_reply(reply).error
    except msgspec.DecodeError:
        error = None
    if error is None:
        return "(unreadable)"
    return f"{error.code} ({_short(error.message)})"


def _short(text: str) -> str:
    return text if len(text) <= MAX_LOGGED_TEXT else text[:MAX_LOGGED_TEXT] + "..."
