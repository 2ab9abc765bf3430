"""``mcpcore serve`` with the official Python SDK's client (``mcp`` 2.3.0), stdio and HTTP.

Issue 8's acceptance, the SDK's half: its `mcp.Client` launches ``mcpcore serve
--transport stdio`` itself, or connects to ``mcpcore serve``'s URL, in its ``legacy``
mode (``initialize``, 2025-11-25) and its ``auto`` mode (2026-07-28 after a
``server/discover`` probe). It lists the folder, reads text and binary files and a
file through the template, completes a path, gets change notifications
(``resources/subscribe`` and the message handler, or ``listen``), calls both tools
(validating their ``structuredContent`` against the ``outputSchema``, as the SDK
does) and gets the prompt; every escape is refused. The SDK runs on anyio (asyncio).
"""

from __future__ import annotations

import base64
import warnings
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as sdk_types
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.subscriptions import ResourcesListChanged, ResourceUpdated
from mcp.shared.exceptions import MCPDeprecationWarning

from mcpcore.uritemplate import UriTemplate
from tests.cli.folder_tree import (
    BINARY,
    HIDDEN,
    MCPCORE,
    NOTIFY_WITHIN,
    TEXT,
    make_tree,
    serve_subprocess,
    traversal_uris,
)
from tests.transports.anyio_helpers import anyio_runner

#: Seconds any one test may take, server start and shutdown included.
TEST_TIMEOUT = 30.0
#: Per-request read timeout handed to the SDK, so that a lost answer fails fast.
READ_TIMEOUT = 10.0
#: Seconds to wait for the first notification of a fresh connection (the SDK opens the
#: legacy HTTP GET stream, which carries them, in the background after connecting).
WARM_UP = 10.0
TEMPLATE = "file:///{+path}"
MODES = [
    pytest.param("legacy", "2025-11-25", id="legacy"),
    pytest.param("auto", "2026-07-28", id="auto"),
]
INVALID_PARAMS = -32602
RESOURCE_NOT_FOUND = -32002


anyio_test = anyio_runner(TEST_TIMEOUT)


class Heard:
    """The SDK's ``message_handler``: records resource notifications, and waits for one."""

    def __init__(self) -> None:
        self.updated: list[str] = []
        self.list_changed = 0
        self._event = anyio.Event()

    async def __call__(self, message: Any) -> None:
        if isinstance(message, sdk_types.ResourceUpdatedNotification):
            self.updated.append(str(message.params.uri))
        elif isinstance(message, sdk_types.ResourceListChangedNotification):
            self.list_changed += 1
        self._event.set()
        self._event = anyio.Event()

    async def wait(self, done: Callable[[], bool], within: float = NOTIFY_WITHIN) -> None:
        with anyio.fail_after(within):
            while not done():
                await self._event.wait()


@asynccontextmanager
async def sdk_client(transport: str, root: Path, mode: str, heard: Heard) -> AsyncIterator[Client]:
    if transport == "stdio":
        server = StdioServerParameters(
            command=MCPCORE, args=["serve", str(root), "--transport", "stdio"]
        )
        async with Client(
            server,
            mode=mode,
            read_timeout_seconds=READ_TIMEOUT,
            message_handler=heard,
        ) as client:
            yield client
        return
    with serve_subprocess(root) as url:
        async with Client(
            url,
            mode=mode,
            read_timeout_seconds=READ_TIMEOUT,
            message_handler=heard,
        ) as client:
            yield client


def uri_of(root: Path, relative: str) -> str:
    return UriTemplate(TEMPLATE).expand({"path": str(root / relative).lstrip("/")})


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize(("mode", "version"), MODES)
@anyio_test
async def test_the_sdk_client_uses_the_folder(
    tmp_path: Path, transport: str, mode: str, version: str
) -> None:
    root = make_tree(tmp_path)
    heard = Heard()
    async with sdk_client(transport, root, mode, heard) as client:
        assert client.protocol_version == version
        assert client.server_info is not None
        assert client.server_info.name == "mcpcore-serve"
        await lists_and_reads(client, root)
        await completes_and_searches(client, root)
        await refuses_escapes(client, root, mode)
        if mode == "legacy":
            await follows_changes_by_subscription(client, root, heard)
        else:
            await follows_changes_by_listening(client, root)


