"""A folder that changes while it is read: every failure is a clean refusal.

`read_file` makes a dozen system calls between the URI and the bytes; a hostile folder
can swap a path for a symlink out of the folder, a FIFO, a socket, a folder or nothing
between any two of them, and a failing disk can fail any of them. Whatever happens,
the read returns the file inside the folder or refuses (not found, or refused): never
an OSError (answered -32603 "Internal error", with a traceback in the log), never the
content of a file outside.

The unit tests make the swap, or the error, happen exactly at the n-th system call of
the read, through a stand-in for `os` in `_opening`; the last test swaps for real, in
a thread, while a client reads.
"""

from __future__ import annotations

import errno
import itertools
import logging
import os
import shutil
import socket
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpcore import jsonrpc, types
from mcpcore.client import McpError
from mcpcore_cli.folder import Folder, opening, serve_folder
from mcpcore_cli.folder.opening import (
    MAX_SYMLINK_HOPS,
    AccessRefusedError,
    FileMissingError,
    read_file,
    resolve_root,
)
from mcpcore_cli.folder.walk import TreeWalk
from tests.transports.trio_helpers import trio_test
from transports import open_http_client

INSIDE = b"inside\n"
SECRET = b"secret outside\n"
LIMIT = 1024
#: The system calls of a read that a folder can make fail.
CALLS = ("lstat", "readlink", "open", "stat", "fstat", "read")


class SwappingOs:
    """`os` as `_opening` sees it, with something done just before the n-th call."""

    def __init__(self, at: int, action: Callable[[], None]) -> None:
        self._at = at
        self._action = action
        self.calls = 0

    def __getattr__(self, name: str) -> Any:
        real = getattr(os, name)
        if name not in CALLS:
            return real

        def call(*args: Any, **kwargs: Any) -> Any:
            if self.calls == self._at:
                self._action()
            self.calls += 1
            return real(*args, **kwargs)

        return call


@contextmanager
def os_for_opening(fake: object) -> Iterator[None]:
    """``fake`` as `_opening`'s ``os`` (within a loop or a hypothesis example)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(opening, "os", fake)
        yield


def place(path: Path, state: str, outside: Path) -> None:
    """Put ``state`` at ``path`` (whatever was there goes)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()
    if state == "file":
        path.write_bytes(INSIDE)
    elif state == "link-inside":
        path.symlink_to(path.parent / "real.txt")
    elif state == "link-outside":
        path.symlink_to(outside / "secret.txt")
    elif state == "folder-link-outside":
        path.symlink_to(outside)
    elif state == "dangling":
        path.symlink_to(path.parent / "nothing")
    elif state == "loop":
        path.symlink_to(path.name)
    elif state == "folder":
        path.mkdir()
        (path / "target.txt").write_bytes(INSIDE)
    elif state == "fifo":
        os.mkfifo(path)
    elif state == "socket":
        with socket.socket(socket.AF_UNIX) as bound:
            bound.bind(str(path))


STATES = [
    "file",
    "link-inside",
    "link-outside",
    "folder-link-outside",
    "dangling",
    "loop",
    "folder",
    "fifo",
    "socket",
    "missing",
]


def served_tree(base: Path) -> tuple[Path, Path]:
    root = base / "served"
    outside = base / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_bytes(SECRET)
    (outside / "target.txt").write_bytes(SECRET)
    for folder in (root, root / "sub"):
        (folder / "real.txt").write_bytes(INSIDE)
    return root, outside


def outcome(read: Callable[[], Any]) -> str:
    """What a read came to: its data, or the refusal's name. Anything else fails."""
    try:
        data: bytes = read().data
    except (FileMissingError, AccessRefusedError) as refusal:
        return type(refusal).__name__
    assert INSIDE.startswith(data)  # never a byte from outside (maybe not all written yet)
    return "read"


#: System calls of a read, at most, between which a path is swapped (a read makes ~12).
SWAP_POINTS = 16


@pytest.mark.parametrize("through_folder", [False, True], ids=["file", "folder"])
def test_a_path_swapped_between_any_two_calls_is_read_inside_or_refused(
    tmp_path: Path, through_folder: bool
) -> None:
    # Every pair of states, swapped before every call: 1,600 reads each.
    outcomes: dict[str, int] = {}
    for index, (initial, swapped, at) in enumerate(
        itertools.product(STATES, STATES, range(SWAP_POINTS))
    ):
        root, outside = served_tree(tmp_path / str(index))
        # Either the file itself is swapped, or the folder on its path.
        changing = root / "sub" if through_folder else root / "sub" / "target.txt"
        place(changing, initial, outside)
        fake = SwappingOs(at, partial(place, changing, swapped, outside))
        with os_for_opening(fake):
            result = outcome(partial(read_file, resolve_root(root), ("sub", "target.txt"), LIMIT))
        outcomes[result] = outcomes.get(result, 0) + 1
        shutil.rmtree(tmp_path / str(index))
    assert set(outcomes) == {"read", "FileMissingError", "AccessRefusedError"}


