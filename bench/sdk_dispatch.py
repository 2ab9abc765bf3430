"""The official SDK's in-memory client/server pair (``mcp`` 2.3.0), for the dispatch layer.

Import this module only when `bench._optional.Availability` says ``"sdk"`` is available.

``mcp.Client(server, mode=...)`` connects to an in-process server, as the SDK's own
tests and users' do:

* ``mode="legacy"``: the initialize handshake, then JSON-RPC over a pair of in-memory
  streams (``InMemoryTransport``), with the server's dispatcher running in a task;
* ``mode="2026-07-28"``: the modern per-request path through a ``DirectDispatcher`` pair
  (no streams, no JSON-RPC framing: the typed request is handed over as objects).

Two servers, both with the ``get_weather`` tool of `bench.dispatch`:

* ``sdk``: ``MCPServer``, the decorator API users write (the counterpart of
  `mcpcore.server.Server`): arguments validated against the signature, the return
  value converted to content;
* ``sdk-lowlevel``: the low-level ``Server`` with hand-written ``on_list_tools`` and
  ``on_call_tool`` handlers, the SDK's leanest server path.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import mcp.types as sdk_types
from mcp import Client
from mcp.server import Server as LowLevelServer
from mcp.server.mcpserver import MCPServer

__all__ = ["MODES", "call_tool", "high_level_server", "low_level_server", "open_client", "text_of"]

#: Our era names, as the SDK's ``mode``.
MODES = {"legacy": "legacy", "modern": "2026-07-28"}


def high_level_server(weather: Callable[[str, str], str], *, awaited: bool = False) -> MCPServer:
    """An ``MCPServer`` with the tool (the decorator API; ``awaited``: an ``async def``)."""
    server = MCPServer("sdk-bench")

    def get_weather(location: str, units: str = "metric") -> str:
        """The weather at a location."""
        return weather(location, units)

    async def get_weather_async(location: str, units: str = "metric") -> str:
        """The weather at a location."""
        return weather(location, units)

    # (Registered by a call rather than as a decorator, so that mypy accepts it whether
    # or not the SDK's types are installed.)
    server.tool(name="get_weather")(get_weather_async if awaited else get_weather)
    return server


def low_level_server(weather: Callable[[str, str], str]) -> LowLevelServer[Any]:
    """A low-level ``Server`` with hand-written handlers (the leanest server path)."""
    tool = sdk_types.Tool(
        name="get_weather",
        description="The weather at a location.",
        input_schema={
            "type": "object",
            "properties": {"location": {"type": "string"}, "units": {"type": "string"}},
            "required": ["location"],
        },
    )

    async def list_tools(context: Any, params: Any) -> sdk_types.ListToolsResult:
        return sdk_types.ListToolsResult(tools=[tool])

    async def call_tool(context: Any, params: Any) -> sdk_types.CallToolResult:
        arguments = params.arguments or {}
        text = weather(arguments["location"], arguments.get("units", "metric"))
        return sdk_types.CallToolResult(content=[sdk_types.TextContent(text=text)])

    return LowLevelServer("sdk-bench", on_list_tools=list_tools, on_call_tool=call_tool)


def open_client(server: Any, era: str) -> Callable[[], AbstractAsyncContextManager[Client]]:
    """What opens a connected ``Client`` to ``server`` in ``era``."""
    return lambda: Client(server, mode=MODES[era])


def call_tool(arguments: dict[str, Any]) -> Callable[[Client], Awaitable[Any]]:
    """One ``tools/call`` of ``get_weather``."""

    def call(client: Client) -> Awaitable[Any]:
        answer: Awaitable[Any] = client.call_tool("get_weather", arguments)
        return answer

    return call


def text_of(result: Any) -> str:
    """The text of a result's one text block."""
    [block] = result.content
    return str(block.text)
