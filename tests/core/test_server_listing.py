"""`ResourceRegistry.add_listing`: resources known only at run time, listed and paginated
after the static ones, read through a template, in both eras."""

from __future__ import annotations

import pytest

from mcpcore import types
from mcpcore.server import Server
from tests.core.memory_link import MemoryLink
from tests.core.test_server_tools import asynchronous

KEY = b"l" * 32


@pytest.fixture(params=["legacy", "modern"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def rows_server(rows: list[str]) -> Server:
    """A server listing ``rows://<name>`` for each of ``rows``, as they are at each call."""
    server = Server("rows", "1.0", secret=KEY, clock=lambda: 0.0, page_size=2)

    @server.resource("rows://about", mime_type="text/plain")
    def about() -> str:
        return "a table"

    server.resources.add_listing(
        lambda: [types.Resource(uri=f"rows://{name}", name=name) for name in rows]
    )

    @server.resource_template("rows://{name}", mime_type="text/plain")
    def row(name: str) -> str:
        return f"row {name}"

    return server


@asynchronous
async def test_listed_resources_follow_the_static_ones_page_by_page(mode: str) -> None:
    rows = ["a", "b", "c"]
    link = MemoryLink(rows_server(rows))
    await link.session.connect(mode)  # type: ignore[arg-type]
    first = await link.session.list_resources()
    assert [r.uri for r in first.resources] == ["rows://about", "rows://a"]
    assert isinstance(first.next_cursor, str)
    rest = [r.uri async for r in link.session.iter_resources()]
    assert rest == ["rows://about", "rows://a", "rows://b", "rows://c"]
    read = await link.session.read_resource("rows://b")
    [contents] = read.contents
    assert isinstance(contents, types.TextResourceContents)
    assert contents.text == "row b"


@asynchronous
async def test_the_listing_is_asked_again_on_every_list(mode: str) -> None:
    rows: list[str] = []
    server = rows_server(rows)
    link = MemoryLink(server)
    await link.session.connect(mode)  # type: ignore[arg-type]
    assert [r.uri async for r in link.session.iter_resources()] == ["rows://about"]
    rows.append("new")
    listed = [r.uri async for r in link.session.iter_resources(fresh=True)]
    assert listed == ["rows://about", "rows://new"]


def test_a_listing_alone_makes_the_server_offer_resources() -> None:
    server = Server("rows", "1.0")
    before = server.capabilities.resources
    server.resources.add_listing(list)
    assert before is types.UNSET
    assert server.capabilities.resources == types.ServerResourcesCapability(
        subscribe=True, list_changed=True
    )
