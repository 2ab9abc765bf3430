"""Which dialects a document may declare, and where each one puts subschemas.

MCP 2025-11-25: "JSON Schema 2020-12 is the default dialect when `$schema` is absent.
Implementations MUST support 2020-12, MUST validate by the declared dialect, and MUST
gracefully error on unsupported dialects". We honour 2020-12 and draft-07; `dialect_of`
reads a document's ``$schema`` (2020-12 Core §8.1.1) and rejects any other. The
subschema positions drive the scan for ``$id`` and anchors, which must know where
subschemas can be without compiling them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Final

from mcpcore.jsonschema._errors import SchemaError
from mcpcore.jsonschema._state import _show

DRAFT_2020_12: Final = "2020-12"
DRAFT_07: Final = "draft-07"
#: The ``$schema`` values we honour (MCP 2025-11-25: 2020-12 is the default and MUST be
#: supported; other dialects MUST be validated by their own rules or fail gracefully).
#: An empty fragment names the same resource, so ``…/schema#`` is accepted too.
DIALECTS: Final[Mapping[str, str]] = {
    "https://json-schema.org/draft/2020-12/schema": DRAFT_2020_12,
    "https://json-schema.org/draft/2020-12/schema#": DRAFT_2020_12,
    **{
        f"{scheme}://json-schema.org/draft-07/schema{hash_}": DRAFT_07
        for scheme in ("http", "https")
        for hash_ in ("", "#")
    },
}


@dataclasses.dataclass(frozen=True)
class _Positions:
    """Where a dialect puts subschemas: as a value, in an array, as an object's values."""

    single: tuple[str, ...]
    arrays: tuple[str, ...]
    maps: tuple[str, ...]


_POSITIONS: Final[Mapping[str, _Positions]] = {
    # 2020-12 Core §10.2-10.3, §11, §8.2.4.
    DRAFT_2020_12: _Positions(
        single=(
            *("additionalProperties", "propertyNames", "items", "contains", "not"),
            *("if", "then", "else", "unevaluatedItems", "unevaluatedProperties"),
        ),
        arrays=("prefixItems", "allOf", "anyOf", "oneOf"),
        maps=("properties", "patternProperties", "dependentSchemas", "$defs"),
    ),
    # draft-07 Validation §6.4-6.7, §9; `items` is a schema or an array of them.
    DRAFT_07: _Positions(
        single=(
            *("additionalProperties", "propertyNames", "items", "additionalItems"),
            *("contains", "not", "if", "then", "else"),
        ),
        arrays=("items", "allOf", "anyOf", "oneOf"),
        maps=("properties", "patternProperties", "dependencies", "definitions"),
    ),
}


def dialect_of(schema: Any) -> str:
    """The dialect a document declares in its root ``$schema``; SchemaError if unsupported."""
    if not isinstance(schema, Mapping) or "$schema" not in schema:
        return DRAFT_2020_12  # MCP 2025-11-25: the default when `$schema` is absent
    declared = schema["$schema"]
    dialect = DIALECTS.get(declared) if isinstance(declared, str) else None
    if dialect is None:
        raise SchemaError(
            f"#/$schema: unsupported dialect {_show(declared)}; "
            "supported are JSON Schema 2020-12 and draft-07"
        )
    return dialect
