"""A real nginx, round-robin with no stickiness, in front of the workers of a deployment.

    with Nginx([8001, 8002, 8003]) as nginx:     # 127.0.0.1:PORT for each worker
        url = nginx.origin + "/mcp"              # http://127.0.0.1:NGINX_PORT/mcp

Issue 18 asks for one integration test behind a real load balancer. nginx (Debian's
package, ``/usr/sbin/nginx``) runs in the foreground with everything it writes (its
pid file, logs and temporary folders) inside a temporary folder, so it needs no root
and touches nothing of the machine's own nginx. The configuration (`CONFIG`) is the
one the README's "Deploying" section shows; only the lines under its ``(test)``
comments are the test's own. Its access log names the worker (``$upstream_addr``) that
served each request and the request's ``Mcp-Session-Id``, so a test can see where
requests went; and each response names its worker in an ``X-Upstream`` header, so a
client can tell.

nginx is ready once it accepts a TCP connection (bounded by `START_TIMEOUT`). On exit it
is asked to stop (SIGQUIT, the graceful stop) and killed if it does not.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Final

from bench._listening import wait_listening
from bench._ports import reserve_port
from mcpcore_cli.bench.verify import BenchmarkError

__all__ = ["CONFIG", "REQUIRED_VARIABLE", "Nginx", "nginx_binary", "nginx_missing"]

HOST: Final = "127.0.0.1"
#: Seconds of attempts to connect before nginx counts as failed to start
#: (`bench._listening.wait_listening`; it listens within milliseconds: this allows a
#: loaded CI machine 20 s).
START_TIMEOUT: Final = 20.0
#: Seconds nginx may take to exit once asked (it closes idle connections at once).
STOP_TIMEOUT: Final = 10.0

#: The nginx configuration: ``{upstreams}`` is one ``server 127.0.0.1:PORT;`` line per
#: worker, ``{listen}`` the balancer's address, ``{folder}`` the folder nginx runs in.
CONFIG: Final = """\
# nginx in front of several mcpcore workers that share one Redis (--redis URL).
# Any worker serves any request (a legacy session's requests are forwarded to the
# worker that owns it), so plain round-robin is enough: no stickiness needed.
worker_processes 1;
events {{
    worker_connections 1024;
}}
# (test) Everything nginx writes stays in the test's folder.
pid {folder}/nginx.pid;
error_log {folder}/error.log notice;
http {{
    # (test) Which worker served each request (in the log, and to the client).
    log_format upstream '$request_method $status $upstream_addr '
                        '"$http_mcp_session_id" "$sent_http_mcp_session_id"';
    access_log {folder}/access.log upstream;
    client_body_temp_path {folder}/body;
    proxy_temp_path {folder}/proxy;
    fastcgi_temp_path {folder}/fastcgi;
    uwsgi_temp_path {folder}/uwsgi;
    scgi_temp_path {folder}/scgi;
    add_header X-Upstream $upstream_addr always;

    upstream mcp {{
{upstreams}
        keepalive 32;                         # reuse connections to the workers
    }}
    server {{
        listen {listen};
        location / {{
            proxy_pass http://mcp;
            proxy_http_version 1.1;           # keep-alive and chunked answers
            proxy_set_header Connection "";   # (needed by keepalive above)
            proxy_set_header Host $http_host; # the client's Host, which the workers check
            # Event streams reach the client event by event, and request bodies
            # reach the worker as they come.
            proxy_buffering off;
            proxy_request_buffering off;
            # A session's GET stream may stay quiet for long.
            proxy_read_timeout 1h;
            proxy_send_timeout 1h;
            # A new request skips a dead worker; a POST already sent to one is not
            # sent again to another (nginx retries non-idempotent requests only
            # when told to with "non_idempotent"), so no call runs twice.
            proxy_next_upstream error timeout;
        }}
    }}
}}
"""


#: Environment: servers the tests must find (comma-separated); CI sets ``nginx``, so that
#: a machine without it fails there instead of skipping the balancer's tests.
REQUIRED_VARIABLE: Final = "MCPCORE_TESTS_REQUIRE"


def nginx_missing() -> bool:
    """Whether nginx is absent where it is not required (its tests are then skipped)."""
    required = os.environ.get(REQUIRED_VARIABLE, "").split(",")
    found = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin")
    return found is None and "nginx" not in required


def nginx_binary() -> str:
    """The nginx executable (on the PATH, or Debian's ``/usr/sbin/nginx``).

    Raises:
        RuntimeError: nginx is not installed.
    """
    found = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin")
    if found is None:
        raise RuntimeError("nginx is not installed (Debian: apt-get install nginx)")
    return found


class Nginx:
    """nginx balancing over ``127.0.0.1:PORT`` for each of ``ports``, for a ``with`` block.

    Attributes:
        port: The port it listens on (127.0.0.1).
        origin: ``http://127.0.0.1:PORT``.
        folder: Where its configuration, pid file and logs are.
    """

    def __init__(self, ports: Sequence[int]) -> None:
        self.upstreams = list(ports)
        self.port = reserve_port()
        self.origin = f"http://{HOST}:{self.port}"
        self.folder = Path()
        self.process: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None
        self._temporary: tempfile.TemporaryDirectory[str] | None = None

    def config(self) -> str:
        """The configuration it runs with."""
        upstreams = "\n".join(f"        server {HOST}:{port};" for port in self.upstreams)
        return CONFIG.format(upstreams=upstreams, listen=f"{HOST}:{self.port}", folder=self.folder)

    def __enter__(self) -> Nginx:
        self._temporary = tempfile.TemporaryDirectory(prefix="nginx-")
        self.folder = Path(self._temporary.name)
        # Run as root, nginx's worker process runs as "nobody": it must reach the folder.
        self.folder.chmod(0o755)
        (self.folder / "nginx.conf").write_text(self.config())
        self._stderr = (self.folder / "stderr.log").open("wb")
        self.process = subprocess.Popen(
            [nginx_binary(), "-p", str(self.folder), "-c", "nginx.conf", "-g", "daemon off;"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._stderr,
        )
        try:
            self._wait_until_listening()
        except BaseException:
            self._stop()
            raise
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop()

    def output(self) -> str:
        """What nginx wrote to stderr and its error log."""
        parts = []
        for name in ("stderr.log", "error.log"):
            path = self.folder / name
            if path.exists():
                parts.append(f"--- nginx {name}\n{path.read_text(errors='replace')}")
        return "\n".join(parts)

    def access_log(self) -> list[str]:
        """The access log's lines until now (see ``log_format upstream`` in `CONFIG`)."""
        path = self.folder / "access.log"
        return path.read_text().splitlines() if path.exists() else []

    def _wait_until_listening(self) -> None:
        assert self.process is not None
        try:
            wait_listening(self.port, self.process, timeout=START_TIMEOUT, name="nginx")
        except BenchmarkError as exc:
            raise RuntimeError(f"{exc} (port {self.port}):\n{self.output()}") from exc

    def _stop(self) -> None:
        process, self.process = self.process, None
        if process is not None:
            if process.poll() is None:
                process.send_signal(signal.SIGQUIT)
            try:
                process.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=STOP_TIMEOUT)
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        if self._temporary is not None:
            self._temporary.cleanup()
            self._temporary = None
