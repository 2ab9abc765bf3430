"""Prompts, and completions of prompt arguments and resource-template variables.

Prompts (server/prompts): arguments are strings; "invalid name or missing required
argument → -32602" (2024-11-05). A handler returns text (one user message), messages,
or a whole `GetPromptResult`.

Completion (server/utilities/completion): a handler receives the argument's name, the
value typed so far and, from 2025-06-18, the arguments already resolved; "values
(≤100)" with ``total`` and ``hasMore`` when there are more.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from msgspec import UNSET

from mcpcore import jsonrpc, types
from mcpcore.errors import McpError
from mcpcore.server._context import Context
from mcpcore.server._signature import HandlerSignature, inspect_handler, parameter_description

__all__ = [
    "MAX_COMPLETION_VALUES",
    "CompletionRegistry",
    "PromptRegistry",
    "RegisteredPrompt",
    "to_completion",
]

#: "values: string[] (max 100 items)" (2024-11-05 server/utilities/completion).
MAX_COMPLETION_VALUES: Final = 100


@dataclass(slots=True)
class RegisteredPrompt:
    """A prompt: its listing and its handler."""

    definition: types.Prompt
    handler: Callable[..., Any]
    signature: HandlerSignature


class PromptRegistry:
    """The prompts of one server, in registration order."""

    __slots__ = ("_prompts",)

    def __init__(self) -> None:
        self._prompts: dict[str, RegisteredPrompt] = {}

    def __len__(self) -> int:
        return len(self._prompts)

    def __contains__(self, name: object) -> bool:
        return name in self._prompts

    def add(
        self,
        handler: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: list[types.Icon] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> RegisteredPrompt:
        """Register ``handler`` as a prompt (see `Server.prompt`)."""
        name = name or handler.__name__
        if name in self._prompts:
            raise ValueError(f"a prompt named {name!r} is already registered")
        signature = inspect_handler(handler, name=name, context_type=Context)
        hints = typing.get_type_hints(handler, include_extras=True)
        arguments = []
        for parameter in signature.parameters:
            required = parameter.default is inspect.Parameter.empty
            argument_description = parameter_description(parameter, hints)
            arguments.append(
                types.PromptArgument(
                    name=parameter.name,
                    description=argument_description or UNSET,
                    required=required,
                )
            )
        doc = inspect.getdoc(handler)
        definition = types.Prompt(
            name=name,
            title=title or UNSET,
            description=description or (doc.strip() if doc else UNSET),
            arguments=arguments or UNSET,
            icons=icons or UNSET,
            meta=meta or UNSET,
        )
        prompt = RegisteredPrompt(definition, handler, signature)
        self._prompts[name] = prompt
        return prompt

    def remove(self, name: str) -> None:
        """Unregister a prompt; KeyError if there is none."""
        del self._prompts[name]

    def definitions(self) -> list[types.Prompt]:
        """What prompts/list publishes, in registration order."""
        return [prompt.definition for prompt in self._prompts.values()]

    async def get(
        self, context: Context, params: types.GetPromptRequestParams
    ) -> types.GetPromptResult | types.InputRequiredResult:
        """Run a prompts/get."""
        prompt = self._prompts.get(params.name)
        if prompt is None:
            raise McpError(jsonrpc.INVALID_PARAMS, f"Unknown prompt: {params.name}")
        given = {} if params.arguments is UNSET else params.arguments
        kwargs: dict[str, Any] = {}
        for parameter in prompt.signature.parameters:
            if parameter.name in given:
                kwargs[parameter.name] = given[parameter.name]
            elif parameter.default is inspect.Parameter.empty:
                raise McpError(
                    jsonrpc.INVALID_PARAMS,
                    f"Missing required argument {parameter.name!r} for prompt {params.name}",
                )
        if prompt.signature.context_parameter is not None:
            kwargs[prompt.signature.context_parameter] = context
        value = prompt.handler(**kwargs)
        if prompt.signature.is_async:
            value = await value
        return _to_prompt_result(value)


def _to_prompt_result(value: Any) -> types.GetPromptResult | types.InputRequiredResult:
    if isinstance(value, types.GetPromptResult | types.InputRequiredResult):
        return value
    if isinstance(value, str):
        value = types.PromptMessage(role="user", content=types.TextContent(text=value))
    if isinstance(value, types.PromptMessage):
        value = [value]
    if isinstance(value, list) and all(isinstance(m, types.PromptMessage) for m in value):
        return types.GetPromptResult(messages=value)
    raise TypeError(f"a prompt handler returned {type(value).__name__}")


CompletionHandler = Callable[..., Any]


class CompletionRegistry:
    """Completion handlers, by prompt name or resource template."""

    __slots__ = ("_handlers",)

    def __init__(self) -> None:
        self._handlers: dict[tuple[str, str], tuple[CompletionHandler, HandlerSignature]] = {}

    def __len__(self) -> int:
        return len(self._handlers)

    def add(self, handler: CompletionHandler, *, kind: str, target: str) -> None:
        """Register a completion handler for a prompt (``kind="ref/prompt"``) or a template."""
        signature = inspect_handler(handler, name=f"complete {target}", context_type=Context)
        self._handlers[kind, target] = (handler, signature)

    async def complete(
        self, context: Context, params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        """Run a completion/complete (an unknown reference has no completions)."""
        ref = params.ref
        target = ref.name if isinstance(ref, types.PromptReference) else ref.uri
        entry = self._handlers.get((_kind(ref), target))
        if entry is None:
            return types.CompleteResult(completion=types.Completion(values=[]))
        handler, signature = entry
        resolved: dict[str, str] = {}
        if params.context is not UNSET and params.context.arguments is not UNSET:
            resolved = dict(params.context.arguments)
        kwargs: dict[str, Any] = {
            "argument": params.argument.name,
            "value": params.argument.value,
            "context_arguments": resolved,
        }
        # A handler declares only the inputs it wants, among these three.
        wanted = {parameter.name for parameter in signature.parameters}
        kwargs = {k: v for k, v in kwargs.items() if k in wanted}
        if signature.context_parameter is not None:
            kwargs[signature.context_parameter] = context
        value = handler(**kwargs)
        if signature.is_async:
            value = await value
        return types.CompleteResult(completion=to_completion(value))


def to_completion(value: Any) -> types.Completion:
    """A handler's answer as a `Completion`, cut to 100 values (``total``/``hasMore`` kept)."""
    if isinstance(value, types.Completion):
        values = list(value.values)
        total = value.total if value.total is not UNSET else len(values)
    else:
        values = [str(v) for v in value]
        total = len(values)
    if len(values) <= MAX_COMPLETION_VALUES:
        return types.Completion(values=values, total=total, has_more=total > len(values))
    return types.Completion(values=values[:MAX_COMPLETION_VALUES], total=total, has_more=True)


def _kind(ref: Any) -> str:
    return "ref/prompt" if isinstance(ref, types.PromptReference) else "ref/resource"
