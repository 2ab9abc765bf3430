"""mcpcore.client's public API: pinned, documented, and free of IO."""

from __future__ import annotations

import inspect
import types

import mcpcore.client

CLIENT_API = {
    "CACHEABLE_METHODS",
    "DEFAULT_PROBE_TIMEOUT",
    "MAX_CACHE_BYTES",
    "MAX_CACHE_ENTRIES",
    "MAX_INPUT_ROUNDS",
    "MAX_PAGES",
    "MAX_PROBES",
    "MAX_TTL_MS",
    "CallbackErrorHook",
    "ClientCallbacks",
    "ClientError",
    "ClientSession",
    "ConnectMode",
    "ElicitationCallback",
    "FilterComparison",
    "IncompatibleServerError",
    "InvalidServerResponseError",
    "McpError",
    "Outcome",
    "PaginationError",
    "Requester",
    "ResultCache",
    "RootsCallback",
    "SamplingCallback",
    "TaskCancelledError",
    "TooManyInputRoundsError",
    "UnsupportedInputRequestError",
    "compare_acknowledgement",
}


def test_the_client_api_is_pinned() -> None:
    assert set(mcpcore.client.__all__) == CLIENT_API
    assert all(hasattr(mcpcore.client, name) for name in CLIENT_API)


def _is_class_or_function(value: object) -> bool:
    # (A type alias is documented by its ``#:`` comment; 3.10 calls one a class.)
    if isinstance(value, types.GenericAlias):
        return False
    return inspect.isclass(value) or inspect.isfunction(value)


def test_every_public_class_function_and_method_is_documented() -> None:
    missing = []
    for name in mcpcore.client.__all__:
        value = getattr(mcpcore.client, name)
        if not _is_class_or_function(value):
            continue
        if not inspect.getdoc(value):
            missing.append(name)
        if inspect.isclass(value):
            for attribute, member in vars(value).items():
                if attribute.startswith("_"):
                    continue
                function = member.fget if isinstance(member, property) else member
                if callable(function) and not inspect.getdoc(function):
                    missing.append(f"{name}.{attribute}")
    for cls in mcpcore.client.ClientSession.__mro__:
        if cls.__module__.startswith("mcpcore.client"):
            for attribute, member in vars(cls).items():
                function = member.fget if isinstance(member, property) else member
                if not attribute.startswith("_") and callable(function):
                    assert inspect.getdoc(function), f"{cls.__name__}.{attribute}"
    assert missing == []


def test_the_session_exposes_what_the_transport_needs() -> None:
    session = mcpcore.client.ClientSession
    for name in (
        "connect",
        "discover",
        "list_tools",
        "list_resources",
        "list_resource_templates",
        "list_prompts",
        "iter_tools",
        "iter_resources",
        "iter_resource_templates",
        "iter_prompts",
        "iter_pages",
        "call_tool",
        "read_resource",
        "get_prompt",
        "complete",
        "set_logging_level",
        "ping",
        "subscribe",
        "unsubscribe",
        "notify_roots_changed",
        "listen_request",
        "handle_server_request",
        "handle_notification",
        "connection",
        "era",
        "protocol_version",
        "server_info",
        "server_capabilities",
        "instructions",
        "discover_result",
        "log_level",
        "cache",
        "callbacks",
        "client_capabilities",
    ):
        assert hasattr(session, name), name
