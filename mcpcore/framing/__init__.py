"""Framing: cutting byte streams into whole messages, and joining messages into bytes.

Each MCP transport frames JSON-RPC messages its own way: stdio writes one per line
(`ndjson`), Streamable HTTP sends them as server-sent events (`sse`). Framing sits
between the transport's IO and the JSON codec. It never parses JSON: a message is
opaque bytes (or, for SSE, text) to it, and it never does IO either: the transport feeds
it the bytes it read and writes the bytes it returns.

Every buffer here is bounded by a named limit, so a peer can cost us at most one
message's worth of memory per stream.
"""

from mcpcore.framing._ndjson import MAX_MESSAGE_SIZE, LineFramer, OversizedMessage, encode_lines
from mcpcore.framing._sse import (
    MAX_EVENT_SIZE,
    SSEEvent,
    SSEEventTooLarge,
    SSEParser,
    encode_comment,
    encode_event,
)

__all__ = [
    "MAX_EVENT_SIZE",
    "MAX_MESSAGE_SIZE",
    "LineFramer",
    "OversizedMessage",
    "SSEEvent",
    "SSEEventTooLarge",
    "SSEParser",
    "encode_comment",
    "encode_event",
    "encode_lines",
]
