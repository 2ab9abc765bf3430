"""``examples/everything.py --transport http`` as a subprocess on a free loopback port.

    with everything_http_server() as url:    # http://127.0.0.1:PORT/mcp
        ...

The port is one `bench._ports.reserve_port` holds for the server, so that no other
process is handed it meanwhile. The server is ready once it accepts a TCP connection
(`bench._listening`); it is killed, and waited for, on exit.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

from bench._listening import wait_listening
from bench._ports import reserve_port
from tests.transports.trio_helpers import PYTHON, REPOSITORY

__all__ = ["START_TIMEOUT", "everything_http_server"]

#: Seconds the server may take to start listening (an import of trio, h11, msgspec), in
#: attempts to connect (`bench._listening.wait_listening`).
START_TIMEOUT: Final = 20.0
EVERYTHING: Final = REPOSITORY / "examples" / "everything.py"


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
        wait_listening(port, process, timeout=START_TIMEOUT)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.kill()
        process.communicate(timeout=START_TIMEOUT)
