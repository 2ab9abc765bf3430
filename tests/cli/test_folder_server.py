"""The folder server in process: pagination, limits, tools, the prompt, WebSocket, watching.

Each test serves a fresh folder with `serve_folder` (or `build_folder_server` and
`watch_folder`) on a free loopback port, and talks to it with our client.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import trio

from mcpcore import jsonrpc, types
from mcpcore.client import McpError
from mcpcore_cli.folder import (
    Folder,
    FolderTransport,
    build_folder_server,
    serve_folder,
    watch_folder,
    watchers,
)
from mcpcore_cli.folder.tools import GREP_BATCH_FILES, MAX_RESULTS
from tests.cli.folder_tree import BINARY, NOTIFY_WITHIN, TEXT, Recorder, make_tree
from tests.transports.trio_helpers import trio_test
from transports import Client, open_http_client, open_websocket_client, serve_http

LEGACY_AND_MODERN = [pytest.param("legacy", id="legacy"), pytest.param("modern", id="modern")]


@asynccontextmanager
async def serving(
    root: Path,
    mode: str = "modern",
    *,
    recorder: Recorder | None = None,
    transport: FolderTransport = "http",
    **options: Any,
) -> AsyncIterator[tuple[Client, Folder]]:
    """``root`` served (over ``transport``), and our client connected in ``mode``."""
    folder = Folder(root, **options)
    async with trio.open_nursery() as nursery:
        url = await nursery.start(partial(serve_folder, folder, transport=transport, port=0))
        opener: Any = open_websocket_client if transport == "ws" else open_http_client
        async with opener(url, mode=mode, timeout=10, on_notification=recorder) as client:
            yield client, folder
        nursery.cancel_scope.cancel()


def structured(result: types.CallToolResult) -> dict[str, Any]:
    """A tool result's structuredContent (an object, for these tools)."""
    content = result.structured_content
    assert isinstance(content, dict), result
    return content


def error_of(raised: pytest.ExceptionInfo[McpError]) -> tuple[int, str, Any]:
    return raised.value.code, raised.value.message, raised.value.data


# -- the listing -------------------------------------------------------------------


@pytest.mark.parametrize("mode", LEGACY_AND_MODERN)
@trio_test
async def test_the_listing_is_paginated_in_a_stable_order(tmp_path: Path, mode: str) -> None:
    folder = Folder(make_tree(tmp_path))
    server = build_folder_server(folder, page_size=2)
    async with trio.open_nursery() as nursery:
        await nursery.start(watch_folder, folder, server)
        port = await nursery.start(partial(serve_http, server, port=0))
        url = f"http://127.0.0.1:{port}/mcp"
        async with open_http_client(url, mode=mode) as client:  # type: ignore[arg-type]
            pages: list[list[str]] = []
            cursor = None
            while True:
                page = await client.list_resources(cursor)
                pages.append([resource.name for resource in page.resources])
                if not isinstance(page.next_cursor, str):
                    break
                cursor = page.next_cursor
            assert pages == [
                ["data/pixel.png", "notes-link.md"],
                ["notes.md", "src/app.py"],
                ["src/util/helpers.py"],
            ]
        nursery.cancel_scope.cancel()


@trio_test
async def test_the_listing_is_capped_and_what_is_past_it_still_reads(tmp_path: Path) -> None:
    async with serving(make_tree(tmp_path), max_listed_files=2) as (client, folder):
        names = [resource.name async for resource in client.iter_resources()]
        assert names == ["data/pixel.png", "notes-link.md"]
        assert folder.catalog.snapshot.truncated
        read = await client.read_resource(folder.uri_of(("src", "app.py")))
        assert isinstance(read.contents[0], types.TextResourceContents)


@trio_test
async def test_hidden_files_are_served_when_asked_for(tmp_path: Path) -> None:
    async with serving(make_tree(tmp_path), include_hidden=True) as (client, folder):
        names = [resource.name async for resource in client.iter_resources()]
        assert names[:3] == [".env", ".git/config", "data/pixel.png"]
        assert "hidden-link.txt" in names
        read = await client.read_resource(folder.uri + ".env")
        [contents] = read.contents
        assert isinstance(contents, types.TextResourceContents)
        assert contents.text == "TOKEN=secret\n"


