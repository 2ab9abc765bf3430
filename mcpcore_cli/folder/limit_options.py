"""The limits of `mcpcore serve` a user can hit, as options, and the help that lists them.

Every limit a client of the folder server can run into is named here with its default
and how to change it: the folder's own (files listed, file size: options of their own
in `command`), the transports' (message size, connections, legacy sessions, the
process-wide budget for partially received messages) and the core's fixed nesting depth.
`limits_epilog` is the ``limits:`` section of ``mcpcore serve --help``; the README's
"Limits" section says the same.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable
from typing import Any

from mcpcore.framing import MAX_MESSAGE_SIZE as MAX_LINE_SIZE
from mcpcore.jsonrpc import MAX_JSON_DEPTH
from mcpcore_cli.folder.catalog import MAX_LISTED_FILES
from mcpcore_cli.folder.folder import DEFAULT_MAX_FILE_SIZE, human_size
from transports import (
    MAX_BODY_SIZE,
    MAX_CONNECTIONS,
    MAX_PARTIAL_BYTES,
    MAX_SESSIONS,
    PARTIAL_FLOOR,
    SESSION_HANDSHAKE_TIMEOUT,
    SESSION_IDLE_TIMEOUT,
    HttpLimits,
    WebSocketLimits,
)
from transports import MAX_WEBSOCKET_MESSAGE_SIZE as MAX_WEBSOCKET_MESSAGE

__all__ = ["ServeLimits", "add_limit_options", "limits_epilog", "serve_limits"]

#: The most connections (or legacy sessions) an option may ask for: each costs a few
#: tasks and buffers, and the process's descriptors run out well before this.
_MOST_CONNECTIONS = 1_000_000


@dataclasses.dataclass(frozen=True)
class ServeLimits:
    """The transports' limits `transports.serve_folder` serves with.

    Attributes:
        http: For Streamable HTTP (and the WebSocket upgrades it takes).
        websocket: For ``--transport ws``.
        max_line_size: The longest stdio line, in bytes.
    """

    http: HttpLimits = dataclasses.field(default_factory=HttpLimits)
    websocket: WebSocketLimits = dataclasses.field(default_factory=WebSocketLimits)
    max_line_size: int = MAX_LINE_SIZE


def add_limit_options(
    parser: argparse.ArgumentParser,
    parse_size: Callable[[str], int],
    parse_count: Callable[[int, int], Any],
) -> None:
    """Add the transports' limits to ``mcpcore serve``, as a group of their own."""
    group = parser.add_argument_group("limits (see also --max-file-size and --max-files)")
    group.add_argument(
        "--max-message-size",
        type=parse_size,
        default=None,
        metavar="SIZE",
        help=f"the largest message accepted (default {human_size(MAX_BODY_SIZE)} over HTTP, "
        f"{human_size(MAX_WEBSOCKET_MESSAGE)} over WebSocket and stdio)",
    )
    group.add_argument(
        "--max-connections",
        type=parse_count(1, _MOST_CONNECTIONS),
        default=MAX_CONNECTIONS,
        metavar="N",
        help=f"HTTP and WebSocket connections at once; more get 503 (default {MAX_CONNECTIONS:,})",
    )
    group.add_argument(
        "--max-sessions",
        type=parse_count(1, _MOST_CONNECTIONS),
        default=MAX_SESSIONS,
        metavar="N",
        help=f"legacy (2025-11-25 and older) HTTP sessions at once (default {MAX_SESSIONS:,})",
    )
    group.add_argument(
        "--partial-budget",
        type=parse_size,
        default=MAX_PARTIAL_BYTES,
        metavar="SIZE",
        help="bytes all connections together may hold of messages still arriving "
        f"(default {human_size(MAX_PARTIAL_BYTES)})",
    )


def serve_limits(arguments: argparse.Namespace) -> ServeLimits:
    """The limits ``arguments`` (parsed with `add_limit_options`) ask for."""
    message = arguments.max_message_size
    http = HttpLimits(
        max_body_size=MAX_BODY_SIZE if message is None else message,
        max_connections=arguments.max_connections,
        max_sessions=arguments.max_sessions,
        max_partial_bytes=arguments.partial_budget,
    )
    websocket = WebSocketLimits(
        max_message_size=MAX_WEBSOCKET_MESSAGE if message is None else message,
        max_connections=arguments.max_connections,
        max_partial_bytes=arguments.partial_budget,
    )
    line = MAX_LINE_SIZE if message is None else message
    return ServeLimits(http=http, websocket=websocket, max_line_size=line)


def limits_epilog() -> str:
    """The ``limits:`` section of ``mcpcore serve --help``: every limit a client can hit."""
    handshake, idle = int(SESSION_HANDSHAKE_TIMEOUT), int(SESSION_IDLE_TIMEOUT // 60)
    return f"""\
limits (what a client can run into, and how to change it):
  files listed         {MAX_LISTED_FILES:,} by default; --max-files (others are still read by URI)
  file size            {human_size(DEFAULT_MAX_FILE_SIZE)} per file read; --max-file-size
  message size         {human_size(MAX_BODY_SIZE)} HTTP body (413 past it), \
{human_size(MAX_WEBSOCKET_MESSAGE)} WebSocket
                       message (close 1009), {human_size(MAX_LINE_SIZE)} stdio line \
(-32600); --max-message-size
  partial messages     {human_size(MAX_PARTIAL_BYTES)} for the whole process beyond \
{human_size(PARTIAL_FLOOR)} per connection
                       (413 / close 1009 past it); --partial-budget
  connections          {MAX_CONNECTIONS:,} HTTP and WebSocket (503 past it); --max-connections
  legacy sessions      {MAX_SESSIONS:,}; one never used after initialize expires in {handshake} s,
                       an idle one in {idle} min; when full an idle one is evicted, 503
                       only if all are busy; --max-sessions
  JSON nesting         {MAX_JSON_DEPTH} levels (-32700 past it); fixed
"""
