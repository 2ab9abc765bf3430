"""What a supervisor hands its workers: the listening sockets, one sealing key, a lifeline.

`mcpcore_cli.workers` starts each worker as the same program with the same arguments,
and with:

* the listening sockets and one end of a ``socketpair`` (the control socket), inherited
  (``pass_fds``: the same descriptor numbers as in the supervisor);
* `WORKER_VARIABLE` naming them (descriptor numbers, nothing secret), as JSON:
  ``{"worker": 2, "control": 7, "listening": [5, 6]}``;
* the sealing key, `transports.SECRET_SIZE` bytes written into the control socket
  before the worker starts. Not in the environment: whatever a tool handler starts
  inherits the environment, and ``/proc/PID/environ`` shows it.

After the key, the control socket carries two things. The worker writes one byte once
it serves (`Inherited.report_ready`), which is when the supervisor counts it as
started. The supervisor never writes again, so the worker reads end of file only when
the supervisor is gone, even killed with SIGKILL (the kernel closes its end): the
worker then stops (`Inherited.stop_with_supervisor`), and no orphan keeps serving.
(Python has no ``prctl(PR_SET_PDEATHSIG)``; one socket instead of two pipes, since it
carries both ways.)

`inherited_listening` is the worker's side, called once, first thing: it takes the
variable out of the environment (so a handler's subprocess sees none of it), reads the
key and makes the descriptors non-inheritable again.
"""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Sequence
from typing import Final

import msgspec
import trio

from transports import SECRET_SIZE

__all__ = ["READY", "WORKER_VARIABLE", "Inherited", "handover_text", "inherited_listening"]

#: The environment variable that makes a process a worker, naming what it inherited.
WORKER_VARIABLE: Final = "MCPCORE_WORKER"
#: What a worker writes into the control socket once it serves.
READY: Final = b"R"


class _Handover(msgspec.Struct, forbid_unknown_fields=True):
    worker: int
    control: int
    listening: list[int]


_decode = msgspec.json.Decoder(_Handover).decode
_encode = msgspec.json.Encoder().encode


def handover_text(worker: int, control: int, listening: Sequence[int]) -> str:
    """`WORKER_VARIABLE`'s value for worker number ``worker`` (the supervisor's side)."""
    return _encode(_Handover(worker, control, list(listening))).decode()


class Inherited:
    """What this worker process inherited from its supervisor.

    Attributes:
        worker: Its number, from 1.
        sockets: The listening sockets to serve (``serve_http(sockets=...)``).
        key: The sealing key every worker shares (``Server.configure(secret=...)``), so
            that a cursor or a 2026-07-28 ``requestState`` one worker issued is good at
            any other.
    """

    def __init__(
        self, worker: int, sockets: tuple[socket.socket, ...], key: bytes, control: socket.socket
    ) -> None:
        self.worker = worker
        self.sockets = sockets
        self.key = key
        self._socket = control
        self._control = trio.SocketStream(trio.socket.from_stdlib_socket(control))

    async def report_ready(self) -> None:
        """Tell the supervisor this worker serves (once its server accepts connections)."""
        with contextlib.suppress(trio.BrokenResourceError):  # (gone: stop_with_supervisor stops)
            await self._control.send_all(READY)

    async def stop_with_supervisor(self, scope: trio.CancelScope) -> None:
        """Cancel ``scope`` when the supervisor is gone (its end of the control socket closed).

        Run it in the serving nursery, with ``scope`` that nursery's: a worker whose
        supervisor was killed stops serving instead of living on unsupervised.
        """
        while await self._control.receive_some():
            pass  # (the supervisor writes nothing after the key: only its end matters)
        scope.cancel()

    def close(self) -> None:
        """Close the control socket and the listening sockets (those a server has not)."""
        for each in (self._socket, *self.sockets):
            each.close()


def inherited_listening() -> Inherited | None:
    """What a supervisor handed this process, or None when it is no worker.

    Call it once, before serving: it removes `WORKER_VARIABLE` from the environment.

    Raises:
        ValueError: `WORKER_VARIABLE` is malformed.
        OSError: A descriptor it names is not an open socket, or the key did not come.
    """
    text = os.environ.pop(WORKER_VARIABLE, None)
    if text is None:
        return None
    try:
        handover = _decode(text)
    except msgspec.DecodeError as exc:  # (bad JSON, or a field missing or mistyped)
        raise ValueError(f"${WORKER_VARIABLE} is malformed: {exc}") from None
    control = socket.socket(fileno=handover.control)
    sockets = tuple(socket.socket(fileno=number) for number in handover.listening)
    for each in (control, *sockets):
        each.set_inheritable(False)  # (pass_fds made them inheritable: ours alone now)
    key = control.recv(SECRET_SIZE, socket.MSG_WAITALL)
    if len(key) != SECRET_SIZE:
        raise ConnectionError("the supervisor closed the control socket before the key")
    return Inherited(handover.worker, sockets, key, control)
