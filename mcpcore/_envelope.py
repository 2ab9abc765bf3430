"""The 2026-07-28 per-request envelope: reading it on a server, writing it on a client.

Every 2026-07-28 request carries its version and the client's capabilities in
``params._meta`` (2026-07-28 basic, "Per-request protocol fields"). These functions
are pure so that every transport runs the same checks in the same order; the HTTP
transport adds its header checks between them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal, get_args

import msgspec
from msgspec import UNSET, Raw, UnsetType

from mcpcore import jsonrpc
from mcpcore.types import (
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    LOG_LEVEL_META_KEY,
    PROGRESS_TOKEN_META_KEY,
    PROTOCOL_VERSION_META_KEY,
    ClientCapabilities,
    Implementation,
    LoggingLevel,
    ProgressToken,
)

__all__ = [
    "ModernEnvelope",
    "Rejection",
    "meta_of",
    "missing_envelope",
    "probe_meta",
    "progress_token_in",
    "read_modern_envelope",
    "request_envelope",
    "stamp_request_meta",
]

_LOG_LEVELS: Final = frozenset(get_args(LoggingLevel))


@dataclass(frozen=True, slots=True)
class Rejection:
    """A request the core refuses, and the error that says why.

    ``reply=False`` when no answer is due (2026-07-28 clients never answer a request).
    """

    code: int
    message: str
    data: Any = UNSET
    reply: bool = True


class ModernEnvelope(msgspec.Struct, frozen=True, gc=False):
    """What a valid 2026-07-28 request says about itself.

    (A Struct rather than a frozen dataclass: one is built per request, and a Struct
    is built several times faster. Its fields are named as the ``_meta`` keys they
    come from, so that `read_modern_envelope` can read a valid envelope in one
    `msgspec.convert`.)
    """

    protocol_version: str = msgspec.field(name=PROTOCOL_VERSION_META_KEY)
    client_capabilities: ClientCapabilities = msgspec.field(name=CLIENT_CAPABILITIES_META_KEY)
    client_info: Implementation | None = msgspec.field(default=None, name=CLIENT_INFO_META_KEY)
    log_level: LoggingLevel | None = msgspec.field(default=None, name=LOG_LEVEL_META_KEY)


class _MetaProbe(msgspec.Struct, gc=False):
    meta: dict[str, Any] | UnsetType = msgspec.field(default=UNSET, name="_meta")


_PROBE_DECODER: Final = msgspec.json.Decoder(_MetaProbe)


def meta_of(params: Any) -> dict[str, Any] | None:
    """The ``_meta`` dict of decoded params, or None."""
    meta = params.get("_meta") if isinstance(params, dict) else getattr(params, "meta", None)
    return meta if isinstance(meta, dict) else None


def progress_token_in(meta: dict[str, Any] | None) -> ProgressToken | Literal[False] | None:
    """The progress token in a ``_meta`` (`meta_of`): None if absent, False if malformed.

    "progressToken (string or integer)" (2024-11-05 basic/utilities/progress).
    """
    token = None if meta is None else meta.get(PROGRESS_TOKEN_META_KEY)
    if token is None or (isinstance(token, (int, str)) and not isinstance(token, bool)):
        return token
    return False


def probe_meta(raw_params: Raw | UnsetType) -> dict[str, Any] | None:
    """Read only ``params._meta`` from raw params (for methods we have no type for)."""
    if raw_params is UNSET:
        return None
    try:
        meta = _PROBE_DECODER.decode(raw_params).meta
    except jsonrpc.DECODE_ERRORS:
        return None
    return meta if isinstance(meta, dict) else None


def read_modern_envelope(
    meta: dict[str, Any] | None, supported_versions: tuple[str, ...]
) -> ModernEnvelope | Rejection:
    """Check the envelope of a 2026-07-28 request, in the order the spec's tests expect.

    1. ``_meta`` with both required keys, else -32602 ("a missing required
       per-request _meta field → -32602").
    2. The version is a supported one, else -32022 with ``data.supported`` and
       ``data.requested`` (2026-07-28 basic/versioning).
    3. The capabilities and the optional keys have valid shapes, else -32602.

    A valid envelope of a version we speak is read whole, by one `msgspec.convert`
    into `ModernEnvelope`, whose types say exactly what the steps check. Anything
    else goes through the steps one by one, which decide the answer: the whole read
    changes speed, never behaviour.
    """
    if (
        meta is None
        or PROTOCOL_VERSION_META_KEY not in meta
        or CLIENT_CAPABILITIES_META_KEY not in meta
    ):
        return missing_envelope(meta)
    try:
        envelope = msgspec.convert(meta, ModernEnvelope)
    except msgspec.ValidationError:
        pass
    else:
        if envelope.protocol_version in supported_versions:
            return envelope
    return _check_envelope(meta, supported_versions)


def _check_envelope(
    meta: dict[str, Any], supported_versions: tuple[str, ...]
) -> ModernEnvelope | Rejection:
    """`read_modern_envelope`, one step at a time (the answer to an unusual envelope)."""
    version = meta[PROTOCOL_VERSION_META_KEY]  # (both keys are there: see the caller)
    raw_capabilities = meta[CLIENT_CAPABILITIES_META_KEY]
    if not isinstance(version, str):
        return Rejection(
            jsonrpc.INVALID_PARAMS, "Invalid params: the protocol version must be a string"
        )
    if version not in supported_versions:
        return Rejection(
            jsonrpc.UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
            {"supported": list(supported_versions), "requested": version},
        )
    try:
        capabilities = msgspec.convert(raw_capabilities, ClientCapabilities)
        raw_info = meta.get(CLIENT_INFO_META_KEY)
        info = None if raw_info is None else msgspec.convert(raw_info, Implementation)
    except msgspec.ValidationError as exc:
        return Rejection(jsonrpc.INVALID_PARAMS, f"Invalid params: {exc}")
    log_level = meta.get(LOG_LEVEL_META_KEY)
    if log_level is not None and log_level not in _LOG_LEVELS:
        # "An unrecognized level SHOULD → -32602" (2026-07-28 server/utilities/logging).
        return Rejection(jsonrpc.INVALID_PARAMS, "Invalid params: unknown log level")
    return ModernEnvelope(version, capabilities, info, log_level)


def missing_envelope(meta: dict[str, Any] | None) -> Rejection:
    """The -32602 for an envelope (``_meta``) that lacks one of the two required keys."""
    if meta is None:
        return Rejection(
            jsonrpc.INVALID_PARAMS,
            f"Invalid params: params._meta must carry {PROTOCOL_VERSION_META_KEY!r} "
            f"and {CLIENT_CAPABILITIES_META_KEY!r}",
        )
    missing = [
        key for key in (PROTOCOL_VERSION_META_KEY, CLIENT_CAPABILITIES_META_KEY) if key not in meta
    ]
    return Rejection(
        jsonrpc.INVALID_PARAMS,
        f"Invalid params: params._meta is missing {', '.join(map(repr, missing))}",
    )


def request_envelope(
    protocol_version: str, capabilities: ClientCapabilities, client_info: Implementation | None
) -> dict[str, Any]:
    """The ``_meta`` keys a 2026-07-28 client puts on every request.

    A connection builds this once and passes it to `stamp_request_meta`, which never
    modifies it.
    """
    envelope: dict[str, Any] = {
        PROTOCOL_VERSION_META_KEY: protocol_version,
        CLIENT_CAPABILITIES_META_KEY: capabilities,
    }
    if client_info is not None:
        envelope[CLIENT_INFO_META_KEY] = client_info
    return envelope


def stamp_request_meta(params: Any, own: dict[str, Any] | None, envelope: dict[str, Any]) -> Any:
    """A copy of ``params`` with the 2026-07-28 envelope (`request_envelope`) in its ``_meta``.

    ``own`` is the caller's ``_meta`` (`meta_of` ``params``). Keys the caller already
    put there (a progress token, a log level, trace context) are kept; the version and
    capabilities are always ours, the client info ours unless the caller gave one.
    Without caller keys the envelope itself becomes the ``_meta``: shared, never
    modified, only encoded.
    """
    if own:
        meta = {**own, **envelope}
        if CLIENT_INFO_META_KEY in own:
            meta[CLIENT_INFO_META_KEY] = own[CLIENT_INFO_META_KEY]
    else:
        meta = envelope
    if isinstance(params, dict):  # a user-registered method may use plain dicts
        return {**params, "_meta": meta}
    return msgspec.structs.replace(params, meta=meta)
