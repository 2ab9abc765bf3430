"""The server processes of the storms and large layers (run by path).

    python bench/_workload_servers.py mcpcore storms   # progress and cancel storm tools
    python bench/_workload_servers.py mcpcore large    # 1,000 tools, 1 and 10 MiB resources
    python bench/_workload_servers.py sdk storms       # the official SDK's counterparts
    python bench/_workload_servers.py sdk large
    python bench/_workload_servers.py ceiling progress # the progress storm's raw ceiling
    python bench/_workload_servers.py sdk sessions PORT  # the SDK on Streamable HTTP

mcpcore's servers and the ceiling take ``--busy-poll=S`` first (`bench._busy_poll`;
without it: 0, off): they spin up to S seconds on stdin before their event loop sleeps.

* ``mcpcore``: `transports.serve_stdio` serving a `mcpcore.server.Server` (the
  decorator API).
* ``sdk``: the official SDK on its stdio server: ``MCPServer.run("stdio")`` for the
  storms (its tools take its ``Context`` to report progress), and its low-level
  ``Server`` with hand-written ``on_list_tools`` / ``on_read_resource`` for the large
  payloads (its leanest path; ``MCPServer`` cannot take a ready-made input schema).
* ``ceiling progress``: no MCP. For every request line it writes ``count`` progress
  notifications (its ``arguments.count``, the token from its ``_meta``) and a result,
  each encoded by msgspec, joined into writes of up to `WRITE_CHUNK` bytes.

The tools:

* ``progress_storm(count)``: reports progress ``1..count`` of ``count`` (no message),
  then answers ``"<count> notifications"``.
* ``storm(index)``: holds for `STORM_HOLD_SECONDS`, shielded from cancellation (the
  handler finishes anyway, so answers keep coming after a cancel), then answers
  ``str(index)``.
* ``storm_stats()`` (mcpcore only): ``"<finished> <answered>"``, the ``storm``
  handlers that finished and those of them whose answer was sent (their request not
  cancelled by then), since the last ``storm_stats``; then the counts start again.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Final

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import msgspec

from bench import payloads
from bench._busy_poll import OFF, busy_polling, parse_server_arguments
from mcpcore.server import Context, Server

__all__ = [
    "LARGE_TEXTS",
    "SCRIPT",
    "STORM_HOLD_SECONDS",
    "TOOL_COUNT",
    "large_tools",
    "main",
    "resource_uri",
    "serve_progress_ceiling",
]

#: This file, as the clients run it.
SCRIPT: Final = str(Path(__file__).resolve())
#: Seconds each ``storm`` handler holds before answering: long enough that thousands of
#: calls are still in flight when the client cancels half of them, short enough that
#: the server's 1,024 concurrent handlers keep the storm going at over 100k calls/s.
STORM_HOLD_SECONDS: Final = 0.005
#: Tools listed by the large layer's servers, in one page.
TOOL_COUNT: Final = 1000
#: The large layer's text resources: name and size in characters.
LARGE_TEXTS: Final = {"1 MiB": payloads.MIB, "10 MiB": 10 * payloads.MIB}
#: Bytes asked of stdin per read (as `transports.serve_stdio` does).
READ_SIZE: Final = 64 * 1024
#: The most bytes the progress ceiling joins into one write (as mcpcore's writer does).
WRITE_CHUNK: Final = 256 * 1024
_MIME: Final = "text/markdown"


def resource_uri(size_name: str) -> str:
    """The URI of the large text resource called ``size_name`` (``"1 MiB"``)."""
    return "bench://text/" + size_name.replace(" ", "")


def large_tools() -> list[dict[str, Any]]:
    """The `TOOL_COUNT` tools of the large layer, as JSON (`bench.payloads`' shape)."""
    message = msgspec.json.decode(payloads.list_tools_result(TOOL_COUNT).data)
    tools: list[dict[str, Any]] = message["result"]["tools"]
    return tools


# ---------------------------------------------------------------- mcpcore


def _mcpcore_storms() -> Any:
    import trio

    server = Server("mcpcore-bench-storms", "1.0")
    counts = {"finished": 0, "answered": 0}

    @server.tool()
    async def progress_storm(ctx: Context, count: int) -> str:
        """Report progress 1..count, then answer."""
        for value in range(1, count + 1):
            await ctx.report_progress(value, count)
        return f"{count} notifications"

    @server.tool()
    async def storm(ctx: Context, index: int) -> str:
        """Hold a moment, shielded from cancellation, then answer the index."""
        with trio.CancelScope(shield=True):
            await trio.sleep(STORM_HOLD_SECONDS)
        counts["finished"] += 1
        counts["answered"] += not ctx.cancelled
        return str(index)

    @server.tool()
    def storm_stats() -> str:
        """The storm handlers finished and answered since the last call; then reset."""
        text = f"{counts['finished']} {counts['answered']}"
        counts.update(finished=0, answered=0)
        return text

    return server


def _mcpcore_large() -> Any:
    server = Server("mcpcore-bench-large", "1.0", page_size=TOOL_COUNT)

    def tool_handler(arguments: dict[str, Any]) -> str:
        return "listed, not called"

    for tool in large_tools():
        server.tool(
            name=tool["name"],
            title=tool["title"],
            description=tool["description"],
            input_schema=tool["inputSchema"],
        )(tool_handler)
    for size_name, size in LARGE_TEXTS.items():
        server.resource(resource_uri(size_name), name=f"text {size_name}", mime_type=_MIME)(
            _text_reader(payloads.text_of_size(size))
        )
    return server


def _text_reader(text: str) -> Any:
    """A resource handler answering ``text``."""

    def read() -> str:
        return text

    return read


# ---------------------------------------------------------------- the official SDK


def _sdk_storms() -> None:
    import anyio
    from mcp.server.mcpserver import Context as SdkContext
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("sdk-bench-storms")

    async def progress_storm(count: int, ctx: Any) -> str:
        """Report progress 1..count, then answer."""
        for value in range(1, count + 1):
            await ctx.report_progress(value, count)
        return f"{count} notifications"

    async def storm(index: int) -> str:
        """Hold a moment, shielded from cancellation, then answer the index."""
        with anyio.CancelScope(shield=True):
            await anyio.sleep(STORM_HOLD_SECONDS)
        return str(index)

    # MCPServer finds the context parameter by its annotation, resolved in this
    # module's globals, where the SDK is not imported (it is optional): say it here.
    progress_storm.__annotations__["ctx"] = SdkContext
    server.tool()(progress_storm)
    server.tool()(storm)
    server.run("stdio")


def _sdk_large() -> None:
    import anyio
    import mcp.types as sdk_types
    from mcp.server import Server as LowLevelServer
    from mcp.server.stdio import stdio_server

    tools = [
        sdk_types.Tool(
            name=tool["name"],
            title=tool["title"],
            description=tool["description"],
            input_schema=tool["inputSchema"],
        )
        for tool in large_tools()
    ]
    texts = {resource_uri(name): payloads.text_of_size(size) for name, size in LARGE_TEXTS.items()}

    async def list_tools(context: Any, params: Any) -> sdk_types.ListToolsResult:
        return sdk_types.ListToolsResult(tools=tools)

    async def read_resource(context: Any, params: Any) -> sdk_types.ReadResourceResult:
        uri = str(params.uri)
        return sdk_types.ReadResourceResult(
            contents=[sdk_types.TextResourceContents(uri=uri, mime_type=_MIME, text=texts[uri])]
        )

    server: Any = LowLevelServer(
        "sdk-bench-large", on_list_tools=list_tools, on_read_resource=read_resource
    )

    async def serve() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(serve)


def _sdk_sessions_http(port: int) -> None:
    """The SDK's ``MCPServer`` on Streamable HTTP with sessions, on 127.0.0.1:``port``.

    Stateful (legacy sessions need it), JSON responses (no SSE framing): its leanest
    configuration that keeps sessions. uvicorn, as `bench.sdk_http` runs it.
    """
    import uvicorn

    from bench.dispatch import weather
    from bench.sdk_dispatch import high_level_server

    app = high_level_server(weather).streamable_http_app(json_response=True)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="error", access_log=False)


