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
from tests.transports.mcp_answers import ECHO_TOOL, LEGACY, MODERN, rpc_error, usual_result

__all__ = ["LEGACY", "MODERN", "Hook", "McpScript", "result", "rpc_error"]

Hook = Callable[[Received, Reply], Awaitable[None]]


def result(request: Received, value: dict[str, Any], *, modern: bool = False) -> dict[str, Any]:
    """The JSON-RPC result answering ``request``."""
    if modern:
        value = {"resultType": "complete", **value}
    return {"jsonrpc": "2.0", "id": request.message["id"], "result": value}


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
        """The default answer of a request (`tests.transports.mcp_answers`)."""
        message = request.message
        method = message["method"]
        params = message.get("params") or {}
        value = usual_result(method, params, modern=self.modern, tools=self.tools)
        if value is None:
            # (A legacy server refuses the 2026-07-28 probe with 400, as the era says.)
            status = 400 if method == "server/discover" else 200
            await reply.json(rpc_error(message["id"], -32601, "no such method"), status=status)
            return
        headers = []
        if method == "initialize" and self.session_id is not None:
            self.sessions += 1
            if self.sessions > 1:
                self.session_id = f"session-{self.sessions}"
            headers.append(("mcp-session-id", self.session_id))
        await reply.json({"jsonrpc": "2.0", "id": message["id"], "result": value}, headers=headers)
