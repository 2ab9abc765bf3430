"""The everything server over HTTP and over WebSocket in one process, for memory tests.

    python tests/transports/partial_flood_server.py      # prints "HTTP_PORT WS_PORT"

Both listeners share the process's budget for partial messages
(`transports._net.partial.PARTIAL_BUDGET`); the tool ``partial_budget_held`` tells how much
of it is held (a small request, which no flood of large ones may starve). No busy
polling: the test reads the process's memory, not its speed.
"""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import trio

from examples.everything import build_server
from transports import serve_http, serve_websocket
from transports._net.partial import PARTIAL_BUDGET


async def main() -> None:
    """Serve until killed; print the two ports once both listen."""
    http_server = build_server(trio.sleep)

    @http_server.tool()
    def partial_budget_held() -> str:
        """Bytes of the process's partial-message budget held now."""
        return str(PARTIAL_BUDGET.held)

    async with trio.open_nursery() as nursery:
        http_port = await nursery.start(partial(serve_http, http_server, port=0, busy_poll=0))
        ws_port = await nursery.start(
            partial(serve_websocket, build_server(trio.sleep), port=0, busy_poll=0)
        )
        print(http_port, ws_port, flush=True)


if __name__ == "__main__":
    trio.run(main)
