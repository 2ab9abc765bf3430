"""Pass 1 of compiling: a document's dialect, base URIs, resources and anchors.

Before any node is built, `_Document` walks every subschema position its dialect
defines, computing base URIs from ``$id`` (2020-12 Core §8.2.1) and recording embedded
resources and anchors (§8.2.2), so that any ``$ref`` (§8.2.3.1) can then be resolved
by `_Document._resolve` without touching anything outside the document. MCP 2026-07-28:
implementations "MUST NOT auto-dereference network `$ref`s", so this performs no IO:
a reference it can't resolve here is a SchemaError.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, Final
from urllib.parse import unquote, urldefrag, urljoin

from mcpcore.jsonschema._dialects import _POSITIONS, DIALECTS, DRAFT_07, dialect_of
from mcpcore.jsonschema._errors import MAX_SUBSCHEMAS, SchemaError
from mcpcore.jsonschema._state import _show

# Core §8.2.2: an anchor is a plain name, like an XML NCName.
_ANCHOR: Final = re.compile(r"[A-Za-z_][-A-Za-z0-9._]*")
# RFC 6901 §4: an array index is decimal without leading zeros.
_INDEX: Final = re.compile(r"0|[1-9][0-9]*")


def _join(base: str, reference: str) -> str:
    """Resolve a URI reference against a base (RFC 3986 §5), tolerating an empty base."""
    if not base:
        return reference
    if reference.startswith("#"):
        return urldefrag(base)[0] + reference
    return urljoin(base, reference)


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


def _pointer_tokens(fragment: str) -> Iterator[str]:
    """RFC 6901 §4/§6: percent-decode the fragment, split on ``/``, unescape ``~1``, ``~0``."""
    for token in unquote(fragment).split("/")[1:]:
        yield token.replace("~1", "/").replace("~0", "~")


class _Document:
    """One document's dialect, and the resources and anchors it embeds."""

    def __init__(self, schema: Any, max_depth: int) -> None:
        self.max_depth = max_depth
        self.dialect = dialect_of(schema)
        self.positions = _POSITIONS[self.dialect]
        self.draft7 = self.dialect == DRAFT_07
        self.resources: dict[str, Any] = {"": schema}
        self.anchors: dict[tuple[str, str], Any] = {}
        self.bases: dict[int, str] = {}
        self.scanned = 0
        self._scan(schema, "", "#", 0)

    def _scan(self, schema: Any, base: str, loc: str, depth: int) -> None:
        if not isinstance(schema, Mapping):
            return
        self._check_size(loc, depth, self.scanned)
        self.scanned += 1
        base = self.bases[id(schema)] = self._enter(schema, base, loc, register=True)
        for key in self.positions.single:
            value = schema.get(key)
            if isinstance(value, Mapping):
                self._scan(value, base, f"{loc}/{key}", depth + 1)
        for key in self.positions.arrays:
            value = schema.get(key)
            if isinstance(value, (list, tuple)):
                for index, item in enumerate(value):
                    self._scan(item, base, f"{loc}/{key}/{index}", depth + 1)
        for key in self.positions.maps:
            value = schema.get(key)
            if isinstance(value, Mapping):
                for name, item in value.items():
                    self._scan(item, base, f"{loc}/{key}/{_escape(str(name))}", depth + 1)

    def _check_size(self, loc: str, depth: int, count: int) -> None:
        if depth > self.max_depth:
            raise SchemaError(f"{loc}: the schema nests deeper than {self.max_depth} levels")
        if count >= MAX_SUBSCHEMAS:
            raise SchemaError(f"{loc}: the schema has more than {MAX_SUBSCHEMAS} subschemas")

    def _enter(self, schema: Mapping[str, Any], base: str, loc: str, *, register: bool) -> str:
        """The base URI inside ``schema``; with ``register``, record its $id and anchors."""
        if loc != "#" and "$schema" in schema:
            declared = schema["$schema"]
            if not isinstance(declared, str) or DIALECTS.get(declared) != self.dialect:
                raise SchemaError(f"{loc}/$schema: one document must keep one dialect")
        if self.draft7 and "$ref" in schema:
            return base  # draft-07 Core §8.3: everything beside `$ref` is ignored, `$id` too
        if "$id" in schema:
            base = self._enter_id(schema, base, loc, register=register)
        if not self.draft7:
            # 2020-12 Core §8.2.2. A $dynamicAnchor is also a plain anchor (§8.2.2);
            # only $dynamicRef's dynamic-scope lookup is unsupported.
            for keyword in ("$anchor", "$dynamicAnchor"):
                if keyword in schema:
                    name = schema[keyword]
                    if not isinstance(name, str) or not _ANCHOR.fullmatch(name):
                        raise SchemaError(f"{loc}/{keyword} must be a plain name")
                    if register:
                        self._register(self.anchors, (base, name), schema, f"{loc}/{keyword}")
        return base

    def _enter_id(self, schema: Mapping[str, Any], base: str, loc: str, *, register: bool) -> str:
        """The base URI ``schema``'s ``$id`` sets; with ``register``, record it."""
        ident = schema["$id"]
        if not isinstance(ident, str):
            raise SchemaError(f"{loc}/$id must be a string")
        uri, fragment = urldefrag(ident)
        if uri:
            base = _join(base, uri)
            if register:
                self._register(self.resources, base, schema, f"{loc}/$id")
        if fragment and not self.draft7:
            # 2020-12 Core §8.2.1: "$id" MUST NOT contain a non-empty fragment.
            raise SchemaError(f"{loc}/$id must not have a fragment; use $anchor")
        if fragment and not fragment.startswith("/") and register:
            # draft-07 Core §8.2.3: a plain-name fragment in "$id" is an anchor.
            self._register(self.anchors, (base, fragment), schema, f"{loc}/$id")
        return base

    @staticmethod
    def _register(table: dict[Any, Any], key: Any, schema: Any, where: str) -> None:
        if table.setdefault(key, schema) is not schema:
            raise SchemaError(f"{where}: defined twice in one document")

    def _resolve(self, reference: Any, base: str, loc: str) -> tuple[Any, str]:
        """The schema a ``$ref`` names (Core §8.2.3.1), never looking outside the document.

        MCP 2026-07-28: "MUST NOT auto-dereference network `$ref`s"; a reference to a
        resource not embedded in this document is a SchemaError here, at compile time.
        """
        where = f"{loc}/$ref"
        if not isinstance(reference, str):
            raise SchemaError(f"{where} must be a string")
        uri, fragment = urldefrag(_join(base, reference))
        resource = self.resources.get(uri)
        if resource is None:
            raise SchemaError(
                f"{where}: {_show(reference)} is not defined in this schema "
                "(external references are never fetched)"
            )
        if not fragment:
            return resource, uri
        if fragment.startswith("/"):
            target = resource
            for token in _pointer_tokens(fragment):
                if isinstance(target, Mapping) and token in target:
                    target = target[token]
                elif isinstance(target, (list, tuple)) and _INDEX.fullmatch(token):
                    if int(token) >= len(target):
                        raise SchemaError(f"{where}: {_show(reference)} points at nothing")
                    target = target[int(token)]
                else:
                    raise SchemaError(f"{where}: {_show(reference)} points at nothing")
            return target, uri
        target = self.anchors.get((uri, unquote(fragment)))
        if target is None:
            raise SchemaError(f"{where}: no anchor named {_show(fragment)}")
        return target, uri
