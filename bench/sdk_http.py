"""The official SDK's Streamable HTTP client and server (``mcp`` 2.3.0), for the HTTP layer.

Import this module only when `bench._optional.Availability` says ``"sdk"`` is available.

* The server (`serve`, run in its own process by `bench._http_servers`): the
  ``MCPServer`` of `bench.sdk_dispatch.high_level_server` as the Starlette app of
  ``MCPServer.streamable_http_app``, on uvicorn. Its fastest configuration for a
  request-response workload: ``json_response=True`` (no SSE framing) and
  ``stateless_http=True`` (no session bookkeeping); for the SSE-replies workload the
  same with ``json_response=False`` (every answer an event stream, the SDK's default).
  uvicorn picks uvloop and httptools when they are installed (the ``bench`` extra
  installs them).
* The client: ``mcp.Client("http://127.0.0.1:PORT/mcp", mode=...)``, which speaks
  Streamable HTTP through httpx: ``mode="legacy"`` runs the initialize handshake
  (2025-11-25), ``mode="2026-07-28"`` the modern per-request envelope.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Final

import uvicorn
from mcp import Client

from bench.dispatch import weather
from bench.sdk_dispatch import MODES, high_level_server

__all__ = ["SDK_APP_OPTIONS", "SDK_SSE_APP_OPTIONS", "open_client", "serve"]

#: How the SDK's app is built: its fastest settings for one request, one answer.
SDK_APP_OPTIONS: Final[dict[str, Any]] = {"json_response": True, "stateless_http": True}
#: The same, answering with event streams.
SDK_SSE_APP_OPTIONS: Final[dict[str, Any]] = {"json_response": False, "stateless_http": True}


def open_client(url: str, era: str) -> Callable[[], AbstractAsyncContextManager[Client]]:
    """What opens a ``Client`` to the SDK server at ``url`` in ``era``."""
    # httpx2 (the SDK's HTTP client) logs every request at INFO, and MCPServer sets up INFO
    # logging in this process (the dispatch layer builds one): that would bury the progress.
    logging.getLogger("httpx2").setLevel(logging.WARNING)
    return lambda: Client(url, mode=MODES[era])


def serve(port: int, *, sse: bool = False) -> None:
    """Serve the SDK's ``MCPServer`` with the tool on 127.0.0.1:``port`` until killed.

    ``sse``: answer with event streams (`SDK_SSE_APP_OPTIONS`) rather than JSON bodies.
    """
    options = SDK_SSE_APP_OPTIONS if sse else SDK_APP_OPTIONS
    app = high_level_server(weather).streamable_http_app(**options)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="error", access_log=False)
