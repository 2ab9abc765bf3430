"""The server processes of the stdio layer (run by path: ``python bench/_stdio_servers.py``).

    python bench/_stdio_servers.py [--busy-poll=S] mcpcore          # serve_stdio
    python bench/_stdio_servers.py [--busy-poll=S] ceiling RESULT   # trio + msgspec echo

* ``mcpcore``: `transports.serve_stdio` serving `bench.dispatch.build_server` (the
  ``get_weather`` tool), both eras on the one connection.
* ``ceiling``: no MCP at all. Reads stdin in chunks of up to 64 KiB, splits lines,
  decodes each request with msgspec (to builtins), and answers it with
  ``{"jsonrpc":"2.0","id":<its id>,"result":RESULT}`` encoded by msgspec, the answers to
  one chunk joined into one write. ``RESULT`` is the JSON of the result mcpcore's server
  sends, so the bytes on the pipes are the same as mcpcore's.

Either spins up to S seconds on stdin before its event loop sleeps (``--busy-poll``,
`bench._busy_poll`; without it, not at all): mcpcore's through ``serve_stdio(busy_poll=S)``,
the ceiling's through `transports.BusyPolling`, the same rules.

The official SDK's server is `bench.sdk_stdio`.
"""

from __future__ import annotations

import os
import sys
from functools import partial
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import msgspec
import trio

from bench._busy_poll import OFF, busy_polling, parse_server_arguments

__all__ = ["READ_SIZE", "SCRIPT", "main", "serve_ceiling"]

#: This file, as the stdio clients run it.
SCRIPT = str(Path(__file__).resolve())
#: Bytes asked of a pipe per read (as `transports.serve_stdio` does).
READ_SIZE = 64 * 1024


async def serve_ceiling(
    result: Any, busy_poll: float = OFF, *, stdin_fd: int = 0, stdout_fd: int = 1
) -> None:
    """Answer every request line on stdin with ``result``, until stdin ends.

    Spins up to ``busy_poll`` seconds on stdin before the loop sleeps, as
    ``serve_stdio(busy_poll=...)`` does. ``stdin_fd`` and ``stdout_fd`` (duplicated,
    the originals left open) are where it reads and writes.
    """
    decode = msgspec.json.Decoder().decode
    encode = msgspec.json.Encoder().encode
    stdin = trio.lowlevel.FdStream(os.dup(stdin_fd))
    stdout = trio.lowlevel.FdStream(os.dup(stdout_fd))
    rest = b""
    async with stdin, stdout:
        with busy_polling(stdin.fileno(), busy_poll):
            while chunk := await stdin.receive_some(READ_SIZE):
                *lines, rest = (rest + chunk).split(b"\n")
                if lines:
                    answers = [
                        encode({"jsonrpc": "2.0", "id": decode(line)["id"], "result": result})
                        + b"\n"
                        for line in lines
                    ]
                    await stdout.send_all(answers[0] if len(answers) == 1 else b"".join(answers))


def main(argv: list[str]) -> int:
    """Serve the variant named by ``argv`` (after ``--busy-poll=S``) on stdin and stdout."""
    try:
        budget, argv = parse_server_arguments(argv)
    except ValueError as exc:
        print(f"{sys.argv[0]}: {exc}", file=sys.stderr)
        return 2
    if argv == ["mcpcore"]:
        from bench.dispatch import build_server
        from transports import serve_stdio

        trio.run(partial(serve_stdio, build_server(), busy_poll=budget))
    elif argv[:1] == ["ceiling"] and len(argv) == 2:
        trio.run(serve_ceiling, msgspec.json.decode(argv[1]), budget)
    else:
        print(
            f"usage: {sys.argv[0]} [--busy-poll=SECONDS] mcpcore | ceiling RESULT-JSON",
            file=sys.stderr,
        )
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
