"""Resources: static resources and RFC 6570 templates, and how resources/read finds one.

The rules (server/resources, 2024-11-05 … 2026-07-28):

* "Servers MUST validate all resource URIs": every URI is checked (`uri_problem`) before
  any handler sees it;
* a resource that does not exist is -32002 in the legacy era and -32602 in 2026-07-28,
  with ``data.uri`` ("MUST NOT return empty contents for a missing resource");
* text goes in ``text``, binary data base64-encoded in ``blob``; a read may return
  several contents;
* an access check, when the server has one, runs before every list and every read, and
  a resource it refuses is treated as one that does not exist (its existence is not
  revealed).
"""

from __future__ import annotations

import base64
import datetime
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final

import msgspec
from msgspec import UNSET

from mcpcore import jsonrpc, types
from mcpcore.errors import McpError
from mcpcore.server._context import Context
from mcpcore.server._signature import HandlerSignature, inspect_handler
from mcpcore.uritemplate import UriTemplate
from mcpcore.versions import Era

__all__ = [
    "MAX_URI_LENGTH",
    "Listing",
    "RegisteredResource",
    "RegisteredTemplate",
    "ResourceRegistry",
    "metadata_problem",
    "not_found",
    "to_contents",
    "uri_problem",
]

#: The longest URI accepted, in characters. Far beyond any real resource URI, and short
#: enough that a hostile one costs nothing to refuse (browsers cap URLs near 64 KiB).
MAX_URI_LENGTH: Final = 8192
# RFC 3986 §3.1: a scheme, then ":". Everything else must be printable ASCII with
# well-formed percent-encodings (§2.1); no spaces, no controls.
_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_BAD_PERCENT: Final = re.compile(r"%(?![0-9A-Fa-f]{2})")
_FORBIDDEN: Final = re.compile(r'[\x00-\x20\x7f"<>\\^`{|}]')
# ISO 8601 as the schema's examples write it ("2025-01-12T15:00:58Z"): a date, and
# optionally a time with seconds, fractions and an offset.
_ISO_8601: Final = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})"
    r"(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
)


def uri_problem(uri: str) -> str | None:
    """Why ``uri`` is not an acceptable resource URI, or None if it is."""
    if not uri or len(uri) > MAX_URI_LENGTH:
        return "the URI is empty or too long"
    if not uri.isascii() or _FORBIDDEN.search(uri):
        return "the URI contains characters a URI can't contain"
    if _SCHEME.match(uri) is None:
        return "the URI has no scheme"
    if _BAD_PERCENT.search(uri):
        return "the URI has a malformed percent-encoding"
    return None


def metadata_problem(definition: types.Resource | types.ResourceTemplate) -> str | None:
    """Why a resource's listing would break the schema, or None if it would not.

    Checked at registration so that a bad listing fails where it is written, not in
    every client's ``resources/list``: ``priority`` is 0 to 1 ("1 means most important",
    2025-06-18 Annotations), ``lastModified`` an ISO 8601 timestamp, ``size`` a count.
    """
    size = getattr(definition, "size", UNSET)
    if size is not UNSET and (isinstance(size, bool) or size < 0):
        return "size must be a number of bytes, 0 or more"
    annotations = definition.annotations
    if annotations is UNSET:
        return None
    priority = annotations.priority
    if priority is not UNSET and not 0 <= priority <= 1:
        return "annotations.priority must be between 0 and 1"
    modified = annotations.last_modified
    if modified is not UNSET and not _is_timestamp(modified):
        return "annotations.last_modified must be an ISO 8601 timestamp"
    return None


def _is_timestamp(text: str) -> bool:
    match = _ISO_8601.fullmatch(text)
    if match is None:
        return False
    year, month, day, hour, minute, second = (int(part or 0) for part in match.groups())
    try:
        datetime.datetime(year, month, day, hour, minute, second)
    except ValueError:  # month 13, February 30, hour 25...
        return False
    return True


def not_found(uri: str, era: Era) -> McpError:
    """The error for a resource that does not exist, as the era wants it."""
    # 2026-07-28: "A resource that does not exist MUST → -32602 ... MUST NOT emit
    # -32002"; before, -32002 (2024-11-05 … 2025-11-25).
    code = jsonrpc.INVALID_PARAMS if era is Era.MODERN else jsonrpc.RESOURCE_NOT_FOUND
    return McpError(code, "Resource not found", {"uri": uri})


@dataclass(slots=True)
class RegisteredResource:
    """A static resource: its listing and its handler."""

    definition: types.Resource
    handler: Callable[..., Any]
    signature: HandlerSignature


@dataclass(slots=True)
class RegisteredTemplate:
    """A resource template: its listing, its parsed template and its handler."""

    definition: types.ResourceTemplate
    template: UriTemplate
    handler: Callable[..., Any]
    signature: HandlerSignature


#: A source of resources known only at run time (see `ResourceRegistry.add_listing`).
Listing = Callable[[], Iterable[types.Resource]]


