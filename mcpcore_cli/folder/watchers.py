"""Watching a fixed list of folders, each on its own (not recursively), with watchfiles.

``watchfiles`` (the Rust ``notify`` crate: inotify, FSEvents, ReadDirectoryChangesW) can
watch a tree recursively, but its inotify backend then follows every symlink to a folder
that it meets, at start and in each folder created later (``notify``'s default
``follow_symlinks``, which ``watchfiles`` keeps): a symlink to ``/`` or to the folder's
parent in the served folder has it watch trees outside the folder, and report the
served files under paths through the link, since inotify gives one watch to one folder
whatever the path it was reached by. So the folder's watcher hands it the list of real
folders its walk found, each watched on its own, and `watch` replaces the watcher when
that list changes.

`FolderWatcher` runs one `watchfiles.awatch` (which runs on anyio, hence under trio)
over one such list and passes its batches on, through a memory channel. Its `arm`
returns once every folder is watched: the watcher adds every watch before it first
looks at its stop flag (`_StopFlag`, "anything with an ``is_set()`` method" as the
``watchfiles.watch`` documentation puts it), so that first look is the sign. When
replaced, a watcher is *retired* rather than stopped: the changes it gathered since its
last batch may be ones its successor, armed later, never saw, so it delivers one more
batch, or finds it has none after `RETIRE_MS` of quiet, before it ends. A watcher that
fails (``watchfiles`` stops at a name that is not UTF-8) delivers its failure instead.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, Final

import trio
from watchfiles import Change, awatch

__all__ = ["DEBOUNCE_MS", "QUIET_MS", "RETIRE_MS", "Delivered", "FolderWatcher"]

#: The longest a batch of changes is held while the folder keeps changing, in ms:
#: notifications stay well within a second or two of the change.
DEBOUNCE_MS: Final = 400
#: Quiet time that ends a batch, in ms: an editor's save (write, rename, chmod) is one.
QUIET_MS: Final = 50
#: How long a watcher waits for changes before it reports that it had none, in ms: how
#: long a retired watcher with nothing left to deliver lives on, at most.
RETIRE_MS: Final = 1000


@dataclass(frozen=True, slots=True)
class Delivered:
    """What a watcher passes on: one batch of changes, or why it stopped.

    Attributes:
        watcher: The watcher.
        changes: ``(change, path)`` pairs, paths as the watcher was given them.
        failure: Why the watcher stopped, if it failed (then ``changes`` is empty).
    """

    watcher: FolderWatcher
    changes: frozenset[tuple[Change, str]] = field(default_factory=frozenset)
    failure: Exception | None = None


class FolderWatcher:
    """One ``awatch`` over a fixed list of folders, each watched on its own.

    Args:
        paths: The folders (absolute paths).
        send: Where its batches (and its failure) go.
    """

    def __init__(self, paths: Sequence[str], send: trio.MemorySendChannel[Delivered]) -> None:
        self._paths = list(paths)
        self._send = send
        self._armed = trio.Event()
        self._done = trio.Event()
        self._failure: Exception | None = None
        self._retiring = False
        self._flag: _StopFlag | None = None

    @property
    def done(self) -> bool:
        """Whether it has stopped watching."""
        return self._done.is_set()

    async def arm(self, nursery: trio.Nursery) -> None:
        """Start watching in ``nursery``; return once every folder is watched.

        Raises:
            OSError: A folder can't be watched (gone: FileNotFoundError; the system's
                limit on watches reached...).
            RuntimeError: The watcher could not start.
        """
        token = trio.lowlevel.current_trio_token()
        self._flag = _StopFlag(lambda: token.run_sync_soon(self._armed.set))
        nursery.start_soon(self._pump)
        nursery.start_soon(self._stop_when_cancelled)
        await self._armed.wait()
        if self._failure is not None:
            raise self._failure

    def retire(self) -> None:
        """End after one more batch (or after `RETIRE_MS` with none), delivering it."""
        self._retiring = True

    def stop(self) -> None:
        """End within `QUIET_MS`, dropping what it gathered since its last batch."""
        if self._flag is not None:
            self._flag.set()

    async def _pump(self) -> None:
        assert self._flag is not None
        # watchfiles types stop_event as an anyio, asyncio or trio Event; what it does
        # with it is call is_set() (and set() when cancelled), which _StopFlag has.
        flag: Any = self._flag
        try:
            batches = awatch(
                *self._paths,
                watch_filter=None,  # every change: `watch` decides what is served
                debounce=DEBOUNCE_MS,
                step=QUIET_MS,
                stop_event=flag,
                rust_timeout=RETIRE_MS,
                yield_on_timeout=True,
                debug=False,
                force_polling=False,  # native events only, whatever the environment says
                recursive=False,
                ignore_permission_denied=True,  # an unreadable folder is not served anyway
            )
            async with aclosing(batches):
                async for changes in batches:
                    # Asked to retire before this batch came: it covers everything up to
                    # now, so everything the successor (armed before the ask) may miss.
                    ending = self._retiring
                    if changes:
                        await self._send.send(Delivered(self, frozenset(changes)))
                    if ending:
                        break
        except Exception as exc:  # (narrowed just below)
            failure = _sole(exc)
            if not isinstance(failure, (OSError, RuntimeError)):
                raise
            if not self._armed.is_set():
                self._failure = failure  # could not start: `arm` raises it
            else:
                await self._send.send(Delivered(self, failure=failure))
        finally:
            self._armed.set()
            self._done.set()

    async def _stop_when_cancelled(self) -> None:
        # The watcher blocks a worker thread that trio can't interrupt: on cancellation
        # the flag ends that wait within QUIET_MS (as it does once the pump is done).
        try:
            await self._done.wait()
        finally:
            self.stop()


def _sole(exc: Exception) -> Exception:
    """The exception inside groups of one.

    ``awatch``'s anyio task group wraps its watcher's errors in an ExceptionGroup under
    trio.
    """
    inner: object = getattr(exc, "exceptions", None)
    while isinstance(inner, tuple) and len(inner) == 1 and isinstance(inner[0], Exception):
        exc = inner[0]
        inner = getattr(exc, "exceptions", None)
    return exc


class _StopFlag:
    """A stop flag for ``awatch`` that reports the watcher's first look at it.

    The watcher looks at it (``is_set``) from its worker thread every `QUIET_MS`, and
    first only once every watch was added.
    """

    def __init__(self, on_first_look: Callable[[], None]) -> None:
        self._event = threading.Event()
        self._on_first_look: Callable[[], None] | None = on_first_look

    def is_set(self) -> bool:
        callback, self._on_first_look = self._on_first_look, None
        if callback is not None:
            callback()
        return self._event.is_set()

    def set(self) -> None:
        self._event.set()
