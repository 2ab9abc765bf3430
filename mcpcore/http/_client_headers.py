"""Client: the MCP headers of each POST, read off the JSON-RPC message it carries.

A Streamable HTTP client POSTs every message on its own. What the headers say depends
on the era the message speaks, and that is written in the message itself:

* a 2026-07-28 request carries ``_meta["io.modelcontextprotocol/protocolVersion"]``;
  its POST repeats the version (``MCP-Protocol-Version``, which "MUST equal
  ``_meta.protocolVersion``"), the method (``Mcp-Method``), the name or URI it is about
  (``Mcp-Name``, for ``tools/call``, ``prompts/get`` and ``resources/read``) and, for
  ``tools/call``, the arguments the tool's schema marks with ``x-mcp-header``
  (``Mcp-Param-*``). It carries no session: "sessions are removed" (2026-07-28
  basic/transports);
* a legacy message carries the session (``Mcp-Session-Id``, "(C) MUST echo it on all
  later requests") and, on everything after ``initialize``, the negotiated version
  ("MCP-Protocol-Version: <negotiated> MUST be sent on every request after init",
  2025-06-18 basic/transports).

Reading the header values from the bytes about to be sent (rather than from what the
caller meant to send) keeps headers and body in agreement by construction: the server
checks exactly that agreement (-32020). `describe_message` decodes only the few fields
the headers need; the arguments stay raw unless a tool mirrors one of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import msgspec

from mcpcore.http._names import (
    METHOD_HEADER,
    NAME_FIELDS,
    NAME_HEADER,
    PROTOCOL_VERSION_HEADER,
    SESSION_ID_HEADER,
)
from mcpcore.http._params import HeaderParam, param_headers
from mcpcore.http._values import encode_value
from mcpcore.types import PROTOCOL_VERSION_META_KEY, RequestId

__all__ = ["OutgoingMessage", "describe_message", "message_headers"]

_INITIALIZE: Final = "initialize"


class _Meta(msgspec.Struct, gc=False):
    protocol_version: Any = msgspec.field(default=None, name=PROTOCOL_VERSION_META_KEY)


class _Params(msgspec.Struct, gc=False):
    name: Any = None
    uri: Any = None
    task_id: Any = msgspec.field(default=None, name="taskId")
    arguments: msgspec.Raw = msgspec.Raw()  # (empty when absent)
    meta: _Meta | None = msgspec.field(default=None, name="_meta")


class _Message(msgspec.Struct, gc=False):
    id: int | str | None = None
    method: str | None = None
    params: _Params | None = None


class _Bare(msgspec.Struct, gc=False):
    """The fallback view, when ``params`` is not an object of the usual shape."""

    id: int | str | None = None
    method: str | None = None


_DECODER: Final = msgspec.json.Decoder(_Message)
_BARE_DECODER: Final = msgspec.json.Decoder(_Bare)
_ARGUMENTS_DECODER: Final = msgspec.json.Decoder(dict[str, Any])


@dataclass(frozen=True, slots=True)
class OutgoingMessage:
    """What a POST's headers need to know about the message in its body.

    Attributes:
        request_id: The id of a request (or of a response we send); None for a
            notification.
        method: The method of a request or notification; None for a response.
        protocol_version: The ``_meta`` protocol version of a 2026-07-28 request; None
            for everything legacy (and for anything without one).
        name: What ``Mcp-Name`` repeats (``params.name`` or ``params.uri``), unencoded;
            None when the method has no name field or the field is not a string.
        arguments: ``params.arguments`` as raw JSON, when there are any.
    """

    request_id: RequestId | None
    method: str | None
    protocol_version: str | None = None
    name: str | None = None
    arguments: msgspec.Raw | None = None

    @property
    def is_request(self) -> bool:
        """Whether the message is a request (a method and an id)."""
        return self.method is not None and self.request_id is not None

    @property
    def is_modern(self) -> bool:
        """Whether the message speaks 2026-07-28 (its ``_meta`` names the version)."""
        return self.protocol_version is not None

    def argument_values(self) -> Mapping[str, Any] | None:
        """The decoded ``params.arguments`` (None when absent or not an object)."""
        if self.arguments is None:
            return None
        try:
            arguments: dict[str, Any] = _ARGUMENTS_DECODER.decode(self.arguments)
        except msgspec.ValidationError:
            return None
        return arguments


def describe_message(data: bytes) -> OutgoingMessage:
    """Read what the headers need from one encoded JSON-RPC message.

    The message is our own (built by a `Connection`), so it is valid JSON-RPC; a shape
    this reader does not expect only costs the optional headers, never an exception.

    Raises:
        msgspec.DecodeError: ``data`` is not JSON at all.
    """
    try:
        message = _DECODER.decode(data)
    except msgspec.ValidationError:
        try:
            bare = _BARE_DECODER.decode(data)
        except msgspec.ValidationError:
            return OutgoingMessage(None, None)
        return OutgoingMessage(bare.id, bare.method)
    params = message.params
    method = message.method
    if params is None or method is None:
        return OutgoingMessage(message.id, method)
    version = params.meta.protocol_version if params.meta is not None else None
    field = NAME_FIELDS.get(method)
    name = (
        None
        if field is None
        else params.uri
        if field == "uri"
        else params.task_id
        if field == "taskId"
        else params.name
    )
    return OutgoingMessage(
        message.id,
        method,
        version if isinstance(version, str) else None,
        name if isinstance(name, str) else None,
        params.arguments or None,
    )


def message_headers(
    message: OutgoingMessage,
    *,
    negotiated_version: str | None = None,
    session_id: str | None = None,
    header_params: tuple[HeaderParam, ...] = (),
) -> list[tuple[str, str]]:
    """The MCP headers of the POST that carries ``message``.

    Args:
        message: What `describe_message` read.
        negotiated_version: Legacy: the version ``initialize`` settled on (sent on
            everything but ``initialize`` itself); None before the handshake.
        session_id: Legacy: the ``Mcp-Session-Id`` the server issued, if any.
        header_params: For a 2026-07-28 ``tools/call``: the called tool's
            `mcpcore.http.header_params` (see `ToolHeaderRegistry`).

    Returns:
        ``(name, value)`` pairs, values ready for the wire.
    """
    version, method = message.protocol_version, message.method
    if version is not None and method is not None:  # (a version is read off requests only)
        headers = [(PROTOCOL_VERSION_HEADER, version), (METHOD_HEADER, encode_value(method))]
        if message.name is not None:
            headers.append((NAME_HEADER, encode_value(message.name)))
        if header_params:
            headers.extend(param_headers(header_params, message.argument_values()).items())
        return headers
    headers = []
    if session_id is not None:
        headers.append((SESSION_ID_HEADER, session_id))
    if negotiated_version is not None and message.method != _INITIALIZE:
        headers.append((PROTOCOL_VERSION_HEADER, negotiated_version))
    return headers
