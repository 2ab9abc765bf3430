"""A stdio server for the stdio client tests: it crashes, hangs and hides on purpose.

    python tests/transports/client_fixture_server.py [--behaviour NAME]

Behaviours (how the process treats the protocol):

* ``serve`` (default): `serve_stdio` with the tools below;
* ``ignore-eof``: serve, then live on after stdin ends (the client must SIGTERM it);
* ``ignore-sigterm``: as ``ignore-eof``, and SIGTERM is ignored (the client must SIGKILL);
* ``close-stdout``: close stdout at once and wait for stdin to end (alive, but mute);
* ``silent``: read stdin and never answer, until it ends;
* ``exit-at-once``: write a line to stderr and exit with status 5;
* ``noisy``: before serving, write to the real stdout what no server should: a line that
  is not JSON, one that is not UTF-8, a JSON-RPC response nobody asked for, and a line
  of `NOISE_LINE_SIZE` bytes (longer than the tests' client accepts).
* ``deep-noise``: before serving, write lines nested `DEEP_NOISE_LEVELS` deep: a
  notification, an answer to a request nobody made, an array, and one cut short.

Tools:

* ``sleep(seconds, tag)``: sleeps; if cancelled, records ``tag`` as cancelled;
* ``was_cancelled(tag, wait=5)``: waits (at most ``wait`` s) for ``tag`` to be
  recorded; "yes" or "no";
* ``steps(count, interval)``: reports progress 1..count, ``interval`` seconds apart;
* ``crash(code)``: writes to stderr, then exits at once with ``code`` (mid-request);
* ``say(text)``: writes ``text`` to stderr, answers "said";
* ``shout(text)``: ``print``s ``text`` (Python's stdout) and writes it to file
  descriptor 1 as well, answers "shouted": `serve_stdio` must keep both off the protocol.
* ``nested(levels)``: answers with structured content ``levels`` arrays deep;
* ``log_nested(levels)``: logs (at ``info``) data ``levels`` arrays deep, answers "logged".
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import trio

from mcpcore import types
from mcpcore.server import Context, Server
from transports import serve_stdio

#: Seconds `was_cancelled` waits for a cancellation to be recorded.
CANCEL_WAIT = 5.0
#: Bytes of the oversized line the ``noisy`` behaviour writes.
NOISE_LINE_SIZE = 100_000
#: How deep the lines of the ``deep-noise`` behaviour nest (~2 KB lines, issue 15).
DEEP_NOISE_LEVELS = 1000


def nested_list(levels: int) -> Any:
    """``levels`` arrays, one inside the other, around a 0."""
    value: Any = 0
    for _ in range(levels):
        value = [value]
    return value


def build() -> Server:
    server = Server("client-fixture", "1.0")
    cancelled: defaultdict[str, trio.Event] = defaultdict(trio.Event)

    @server.tool()
    async def sleep(seconds: float, tag: str = "") -> str:
        """Sleeps; records its tag when cancelled."""
        try:
            await trio.sleep(seconds)
        except trio.Cancelled:
            cancelled[tag].set()
            raise
        return f"slept {seconds}"

    @server.tool()
    async def was_cancelled(tag: str, wait: float = CANCEL_WAIT) -> str:
        """Whether the sleep tagged ``tag`` was cancelled (waits ``wait`` s for it)."""
        with trio.move_on_after(wait):
            await cancelled[tag].wait()
        return "yes" if cancelled[tag].is_set() else "no"

    @server.tool()
    async def steps(ctx: Context, count: int, interval: float) -> str:
        """Reports progress 1..count, interval seconds apart."""
        for step in range(1, count + 1):
            await trio.sleep(interval)
            await ctx.report_progress(step, count, f"step {step}")
        return f"{count} steps"

    @server.tool()
    def crash(code: int) -> str:
        """Dies in the middle of the request."""
        os.write(2, f"crashing with {code}\n".encode())
        os._exit(code)

    @server.tool()
    def say(text: str) -> str:
        """Writes to stderr."""
        os.write(2, f"{text}\n".encode())
        return "said"

    @server.tool()
    def nested(levels: int) -> types.CallToolResult:
        """Answers with structured content nested ``levels`` deep."""
        return types.CallToolResult(content=[], structured_content=nested_list(levels))

    @server.tool()
    async def log_nested(ctx: Context, levels: int) -> str:
        """Logs data nested ``levels`` deep."""
        await ctx.log("info", nested_list(levels))
        return "logged"

    @server.tool()
    def shout(text: str) -> str:
        """Prints to stdout, both through Python and straight to fd 1."""
        print(text, flush=True)
        os.write(1, f"{text}\n".encode())
        return "shouted"

    return server


def make_deep_noise() -> None:
    levels = DEEP_NOISE_LEVELS
    deep = b"[" * levels + b"]" * levels
    noise = [
        b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":'
        + deep
        + b"}}",
        b'{"jsonrpc":"2.0","id":424242,"result":' + deep + b"}",
        deep,
        b'{"a":' * levels,
    ]
    os.write(1, b"\n".join(noise) + b"\n")


def make_noise() -> None:
    noise = [
        b"this is not JSON",
        b'{"jsonrpc": "2.0", "result": "\xff\xfe"}',
        b'{"jsonrpc": "2.0", "id": 424242, "result": {}}',
        b'{"jsonrpc": "2.0", "method": "x", "params": "' + b"x" * NOISE_LINE_SIZE + b'"}',
    ]
    os.write(1, b"\n".join(noise) + b"\n")


async def serve(behaviour: str) -> None:
    await serve_stdio(build(), shutdown_grace=0.1)
    if behaviour in ("ignore-eof", "ignore-sigterm"):
        await trio.sleep_forever()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--behaviour",
        default="serve",
        choices=[
            "serve",
            "ignore-eof",
            "ignore-sigterm",
            "close-stdout",
            "silent",
            "exit-at-once",
            "noisy",
            "deep-noise",
        ],
    )
    behaviour = parser.parse_args().behaviour
    if behaviour == "exit-at-once":
        os.write(2, b"not today\n")
        return 5
    if behaviour == "close-stdout":
        os.close(1)
        while os.read(0, 65536):
            pass
        return 0
    if behaviour == "silent":
        while os.read(0, 65536):
            pass
        return 0
    if behaviour == "noisy":
        make_noise()
    if behaviour == "deep-noise":
        make_deep_noise()
    if behaviour == "ignore-sigterm":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    trio.run(serve, behaviour)
    return 0


if __name__ == "__main__":
    sys.exit(main())
