"""What the client can do for a server: elicitation, sampling, roots, as async callbacks.

One API for both eras. A legacy server asks with a JSON-RPC request
(`ClientSession.handle_server_request`); a 2026-07-28 server asks inside an
`InputRequiredResult`, and the session answers before it retries (MRTR). Either way the
same callback runs, and the capabilities the client declares are derived from which
callbacks are set: a server is never told we can do what no callback does.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeAlias

from mcpcore.types import (
    TASKS_EXTENSION,
    ClientCapabilities,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitationCapability,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    ListRootsResult,
    RootsCapability,
    SamplingCapability,
)

__all__ = [
    "CallbackErrorHook",
    "ClientCallbacks",
    "ElicitationCallback",
    "RootsCallback",
    "SamplingCallback",
]

#: Shows a form (or, when URL mode is declared, a URL) to the user; returns their answer.
ElicitationCallback: TypeAlias = Callable[
    [ElicitRequestFormParams | ElicitRequestURLParams], Awaitable[ElicitResult]
]
#: Runs an LLM completion for the server.
SamplingCallback: TypeAlias = Callable[[CreateMessageRequestParams], Awaitable[CreateMessageResult]]
#: Lists the roots the user lets the server see.
RootsCallback: TypeAlias = Callable[[], Awaitable[ListRootsResult]]
#: Told about an exception a callback raised while answering a legacy server request
#: (the server only gets a bare -32603). Arguments: the method, the exception.
CallbackErrorHook: TypeAlias = Callable[[str, Exception], None]


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientCallbacks:
    """The client's answers to server requests, and the capabilities they imply.

    A callback may raise `McpError` to answer a legacy request with that exact error
    (``McpError(-1, "User rejected sampling")``); any other exception becomes a bare
    -32603 that leaks nothing, and is passed to ``on_callback_error``. In 2026-07-28,
    where no error travels back, a callback's exception propagates to the caller of
    the request that needed the input: decline with ``ElicitResult(action="decline")``.

    Attributes:
        elicitation: Answers ``elicitation/create``; declares form mode.
        url_elicitation: The elicitation callback also handles URL mode
            (`ElicitRequestURLParams`): it shows the full URL and asks consent, never
            opening it by itself (2025-11-25 client/elicitation). Declares ``url``.
        sampling: Answers ``sampling/createMessage``.
        sampling_tools: The sampling callback handles ``tools`` and ``toolChoice``
            (declares ``sampling.tools``, 2025-11-25).
        roots: Answers ``roots/list``.
        roots_list_changed: The client will call `ClientSession.notify_roots_changed`
            when its roots change (legacy ``roots.listChanged``).
        on_callback_error: Told about a callback's exception (a driver logs it).
        tasks: Declare the 2026-07-28 tasks extension (``io.modelcontextprotocol/tasks``):
            the server may then answer ``tools/call`` with a task, which the client
            polls (`ClientSession.start_tool`, `ClientSession.get_task`...).
    """

    elicitation: ElicitationCallback | None = None
    url_elicitation: bool = False
    sampling: SamplingCallback | None = None
    sampling_tools: bool = False
    roots: RootsCallback | None = None
    roots_list_changed: bool = False
    on_callback_error: CallbackErrorHook | None = None
    tasks: bool = False

    def __post_init__(self) -> None:
        for flag, callback, name in (
            (self.url_elicitation, self.elicitation, "url_elicitation needs elicitation"),
            (self.sampling_tools, self.sampling, "sampling_tools needs sampling"),
            (self.roots_list_changed, self.roots, "roots_list_changed needs roots"),
        ):
            if flag and callback is None:
                raise ValueError(name)

    def capabilities(self) -> ClientCapabilities:
        """The capabilities these callbacks let the client declare.

        Elicitation is ``{}`` for form only ("an empty object means form only",
        2025-11-25, and the only shape 2025-06-18 knows) or ``{form, url}``.

        Returns:
            The `ClientCapabilities` to give the client `Connection`.
        """
        capabilities = ClientCapabilities()
        if self.elicitation is not None:
            capabilities.elicitation = (
                ElicitationCapability(form={}, url={})
                if self.url_elicitation
                else ElicitationCapability()
            )
        if self.sampling is not None:
            capabilities.sampling = (
                SamplingCapability(tools={}) if self.sampling_tools else SamplingCapability()
            )
        if self.roots is not None:
            capabilities.roots = (
                RootsCapability(list_changed=True) if self.roots_list_changed else RootsCapability()
            )
        if self.tasks:
            # "the client puts extensions[...tasks] in the per-request capabilities"
            # (SEP-2663): a 2026-07-28 client stamps them on every request.
            capabilities.extensions = {TASKS_EXTENSION: {}}
        return capabilities