@pytest.mark.parametrize("mode", LEGACY_AND_MODERN)
@trio_test
async def test_a_file_over_the_size_limit_is_a_clear_error(tmp_path: Path, mode: str) -> None:
    async with serving(make_tree(tmp_path), mode, max_file_size=10) as (client, folder):
        uri = folder.uri + "notes.md"
        with pytest.raises(McpError) as large:
            await client.read_resource(uri)
        code, message, data = error_of(large)
        assert code == jsonrpc.INVALID_PARAMS
        assert "larger than this server's limit of 10 bytes" in message
        assert "--max-file-size" in message
        assert data == {"uri": uri, "maxFileSize": 10}


# -- the tools ---------------------------------------------------------------------


@trio_test
async def test_the_tools_are_read_only_and_their_results_match_their_schemas(
    tmp_path: Path,
) -> None:
    async with serving(make_tree(tmp_path)) as (client, folder):
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert sorted(tools) == ["grep", "search_files"]
        for tool in tools.values():
            assert isinstance(tool.annotations, types.ToolAnnotations)
            assert tool.annotations.read_only_hint is True
            assert tool.annotations.destructive_hint is False
        found = await client.call_tool("search_files", {"pattern": "*.md"})
        jsonschema.validate(structured(found), tools["search_files"].output_schema)
        assert structured(found) == {
            "files": [
                {"path": "notes-link.md", "uri": folder.uri + "notes-link.md", "size": len(TEXT)},
                {"path": "notes.md", "uri": folder.uri + "notes.md", "size": len(TEXT)},
            ],
            "truncated": False,
        }
        grepped = await client.call_tool("grep", {"pattern": "SECOND", "ignore_case": True})
        jsonschema.validate(structured(grepped), tools["grep"].output_schema)
        assert structured(grepped) == {
            "matches": [
                {
                    "path": path,
                    "uri": folder.uri + path,
                    "line": 3,
                    "text": "Some text, and a second line.",
                }
                for path in ("notes-link.md", "notes.md")
            ],
            "filesSearched": 4,
            "filesSkipped": 1,
            "truncated": False,
            "timedOut": False,
        }


@trio_test
async def test_search_files_stops_at_its_limit(tmp_path: Path) -> None:
    async with serving(make_tree(tmp_path)) as (client, _):
        found = await client.call_tool("search_files", {"pattern": "*", "limit": 2})
        assert [file["path"] for file in structured(found)["files"]] == [
            "data/pixel.png",
            "notes-link.md",
        ]
        assert structured(found)["truncated"] is True


@pytest.mark.parametrize(
    ("tool", "arguments", "problem"),
    [
        ("search_files", {"pattern": ""}, "Invalid arguments"),
        ("search_files", {"pattern": "*", "limit": MAX_RESULTS + 1}, "Invalid arguments"),
        ("grep", {"pattern": "(a)\\1"}, "invalid regular expression"),
        ("grep", {"pattern": "x", "timeout_seconds": 0}, "Invalid arguments"),
        ("grep", {"pattern": "x", "include": "x" * 1001}, "Invalid arguments"),
        ("grep", {"pattern": "x" * 1001}, "Invalid arguments"),
    ],
)
@trio_test
async def test_bad_tool_arguments_are_tool_errors(
    tmp_path: Path, tool: str, arguments: dict[str, Any], problem: str
) -> None:
    async with serving(make_tree(tmp_path)) as (client, _):
        result = await client.call_tool(tool, arguments)
        assert result.is_error is True
        [block] = result.content
        assert isinstance(block, types.TextContent)
        assert problem in block.text


@trio_test
async def test_grep_reports_progress_batch_by_batch_and_honours_include(tmp_path: Path) -> None:
    root = make_tree(tmp_path)
    (root / "many").mkdir()
    count = 2 * GREP_BATCH_FILES + 10
    for index in range(count):
        (root / "many" / f"{index:03}.log").write_text(f"entry {index}\n")
    seen: list[tuple[float, float | None]] = []
    async with serving(root) as (client, _):
        result = await client.call_tool(
            "grep",
            {"pattern": r"entry \d+5$", "include": "many/*.log", "limit": 1000},
            progress=lambda value, total, message: seen.append((value, total)),
        )
        matches = structured(result)["matches"]
        assert [match["text"] for match in matches] == [
            f"entry {index}" for index in range(count) if index % 10 == 5 and index >= 10
        ]
        assert structured(result)["filesSearched"] == count
    values = [value for value, _ in seen]
    assert values == sorted(set(values))  # increasing
    assert len(values) >= 2
    assert values[-1] == count
    assert {total for _, total in seen} == {count}


