"""A deployment of real processes: Redis, K everything workers, and nginx in front.

    with Cluster(workers=3) as cluster:
        cluster.url                   # http://127.0.0.1:NGINX_PORT/mcp (round-robin)
        cluster.workers[0].port       # a worker's own port (127.0.0.1)
        cluster.workers[0].name       # its name: the prefix of its sessions' ids
        cluster.kill(0)               # SIGKILL; cluster.restart(0) starts it again

Each worker is ``examples/everything.py --transport http --port P --redis URL``, the
command an operator runs, started from the repository's root with its output in a
file of its own (a pipe nobody reads would fill up and stall it). A worker is ready
once it opens a legacy session, which needs its Redis too: the session's id names the
worker (`transports.Deployment`: the owner's name, then a ``.``), which is how a test
tells which worker owns a session it opened through nginx. That probe session is ended
again. On exit every worker is killed and waited for, then nginx and Redis stop.

`Cluster.output` is what every process printed, for a failing test's message.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Final

from bench._ports import reserve_port
from tests.deploy.balancer import Nginx
from tests.redis_server import RedisServer
from tests.transports.trio_helpers import PYTHON, REPOSITORY

__all__ = ["Cluster", "Worker"]

HOST: Final = "127.0.0.1"
EVERYTHING: Final = REPOSITORY / "examples" / "everything.py"
#: Probes tried while a worker starts, `PROBE_INTERVAL` apart: an interpreter start
#: and imports, three at once on a loaded 2-core CI machine (30 s at most).
START_PROBES: Final = 600
PROBE_INTERVAL: Final = 0.05
#: Seconds one probe may wait for its answer.
PROBE_TIMEOUT: Final = 5.0
#: Seconds a worker may take to exit once killed.
STOP_TIMEOUT: Final = 10.0
LEGACY: Final = "2025-11-25"
INITIALIZE: Final = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "cluster-probe", "version": "1"},
        },
    }
).encode()


@dataclass
class Worker:
    """One worker process.

    Attributes:
        port: Its own port on 127.0.0.1 (nginx balances over these).
        name: Its deployment name (the prefix of the ids of the sessions it owns);
            a restarted worker has a new one.
        process: The running process (None once killed).
        log: Where its stdout and stderr go.
    """

    port: int
    name: str
    process: subprocess.Popen[bytes] | None
    log: Path


class Cluster:
    """Redis, ``workers`` everything workers sharing it, and nginx round-robin in front."""

    def __init__(self, workers: int = 3) -> None:
        self.count = workers
        self.workers: list[Worker] = []
        self._stack = ExitStack()
        self._folder = Path()
        self.redis: RedisServer | None = None
        self.nginx: Nginx | None = None

    @property
    def url(self) -> str:
        """The deployment's endpoint, through nginx."""
        assert self.nginx is not None
        return self.nginx.origin + "/mcp"

    def owner_of(self, session_id: str) -> int:
        """The index of the worker that owns the session (by its id's prefix)."""
        name, _, _ = session_id.partition(".")
        names = [worker.name for worker in self.workers]
        assert name in names, (session_id, names)
        return names.index(name)

    def __enter__(self) -> Cluster:
        try:
            self._folder = Path(self._stack.enter_context(tempfile.TemporaryDirectory()))
            self.redis = self._stack.enter_context(RedisServer())
            self._stack.callback(self._kill_all)
            ports = [reserve_port() for _ in range(self.count)]
            processes = [self._spawn(index, port) for index, port in enumerate(ports)]
            self.workers = [
                Worker(port, self._name_of(process, port), process, self._log(index))
                for index, (port, process) in enumerate(zip(ports, processes, strict=True))
            ]
            self.nginx = self._stack.enter_context(Nginx(ports))
        except BaseException as exc:
            output = self.output()
            self._stack.close()
            raise RuntimeError(f"the cluster did not start:\n{output}") from exc
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stack.close()

    def kill(self, index: int) -> None:
        """SIGKILL worker ``index`` (its sessions die with it) and wait for it."""
        worker = self.workers[index]
        process, worker.process = worker.process, None
        if process is not None:
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=STOP_TIMEOUT)

    def restart(self, index: int) -> None:
        """Start worker ``index`` again on its port (under a new name), if it was killed."""
        worker = self.workers[index]
        if worker.process is None:
            worker.process = self._spawn(index, worker.port)
            worker.name = self._name_of(worker.process, worker.port)

    def alive(self) -> list[int]:
        """The indexes of the workers running now."""
        return [
            index
            for index, worker in enumerate(self.workers)
            if worker.process is not None and worker.process.poll() is None
        ]

    def output(self) -> str:
        """What every process of the cluster printed until now."""
        parts = []
        for index in range(self.count):
            log = self._log(index)
            if log.exists():
                parts.append(f"--- worker {index}\n{log.read_text(errors='replace')}")
        if self.nginx is not None:
            parts.append(self.nginx.output())
        if self.redis is not None:
            parts.append(f"--- redis\n{self.redis.log()}")
        return "\n".join(parts)

    # ------------------------------------------------------------------ processes

    def _log(self, index: int) -> Path:
        return self._folder / f"worker-{index}.log"

    def _spawn(self, index: int, port: int) -> subprocess.Popen[bytes]:
        assert self.redis is not None
        command = [PYTHON, str(EVERYTHING), "--transport", "http", "--port", str(port)]
        log: IO[bytes]
        with self._log(index).open("ab") as log:
            return subprocess.Popen(
                [*command, "--redis", self.redis.url],
                cwd=REPOSITORY,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
            )

    def _name_of(self, process: subprocess.Popen[bytes], port: int) -> str:
        """Wait until the worker opens a session; its name, from the session's id."""
        for _ in range(START_PROBES):
            if process.poll() is not None:
                raise RuntimeError(f"a worker exited at start ({process.returncode})")
            session_id = _open_session(port)
            if session_id is not None:
                _end_session(port, session_id)
                name, dot, _ = session_id.partition(".")
                if not (dot and name):
                    raise RuntimeError(f"a session id that names no worker: {session_id!r}")
                return name
            time.sleep(PROBE_INTERVAL)
        raise TimeoutError(f"the worker on port {port} did not open a session")

    def _kill_all(self) -> None:
        for index in range(len(self.workers)):
            self.kill(index)


def _open_session(port: int) -> str | None:
    """The id of a legacy session opened on ``port``; None while nothing answers 200."""
    connection = http.client.HTTPConnection(HOST, port, timeout=PROBE_TIMEOUT)
    try:
        connection.request(
            "POST",
            "/mcp",
            INITIALIZE,
            {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
        )
        response = connection.getresponse()
        response.read()
        return response.getheader("Mcp-Session-Id") if response.status == 200 else None
    except (OSError, http.client.HTTPException):
        return None
    finally:
        connection.close()


def _end_session(port: int, session_id: str) -> None:
    """``DELETE`` the session (the probe's, so that it does not linger)."""
    connection = http.client.HTTPConnection(HOST, port, timeout=PROBE_TIMEOUT)
    try:
        headers = {"Mcp-Session-Id": session_id, "MCP-Protocol-Version": LEGACY}
        connection.request("DELETE", "/mcp", headers=headers)
        response = connection.getresponse()
        response.read()
        assert response.status < 300, f"DELETE of the probe session: {response.status}"
    finally:
        connection.close()
