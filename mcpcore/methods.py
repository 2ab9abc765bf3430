"""The method table: what each MCP method carries, which way it flows, and when it exists.

The `Connection` decodes a message's ``params`` (or a response's ``result``) with the
types named here, refuses methods that do not exist in the negotiated revision or flow
the wrong way, and gates methods on the capability the spec ties them to. Users add
their own methods with `MethodTable.with_methods`.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from mcpcore import types
from mcpcore._onepass import build_call_decoder, build_result_decoder
from mcpcore.jsonrpc import DECODE_ERRORS, decoder_for
from mcpcore.versions import ALL_VERSIONS, LEGACY_VERSIONS, MODERN_VERSIONS

__all__ = [
    "DEFAULT_METHODS",
    "Direction",
    "MethodSpec",
    "MethodTable",
]


class Direction(enum.Flag):
    """Which way a method may flow."""

    CLIENT_TO_SERVER = enum.auto()
    SERVER_TO_CLIENT = enum.auto()
    BOTH = CLIENT_TO_SERVER | SERVER_TO_CLIENT


class _Decoders:
    """The decoders of one `MethodSpec`, each built on first use.

    Building all of them at import would cost more than the rest of ``import mcpcore``
    together. A spec holds one of these from its creation; only this cache changes,
    never what the spec says.
    """

    __slots__ = ("modern_result", "params", "response", "result")

    def __init__(self) -> None:
        self.params: msgspec.json.Decoder[Any] | None = None
        self.result: msgspec.json.Decoder[Any] | None = None
        self.response: msgspec.json.Decoder[Any] | None = None
        self.modern_result: msgspec.json.Decoder[Any] | None = None


# eq=False: a spec is compared and hashed by identity, which is what the tables that
# key on it need, and far cheaper than hashing every field.
@dataclass(frozen=True, slots=True, eq=False)
class MethodSpec:
    """Everything the core knows about one method.

    Attributes:
        name: The JSON-RPC method name.
        params_type: The type ``params`` decodes into.
        result_type: The type a successful result decodes into; None for a notification.
        direction: Which way the method may flow.
        versions: The revisions in which the method exists.
        capability: A dotted attribute path into the capabilities Struct
            (``"resources.subscribe"``) naming the capability the spec gates the
            method on: for a request, the capability of the side that receives it;
            for a notification, of the side that sends it. None when not gated.
        capability_since: The first revision that gates the method (``completions``
            appeared in 2025-03-26; older servers answered completion/complete anyway).
        input_required: Whether a 2026-07-28 server may answer with `InputRequiredResult`
            ("ONLY for tools/call, resources/read and prompts/get", 2026-07-28 mrtr).
        cacheable: Whether a 2026-07-28 result carries ``ttlMs`` and ``cacheScope``
            (2026-07-28 server/utilities/caching).
        opens_stream: Whether the request opens a 2026-07-28 listen stream
            (``subscriptions/listen``): the server acknowledges it, delivers the
            notifications its filter asks for on it, and ends it with the result
            (2026-07-28 basic/patterns/subscriptions). Its params carry the filter as
            ``notifications``.
        params_decode: A custom decoder for ``params``, for a ``params_type`` msgspec
            can't decode by itself (elicitation's form-or-URL union). It raises
            `msgspec.DecodeError` (or its subclass ValidationError) on bad input.
        modern_result_type: The result type in 2026-07-28 where it differs from
            ``result_type`` (the tasks extension reshaped ``tasks/get`` and
            ``tasks/cancel`` of 2025-11-25); None when it does not.
        task_result_type: The result a 2026-07-28 server may answer with instead, when
            the request's client declared the tasks extension ("only tools/call is
            supported for now", SEP-2663); None for every other method.
    """

    name: str
    params_type: Any
    result_type: Any | None
    direction: Direction
    versions: frozenset[str] = frozenset(ALL_VERSIONS)
    capability: str | None = None
    capability_since: str | None = None
    input_required: bool = False
    cacheable: bool = False
    opens_stream: bool = False
    params_decode: Callable[[bytes], Any] | None = field(default=None, repr=False)
    modern_result_type: Any | None = None
    task_result_type: Any | None = None
    _decoders: _Decoders = field(default_factory=_Decoders, init=False, repr=False)

    def decode_params(self, raw: bytes) -> Any:
        """Decode ``params``; raises `msgspec.DecodeError` when they are not valid."""
        decoders = self._decoders
        decoder = decoders.params
        if decoder is None:
            if self.params_decode is not None:
                return self.params_decode(raw)
            decoder = decoders.params = decoder_for(self.params_type)
        return decoder.decode(raw)

    def read_params(self, raw: bytes | UnsetType) -> Any:
        """``params`` decoded, the empty params when absent, or None when invalid."""
        try:
            if raw is UNSET:
                return self.params_type()
            return self.decode_params(raw)
        except TypeError:
            return None  # absent, but the method's params have required fields
        except DECODE_ERRORS:
            return None

    def decode_result(self, raw: bytes) -> Any:
        """Decode a result; raises `msgspec.DecodeError` when it is not valid."""
        decoders = self._decoders
        decoder = decoders.result
        if decoder is None:
            if self.result_type is None:
                raise TypeError(f"{self.name} is a notification: it has no result")
            decoder = decoders.result = decoder_for(self.result_type)
        return decoder.decode(raw)

    def decode_modern_result(self, raw: bytes) -> Any:
        """Decode a 2026-07-28 result as ``modern_result_type`` (or ``result_type``)."""
        expected = self.modern_result_type
        if expected is None:
            return self.decode_result(raw)
        decoders = self._decoders
        decoder = decoders.modern_result
        if decoder is None:
            decoder = decoders.modern_result = decoder_for(expected)
        return decoder.decode(raw)

    def decode_result_message(self, data: bytes) -> Any:
        """Decode a whole successful response in one pass: it has ``id`` and ``result``.

        Raises `msgspec.DecodeError` for anything else (see `mcpcore._onepass`).
        """
        decoders = self._decoders
        decoder = decoders.response
        if decoder is None:
            decoder = decoders.response = build_result_decoder(self.name, self.result_type)
        return decoder.decode(data)

    @property
    def is_request(self) -> bool:
        """True for a request (it has a result), False for a notification."""
        return self.result_type is not None


class MethodTable(Mapping[str, MethodSpec]):
    """An immutable map from method name to `MethodSpec`."""

    __slots__ = ("_call_decoder", "_flowing", "_flowing_by_kind", "_specs")

    def __init__(self, specs: Iterable[MethodSpec]) -> None:
        self._call_decoder: msgspec.json.Decoder[Any] | None = None
        self._flowing: dict[Direction, frozenset[str]] = {}
        self._flowing_by_kind: dict[tuple[Direction, bool], Mapping[str, MethodSpec]] = {}
        self._specs: dict[str, MethodSpec] = {}
        for spec in specs:
            if spec.name in self._specs:
                raise ValueError(f"method {spec.name!r} is listed twice")
            self._specs[spec.name] = spec

    def __getitem__(self, name: str) -> MethodSpec:
        return self._specs[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._specs)

    def __len__(self) -> int:
        return len(self._specs)

    def flowing(self, direction: Direction) -> frozenset[str]:
        """The names of the methods that may flow in ``direction``.

        Connections check a set: much cheaper than `enum.Flag` arithmetic per message.
        """
        names = self._flowing.get(direction)
        if names is None:
            names = self._flowing[direction] = frozenset(
                name for name, spec in self._specs.items() if spec.direction & direction
            )
        return names

    def flowing_specs(self, direction: Direction, *, requests: bool) -> Mapping[str, MethodSpec]:
        """The requests (``requests=True``) or notifications that may flow in ``direction``.

        One lookup tells a connection that a method exists, is of the kind it means to
        send, and may flow its way.
        """
        key = (direction, requests)
        specs = self._flowing_by_kind.get(key)
        if specs is None:
            specs = self._flowing_by_kind[key] = {
                name: spec
                for name, spec in self._specs.items()
                if spec.direction & direction and spec.is_request is requests
            }
        return specs

    @property
    def call_decoder(self) -> msgspec.json.Decoder[Any]:
        """The one-pass decoder of well-formed requests and notifications of this table.

        The hot path of `Connection.receive` (see `mcpcore._onepass`): a decoded message
        has ``spec``, ``id`` (None for a notification) and ``params`` (UNSET when
        absent); anything else raises `msgspec.DecodeError`, and the general path
        judges it. Built on first use: it costs more than the rest of the import.
        """
        decoder = self._call_decoder
        if decoder is None:
            decoder = self._call_decoder = build_call_decoder(self._specs.values())
        return decoder

    def with_methods(self, *specs: MethodSpec) -> MethodTable:
        """A new table with ``specs`` added; a spec replaces a method of the same name."""
        merged = dict(self._specs)
        for spec in specs:
            merged[spec.name] = spec
        return MethodTable(merged.values())


_C2S = Direction.CLIENT_TO_SERVER
_S2C = Direction.SERVER_TO_CLIENT
_BOTH = Direction.BOTH
_LEGACY = frozenset(LEGACY_VERSIONS)
_MODERN = frozenset(MODERN_VERSIONS)
_FROM_2025_06_18 = frozenset({"2025-06-18", "2025-11-25"})
_ONLY_2025_11_25 = frozenset({"2025-11-25"})
#: Where tasks/get and tasks/cancel exist: the core tasks of 2025-11-25, and the 2026-07-28
#: tasks extension (which only the extension's server answers: -32601 from any other).
_TASKS = _ONLY_2025_11_25 | _MODERN


def _request(
    name: str, params: Any, result: Any, direction: Direction, **options: Any
) -> MethodSpec:
    return MethodSpec(name, params, result, direction, **options)


def _notification(name: str, params: Any, direction: Direction, **options: Any) -> MethodSpec:
    return MethodSpec(name, params, None, direction, **options)


#: Every method of every revision we speak (2026-07-28 basic, CHECKLIST §8).
DEFAULT_METHODS = MethodTable(
    [
        # Lifecycle. The handshake and ping are legacy only; server/discover is modern.
        _request(
            "initialize",
            types.InitializeRequestParams,
            types.InitializeResult,
            _C2S,
            versions=_LEGACY,
        ),
        _request("ping", types.RequestParams, types.EmptyResult, _BOTH, versions=_LEGACY),
        _request(
            "server/discover",
            types.RequestParams,
            types.DiscoverResult,
            _C2S,
            versions=_MODERN,
            cacheable=True,
        ),
        # Tools.
        _request(
            "tools/list",
            types.PaginatedRequestParams,
            types.ListToolsResult,
            _C2S,
            capability="tools",
            cacheable=True,
        ),
        _request(
            "tools/call",
            types.CallToolRequestParams,
            types.CallToolResult,
            _C2S,
            capability="tools",
            input_required=True,
            task_result_type=types.CreateTaskExtensionResult,
        ),
        # Resources.
        _request(
            "resources/list",
            types.PaginatedRequestParams,
            types.ListResourcesResult,
            _C2S,
            capability="resources",
            cacheable=True,
        ),
        _request(
            "resources/templates/list",
            types.PaginatedRequestParams,
            types.ListResourceTemplatesResult,
            _C2S,
            capability="resources",
            cacheable=True,
        ),
        _request(
            "resources/read",
            types.ReadResourceRequestParams,
            types.ReadResourceResult,
            _C2S,
            capability="resources",
            input_required=True,
            cacheable=True,
        ),
        _request(
            "resources/subscribe",
            types.SubscribeRequestParams,
            types.EmptyResult,
            _C2S,
            versions=_LEGACY,
            capability="resources.subscribe",
        ),
        _request(
            "resources/unsubscribe",
            types.UnsubscribeRequestParams,
            types.EmptyResult,
            _C2S,
            versions=_LEGACY,
            capability="resources.subscribe",
        ),
        # Prompts.
        _request(
            "prompts/list",
            types.PaginatedRequestParams,
            types.ListPromptsResult,
            _C2S,
            capability="prompts",
            cacheable=True,
        ),
        _request(
            "prompts/get",
            types.GetPromptRequestParams,
            types.GetPromptResult,
            _C2S,
            capability="prompts",
            input_required=True,
        ),
        # Utilities.
        _request(
            "completion/complete",
            types.CompleteRequestParams,
            types.CompleteResult,
            _C2S,
            capability="completions",
            capability_since="2025-03-26",
        ),
        _request(
            "logging/setLevel",
            types.SetLevelRequestParams,
            types.EmptyResult,
            _C2S,
            versions=_LEGACY,
            capability="logging",
        ),
        _request(
            "subscriptions/listen",
            types.SubscriptionsListenRequestParams,
            types.SubscriptionsListenResult,
            _C2S,
            versions=_MODERN,
            opens_stream=True,
        ),
        # Server-to-client requests (legacy; 2026-07-28 asks for input through MRTR).
        _request(
            "sampling/createMessage",
            types.CreateMessageRequestParams,
            types.CreateMessageResult,
            _S2C,
            versions=_LEGACY,
            capability="sampling",
        ),
        _request(
            "elicitation/create",
            types.ElicitRequestParams,
            types.ElicitResult,
            _S2C,
            versions=_FROM_2025_06_18,
            capability="elicitation",
            params_decode=types.decode_elicit_request_params,
        ),
        _request(
            "roots/list",
            types.RequestParams,
            types.ListRootsResult,
            _S2C,
            versions=_LEGACY,
            capability="roots",
        ),
        # Tasks: the experimental core tasks of 2025-11-25 (either side may be the
        # receiver), and in 2026-07-28 the tasks extension (SEP-2663), which keeps
        # tasks/get and tasks/cancel with new results, adds tasks/update, and removes
        # tasks/result and tasks/list ("MUST reject ... with -32601").
        _request(
            "tasks/get",
            types.GetTaskRequestParams,
            types.GetTaskResult,
            _BOTH,
            versions=_TASKS,
            modern_result_type=types.DetailedTaskResult,
        ),
        _request(
            "tasks/update",
            types.UpdateTaskRequestParams,
            types.EmptyResult,
            _C2S,
            versions=_MODERN,
        ),
        _request(
            "tasks/result",
            types.GetTaskPayloadRequestParams,
            types.GetTaskPayloadResult,
            _BOTH,
            versions=_ONLY_2025_11_25,
        ),
        _request(
            "tasks/list",
            types.PaginatedRequestParams,
            types.ListTasksResult,
            _BOTH,
            versions=_ONLY_2025_11_25,
        ),
        _request(
            "tasks/cancel",
            types.CancelTaskRequestParams,
            types.CancelTaskResult,
            _BOTH,
            versions=_TASKS,
            # "tasks/cancel MUST return an empty ack" (SEP-2663).
            modern_result_type=types.EmptyResult,
        ),
        # Notifications.
        _notification(
            "notifications/initialized", types.NotificationParams, _C2S, versions=_LEGACY
        ),
        _notification("notifications/cancelled", types.CancelledNotificationParams, _BOTH),
        _notification("notifications/progress", types.ProgressNotificationParams, _BOTH),
        _notification(
            "notifications/message",
            types.LoggingMessageNotificationParams,
            _S2C,
            capability="logging",
        ),
        _notification(
            "notifications/resources/updated",
            types.ResourceUpdatedNotificationParams,
            _S2C,
            capability="resources.subscribe",
        ),
        _notification(
            "notifications/resources/list_changed",
            types.NotificationParams,
            _S2C,
            capability="resources.list_changed",
        ),
        _notification(
            "notifications/tools/list_changed",
            types.NotificationParams,
            _S2C,
            capability="tools.list_changed",
        ),
        _notification(
            "notifications/prompts/list_changed",
            types.NotificationParams,
            _S2C,
            capability="prompts.list_changed",
        ),
        _notification(
            "notifications/roots/list_changed",
            types.NotificationParams,
            _C2S,
            versions=_LEGACY,
            capability="roots.list_changed",
        ),
        _notification(
            "notifications/elicitation/complete",
            types.ElicitationCompleteNotificationParams,
            _S2C,
            versions=_ONLY_2025_11_25,
        ),
        _notification(
            "notifications/tasks/status",
            types.TaskStatusNotificationParams,
            _BOTH,
            versions=_ONLY_2025_11_25,
        ),
        # The tasks extension's status news, on a listen stream naming the task in
        # taskIds (SEP-2663).
        _notification("notifications/tasks", types.TaskNotificationParams, _S2C, versions=_MODERN),
        _notification(
            "notifications/subscriptions/acknowledged",
            types.SubscriptionsAcknowledgedNotificationParams,
            _S2C,
            versions=_MODERN,
        ),
    ]
)
