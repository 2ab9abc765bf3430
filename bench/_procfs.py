"""What ``/proc`` (Linux) tells of server processes: CPU time used, connections held.

A `CpuClock` follows some root processes and every descendant of theirs (a supervisor's
workers): `CpuClock.read` is the user plus system time of each, by process id, and
`cpu_seconds_between` the time used between two readings. A process that started in
between counts whole; one that ended in between is lost (its time is its parent's
``cutime`` only once reaped), which the rows' error checks catch: a worker that dies
mid-run fails requests.

`connections_held` counts the established TCP connections each process holds on a port
(``/proc/net/tcp`` and ``tcp6`` give each connection's socket inode, ``/proc/<pid>/fd``
who holds it): how the kernel spread a load generator's connections over the workers
sharing one listening socket.

Descendants are found by each process's parent id (``/proc/<pid>/stat``): this machine's
kernel has no ``/proc/<pid>/task/<tid>/children`` (``CONFIG_PROC_CHILDREN``), and a scan
of ``/proc`` costs ~1 ms, outside any timing.
"""

from __future__ import annotations

import os
import resource
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

__all__ = [
    "CpuClock",
    "available",
    "connections_held",
    "cpu_seconds_between",
    "own_cpu_seconds",
]

_PROC: Final = Path("/proc")
#: Clock ticks per second, the unit of ``utime`` and ``stime``.
_TICKS: Final = os.sysconf("SC_CLK_TCK")
#: Fields of ``/proc/<pid>/stat`` counted after the command's closing parenthesis
#: (``proc(5)`` numbers them from 1 with the pid; the state, field 3, is index 0 here).
_PARENT, _USER, _SYSTEM = 1, 11, 12
#: Whose resource usage `own_cpu_seconds` adds up.
_WHO: Final = (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
#: The state of an established connection in ``/proc/net/tcp`` (``TCP_ESTABLISHED``).
_ESTABLISHED: Final = "01"


def available() -> bool:
    """Whether this system has ``/proc/<pid>/stat`` (Linux)."""
    return (_PROC / str(os.getpid()) / "stat").exists()


def _stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command (None: the process is gone).

    The command is cut at its *last* parenthesis: it may hold spaces and parentheses.
    """
    try:
        text = (_PROC / str(pid) / "stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return text[text.rindex(")") + 2 :].split()


def _parents() -> dict[int, int]:
    """Every process's parent id, by process id."""
    parents: dict[int, int] = {}
    for entry in _PROC.iterdir():
        if entry.name.isdigit():
            fields = _stat(int(entry.name))
            if fields is not None:
                parents[int(entry.name)] = int(fields[_PARENT])
    return parents


@dataclass(frozen=True)
class CpuClock:
    """The CPU time of ``roots`` and all their descendants.

    Attributes:
        roots: The process ids followed (a server's first process, a redis-server).
    """

    roots: tuple[int, ...]

    def processes(self) -> list[int]:
        """The roots and their descendants alive now."""
        children: dict[int, list[int]] = {}
        for pid, parent in _parents().items():
            children.setdefault(parent, []).append(pid)
        found: list[int] = []
        waiting = list(self.roots)
        while waiting:
            pid = waiting.pop()
            found.append(pid)
            waiting.extend(children.get(pid, ()))
        return found

    def read(self) -> dict[int, float]:
        """Each process's user plus system CPU seconds so far, by process id."""
        used: dict[int, float] = {}
        for pid in self.processes():
            fields = _stat(pid)
            if fields is not None:
                used[pid] = (int(fields[_USER]) + int(fields[_SYSTEM])) / _TICKS
        return used


def own_cpu_seconds() -> float:
    """The CPU seconds of this process and its children that ended (wrk, once it exits).

    The load generator's cost: wrk is a child that ends with its run; the servers, alive,
    are not counted here until they are reaped.
    """
    self, children = (resource.getrusage(who) for who in _WHO)
    return self.ru_utime + self.ru_stime + children.ru_utime + children.ru_stime


def cpu_seconds_between(before: Mapping[int, float], after: Mapping[int, float]) -> float:
    """The CPU seconds used between two `CpuClock.read` of the same clock."""
    return sum(seconds - before.get(pid, 0.0) for pid, seconds in after.items())


def _connections(port: int) -> dict[str, int]:
    """The established TCP connections to ``port`` on this host: socket inode -> peer port."""
    found: dict[str, int] = {}
    for table in ("tcp", "tcp6"):
        try:
            lines = (_PROC / "net" / table).read_text().splitlines()[1:]
        except FileNotFoundError:  # (no IPv6)
            continue
        for line in lines:
            # "sl local_address rem_address st ... inode": addresses are HEX-IP:HEX-PORT
            fields = line.split()
            local, remote, state, inode = fields[1], fields[2], fields[3], fields[9]
            if state == _ESTABLISHED and int(local.rpartition(":")[2], 16) == port:
                found[inode] = int(remote.rpartition(":")[2], 16)
    return found


def connections_held(pids: Iterable[int], port: int) -> dict[int, set[int]]:
    """The connections to ``port`` each of ``pids`` holds, by the peer's port.

    Every pid is in the answer, those holding none with an empty set.
    """
    connections = _connections(port)
    held: dict[int, set[int]] = {}
    for pid in pids:
        peers: set[int] = set()
        try:
            descriptors = list((_PROC / str(pid) / "fd").iterdir())
        except (FileNotFoundError, PermissionError):  # (gone, or not ours)
            descriptors = []
        for descriptor in descriptors:
            try:
                target = os.readlink(descriptor)
            except OSError:  # (closed meanwhile)
                continue
            # (a socket's link reads "socket:[INODE]")
            peer = connections.get(target.removeprefix("socket:[").removesuffix("]"))
            if peer is not None:
                peers.add(peer)
        held[pid] = peers
    return held
