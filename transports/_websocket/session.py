"""One MCP connection over an accepted WebSocket: the stdio runtime, fed by frames.

The server side of a WebSocket is the runtime every transport shares
(shared/DESIGN.md §5): a `transports._runtime.serving.ServerDriver` reads the channel's
messages (its reader never runs user code; each request runs in a worker under its own
cancel scope; past ``max_handlers`` it stops reading, which is the backpressure) and
writes through a `transports._runtime.writer.MessageWriter` (bounded, coalescing, shielded).
The semantics are stdio's (CHECKLIST §14.5): the first request decides the era of the
connection as on stdio (an ``initialize`` scopes a legacy session to the connection; a
request carrying the 2026-07-28 ``_meta`` envelope is served statelessly),
``notifications/cancelled`` cancels, listen streams share the connection and are told
apart by their ``subscriptionId``.

When the connection goes (the peer's Close, a broken rule, a lost connection, a ping
left unanswered), every handler still running is cancelled at once: no answer can
reach the client any more, so there is nothing to finish (stdio grants a grace period
because its output pipe outlives the input).
"""

from __future__ import annotations

import contextlib
from contextlib import aclosing

import trio
from wsproto.connection import Connection
from wsproto.frame_protocol import CloseReason

from mcpcore.server import Server
from transports._net.partial import PARTIAL_BUDGET
from transports._runtime.serving import ServerDriver
from transports._websocket.channel import WebSocketChannel
from transports._websocket.limits import WebSocketLimits

__all__ = ["serve_channel"]


async def serve_channel(
    server: Server,
    stream: trio.abc.Stream,
    protocol: Connection,
    limits: WebSocketLimits,
    *,
    principal: str | None = None,
) -> None:
    """Serve MCP on an open WebSocket until it ends; the caller closes ``stream`` after.

    Args:
        server: What to serve.
        stream: The connection, its 101 answer written.
        protocol: wsproto's frame protocol for it, fed what was already read.
        limits: The connection's limits.
        principal: Who the bearer token speaks for, when authorization is on.
    """
    channel = WebSocketChannel(stream, protocol, limits, budget=PARTIAL_BUDGET)
    writer = channel.writer
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(writer.run)
            nursery.start_soon(channel.keep_alive, nursery.cancel_scope.cancel)
            driver = ServerDriver(
                server,
                server.connection(),
                writer,
                frame=channel.frame,
                max_handlers=limits.max_handlers,
                principal=principal,
            )
            async with aclosing(channel.messages()) as messages:
                await driver.serve(messages, grace=0)
            # The messages ended: after the peer's Close (answered already), a lost
            # connection, or our own Close for a broken rule, whose answer we await.
            with trio.move_on_after(limits.close_timeout):
                await channel.drain()
            await writer.aclose(flush_timeout=limits.close_timeout)
            nursery.cancel_scope.cancel()
    finally:
        channel.release()  # (a message cut short: its share of the budget goes back)
        if channel.dead:
            await _say_goodbye(stream, channel, CloseReason.INTERNAL_ERROR, "ping timeout", limits)
        elif not channel.closing and not channel.ended:
            # Cancelled from outside: the server is shutting down.
            await _say_goodbye(stream, channel, CloseReason.GOING_AWAY, "going away", limits)


async def _say_goodbye(
    stream: trio.abc.Stream,
    channel: WebSocketChannel,
    code: int,
    reason: str,
    limits: WebSocketLimits,
) -> None:
    """A Close frame written directly (the writer's task is gone), bounded, shielded."""
    with trio.CancelScope(shield=True), trio.move_on_after(limits.close_timeout):
        data = channel.take_close_frame(code, reason)
        if data:
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                await stream.send_all(data)
