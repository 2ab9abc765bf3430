"""The state of one client session, and the plumbing every request goes through.

`SessionCore` holds what a session knows (its `Connection`, the driver's `Requester`,
the callbacks and the capabilities they imply, what the server said about itself, the
log level, the cache) and sends a request: build it with the Connection, let the
driver carry it, turn the event that ends it into a result or an exception.
`mcpcore.client._connect` adds choosing the era; `mcpcore.client._session` the methods.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import msgspec
from msgspec import UNSET, UnsetType

from mcpcore._connection import Connection
from mcpcore._state import Phase, Side
from mcpcore.client._cache import ResultCache
from mcpcore.client._callbacks import ClientCallbacks
from mcpcore.client._errors import InvalidServerResponseError, McpError
from mcpcore.client._protocols import Outcome, Requester
from mcpcore.errors import LocalProtocolError
from mcpcore.events import ErrorReceived, InvalidResponse, ResponseReceived
from mcpcore.types import (
    LOG_LEVEL_META_KEY,
    SERVER_INFO_META_KEY,
    ClientCapabilities,
    DiscoverResult,
    Implementation,
    LoggingLevel,
    RequestId,
    ServerCapabilities,
)
from mcpcore.versions import ALL_VERSIONS, Era

__all__ = ["SessionCore"]

_R = TypeVar("_R")


class SessionCore:
    """What one client session knows, and how it sends a request. See `ClientSession`."""

    def __init__(
        self,
        requester: Requester,
        *,
        client_info: Implementation,
        callbacks: ClientCallbacks | None = None,
        clock: Callable[[], float] | None = None,
        connection: Connection | None = None,
        supported_versions: tuple[str, ...] | None = None,
    ) -> None:
        self._requester = requester
        self._client_info = client_info
        self._callbacks = callbacks if callbacks is not None else ClientCallbacks()
        self._capabilities = self._callbacks.capabilities()
        if connection is None:
            connection = Connection(
                Side.CLIENT,
                supported_versions=supported_versions or ALL_VERSIONS,
                capabilities=self._capabilities,
                implementation=client_info,
            )
        else:
            _check_connection(connection, self._capabilities, client_info, supported_versions)
        self._connection = connection
        self._cache = None if clock is None else ResultCache(clock)
        self._server_capabilities: ServerCapabilities | None = None
        self._server_info: Implementation | None = None
        self._instructions: str | None = None
        self._discover_result: DiscoverResult | None = None
        self._log_level: LoggingLevel | None = None
        # Each listed tool's 2025-11-25 ``execution.taskSupport`` ("optional" or
        # "required"; absent is "forbidden"), and whether the whole list was read since
        # it last changed (`ClientSession.tool_task_support`).
        self._task_support: dict[str, str] = {}
        self._tools_listed = False

    # ------------------------------------------------------------------ state

    @property
    def connection(self) -> Connection:
        """The client `Connection`: the driver feeds it what the server sends."""
        return self._connection

    @property
    def callbacks(self) -> ClientCallbacks:
        """The callbacks that answer the server's requests for input."""
        return self._callbacks

    @property
    def client_capabilities(self) -> ClientCapabilities:
        """What this client declares (derived from the callbacks)."""
        return self._capabilities

    @property
    def era(self) -> Era | None:
        """The era the session speaks, or None before `connect`."""
        return self._connection.era

    @property
    def protocol_version(self) -> str | None:
        """The negotiated legacy version, or the 2026-07-28 version spoken; None before."""
        return self._connection.protocol_version

    @property
    def server_capabilities(self) -> ServerCapabilities | None:
        """What the server advertised (``initialize`` or ``server/discover``), or None.

        None in ``modern`` mode without discovery: nothing is known, nothing is gated.
        """
        return self._server_capabilities

    @property
    def server_info(self) -> Implementation | None:
        """The server's self-reported name and version, when it sent them."""
        return self._server_info

    @property
    def instructions(self) -> str | None:
        """The server's instructions for the model, when it sent some."""
        return self._instructions

    @property
    def discover_result(self) -> DiscoverResult | None:
        """The latest ``server/discover`` result (2026-07-28), or None."""
        return self._discover_result

    @property
    def log_level(self) -> LoggingLevel | None:
        """The level set with `set_logging_level`, or None (no log messages)."""
        return self._log_level

    @property
    def cache(self) -> ResultCache | None:
        """The session's result cache; None when the session was given no clock."""
        return self._cache

    # --------------------------------------------------------------- plumbing

    def _meta(self, meta: Mapping[str, Any] | None) -> dict[str, Any] | UnsetType:
        """``_meta`` for a request: the caller's keys, plus the 2026-07-28 log level.

        "The level is set per request through _meta" (2026-07-28 server/utilities/
        logging); a key the caller set itself wins.
        """
        if not meta and self._log_level is None:
            return UNSET  # nothing to add: the common case
        merged = dict(meta) if meta else {}
        if self._log_level is not None and self._connection.phase is Phase.MODERN:
            merged.setdefault(LOG_LEVEL_META_KEY, self._log_level)
        return merged if merged else UNSET

    async def _exchange(self, method: str, params: Any, timeout: float | None) -> Any:
        """Send one request; return its result (an `InputRequiredResult` included).

        Raises:
            McpError: The server answered with an error.
            InvalidServerResponseError: The answer was unusable.
            TimeoutError: From the driver, which already gave up on the request.
        """
        request_id, data = self._connection.send_request(method, params)
        outcome = await self._requester.request(request_id, data, timeout=timeout)
        if type(outcome) is ResponseReceived and outcome.request_id == request_id:
            return outcome.result  # (`result_of`, for the common outcome)
        return result_of(outcome, request_id, method)

    async def _call(
        self, method: str, params: Any, result_type: type[_R], timeout: float | None
    ) -> _R:
        """`_exchange` for a method whose only result is ``result_type``."""
        result = await self._exchange(method, params, timeout)
        if not isinstance(result, result_type):
            raise InvalidServerResponseError(method, f"not a {result_type.__name__}")
        return result

    def _cached(self, method: str, key: str | None, fresh: bool) -> Any | None:
        """A fresh cached result, unless the caller wants a fresh one from the server."""
        if fresh or self._cache is None or self._connection.phase is not Phase.MODERN:
            return None
        return self._cache.get(method, key)

    def _remember(self, method: str, key: str | None, result: Any) -> None:
        """Cache a complete result of a first try; legacy results never are.

        A legacy result has no ``ttlMs``, which counts as 0 (CHECKLIST G12); even one
        that carries the key is outside its revision's contract and is not trusted.
        """
        if self._cache is not None and self._connection.phase is Phase.MODERN:
            self._cache.put(method, key, result)

    def _adopt_discovery(self, result: DiscoverResult) -> None:
        """Take in what a DiscoverResult says about the server."""
        self._discover_result = result
        self._server_capabilities = result.capabilities
        self._instructions = None if result.instructions is UNSET else result.instructions
        info = (result.meta or {}).get(SERVER_INFO_META_KEY)
        try:
            self._server_info = None if info is None else msgspec.convert(info, Implementation)
        except msgspec.ValidationError:
            self._server_info = None  # self-reported and informative only: not worth failing


