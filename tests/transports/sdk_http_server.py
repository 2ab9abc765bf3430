"""The official SDK's fixture server (`sdk_stdio_server.build`) over HTTP, for interop tests.

    python tests/transports/sdk_http_server.py [--json-response] [--sse]

Serves the SDK's Streamable HTTP app at ``/mcp`` (both eras on one endpoint, answers as
event streams, or as JSON with ``--json-response``), or with ``--sse`` its 2024-11-05
HTTP+SSE app (``GET /sse``, ``POST /messages/``), with uvicorn on 127.0.0.1 on a port
the kernel picks, and prints ``PORT <n>`` on stdout once it listens. It runs until
killed.
"""

from __future__ import annotations

import argparse
import socket
import sys
from pathlib import Path

import anyio
import uvicorn

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.transports.sdk_stdio_server import build


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json-response", action="store_true")
    parser.add_argument("--sse", action="store_true", help="the 2024-11-05 HTTP+SSE app")
    options = parser.parse_args()
    server = build()
    if options.sse:
        app = server.sse_app(host="127.0.0.1")
    else:
        app = server.streamable_http_app(host="127.0.0.1", json_response=options.json_response)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    runner = uvicorn.Server(config)

    async def serve() -> None:
        print(f"PORT {listener.getsockname()[1]}", flush=True)
        await runner.serve(sockets=[listener])

    anyio.run(serve)


if __name__ == "__main__":
    main()
