"""The checks a 2026-07-28 request POST goes through before the server reads it, in order.

The order is the one the spec's conformance probes require (CONFORMANCE §4.4, trap
10.2-8); every rejection echoes the request id:

1. ``params._meta`` with ``protocolVersion`` and ``clientCapabilities``, else -32602
   ("a missing required per-request _meta field → -32602", HTTP 400);
2. the ``MCP-Protocol-Version`` header equals ``_meta.protocolVersion``, else -32020
   HeaderMismatch (HTTP 400);
3. the version is one we speak, else -32022 with ``data.supported`` and
   ``data.requested`` (HTTP 400); malformed envelope values are -32602;
4. ``Mcp-Method`` equals the body's ``method`` and ``Mcp-Name`` its name or URI
   (`mcpcore.http.NAME_FIELDS`), else -32020. Whitespace around a header value is
   trimmed; header names are case-insensitive, values case-sensitive; ``Mcp-Name`` is
   decoded from its ``=?base64?…?=`` form first;
5. the ``Mcp-Param-*`` headers of a ``tools/call`` agree with its arguments
   (`mcpcore.http.check_param_headers`), else -32020.

Steps 6 (unknown or removed method: 404 and -32601) and 7 (a missing client capability:
-32021) are the `mcpcore.Connection`'s and the handler's, which run after these.

`read_modern_request` decodes only what the checks look at (the arguments stay raw
unless a tool mirrors some of them into headers); the `Connection` reads the message
itself afterwards. Bodies that are not a well-formed request (not JSON, a batch, a
response) are left to the `Connection` too, which answers them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import msgspec
from msgspec import UNSET, Raw, UnsetType

from mcpcore import jsonrpc
from mcpcore._envelope import Rejection, missing_envelope, read_modern_envelope
from mcpcore.http._names import METHOD_HEADER, NAME_FIELDS, NAME_HEADER, PROTOCOL_VERSION_HEADER
from mcpcore.http._params import HeaderParam, check_param_headers
from mcpcore.http._status import status_for_error
from mcpcore.http._values import MalformedHeaderValueError, decode_value
from mcpcore.types import CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY, RequestId

__all__ = ["HttpRejection", "ModernRequest", "check_modern_request", "read_modern_request"]

_OWS: Final = " \t"
_ANY_DECODER: Final = msgspec.json.Decoder()


class _Params(msgspec.Struct, gc=False):
    meta: Raw | UnsetType = msgspec.field(default=UNSET, name="_meta")
    name: Any = UNSET
    uri: Any = UNSET
    arguments: Raw | UnsetType = UNSET
    task_id: Any = msgspec.field(default=UNSET, name="taskId")


class ModernRequest(msgspec.Struct, gc=False):
    """The parts of a request POST's body that its HTTP headers must agree with.

    Attributes:
        id: The request id (None for a notification).
        method: The method.
        meta: ``params._meta``, if it is an object.
        name: ``params.name``, if present (tools/call, prompts/get).
        uri: ``params.uri``, if present (resources/read).
        arguments: ``params.arguments``, undecoded.
        task_id: ``params.taskId``, if present (the tasks extension's methods).
        meta_json: ``params._meta`` as the body wrote it (None: absent). The same bytes
            are the same ``_meta``: a key to remember a verdict by.
    """

    id: RequestId | None
    method: str
    meta: dict[str, Any] | None
    name: Any
    uri: Any
    arguments: Raw | UnsetType
    task_id: Any = UNSET
    meta_json: bytes | None = None


class _Body(msgspec.Struct, gc=False):
    method: str
    id: int | str | None = None
    params: _Params | UnsetType = UNSET


_BODY_DECODER: Final = msgspec.json.Decoder(_Body)


@dataclass(frozen=True, slots=True)
class HttpRejection:
    """A request refused before the server ran it: the HTTP status and the error to send."""

    status: int
    code: int
    message: str
    request_id: RequestId | None
    data: Any = UNSET

    def body(self) -> bytes:
        """The JSON-RPC error response (the request id echoed)."""
        return jsonrpc.encode_error_response(self.request_id, self.code, self.message, self.data)


def read_modern_request(body: bytes) -> ModernRequest | None:
    """The parts of a request POST the header checks need; None if it is no single request.

    None for anything else (invalid JSON, a batch, a response, a wrong shape, nesting
    past `jsonrpc.MAX_JSON_DEPTH`, which is never decoded): the `Connection` answers
    those itself.
    """
    if jsonrpc.nests_too_deeply(body):
        return None
    try:
        decoded = _BODY_DECODER.decode(body)
    except jsonrpc.DECODE_ERRORS:
        return None
    params = decoded.params
    if params is UNSET:
        return ModernRequest(decoded.id, decoded.method, None, UNSET, UNSET, UNSET)
    meta_json = None if params.meta is UNSET else bytes(params.meta)
    meta = None
    if meta_json is not None:
        try:
            meta = _ANY_DECODER.decode(meta_json)
        except jsonrpc.DECODE_ERRORS:
            return None
    return ModernRequest(
        decoded.id,
        decoded.method,
        meta if isinstance(meta, dict) else None,
        params.name,
        params.uri,
        params.arguments,
        params.task_id,
        meta_json,
    )


def check_modern_request(
    request: ModernRequest,
    header: Callable[[str], str | None],
    supported_versions: tuple[str, ...],
    tool_header_params: Callable[[str], tuple[HeaderParam, ...]],
) -> HttpRejection | None:
    """Run checks 1-5 of the module docstring; the first failure, or None.

    Args:
        request: From `read_modern_request`.
        header: Looks a request header up by name, case-insensitively (None if absent).
        supported_versions: The 2026-07-28-era revisions the server speaks.
        tool_header_params: A tool's `mcpcore.http.header_params` by tool name (empty
            for a tool that mirrors nothing, or one that does not exist).
    """
    return _envelope_problem(request, header, supported_versions) or _header_problem(
        request, header, tool_header_params
    )


def _envelope_problem(
    request: ModernRequest, header: Callable[[str], str | None], supported_versions: tuple[str, ...]
) -> HttpRejection | None:
    """Checks 1-3: the envelope is there, the version header repeats it, it is valid."""
    request_id = request.id
    meta = request.meta
    if (
        meta is None
        or PROTOCOL_VERSION_META_KEY not in meta
        or CLIENT_CAPABILITIES_META_KEY not in meta
    ):
        return _refuse(missing_envelope(meta), request_id)
    version_header = header(PROTOCOL_VERSION_HEADER)
    requested = meta[PROTOCOL_VERSION_META_KEY]
    if version_header is None or version_header.strip(_OWS) != requested:
        return _mismatch(
            request_id, f"{PROTOCOL_VERSION_HEADER} does not match _meta's protocolVersion"
        )
    envelope = read_modern_envelope(meta, supported_versions)
    if isinstance(envelope, Rejection):
        return _refuse(envelope, request_id)
    return None


def _header_problem(
    request: ModernRequest,
    header: Callable[[str], str | None],
    tool_header_params: Callable[[str], tuple[HeaderParam, ...]],
) -> HttpRejection | None:
    """Checks 4-5: the method, name and parameter headers repeat the body."""
    request_id, method = request.id, request.method
    method_header = header(METHOD_HEADER)
    if method_header is None or method_header.strip(_OWS) != method:
        return _mismatch(request_id, f"{METHOD_HEADER} does not match the method")
    field = NAME_FIELDS.get(method)
    problem = None
    if field is not None:
        expected = (
            request.name if field == "name" else request.uri if field == "uri" else request.task_id
        )
        if isinstance(expected, str):
            problem = _name_problem(header(NAME_HEADER), expected)
    if problem is None and method == "tools/call" and isinstance(request.name, str):
        params = tool_header_params(request.name)
        if params:
            problem = _param_problem(params, request.arguments, header)
    return None if problem is None else _mismatch(request_id, problem)


def _name_problem(raw: str | None, expected: str) -> str | None:
    if raw is None:
        return f"{NAME_HEADER} is missing"
    try:
        value = decode_value(raw)
    except MalformedHeaderValueError as exc:
        return f"{NAME_HEADER}: {exc}"
    return None if value == expected else f"{NAME_HEADER} does not match the request"


def _param_problem(
    params: tuple[HeaderParam, ...],
    raw_arguments: Raw | UnsetType,
    header: Callable[[str], str | None],
) -> str | None:
    arguments: Any = None
    if raw_arguments is not UNSET:
        try:
            arguments = _ANY_DECODER.decode(raw_arguments)
        except jsonrpc.DECODE_ERRORS:
            return None  # not JSON the Connection accepts either: it answers
    if arguments is not None and not isinstance(arguments, Mapping):
        return None  # wrong shape: the Connection answers -32602
    return check_param_headers(params, arguments, header)


def _refuse(rejection: Rejection, request_id: RequestId | None) -> HttpRejection:
    return HttpRejection(
        status_for_error(rejection.code),
        rejection.code,
        rejection.message,
        request_id,
        rejection.data,
    )


def _mismatch(request_id: RequestId | None, message: str) -> HttpRejection:
    # "Validation failures → 400 + -32020" (2026-07-28 basic/transports).
    return HttpRejection(
        status_for_error(jsonrpc.HEADER_MISMATCH),
        jsonrpc.HEADER_MISMATCH,
        f"Header mismatch: {message}",
        request_id,
    )
