"""An MCP server on the official Python SDK 1.x websocket server transport (interop tests).

    .conformance/py-sdk1/bin/python tests/transports/sdk1_ws_server.py

Runs in the SDK 1.x environment (`tests.transports.sdk_installs.ensure_python_sdk1`): a
``FastMCP`` server (a tool ``add``, a tool ``shout`` that logs, a resource
``test://greeting``, a prompt ``greet``) whose low-level server runs on
``mcp.server.websocket.websocket_server``, a Starlette ``WebSocketRoute`` at ``/ws``
(as the SDK's docs deploy it), with uvicorn on 127.0.0.1 on a port the kernel picks.
It prints ``PORT <n>`` on stdout once it listens, and runs until killed.

The SDK is imported by name at run time: mypy checks this file against the SDK 2.x the
project's own environment holds, which has no WebSocket transport.
"""

from __future__ import annotations

import importlib
import socket
import warnings
from typing import Any

import anyio


def build() -> Any:
    """The FastMCP server."""
    fastmcp: Any = importlib.import_module("mcp.server.fastmcp")
    server = fastmcp.FastMCP("sdk1-websocket")

    def add(a: int, b: int) -> str:
        """Adds two numbers."""
        return str(a + b)

    async def shout(text: str) -> str:
        """Logs the text, then returns it in capitals."""
        await server.get_context().info(f"shouting {text}")
        return text.upper()

    def greeting() -> str:
        """A greeting."""
        return "Hello from the SDK 1.x"

    def greet(name: str) -> str:
        """Greets someone."""
        return f"Say hello to {name}"

    # (Its decorators, called: mypy sees them as untyped.)
    server.tool()(add)
    server.tool()(shout)
    server.resource("test://greeting")(greeting)
    server.prompt()(greet)
    return server


def main() -> None:
    """Serve until killed."""
    warnings.simplefilter("ignore", DeprecationWarning)  # "deprecated in 1.30": we know
    routing: Any = importlib.import_module("starlette.routing")
    applications: Any = importlib.import_module("starlette.applications")
    websocket: Any = importlib.import_module("mcp.server.websocket")
    uvicorn: Any = importlib.import_module("uvicorn")
    lowlevel = build()._mcp_server

    async def endpoint(connection: Any) -> None:
        async with websocket.websocket_server(
            connection.scope, connection.receive, connection.send
        ) as (read, write):
            await lowlevel.run(read, write, lowlevel.create_initialization_options())

    app = applications.Starlette(routes=[routing.WebSocketRoute("/ws", endpoint)])
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    runner = uvicorn.Server(uvicorn.Config(app, log_level="warning"))

    async def serve() -> None:
        print(f"PORT {listener.getsockname()[1]}", flush=True)
        await runner.serve(sockets=[listener])

    anyio.run(serve)


if __name__ == "__main__":
    main()
