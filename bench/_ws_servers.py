"""The server processes of the WebSocket layer (run by path: ``python bench/_ws_servers.py``).

    python bench/_ws_servers.py [--busy-poll=S] ceiling PORT RESULT-JSON  # wsproto echo
    python bench/_ws_servers.py [--busy-poll=S] mcpcore PORT    # transports.serve_websocket

Each listens on ws://127.0.0.1:PORT/ws until killed, spinning up to S seconds on each
connection before its event loop sleeps (``--busy-poll``, `bench._busy_poll`; without
it: 0, off).

* ``ceiling``: `bench._ws_ceiling.serve_ceiling_ws`, answering with RESULT.
* ``mcpcore``: `transports.serve_websocket` serving `bench.dispatch.build_server` (the
  ``get_weather`` tool), both eras on each connection.

The official SDK has no WebSocket transport in 2.x (its 1.x one was removed), so there
is no SDK server here.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import msgspec
import trio

from bench._busy_poll import parse_server_arguments

__all__ = ["SCRIPT", "main"]

#: This file, as the WebSocket layer runs it.
SCRIPT = str(Path(__file__).resolve())


def main(argv: list[str]) -> int:
    """Serve the variant named by ``argv[0]`` (after ``--busy-poll=S``) on the port ``argv[1]``."""
    try:
        budget, argv = parse_server_arguments(argv)
    except ValueError as exc:
        print(f"{sys.argv[0]}: {exc}", file=sys.stderr)
        return 2
    kind, port = (argv[0], int(argv[1])) if len(argv) >= 2 else ("", 0)
    if kind == "ceiling" and len(argv) == 3:
        from functools import partial

        from bench._ws_ceiling import serve_ceiling_ws

        trio.run(partial(serve_ceiling_ws, port, msgspec.json.decode(argv[2]), busy_poll=budget))
    elif kind == "mcpcore" and len(argv) == 2:
        from functools import partial

        from bench.dispatch import build_server
        from transports import serve_websocket

        trio.run(
            partial(serve_websocket, build_server(), host="127.0.0.1", port=port, busy_poll=budget)
        )
    else:
        print(
            f"usage: {sys.argv[0]} [--busy-poll=SECONDS] ceiling PORT RESULT | mcpcore PORT",
            file=sys.stderr,
        )
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
