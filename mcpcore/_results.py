"""The shape of a server's results in 2026-07-28, checked and completed before they go out."""

from __future__ import annotations

from typing import Any, Final

import msgspec
from msgspec import UNSET

from mcpcore import jsonrpc
from mcpcore._capabilities import required_client_capabilities
from mcpcore._inflight import IncomingRequest
from mcpcore.methods import MethodSpec
from mcpcore.types import (
    SERVER_INFO_META_KEY,
    TASKS_EXTENSION,
    ClientCapabilities,
    CreateTaskResult,
    InitializeResult,
    InputRequiredResult,
)
from mcpcore.versions import Era, era_of

__all__ = [
    "DEFAULT_CACHE_SCOPE",
    "DEFAULT_TTL_MS",
    "check_input_required",
    "decode_result",
    "result_problem",
    "shape_modern_result",
]

#: The cache hints a 2026-07-28 result gets when its author gave none. "ttlMs: 0" means
#: "immediately stale" and "private" never lets a cache share the result across
#: authorization contexts: the safe choice when nobody said otherwise
#: (2026-07-28 server/utilities/caching requires both fields).
DEFAULT_TTL_MS: Final = 0
DEFAULT_CACHE_SCOPE: Final = "private"


class _Shape(msgspec.Struct, frozen=True, gc=False):
    """What a result type lacks until it is shaped: computed once per type."""

    result_type: bool
    cache_hints: bool
    meta: bool


_SHAPES: dict[type, _Shape] = {}


def _learn_shape(result_type: type) -> _Shape:
    fields = set(getattr(result_type, "__struct_fields__", ()))
    shape = _SHAPES[result_type] = _Shape(
        "result_type" in fields,
        {"ttl_ms", "cache_scope"} <= fields and result_type is not InputRequiredResult,
        "meta" in fields,
    )
    return shape


def shape_modern_result(spec: MethodSpec, result: Any, server_meta: dict[str, Any] | None) -> Any:
    """``result`` as 2026-07-28 requires it: with ``resultType``, cache hints, ``serverInfo``.

    "Every result MUST include resultType" (2026-07-28 basic); cacheable results MUST
    carry ``ttlMs`` and ``cacheScope``, except an `InputRequiredResult`, which has no
    cache hints; "servers SHOULD include serverInfo in every result's _meta".
    ``server_meta`` is ``{SERVER_INFO_META_KEY: our Implementation}``, built once by
    the connection; it becomes the result's ``_meta`` when the result has none (shared,
    never modified). The caller's object is never modified: a copy is returned when
    anything is added.
    """
    if not isinstance(result, msgspec.Struct):
        return result  # a user-registered method answering with a plain dict
    shape = _SHAPES.get(type(result)) or _learn_shape(type(result))
    changes: dict[str, Any] = {}
    if shape.result_type and result.result_type is UNSET:  # type: ignore[attr-defined]
        changes["result_type"] = "complete"
    if shape.cache_hints and spec.cacheable:
        if result.ttl_ms is UNSET:  # type: ignore[attr-defined]
            changes["ttl_ms"] = DEFAULT_TTL_MS
        if result.cache_scope is UNSET:  # type: ignore[attr-defined]
            changes["cache_scope"] = DEFAULT_CACHE_SCOPE
    if server_meta is not None and shape.meta:
        meta = result.meta  # type: ignore[attr-defined]
        if meta is UNSET or not meta:
            changes["meta"] = server_meta
        elif SERVER_INFO_META_KEY not in meta:
            changes["meta"] = {**meta, **server_meta}
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


def decode_result(spec: MethodSpec, raw: bytes, *, modern: bool) -> Any:
    """A peer's result, typed; or a string saying why it is unusable.

    In 2026-07-28, "clients MUST treat a missing resultType as complete" and "MUST
    treat an unrecognized resultType as invalid" (basic); ``input_required`` is valid
    only for the methods that may ask for more input (basic/patterns/mrtr).
    """
    if modern and spec.modern_result_type is not None:
        # The tasks extension's own shapes (SEP-2663), not 2025-11-25's.
        return _decode_or_explain(spec, spec.decode_modern_result, raw)
    try:
        result = spec.decode_result(raw)
    except jsonrpc.DECODE_ERRORS as exc:
        other = _decode_other_shape(spec, raw) if modern else _decode_legacy_task(spec, raw)
        return f"Invalid result for {spec.name}: {exc}" if other is None else other
    if not modern:
        return result
    result_type = getattr(result, "result_type", UNSET)
    if result_type is UNSET or result_type == "complete":
        return result
    if result_type == "input_required" and spec.input_required:
        input_required = _decode_input_required(raw)
        if input_required is not None:
            return input_required
    return f"Unrecognized resultType {result_type!r} for {spec.name}"


