"""2026-07-28 subscriptions/listen helpers (CHECKLIST §9.2): the request, the acknowledgement."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from mcpcore import LocalProtocolError, NotificationReceived, RequestReceived, types
from mcpcore.client import FilterComparison, compare_acknowledgement
from mcpcore.types import LOG_LEVEL_META_KEY, SUBSCRIPTION_ID_META_KEY
from tests.core.client_harness import FakeClock, every_message_checked, make_session, scripted


@pytest.fixture(autouse=True)
def _schema_checked() -> Iterator[None]:
    yield from every_message_checked()


TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def test_a_listen_stream_end_to_end_invalidates_the_cache() -> None:
    clock = FakeClock()
    listing = {"n": 0}

    def tools(event: RequestReceived) -> types.ListToolsResult:
        listing["n"] += 1
        return types.ListToolsResult(tools=[], ttl_ms=60_000)

    session, requester = make_session(scripted({"tools/list": tools}), clock=clock)
    run(session.connect())
    run(session.set_logging_level("debug"))
    run(session.list_tools())

    wanted = types.SubscriptionFilter(tools_list_changed=True, prompts_list_changed=True)
    listen_id, data = session.listen_request(wanted, meta={"traceparent": TRACEPARENT})
    [event] = requester.write(data)
    assert isinstance(event, RequestReceived)
    assert event.request_id == listen_id
    assert event.log_level is None  # log messages never go on a listen stream
    assert LOG_LEVEL_META_KEY not in requester.sent[-1].message["params"]["_meta"]
    assert requester.sent[-1].message["params"]["_meta"]["traceparent"] == TRACEPARENT

    # The server honours only the tools part.
    honoured = types.SubscriptionFilter(tools_list_changed=True)
    ack = requester.server.acknowledge_subscription(listen_id, honoured)
    assert ack is not None
    [acknowledged] = session.connection.receive(ack)
    assert isinstance(acknowledged, NotificationReceived)
    assert acknowledged.subscription_id == listen_id
    comparison = compare_acknowledgement(wanted, acknowledged.params.notifications)
    assert comparison.is_valid
    assert not comparison.honoured_in_full
    assert comparison.dropped == types.SubscriptionFilter(prompts_list_changed=True)

    changed = requester.server.send_subscription_notification(
        listen_id, "notifications/tools/list_changed"
    )
    assert changed is not None
    [notification] = session.connection.receive(changed)
    assert isinstance(notification, NotificationReceived)
    assert notification.params.meta[SUBSCRIPTION_ID_META_KEY] == listen_id
    session.handle_notification(notification)
    run(session.list_tools())
    assert listing["n"] == 2  # the cached page was dropped

    cancel = session.connection.cancel(listen_id)
    assert cancel is not None
    requester.write(cancel)


def test_listen_does_not_exist_before_2026() -> None:
    session, _ = make_session()
    run(session.connect("legacy"))
    with pytest.raises(LocalProtocolError):
        session.listen_request(types.SubscriptionFilter(tools_list_changed=True))


def test_compare_acknowledgement() -> None:
    requested = types.SubscriptionFilter(
        tools_list_changed=True, resource_subscriptions=["file:///a", "file:///b"]
    )
    same = compare_acknowledgement(requested, requested)
    assert same.honoured_in_full
    assert same.is_valid
    partial = compare_acknowledgement(
        requested, types.SubscriptionFilter(resource_subscriptions=["file:///a"])
    )
    assert partial == FilterComparison(
        dropped=types.SubscriptionFilter(
            tools_list_changed=True, resource_subscriptions=["file:///b"]
        ),
        unrequested=types.SubscriptionFilter(),
    )
    assert partial.is_valid
    assert not partial.honoured_in_full
    extra = compare_acknowledgement(
        requested,
        types.SubscriptionFilter(
            tools_list_changed=True,
            resources_list_changed=True,
            resource_subscriptions=["file:///a", "file:///b", "file:///c"],
        ),
    )
    assert not extra.is_valid
    assert extra.unrequested == types.SubscriptionFilter(
        resources_list_changed=True, resource_subscriptions=["file:///c"]
    )
    # false is not "asked for"
    off = types.SubscriptionFilter(tools_list_changed=False)
    assert compare_acknowledgement(off, types.SubscriptionFilter()).honoured_in_full
