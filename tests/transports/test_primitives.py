"""`transports._runtime.primitives`' exception tuples, with and without trio loaded.

An ``except primitives.GONE`` must catch what either library raises; trio's classes
join the tuples once trio is imported, and never before (an asyncio application does
not load trio: `tests.transports.test_asgi_app` checks that end to end).
"""

from __future__ import annotations

import subprocess
import sys

import anyio
import pytest
import trio

from transports._runtime import primitives

NAMES = ["WOULD_BLOCK", "CLOSED", "BROKEN", "GONE", "END_OF_CHANNEL"]


def test_with_trio_loaded_each_tuple_holds_both_libraries_classes() -> None:
    assert (anyio.WouldBlock, trio.WouldBlock) == primitives.WOULD_BLOCK
    assert (anyio.ClosedResourceError, trio.ClosedResourceError) == primitives.CLOSED
    assert (anyio.BrokenResourceError, trio.BrokenResourceError) == primitives.BROKEN
    assert set(primitives.GONE) == {*primitives.CLOSED, *primitives.BROKEN}
    assert (anyio.EndOfStream, trio.EndOfChannel) == primitives.END_OF_CHANNEL


def test_a_trio_channel_s_errors_are_caught() -> None:
    async def main() -> None:
        channel: tuple[primitives.AnySendChannel[int], primitives.AnyReceiveChannel[int]]
        channel = primitives.open_channel(0)
        send, receive = channel
        with pytest.raises(primitives.WOULD_BLOCK):
            send.send_nowait(1)
        send.close()
        with pytest.raises(primitives.END_OF_CHANNEL):
            receive.receive_nowait()
        with pytest.raises(primitives.GONE):
            send.send_nowait(1)

    trio.run(main)


#: Prints the tuples' class modules before trio is imported, then after.
PROBE = """
import sys
from transports._runtime import primitives
names = sys.argv[1:]
def modules():
    return sorted({c.__module__.split(".")[0] for n in names for c in getattr(primitives, n)})
print(*modules(), "trio" in sys.modules)
import trio
print(*modules())
"""


def test_trio_s_classes_join_once_trio_is_imported_and_not_before() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, *NAMES],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    before, after = out.stdout.splitlines()
    assert before == "anyio False"
    assert after == "anyio trio"


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="NOT_A_TUPLE"):
        _ = primitives.NOT_A_TUPLE
