"""Waiting for a server process the bench started to listen on its loopback port."""

from __future__ import annotations

import socket
import subprocess
import time

from mcpcore_cli.bench.verify import BenchmarkError

__all__ = ["wait_listening"]


def wait_listening(
    port: int, process: subprocess.Popen[bytes], *, timeout: float, name: str = "the server"
) -> None:
    """Return once ``process`` accepts connections on ``127.0.0.1:port``.

    Raises:
        BenchmarkError: It exited first (with the end of its stderr, when piped), or did
            not listen within ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            error = process.stderr.read().decode(errors="replace") if process.stderr else ""
            detail = f": {error.strip()[-300:]}" if error.strip() else ""
            raise BenchmarkError(f"{name} exited with status {process.returncode}{detail}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1.0).close()
        except OSError:
            time.sleep(0.05)  # (a process starting: nothing to wait on but time)
            continue
        return
    raise BenchmarkError(f"{name} did not listen within {timeout:g} s")
