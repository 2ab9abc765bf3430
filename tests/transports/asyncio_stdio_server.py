"""The everything server over `transports.serve_stdio_asyncio`, for the asyncio stdio tests.

    python tests/transports/asyncio_stdio_server.py [--runner asyncio|anyio|uvloop]
        [--allow-trio] [--max-message-size N] [--grace SECONDS]

trio and wsproto are made unimportable before anything else is imported
(``sys.modules[name] = None``, what Python does for a module that is not installed),
unless ``--allow-trio``: the server must run where only asyncio is. ``--runner`` picks
the loop: ``asyncio.run``, ``anyio.run(..., backend="asyncio")`` or uvloop's.

Besides the everything server's fixtures (`examples.everything.build_server`, its
handlers sleeping with `asyncio.sleep`), three tools of its own:

* ``shout``: writes to stdout (Python's ``print`` and a raw ``os.write(1, ...)``),
  which must end up on stderr, never in the protocol stream;
* ``block``: reports progress once (so that the client knows it runs), then waits
  until cancelled, and notes the cancellation;
* ``cancellations``: waits until some ``block`` was cancelled, then says how many were.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

#: Modules that exist only for the trio drivers.
TRIO_ONLY = ("trio", "wsproto")
if "--allow-trio" not in sys.argv[1:]:
    for _name in TRIO_ONLY:
        sys.modules[_name] = None  # type: ignore[assignment]  # (ImportError from now on)

import asyncio  # noqa: E402  (after trio is made unimportable)
import os  # noqa: E402
from typing import Any  # noqa: E402

from examples.everything import build_server  # noqa: E402
from mcpcore.server import Context, Server  # noqa: E402
from transports import serve_stdio_asyncio  # noqa: E402


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runner", choices=["asyncio", "anyio", "uvloop"], default="asyncio")
    parser.add_argument("--allow-trio", action="store_true")
    parser.add_argument("--max-message-size", type=int, default=None)
    parser.add_argument("--grace", type=float, default=None)
    return parser.parse_args(argv)


def build() -> Server:
    server = build_server(asyncio.sleep)
    cancelled: list[object] = []
    one_cancelled = asyncio.Event()

    @server.tool()
    def shout(text: str) -> str:
        print(f"print: {text}")
        os.write(1, f"fd1: {text}\n".encode())
        return text.upper()

    @server.tool()
    async def block(ctx: Context) -> str:
        await ctx.report_progress(1, message="started")
        try:
            await asyncio.Event().wait()  # (never set)
        finally:
            cancelled.append(ctx.request_id)
            one_cancelled.set()
        return "unreachable"

    @server.tool()
    async def cancellations() -> str:
        await one_cancelled.wait()
        return f"{len(cancelled)} cancelled"

    return server


def main() -> None:
    arguments = parse(sys.argv[1:])
    server = build()
    options: dict[str, Any] = {}
    if arguments.max_message_size is not None:
        options["max_message_size"] = arguments.max_message_size
    if arguments.grace is not None:
        options["shutdown_grace"] = arguments.grace
    if arguments.runner == "asyncio":
        asyncio.run(serve_stdio_asyncio(server, **options))
    elif arguments.runner == "anyio":
        import anyio

        anyio.run(lambda: serve_stdio_asyncio(server, **options), backend="asyncio")
    else:
        import uvloop

        uvloop.run(serve_stdio_asyncio(server, **options))


if __name__ == "__main__":
    main()
