"""Real ASGI servers running `transports.AsgiApp`, as subprocesses on free loopback ports.

    with asgi_server("hypercorn-trio") as running:     # examples.everything:asgi_app
        url = running.origin + "/mcp"                   # http://127.0.0.1:PORT/mcp
    with everything_endpoint("fastapi") as url:         # http://127.0.0.1:PORT/api/mcp
        ...

Issue 17 asks that the app run *unchanged* under uvicorn (asyncio with h11, and uvloop
with httptools), hypercorn (its asyncio and its trio worker) and granian, and mounted
in FastAPI and Starlette. Only a real server shows what each really does: its own
scope (``raw_path``, ``root_path``, ``http_version``), the timing of its ``receive``
and ``send``, its lifespan handling, worker processes and shutdown. So each runs as a
process of its own, started from the repository's root (so ``examples.everything``
and ``tests.asgi.fastapi_app`` import), bound to 127.0.0.1 only.

A server is ready once it answers an HTTP request with a status below 500: a TCP
connect is not enough, since hypercorn and granian bind the socket in a parent process
before their worker has imported the app (and a worker that fails to start would never
answer), and the MCP app answers 500 until its lifespan runs. Everything the server
prints goes to a temporary file (a pipe nobody reads would fill up and stall it) and
is shown when it fails to start or dies on its own. On exit its whole process group
(the server and its workers) is killed and waited for.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Final

from bench._ports import reserve_port
from tests.transports.everything_http import everything_http_server
from tests.transports.trio_helpers import PYTHON, REPOSITORY

__all__ = [
    "ASGI_SERVERS",
    "ENDPOINTS",
    "EVERYTHING_APP",
    "FASTAPI_APP",
    "HOST",
    "STARLETTE_APP",
    "STOP_TIMEOUT",
    "RunningServer",
    "asgi_server",
    "everything_endpoint",
]

HOST: Final = "127.0.0.1"
#: Seconds a server may take to answer its first request (interpreter start, imports,
#: a spawned worker process importing them again, on a loaded CI machine).
START_TIMEOUT: Final = 30.0
#: Seconds one readiness probe may wait for its answer.
PROBE_TIMEOUT: Final = 2.0
#: Seconds a server may take to exit once killed or asked to stop.
STOP_TIMEOUT: Final = 20.0
#: Seconds between two readiness probes.
PROBE_INTERVAL: Final = 0.05
#: Readiness probes before a server is given up on: `START_TIMEOUT` seconds' worth, at
#: least (a count, not a clock: each probe that fails fast adds `PROBE_INTERVAL`, one
#: that waits adds up to `PROBE_TIMEOUT` more).
START_PROBES: Final = round(START_TIMEOUT / PROBE_INTERVAL)

EVERYTHING_APP: Final = "examples.everything:asgi_app"
FASTAPI_APP: Final = "tests.asgi.fastapi_app:fastapi_app"
STARLETTE_APP: Final = "tests.asgi.fastapi_app:starlette_app"
FASTAPI_AUTH_APP: Final = "tests.asgi.fastapi_app:fastapi_auth_app"

#: The command line of each server (after ``python``), ``{port}`` and ``{app}`` filled
#: in. Access logs off (the suites send hundreds of requests), and the lifespan
#: required where the server can be told so (uvicorn's ``auto`` would go on without).
ASGI_SERVERS: Final[dict[str, tuple[str, ...]]] = {
    "uvicorn": (
        *("-m", "uvicorn", "--host", HOST, "--port", "{port}", "--lifespan", "on"),
        *("--loop", "asyncio", "--http", "h11", "--no-access-log", "{app}"),
    ),
    "uvicorn-uvloop": (
        *("-m", "uvicorn", "--host", HOST, "--port", "{port}", "--lifespan", "on"),
        *("--loop", "uvloop", "--http", "httptools", "--no-access-log", "{app}"),
    ),
    "hypercorn-trio": ("-m", "hypercorn", "-k", "trio", "--bind", f"{HOST}:{{port}}", "{app}"),
    "hypercorn-asyncio": (
        *("-m", "hypercorn", "-k", "asyncio", "--bind", f"{HOST}:{{port}}", "{app}"),
    ),
    "granian": (
        *("-m", "granian", "--interface", "asgi", "--host", HOST, "--port", "{port}"),
        *("--no-ws", "{app}"),
    ),
}

#: Where the tests find the everything server's endpoint: (server, app, path below the
#: origin). ``serve_http`` is the reference the ASGI app must match.
ENDPOINTS: Final[dict[str, tuple[str, str, str]]] = {
    **{name: (name, EVERYTHING_APP, "/mcp") for name in ASGI_SERVERS},
    # Mounted under a prefix, beside the host's own routes, on the host's lifespan.
    "fastapi": ("uvicorn", FASTAPI_APP, "/api/mcp"),
    "starlette": ("uvicorn", STARLETTE_APP, "/v1/tools/mcp"),
}


class RunningServer:
    """A server process, its origin (``http://127.0.0.1:PORT``) and what it printed."""

    def __init__(self, process: subprocess.Popen[bytes], origin: str, log: IO[bytes]) -> None:
        self.process = process
        self.origin = origin
        self.log = log
        self.stopped = False

    def output(self) -> str:
        """Everything the server printed (stdout and stderr) until now."""
        self.log.flush()
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    def stop(self) -> int:
        """Ask the server to shut down as an operator would (SIGTERM); its exit status.

        Raises:
            subprocess.TimeoutExpired: It did not exit within `STOP_TIMEOUT`.
        """
        self.stopped = True
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=STOP_TIMEOUT)


