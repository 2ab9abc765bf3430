"""The sans-IO rules of MCP's Streamable HTTP transport, shared by servers and clients.

Nothing here does IO: these are the header names, the value encoding and the
``x-mcp-header`` rules that a server checks and a client follows, for any HTTP stack
(the trio transports use them, and so can an ASGI application).
"""

from mcpcore.http._media import (
    JSON_MEDIA_TYPE,
    NOT_ACCEPTABLE_STATUS,
    SSE_MEDIA_TYPE,
    UNSUPPORTED_MEDIA_STATUS,
    accepts,
    accepts_json_and_sse,
    is_json,
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
    "MAX_SCHEMA_NODES",
    "METHOD_HEADER",
    "MISDIRECTED_STATUS",
    "NAME_FIELDS",
    "NAME_HEADER",
    "NOT_ACCEPTABLE_STATUS",
    "ORIGIN_REJECTED_STATUS",
    "PARAM_HEADER_PREFIX",
    "PROTOCOL_VERSION_HEADER",
    "SESSION_ID_HEADER",
    "SSE_MEDIA_TYPE",
    "UNSUPPORTED_MEDIA_STATUS",
    "HeaderParam",
    "HttpRejection",
    "InvalidHeaderAnnotationError",
    "MalformedHeaderValueError",
    "MessageKind",
    "ModernRequest",
    "OriginPolicy",
    "PeekedMessage",
    "accepts",
    "accepts_json_and_sse",
    "check_modern_request",
    "check_param_headers",
    "decode_value",
    "encode_value",
    "header_params",
    "is_json",
    "legacy_version",
    "name_of",
    "param_headers",
    "peek_message",
    "read_modern_request",
    "route_for",
    "split_host",
    "status_for_error",
]
