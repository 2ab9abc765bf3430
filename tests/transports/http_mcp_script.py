"""A scripted MCP server over HTTP, for client tests: the usual answers, overridable per method.

`McpScript` answers the handshake of its era (``server/discover`` for 2026-07-28,
``initialize`` with a session id for the legacy era), ``tools/list`` and a ``tools/call``
that echoes its arguments, all as JSON; a test overrides any method with a hook
``async def hook(request, reply) -> None`` and watches what arrived in
``server.requests``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from tests.transports.http_scripted_server import Received, Reply

__all__ = ["LEGACY", "MODERN", "Hook", "McpScript", "result", "rpc_error"]

MODERN = "2026-07-28"
LEGACY = "2025-11-25"

Hook = Callable[[Received, Reply], Awaitable[None]]

SERVER_INFO = {"name": "scripted", "version": "1.0"}
ECHO_TOOL = {"name": "echo", "inputSchema": {"type": "object"}}


def result(request: Received, value: dict[str, Any], *, modern: bool = False) -> dict[str, Any]:
    """The JSON-RPC result answering ``request``."""
    if modern:
        value = {"resultType": "complete", **value}
    return {"jsonrpc": "2.0", "id": request.message["id"], "result": value}


def rpc_error(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    """A JSON-RPC error response."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


class McpScript:
    """The server's behaviour: era, session, tools, and hooks per JSON-RPC method.

    Args:
        era: ``"legacy"`` (``initialize`` only; ``server/discover`` gets 400) or
            ``"modern"`` (``server/discover`` only).
        tools: The ``tools/list`` answer.
        session_id: The legacy session id issued (None: no session).
    """

    def __init__(
        self,
        era: str = "legacy",
        *,
        tools: list[dict[str, Any]] | None = None,
        session_id: str | None = "session-1",
    ) -> None:
        self.era = era
        self.tools = [ECHO_TOOL] if tools is None else tools
        self.session_id = session_id
        self.sessions = 0
        #: Session ids answered with 404 from now on.
        self.expired: set[str] = set()
        #: Hooks by JSON-RPC method, and for "GET" and "DELETE".
        self.hooks: dict[str, Hook] = {}

    @property
    def modern(self) -> bool:
        return self.era == "modern"

    async def __call__(self, request: Received, reply: Reply) -> None:
        hook = self.hooks.get(request.method)
        if request.method in ("GET", "DELETE"):
            if hook is not None:
                await hook(request, reply)
            else:
                await reply.status(405 if request.method == "GET" else 200)
            return
        message = request.message
        method = message.get("method") if isinstance(message, dict) else None
        if not self.modern and method != "initialize" and self.session_id is not None:
            session = request.headers.get("mcp-session-id")
            if session is None:
                await reply.json(rpc_error(None, -32600, "no session"), status=400)
                return
            if session in self.expired:
                await reply.json(rpc_error(None, -32001, "Session not found"), status=404)
                return
        hook = self.hooks.get(method or "")
        if hook is not None:
            await hook(request, reply)
        elif "id" not in message or method is None:
            await reply.status(202)
        else:
            await self.answer(request, reply)

    async def answer(self, request: Received, reply: Reply) -> None:
        """The default answer of a request."""
        message = request.message
        method = message["method"]
        params = message.get("params") or {}
        modern = self.modern
        if method == "server/discover":
            if not modern:
                await reply.json(rpc_error(message["id"], -32601, "no such method"), status=400)
                return
            value = {
                "supportedVersions": [MODERN],
                "capabilities": {"tools": {}},
                "ttlMs": 0,
                "cacheScope": "public",
                "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO},
            }
            await reply.json(result(request, value, modern=True))
        elif method == "initialize":
            headers = []
            if self.session_id is not None:
                self.sessions += 1
                if self.sessions > 1:
                    self.session_id = f"session-{self.sessions}"
                headers.append(("mcp-session-id", self.session_id))
            value = {
                "protocolVersion": params["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": SERVER_INFO,
            }
            await reply.json(result(request, value), headers=headers)
        elif method == "tools/list":
            value = {"tools": self.tools}
            if modern:
                value |= {"ttlMs": 0, "cacheScope": "public"}
            await reply.json(result(request, value, modern=modern))
        elif method == "tools/call":
            text = f"{params['name']}: {params.get('arguments')}"
            value = {"content": [{"type": "text", "text": text}]}
            await reply.json(result(request, value, modern=modern))
        else:
            await reply.json(rpc_error(message["id"], -32601, "no such method"))
