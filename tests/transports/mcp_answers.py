"""The usual answers of the client tests' scripted MCP servers, by method.

A scripted server (`tests.transports.http_mcp_script` over HTTP,
`tests.transports.stream_script_server` over stdio and WebSocket) answers what a test
does not script itself with these: the handshake of its era (``server/discover`` for
2026-07-28, ``initialize`` for the legacy era), ``tools/list`` and a ``tools/call``
that echoes its arguments.

Standard library only: the stdio scripted server imports it in a process of its own.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = [
    "ECHO_TOOL",
    "ID",
    "LEGACY",
    "MODERN",
    "SERVER_INFO",
    "rpc_error",
    "usual_result",
    "with_id",
]

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
SERVER_INFO = {"name": "scripted", "version": "1.0"}
ECHO_TOOL = {"name": "echo", "inputSchema": {"type": "object"}}
#: Stands for the id of the request a scripted message answers (`with_id`).
ID = "<id>"


def rpc_error(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    """A JSON-RPC error response."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def usual_result(
    method: str, params: dict[str, Any], *, modern: bool, tools: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """The result a request of ``method`` gets (None: no such method in this era).

    ``modern``: the server speaks 2026-07-28 (results say their ``resultType``; there is
    ``server/discover``). ``initialize`` is answered in either era, as a legacy server
    answers it: a test of a modern server's refusal scripts that itself.
    """
    value: dict[str, Any]
    if method == "server/discover":
        if not modern:
            return None
        value = {
            "supportedVersions": [MODERN],
            "capabilities": {"tools": {}},
            "ttlMs": 0,
            "cacheScope": "public",
            "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO},
        }
    elif method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", LEGACY),
            "capabilities": {"tools": {}},
            "serverInfo": SERVER_INFO,
        }
    elif method == "tools/list":
        value = {"tools": tools}
        if modern:
            value |= {"ttlMs": 0, "cacheScope": "public"}
    elif method == "tools/call":
        text = f"{params.get('name')}: {params.get('arguments')}"
        value = {"content": [{"type": "text", "text": text}]}
    else:
        return None
    return {"resultType": "complete", **value} if modern else value


def with_id(message: Any, request_id: Any) -> bytes:
    """A scripted message as it goes out, answering ``request_id`` where it says `ID`.

    Bytes go out as they are; anything else is JSON.
    """
    if isinstance(message, bytes):
        return message
    if isinstance(message, dict) and message.get("id") == ID:
        message = {**message, "id": request_id}
    return json.dumps(message).encode()
