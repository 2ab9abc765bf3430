"""The official Python SDK 1.x websocket client, against an MCP server (interop tests).

    .conformance/py-sdk1/bin/python tests/transports/sdk1_ws_client.py ws://127.0.0.1:PORT/ws

Runs in the SDK 1.x environment (`tests.transports.sdk_installs.ensure_python_sdk1`):
connects with ``mcp.client.websocket.websocket_client`` (subprotocol ``mcp``), runs
the handshake, lists and calls tools, reads a resource, gets a prompt, and prints what
it got as one JSON document on stdout.

The SDK is imported by name at run time: mypy checks this file against the SDK 2.x the
project's own environment holds, which has no WebSocket transport.
"""

from __future__ import annotations

import importlib
import json
import sys
import warnings
from typing import Any

import anyio


async def main(url: str) -> None:
    """Talk to the server at ``url`` and print the results."""
    warnings.simplefilter("ignore", DeprecationWarning)  # "deprecated in 1.30": we know
    websocket: Any = importlib.import_module("mcp.client.websocket")
    mcp: Any = importlib.import_module("mcp")
    async with (
        websocket.websocket_client(url) as (read, write),
        mcp.ClientSession(read, write) as session,
    ):
        initialized = await session.initialize()
        tools = await session.list_tools()
        called = await session.call_tool("test_simple_text", {})
        resource = await session.read_resource("test://static-text")
        prompt = await session.get_prompt(
            "test_prompt_with_arguments", {"arg1": "first", "arg2": "second"}
        )
        print(
            json.dumps(
                {
                    "server": initialized.serverInfo.name,
                    "protocol": initialized.protocolVersion,
                    "tools": [tool.name for tool in tools.tools],
                    "called": called.model_dump(mode="json", exclude_none=True),
                    "resource": resource.model_dump(mode="json", exclude_none=True),
                    "prompt": prompt.model_dump(mode="json", exclude_none=True),
                }
            )
        )


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
