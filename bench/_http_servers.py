"""The server processes of the HTTP layer (run by path: ``python bench/_http_servers.py``).

    python bench/_http_servers.py [--busy-poll=S] ceiling PORT RESULT-JSON [sse]  # HTTP/1.1 echo
    python bench/_http_servers.py [--busy-poll=S] mcpcore PORT [sse]     # transports.serve_http
    python bench/_http_servers.py sdk PORT [sse]                  # the SDK's MCPServer

Each listens on 127.0.0.1:PORT until killed; with ``sse`` it answers every request with
an event stream (the HTTP layer's "SSE replies" workloads), otherwise with JSON bodies
where it can. With ``--busy-poll=S`` (`bench._busy_poll`; without it: 0, off) the
ceiling and mcpcore spin up to S seconds on each connection before their event loop
sleeps; the SDK's server has no such option.

* ``ceiling``: `bench._http_ceiling.serve_ceiling_http`, answering with RESULT.
* ``mcpcore``: `transports.serve_http` serving `bench.dispatch.build_server` (the
  ``get_weather`` tool), both eras on ``/mcp``, with ``replies="json"`` (every answer a
  JSON body, the legacy 2025-11-25 ones too: no priming event, nothing stored for
  resumption), or with ``sse`` ``replies="stream"`` (every answer an event stream: in
  2025-11-25 primed and resumable, as by default; in 2026-07-28 the answer as its one
  event).
* ``sdk``: the official SDK's ``MCPServer`` (`bench.sdk_dispatch.high_level_server`, the
  same tool) as its Streamable HTTP Starlette app, in its fastest configuration
  (`bench.sdk_http.SDK_APP_OPTIONS`: JSON responses, stateless; with ``sse``,
  `bench.sdk_http.SDK_SSE_APP_OPTIONS`), on uvicorn with uvloop and httptools when
  installed (``uvicorn[standard]``, as the SDK's docs deploy it).
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

#: This file, as the HTTP layer runs it.
SCRIPT = str(Path(__file__).resolve())


def main(argv: list[str]) -> int:
    """Serve the variant named by ``argv[0]`` (after ``--busy-poll=S``) on the port ``argv[1]``."""
    try:
        budget, argv = parse_server_arguments(argv)
    except ValueError as exc:
        print(f"{sys.argv[0]}: {exc}", file=sys.stderr)
        return 2
    sse = argv[-1:] == ["sse"]
    if sse:
        argv = argv[:-1]
    kind, port = (argv[0], int(argv[1])) if len(argv) >= 2 else ("", 0)
    if kind == "ceiling" and len(argv) == 3:
        from functools import partial

        from bench._http_ceiling import serve_ceiling_http

        trio.run(
            partial(
                serve_ceiling_http, port, msgspec.json.decode(argv[2]), sse=sse, busy_poll=budget
            )
        )
    elif kind == "mcpcore" and len(argv) == 2:
        from functools import partial

        from bench.dispatch import build_server
        from transports import ReplyMode, serve_http

        replies: ReplyMode = "stream" if sse else "json"
        trio.run(
            partial(
                serve_http,
                build_server(),
                host="127.0.0.1",
                port=port,
                replies=replies,
                busy_poll=budget,
            )
        )
    elif kind == "sdk" and len(argv) == 2:
        from bench.sdk_http import serve

        serve(port, sse=sse)
    else:
        print(
            f"usage: {sys.argv[0]} [--busy-poll=SECONDS] ceiling PORT RESULT [sse] "
            "| mcpcore PORT [sse] | sdk PORT [sse]",
            file=sys.stderr,
        )
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