@settings(max_examples=300, deadline=None)
@given(
    code=st.sampled_from(sorted(errno.errorcode)),
    call=st.sampled_from(CALLS),
    nth=st.integers(0, 3),
)
def test_every_os_error_at_every_call_is_a_refusal(code: int, call: str, nth: int) -> None:
    with tempfile.TemporaryDirectory() as base:
        root, _ = served_tree(Path(base))
        (root / "sub" / "link.txt").symlink_to("real.txt")
        seen = dict.fromkeys(CALLS, 0)

        class FailingOs:
            def __getattr__(self, name: str) -> Any:
                real = getattr(os, name)
                if name not in CALLS:
                    return real

                def fail_or_call(*args: Any, **kwargs: Any) -> Any:
                    seen[name] += 1
                    if name == call and seen[name] == nth + 1:
                        raise OSError(code, os.strerror(code))
                    return real(*args, **kwargs)

                return fail_or_call

        with os_for_opening(FailingOs()):
            outcome(partial(read_file, resolve_root(root), ("sub", "link.txt"), LIMIT))


def test_a_chain_of_symlinks_is_refused_past_the_kernel_limit(tmp_path: Path) -> None:
    root = tmp_path / "served"
    root.mkdir()
    (root / "target.txt").write_bytes(INSIDE)
    previous = "target.txt"
    for index in range(1200):  # os.path.realpath recursed once per link: RecursionError
        (root / f"link{index}").symlink_to(previous)
        previous = f"link{index}"
    served = resolve_root(root)
    assert read_file(served, (f"link{MAX_SYMLINK_HOPS - 1}",), LIMIT).data == INSIDE
    with pytest.raises(AccessRefusedError):
        read_file(served, (f"link{MAX_SYMLINK_HOPS}",), LIMIT)
    with pytest.raises(AccessRefusedError):
        read_file(served, ("link1199",), LIMIT)
    names = [file.parts[0] for file in TreeWalk(served).files()]
    assert names == sorted(["target.txt"] + [f"link{i}" for i in range(MAX_SYMLINK_HOPS)])


@pytest.mark.parametrize(
    "code", [errno.EIO, errno.ENXIO, errno.EISDIR, errno.EINVAL, errno.ESTALE, errno.ENODEV]
)
@trio_test
async def test_a_failing_read_reaches_the_client_as_a_refusal(
    tmp_path: Path,
    code: int,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    root, _ = served_tree(tmp_path)

    class FailingReads:
        def __getattr__(self, name: str) -> Any:
            return getattr(os, name)

        def read(self, fd: int, size: int) -> bytes:
            raise OSError(code, os.strerror(code))

    folder = Folder(root)
    monkeypatch.setattr(opening, "os", FailingReads())
    with caplog.at_level(logging.DEBUG, logger="mcpcore.serve"):
        async with trio.open_nursery() as nursery:
            url = await nursery.start(partial(serve_folder, folder, port=0, watch=False))
            async with open_http_client(url) as client:
                uri = folder.uri + "real.txt"
                with pytest.raises(McpError) as refused:
                    await client.read_resource(uri)
            nursery.cancel_scope.cancel()
    assert refused.value.code == jsonrpc.INVALID_PARAMS
    assert refused.value.data == {"uri": uri}
    assert "Internal" not in refused.value.message
    assert not [record for record in caplog.records if record.levelno >= logging.WARNING]
    assert "Traceback" not in caplog.text


async def answer_to_read(client: Any, uri: str) -> str:
    """ "read", or the message of a -32602 refusal carrying the URI: nothing else."""
    try:
        read = await client.read_resource(uri)
    except McpError as error:
        refusal = error
    else:
        [contents] = read.contents
        assert isinstance(contents, types.TextResourceContents)
        # (a file caught between its creation and its write is empty)
        assert INSIDE.startswith(contents.text.encode())
        return "read"
    assert refusal.code == jsonrpc.INVALID_PARAMS, refusal
    assert refusal.data == {"uri": uri}
    return refusal.message


#: Swaps the real-race test makes, and reads it makes at most.
SWAPS = 1500
READS = 1500


@trio_test(timeout=60)
async def test_reads_during_real_swaps_are_answered_or_refused_never_failed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root, outside = served_tree(tmp_path)
    target = root / "sub" / "target.txt"
    place(target, "file", outside)
    done = threading.Event()

    def swap_loop() -> None:
        try:
            for index in range(SWAPS):
                place(target, STATES[index % len(STATES)], outside)
        finally:
            done.set()

    folder = Folder(root)
    uri = folder.uri + "sub/target.txt"
    answers: dict[str, int] = {}
    with caplog.at_level(logging.DEBUG, logger="mcpcore.serve"):
        async with trio.open_nursery() as nursery:
            url = await nursery.start(partial(serve_folder, folder, port=0, watch=False))
            async with open_http_client(url) as client:
                nursery.start_soon(partial(trio.to_thread.run_sync, swap_loop))
                for _ in range(READS):
                    if done.is_set():
                        break
                    answer = await answer_to_read(client, uri)
                    answers[answer] = answers.get(answer, 0) + 1
                    if sum(answers.values()) % 100 == 0:
                        grepped = await client.call_tool("grep", {"pattern": "secret"})
                        assert grepped.is_error is not True
                        assert grepped.structured_content["matches"] == []  # type: ignore[index]
            nursery.cancel_scope.cancel()
    assert answers  # some reads were made while the folder changed
    assert not [record for record in caplog.records if record.levelno >= logging.WARNING]
    assert "Traceback" not in caplog.text
