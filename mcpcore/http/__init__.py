"""The sans-IO rules of MCP's Streamable HTTP transport, shared by servers and clients.

Nothing here does IO: these are the header names, the value encoding and the
``x-mcp-header`` rules that a server checks and a client follows, for any HTTP stack
(the trio transports use them, and so can an ASGI application).
"""

from mcpcore.http._names import (
    LAST_EVENT_ID_HEADER,
    METHOD_HEADER,
    NAME_FIELDS,
    NAME_HEADER,
    PROTOCOL_VERSION_HEADER,
    SESSION_ID_HEADER,
    name_of,
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
    "HEADER_ANNOTATION",
    "LAST_EVENT_ID_HEADER",
    "MAX_SCHEMA_NODES",
    "METHOD_HEADER",
    "NAME_FIELDS",
    "NAME_HEADER",
    "PARAM_HEADER_PREFIX",
    "PROTOCOL_VERSION_HEADER",
    "SESSION_ID_HEADER",
    "HeaderParam",
    "InvalidHeaderAnnotationError",
    "MalformedHeaderValueError",
    "check_param_headers",
    "decode_value",
    "encode_value",
    "header_params",
    "name_of",
    "param_headers",
]
