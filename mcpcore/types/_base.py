"""The conventions every MCP type follows, and the scalar types the schema shares.

Every MCP object is a `msgspec.Struct` derived from `MCPType`:

* keyword-only construction, snake_case attributes, exact wire names. `rename="camel"`
  turns ``mime_type`` into ``mimeType``; the one name camel-casing can't produce,
  ``_meta``, is spelled out with ``msgspec.field(name="_meta")``.
* Optional fields default to `UNSET`, which msgspec leaves out of the output, so a field
  that was absent on the wire stays absent when re-encoded and stays different from an
  explicit ``null``.
* Unknown fields are ignored on decode: every object in the schema is open
  (``[key: string]: unknown``) and the spec grows new fields between revisions.
* ``omit_defaults`` stays off. A constant with a default, such as ``"jsonrpc": "2.0"``,
  must still be written out.
* ``gc=False``: decoded protocol values are trees, never cycles, and keeping them out of
  the cycle collector is one of msgspec's documented speed-ups. Don't build a cycle
  through an MCP value (nothing in the protocol needs one).

One Struct serves every revision. A field that some revisions require and others lack
(``resultType``, ``ttlMs``) is optional here, and the `Connection` enforces or fills it
for the revision in use.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import msgspec
from msgspec import UNSET, UnsetType

__all__ = [
    "UNSET",
    "Cursor",
    "JSONArray",
    "JSONObject",
    "JSONValue",
    "LoggingLevel",
    "MCPType",
    "MetaObject",
    "ProgressToken",
    "RequestId",
    "ResultType",
    "Role",
    "UnsetType",
    "meta_field",
]


class MCPType(
    msgspec.Struct,
    kw_only=True,
    rename="camel",
    omit_defaults=False,
    gc=False,
):
    """Base class of every MCP protocol object."""


def meta_field() -> Any:
    """A ``_meta`` field: optional, absent by default, named ``_meta`` on the wire.

    Typed `Any` so it can sit on the right-hand side of any annotation; annotate the
    attribute itself as ``MetaObject | UnsetType``.
    """
    return msgspec.field(default=UNSET, name="_meta")


# JSON values, as the schema's JSONValue / JSONObject / JSONArray.
JSONValue: TypeAlias = Any
JSONObject: TypeAlias = dict[str, Any]
JSONArray: TypeAlias = list[Any]

#: A ``_meta`` object. Kept as a plain dict: its keys are open-ended (reverse-DNS
#: prefixed, OpenTelemetry's ``traceparent``...) and must survive a round trip.
MetaObject: TypeAlias = dict[str, Any]

#: "A request id MUST be a string or integer; MUST NOT be null" (2024-11-05 basic).
#: msgspec rejects floats and booleans for ``int``, so ``1.0`` and ``true`` never pass.
RequestId: TypeAlias = int | str

#: Progress tokens share the request id's shape (2024-11-05 basic/utilities/progress).
ProgressToken: TypeAlias = int | str

#: An opaque pagination cursor (2024-11-05 server/utilities/pagination).
Cursor: TypeAlias = str

#: The role of a message sender in sampling and prompts.
Role: TypeAlias = Literal["user", "assistant"]

#: RFC 5424 severities, least severe first (2024-11-05 server/utilities/logging).
LoggingLevel: TypeAlias = Literal[
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"
]

#: ``resultType`` (2026-07-28): "complete", "input_required", or an extension's value.
ResultType: TypeAlias = str
