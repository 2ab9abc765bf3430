"""Plain POSTs to an MCP endpoint, outside any timing: checks, and opening a session.

The ``asgi`` and ``workers`` layers load their servers with wrk, but open each
2025-11-25 session (``initialize``, ``notifications/initialized``) and check each
server's answer beforehand with the standard library's client, here.
"""

from __future__ import annotations

import http.client
from collections.abc import Iterable
from typing import Final

from bench._asgi_apps import INITIALIZE, INITIALIZED, REQUEST_HEADERS
from mcpcore_cli.bench.verify import BenchmarkError

__all__ = ["TIMEOUT", "exchange", "open_session", "post"]

#: Seconds any one of these requests may take.
TIMEOUT: Final = 30
_POST_HEADERS: Final = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
}


def exchange(
    connection: http.client.HTTPConnection, body: bytes, headers: Iterable[tuple[str, str]]
) -> tuple[int, str, bytes]:
    """One POST to ``/mcp``: the status, the ``Mcp-Session-Id`` (or ``""``), the body."""
    connection.request("POST", "/mcp", body=body, headers={**_POST_HEADERS, **dict(headers)})
    response = connection.getresponse()
    return response.status, response.getheader("mcp-session-id") or "", response.read()


def post(port: int, body: bytes, headers: Iterable[tuple[str, str]]) -> tuple[int, str, bytes]:
    """One POST to ``127.0.0.1:port/mcp`` on a connection of its own (see `exchange`)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
    try:
        return exchange(connection, body, headers)
    finally:
        connection.close()


def open_session(connection: http.client.HTTPConnection) -> str:
    """A 2025-11-25 session opened and initialized over ``connection``; its id.

    Raises:
        BenchmarkError: The server refused either message.
    """
    status, session, body = exchange(connection, INITIALIZE, ())
    if status != 200 or not session:
        raise BenchmarkError(f"initialize answered {status} {body[:200]!r}")
    headers = (*REQUEST_HEADERS["legacy"], ("Mcp-Session-Id", session))
    status, _, body = exchange(connection, INITIALIZED, headers)
    if status not in (200, 202):
        raise BenchmarkError(f"notifications/initialized answered {status} {body[:200]!r}")
    return session