@trio_test
async def test_grep_stops_at_its_limit_and_its_time_budget(tmp_path: Path) -> None:
    root = make_tree(tmp_path)
    async with serving(root) as (client, _):
        limited = await client.call_tool("grep", {"pattern": "e", "limit": 1})
        assert len(structured(limited)["matches"]) == 1
        assert structured(limited)["truncated"] is True
        hurried = await client.call_tool("grep", {"pattern": "e", "timeout_seconds": 1e-9})
        assert structured(hurried)["timedOut"] is True
        assert structured(hurried)["matches"] == []


# -- the prompt --------------------------------------------------------------------


@trio_test
async def test_the_prompt_embeds_the_file_and_completes_its_path(tmp_path: Path) -> None:
    async with serving(make_tree(tmp_path)) as (client, folder):
        [prompt] = (await client.list_prompts()).prompts
        assert prompt.name == "summarize_file"
        result = await client.get_prompt("summarize_file", {"path": "data/pixel.png"})
        embedded, request = result.messages
        assert isinstance(embedded.content, types.EmbeddedResource)
        resource = embedded.content.resource
        assert isinstance(resource, types.BlobResourceContents)
        assert resource.uri == folder.uri + "data/pixel.png"
        assert base64.b64decode(resource.blob) == BINARY
        assert isinstance(request.content, types.TextContent)
        by_uri = await client.get_prompt("summarize_file", {"path": folder.uri + "notes.md"})
        assert isinstance(by_uri.messages[0].content, types.EmbeddedResource)
        completed = await client.complete(
            types.PromptReference(name="summarize_file"), "path", "src/u"
        )
        assert completed.completion.values == ["src/util/"]


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("../outside/outside.txt", "'.' or '..'"),
        ("/etc/passwd", "relative"),
        ("escape.txt", "refused"),
        (".env", "No such file"),
        ("missing.md", "No such file"),
        ("file:///etc/passwd", "outside the served folder"),
    ],
)
@trio_test
async def test_the_prompt_refuses_what_a_read_refuses(
    tmp_path: Path, path: str, message: str
) -> None:
    async with serving(make_tree(tmp_path)) as (client, _):
        with pytest.raises(McpError) as refused:
            await client.get_prompt("summarize_file", {"path": path})
        code, text, data = error_of(refused)
        assert (code, data) == (jsonrpc.INVALID_PARAMS, {"path": path})
        assert message in text
        assert str(tmp_path) not in text


# -- WebSocket ---------------------------------------------------------------------


@pytest.mark.parametrize("mode", LEGACY_AND_MODERN)
@trio_test
async def test_the_folder_is_served_over_websocket(tmp_path: Path, mode: str) -> None:
    root = make_tree(tmp_path)
    recorder = Recorder()
    async with serving(root, mode, recorder=recorder, transport="ws") as (client, folder):
        notes = folder.uri + "notes.md"
        read = await client.read_resource(notes)
        [contents] = read.contents
        assert isinstance(contents, types.TextResourceContents)
        assert contents.text == TEXT
        if mode == "legacy":
            await client.subscribe(notes)
            (root / "notes.md").write_text("changed\n")
            await recorder.wait_for("notifications/resources/updated", notes)
        else:
            wanted = types.SubscriptionFilter(resource_subscriptions=[notes])
            async with client.listen(wanted) as stream:
                (root / "notes.md").write_text("changed\n")
                with trio.fail_after(NOTIFY_WITHIN):
                    notification = await stream.__anext__()
                assert notification.params.uri == notes


# -- watching ----------------------------------------------------------------------


@trio_test
async def test_a_subscription_to_the_folder_hears_of_every_visible_file(tmp_path: Path) -> None:
    root = make_tree(tmp_path)
    recorder = Recorder()
    async with serving(root, "legacy", recorder=recorder) as (client, folder):
        await client.subscribe(folder.uri)  # a folder URI covers what lies under it
        (root / ".env").write_text("TOKEN=changed\n")
        (root / ".git" / "config").write_text("[changed]\n")
        (root / "src" / "app.py").write_text("changed\n")
        updated = await recorder.wait_for("notifications/resources/updated")
        assert updated.params.uri == folder.uri + "src/app.py"
        (root / "src" / "app.py").unlink()
        await recorder.wait_for("notifications/resources/list_changed")
    uris = [getattr(event.params, "uri", "") for event in recorder.received]
    assert all("/." not in uri for uri in uris)