class ResourceRegistry:
    """The resources and resource templates of one server, in registration order."""

    __slots__ = ("_listings", "_resources", "_templates")

    def __init__(self) -> None:
        self._resources: dict[str, RegisteredResource] = {}
        self._templates: dict[str, RegisteredTemplate] = {}
        self._listings: list[Listing] = []

    @property
    def empty(self) -> bool:
        """Whether there is nothing to list or read."""
        return not self._resources and not self._templates and not self._listings

    def add_listing(self, listing: Listing) -> None:
        """List the resources ``listing()`` returns after the static ones.

        For resources known only at run time (a folder's files, a table's rows): each
        resources/list page calls ``listing()``, so it should return a snapshot the
        embedder keeps up to date, in a stable order (cursors are positions). Reads of
        these URIs go to a template that matches them, as any other read does.
        """
        self._listings.append(listing)

    def add_resource(
        self, handler: Callable[..., Any], definition: types.Resource
    ) -> RegisteredResource:
        """Register a static resource (see `Server.resource`)."""
        problem = uri_problem(definition.uri) or metadata_problem(definition)
        if problem is not None:
            raise ValueError(f"resource {definition.uri!r}: {problem}")
        if definition.uri in self._resources:
            raise ValueError(f"a resource {definition.uri!r} is already registered")
        signature = inspect_handler(handler, name=definition.name, context_type=Context)
        if signature.arguments_type is not None:
            raise TypeError(f"resource {definition.uri!r}: the handler takes no arguments")
        resource = RegisteredResource(definition, handler, signature)
        self._resources[definition.uri] = resource
        return resource

    def add_template(
        self, handler: Callable[..., Any], definition: types.ResourceTemplate
    ) -> RegisteredTemplate:
        """Register a resource template (see `Server.resource_template`)."""
        template = UriTemplate(definition.uri_template)
        problem = metadata_problem(definition)
        if problem is not None:
            raise ValueError(f"template {definition.uri_template!r}: {problem}")
        if definition.uri_template in self._templates:
            raise ValueError(f"a template {definition.uri_template!r} is already registered")
        signature = inspect_handler(handler, name=definition.name, context_type=Context)
        names = {p.name for p in signature.parameters}
        if names != set(template.variables):
            raise TypeError(
                f"template {definition.uri_template!r}: the handler's parameters "
                f"{sorted(names)} must be the template's variables {sorted(template.variables)}"
            )
        registered = RegisteredTemplate(definition, template, handler, signature)
        self._templates[definition.uri_template] = registered
        return registered

    def remove(self, uri_or_template: str) -> None:
        """Unregister a resource or a template; KeyError if there is none."""
        if self._resources.pop(uri_or_template, None) is None:
            del self._templates[uri_or_template]

    def resources(self) -> list[types.Resource]:
        """Every static resource, in registration order, then what the listings return."""
        listed = [entry.definition for entry in self._resources.values()]
        for listing in self._listings:
            listed.extend(listing())
        return listed

    def templates(self) -> list[types.ResourceTemplate]:
        """Every template, in registration order."""
        return [entry.definition for entry in self._templates.values()]

    def template(self, uri_template: str) -> RegisteredTemplate | None:
        """The template registered with exactly this text."""
        return self._templates.get(uri_template)

    async def read(self, context: Context, uri: str) -> types.ReadResourceResult:
        """Run the handler of the resource (or template) at ``uri``."""
        static = self._resources.get(uri)
        if static is not None:
            value = await _call(static.handler, static.signature, context, {})
            return types.ReadResourceResult(
                contents=to_contents(value, uri, static.definition.mime_type)
            )
        for entry in self._templates.values():
            variables = entry.template.match(uri)
            if variables is None:
                continue
            try:
                bound = msgspec.convert(
                    variables, entry.signature.arguments_type or dict, strict=False
                )
            except msgspec.ValidationError:
                continue  # e.g. {id} typed int, and "abc" in the URI: not this template
            kwargs = (
                {n: getattr(bound, n) for n in bound.__struct_fields__}
                if isinstance(bound, msgspec.Struct)
                else {}
            )
            value = await _call(entry.handler, entry.signature, context, kwargs)
            return types.ReadResourceResult(
                contents=to_contents(value, uri, entry.definition.mime_type)
            )
        raise not_found(uri, context.era)


def to_contents(value: Any, uri: str, mime_type: str | Any) -> list[Any]:
    """What a resource handler returned, as the contents of a read result.

    ``str`` is text; ``bytes`` is binary, base64-encoded into ``blob``; contents are
    kept; a list may mix all of these.
    """
    if isinstance(value, types.ReadResourceResult):
        return value.contents
    if isinstance(value, list):
        return [item for v in value for item in to_contents(v, uri, mime_type)]
    if isinstance(value, types.TextResourceContents | types.BlobResourceContents):
        return [value]
    if isinstance(value, str):
        return [types.TextResourceContents(uri=uri, text=value, mime_type=mime_type)]
    if isinstance(value, bytes | bytearray | memoryview):
        blob = base64.b64encode(value).decode("ascii")
        return [types.BlobResourceContents(uri=uri, blob=blob, mime_type=mime_type)]
    raise TypeError(f"a resource handler returned {type(value).__name__}")


async def _call(
    handler: Callable[..., Any],
    signature: HandlerSignature,
    context: Context,
    kwargs: dict[str, Any],
) -> Any:
    if signature.context_parameter is not None:
        kwargs[signature.context_parameter] = context
    value = handler(**kwargs)
    return await value if signature.is_async else value
