"""The MCP client's protocol logic, in both eras, with no IO.

`ClientSession` builds requests and decides what answers mean: era detection
(``server/discover`` probe, ``initialize`` fallback), the 2026-07-28 multi round-trip
loop, pagination, the ``ttlMs`` / ``cacheScope`` result cache, and the legacy server's
requests. A driver supplies a `Requester` that moves the bytes and waits; the awaitable
client a user holds lives in the transports.
"""

from __future__ import annotations

from mcpcore.client._cache import (
    CACHEABLE_METHODS,
    MAX_CACHE_BYTES,
    MAX_CACHE_ENTRIES,
    MAX_TTL_MS,
    ResultCache,
)
from mcpcore.client._callbacks import (
    CallbackErrorHook,
    ClientCallbacks,
    ElicitationCallback,
    RootsCallback,
    SamplingCallback,
)
from mcpcore.client._connect import ConnectMode
from mcpcore.client._era import DEFAULT_PROBE_TIMEOUT, MAX_PROBES
from mcpcore.client._errors import (
    ClientError,
    IncompatibleServerError,
    InvalidServerResponseError,
    McpError,
    PaginationError,
    TaskCancelledError,
    TooManyInputRoundsError,
    UnsupportedInputRequestError,
)
from mcpcore.client._listen import FilterComparison, compare_acknowledgement
from mcpcore.client._mrtr import MAX_INPUT_ROUNDS
from mcpcore.client._pagination import MAX_PAGES
from mcpcore.client._protocols import Outcome, Requester
from mcpcore.client._session import ClientSession

__all__ = [
    "CACHEABLE_METHODS",
    "DEFAULT_PROBE_TIMEOUT",
    "MAX_CACHE_BYTES",
    "MAX_CACHE_ENTRIES",
    "MAX_INPUT_ROUNDS",
    "MAX_PAGES",
    "MAX_PROBES",
    "MAX_TTL_MS",
    "CallbackErrorHook",
    "ClientCallbacks",
    "ClientError",
    "ClientSession",
    "ConnectMode",
    "ElicitationCallback",
    "FilterComparison",
    "IncompatibleServerError",
    "InvalidServerResponseError",
    "McpError",
    "Outcome",
    "PaginationError",
    "Requester",
    "ResultCache",
    "RootsCallback",
    "SamplingCallback",
    "TaskCancelledError",
    "TooManyInputRoundsError",
    "UnsupportedInputRequestError",
    "compare_acknowledgement",
]