def result_of(outcome: Outcome, request_id: RequestId, method: str) -> Any:
    """The result an outcome carries, or the exception it means.

    Raises:
        McpError: For an `ErrorReceived`.
        InvalidServerResponseError: For an `InvalidResponse`.
    """
    if outcome.request_id is not None and outcome.request_id != request_id:
        raise LocalProtocolError(
            f"the driver answered request {request_id!r} with the outcome of {outcome.request_id!r}"
        )
    if isinstance(outcome, ErrorReceived):
        raise McpError.from_error(outcome.error, method)
    if isinstance(outcome, InvalidResponse):
        raise InvalidServerResponseError(method, outcome.message)
    return outcome.result


def _check_connection(
    connection: Connection,
    capabilities: ClientCapabilities,
    client_info: Implementation,
    supported_versions: tuple[str, ...] | None,
) -> None:
    """A Connection given to a session must say what the session's callbacks declare."""
    if connection.our_role is not Side.CLIENT or connection.phase is not Phase.IDLE:
        raise ValueError("a session needs a fresh client Connection")
    if connection.capabilities != capabilities:
        raise ValueError(
            "the Connection must be built with capabilities=callbacks.capabilities(): "
            "the client declares exactly what its callbacks answer"
        )
    if connection.implementation != client_info:
        raise ValueError("the Connection must be built with implementation=client_info")
    if supported_versions is not None and connection.supported_versions != tuple(
        supported_versions
    ):
        raise ValueError("supported_versions differs from the Connection's")
