"""Whether a request from the peer is served, and under which version: the era rules.

A server decides per request. The first request decides the era of a stdio process or
WebSocket connection, once, as the official SDKs do: ``initialize`` opens a legacy
session; a request carrying the 2026-07-28 ``_meta`` envelope opens a modern one.
After that, a request from the other era is refused: ``initialize`` on a modern
connection gets -32022 naming our versions (which a probing client reads as "modern"),
and an enveloped request inside a legacy session gets -32600.

These functions decide and change nothing; the `Connection` applies the outcome.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias

from msgspec import Raw, UnsetType

from mcpcore import jsonrpc
from mcpcore._capabilities import has_capability, required_client_capabilities
from mcpcore._envelope import Rejection, probe_meta, read_modern_envelope
from mcpcore._state import LEGACY_PHASES, Phase, Role
from mcpcore.methods import MethodSpec
from mcpcore.types import (
    PROTOCOL_VERSION_META_KEY,
    ClientCapabilities,
    InitializeRequestParams,
    LoggingLevel,
)
from mcpcore.versions import is_at_least, negotiate_legacy_version

if TYPE_CHECKING:
    from mcpcore._conversation import ConversationState

__all__ = [
    "Admission",
    "admit_on_client",
    "admit_on_server",
    "refuse_to_send",
    "reject_unknown_method",
]

#: A request we serve: its protocol version, the client's capabilities, its log level.
Admission: TypeAlias = tuple[str | None, ClientCapabilities | None, LoggingLevel | None]


def admit_on_server(
    conn: ConversationState, spec: MethodSpec, params: Any, meta: dict[str, Any] | None
) -> Admission | Rejection:
    """Decide whether a server serves a request, and under which version.

    ``meta`` is the request's ``_meta`` (`meta_of` its params), read once by the caller.
    """
    if spec.name == "initialize":
        return _admit_initialize(conn, params, meta)
    phase = conn.phase
    modern_claim = meta is not None and PROTOCOL_VERSION_META_KEY in meta
    if modern_claim and not conn.supported_modern_versions:
        # A server that speaks no 2026-07-28 version answers like a legacy server: a
        # -32022 would tell a probing client "modern, do not fall back" (2026-07-28
        # basic/versioning), the opposite of the truth.
        modern_claim = False
    if phase is Phase.MODERN or modern_claim:
        if phase in LEGACY_PHASES:
            return Rejection(
                jsonrpc.INVALID_REQUEST,
                f"Invalid Request: this connection speaks {conn.protocol_version}; requests "
                "carrying the 2026-07-28 _meta envelope are not accepted on it",
            )
        envelope = read_modern_envelope(meta, conn.supported_modern_versions)
        if isinstance(envelope, Rejection):
            return envelope
        if envelope.protocol_version not in spec.versions:
            # Removed methods (ping, logging/setLevel, resources/subscribe...) → -32601
            # (2026-07-28 basic/versioning).
            return _method_not_found(spec.name)
        gated = _gated(conn, spec, envelope.protocol_version)
        if gated is not None:
            return gated
        return envelope.protocol_version, envelope.client_capabilities, envelope.log_level
    if phase is Phase.IDLE:
        if spec.name == "ping":  # "The client MAY send ping before initialize completes"
            return None, None, None
        return Rejection(
            jsonrpc.INVALID_REQUEST,
            "Invalid Request: send initialize first, or a 2026-07-28 request with its _meta",
        )
    version = conn.protocol_version
    if version is None or version not in spec.versions:
        return _method_not_found(spec.name)
    gated = _gated(conn, spec, version)
    if gated is not None:
        return gated
    client_capabilities = conn.their_capabilities
    if not isinstance(client_capabilities, ClientCapabilities):
        client_capabilities = None
    return version, client_capabilities, None


def _admit_initialize(
    conn: ConversationState, params: InitializeRequestParams, meta: dict[str, Any] | None
) -> Admission | Rejection:
    requested = params.protocol_version
    modern = list(conn.supported_modern_versions)
    if conn.phase is Phase.MODERN:
        if meta is not None and PROTOCOL_VERSION_META_KEY in meta:
            # A 2026-07-28 request for a method 2026-07-28 removed (on Streamable HTTP's
            # modern path that is 404 + -32601).
            return _method_not_found("initialize")
        return Rejection(
            jsonrpc.UNSUPPORTED_PROTOCOL_VERSION,
            "This connection serves 2026-07-28; the initialize handshake is not accepted",
            {"supported": modern, "requested": requested},
        )
    if conn.phase is not Phase.IDLE:
        return Rejection(jsonrpc.INVALID_REQUEST, "Invalid Request: already initialized")
    version = negotiate_legacy_version(requested, conn.supported_versions)
    if version is None:
        # "A modern-only server SHOULD name its supported versions in any error it
        # returns to an initialize request" (2026-07-28 basic/versioning).
        return Rejection(
            jsonrpc.UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version: this server does not speak the handshake era",
            {"supported": modern, "requested": requested},
        )
    return version, params.capabilities, None


def admit_on_client(conn: ConversationState, spec: MethodSpec) -> Admission | Rejection:
    """Decide whether a client serves a server's request (legacy only)."""
    if conn.phase is Phase.MODERN:
        # "Servers MUST NOT initiate JSON-RPC requests" and "clients do not send
        # JSON-RPC responses" (2026-07-28 basic): nothing to answer with.
        return Rejection(
            jsonrpc.INVALID_REQUEST, "A 2026-07-28 server must not send requests", reply=False
        )
    version = conn.protocol_version
    if conn.phase not in LEGACY_PHASES or version is None:
        return Rejection(jsonrpc.INVALID_REQUEST, "Invalid Request: not initialized")
    if version not in spec.versions:
        return _method_not_found(spec.name)
    if spec.capability is not None and not has_capability(conn.capabilities, spec.capability):
        # "A client without roots support → -32601" (2024-11-05 client/roots), and
        # likewise for every capability-gated request.
        return _method_not_found(spec.name)
    return version, None, None


