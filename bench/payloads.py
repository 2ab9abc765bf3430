"""The messages the benchmarks send: deterministic, compact JSON, built once.

Each builder returns a `Payload`: the exact bytes a peer would put on the wire (compact
JSON, no trailing newline) plus what a decoder needs to know to type them, namely the
JSON-RPC kind and the method the message belongs to. For a result the method is the one
of the request it answers (a response does not carry it; a real peer looks it up by id).
"""

from __future__ import annotations

import json
from typing import Any

from mcpcore_cli.bench.messages import Kind, Payload

__all__ = [
    "KIB",
    "MIB",
    "Kind",
    "Payload",
    "call_tool_result",
    "list_tools_result",
    "progress_notification",
    "read_resource_result",
    "text_of_size",
    "tools_call_request",
]

KIB = 1024
MIB = 1024 * KIB


def _compact(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode()


def tools_call_request() -> Payload:
    """A ``tools/call`` request with two arguments and a progress token (163 bytes)."""
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "get_weather",
            "arguments": {"location": "New York", "units": "metric"},
            "_meta": {"progressToken": "abc"},
        },
    }
    return Payload("request", "tools/call", _compact(message))


def call_tool_result() -> Payload:
    """A ``tools/call`` response: one text content block and ``isError: false`` (177 bytes)."""
    text = (
        "Current weather in New York: 22 degrees C, partly cloudy, wind 9 km/h west, humidity 65%"
    )
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"content": [{"type": "text", "text": text}], "isError": False},
    }
    return Payload("result", "tools/call", _compact(message))


_PROSE = (
    "The Model Context Protocol lets an application hand context to a language model.\n"
    'A server offers "tools", "resources" and "prompts"; a client calls them.\n'
    "\tEvery message is JSON-RPC 2.0, framed by the transport.\n"
)


def text_of_size(size: int) -> str:
    """ASCII prose of exactly ``size`` characters, with newlines, tabs and quotes.

    Real file contents have characters JSON must escape, and escapes change how fast a
    string decodes, so the text is not one repeated letter.
    """
    repeats = size // len(_PROSE) + 1
    return (_PROSE * repeats)[:size]


def read_resource_result(text_size: int) -> Payload:
    """A ``resources/read`` response carrying one text resource of ``text_size`` characters."""
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "contents": [
                {
                    "uri": "file:///project/docs/overview.md",
                    "mimeType": "text/markdown",
                    "text": text_of_size(text_size),
                }
            ]
        },
    }
    return Payload("result", "resources/read", _compact(message))


def _tool(index: int) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "query": {
            "type": "string",
            "description": f"What tool {index} should look up, in plain words or with filters.",
        },
        "limit": {
            "type": "integer",
            "description": "The largest number of results to return.",
            "minimum": 1,
            "maximum": 100,
        },
    }
    if index % 2:
        properties["format"] = {
            "type": "string",
            "enum": ["text", "json", "markdown"],
            "description": "How to format the answer.",
        }
    return {
        "name": f"tool_{index:03d}",
        "title": f"Tool number {index}",
        "description": (
            f"Tool {index} searches the project's knowledge base and returns the best "
            "matching passages, ranked by relevance, with their source locations. Use it "
            "before answering questions about the code base."
        ),
        "inputSchema": {"type": "object", "properties": properties, "required": ["query"]},
    }


def list_tools_result(count: int = 100) -> Payload:
    """A ``tools/list`` response listing ``count`` tools (about 59 KB for 100 tools).

    Each tool has a name, title, description and an input schema with two or three
    properties.
    """
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"tools": [_tool(index) for index in range(count)]},
    }
    return Payload("result", "tools/list", _compact(message))


def progress_notification() -> Payload:
    """A ``notifications/progress`` notification with total and message."""
    message = {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {
            "progressToken": "abc",
            "progress": 50,
            "total": 100,
            "message": "Processed 50 of 100 files",
        },
    }
    return Payload("notification", "notifications/progress", _compact(message))
