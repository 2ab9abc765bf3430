"""The official SDK's stdio client and server (``mcp`` 2.3.0), for the stdio layer.

Import this module only when `bench._optional.Availability` says ``"sdk"`` is available.

* The server: this file run by path (``python bench/sdk_stdio.py``) serves the
  ``MCPServer`` of `bench.sdk_dispatch.high_level_server` (the ``get_weather`` tool, the
  decorator API) with ``MCPServer.run("stdio")``, which is how the SDK documents a stdio
  server: ``anyio.run(run_stdio_async)``, i.e. asyncio, its ``stdio_server`` streams and
  the low-level server's run loop, which serves both eras.
* The client: ``mcp.Client(StdioServerParameters(command=sys.executable,
  args=[this file]), mode=...)``: the SDK's ``stdio_client`` spawns the server and talks
  JSON lines over its stdin and stdout; ``mode="legacy"`` runs the initialize handshake
  (2025-11-25), ``mode="2026-07-28"`` adopts the modern era directly.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from bench.dispatch import weather
from bench.sdk_dispatch import MODES, high_level_server

__all__ = ["SCRIPT", "open_client", "serve"]

#: This file, as the SDK's client runs it.
SCRIPT = str(Path(__file__).resolve())


def open_client(era: str) -> Callable[[], AbstractAsyncContextManager[Client]]:
    """What opens a ``Client`` to a fresh SDK server process in ``era``."""
    parameters = StdioServerParameters(command=sys.executable, args=[SCRIPT])
    return lambda: Client(parameters, mode=MODES[era])


def serve() -> None:
    """Serve the SDK's ``MCPServer`` with the tool on this process's stdin and stdout."""
    high_level_server(weather).run("stdio")


if __name__ == "__main__":
    serve()
