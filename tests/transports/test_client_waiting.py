"""How a call waits, and the bounded queues, in virtual time (no subprocess, no sleep).

`PendingCall` (timeouts, progress run by the caller and coalesced), the
``on_notification`` dispatcher and listen `Subscription` backlogs (drop the oldest).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
import trio
import trio.testing

from mcpcore import ErrorReceived, NotificationReceived, ProgressReceived, ResponseReceived, types
from mcpcore.client import InvalidServerResponseError, McpError
from tests.transports.trio_helpers import trio_test
from transports import MAX_LISTEN_BACKLOG, MAX_QUEUED_NOTIFICATIONS, ConnectionClosedError
from transports._client.calls import CallOptions, CallTimeout, PendingCall, options_of
from transports._client.deadlines import RESOLUTION, Deadlines
from transports._client.notifications import NotificationDispatcher, Subscription

ANSWER = ResponseReceived(request_id=1, method="ping", result=types.EmptyResult())


def progress(value: float) -> ProgressReceived:
    return ProgressReceived(request_id=1, progress_token="t", progress=value, total=10)


def changed(number: int) -> NotificationReceived:
    params = types.ResourceUpdatedNotificationParams(uri=f"test://{number}")
    return NotificationReceived(method="notifications/resources/updated", params=params)


# ------------------------------------------------------------------ PendingCall


#: Both ways a call's timeout is kept: a cancel scope around the wait (Streamable
#: HTTP), or the connection's `Deadlines` task (stdio and WebSocket), which may fire up
#: to one `RESOLUTION` late.
WAYS = pytest.mark.parametrize("way", ["cancel scope", "deadlines"])


@asynccontextmanager
async def keeping(way: str) -> AsyncIterator[Deadlines | None]:
    """What keeps the timeouts, the ``way`` given (a `Deadlines` task runs meanwhile)."""
    if way == "cancel scope":
        yield None
        return
    deadlines = Deadlines()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(deadlines.run)
        yield deadlines
        nursery.cancel_scope.cancel()


def assert_elapsed(started: float, seconds: float, way: str) -> None:
    """The wait lasted ``seconds`` (virtual), exactly, or up to one bucket more."""
    elapsed = trio.current_time() - started
    late = RESOLUTION if way == "deadlines" else 0.0
    assert seconds - 1e-9 <= elapsed <= seconds + late + 1e-9, elapsed


def test_a_call_timeout_is_its_seconds_and_carries_its_options() -> None:
    options = CallOptions(progress=print, reset_timeout_on_progress=True)
    timeout = CallTimeout(2.5, options)
    assert timeout == 2.5
    assert f"{timeout:g}" == "2.5"
    assert options_of(timeout) is options
    assert options_of(2.5) == CallOptions()
    assert options_of(None) == CallOptions()


@WAYS
@trio_test(autojump=True)
async def test_the_answer_ends_the_wait(way: str) -> None:
    async with keeping(way) as deadlines:
        pending = PendingCall()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_later, 1.0, lambda: pending.resolve(ANSWER))
            started = trio.current_time()
            assert await pending.wait(5, deadlines=deadlines) is ANSWER
            assert_elapsed(started, 1.0, way)
        assert pending.done


@WAYS
@trio_test(autojump=True)
async def test_an_answer_that_came_first_ends_the_wait_at_once(way: str) -> None:
    async with keeping(way) as deadlines:
        pending = PendingCall()
        pending.resolve(ANSWER)
        started = trio.current_time()
        assert await pending.wait(5, deadlines=deadlines) is ANSWER
        assert_elapsed(started, 0, way)


@WAYS
@trio_test(autojump=True)
async def test_no_answer_in_time_is_a_timeout_error(way: str) -> None:
    async with keeping(way) as deadlines:
        started = trio.current_time()
        with pytest.raises(TimeoutError, match="no answer within 2 s"):
            await PendingCall().wait(2, deadlines=deadlines)
        assert_elapsed(started, 2, way)


@WAYS
@trio_test(autojump=True)
async def test_the_timeout_counts_from_when_the_call_started(way: str) -> None:
    async with keeping(way) as deadlines:
        started = trio.current_time()
        await trio.sleep(0.5)  # (a driver's time sending the request)
        with pytest.raises(TimeoutError):
            await PendingCall().wait(2, started=started, deadlines=deadlines)
        assert_elapsed(started, 2, way)


@WAYS
@trio_test(autojump=True)
async def test_a_lost_connection_ends_the_wait_with_its_error(way: str) -> None:
    async with keeping(way) as deadlines:
        pending = PendingCall()
        lost = ConnectionClosedError("gone")
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_later, 1.0, lambda: pending.fail(lost))
            with pytest.raises(ConnectionClosedError) as raised:
                await pending.wait(5, deadlines=deadlines)
        assert raised.value is lost


@WAYS
@trio_test(autojump=True)
async def test_a_slow_callback_sees_the_latest_progress_and_the_last_before_the_end(
    way: str,
) -> None:
    async with keeping(way) as deadlines:
        seen: list[float] = []

        async def slow(value: float, total: float | None, message: str | None) -> None:
            seen.append(value)
            await trio.sleep(1)  # progress 2, 3 and 4 and the answer arrive meanwhile

        pending = PendingCall(CallOptions(progress=slow))

        async def server() -> None:
            for value in (1, 2, 3, 4):
                pending.progress(progress(value))
                await trio.sleep(0.1)
            pending.resolve(ANSWER)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(server)
            assert await pending.wait(10, deadlines=deadlines) is ANSWER
        assert seen == [1, 4]


@WAYS
@trio_test(autojump=True)
async def test_progress_resets_the_timeout_only_when_asked(way: str) -> None:
    async with keeping(way) as deadlines:

        async def server(pending: PendingCall) -> None:
            for value in range(1, 9):  # news every 0.5 s for 4 s, then the answer
                await trio.sleep(0.5)
                pending.progress(progress(value))
            await trio.sleep(0.5)
            pending.resolve(ANSWER)

        async with trio.open_nursery() as nursery:
            pending = PendingCall()
            nursery.start_soon(server, pending)
            started = trio.current_time()
            with pytest.raises(TimeoutError):
                await pending.wait(1, deadlines=deadlines)
            assert_elapsed(started, 1, way)
            nursery.cancel_scope.cancel()

        async with trio.open_nursery() as nursery:
            pending = PendingCall(CallOptions(reset_timeout_on_progress=True))
            nursery.start_soon(server, pending)
            started = trio.current_time()
            assert await pending.wait(1, deadlines=deadlines) is ANSWER
            assert_elapsed(started, 4.5, way)

        async with trio.open_nursery() as nursery:
            capped = CallOptions(reset_timeout_on_progress=True, max_total_timeout=2.2)
            pending = PendingCall(capped)
            nursery.start_soon(server, pending)
            started = trio.current_time()
            with pytest.raises(TimeoutError):
                await pending.wait(1, deadlines=deadlines)
            assert_elapsed(started, 2.2, way)
            nursery.cancel_scope.cancel()


@WAYS
@trio_test(autojump=True)
async def test_an_answer_that_arrives_during_an_overlong_callback_still_counts(way: str) -> None:
    async with keeping(way) as deadlines:

        async def stuck(value: float, total: float | None, message: str | None) -> None:
            pending.resolve(ANSWER)
            await trio.sleep_forever()  # cut at the call's deadline

        pending = PendingCall(CallOptions(progress=stuck))
        pending.progress(progress(1))
        started = trio.current_time()
        assert await pending.wait(1, deadlines=deadlines) is ANSWER
        assert_elapsed(started, 1, way)


# ------------------------------------------------------------ the dispatcher


@trio_test(autojump=True)
async def test_the_dispatcher_drops_the_oldest_when_the_callback_falls_behind() -> None:
    delivered: list[NotificationReceived] = []
    release = trio.Event()

    async def callback(event: NotificationReceived) -> None:
        delivered.append(event)
        await release.wait()

    dispatcher = NotificationDispatcher(callback)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(dispatcher.run)
        dispatcher.put(changed(0))
        await trio.testing.wait_all_tasks_blocked()  # the callback holds #0
        extra = 10
        for number in range(1, MAX_QUEUED_NOTIFICATIONS + extra + 1):
            dispatcher.put(changed(number))
        assert dispatcher.dropped == extra
        release.set()
        await trio.testing.wait_all_tasks_blocked()
        nursery.cancel_scope.cancel()
    uris = [event.params.uri for event in delivered]
    expected = [0, *range(extra + 1, MAX_QUEUED_NOTIFICATIONS + extra + 1)]
    assert uris == [f"test://{number}" for number in expected]


@trio_test(autojump=True)
async def test_a_dispatcher_reports_callback_errors_to_the_hook() -> None:
    reported: list[tuple[str, Exception]] = []

    def callback(event: NotificationReceived) -> None:
        raise ValueError("boom")

    dispatcher = NotificationDispatcher(
        callback, on_error=lambda method, exc: reported.append((method, exc))
    )
    async with trio.open_nursery() as nursery:
        nursery.start_soon(dispatcher.run)
        dispatcher.put(changed(1))
        dispatcher.put(changed(2))
        await trio.testing.wait_all_tasks_blocked()
        nursery.cancel_scope.cancel()
    assert [method for method, _ in reported] == ["notifications/resources/updated"] * 2


# ------------------------------------------------------------ subscriptions


@trio_test(autojump=True)
async def test_a_subscription_keeps_the_newest_and_ends_after_its_backlog() -> None:
    wanted = types.SubscriptionFilter(resource_subscriptions=["test://"])
    subscription = Subscription(7, wanted)
    assert not subscription.is_acknowledged
    with pytest.raises(RuntimeError):
        _ = subscription.acknowledged
    subscription.acknowledge(wanted)
    assert await subscription.wait_acknowledged() == wanted
    assert subscription.comparison.honoured_in_full
    for number in range(MAX_LISTEN_BACKLOG + 3):
        subscription.deliver(changed(number))
    assert subscription.dropped == 3
    subscription.finish(ResponseReceived(request_id=7, method="subscriptions/listen", result=None))
    subscription.deliver(changed(999))  # after the end: ignored
    uris = [event.params.uri async for event in subscription]
    assert uris == [f"test://{number}" for number in range(3, MAX_LISTEN_BACKLOG + 3)]
    assert subscription.ended


@trio_test(autojump=True)
async def test_a_refused_or_broken_subscription_raises() -> None:
    refused = Subscription(1, types.SubscriptionFilter(tools_list_changed=True))
    refused.finish(
        ErrorReceived(
            request_id=1,
            method="subscriptions/listen",
            error=types.Error(code=-32601, message="Method not found"),
        )
    )
    with pytest.raises(McpError) as raised:
        await refused.wait_acknowledged()
    assert raised.value.code == -32601

    unacknowledged = Subscription(2, types.SubscriptionFilter(tools_list_changed=True))
    unacknowledged.finish(None)
    with pytest.raises(InvalidServerResponseError):
        await unacknowledged.wait_acknowledged()

    lost = Subscription(3, types.SubscriptionFilter(tools_list_changed=True))
    lost.acknowledge(types.SubscriptionFilter(tools_list_changed=True))
    lost.deliver(changed(1))
    lost.fail(ConnectionClosedError("gone"))
    assert (await anext(lost)).params.uri == "test://1"  # what came before the loss
    with pytest.raises(ConnectionClosedError):
        await anext(lost)


async def _later(delay: float, action: object) -> None:
    await trio.sleep(delay)
    assert callable(action)
    action()
