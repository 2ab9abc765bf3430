"""Era detection as a decision table: what a probe's outcome says about the server.

CHECKLIST §6.1 (2026-07-28 basic/versioning): a dual-era client probes
``server/discover`` at its preferred modern version before anything else.

- A DiscoverResult sharing a modern version with us → modern, at the best mutual one.
- A DiscoverResult naming no modern version we speak → legacy (an explicit legacy
  advertisement, as go-sdk's stateful servers send; the official SDKs fall back too).
- -32022 naming a modern version we speak → re-probe once at the best of them
  ("pick a mutually supported version and retry").
- -32022 naming versions, none of which we speak → the server is incompatible.
- -32022 naming a legacy version we speak → legacy.
- Anything else → legacy: other codes, a -32022 without a readable ``supported`` list
  or with an empty one (a server naming no version at all is no evidence of a modern
  server; mcpcore's own legacy-only `Connection` answers the probe so), an unusable
  answer, a timeout. "The fallback MUST NOT be keyed to one specific error code."

And for the fallback ``initialize``: a -32022 naming a modern version we speak is
modern evidence (a probe that timed out on our side can have locked a slow server
into 2026-07-28, CHECKLIST G4) → one re-probe; any other -32022 → incompatible.

These functions decide and change nothing; `ClientSession.connect` applies them.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from mcpcore import jsonrpc
from mcpcore.events import ErrorReceived, InvalidResponse, ResponseReceived
from mcpcore.types import DiscoverResult, Error
from mcpcore.versions import ALL_VERSIONS, Era, era_of

__all__ = [
    "DEFAULT_PROBE_TIMEOUT",
    "MAX_PROBES",
    "ProbeAction",
    "Verdict",
    "best_version",
    "judge_handshake_error",
    "judge_probe",
    "supported_in_error",
]

#: Seconds to wait for the ``server/discover`` probe before deciding "legacy". A legacy
#: server that ignores the unknown request never answers; the official Python SDK waits
#: 10 s too (mcp/client/session.py DISCOVER_TIMEOUT_SECONDS).
DEFAULT_PROBE_TIMEOUT: Final = 10.0
#: Probes per connect: the first, plus one re-probe at a version the server named, from
#: the probe's -32022 or from the fallback initialize's. A server that rejects the version
#: it itself named is not worth a third try (the official SDK stops at two as well).
MAX_PROBES: Final = 2

_ORDER: Final = {version: index for index, version in enumerate(ALL_VERSIONS)}


class ProbeAction(enum.Enum):
    """What to do after a probe or a failed handshake."""

    #: Speak 2026-07-28 (at `Verdict.version`).
    MODERN = "modern"
    #: Probe again, at `Verdict.version`.
    REPROBE = "reprobe"
    #: Fall back to the ``initialize`` handshake.
    LEGACY = "legacy"
    #: Give up: no version in common.
    INCOMPATIBLE = "incompatible"


@dataclass(frozen=True, slots=True)
class Verdict:
    """One decision of the era table.

    Attributes:
        action: What to do.
        reason: Why, in words (for errors and debugging).
        version: The version to speak or probe at (`ProbeAction.MODERN`,
            `ProbeAction.REPROBE`).
        supported: The versions the server named, when it named any.
        discovered: `ProbeAction.MODERN` after a probe: the server's answer.
    """

    action: ProbeAction
    reason: str
    version: str | None = None
    supported: tuple[str, ...] = ()
    discovered: DiscoverResult | None = None

    def version_to_use(self) -> str:
        """The version a `ProbeAction.MODERN` or `ProbeAction.REPROBE` verdict names.

        Raises:
            ValueError: The verdict names none (any other action).
        """
        if self.version is None:
            raise ValueError(f"a {self.action.value} verdict names no version")
        return self.version


def best_version(candidates: Iterable[str], ours: Iterable[str], era: Era) -> str | None:
    """The newest version of ``era`` that both sides speak, or None.

    Versions are compared through the known-versions table, never lexically
    (2026-07-28 basic/versioning: version strings are opaque).
    """
    mutual = set(candidates).intersection(ours)
    known = [version for version in mutual if era_of(version) is era]
    return max(known, key=_ORDER.__getitem__, default=None)


def supported_in_error(error: Error) -> tuple[str, ...] | None:
    """The ``data.supported`` list of a -32022 error, or None when it is not readable."""
    data = error.data
    supported = data.get("supported") if isinstance(data, dict) else None
    if not isinstance(supported, list) or not all(isinstance(v, str) for v in supported):
        return None
    return tuple(supported)


def judge_probe(
    outcome: ResponseReceived | ErrorReceived | InvalidResponse | TimeoutError,
    ours: tuple[str, ...],
    *,
    may_reprobe: bool,
) -> Verdict:
    """Decide the era from how a ``server/discover`` probe ended.

    Args:
        outcome: The probe's terminal event, or the `TimeoutError` the driver raised.
        ours: The versions this client speaks.
        may_reprobe: Whether another probe is allowed (`MAX_PROBES`).

    Returns:
        The verdict; `ProbeAction.INCOMPATIBLE` only for a -32022 naming versions we don't speak.
    """
    if isinstance(outcome, ResponseReceived):
        return _judge_discovery(outcome.result, ours)
    if isinstance(outcome, TimeoutError):
        return Verdict(ProbeAction.LEGACY, "the probe timed out")
    if isinstance(outcome, InvalidResponse):
        return Verdict(ProbeAction.LEGACY, f"the probe's answer is unusable: {outcome.message}")
    return _judge_probe_error(outcome.error, ours, may_reprobe=may_reprobe)


def _judge_discovery(result: object, ours: tuple[str, ...]) -> Verdict:
    """`judge_probe` for a probe answered with a result."""
    if not isinstance(result, DiscoverResult):
        return Verdict(ProbeAction.LEGACY, "the probe's result is not a DiscoverResult")
    advertised = tuple(result.supported_versions)
    version = best_version(advertised, ours, Era.MODERN)
    if version is None:
        reason = "the DiscoverResult lists no modern version we speak"
        return Verdict(ProbeAction.LEGACY, reason, None, advertised)
    reason = "the server answered server/discover"
    return Verdict(ProbeAction.MODERN, reason, version, advertised, result)


def _judge_probe_error(error: Error, ours: tuple[str, ...], *, may_reprobe: bool) -> Verdict:
    """`judge_probe` for a probe answered with an error."""
    if error.code != jsonrpc.UNSUPPORTED_PROTOCOL_VERSION:
        return Verdict(ProbeAction.LEGACY, f"the probe was answered with error {error.code}")
    supported = supported_in_error(error)
    if not supported:
        # None (unreadable) or empty: no version named, so no evidence either way.
        return Verdict(ProbeAction.LEGACY, "a -32022 naming no version")
    modern = best_version(supported, ours, Era.MODERN)
    if modern is not None and may_reprobe:
        reason = "-32022 names a modern version we speak"
        return Verdict(ProbeAction.REPROBE, reason, modern, supported)
    if best_version(supported, ours, Era.LEGACY) is not None:
        reason = "-32022 names a legacy version we speak"
        return Verdict(ProbeAction.LEGACY, reason, None, supported)
    return Verdict(
        ProbeAction.INCOMPATIBLE,
        f"the server speaks {', '.join(supported)}; this client speaks {', '.join(ours)}",
        None,
        supported,
    )


def judge_handshake_error(
    error: Error, ours: tuple[str, ...], *, may_reprobe: bool
) -> Verdict | None:
    """Decide what an error answer to ``initialize`` says about the era.

    Args:
        error: The server's error.
        ours: The versions this client speaks.
        may_reprobe: Whether another probe is allowed (never in ``legacy`` mode).

    Returns:
        `ProbeAction.REPROBE` for a -32022 naming a modern version we speak, when allowed;
        `ProbeAction.INCOMPATIBLE` for a -32022 naming no version we speak at all; None when
        the error says nothing about eras (the handshake failed: raise the error).
    """
    if error.code != jsonrpc.UNSUPPORTED_PROTOCOL_VERSION:
        return None
    supported = supported_in_error(error) or ()
    modern = best_version(supported, ours, Era.MODERN)
    if modern is not None and may_reprobe:
        return Verdict(ProbeAction.REPROBE, "initialize got -32022 naming a modern version", modern)
    if best_version(supported, ours, Era.LEGACY) is not None:
        return None  # it names a handshake version we speak: a confused server, not an era
    named = ", ".join(supported) or "no version"
    if modern is not None:
        reason = f"the server refuses the handshake: it speaks {named}, without a handshake"
    else:
        reason = f"the server refuses the handshake and names {named}; we speak {', '.join(ours)}"
    return Verdict(ProbeAction.INCOMPATIBLE, reason, None, supported)