# ---------------------------------------------------------------- the raw ceiling


async def serve_progress_ceiling(
    busy_poll: float = OFF, *, stdin_fd: int = 0, stdout_fd: int = 1
) -> None:
    """Answer each request line with its ``count`` progress notifications and a result.

    Spins up to ``busy_poll`` seconds on stdin before the loop sleeps, as
    ``serve_stdio(busy_poll=...)`` does. ``stdin_fd`` and ``stdout_fd`` (duplicated,
    the originals left open) are where it reads and writes.
    """
    import trio

    decode = msgspec.json.Decoder().decode
    stdin = trio.lowlevel.FdStream(os.dup(stdin_fd))
    stdout = trio.lowlevel.FdStream(os.dup(stdout_fd))
    rest = b""
    async with stdin, stdout:
        with busy_polling(stdin.fileno(), busy_poll):
            while chunk := await stdin.receive_some(READ_SIZE):
                *lines, rest = (rest + chunk).split(b"\n")
                for line in lines:
                    await _progress_storm(decode(line), stdout.send_all)


async def _progress_storm(request: Any, send_all: Any) -> None:
    """The notifications and the result of one request, in writes of `WRITE_CHUNK` bytes."""
    encode = msgspec.json.Encoder().encode
    params = request["params"]
    token, count = params["_meta"]["progressToken"], params["arguments"]["count"]
    pending: list[bytes] = []
    size = 0
    for value in range(1, count + 1):
        notification = {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": token, "progress": value, "total": count},
        }
        pending.append(encode(notification) + b"\n")
        size += len(pending[-1])
        if size >= WRITE_CHUNK:
            await send_all(b"".join(pending))
            pending, size = [], 0
    result = {"content": [{"type": "text", "text": f"{count} notifications"}]}
    pending.append(encode({"jsonrpc": "2.0", "id": request["id"], "result": result}))
    await send_all(b"".join(pending) + b"\n")


def main(argv: list[str]) -> int:
    """Serve what ``argv`` (after ``--busy-poll=S``) names on stdin and stdout."""
    import trio

    try:
        budget, argv = parse_server_arguments(argv)
    except ValueError as exc:
        print(f"{sys.argv[0]}: {exc}", file=sys.stderr)
        return 2
    if argv in (["mcpcore", "storms"], ["mcpcore", "large"]):
        from functools import partial

        from transports import serve_stdio

        build = _mcpcore_storms if argv[1] == "storms" else _mcpcore_large
        trio.run(partial(serve_stdio, build(), busy_poll=budget))
    elif argv == ["sdk", "storms"]:
        _sdk_storms()
    elif argv == ["sdk", "large"]:
        _sdk_large()
    elif argv == ["ceiling", "progress"]:
        trio.run(serve_progress_ceiling, budget)
    elif argv[:2] == ["sdk", "sessions"] and len(argv) == 3:
        _sdk_sessions_http(int(argv[2]))
    else:
        print(
            f"usage: {sys.argv[0]} [--busy-poll=SECONDS] mcpcore|sdk storms|large "
            "| ceiling progress | sdk sessions PORT",
            file=sys.stderr,
        )
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
