"""Why a client's connection is gone: the error every pending and later call fails with.

These are local verdicts about the transport, never errors the server sent (those are
`mcpcore.client.McpError`), and a timeout is Python's own `TimeoutError` ("purely local
errors have no code and must not be mistakable for peer errors", CHECKLIST §3).
"""

from __future__ import annotations

import signal

__all__ = ["ConnectionClosedError", "ServerExitedError"]


class ConnectionClosedError(ConnectionError):
    """The connection to the server is gone; every pending and later call raises this.

    Attributes:
        reason: What happened, in words ("the client was closed", "the server closed
            its stdout"...).
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ServerExitedError(ConnectionClosedError):
    """The stdio server's process ended while the client was using it.

    Attributes:
        returncode: The exit status; negative when a signal ended the process (POSIX).
        stderr: The end of what the server wrote to stderr, when the client captured
            it (``stderr="capture"``), else None.
    """

    def __init__(self, returncode: int, stderr: bytes | None = None) -> None:
        super().__init__(describe_exit(returncode))
        self.returncode = returncode
        self.stderr = stderr

    def __str__(self) -> str:
        if not self.stderr:
            return self.reason
        tail = self.stderr.decode("utf-8", "replace").rstrip()
        return f"{self.reason}; its stderr ended with:\n{tail}"


def describe_exit(returncode: int) -> str:
    """The exit status in words: ``exited with status 3``, ``was killed by SIGKILL``."""
    if returncode >= 0:
        return f"the server exited with status {returncode}"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = f"signal {-returncode}"
    return f"the server was killed by {name}"
