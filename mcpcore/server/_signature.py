"""From a handler's Python signature to what MCP publishes about it, and back.

A tool ``async def add(a: int, b: int = 0) -> int`` becomes an arguments Struct (built
once with `msgspec.defstruct`), whose JSON Schema is the tool's ``inputSchema`` and
which validates every call's arguments in one `msgspec.convert`. A parameter annotated
`Context` receives the request's context instead. ``Annotated[str,
msgspec.Meta(description=...)]`` documents a parameter in the schema.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec

__all__ = ["HandlerSignature", "inspect_handler", "json_schema_of", "parameter_description"]

_EMPTY = inspect.Parameter.empty


@dataclass(frozen=True, slots=True)
class HandlerSignature:
    """What a handler takes and returns.

    Attributes:
        is_async: Whether calling it returns an awaitable.
        context_parameter: The name of the parameter that receives the `Context`, if any.
        arguments_type: A Struct with one field per other parameter (None if there are
            none), whose defaults are the parameters' defaults.
        parameters: The other parameters, in order.
        return_type: The return annotation, or None when there is none.
    """

    is_async: bool
    context_parameter: str | None
    arguments_type: type[msgspec.Struct] | None
    parameters: tuple[inspect.Parameter, ...]
    return_type: Any


def inspect_handler(
    handler: Callable[..., Any], *, name: str, context_type: type
) -> HandlerSignature:
    """Read ``handler``'s signature; ``context_type`` marks the context parameter.

    Raises:
        TypeError: A parameter is positional-only or variadic, or has no annotation
            (a schema can't be derived for it).
    """
    signature = inspect.signature(handler)
    hints = typing.get_type_hints(handler, include_extras=True)
    context_parameter = None
    parameters: list[inspect.Parameter] = []
    fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
    for parameter in signature.parameters.values():
        if parameter.kind in (
            parameter.VAR_POSITIONAL,
            parameter.VAR_KEYWORD,
            parameter.POSITIONAL_ONLY,
        ):
            raise TypeError(f"{name}: parameter {parameter.name!r} must be an ordinary parameter")
        annotation = hints.get(parameter.name, _EMPTY)
        if annotation is context_type:
            context_parameter = parameter.name
            continue
        if annotation is _EMPTY:
            raise TypeError(f"{name}: parameter {parameter.name!r} needs a type annotation")
        parameters.append(parameter)
        if parameter.default is _EMPTY:
            fields.append((parameter.name, annotation))
        else:
            fields.append((parameter.name, annotation, parameter.default))
    arguments_type = None
    if fields:
        arguments_type = msgspec.defstruct(
            f"{_identifier(name)}Arguments", fields, kw_only=True, module=__name__
        )
    return HandlerSignature(
        is_async=inspect.iscoroutinefunction(handler),
        context_parameter=context_parameter,
        arguments_type=arguments_type,
        parameters=tuple(parameters),
        return_type=hints.get("return"),
    )


def json_schema_of(type_: Any) -> dict[str, Any]:
    """The JSON Schema 2020-12 of ``type_``, its root inlined (msgspec puts it in ``$defs``).

    msgspec writes ``{"$ref": "#/$defs/Name", "$defs": {...}}`` for a Struct; a tool's
    ``inputSchema`` needs ``"type": "object"`` at its root, so the root definition is
    moved up and any other definitions stay in ``$defs``.
    """
    schema: dict[str, Any] = msgspec.json.schema(type_)
    ref = schema.get("$ref")
    definitions: dict[str, Any] = dict(schema.get("$defs", {}))
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        root = dict(definitions.pop(ref.removeprefix("#/$defs/")))
        root.pop("title", None)  # msgspec's class name, meaningless to a client
        if definitions:
            root["$defs"] = definitions
        return root
    return schema


def parameter_description(parameter: inspect.Parameter, hints: dict[str, Any]) -> str | None:
    """The description a parameter carries in ``Annotated[..., msgspec.Meta(description=...)]``."""
    annotation = hints.get(parameter.name)
    for metadata in getattr(annotation, "__metadata__", ()):
        if isinstance(metadata, msgspec.Meta) and metadata.description:
            return metadata.description
    return None


def _identifier(name: str) -> str:
    cleaned = "".join(part.capitalize() for part in _split_words(name))
    return cleaned or "Handler"


def _split_words(name: str) -> list[str]:
    words: list[str] = []
    current = ""
    for char in name:
        if char.isalnum():
            current += char
        elif current:
            words.append(current)
            current = ""
    if current:
        words.append(current)
    return words