async def lists_and_reads(client: Client, root: Path) -> None:
    listing = await client.list_resources()
    assert listing.next_cursor is None
    by_name = {resource.name: resource for resource in listing.resources}
    assert sorted(by_name) == [
        "data/pixel.png",
        "notes-link.md",
        "notes.md",
        "src/app.py",
        "src/util/helpers.py",
    ]
    notes = by_name["notes.md"]
    assert str(notes.uri) == uri_of(root, "notes.md")
    assert (notes.mime_type, notes.size, notes.title) == ("text/markdown", len(TEXT), "notes.md")
    assert notes.annotations is not None
    assert notes.annotations.last_modified is not None

    text = await client.read_resource(uri_of(root, "notes.md"))
    [contents] = text.contents
    assert isinstance(contents, sdk_types.TextResourceContents)
    assert contents.text == TEXT
    binary = await client.read_resource(uri_of(root, "data/pixel.png"))
    [blob] = binary.contents
    assert isinstance(blob, sdk_types.BlobResourceContents)
    assert base64.b64decode(blob.blob) == BINARY

    templates = (await client.list_resource_templates()).resource_templates
    assert [template.uri_template for template in templates] == [TEMPLATE]
    templated = await client.read_resource(uri_of(root, "src/util/helpers.py"))
    [helpers] = templated.contents
    assert isinstance(helpers, sdk_types.TextResourceContents)
    assert helpers.text.startswith("def helper")


async def completes_and_searches(client: Client, root: Path) -> None:
    own = str(root).lstrip("/") + "/"
    reference = sdk_types.ResourceTemplateReference(type="ref/resource", uri=TEMPLATE)
    completed = await client.complete(reference, {"name": "path", "value": own + "src/"})
    assert completed.completion.values == [own + "src/app.py", own + "src/util/"]

    found = await client.call_tool("search_files", {"pattern": "*.py"})
    assert not found.is_error
    assert found.structured_content is not None
    assert [file["path"] for file in found.structured_content["files"]] == [
        "src/app.py",
        "src/util/helpers.py",
    ]
    grepped = await client.call_tool("grep", {"pattern": r"return \d+"})
    assert grepped.structured_content is not None
    [line] = grepped.structured_content["matches"]
    assert (line["path"], line["line"], line["text"]) == ("src/util/helpers.py", 2, "    return 42")

    prompt = await client.get_prompt("summarize_file", {"path": "notes.md"})
    embedded = prompt.messages[0].content
    assert isinstance(embedded, sdk_types.EmbeddedResource)
    assert isinstance(embedded.resource, sdk_types.TextResourceContents)
    assert embedded.resource.text == TEXT


async def refuses_escapes(client: Client, root: Path, mode: str) -> None:
    folder_uri = UriTemplate(TEMPLATE).expand({"path": str(root).lstrip("/") + "/"})
    for uri in traversal_uris(root, folder_uri):
        with pytest.raises(MCPError) as refused:
            await client.read_resource(uri)
        assert refused.value.code == INVALID_PARAMS, uri
        assert refused.value.data == {"uri": uri}
    not_found = RESOURCE_NOT_FOUND if mode == "legacy" else INVALID_PARAMS
    for relative in HIDDEN:
        with pytest.raises(MCPError) as hidden:
            await client.read_resource(folder_uri + relative)
        assert hidden.value.code == not_found


async def follows_changes_by_subscription(client: Client, root: Path, heard: Heard) -> None:
    notes = uri_of(root, "notes.md")
    # The SDK warns that 2026-07-28 removed resources/subscribe; this is 2025-11-25.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        await client.subscribe_resource(notes)
    # The legacy HTTP GET stream, which carries notifications, opens in the background:
    # touch the file until one gets through, then time a real change.
    with anyio.fail_after(WARM_UP):
        while notes not in heard.updated:
            (root / "notes.md").write_text(TEXT)
            with anyio.move_on_after(0.5):
                await heard.wait(lambda: notes in heard.updated, within=0.5)
    heard.updated.clear()
    (root / "notes.md").write_text(TEXT + "A new line.\n")
    await heard.wait(lambda: notes in heard.updated)

    before = heard.list_changed
    (root / "added.txt").write_text("new\n")
    await heard.wait(lambda: heard.list_changed > before)
    names = [resource.name for resource in (await client.list_resources()).resources]
    assert "added.txt" in names


async def follows_changes_by_listening(client: Client, root: Path) -> None:
    notes = uri_of(root, "notes.md")
    async with client.listen(resources_list_changed=True, resource_subscriptions=[notes]) as stream:
        (root / "notes.md").write_text(TEXT + "A new line.\n")
        with anyio.fail_after(NOTIFY_WITHIN):
            event = await stream.__anext__()
        assert event == ResourceUpdated(uri=notes)
        (root / "added.txt").write_text("new\n")
        with anyio.fail_after(NOTIFY_WITHIN):
            while not isinstance(event := await stream.__anext__(), ResourcesListChanged):
                pass
    names = [
        resource.name for resource in (await client.list_resources(cache_mode="refresh")).resources
    ]
    assert "added.txt" in names
