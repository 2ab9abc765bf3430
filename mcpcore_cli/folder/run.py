"""`serve_folder`: serve a folder over stdio, Streamable HTTP or WebSocket, watched.

The watcher starts first, so that once the transport is up no change goes unannounced;
both stop together. Handler failures are logged (to the ``mcpcore.serve`` logger) and
never shown to the client.
"""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Iterable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, Final, Literal

import trio

from mcpcore.server import Context
from mcpcore_cli.folder.build import build_folder_server
from mcpcore_cli.folder.folder import Folder
from mcpcore_cli.folder.limit_options import ServeLimits
from mcpcore_cli.folder.watch import watch_folder
from mcpcore_cli.listening import allowed_hosts as hosts_served_at
from mcpcore_cli.listening import first_url
from transports import DEFAULT_HTTP_PATH as HTTP_PATH
from transports import DEFAULT_WEBSOCKET_PATH as WEBSOCKET_PATH
from transports import BearerAuth, serve_http, serve_stdio, serve_websocket

if TYPE_CHECKING:
    from transports import Deployment  # (needs the redis extra: only when given one)

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "FolderTransport", "folder_url", "serve_folder"]

#: Where HTTP and WebSocket listen unless told otherwise: this machine only.
DEFAULT_HOST: Final = "127.0.0.1"
#: The port unless told otherwise.
DEFAULT_PORT: Final = 8000
FolderTransport = Literal["stdio", "http", "ws"]

_log = logging.getLogger("mcpcore.serve")


async def serve_folder(
    folder: Folder,
    *,
    transport: FolderTransport = "http",
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    watch: bool = True,
    allowed_hosts: Iterable[str] | None = None,
    auth: BearerAuth | None = None,
    limits: ServeLimits | None = None,
    busy_poll: float = 0.0,
    sockets: Sequence[socket.socket] | None = None,
    secret: bytes | None = None,
    deployment: Deployment | None = None,
    task_status: trio.TaskStatus[str | None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``folder`` (see `build_folder_server`), watching it for changes.

    Over stdio it serves until stdin ends; over HTTP and WebSocket until cancelled.

    Args:
        folder: What to serve.
        transport: ``"stdio"``, ``"http"`` (Streamable HTTP, every era, at ``/mcp``,
            which takes WebSocket upgrades too) or ``"ws"`` (WebSocket only, at ``/ws``).
        host: The address HTTP and WebSocket bind.
        port: Their port (0: any free one).
        watch: Watch the folder and send change notifications.
        allowed_hosts: The ``Host`` values served (see `transports.serve_http`); by
            default the loopback names, ``host``, and for a wildcard ``host``
            (``0.0.0.0``, ``::``) the machine's addresses and name.
        auth: Require bearer tokens (see `transports.BearerAuth`).
        limits: The transports' limits (message sizes, connections, sessions, the
            partial-message budget); each transport's defaults when None.
        busy_poll: Seconds each connection spins waiting for its client's next message
            before the event loop sleeps; 0 (the default) never spins (see
            `transports.RECOMMENDED_BUSY_POLL`).
        sockets: Listening sockets to serve instead of binding ``host`` and ``port``
            (a supervisor's, shared by its workers; see `transports.serve_http`).
        secret: The sealing key of the server's cursors and request states (a random
            one when None): workers sharing one accept each other's.
        deployment: Serve as one worker of this `transports.Deployment` (HTTP only): its
            key (rather than ``secret``), and legacy sessions shared through its Redis.
        task_status: Started with the URL clients connect to (None for stdio; the
            loopback one for a wildcard ``host``), once the folder is watched and the
            transport accepts connections.

    Raises:
        OSError: The address can't be bound (a port in use...).
    """
    server = build_folder_server(folder, on_error=_log_failure)
    if secret is not None and deployment is None:
        server.configure(secret=secret, clock=time.time)
    limits = ServeLimits() if limits is None else limits
    async with trio.open_nursery() as nursery:
        if watch:
            await nursery.start(watch_folder, folder, server)
        if transport == "stdio":
            task_status.started(None)
            await serve_stdio(server, max_message_size=limits.max_line_size, busy_poll=busy_poll)
            nursery.cancel_scope.cancel()
            return
        allowed = hosts_served_at(host) if allowed_hosts is None else tuple(allowed_hosts)
        options: dict[str, Any] = {
            "host": host,
            "port": port,
            "allowed_hosts": allowed,
            "auth": auth,
            "busy_poll": busy_poll,
            "sockets": sockets,
        }
        if transport == "http":
            serve: Any = partial(
                serve_http, limits=limits.http, websocket=limits.websocket, deployment=deployment
            )
        else:
            serve = partial(serve_websocket, limits=limits.websocket)
        bound = await nursery.start(partial(serve, server, **options))
        task_status.started(folder_url(transport, host, bound))


def folder_url(transport: FolderTransport, host: str, port: int) -> str:
    """The URL `serve_folder` reports for ``transport`` (http or ws) on ``host``, ``port``."""
    scheme, path = ("http", HTTP_PATH) if transport == "http" else ("ws", WEBSOCKET_PATH)
    return first_url(scheme, host, port, path)


def _log_failure(error: BaseException, context: Context) -> None:
    _log.error("%s failed", context.method, exc_info=error)
