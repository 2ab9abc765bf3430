"""What workers of one deployment tell each other over Redis pub/sub (msgpack).

A forwarded request goes to its session's owner on the owner's channel; its answer
comes back, a piece at a time, on the forwarding worker's channel, tagged with the
ticket that worker gave it. Pieces are exactly what a `transports._net.reply.Reply`
asks a `ResponseWriter` to write (a whole response, or a piece of an event stream), so
the forwarding worker writes them as they are. Pub/sub delivers one publisher's
messages on one channel in order, and each worker publishes over one connection, so
the pieces of an answer arrive in order.

The hub's messages (list changes, resource updates) go to every worker on the
deployment's hub channel, and so does a task's cancellation (`CancelTask`): the worker
running the task cancels its run, the others ignore it.
"""

from __future__ import annotations

from typing import Final

import msgspec

__all__ = [
    "DECODER",
    "ENCODER",
    "CancelTask",
    "Changed",
    "Forwarded",
    "Hangup",
    "Message",
    "Piece",
    "TaskSaved",
    "Updated",
    "Whole",
]

Fields = list[tuple[bytes, bytes]]


class Forwarded(msgspec.Struct, tag="q", array_like=True, gc=False):
    """A request for a session another worker owns, from the worker that received it."""

    reply_to: str  # the forwarding worker
    ticket: int  # its number for this request
    method: str
    target: bytes
    fields: Fields
    body: bytes
    http_version: bytes
    root: str
    principal: str | None


class Hangup(msgspec.Struct, tag="h", array_like=True, gc=False):
    """The forwarding worker's client left (or it stopped relaying): stop answering."""

    reply_to: str
    ticket: int


class Whole(msgspec.Struct, tag="w", array_like=True, gc=False):
    """A whole response to a forwarded request, or a part of its body (``more``: not the last).

    A large body comes in parts (`transports._deploy.relay.RELAY_CHUNK_SIZE`), each with
    the same status and headers, so that no message outgrows Redis's pub/sub buffers.
    """

    ticket: int
    status: int
    headers: Fields
    body: bytes
    close: bool
    more: bool = False


class Piece(msgspec.Struct, tag="p", array_like=True, gc=False):
    """A piece of an event stream answering a forwarded request (its head with the first)."""

    ticket: int
    head: Fields | None
    data: bytes
    end: bool


class Changed(msgspec.Struct, tag="c", array_like=True, gc=False):
    """A list (``tools``, ``prompts``, ``resources``) changed, on some worker."""

    kind: str


class Updated(msgspec.Struct, tag="u", array_like=True, gc=False):
    """A resource changed, on some worker."""

    uri: str


class CancelTask(msgspec.Struct, tag="x", array_like=True, gc=False):
    """A task was cancelled on some worker: whichever worker runs it cancels the run."""

    task_id: str


class TaskSaved(msgspec.Struct, tag="t", array_like=True, gc=False):
    """A task's new state was saved by ``worker``: the others tell their listen streams."""

    task_id: str
    worker: str


Message = Forwarded | Hangup | Whole | Piece | Changed | Updated | CancelTask | TaskSaved

ENCODER: Final = msgspec.msgpack.Encoder()
DECODER: Final = msgspec.msgpack.Decoder(Message)
