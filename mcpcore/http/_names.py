"""The MCP header names of Streamable HTTP, and which body field ``Mcp-Name`` mirrors.

Header names are case-insensitive (RFC 9110 §5.1); they are written here as the spec
writes them, and compared lower-cased.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

__all__ = [
    "LAST_EVENT_ID_HEADER",
    "METHOD_HEADER",
    "NAME_FIELDS",
    "NAME_HEADER",
    "PROTOCOL_VERSION_HEADER",
    "SESSION_ID_HEADER",
    "name_of",
]

#: The revision the request speaks: 2025-06-18 on, after the handshake; 2026-07-28 on
#: every request, equal to ``_meta``'s protocolVersion.
PROTOCOL_VERSION_HEADER: Final = "MCP-Protocol-Version"
#: The legacy session (2025-03-26 … 2025-11-25); 2026-07-28 servers ignore it.
SESSION_ID_HEADER: Final = "Mcp-Session-Id"
#: 2026-07-28: the JSON-RPC method, on every request and notification POST.
METHOD_HEADER: Final = "Mcp-Method"
#: 2026-07-28: the name or URI the request is about (`NAME_FIELDS`).
NAME_HEADER: Final = "Mcp-Name"
#: Resuming an SSE stream (legacy revisions only).
LAST_EVENT_ID_HEADER: Final = "Last-Event-ID"

#: Method → the ``params`` field ``Mcp-Name`` repeats (2026-07-28 basic/transports);
#: the tasks extension's methods repeat ``taskId`` ("tasks/get, tasks/update and
#: tasks/cancel MUST set Mcp-Name: <taskId>", SEP-2663 "Streamable HTTP").
NAME_FIELDS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "tools/call": "name",
        "prompts/get": "name",
        "resources/read": "uri",
        "tasks/get": "taskId",
        "tasks/update": "taskId",
        "tasks/cancel": "taskId",
    }
)
#: A wire field → its attribute on the decoded params Struct.
_ATTRIBUTES: Final = MappingProxyType({"name": "name", "uri": "uri", "taskId": "task_id"})


def name_of(method: str, params: Any) -> str | None:
    """The value ``Mcp-Name`` must carry for a request, or None if it carries none.

    ``params`` is the decoded params: a dict, or a Struct with the field as attribute.
    A missing or non-string field gives None (the request itself is then invalid, and
    the body's own checks say so).
    """
    field = NAME_FIELDS.get(method)
    if field is None:
        return None
    if isinstance(params, dict):
        value = params.get(field)
    else:
        value = getattr(params, _ATTRIBUTES[field], None)
    return value if isinstance(value, str) else None
