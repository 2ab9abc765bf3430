"""Following cursors (CHECKLIST §10.4): "" is a cursor, a missing nextCursor is the end."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Iterator
from typing import Any

import pytest

from mcpcore import RequestReceived, jsonrpc, types
from mcpcore.client import MAX_PAGES, McpError, PaginationError
from mcpcore.client import _session as session_module
from mcpcore.client._pagination import CursorTrail
from tests.core.client_harness import (
    ErrorReply,
    FakeClock,
    every_message_checked,
    make_session,
    scripted,
)


@pytest.fixture(autouse=True)
def _schema_checked() -> Iterator[None]:
    yield from every_message_checked()


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


async def collect(iterator: Any) -> list[Any]:
    return [item async for item in iterator]


def tool(name: str) -> types.Tool:
    return types.Tool(name=name, input_schema={"type": "object"})


# cursor sent → (names on the page, nextCursor)
PAGES: dict[Any, tuple[list[str], Any]] = {
    types.UNSET: (["a", "b"], ""),  # "" is a cursor, not the end
    "": (["c"], "opaque/+=="),
    "opaque/+==": (["d"], types.UNSET),
}


def paged(event: RequestReceived) -> types.ListToolsResult:
    names, next_cursor = PAGES[event.params.cursor]
    return types.ListToolsResult(tools=[tool(n) for n in names], next_cursor=next_cursor)


@pytest.mark.parametrize("mode", ["legacy", "modern"])
def test_iter_tools_follows_every_cursor_including_the_empty_one(mode: str) -> None:
    session, requester = make_session(scripted({"tools/list": paged}))
    run(session.connect(mode))  # type: ignore[arg-type]
    names = [t.name for t in run(collect(session.iter_tools()))]
    assert names == ["a", "b", "c", "d"]
    cursors = [r["params"].get("cursor") for r in requester.requests if r["method"] == "tools/list"]
    assert cursors == [None, "", "opaque/+=="]


def test_one_page_at_a_time() -> None:
    session, requester = make_session(scripted({"tools/list": paged}))
    run(session.connect())
    first = run(session.list_tools())
    assert first.next_cursor == ""
    second = run(session.list_tools(first.next_cursor))
    assert [t.name for t in second.tools] == ["c"]
    assert requester.requests[-1]["params"]["cursor"] == ""


def test_every_list_has_its_iterator() -> None:
    def resources(event: RequestReceived) -> Any:
        return types.ListResourcesResult(resources=[types.Resource(uri="file:///r", name="r")])

    def templates(event: RequestReceived) -> Any:
        return types.ListResourceTemplatesResult(
            resource_templates=[types.ResourceTemplate(uri_template="file:///{x}", name="t")]
        )

    def prompts(event: RequestReceived) -> Any:
        return types.ListPromptsResult(prompts=[types.Prompt(name="p")])

    session, _ = make_session(
        scripted(
            {
                "resources/list": resources,
                "resources/templates/list": templates,
                "prompts/list": prompts,
            }
        )
    )
    run(session.connect())
    assert [r.uri for r in run(collect(session.iter_resources()))] == ["file:///r"]
    assert [t.name for t in run(collect(session.iter_resource_templates()))] == ["t"]
    assert [p.name for p in run(collect(session.iter_prompts()))] == ["p"]
    assert len(run(session.list_resources()).resources) == 1
    assert len(run(session.list_resource_templates()).resource_templates) == 1
    assert len(run(session.list_prompts()).prompts) == 1
    with pytest.raises(ValueError, match="paginated"):
        run(collect(session.iter_pages("tools/call")))


def test_a_repeated_cursor_stops_the_walk() -> None:
    def loop(event: RequestReceived) -> Any:
        return types.ListToolsResult(tools=[tool("x")], next_cursor="same")

    session, requester = make_session(scripted({"tools/list": loop}))
    run(session.connect())
    with pytest.raises(PaginationError, match="repeated"):
        run(collect(session.iter_tools()))
    assert requester.methods.count("tools/list") == 2


def test_a_walk_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    counter = iter(range(10_000))

    def endless(event: RequestReceived) -> Any:
        return types.ListToolsResult(tools=[], next_cursor=f"c{next(counter)}")

    monkeypatch.setattr(session_module, "CursorTrail", functools.partial(CursorTrail, max_pages=5))
    session, requester = make_session(scripted({"tools/list": endless}))
    run(session.connect())
    with pytest.raises(PaginationError, match="more than 5 pages"):
        run(collect(session.iter_tools()))
    assert requester.methods.count("tools/list") == 5


def test_the_cursor_trail() -> None:
    trail = CursorTrail("tools/list", max_pages=3)
    assert trail.follow("") == ""
    assert trail.follow("b") == "b"
    with pytest.raises(PaginationError):
        trail.follow("c")  # a fourth page would pass the bound
    trail = CursorTrail("tools/list")
    assert trail.max_pages == MAX_PAGES
    assert trail.follow(types.UNSET) is None
    trail = CursorTrail("tools/list")
    trail.follow("")
    with pytest.raises(PaginationError):
        trail.follow("")


def test_an_invalid_cursor_drops_the_cached_pages() -> None:
    calls = {"n": 0}

    def flaky(event: RequestReceived) -> Any:
        calls["n"] += 1
        if event.params.cursor == "gone":
            return ErrorReply(jsonrpc.INVALID_PARAMS, "Invalid cursor")
        return types.ListToolsResult(tools=[tool("a")], next_cursor="gone", ttl_ms=60_000)

    clock = FakeClock()
    session, _ = make_session(scripted({"tools/list": flaky}), clock=clock)
    run(session.connect())
    with pytest.raises(McpError) as caught:
        run(collect(session.iter_tools()))
    assert caught.value.code == jsonrpc.INVALID_PARAMS
    # "(C) SHOULD discard its cached pages and restart": the first page is asked again.
    assert session.cache is not None
    assert len(session.cache) == 1
    run(session.list_tools())
    assert calls["n"] == 3
