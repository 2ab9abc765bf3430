"""The sans-IO rules of MCP's Streamable HTTP transport, shared by servers and clients.

Nothing here does IO: these are the header names, the value encoding and the
``x-mcp-header`` rules that a server checks and a client follows, for any HTTP stack
(the trio transports use them, and so can an ASGI application).
"""

from mcpcore.http._client_headers import OutgoingMessage, describe_message, message_headers
from mcpcore.http._client_responses import (
    MAX_SESSION_ID_LENGTH,
    MODERN_ERROR_CODES,
    BodyError,
    Refusal,
    error_in_body,
    judge_refusal,
    media_type,
    valid_session_id,
)
from mcpcore.http._client_tools import (
    MAX_INVALID_TOOLS,
    MAX_KNOWN_TOOLS,
    InvalidTool,
    ToolHeaderRegistry,
)
from mcpcore.http._media import (
    JSON_MEDIA_TYPE,
    NOT_ACCEPTABLE_STATUS,
    SSE_MEDIA_TYPE,
    UNSUPPORTED_MEDIA_STATUS,
    accepts,
    accepts_json_and_sse,
    is_json,
    names,
)
from mcpcore.http._modern_checks import (
    HttpRejection,
    ModernRequest,
    check_modern_request,
    read_modern_request,
)
from mcpcore.http._names import (
    LAST_EVENT_ID_HEADER,
    METHOD_HEADER,
    NAME_FIELDS,
    NAME_HEADER,
    PROTOCOL_VERSION_HEADER,
    SESSION_ID_HEADER,
    name_of,
)
from mcpcore.http._origin import (
    DEFAULT_ALLOWED_HOSTS,
    MISDIRECTED_STATUS,
    ORIGIN_REJECTED_STATUS,
    OriginPolicy,
    split_host,
)
from mcpcore.http._params import (
    HEADER_ANNOTATION,
    MAX_SCHEMA_NODES,
    PARAM_HEADER_PREFIX,
    HeaderParam,
    InvalidHeaderAnnotationError,
    check_param_headers,
    header_params,
    param_headers,
)
from mcpcore.http._routing import DEFAULT_LEGACY_VERSION, legacy_version, route_for
from mcpcore.http._status import (
    ERROR_STATUSES,
    MessageKind,
    PeekedMessage,
    peek_message,
    status_for_error,
)
from mcpcore.http._values import (
    BASE64_PREFIX,
    BASE64_SUFFIX,
    MalformedHeaderValueError,
    decode_value,
    encode_value,
)

__all__ = [
    "BASE64_PREFIX",
    "BASE64_SUFFIX",
    "DEFAULT_ALLOWED_HOSTS",
    "DEFAULT_LEGACY_VERSION",
    "ERROR_STATUSES",
    "HEADER_ANNOTATION",
    "JSON_MEDIA_TYPE",
    "LAST_EVENT_ID_HEADER",
    "MAX_INVALID_TOOLS",
    "MAX_KNOWN_TOOLS",
    "MAX_SCHEMA_NODES",
    "MAX_SESSION_ID_LENGTH",
    "METHOD_HEADER",
    "MISDIRECTED_STATUS",
    "MODERN_ERROR_CODES",
    "NAME_FIELDS",
    "NAME_HEADER",
    "NOT_ACCEPTABLE_STATUS",
    "ORIGIN_REJECTED_STATUS",
    "PARAM_HEADER_PREFIX",
    "PROTOCOL_VERSION_HEADER",
    "SESSION_ID_HEADER",
    "SSE_MEDIA_TYPE",
    "UNSUPPORTED_MEDIA_STATUS",
    "BodyError",
    "HeaderParam",
    "HttpRejection",
    "InvalidHeaderAnnotationError",
    "InvalidTool",
    "MalformedHeaderValueError",
    "MessageKind",
    "ModernRequest",
    "OriginPolicy",
    "OutgoingMessage",
    "PeekedMessage",
    "Refusal",
    "ToolHeaderRegistry",
    "accepts",
    "accepts_json_and_sse",
    "check_modern_request",
    "check_param_headers",
    "decode_value",
    "describe_message",
    "encode_value",
    "error_in_body",
    "header_params",
    "is_json",
    "judge_refusal",
    "legacy_version",
    "media_type",
    "message_headers",
    "name_of",
    "names",
    "param_headers",
    "peek_message",
    "read_modern_request",
    "route_for",
    "split_host",
    "status_for_error",
    "valid_session_id",
]