@contextmanager
def asgi_server(
    name: str, app: str = EVERYTHING_APP, *, extra: tuple[str, ...] = ()
) -> Iterator[RunningServer]:
    """Run ``app`` under the server ``name`` (a key of `ASGI_SERVERS`) until the block ends.

    Raises:
        RuntimeError: The server exited before answering, or during the block.
        TimeoutError: It did not answer within `START_PROBES` probes.
    """
    port = reserve_port()
    command = [part.format(port=port, app=app) for part in ASGI_SERVERS[name]]
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(
            [PYTHON, *command, *extra],
            cwd=REPOSITORY,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            # Its own process group, so that its workers are killed with it.
            start_new_session=True,
        )
        running = RunningServer(process, f"http://{HOST}:{port}", log)
        try:
            _wait_until_ready(running, port, name)
            yield running
            if not running.stopped and process.poll() is not None:
                raise RuntimeError(f"{name} exited during the tests:\n{running.output()}")
        finally:
            _kill_group(process)


@contextmanager
def everything_endpoint(name: str) -> Iterator[str]:
    """The everything server's endpoint URL, served as ``name`` says (see `ENDPOINTS`).

    ``serve_http`` is ``examples/everything.py --transport http`` (the reference).
    """
    if name == "serve_http":
        with everything_http_server() as url:
            yield url
        return
    server, app, path = ENDPOINTS[name]
    with asgi_server(server, app) as running:
        yield running.origin + path


def _wait_until_ready(running: RunningServer, port: int, name: str) -> None:
    """Probe until the server answers below 500 (at most `START_PROBES` probes)."""
    status = None
    for _ in range(START_PROBES):
        if running.process.poll() is not None:
            raise RuntimeError(f"{name} exited before serving:\n{running.output()}")
        time.sleep(PROBE_INTERVAL)
        status = _probe(port)
        if status is not None and status < 500:
            return
    raise TimeoutError(f"{name} did not serve (last status {status}):\n{running.output()}")


def _probe(port: int) -> int | None:
    """The status of ``GET /``, or None while nothing answers."""
    connection = http.client.HTTPConnection(HOST, port, timeout=PROBE_TIMEOUT)
    try:
        connection.request("GET", "/")
        return connection.getresponse().status
    except (OSError, http.client.HTTPException):
        return None
    finally:
        connection.close()


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """Kill the server and its workers, and wait for it (bounded by `STOP_TIMEOUT`)."""
    if sys.platform == "win32":
        process.kill()
    else:
        with contextlib.suppress(ProcessLookupError):  # (it and its workers are gone)
            os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=STOP_TIMEOUT)
