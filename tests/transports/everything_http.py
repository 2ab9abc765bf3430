"""``examples/everything.py --transport http`` as a subprocess on a free loopback port.

    with everything_http_server() as url:    # http://127.0.0.1:PORT/mcp
        ...

The port is one `bench._ports.reserve_port` holds for the server, so that no other
process is handed it meanwhile. The server is ready once it accepts a TCP connection;
it is killed, and waited for, on exit.
"""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

from bench._ports import reserve_port
from tests.transports.trio_helpers import PYTHON, REPOSITORY

__all__ = ["START_TIMEOUT", "everything_http_server", "wait_for_port"]

#: Seconds the server may take to start listening (an import of trio, h11, msgspec).
START_TIMEOUT: Final = 20.0
#: Connection attempts, `PROBE_PAUSE` apart, before it counts as not listening: a count,
#: not a clock (about `START_TIMEOUT` when each refused attempt returns at once).
PROBE_PAUSE: Final = 0.05
START_PROBES: Final = int(START_TIMEOUT / PROBE_PAUSE)
EVERYTHING: Final = REPOSITORY / "examples" / "everything.py"


def wait_for_port(port: int, process: subprocess.Popen[bytes]) -> None:
    """Wait until ``process`` accepts TCP connections on ``127.0.0.1:port``.

    Raises:
        RuntimeError: The process exited first (with its stderr, if it was piped).
        TimeoutError: Not within `START_PROBES` attempts.
    """
    for _ in range(START_PROBES):
        if process.poll() is not None:
            _, stderr = process.communicate()
            raise RuntimeError(f"the server exited: {(stderr or b'').decode(errors='replace')}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(PROBE_PAUSE)
    raise TimeoutError("the server did not start listening")


@contextmanager
def everything_http_server() -> Iterator[str]:
    """Run the everything server over HTTP; yields its endpoint URL."""
    port = reserve_port()
    process = subprocess.Popen(
        [PYTHON, str(EVERYTHING), "--transport", "http", "--port", str(port)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.kill()
        process.communicate(timeout=START_TIMEOUT)
