"""A stdio server for the stdio server tests: tools that misbehave on purpose.

    python tests/transports/server_fixture.py [--max-handlers N] [--grace SECONDS]

* ``shout``: prints to stdout (Python's ``print`` and a raw ``os.write(1, ...)``),
  which must end up on stderr, never in the protocol stream;
* ``wait_forever``: says on stderr that it started, then waits until cancelled, and
  says so on stderr too;
* ``slow``: sleeps the given seconds, then answers;
* ``ask_model``: asks the client's model (a legacy server-to-client request).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import trio

from mcpcore import types
from mcpcore.server import Context, Server
from transports import serve_stdio


def build() -> Server:
    server = Server("stdio-fixture", "1.0")

    @server.tool()
    def shout(text: str) -> str:
        print(f"print: {text}")
        os.write(1, f"fd1: {text}\n".encode())
        return text.upper()

    @server.tool()
    async def wait_forever(ctx: Context) -> str:
        os.write(2, f"started {ctx.request_id}\n".encode())
        try:
            await trio.sleep_forever()
        finally:
            os.write(2, f"cancelled {ctx.request_id}\n".encode())

    @server.tool()
    async def slow(seconds: float) -> str:
        await trio.sleep(seconds)
        return f"slept {seconds}"

    @server.tool()
    async def ask_model(ctx: Context) -> str:
        question = types.SamplingMessage(role="user", content=types.TextContent(text="Hi?"))
        answer = await ctx.sample([question], max_tokens=10)
        content = answer.content
        return content.text if isinstance(content, types.TextContent) else "?"

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-handlers", type=int, default=1024)
    parser.add_argument("--grace", type=float, default=2.0)
    arguments = parser.parse_args()
    trio.run(
        lambda: serve_stdio(
            build(), max_handlers=arguments.max_handlers, shutdown_grace=arguments.grace
        )
    )


if __name__ == "__main__":
    main()
