"""A redis-server the bench starts for its Redis rows, and the commands it has served.

The system's ``redis-server`` (found with `shutil.which`; none: `start_redis` yields None
and the rows that need it say so), on a free port of 127.0.0.1, keeping nothing on disk
(``--save ""``, ``--appendonly no``), in a temporary directory of its own. Readiness is a
PING answered, polled a bounded number of times.

`command_counts` reads ``INFO commandstats``: how many commands of each kind the server
has run, so that a row can say how many Redis commands a request cost.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from bench._ports import reserve_port
from mcpcore_cli.bench.verify import BenchmarkError

__all__ = ["RedisProcess", "command_counts", "start_redis"]

#: PINGs tried while the server starts, `READY_PAUSE` apart (a start takes ~10 ms).
READY_ATTEMPTS: Final = 500
READY_PAUSE: Final = 0.01
#: Seconds the server gets to exit on SIGTERM before it is killed.
STOP_GRACE: Final = 10.0
#: Seconds a socket operation on the server may take.
SOCKET_TIMEOUT: Final = 10.0
#: Bytes asked of the socket per read (an ``INFO commandstats`` reply is a few kB).
_READ_SIZE: Final = 64 * 1024


@dataclass(frozen=True)
class RedisProcess:
    """A running redis-server.

    Attributes:
        port: Its port on 127.0.0.1.
        pid: Its process id (whose CPU time the rows count).
        version: What ``redis-server --version`` says, in short.
    """

    port: int
    pid: int
    version: str

    @property
    def url(self) -> str:
        """Its ``redis://`` URL."""
        return f"redis://127.0.0.1:{self.port}"


def _version(binary: str) -> str:
    """``"Redis server v=7.0.15"`` from ``redis-server --version`` (its first words)."""
    shown = subprocess.run([binary, "--version"], capture_output=True, text=True, check=False)
    return " ".join(shown.stdout.split()[:3]) or "redis-server"


@contextmanager
def start_redis() -> Iterator[RedisProcess | None]:
    """A redis-server for the block; None if the system has no ``redis-server``.

    Raises:
        BenchmarkError: It exited at start or never answered a PING.
    """
    binary = shutil.which("redis-server")
    if binary is None:
        yield None
        return
    port = reserve_port()
    with tempfile.TemporaryDirectory(prefix="bench-redis-") as directory:
        log = Path(directory) / "redis.log"
        arguments = [
            binary,
            "--port", str(port),
            "--bind", "127.0.0.1",
            "--save", "",
            "--appendonly", "no",
            "--dir", directory,
            "--daemonize", "no",
        ]  # fmt: skip
        with log.open("ab") as output:
            process = subprocess.Popen(
                arguments, stdout=output, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )
        try:
            _wait_ready(port, process, log)
            yield RedisProcess(port, process.pid, _version(binary))
        finally:
            process.terminate()
            try:
                process.wait(STOP_GRACE)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_ready(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    """Poll with PING until the server answers (or its process ends: then raise)."""
    for _ in range(READY_ATTEMPTS):
        if process.poll() is not None:
            text = log.read_text(errors="replace").strip()[-300:]
            raise BenchmarkError(f"redis-server exited at start: {text}")
        try:
            with socket.create_connection(("127.0.0.1", port), SOCKET_TIMEOUT) as sock:
                sock.sendall(b"PING\r\n")
                if sock.recv(64).startswith(b"+PONG"):
                    return
        except OSError:
            pass
        time.sleep(READY_PAUSE)  # (a process starting: nothing to wait on but time)
    raise BenchmarkError(f"redis-server did not answer after {READY_ATTEMPTS} PINGs")


def command_counts(port: int) -> dict[str, int]:
    """The commands the server on ``port`` has run, by name (``INFO commandstats``).

    The ``INFO`` commands that asked (these included) are left out.
    """
    with socket.create_connection(("127.0.0.1", port), SOCKET_TIMEOUT) as sock:
        sock.sendall(b"INFO commandstats\r\n")
        reply = b""
        while b"\r\n" not in reply or not _whole(reply):
            data = sock.recv(_READ_SIZE)
            if not data:
                raise BenchmarkError("redis-server closed the connection during INFO")
            reply += data
    counts: dict[str, int] = {}
    for line in reply.decode().splitlines():
        # "cmdstat_publish:calls=12,usec=34,...": the command's name and its calls
        name, _, fields = line.partition(":")
        if name.startswith("cmdstat_") and fields.startswith("calls="):
            counts[name.removeprefix("cmdstat_")] = int(fields[6:].split(",", 1)[0])
    counts.pop("info", None)
    return counts


def _whole(reply: bytes) -> bool:
    """Whether ``reply``, a bulk string (``$``, its length, CRLF, the text, CRLF), is whole."""
    if not reply.startswith(b"$"):
        raise BenchmarkError(f"redis-server answered INFO with {reply[:80]!r}")
    head, _, rest = reply.partition(b"\r\n")
    return len(rest) >= int(head[1:]) + 2