def _decode_or_explain(spec: MethodSpec, decode: Any, raw: bytes) -> Any:
    try:
        return decode(raw)
    except jsonrpc.DECODE_ERRORS as exc:
        return f"Invalid result for {spec.name}: {exc}"


def _decode_other_shape(spec: MethodSpec, raw: bytes) -> Any:
    """A 2026-07-28 result that is not the method's complete result, or None."""
    if spec.task_result_type is not None:
        # A CreateTaskResult lacks the fields a complete result requires
        # ("resultType: task", SEP-2663; only tools/call may answer one).
        task = _decode_task(spec.task_result_type, raw)
        if task is not None:
            return task
    if spec.input_required:
        # An InputRequiredResult lacks the fields a complete result requires.
        return _decode_input_required(raw)
    return None


def _decode_legacy_task(spec: MethodSpec, raw: bytes) -> CreateTaskResult | None:
    """A 2025-11-25 CreateTaskResult answering a task-augmented tools/call, or None."""
    if spec.task_result_type is None:
        return None  # (only tools/call runs as a task on a server)
    try:
        task: CreateTaskResult = jsonrpc.decoder_for(CreateTaskResult).decode(raw)
    except jsonrpc.DECODE_ERRORS:
        return None
    return task


def _decode_task(expected: Any, raw: bytes) -> Any:
    try:
        result = jsonrpc.decoder_for(expected).decode(raw)
    except jsonrpc.DECODE_ERRORS:
        return None
    return result if getattr(result, "result_type", None) == "task" else None


def _decode_input_required(raw: bytes) -> InputRequiredResult | None:
    try:
        result = jsonrpc.decoder_for(InputRequiredResult).decode(raw)
    except jsonrpc.DECODE_ERRORS:
        return None
    return result if result.result_type == "input_required" else None


def result_problem(
    spec: MethodSpec, request: IncomingRequest, result: Any, negotiated: str | None
) -> str | None:
    """Why ``result`` can't answer ``request``, or None when it can."""
    version = request.protocol_version
    modern = version is not None and era_of(version) is Era.MODERN
    if spec.task_result_type is not None and isinstance(result, spec.task_result_type):
        return _task_problem(request, modern)
    if isinstance(result, CreateTaskResult):
        return _legacy_task_problem(spec, modern)
    expected = spec.result_type
    if modern and spec.modern_result_type is not None:
        expected = spec.modern_result_type
    if (
        type(result) is not expected  # the method's own type (the common case) is fine
        and isinstance(result, msgspec.Struct)
        and isinstance(expected, type)
        and not isinstance(result, (expected, InputRequiredResult))
    ):
        return f"{spec.name} answers with {expected.__name__}, not {type(result).__name__}"
    if isinstance(result, InputRequiredResult):
        return _input_required_problem(spec, request, result, modern)
    if spec.name == "initialize" and (
        not isinstance(result, InitializeResult) or result.protocol_version != negotiated
    ):
        return f"the initialize result must carry the negotiated version {negotiated!r}"
    return None


def _input_required_problem(
    spec: MethodSpec, request: IncomingRequest, result: InputRequiredResult, modern: bool
) -> str | None:
    if not modern:
        return "InputRequiredResult exists only in 2026-07-28; use a server-to-client request"
    if not spec.input_required:
        # "ONLY for tools/call, resources/read and prompts/get" (2026-07-28 mrtr).
        return f"{spec.name} can't answer with InputRequiredResult"
    return check_input_required(result, request.client_capabilities)


def _legacy_task_problem(spec: MethodSpec, modern: bool) -> str | None:
    """Why a 2025-11-25 CreateTaskResult can't answer, or None when it can."""
    # The core tasks of 2025-11-25: a task-augmented tools/call (the only request a
    # server runs as a task, "requests.tools.call"), in that era only.
    if modern or spec.task_result_type is None:
        return f"{spec.name} can't answer with a 2025-11-25 CreateTaskResult"
    return None


def _task_problem(request: IncomingRequest, modern: bool) -> str | None:
    """Why a task can't answer ``request`` (a tools/call), or None when it can."""
    if not modern:
        return "a CreateTaskResult of the tasks extension exists only in 2026-07-28"
    capabilities = request.client_capabilities
    extensions = None if capabilities is None else capabilities.extensions
    if not extensions or TASKS_EXTENSION not in extensions:
        # "MUST NOT return a task to a client that did not declare it on that
        # request" (SEP-2663 "Capability Negotiation").
        return "the client did not declare the tasks extension on this request"
    return None