def reject_unknown_method(
    conn: ConversationState, method: str, raw_params: Raw | UnsetType, *, is_server: bool
) -> Rejection:
    """The answer to a method we don't serve.

    A 2026-07-28 request still owes us a valid envelope before we say "no such method":
    -32602 and -32022 come first (the order the spec's conformance tests expect).
    """
    if is_server and conn.supported_modern_versions and conn.phase in (Phase.IDLE, Phase.MODERN):
        meta = probe_meta(raw_params)
        if conn.phase is Phase.MODERN or (meta is not None and PROTOCOL_VERSION_META_KEY in meta):
            envelope = read_modern_envelope(meta, conn.supported_modern_versions)
            if isinstance(envelope, Rejection):
                return envelope
    return _method_not_found(method)


def _gated(conn: ConversationState, spec: MethodSpec, version: str) -> Rejection | None:
    """-32601 for a method gated on a capability this server did not advertise.

    "-32601 also means method gated behind a server capability the server did not
    advertise" (2026-07-28 basic).
    """
    capability, ours = spec.capability, conn.capabilities
    if (
        capability is None
        or ours is None
        or (spec.capability_since is not None and not is_at_least(version, spec.capability_since))
        or has_capability(ours, capability)
    ):
        return None
    return _method_not_found(spec.name)


def _method_not_found(method: str) -> Rejection:
    return Rejection(jsonrpc.METHOD_NOT_FOUND, f"Method not found: {method}")


def refuse_to_send(
    conn: ConversationState, spec: MethodSpec, params: Any, version: str
) -> str | None:
    """Why our side may not send this request under ``version``, or None if it may.

    The sending twin of admission: the method must exist in the version, and the peer
    must have advertised the capability the method is gated on ("both parties MUST
    respect the negotiated protocol version and capabilities", 2025-06-18 lifecycle).
    """
    if version not in spec.versions:
        return f"{spec.name} does not exist in {version}"
    their = conn.their_capabilities
    if conn.our_role is Role.CLIENT:
        if (
            spec.capability is not None
            and their is not None
            and (spec.capability_since is None or is_at_least(version, spec.capability_since))
            and not has_capability(their, spec.capability)
        ):
            return (
                f"the server did not advertise the {spec.capability} capability {spec.name} needs"
            )
    elif isinstance(their, ClientCapabilities) and required_client_capabilities(
        spec.name, params, their
    ):
        return f"the client did not declare the capability {spec.name} needs"
    return None
