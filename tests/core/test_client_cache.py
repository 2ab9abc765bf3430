"""The 2026-07-28 result cache (CHECKLIST §10.5, G12): ttlMs, keys, invalidation, bounds."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest

from mcpcore import NotificationReceived, RequestReceived, types
from mcpcore.client import MAX_TTL_MS, ResultCache
from tests.core.client_harness import (
    FakeClock,
    MemoryRequester,
    RawResult,
    every_message_checked,
    make_session,
    scripted,
)


@pytest.fixture(autouse=True)
def _schema_checked() -> Iterator[None]:
    yield from every_message_checked()


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def tools_page(ttl_ms: Any = 1000, name: str = "a", **extra: Any) -> Any:
    def answer(event: RequestReceived) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[types.Tool(name=name, input_schema={"type": "object"})], ttl_ms=ttl_ms, **extra
        )

    return answer


def count(requester: MemoryRequester, method: str) -> int:
    return requester.methods.count(method)


def test_a_result_is_fresh_until_its_ttl_passes() -> None:
    clock = FakeClock()
    session, requester = make_session(scripted({"tools/list": tools_page(1000)}), clock=clock)
    run(session.connect())
    first = run(session.list_tools())
    clock.now += 0.999
    again = run(session.list_tools())
    assert count(requester, "tools/list") == 1
    assert again == first
    assert again is not first
    clock.now += 0.001  # "fresh: now < received + ttlMs"
    run(session.list_tools())
    assert count(requester, "tools/list") == 2


def test_fresh_bypasses_the_cache_and_refreshes_it() -> None:
    clock = FakeClock()
    session, requester = make_session(scripted({"tools/list": tools_page(1000)}), clock=clock)
    run(session.connect())
    run(session.list_tools())
    run(session.list_tools(fresh=True))
    run(session.list_tools())
    assert count(requester, "tools/list") == 2


@pytest.mark.parametrize("ttl", [0, -5, types.UNSET], ids=["zero", "negative", "absent"])
def test_a_zero_negative_or_absent_ttl_is_not_cached(ttl: Any) -> None:
    clock = FakeClock()
    result: dict[str, Any] = {"resultType": "complete", "tools": [], "cacheScope": "private"}
    if ttl is not types.UNSET:
        result["ttlMs"] = ttl
    session, requester = make_session(
        intercepts={"tools/list": lambda _: RawResult(result)}, clock=clock
    )
    run(session.connect())
    run(session.list_tools())
    run(session.list_tools())
    assert count(requester, "tools/list") == 2


def test_legacy_results_are_never_cached() -> None:
    clock = FakeClock()
    # Even one that carries ttlMs: outside its revision's contract (G12).
    session, requester = make_session(scripted({"tools/list": tools_page(60_000)}), clock=clock)
    run(session.connect("legacy"))
    run(session.list_tools())
    run(session.list_tools())
    assert count(requester, "tools/list") == 2


def test_no_clock_no_cache() -> None:
    session, requester = make_session(scripted({"tools/list": tools_page(60_000)}))
    run(session.connect())
    assert session.cache is None
    run(session.list_tools())
    run(session.list_tools())
    assert count(requester, "tools/list") == 2


def test_the_key_is_the_method_and_its_result_affecting_params_never_meta() -> None:
    clock = FakeClock()
    session, requester = make_session(
        scripted({"tools/list": tools_page(60_000), "resources/read": read_answer}), clock=clock
    )
    run(session.connect())
    run(session.list_tools())
    run(
        session.list_tools(
            meta={"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
        )
    )
    assert count(requester, "tools/list") == 1  # _meta is not part of the key
    run(session.list_tools(""))  # "" is a cursor: another page
    assert count(requester, "tools/list") == 2
    run(session.read_resource("file:///a"))
    run(session.read_resource("file:///b"))
    run(session.read_resource("file:///a"))
    assert count(requester, "resources/read") == 2


def read_answer(event: RequestReceived) -> types.ReadResourceResult:
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=event.params.uri, text="x")], ttl_ms=60_000
    )


def test_discovery_is_cached() -> None:
    clock = FakeClock()
    session, requester = make_session(clock=clock)
    run(session.connect())
    result = run(session.discover())
    assert result.supported_versions == ["2026-07-28", "2025-11-25"]
    assert count(requester, "server/discover") == 1
    run(session.discover(fresh=True))
    assert count(requester, "server/discover") == 2


def test_results_of_mrtr_retries_are_not_cached() -> None:
    clock = FakeClock()

    def read(event: RequestReceived) -> Any:
        if event.params.request_state is types.UNSET:
            return types.InputRequiredResult(request_state="s")
        return read_answer(event)

    session, requester = make_session(scripted({"resources/read": read}), clock=clock)
    run(session.connect())
    run(session.read_resource("file:///a"))
    run(session.read_resource("file:///a"))
    assert count(requester, "resources/read") == 4


@pytest.mark.parametrize(
    ("notification", "params", "dropped"),
    [
        ("notifications/tools/list_changed", types.NotificationParams(), {"tools/list"}),
        ("notifications/prompts/list_changed", types.NotificationParams(), {"prompts/list"}),
        (
            "notifications/resources/list_changed",
            types.NotificationParams(),
            {"resources/list", "resources/templates/list"},
        ),
        (
            "notifications/resources/updated",
            types.ResourceUpdatedNotificationParams(uri="file:///a"),
            {"resources/read file:///a"},
        ),
    ],
)
def test_each_notification_invalidates_what_it_concerns(
    notification: str, params: Any, dropped: set[str]
) -> None:
    clock = FakeClock()
    session, requester = make_session(
        scripted(
            {
                "tools/list": tools_page(60_000),
                "prompts/list": lambda e: types.ListPromptsResult(prompts=[], ttl_ms=60_000),
                "resources/list": lambda e: types.ListResourcesResult(resources=[], ttl_ms=60_000),
                "resources/templates/list": lambda e: types.ListResourceTemplatesResult(
                    resource_templates=[], ttl_ms=60_000
                ),
                "resources/read": read_answer,
            }
        ),
        clock=clock,
    )
    run(session.connect())

    async def everything() -> None:
        await session.list_tools()
        await session.list_tools("page2")
        await session.list_prompts()
        await session.list_resources()
        await session.list_resource_templates()
        await session.read_resource("file:///a")
        await session.read_resource("file:///b")

    run(everything())
    before = list(requester.requests)
    session.handle_notification(NotificationReceived(method=notification, params=params))
    run(everything())
    again = requester.requests[len(before) :]
    refetched = {
        r["method"] + (" " + r["params"]["uri"] if "uri" in r["params"] else "") for r in again
    }
    assert refetched == dropped
    if notification == "notifications/tools/list_changed":
        assert len(again) == 2  # both pages of the list


def test_notifications_without_a_cache_are_harmless() -> None:
    session, _ = make_session()
    session.handle_notification(
        NotificationReceived(
            method="notifications/tools/list_changed", params=types.NotificationParams()
        )
    )


# ---------------------------------------------------------------- ResultCache


def result(ttl_ms: Any, size: int = 10) -> types.ReadResourceResult:
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri="file:///x", text="x" * size)], ttl_ms=ttl_ms
    )


def test_the_cache_is_bounded_in_entries_and_evicts_the_oldest() -> None:
    clock = FakeClock()
    cache = ResultCache(clock, max_entries=3)
    for uri in "abcd":
        assert cache.put("resources/read", uri, result(60_000))
    assert len(cache) == 3
    assert cache.get("resources/read", "a") is None
    assert cache.get("resources/read", "d") is not None


def test_the_cache_is_bounded_in_bytes() -> None:
    clock = FakeClock()
    one = len(msgspec.json.encode(result(60_000, 100)))
    cache = ResultCache(clock, max_bytes=2 * one)
    for uri in "abc":
        cache.put("resources/read", uri, result(60_000, 100))
    assert len(cache) == 2
    assert cache.size_in_bytes == 2 * one
    assert not cache.put("resources/read", "big", result(60_000, 10 * one))
    cache.clear()
    assert (len(cache), cache.size_in_bytes) == (0, 0)
    with pytest.raises(ValueError, match="room"):
        ResultCache(clock, max_entries=0)


def test_ttl_rules() -> None:
    assert ResultCache.ttl_ms(result(types.UNSET)) == 0
    assert ResultCache.ttl_ms(result(-1)) == 0
    assert ResultCache.ttl_ms(result(5)) == 5
    assert ResultCache.ttl_ms(result(2**53)) == MAX_TTL_MS
    clock = FakeClock()
    cache = ResultCache(clock)
    assert not cache.put("tools/call", None, result(60_000))  # not a cacheable method
    cache.put("resources/read", "a", result(60_000))
    # A newer answer that says "don't cache" replaces the older entry.
    assert not cache.put("resources/read", "a", result(0))
    assert cache.get("resources/read", "a") is None
    cache.put("resources/read", "a", result(1000))
    clock.now += 1
    assert cache.get("resources/read", "a") is None
    assert len(cache) == 0  # a stale entry is dropped when found
    assert cache.invalidate_for("notifications/resources/updated") == 0
    assert cache.invalidate_for("notifications/message") == 0
