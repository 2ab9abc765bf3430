"""``python -m bench.asgi_profile``: what each ASGI app of the ``asgi`` layer costs per request.

The ``asgi`` layer times whole servers (uvicorn, the socket, the app) under wrk. This
takes the server away: each app of `bench._asgi_apps` (mcpcore's `transports.AsgiApp`,
the SDK's Starlette app, in 2026-07-28 the core's work alone and the call answered by
hand, the bare echo) is called directly, ``await app(scope, receive, send)``, one request
after another in one event loop (uvloop when installed), with the same body and headers
as the layer's load, and its answer checked. What is left is each app's own CPU time per
request: the difference between two apps is exactly what the layer's servers pay on top
of uvicorn.

    python -m bench.asgi_profile                  # µs per request, both eras
    python -m bench.asgi_profile --profile modern # and where mcpcore's time goes (cProfile)
    BENCH_ASGI_TOOL=async python -m bench.asgi_profile  # the tool an async def

``--profile ERA`` runs mcpcore's app under cProfile for that era, ``--runs`` times, and
prints per request the functions with the most time of their own, then those of
``transports`` and ``mcpcore`` with the most time inclusive, each time the least over the
runs (a pause of the shared machine lands in one function of one run). cProfile's per-call
overhead inflates small functions: read the ranking and the call counts, and the app's
µs per request without the profiler (printed first) for the absolute cost.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import pstats
import statistics
import sys
import time
from collections.abc import AsyncIterator, Callable, MutableMapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any, Final

from bench import _asgi_apps
from bench._asgi_apps import REQUEST_HEADERS
from bench.stdio import ERAS, EXPECTED_TEXT, exchanged_lines

__all__ = ["main", "per_request"]

_ROOT: Final = Path(__file__).resolve().parent.parent
#: Requests per timed run, and runs (the median is reported).
REQUESTS, RUNS = 2000, 5
Message = MutableMapping[str, Any]
App = Callable[..., Any]


class _Answer:
    """What a ``send`` collected: the status, the headers, the body."""

    def __init__(self) -> None:
        self.status = 0
        self.headers: list[tuple[bytes, bytes]] = []
        self.body = b""

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
            self.headers = list(message.get("headers", ()))
        elif message["type"] == "http.response.body":
            self.body += message.get("body", b"")

    def header(self, name: bytes) -> bytes:
        return next((value for key, value in self.headers if key.lower() == name), b"")


def _scope(body: bytes, headers: Sequence[tuple[bytes, bytes]]) -> Message:
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.4"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1:8000"),
            (b"content-type", b"application/json"),
            (b"accept", b"application/json, text/event-stream"),
            (b"content-length", str(len(body)).encode()),
            *headers,
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }


async def _post(app: App, body: bytes, headers: Sequence[tuple[bytes, bytes]]) -> _Answer:
    """One request to ``app``; its answer (``receive`` then waits, as for a client that stays)."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()  # (the client never leaves)
        raise AssertionError("unreachable")

    answer = _Answer()
    await app(_scope(body, headers), receive, answer.send)
    return answer


@asynccontextmanager
async def _running(app: Any) -> AsyncIterator[None]:
    """The app's lifespan (mcpcore's ``lifespan``, Starlette's ``lifespan_context``)."""
    lifespan: AbstractAsyncContextManager[Any] | None = None
    if hasattr(app, "lifespan") and callable(app.lifespan):
        lifespan = app.lifespan()
    elif hasattr(app, "router") and hasattr(app.router, "lifespan_context"):
        lifespan = app.router.lifespan_context(app)
    if lifespan is None:
        yield
    else:
        async with lifespan:
            yield


async def _headers_for(app: App, era: str, column: str) -> list[tuple[bytes, bytes]]:
    """The request's headers: 2025-11-25, in a new session (the echo: a dummy id)."""
    headers = [(name.lower().encode(), value.encode()) for name, value in REQUEST_HEADERS[era]]
    if era != "legacy":
        return headers
    if column == "ceiling":
        return [*headers, (b"mcp-session-id", b"0" * 32)]
    answer = await _post(app, _asgi_apps.INITIALIZE, [])
    session = answer.header(b"mcp-session-id")
    headers.append((b"mcp-session-id", session))
    await _post(app, _asgi_apps.INITIALIZED, headers)
    return headers


async def _time(
    app: Any, body: bytes, era: str, column: str, *, requests: int, runs: int
) -> list[float]:
    """µs per request of ``runs`` runs of ``requests`` requests of ``body``, one at a time."""
    async with _running(app):
        headers = await _headers_for(app, era, column)
        answer = await _post(app, body, headers)
        if answer.status != 200 or EXPECTED_TEXT.encode() not in answer.body:
            raise SystemExit(f"{column} ({era}) answered {answer.status} {answer.body[:200]!r}")
        for _ in range(requests // 10):  # warm-up
            await _post(app, body, headers)
        timings = []
        for _ in range(runs):
            started = time.perf_counter()
            for _ in range(requests):
                await _post(app, body, headers)
            timings.append((time.perf_counter() - started) / requests * 1e6)
        return timings


def _factory(column: str, era: str) -> Any:
    name = {"ceiling": "echo"}.get(column, column)
    return getattr(_asgi_apps, f"{name}_{era}")


def _run(coroutine: Any) -> Any:
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coroutine)
    return uvloop.run(coroutine)


