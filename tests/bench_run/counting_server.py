"""A server that counts what it answers, for the tests of ``mcpcore bench run``.

    python tests/bench_run/counting_server.py mcpcore http COUNT_FILE  # prints its URL
    python tests/bench_run/counting_server.py mcpcore ws COUNT_FILE
    python tests/bench_run/counting_server.py mcpcore stdio COUNT_FILE
    python tests/bench_run/counting_server.py sdk http COUNT_FILE      # the official SDK
    python tests/bench_run/counting_server.py sdk stdio COUNT_FILE
    python tests/bench_run/counting_server.py sdk sse COUNT_FILE       # 2024-11-05 HTTP+SSE

Every server has the same fixtures, and writes to COUNT_FILE, after each answer, how
many it has given in all (``echo`` calls, ``fail`` calls, resource reads, prompt gets,
counting on from what the file says when it exists), as JSON: the server's own count,
which the tests hold the load generator's report to.

- tool ``echo(text)``: answers ``text``;
- tool ``fail()``: answers a result with ``isError: true``;
- resource ``count://answers``: the counts as text;
- prompt ``greet(name)``: one user message.

Over HTTP and WebSocket it listens on 127.0.0.1, on a port of its own pick, and prints
``URL <url>`` once it serves.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))

#: What each fixture was asked, so far.
COUNTS: Counter[str] = Counter()


#: The SDK runs sync tools on worker threads: one count and write at a time.
LOCK = threading.Lock()


def _answered(path: Path, what: str) -> None:
    with LOCK:
        COUNTS[what] += 1
        path.write_text(json.dumps(dict(COUNTS)))


def mcpcore_server(path: Path) -> Any:
    """mcpcore's `Server` with the fixtures."""
    from mcpcore.server import Server, ToolError

    server = Server("counting", "1.0")

    @server.tool()
    def echo(text: str) -> str:
        """Answer the text."""
        _answered(path, "echo")
        return text

    @server.tool()
    def fail() -> str:
        """Answer with a tool error."""
        _answered(path, "fail")
        raise ToolError("failed on purpose")

    @server.resource("count://answers", name="answers", mime_type="application/json")
    def answers() -> str:
        _answered(path, "resource")
        return json.dumps(dict(COUNTS))

    @server.prompt()
    def greet(name: str) -> str:
        """Greet someone."""
        _answered(path, "prompt")
        return f"Hello, {name}!"

    return server


def sdk_server(path: Path) -> Any:
    """The official SDK's ``MCPServer`` with the fixtures (its decorator API)."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("counting")

    def echo(text: str) -> str:
        """Answer the text."""
        _answered(path, "echo")
        return text

    def fail() -> str:
        """Answer with a tool error."""
        _answered(path, "fail")
        raise ValueError("failed on purpose")

    def answers() -> str:
        """The counts."""
        _answered(path, "resource")
        return json.dumps(dict(COUNTS))

    def greet(name: str) -> str:
        """Greet someone."""
        _answered(path, "prompt")
        return f"Hello, {name}!"

    server.tool()(echo)
    server.tool()(fail)
    server.resource("count://answers", mime_type="application/json")(answers)
    server.prompt()(greet)
    return server


def _listening() -> socket.socket:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)  # (connections wait in the backlog until uvicorn accepts them)
    return listener


async def _serve_mcpcore(server: Any, transport: str) -> None:
    import trio

    from transports import serve_http, serve_stdio, serve_websocket

    if transport == "stdio":
        await serve_stdio(server)
        return
    serve, path = (serve_http, "/mcp") if transport == "http" else (serve_websocket, "/ws")
    async with trio.open_nursery() as nursery:
        port = await nursery.start(
            lambda task_status: serve(server, port=0, task_status=task_status)
        )
        scheme = "http" if transport == "http" else "ws"
        print(f"URL {scheme}://127.0.0.1:{port}{path}", flush=True)


def _serve_sdk(server: Any, transport: str) -> None:
    if transport == "stdio":
        server.run("stdio")
        return
    import uvicorn

    listener = _listening()
    port = listener.getsockname()[1]
    if transport == "sse":  # the 2024-11-05 HTTP+SSE transport
        app, path = server.sse_app(), "/sse"
    else:
        app, path = server.streamable_http_app(json_response=True), "/mcp"
    config = uvicorn.Config(app, log_level="error", access_log=False)
    print(f"URL http://127.0.0.1:{port}{path}", flush=True)
    uvicorn.Server(config).run(sockets=[listener])


def main(argv: list[str]) -> None:
    kind, transport, count_file = argv
    path = Path(count_file)
    if path.exists():  # (one stdio server per level: the counts go on from the last's)
        COUNTS.update(json.loads(path.read_text()))
    if kind == "mcpcore":
        import trio

        trio.run(_serve_mcpcore, mcpcore_server(path), transport)
    else:
        _serve_sdk(sdk_server(path), transport)


if __name__ == "__main__":
    main(sys.argv[1:])
