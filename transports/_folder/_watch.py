"""Watching the folder: file-system changes become MCP change notifications.

``watchfiles`` (the Rust ``notify`` crate: inotify, FSEvents, ReadDirectoryChangesW)
reports changes in debounced batches: a batch ends once the folder has been quiet for
`QUIET_MS`, or after `DEBOUNCE_MS` of continuous change. For each batch:

* the listing is scanned again (or, when files were only modified, their sizes and
  times refreshed); if the set of files changed (added, removed, renamed),
  ``notifications/resources/list_changed`` goes to every client that wants it;
* every servable file in the batch (modified, added or removed) gets
  ``notifications/resources/updated`` to the clients subscribed to it, or to a folder
  URI above it: legacy ``resources/subscribe`` and 2026-07-28 ``subscriptions/listen``
  alike, through the server's hub (`Server.resource_updated`). At most
  `MAX_UPDATES_PER_BATCH` files per batch (a ``git checkout`` touches thousands; the
  list_changed that comes with it tells clients to look again).

Hidden files, files outside the folder, and names with no URI are never announced.

The watcher is ``watchfiles``' own Rust watcher, driven the way its ``awatch`` drives it
but from trio directly: it is created in a worker thread (adding a watch to every
folder of a large tree takes a while, and must not block the event loop) *before* the
server reports itself started, so that no change after start-up is missed; and a stop
flag set the moment the task is cancelled ends its blocking wait within `QUIET_MS`.
"""

from __future__ import annotations

import logging
import threading
from typing import Final

import trio
from watchfiles import Change
from watchfiles._rust_notify import RustNotify

from mcpcore.server import Server
from transports._folder._folder import Folder
from transports._folder._uris import is_hidden

__all__ = ["DEBOUNCE_MS", "MAX_UPDATES_PER_BATCH", "QUIET_MS", "WAKE_MS", "watch_folder"]

#: The longest a batch of changes is held while the folder keeps changing, in ms:
#: notifications stay well within a second or two of the change.
DEBOUNCE_MS: Final = 400
#: Quiet time that ends a batch, in ms: an editor's save (write, rename, chmod) is one.
QUIET_MS: Final = 50
#: How long one wait for changes blocks its worker thread before looking again, in ms
#: (only matters if the stop flag is somehow missed).
WAKE_MS: Final = 5000
#: Files announced per batch, at most (each is one pass over the subscribers).
MAX_UPDATES_PER_BATCH: Final = 1000
#: Polling interval, in ms, were the watcher to poll: it never does here (native events),
#: but the Rust watcher takes one. watchfiles' own default.
POLL_DELAY_MS: Final = 300

_log = logging.getLogger("mcpcore.serve")


async def watch_folder(
    folder: Folder,
    server: Server,
    *,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Watch ``folder`` and tell ``server``'s clients what changed, until cancelled.

    Started (for ``nursery.start``) once changes are being recorded. If the system
    refuses to watch the folder (too many folders for inotify, say), the reason is
    logged, the folder is served without notifications, and this returns at once.
    """
    stop = threading.Event()
    try:
        notify = await trio.to_thread.run_sync(_watcher, folder.path)
    except (OSError, RuntimeError) as exc:
        _log.warning("not watching %s for changes: %s", folder.path, exc)
        task_status.started()
        return
    try:
        task_status.started()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_stop_when_cancelled, stop)
            while True:
                changes = await trio.to_thread.run_sync(
                    notify.watch, DEBOUNCE_MS, QUIET_MS, WAKE_MS, stop
                )
                if changes == "stop":
                    break
                if isinstance(changes, set) and changes:
                    await _announce(folder, server, changes)
            nursery.cancel_scope.cancel()
    finally:
        stop.set()
        notify.close()


def _watcher(path: str) -> RustNotify:
    # (paths, debug, force_polling, poll_delay_ms, recursive, ignore_permission_denied):
    # native events (inotify...), the whole tree, unreadable folders skipped.
    return RustNotify([path], False, False, POLL_DELAY_MS, True, True)


async def _stop_when_cancelled(stop: threading.Event) -> None:
    try:
        await trio.sleep_forever()
    finally:
        stop.set()  # the blocked wait returns "stop" within QUIET_MS


async def _announce(folder: Folder, server: Server, changes: set[tuple[int, str]]) -> None:
    """Notify the clients about one batch of changes, ``(kind, path)`` pairs."""
    served: dict[tuple[str, ...], bool] = {}  # segments: whether only modified
    for kind, path in changes:
        parts = _served_parts(folder, path)
        if parts is not None:
            served[parts] = served.get(parts, True) and Change(kind) is Change.modified
    if not served:
        return  # only hidden files changed (a .git folder at work): nothing to say
    if all(served.values()):
        listing_changed = await folder.refresh(list(served))
    else:
        listing_changed = await folder.rescan()
    if listing_changed:
        await server.resources_changed()
    changed = sorted(folder.uri_of(parts) for parts in served)
    if len(changed) > MAX_UPDATES_PER_BATCH:
        _log.info(
            "%d files changed at once: announcing the first %d", len(changed), MAX_UPDATES_PER_BATCH
        )
    for uri in changed[:MAX_UPDATES_PER_BATCH]:
        await server.resource_updated(uri)


def _served_parts(folder: Folder, path: str) -> tuple[str, ...] | None:
    """The segments of a changed path inside the folder, if it is one the folder serves."""
    inside = folder.root.inside(path)
    if inside is None or (not folder.include_hidden and is_hidden(inside)):
        return None
    try:
        "/".join(inside).encode("utf-8")
    except UnicodeEncodeError:
        return None
    return inside
