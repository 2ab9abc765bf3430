"""Waiting for a server process we started to listen on its loopback port.

The bench and the tests start servers as processes (uvicorn, nginx, the everything
server) and wait, before using one, until it accepts a TCP connection. Nothing tells
when a process has bound its port, so the wait tries to connect, `PROBE_PAUSE` apart, a
number of times: a count, not a clock, so that a test's bound is the same whatever the
machine is doing (about ``timeout`` seconds in all, since each refused attempt on the
loopback returns at once).
"""

from __future__ import annotations

import socket
import subprocess
import time
from typing import Final

from mcpcore_cli.bench.verify import BenchmarkError

__all__ = ["PROBE_PAUSE", "wait_listening"]

#: Seconds between two connection attempts (a process starting: nothing to wait on but time).
PROBE_PAUSE: Final = 0.05


def wait_listening(
    port: int, process: subprocess.Popen[bytes], *, timeout: float, name: str = "the server"
) -> None:
    """Return once ``process`` accepts connections on ``127.0.0.1:port``.

    Args:
        port: Where it listens.
        process: The server; its stderr, when piped, is read if it exits.
        timeout: Seconds of attempts: ``timeout / PROBE_PAUSE`` of them (see the module
            docstring).
        name: The server, as the errors name it.

    Raises:
        BenchmarkError: It exited first (with the end of its stderr, when piped), or did
            not listen within its attempts.
    """
    for _ in range(max(1, round(timeout / PROBE_PAUSE))):
        if process.poll() is not None:
            error = process.stderr.read().decode(errors="replace") if process.stderr else ""
            detail = f": {error.strip()[-300:]}" if error.strip() else ""
            raise BenchmarkError(f"{name} exited with status {process.returncode}{detail}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1.0).close()
        except OSError:
            time.sleep(PROBE_PAUSE)
            continue
        return
    raise BenchmarkError(f"{name} did not listen within {timeout:g} s")
