"""The shape of a server's results in 2026-07-28, checked and completed before they go out."""

from __future__ import annotations

from typing import Any, Final

import msgspec
from msgspec import UNSET

from mcpcore._capabilities import required_client_capabilities
from mcpcore.methods import MethodSpec
from mcpcore.types import (
    SERVER_INFO_META_KEY,
    ClientCapabilities,
    Implementation,
    InputRequiredResult,
)

__all__ = ["DEFAULT_CACHE_SCOPE", "DEFAULT_TTL_MS", "check_input_required", "shape_modern_result"]

#: The cache hints a 2026-07-28 result gets when its author gave none. "ttlMs: 0" means
#: "immediately stale" and "private" never lets a cache share the result across
#: authorization contexts: the safe choice when nobody said otherwise
#: (2026-07-28 server/utilities/caching requires both fields).
DEFAULT_TTL_MS: Final = 0
DEFAULT_CACHE_SCOPE: Final = "private"


def shape_modern_result(spec: MethodSpec, result: Any, server_info: Implementation | None) -> Any:
    """``result`` as 2026-07-28 requires it: with ``resultType``, cache hints, ``serverInfo``.

    "Every result MUST include resultType" (2026-07-28 basic); cacheable results MUST
    carry ``ttlMs`` and ``cacheScope``, except an `InputRequiredResult`, which has no
    cache hints; "servers SHOULD include serverInfo in every result's _meta". The
    caller's object is never modified: a copy is returned when anything is added.
    """
    if not isinstance(result, msgspec.Struct):
        return result  # a user-registered method answering with a plain dict
    changes: dict[str, Any] = {}
    if getattr(result, "result_type", None) is UNSET:
        changes["result_type"] = "complete"
    if spec.cacheable and not isinstance(result, InputRequiredResult):
        if getattr(result, "ttl_ms", None) is UNSET:
            changes["ttl_ms"] = DEFAULT_TTL_MS
        if getattr(result, "cache_scope", None) is UNSET:
            changes["cache_scope"] = DEFAULT_CACHE_SCOPE
    if server_info is not None and hasattr(result, "meta"):
        meta = result.meta
        if meta is UNSET or SERVER_INFO_META_KEY not in meta:
            changes["meta"] = {**(meta or {}), SERVER_INFO_META_KEY: server_info}
    return msgspec.structs.replace(result, **changes) if changes else result


def check_input_required(
    result: InputRequiredResult, capabilities: ClientCapabilities | None
) -> str | None:
    """Why an `InputRequiredResult` may not be sent, or None when it may.

    2026-07-28 basic/patterns/mrtr: "MUST include at least one of inputRequests or
    requestState"; input requests are plain ``{method, params}`` objects, not JSON-RPC
    messages (no ``jsonrpc``, no ``id``); and "MUST NOT include an input request kind
    the client did not declare in this request's capabilities".
    """
    if result.input_requests is UNSET and result.request_state is UNSET:
        return "an InputRequiredResult needs inputRequests or requestState"
    for key, request in (result.input_requests or {}).items():
        if request.jsonrpc is not UNSET or request.id is not UNSET:
            return f"input request {key!r} must not carry jsonrpc or id"
        method = type(request).__struct_config__.tag
        if required_client_capabilities(str(method), request.params, capabilities) is not None:
            return f"input request {key!r} ({method}) needs a capability the client did not declare"
    return None