def per_request(era: str, requests: int = REQUESTS, runs: int = RUNS) -> dict[str, float]:
    """Each app's median µs per request in ``era`` (the SDK's when installed)."""
    from bench._optional import Availability

    columns = [
        "mcpcore",
        *(["sdk"] if "sdk" in Availability() else []),
        # (the core's floor and the call by hand: `bench._asgi_apps`, 2026-07-28 only)
        *(["core", "minimal"] if era == "modern" else []),
        "ceiling",
    ]
    body = exchanged_lines(era)[0]  # (outside any loop: the capture runs one of its own)
    result = {}
    for column in columns:

        async def measure(column: str = column) -> list[float]:
            # (built in the loop: the echo's factory captures its result in a thread)
            return await _time(
                _factory(column, era)(), body, era, column, requests=requests, runs=runs
            )

        result[column] = statistics.median(_run(measure()))
    return result


#: A function as cProfile names it: (file, line, name).
Function = tuple[str, int, str]


def _profile_once(era: str, requests: int) -> dict[Function, tuple[int, float, float]]:
    """One cProfile of ``requests`` requests: per function, (calls, own s, inclusive s)."""
    body = exchanged_lines(era)[0]
    profiler = cProfile.Profile()

    async def profiled() -> None:
        app = _factory("mcpcore", era)()
        async with _running(app):
            headers = await _headers_for(app, era, "mcpcore")
            for _ in range(requests // 10):
                await _post(app, body, headers)
            profiler.enable()
            for _ in range(requests):
                await _post(app, body, headers)
            profiler.disable()

    _run(profiled())
    entries: dict[Function, tuple[int, float, float]] = {}
    for function, (_, calls, own, inclusive, _) in pstats.Stats(profiler).stats.items():  # type: ignore[attr-defined]
        entries[function] = (calls, own, inclusive)
    return entries


def _profile(era: str, requests: int, runs: int) -> str:
    """The functions of mcpcore's app with the most time, µs per request.

    Each function's time is its least over ``runs`` profiles: a pause of the machine
    (another process, the VM's host) lands in one function of one run, and would make
    it look slow; the least of several runs leaves it out.
    """
    profiles = [_profile_once(era, requests) for _ in range(runs)]
    functions = set.intersection(*(set(profile) for profile in profiles))
    rows = []
    for function in functions:
        calls = profiles[0][function][0] / requests
        own = min(profile[function][1] for profile in profiles) / requests * 1e6
        inclusive = min(profile[function][2] for profile in profiles) / requests * 1e6
        rows.append((own, inclusive, calls, _where(function)))
    total = max(inclusive for _, inclusive, _, where in rows if "_http" in where)
    out = io.StringIO()
    print(
        f"cProfile of mcpcore's AsgiApp, {era} ({ERAS[era]}): {requests} requests, least of "
        f"{runs} runs; AsgiApp._http {total:.1f} µs per request under cProfile "
        "(its overhead inflates functions with many calls: read the ranking)",
        file=out,
    )
    print("\n   own µs  incl. µs  calls  (per request; the 30 with most own time)", file=out)
    for own, inclusive, calls, where in sorted(rows, reverse=True)[:30]:
        print(f"  {own:7.2f}  {inclusive:8.2f}  {calls:5.1f}  {where}", file=out)
    print("\n  incl. µs   own µs  calls  (transports and mcpcore, most inclusive time)", file=out)
    ours = [row for row in rows if "transports/" in row[3] or "mcpcore/" in row[3]]
    for own, inclusive, calls, where in sorted(ours, key=lambda row: -row[1])[:40]:
        print(f"  {inclusive:8.2f}  {own:7.2f}  {calls:5.1f}  {where}", file=out)
    return out.getvalue()


def _where(function: Function) -> str:
    """``path:line(name)``, the path from the package folder on."""
    path, line, name = function
    for anchor in ("/site-packages/", "/lib/python3"):
        if anchor in path:
            path = path.split(anchor, 1)[1]
            break
    else:
        path = path.removeprefix(str(_ROOT) + "/")
    return f"{path}:{line}({name})"


def main(argv: Sequence[str] | None = None) -> int:
    """Print each app's µs per request, both eras; with ``--profile ERA``, a cProfile."""
    parser = argparse.ArgumentParser(prog="python -m bench.asgi_profile", description=__doc__)
    parser.add_argument("--requests", type=int, default=REQUESTS)
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--profile", choices=sorted(ERAS), help="cProfile mcpcore's app")
    arguments = parser.parse_args(argv)
    try:
        tool = "an async def" if _asgi_apps.tool_kind() == "async" else "a plain def"
    except ValueError as exc:
        parser.error(str(exc))
    print(
        "µs per request, the app alone (no server, no socket), one request at a time; "
        f"the tool {tool} ({_asgi_apps.TOOL_VARIABLE}):"
    )
    for era in ("modern", "legacy"):
        costs = per_request(era, arguments.requests, arguments.runs)
        cells = ", ".join(f"{column} {cost:.1f}" for column, cost in costs.items())
        print(f"  {era} ({ERAS[era]}): {cells}")
    if arguments.profile:
        print(_profile(arguments.profile, arguments.requests, arguments.runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
