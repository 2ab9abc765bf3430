"""``x-mcp-header``: tool arguments mirrored into ``Mcp-Param-*`` headers (2026-07-28).

A property of a tool's ``inputSchema`` may carry ``"x-mcp-header": "Region"``; on
Streamable HTTP a ``tools/call`` then repeats that argument in the header
``Mcp-Param-Region`` so that intermediaries can route on it without reading the body.
The rules (2026-07-28 basic/transports, CHECKLIST §14.1):

* the name is a non-empty RFC 9110 token (so no space, colon, control character or
  non-ASCII), unique case-insensitively within the schema;
* only on a ``string``, ``integer`` or ``boolean`` property (never ``number``), reached
  from the root through ``properties`` alone: an annotation under ``items``, a
  composition, a conditional or a ``$defs`` entry is invalid, and ``$ref`` is never
  followed;
* the client sends a present value as a header (booleans ``true``/``false``, integers
  in decimal, strings through `encode_value`) and omits a null or absent one; a tool
  with an invalid annotation is dropped from its tool list;
* the server rejects a value present in the body but missing as a header, and a
  mismatch (400 and -32020); integers compare as numbers (``42`` equals ``42.0``).

Both sides read a schema with `header_params`, so they agree on what is declared.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from mcpcore.http._values import MalformedHeaderValueError, decode_value, encode_value

__all__ = [
    "HEADER_ANNOTATION",
    "MAX_SCHEMA_NODES",
    "PARAM_HEADER_PREFIX",
    "HeaderParam",
    "InvalidHeaderAnnotationError",
    "check_param_headers",
    "header_params",
    "param_headers",
]

HEADER_ANNOTATION: Final = "x-mcp-header"
PARAM_HEADER_PREFIX: Final = "Mcp-Param-"
#: Schema nodes looked at when searching a schema for annotations. Tool schemas come
#: from the server (and, on a client, from the network): this bounds the walk of a
#: hostile one. Real tool schemas have tens of nodes.
MAX_SCHEMA_NODES: Final = 10_000
#: The largest integer a header may mirror: JSON numbers beyond it lose precision in
#: many parsers ("integers must lie within ±(2^53-1)").
_MAX_SAFE_INTEGER: Final = 2**53 - 1

ParamKind = Literal["string", "integer", "boolean"]
_KINDS: Final = frozenset({"string", "integer", "boolean"})
# RFC 9110 §5.6.2: token = 1*tchar.
_TOKEN: Final = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
# Keywords whose values are schemas (or lists or maps of them) off the ``properties``
# path: an annotation found under one of them is invalid. Keywords holding instance
# data (default, const, enum, examples) are never entered: a value there is not an
# annotation.
_ONE_SCHEMA: Final = frozenset(
    {
        "items",
        "contains",
        "additionalProperties",
        "unevaluatedItems",
        "unevaluatedProperties",
        "propertyNames",
        "not",
        "if",
        "then",
        "else",
        "contentSchema",
    }
)
_SCHEMA_LIST: Final = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SCHEMA_MAP: Final = frozenset({"$defs", "definitions", "patternProperties", "dependentSchemas"})


class InvalidHeaderAnnotationError(ValueError):
    """A tool schema whose ``x-mcp-header`` annotations break the rules (the reason says which)."""


@dataclass(frozen=True, slots=True)
class HeaderParam:
    """One argument mirrored into a header.

    Attributes:
        path: The property names from the arguments object down to the value
            (``("region",)``, or ``("location", "region")`` for a nested one).
        name: The annotation's name (``"Region"``).
        kind: The property's JSON type.
    """

    path: tuple[str, ...]
    name: str
    kind: ParamKind

    @property
    def header(self) -> str:
        """The header's name: ``Mcp-Param-<name>``."""
        return PARAM_HEADER_PREFIX + self.name

    def value_in(self, arguments: Mapping[str, Any] | None) -> Any:
        """The argument at `path`, or None where there is none."""
        node: Any = arguments
        for key in self.path:
            if not isinstance(node, Mapping):
                return None
            node = node.get(key)
        return node


def _positions(schema: Any) -> Iterator[tuple[tuple[str, ...] | None, dict[str, Any]]]:
    """Every subschema, in document order, with its ``properties`` path (None once off it)."""
    stack: list[tuple[tuple[str, ...] | None, Any]] = [((), schema)]
    seen = 0
    while stack:
        path, node = stack.pop()
        if not isinstance(node, dict):
            continue
        seen += 1
        if seen > MAX_SCHEMA_NODES:
            raise InvalidHeaderAnnotationError(f"the schema has over {MAX_SCHEMA_NODES} subschemas")
        yield path, node
        children: list[tuple[tuple[str, ...] | None, Any]] = []
        for keyword, value in node.items():
            if keyword == "properties" and isinstance(value, dict):
                children.extend(
                    (None if path is None else (*path, name), sub) for name, sub in value.items()
                )
            elif keyword in _ONE_SCHEMA:
                children.append((None, value))
            elif keyword in _SCHEMA_LIST and isinstance(value, list):
                children.extend((None, sub) for sub in value)
            elif keyword in _SCHEMA_MAP and isinstance(value, dict):
                children.extend((None, sub) for sub in value.values())
        stack.extend(reversed(children))  # popped in document order


