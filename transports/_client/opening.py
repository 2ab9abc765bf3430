"""The one shape of every ``open_*_client``: connect, build the client, choose the era.

Each opener (`transports.open_stdio_client`, `transports.open_http_client`,
`transports.open_websocket_client`) does what only its transport does first (start a
subprocess; open a TCP connection and its handshake; set up a connection pool) and last
(stop the process; close the socket; close the pool), and between the two calls
`open_client` with its transport's connect step. `open_client` does the rest, the same
for all:

1. a nursery for the connection's tasks, and the ``on_notification`` dispatcher's task;
2. the connect step builds the `ClientTransport` in that nursery;
3. the `mcpcore.client.ClientSession` over it, bound to it;
4. the `Client` (the opener's subclass of it), which chooses the era (``connect``);
5. on the way out, whatever happened: `Client.aclose`; and an exception from the
   block comes out as itself, not wrapped in the nursery's exception group.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Protocol, TypeVar

import trio

from mcpcore.client import ClientCallbacks, ClientSession, ConnectMode
from mcpcore.types import Implementation
from transports._client.client import Client
from transports._client.notifications import NotificationCallback, NotificationDispatcher
from transports._client.transport import ClientTransport
from transports._runtime.groups import reraise_sole

__all__ = ["ClientSettings", "MakeClient", "open_client"]

_Transport = TypeVar("_Transport", bound=ClientTransport)
_Client = TypeVar("_Client", bound=Client)
_Transport_contra = TypeVar("_Transport_contra", bound=ClientTransport, contravariant=True)
_Client_co = TypeVar("_Client_co", bound=Client, covariant=True)


@dataclass(frozen=True, kw_only=True, slots=True)
class ClientSettings:
    """What every opener takes besides its transport's own options (see `open_client`).

    Attributes:
        callbacks: Elicitation, sampling and roots (they set what the client declares).
        on_notification: Called with each notification outside listen streams.
        client_info: Our name and version.
        mode: How to choose the era: ``"auto"``, ``"legacy"`` or ``"modern"``.
        timeout: Seconds each request waits by default, ``initialize`` included.
        probe_timeout: Seconds to wait for the ``server/discover`` probe.
        max_total_timeout: The hard limit of a call whose timeout progress resets.
        cache: Keep 2026-07-28 results for as long as their ``ttlMs`` allows.
    """

    callbacks: ClientCallbacks | None
    on_notification: NotificationCallback | None
    client_info: Implementation
    mode: ConnectMode
    timeout: float
    probe_timeout: float
    max_total_timeout: float
    cache: bool


class MakeClient(Protocol[_Transport_contra, _Client_co]):
    """Builds an opener's `Client` subclass (its constructor, usually)."""

    def __call__(
        self,
        session: ClientSession,
        transport: _Transport_contra,
        *,
        timeout: float,
        max_total_timeout: float,
        notifications: NotificationDispatcher | None,
    ) -> _Client_co:
        """The client over ``session`` and ``transport`` (see `Client`)."""
        ...


@asynccontextmanager
async def open_client(
    settings: ClientSettings,
    connect: Callable[[trio.Nursery, NotificationDispatcher | None], _Transport],
    make_client: MakeClient[_Transport, _Client],
) -> AsyncIterator[_Client]:
    """A connected client, closed on the way out (see the module docstring).

    Args:
        settings: What the user gave the opener, transport aside.
        connect: Builds the transport in the connection's nursery, given the
            ``on_notification`` dispatcher (None without a callback).
        make_client: Builds the client.
    """
    try:
        async with trio.open_nursery() as nursery:
            dispatcher = None
            if settings.on_notification is not None:
                callbacks = settings.callbacks
                on_error = callbacks.on_callback_error if callbacks is not None else None
                dispatcher = NotificationDispatcher(settings.on_notification, on_error=on_error)
                nursery.start_soon(dispatcher.run)
            transport = connect(nursery, dispatcher)
            session = ClientSession(
                transport,
                client_info=settings.client_info,
                callbacks=settings.callbacks,
                clock=trio.current_time if settings.cache else None,
            )
            transport.bind(session)
            client = make_client(
                session,
                transport,
                timeout=settings.timeout,
                max_total_timeout=settings.max_total_timeout,
                notifications=dispatcher,
            )
            try:
                await client.connect(
                    settings.mode, probe_timeout=settings.probe_timeout, timeout=settings.timeout
                )
                yield client
            finally:
                await client.aclose()
    except BaseException as exc:
        reraise_sole(exc)
