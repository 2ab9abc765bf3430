"""Every limit of the WebSocket transport, named, with the reason for its value.

`WebSocketLimits` groups them so that `transports.serve_websocket`, `transports.serve_http`
(for its upgrades) and `transports.open_websocket_client` take one argument for all of
them; each default is the constant of the same name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from transports._net.partial import MAX_PARTIAL_BYTES
from transports._runtime.serving import MAX_CONCURRENT_HANDLERS
from transports._runtime.writer import WRITE_TIMEOUT

__all__ = [
    "CLOSE_TIMEOUT",
    "HANDSHAKE_TIMEOUT",
    "MAX_CONNECTIONS",
    "MAX_HANDSHAKE_SIZE",
    "MAX_MESSAGE_SIZE",
    "PING_INTERVAL",
    "PONG_TIMEOUT",
    "READ_SIZE",
    "WebSocketLimits",
]

#: Bytes of one JSON-RPC message (one text message, its fragments put together); past
#: it the connection is closed with 1009 "message too big" (RFC 6455 §7.4.1). The same
#: bound as a stdio line (`mcpcore.framing.MAX_MESSAGE_SIZE`): a large resource read
#: fits, and a peer can make us hold at most this much per connection. A server's
#: messages being put together also share the process's budget for partial messages
#: (`transports.MAX_PARTIAL_BYTES`): past it, 1009 too.
MAX_MESSAGE_SIZE: Final = 16 * 1024 * 1024
#: Seconds without a byte from the peer before we send a ping. Proxies commonly cut
#: idle connections after 60 s (nginx ``proxy_read_timeout``); the ``websockets``
#: library pings every 20 s too.
PING_INTERVAL: Final = 20.0
#: Seconds the peer has to answer a ping (or send anything at all) before it is taken
#: for dead and the connection closed (1011): a peer that vanished without a FIN (a
#: laptop closed, a NAT entry dropped) is noticed within interval + timeout.
PONG_TIMEOUT: Final = 20.0
#: Seconds a client has to send its whole opening handshake once connected (then the
#: connection is closed): the slowloris defence, as `transports.HEADER_TIMEOUT` for HTTP.
#: On the client side: seconds the server has to answer ours.
HANDSHAKE_TIMEOUT: Final = 10.0
#: Seconds we wait for the peer's Close frame after sending ours, before closing the
#: TCP connection anyway (RFC 6455 §7.1.1 lets the server close at once; waiting a
#: little lets a well-behaved client see the close code).
CLOSE_TIMEOUT: Final = 5.0
#: WebSocket connections `transports.serve_websocket` serves at once; past it a new
#: one gets 503 and is closed. Each costs a few tasks and its handlers.
MAX_CONNECTIONS: Final = 1024
#: Bytes of an opening handshake (request line and headers, or the server's answer):
#: h11's default, about what nginx and node allow.
MAX_HANDSHAKE_SIZE: Final = 16 * 1024
#: Bytes asked of the socket per read: a burst of pipelined messages in one call.
READ_SIZE: Final = 64 * 1024


@dataclass(frozen=True, slots=True)
class WebSocketLimits:
    """The limits of a WebSocket connection (each default is the constant of its name).

    Attributes:
        max_message_size: See `MAX_MESSAGE_SIZE`.
        max_partial_bytes: Bytes all server connections of the process together may
            hold in messages not yet complete, beyond 64 KiB each
            (`transports.MAX_PARTIAL_BYTES`, shared with HTTP; the smallest setting of
            the servers running applies). Not used by clients.
        ping_interval: See `PING_INTERVAL`.
        pong_timeout: See `PONG_TIMEOUT`.
        handshake_timeout: See `HANDSHAKE_TIMEOUT`.
        close_timeout: See `CLOSE_TIMEOUT`.
        write_timeout: Seconds one write may take before the peer is taken for gone
            (the runtime's `transports._runtime.writer.WRITE_TIMEOUT`).
        max_connections: See `MAX_CONNECTIONS` (`transports.serve_websocket` only;
            `transports.serve_http` counts its upgraded connections among its own).
        max_handlers: Requests handled at once on one connection; past it the server
            stops reading (`transports.MAX_CONCURRENT_HANDLERS`).
    """

    max_message_size: int = MAX_MESSAGE_SIZE
    max_partial_bytes: int = MAX_PARTIAL_BYTES
    ping_interval: float = PING_INTERVAL
    pong_timeout: float = PONG_TIMEOUT
    handshake_timeout: float = HANDSHAKE_TIMEOUT
    close_timeout: float = CLOSE_TIMEOUT
    write_timeout: float = WRITE_TIMEOUT
    max_connections: int = MAX_CONNECTIONS
    max_handlers: int = MAX_CONCURRENT_HANDLERS

    def __post_init__(self) -> None:
        for name in self.__slots__:
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive")
