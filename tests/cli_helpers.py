"""For the tests of commands run as subprocesses: their output, this machine's address."""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final

__all__ = ["START_TIMEOUT", "route_address", "started", "stopped_output"]

#: Seconds a command may take to start serving, or to stop once told.
START_TIMEOUT: Final = 20.0


def stopped_output(process: subprocess.Popen[str]) -> tuple[str, str]:
    """What an exited ``process`` wrote that was not read yet, on stdout and stderr.

    (Read through the pipes' own file objects, unlike `Popen.communicate`, so that what
    a ``readline`` left in their buffers counts too.) Its pipes are closed after.
    """
    assert process.poll() is not None
    assert process.stdout is not None
    assert process.stderr is not None
    with process.stdout, process.stderr:
        if process.stdin is not None:
            process.stdin.close()
        return process.stdout.read(), process.stderr.read()


@contextmanager
def started(command: list[str], **options: Any) -> Iterator[subprocess.Popen[str]]:
    """``command`` as a process with text pipes; killed (if still running) and reaped on exit."""
    process = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **options,
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=START_TIMEOUT)
        for pipe in (process.stdin, process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()


def route_address() -> str | None:
    """This machine's IPv4 address on its route out (None: it has no network beyond loopback).

    A UDP socket "connected" to an address outside sends nothing, but learns which of
    the machine's addresses the route uses (203.0.113.1 is a documentation address,
    RFC 5737: routed like any other, never answered).
    """
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("203.0.113.1", 9))
        except OSError:
            return None
        address: str = probe.getsockname()[0]
        return None if address.startswith("127.") else address