def header_params(input_schema: Any) -> tuple[HeaderParam, ...]:
    """The arguments a tool's ``inputSchema`` mirrors into headers, in document order.

    Raises:
        InvalidHeaderAnnotationError: An annotation breaks a rule of the module docstring
            (a client drops such a tool, a server refuses to register it).
    """
    found: list[HeaderParam] = []
    names: dict[str, tuple[str, ...]] = {}
    for path, node in _positions(input_schema):
        if HEADER_ANNOTATION not in node:
            continue
        name = node[HEADER_ANNOTATION]
        if not path:  # None: off the properties path; (): the root object itself
            raise InvalidHeaderAnnotationError(
                f"{HEADER_ANNOTATION} may only sit on a property reached through 'properties'"
            )
        where = "/".join(path)
        if not isinstance(name, str) or not _TOKEN.fullmatch(name):
            raise InvalidHeaderAnnotationError(
                f"property {where!r}: {HEADER_ANNOTATION} must be a non-empty HTTP token"
            )
        kind = node.get("type")
        if not isinstance(kind, str) or kind not in _KINDS:
            raise InvalidHeaderAnnotationError(
                f"property {where!r}: {HEADER_ANNOTATION} needs type string, integer or boolean"
            )
        other = names.setdefault(name.lower(), path)
        if other != path:
            raise InvalidHeaderAnnotationError(
                f"property {where!r}: {HEADER_ANNOTATION} {name!r} repeats the one on "
                f"{'/'.join(other)!r}"
            )
        found.append(HeaderParam(path, name, kind))  # type: ignore[arg-type]  # (checked)
    return tuple(found)


def _render(param: HeaderParam, value: Any) -> str | None:
    """The header text of an argument, or None when it is not of the declared type."""
    if param.kind == "boolean":
        return ("true" if value else "false") if isinstance(value, bool) else None
    if param.kind == "integer":
        if isinstance(value, bool):
            return None
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, int) and abs(value) <= _MAX_SAFE_INTEGER:
            return str(value)
        return None
    return encode_value(value) if isinstance(value, str) else None


def param_headers(
    params: tuple[HeaderParam, ...], arguments: Mapping[str, Any] | None
) -> dict[str, str]:
    """Client: the ``Mcp-Param-*`` headers of a ``tools/call`` with ``arguments``.

    A null or absent argument, or one that is not of its declared type (the server will
    refuse it anyway), gets no header. An empty string is still sent, as an empty value.
    """
    headers: dict[str, str] = {}
    for param in params:
        value = param.value_in(arguments)
        if value is None:
            continue
        text = _render(param, value)
        if text is not None:
            headers[param.header] = text
    return headers


def _matches(param: HeaderParam, text: str, value: Any) -> bool:
    if param.kind == "string":
        return isinstance(value, str) and text == value
    if param.kind == "boolean":
        return isinstance(value, bool) and text == ("true" if value else "false")
    # Integers compare as numbers: "42" matches 42 and 42.0.
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        number = float(text) if any(c in text for c in ".eE") else int(text)
    except ValueError:
        return False
    return not (isinstance(number, float) and not math.isfinite(number)) and number == value


def check_param_headers(
    params: tuple[HeaderParam, ...],
    arguments: Mapping[str, Any] | None,
    header: Callable[[str], str | None],
) -> str | None:
    """Server: why the ``Mcp-Param-*`` headers disagree with ``arguments``, or None.

    Args:
        params: The tool's `header_params`.
        arguments: The ``tools/call`` arguments from the body.
        header: Looks a header up by name, case-insensitively (None when absent).

    Returns:
        None when they agree; else the reason, for the -32020 error's message.
    """
    for param in params:
        value = param.value_in(arguments)
        raw = header(param.header)
        if value is None:
            if raw is not None:
                return f"{param.header} is present but the argument is not"
            continue
        if raw is None:
            return f"{param.header} is missing"
        try:
            text = decode_value(raw)
        except MalformedHeaderValueError as exc:
            return f"{param.header}: {exc}"
        if not _matches(param, text, value):
            return f"{param.header} does not match the argument"
    return None
