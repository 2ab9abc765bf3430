"""Event streams answering a request, read in the calling task until the call is settled.

A server answers a request with an event stream when it has something to say first:
progress, log messages, a legacy server's own requests (elicitation, sampling...).
`AnswerReader.read` feeds the stream to the `Router` in the caller's task, which runs
the progress callback between events (a slow callback slows this request's own stream
only) and moves the call's deadline when progress restarts its timeout. A server's
request is answered in a task of its own (the `Router` starts it), so reading goes on.

When the stream ends before the answer: a legacy stream with an event id is resumed
"with a GET plus Last-Event-ID" after the ``retry`` time (2025-11-25 basic/transports);
a 2026-07-28 stream has no resumption and the request is lost (`StreamLostError`: the
transport re-issues it). Once answered, the rest of the stream is read in the
background, briefly, so that its connection can carry the next request.
"""

from __future__ import annotations

from typing import Final

import trio

from mcpcore import ProgressReceived
from mcpcore.framing import SSEParser
from mcpcore.http import OutgoingMessage
from mcpcore.types import RequestId
from transports._client.calls import PendingCall, report_progress
from transports._client.errors import ConnectionClosedError
from transports._http.client.exchange import BodyTooLargeError, Response
from transports._http.client.legacy import LegacySession
from transports._http.client.outcomes import invalid
from transports._http.client.router import Router

__all__ = ["STREAM_END_WAIT", "AnswerReader", "Call", "StreamLostError"]

#: Seconds to wait, after the answer, for its stream to end so that the connection can
#: carry the next request ("the final response SHOULD terminate the stream"). The caller
#: already has its answer; a stream left open longer is closed.
STREAM_END_WAIT: Final = 1.0

_MESSAGE: Final = "message"


class StreamLostError(ConnectionClosedError):
    """A 2026-07-28 answer stream ended before the answer: the request is lost."""


class Call:
    """One request whose answer is being read: where it goes, and the call's clock.

    Args:
        request_id: The request's id.
        message: What the request is.
        pending: Where the router leaves its answer and progress.
        scope: The call's cancel scope; its deadline is the call's.
        started: When the call began (`trio.current_time`).
    """

    __slots__ = ("message", "options", "pending", "request_id", "scope", "started", "timeout")

    def __init__(
        self,
        request_id: RequestId,
        message: OutgoingMessage,
        pending: PendingCall,
        scope: trio.CancelScope,
        started: float,
    ) -> None:
        self.request_id = request_id
        self.message = message
        self.pending = pending
        self.scope = scope
        self.started = started
        self.timeout = scope.deadline - started
        self.options = pending.options


class AnswerReader:
    """Reads the event streams answering requests (see the module docstring).

    Args:
        router: Where the messages go.
        legacy: The legacy session (for resumption).
        nursery: Where the ends of answered streams are read.
        max_event_size: The largest event accepted.
    """

    def __init__(
        self,
        router: Router,
        legacy: LegacySession,
        nursery: trio.Nursery,
        *,
        max_event_size: int,
    ) -> None:
        self._router = router
        self._legacy = legacy
        self._nursery = nursery
        self._max_event_size = max_event_size

    async def read(self, response: Response, call: Call) -> None:
        """Read ``response``'s event stream until ``call`` is settled (answered or failed).

        Raises:
            BaseException: Only what interrupts the caller (cancellation, a progress
                callback's error); the response is then closed.
        """
        pending = call.pending
        message = call.message
        parser = SSEParser(self._max_event_size)
        try:
            if await self._follow(response, parser, call):
                return
        except BodyTooLargeError as exc:
            connection = self._router.session.connection
            pending.resolve(invalid(connection, call.request_id, message.method, str(exc)))
            return
        resumable = not message.is_modern and parser.last_event_id
        if resumable and await self._legacy.resume(parser, lambda: pending.done):
            return
        if message.is_modern:
            pending.fail(StreamLostError("the server ended the answer stream early"))
            return
        reason = f"the server ended the answer to {message.method}"
        if resumable:
            reason += ", and it could not be resumed"
        pending.fail(ConnectionClosedError(reason))

    async def _follow(self, response: Response, parser: SSEParser, call: Call) -> bool:
        """Feed an answer stream to the router until the call is settled; whether it is."""
        pending = call.pending
        receive = self._router.receive
        try:
            while not pending.done:
                events = await response.read_events(parser)
                if events is None:
                    response.close()  # it ended: the connection carries the next request
                    return pending.done
                for event in events:
                    if event.data and event.event == _MESSAGE:
                        await receive(event.data.encode())
                if not pending.done:  # (else `PendingCall.wait` reports the last one)
                    progress = pending.take_progress()
                    if progress is not None:
                        await _report(progress, call)
        except ConnectionClosedError:
            response.abandon()
            return pending.done
        except BaseException:
            response.abandon()
            raise
        if response.connection.body_complete_now():
            response.close()
        else:
            self._nursery.start_soon(_finish, response, parser)
        return True


async def _report(progress: ProgressReceived, call: Call) -> None:
    """Report progress read off an answer stream; maybe restart the call's timeout."""
    options = call.options
    if options.reset_timeout_on_progress:
        limit = call.started + options.max_total_timeout
        scope = call.scope
        scope.deadline = min(max(scope.deadline, trio.current_time() + call.timeout), limit)
    if options.progress is not None:
        await report_progress(options.progress, progress)


async def _finish(response: Response, parser: SSEParser) -> None:
    """Read what is left of an answered stream (briefly), to keep its connection."""
    try:
        with trio.move_on_after(STREAM_END_WAIT):
            while await response.read_events(parser) is not None:
                pass
            response.close()
    except (ConnectionClosedError, BodyTooLargeError):
        pass
    finally:
        response.abandon()  # (unless closed above: then nothing is left to do)