@trio_test
async def test_a_modified_file_is_described_anew_without_a_list_change(tmp_path: Path) -> None:
    root = make_tree(tmp_path)
    recorder = Recorder()
    async with serving(root, "legacy", recorder=recorder) as (client, folder):
        notes = folder.uri + "notes.md"
        await client.subscribe(notes)
        (root / "notes.md").write_text("x" * 1234)
        await recorder.wait_for("notifications/resources/updated", notes)
        # A list_changed would have come first, on the same stream.
        assert [event.method for event in recorder.received] == ["notifications/resources/updated"]
        listed = {resource.name: resource async for resource in client.iter_resources(fresh=True)}
        assert listed["notes.md"].size == 1234


@trio_test
async def test_a_burst_of_changes_is_announced_in_a_few_batches(tmp_path: Path) -> None:
    root = make_tree(tmp_path)
    recorder = Recorder()
    async with serving(root, "legacy", recorder=recorder) as (client, _):
        (root / "burst").mkdir()
        for index in range(50):
            (root / "burst" / f"{index}.txt").write_text("x")
        await recorder.wait_for("notifications/resources/list_changed")
        names = [resource.name async for resource in client.iter_resources(fresh=True)]
        with trio.move_on_after(0.5):  # whatever else the burst brings
            while len(names) < 55:
                await recorder.wait_for("notifications/resources/list_changed")
                recorder.clear()
                names = [resource.name async for resource in client.iter_resources(fresh=True)]
    assert sum(name.startswith("burst/") for name in names) == 50
    batches = [e for e in recorder.received if e.method == "notifications/resources/list_changed"]
    assert len(batches) < 10


@trio_test
async def test_a_folder_that_can_not_be_watched_is_still_served(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def refuse(*paths: str, **options: Any) -> Any:
        raise OSError("inotify watch limit reached")

    monkeypatch.setattr(watchers, "awatch", refuse)
    with caplog.at_level(logging.WARNING, logger="mcpcore.serve"):
        async with serving(make_tree(tmp_path)) as (client, folder):
            read = await client.read_resource(folder.uri + "notes.md")
            assert isinstance(read.contents[0], types.TextResourceContents)
    assert "not watching" in caplog.text
    assert "inotify watch limit reached" in caplog.text


@pytest.mark.parametrize("mode", LEGACY_AND_MODERN)
@trio_test
async def test_a_subscriber_hears_of_changes_made_through_symlinks(
    tmp_path: Path, mode: str
) -> None:
    root = make_tree(tmp_path)
    (root / "up").symlink_to("..")  # the folder's parent, and the folder again below it
    (root / "everything").symlink_to("/")
    (root / "alias").symlink_to("src")
    recorder = Recorder()
    async with serving(root, mode, recorder=recorder) as (client, folder):
        app = folder.uri + "src/app.py"
        ways = [root / "alias" / "app.py", root / "up" / "served" / "src" / "app.py"]
        if mode == "legacy":
            await client.subscribe(app)
            for way in ways:
                recorder.clear()
                way.write_text(f"through {way}\n")
                await recorder.wait_for("notifications/resources/updated", app)
        else:
            wanted = types.SubscriptionFilter(resource_subscriptions=[app])
            async with client.listen(wanted) as stream:
                for way in ways:
                    way.write_text(f"through {way}\n")
                    with trio.fail_after(NOTIFY_WITHIN):
                        notification = await stream.__anext__()
                    assert notification.params.uri == app
        (tmp_path / "outside" / "outside.txt").write_text("changed outside\n")
        (root / "notes.md").write_text("a served change after it\n")
        if mode == "legacy":
            await client.subscribe(folder.uri)
            (root / "notes.md").write_text("again\n")
            await recorder.wait_for("notifications/resources/updated", folder.uri + "notes.md")
    uris = [getattr(event.params, "uri", "") for event in recorder.received]
    assert all(uri.startswith(folder.uri) and "outside" not in uri for uri in uris)
    assert all("/up/" not in uri and "/alias/" not in uri for uri in uris)
