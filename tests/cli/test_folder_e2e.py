"""``mcpcore serve`` end to end: the installed command, over stdio and HTTP, with our client.

Issue 8's acceptance, our half: in each era, over each transport, a client lists the
folder, reads a text and a binary file, reads through the template, completes a path,
subscribes (``resources/subscribe``, or a 2026-07-28 ``subscriptions/listen`` stream)
and hears about a modified file within 2 s and about an added file
(``list_changed``), and every attempt to leave the folder is refused.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import trio

from mcpcore import NotificationReceived, jsonrpc, types
from mcpcore.client import McpError
from mcpcore.uritemplate import UriTemplate
from mcpcore.versions import Era
from tests.cli.folder_tree import (
    BINARY,
    HIDDEN,
    MCPCORE,
    NOTIFY_WITHIN,
    TEXT,
    Recorder,
    make_tree,
    serve_subprocess,
    traversal_uris,
)
from tests.transports.trio_helpers import trio_test
from transports import Client, Subscription, open_http_client, open_stdio_client

TEMPLATE = "file:///{+path}"
LISTED = ["data/pixel.png", "notes-link.md", "notes.md", "src/app.py", "src/util/helpers.py"]
MODES = [pytest.param("legacy", id="legacy"), pytest.param("modern", id="modern")]


@asynccontextmanager
async def connected(
    transport: str, root: Path, mode: str, recorder: Recorder
) -> AsyncIterator[Client]:
    """Our client, connected to ``mcpcore serve root`` over ``transport`` in ``mode``."""
    if transport == "stdio":
        async with open_stdio_client(
            MCPCORE,
            ["serve", str(root), "--transport", "stdio"],
            mode=mode,  # type: ignore[arg-type]
            on_notification=recorder,
            stderr="capture",
            timeout=10,
        ) as client:
            yield client
        return
    with serve_subprocess(root) as url:
        async with open_http_client(
            url,
            mode=mode,  # type: ignore[arg-type]
            on_notification=recorder,
            timeout=10,
        ) as client:
            yield client


def uri_of(root: Path, relative: str) -> str:
    return UriTemplate(TEMPLATE).expand({"path": str(root / relative).lstrip("/")})


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("mode", MODES)
@trio_test(timeout=30)
async def test_a_client_browses_reads_and_follows_the_folder(
    tmp_path: Path, transport: str, mode: str
) -> None:
    root = make_tree(tmp_path)
    recorder = Recorder()
    async with connected(transport, root, mode, recorder) as client:
        assert client.era is (Era.LEGACY if mode == "legacy" else Era.MODERN)
        capabilities = client.server_capabilities
        assert capabilities is not None
        assert capabilities.resources == types.ServerResourcesCapability(
            subscribe=True, list_changed=True
        )
        await lists_and_reads(client, root)
        await completes_paths(client, root)
        await refuses_escapes(client, root, mode)
        if mode == "legacy":
            await follows_changes_by_subscription(client, root, recorder)
        else:
            await follows_changes_by_listening(client, root)


async def lists_and_reads(client: Client, root: Path) -> None:
    listed = [resource async for resource in client.iter_resources()]
    assert [resource.name for resource in listed] == LISTED
    notes = next(resource for resource in listed if resource.name == "notes.md")
    assert notes.uri == uri_of(root, "notes.md")
    assert (notes.title, notes.mime_type, notes.size) == ("notes.md", "text/markdown", len(TEXT))
    assert isinstance(notes.annotations, types.Annotations)
    assert isinstance(notes.annotations.last_modified, str)
    assert notes.annotations.last_modified.endswith("Z")

    text = await client.read_resource(notes.uri)
    [contents] = text.contents
    assert isinstance(contents, types.TextResourceContents)
    assert (contents.uri, contents.text, contents.mime_type) == (
        notes.uri,
        TEXT,
        "text/markdown",
    )

    binary = await client.read_resource(uri_of(root, "data/pixel.png"))
    [blob] = binary.contents
    assert isinstance(blob, types.BlobResourceContents)
    assert blob.mime_type == "image/png"
    assert base64.b64decode(blob.blob) == BINARY

    templates = (await client.list_resource_templates()).resource_templates
    assert [template.uri_template for template in templates] == [TEMPLATE]
    # A file through the template, by its path: one the listing also has, and the
    # symlink inside the folder, which reads as its target.
    for relative, expected in (("src/util/helpers.py", "def helper"), ("notes-link.md", "# N")):
        read = await client.read_resource(uri_of(root, relative))
        [found] = read.contents
        assert isinstance(found, types.TextResourceContents)
        assert found.text.startswith(expected)


async def completes_paths(client: Client, root: Path) -> None:
    reference = types.ResourceTemplateReference(uri=TEMPLATE)
    own = str(root).lstrip("/") + "/"
    first = await client.complete(reference, "path", own[:3])
    assert first.completion.values == [own]
    inside = await client.complete(reference, "path", own + "s")
    assert inside.completion.values == [own + "src/"]
    deeper = await client.complete(reference, "path", own + "src/")
    assert deeper.completion.values == [own + "src/app.py", own + "src/util/"]


async def refuses_escapes(client: Client, root: Path, mode: str) -> None:
    folder_uri = UriTemplate(TEMPLATE).expand({"path": str(root).lstrip("/") + "/"})
    for uri in traversal_uris(root, folder_uri):
        with pytest.raises(McpError) as refused:
            await client.read_resource(uri)
        assert refused.value.code == jsonrpc.INVALID_PARAMS, uri
        assert refused.value.data == {"uri": uri}
        assert str(root.parent) not in refused.value.message
    not_found = jsonrpc.RESOURCE_NOT_FOUND if mode == "legacy" else jsonrpc.INVALID_PARAMS
    for relative in HIDDEN:
        uri = folder_uri + relative
        with pytest.raises(McpError) as hidden:
            await client.read_resource(uri)
        assert (hidden.value.code, hidden.value.data) == (not_found, {"uri": uri})


async def follows_changes_by_subscription(client: Client, root: Path, recorder: Recorder) -> None:
    notes = uri_of(root, "notes.md")
    await client.subscribe(notes)
    (root / "notes.md").write_text(TEXT + "A new line.\n")
    updated = await recorder.wait_for("notifications/resources/updated", notes)
    assert updated.params.uri == notes
    read = await client.read_resource(notes, fresh=True)
    [contents] = read.contents
    assert isinstance(contents, types.TextResourceContents)
    assert contents.text.endswith("A new line.\n")

    (root / "added.txt").write_text("new\n")
    await recorder.wait_for("notifications/resources/list_changed")
    names = [resource.name async for resource in client.iter_resources(fresh=True)]
    assert "added.txt" in names


async def follows_changes_by_listening(client: Client, root: Path) -> None:
    notes = uri_of(root, "notes.md")
    wanted = types.SubscriptionFilter(resources_list_changed=True, resource_subscriptions=[notes])
    async with client.listen(wanted) as stream:
        assert stream.acknowledged.resource_subscriptions == [notes]
        assert stream.acknowledged.resources_list_changed is True
        (root / "notes.md").write_text(TEXT + "A new line.\n")
        updated = await next_notification(stream, "notifications/resources/updated")
        assert updated.params.uri == notes
        (root / "added.txt").write_text("new\n")
        await next_notification(stream, "notifications/resources/list_changed")
    names = [resource.name async for resource in client.iter_resources(fresh=True)]
    assert "added.txt" in names


async def next_notification(stream: Subscription, method: str) -> NotificationReceived:
    """The next notification of ``method`` on ``stream``, within `NOTIFY_WITHIN`."""
    with trio.fail_after(NOTIFY_WITHIN):
        async for notification in stream:
            if notification.method == method:
                return notification
    raise AssertionError(f"the stream ended before {method}")
