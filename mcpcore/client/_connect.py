"""Choosing the era: the ``server/discover`` probe, the fallback handshake, or neither.

`Connecting.connect` applies the decision table of `mcpcore.client._era` (CHECKLIST
§6.1) in one of three modes:

- ``auto``: probe, and fall back to ``initialize`` on anything that is not modern
  evidence; a -32022 answer to that ``initialize`` is modern evidence after all (G4),
  and earns one re-probe.
- ``legacy``: the handshake only (2024-11-05 … 2025-11-25).
- ``modern``: 2026-07-28 without a handshake; ``server/discover`` first unless told not
  to ("(C) MAY call it first"), and no fallback.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

from mcpcore.client._core import SessionCore
from mcpcore.client._era import (
    DEFAULT_PROBE_TIMEOUT,
    MAX_PROBES,
    ProbeAction,
    Verdict,
    best_version,
    judge_handshake_error,
    judge_probe,
)
from mcpcore.client._errors import IncompatibleServerError, InvalidServerResponseError, McpError
from mcpcore.errors import LocalProtocolError
from mcpcore.events import ErrorReceived, InvalidResponse, ResponseReceived
from mcpcore.types import (
    InitializeRequestParams,
    InitializeResult,
    RequestId,
    RequestParams,
)
from mcpcore.versions import Era

__all__ = ["ConnectMode", "Connecting"]

#: How `ClientSession.connect` chooses the era.
ConnectMode: TypeAlias = Literal["auto", "legacy", "modern"]

_ProbeOutcome: TypeAlias = ResponseReceived | ErrorReceived | InvalidResponse | TimeoutError


class Connecting(SessionCore):
    """The half of `ClientSession` that chooses the era."""

    async def connect(
        self,
        mode: ConnectMode = "auto",
        *,
        probe_timeout: float | None = DEFAULT_PROBE_TIMEOUT,
        timeout: float | None = None,
        discover: bool = True,
    ) -> Era:
        """Find out how to talk to the server, and get ready to.

        ``auto`` follows CHECKLIST §6.1: probe ``server/discover`` at our newest modern
        version; a DiscoverResult sharing a modern version → modern, at the best mutual
        one; a -32022 naming a modern version we share → one re-probe at it; a -32022
        naming only versions we don't speak → `IncompatibleServerError`; anything else (any
        other error, a DiscoverResult without a modern version, an unusable answer, a
        timeout) → ``initialize``, then ``notifications/initialized``.

        Args:
            mode: ``"auto"``, ``"legacy"`` (handshake only) or ``"modern"`` (no handshake).
            probe_timeout: Seconds to wait for each ``server/discover``.
            timeout: Seconds to wait for ``initialize``.
            discover: ``modern`` mode only: call ``server/discover`` first (so that
                `server_capabilities` is known and version mismatches surface now).

        Returns:
            The era chosen.

        Raises:
            IncompatibleServerError: No protocol version in common.
            McpError: The handshake (or, in ``modern`` mode, discovery) failed.
            InvalidServerResponseError: The handshake's answer was unusable.
            TimeoutError: ``initialize`` timed out (or the probe, in ``modern`` mode).
            ConnectionError: From the driver: the transport closed.
        """
        if self._connection.era is not None:
            raise LocalProtocolError("the session is already connected")
        if mode == "legacy":
            await self._handshake(timeout, may_reprobe=False)
        elif mode == "modern":
            await self._connect_modern(probe_timeout, discover=discover)
        elif mode == "auto":
            await self._connect_auto(probe_timeout, timeout)
        else:
            raise ValueError(f"mode must be 'auto', 'legacy' or 'modern', not {mode!r}")
        era = self.era  # (not self._connection.era, which mypy narrowed to None above)
        if era is None:
            raise AssertionError("unreachable: every mode chooses an era or raises")
        return era

    async def _connect_auto(self, probe_timeout: float | None, timeout: float | None) -> None:
        ours = self._connection.supported_versions
        version = best_version(ours, ours, Era.MODERN)
        if version is None:
            await self._handshake(timeout, may_reprobe=False)  # a legacy-only client
            return
        probes = 0
        # Set once initialize was answered -32022 naming a modern version: the server
        # is modern, so a failing re-probe is an error, not a reason to fall back again.
        proven_modern = False
        while True:
            probes += 1
            outcome = await self._probe(version, probe_timeout)
            verdict = judge_probe(outcome, ours, may_reprobe=probes < MAX_PROBES)
            if verdict.action is ProbeAction.MODERN:
                self._adopt(verdict)
                return
            if verdict.action is ProbeAction.REPROBE:
                version = verdict.version_to_use()
                continue
            if verdict.action is ProbeAction.INCOMPATIBLE:
                raise IncompatibleServerError(verdict.reason, verdict.supported)
            if proven_modern:
                raise _failure(outcome, verdict)
            # "Any other error or a timeout → legacy; fall back to initialize."
            self._connection.abandon_modern()
            if best_version(ours, ours, Era.LEGACY) is None:
                raise IncompatibleServerError(
                    f"the server is not modern ({verdict.reason}) and this client speaks "
                    "no handshake version",
                    verdict.supported,
                )
            reprobe = await self._handshake(timeout, may_reprobe=probes < MAX_PROBES)
            if reprobe is None:
                return
            proven_modern = True
            version = reprobe.version_to_use()

    async def _connect_modern(self, probe_timeout: float | None, *, discover: bool) -> None:
        ours = self._connection.supported_versions
        version = best_version(ours, ours, Era.MODERN)
        if version is None:
            raise LocalProtocolError("this client speaks no modern version")
        if not discover:
            self._connection.start_modern(version)
            return
        for probe in range(1, MAX_PROBES + 1):
            outcome = await self._probe(version, probe_timeout)
            verdict = judge_probe(outcome, ours, may_reprobe=probe < MAX_PROBES)
            if verdict.action is ProbeAction.MODERN:
                self._adopt(verdict)
                return
            if verdict.action is not ProbeAction.REPROBE:
                raise _failure(outcome, verdict)
            version = verdict.version_to_use()
        raise AssertionError("unreachable: the last probe may not re-probe")

    async def _probe(self, version: str, timeout: float | None) -> _ProbeOutcome:
        """Send ``server/discover`` at ``version``; the event that ends it, or the timeout."""
        connection = self._connection
        if connection.era is not Era.MODERN or connection.protocol_version != version:
            connection.start_modern(version)
        request_id, data = connection.send_request("server/discover", RequestParams())
        try:
            return await self._requester.request(request_id, data, timeout=timeout)
        except TimeoutError as timed_out:
            await self._give_up(request_id)
            return timed_out

    async def _give_up(self, request_id: RequestId) -> None:
        """Make sure a timed-out request is cancelled (the driver should have done it)."""
        if request_id in self._connection.pending_requests:
            data = self._connection.cancel(request_id, "timed out")
            if data is not None:
                await self._requester.send(data)

    def _adopt(self, verdict: Verdict) -> None:
        """Speak the verdict's version (the best mutual one); take in its DiscoverResult."""
        version, result = verdict.version_to_use(), verdict.discovered
        if result is None:  # (judge_probe says MODERN only with the server's answer)
            raise ValueError("a modern verdict without the server's DiscoverResult")
        if self._connection.protocol_version != version:
            self._connection.start_modern(version)
        self._adopt_discovery(result)
        self._remember("server/discover", None, result)

    async def _handshake(self, timeout: float | None, *, may_reprobe: bool) -> Verdict | None:
        """Run ``initialize`` and send ``notifications/initialized``.

        Returns:
            None once the handshake is complete; a `ProbeAction.REPROBE` verdict when the
            server answered -32022 naming a modern version we speak.
        """
        connection = self._connection
        ours = connection.supported_versions
        version = best_version(ours, ours, Era.LEGACY)
        if version is None:
            raise LocalProtocolError("this client speaks no handshake version")
        # "The client SHOULD send the latest version it supports" (2024-11-05 lifecycle).
        params = InitializeRequestParams(
            protocol_version=version, capabilities=self._capabilities, client_info=self._client_info
        )
        request_id, data = connection.send_request("initialize", params)
        outcome = await self._requester.request(request_id, data, timeout=timeout)
        if isinstance(outcome, ErrorReceived):
            verdict = judge_handshake_error(outcome.error, ours, may_reprobe=may_reprobe)
            if verdict is None:
                raise McpError.from_error(outcome.error, "initialize")
            if verdict.action is ProbeAction.INCOMPATIBLE:
                raise IncompatibleServerError(verdict.reason, verdict.supported)
            return verdict
        if isinstance(outcome, InvalidResponse):
            raise InvalidServerResponseError("initialize", outcome.message)
        result = outcome.result
        if not isinstance(result, InitializeResult):  # (a method table's own initialize)
            raise InvalidServerResponseError("initialize", "the result is not an InitializeResult")
        self._server_capabilities = result.capabilities
        self._server_info = result.server_info
        self._instructions = (
            None if not isinstance(result.instructions, str) else result.instructions
        )
        # "After successful initialization, the client MUST send an initialized
        # notification" (2024-11-05 basic/lifecycle).
        await self._requester.send(connection.send_notification("notifications/initialized"))
        return None


def _failure(outcome: _ProbeOutcome, verdict: Verdict) -> Exception:
    """The exception that reports a probe which settled nothing."""
    if isinstance(outcome, TimeoutError):
        return outcome
    if isinstance(outcome, ErrorReceived):
        return McpError.from_error(outcome.error, "server/discover")
    if isinstance(outcome, InvalidResponse):
        return InvalidServerResponseError("server/discover", outcome.message)
    return IncompatibleServerError(verdict.reason, verdict.supported)
