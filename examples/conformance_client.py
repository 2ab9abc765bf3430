"""The client the official MCP conformance suite runs in client mode.

    conformance client --command "python examples/conformance_client.py" --scenario tools_call

The suite starts a mock server for a scenario, then runs this script with the mock's
URL as the last argument (shared/spec/CONFORMANCE.md §9). ``MCP_CONFORMANCE_SCENARIO``
names the scenario; ``MCP_CONFORMANCE_PROTOCOL_VERSION`` (0.2.0-alpha only) says which
wire to speak: ``2026-07-28`` the stateless one, anything else (or nothing, under
0.1.16) the legacy handshake; ``MCP_CONFORMANCE_CONTEXT`` carries scenario data as JSON.
The script exits 0 when its part of the scenario went through, and reports on stderr.

The ``auth/*`` scenarios connect with `transports.OAuth`: the suite's authorization
server answers the authorization URL with a redirect at once (no user to sign in), so
``on_redirect`` fetches it and returns its ``Location`` (CONFORMANCE.md §2); the
context's client id, secret or private key, when given, are the pre-registered client's.
DPoP (``auth/dpop``, ``auth/dpop-nonce``) needs nothing: `OAuth` uses it where the
authorization server advertises it. ``auth/wif-jwt-bearer`` presents the context's
``valid_jwt`` (the JWT-bearer grant); ``auth/enterprise-managed-authorization`` exchanges
the context's ``idp_id_token`` at its identity provider first.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, Final

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import trio

from mcpcore.auth import IdentityProvider
from mcpcore.client import ClientCallbacks, ConnectMode
from mcpcore.types import (
    UNSET,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    Implementation,
    ListRootsResult,
    TextContent,
)
from transports import HttpClient, OAuth, open_http_client

MODERN: Final = "2026-07-28"
#: Seconds any request may take: well inside the suite's 30 s limit per scenario.
REQUEST_TIMEOUT: Final = 10.0
CLIENT_INFO: Final = Implementation(name="mcpcore-conformance-client", version="1.0.0")
#: The Client ID Metadata Document URL the suite expects (auth/basic-cimd): used as the
#: client id where the authorization server advertises support for them.
CLIENT_METADATA_URL: Final = "https://conformance-test.local/client-metadata.json"
#: The redirect URI we register; the suite's authorization server redirects to it.
REDIRECT_URI: Final = "http://localhost:3000/callback"
AUTH_PREFIX: Final = "auth/"

Scenario = Callable[[HttpClient, Mapping[str, Any]], Awaitable[None]]


# -- what the client answers when a server asks ------------------------------------


async def elicit(params: ElicitRequestFormParams | ElicitRequestURLParams) -> ElicitResult:
    """Accept every form, each field filled with its default (or a value of its type)."""
    if isinstance(params, ElicitRequestURLParams):
        return ElicitResult(action="decline")
    properties = params.requested_schema.get("properties") or {}
    content = {name: _value_for(field) for name, field in properties.items()}
    return ElicitResult(action="accept", content=content)


def _value_for(field: Mapping[str, Any]) -> Any:
    """A form field's default, else a value of its JSON type, else one of its choices."""
    if "default" in field:
        return field["default"]
    kind = field.get("type")
    if kind == "boolean":
        return True
    if kind in ("integer", "number"):
        return field.get("minimum", 0)
    if kind == "array":
        return []
    return _choice_for(field)


def _choice_for(field: Mapping[str, Any]) -> Any:
    """The first value an ``enum`` or ``oneOf``/``anyOf`` field offers, else a string."""
    if field.get("enum"):
        return field["enum"][0]
    options = field.get("oneOf") or field.get("anyOf") or []
    if options and isinstance(options[0], dict) and "const" in options[0]:
        return options[0]["const"]
    return "conformance"


async def sample(params: CreateMessageRequestParams) -> CreateMessageResult:
    """A canned completion (no model here)."""
    return CreateMessageResult(
        role="assistant", content=TextContent(text="A canned answer."), model="none"
    )


async def roots() -> ListRootsResult:
    """No roots."""
    return ListRootsResult(roots=[])


# -- the scenarios -----------------------------------------------------------------


async def initialize(client: HttpClient, context: Mapping[str, Any]) -> None:
    """Handshake (done by connecting), then list the tools if the server has any."""
    if _has_tools(client):
        await client.list_tools()


async def tools_call(client: HttpClient, context: Mapping[str, Any]) -> None:
    """Call ``add_numbers`` with numbers."""
    await client.list_tools()
    await _succeeds(client, "add_numbers", {"a": 5, "b": 3})


async def elicitation_defaults(client: HttpClient, context: Mapping[str, Any]) -> None:
    """Call the tool that asks for a form; `elicit` accepts it with the defaults."""
    await client.list_tools()
    await _succeeds(client, "test_client_elicitation_defaults", {})


async def sse_retry(client: HttpClient, context: Mapping[str, Any]) -> None:
    """Call the tool whose answer stream breaks: the client resumes it by GET."""
    await client.list_tools()
    await _succeeds(client, "test_reconnection", {})


async def schema_preservation(client: HttpClient, context: Mapping[str, Any]) -> None:
    """Send back a tool's inputSchema exactly as listed."""
    tools = {tool.name: tool async for tool in client.iter_tools()}
    schema = tools["json_schema_2020_12_tool"].input_schema
    await _succeeds(client, "json_schema_echo", {"schema": schema})


async def list_only(client: HttpClient, context: Mapping[str, Any]) -> None:
    """List the tools (their schemas' network ``$ref``s are never fetched)."""
    async for _ in client.iter_tools():
        pass


async def request_metadata(client: HttpClient, context: Mapping[str, Any]) -> None:
    """After the version dance of connecting: a list and a call, each with its ``_meta``."""
    if not _has_tools(client):
        return
    tools = [tool async for tool in client.iter_tools()]
    if tools:
        await client.call_tool(tools[0].name, {})


async def request_state(client: HttpClient, context: Mapping[str, Any]) -> None:
    """The four MRTR tools: the session runs the InputRequiredResult loop."""
    await client.list_tools()
    for name in (
        "test_mrtr_echo_state",
        "test_mrtr_unrelated",
        "test_mrtr_no_state",
        "test_mrtr_no_result_type",
    ):
        await client.call_tool(name, {})


async def standard_headers(client: HttpClient, context: Mapping[str, Any]) -> None:
    """Every method that carries ``Mcp-Method`` and ``Mcp-Name``."""
    async for tool in client.iter_tools():
        await client.call_tool(tool.name, {})
    async for resource in client.iter_resources():
        await client.read_resource(resource.uri)
    async for prompt in client.iter_prompts():
        await client.get_prompt(prompt.name, {})


async def custom_headers(client: HttpClient, context: Mapping[str, Any]) -> None:
    """The calls the context lists, their ``x-mcp-header`` arguments mirrored."""
    await client.list_tools()
    for call in context.get("toolCalls", []):
        await client.call_tool(call["name"], call.get("arguments"))


async def invalid_tool_headers(client: HttpClient, context: Mapping[str, Any]) -> None:
    """List (the invalid tools are dropped) and call what is left."""
    for tool in [tool async for tool in client.iter_tools()]:
        await client.call_tool(tool.name, {"region": "us-east-1"})
    for invalid in client.invalid_tools:
        print(f"dropped tool {invalid.name!r}: {invalid.reason}", file=sys.stderr)


async def authorized(client: HttpClient, context: Mapping[str, Any]) -> None:
    """Connected (authorized on the first 401): list the tools and call the first."""
    tools = [tool async for tool in client.iter_tools()]
    if tools:
        await client.call_tool(tools[0].name, {})


def oauth_for(name: str, context: Mapping[str, Any]) -> OAuth:
    """The `OAuth` of an ``auth/*`` scenario: its context's client, if it gives one."""
    if "valid_jwt" in context or "idp_id_token" in context:
        return _jwt_bearer_oauth(context)
    key = context.get("private_key_pem")
    return OAuth(
        on_redirect=follow_redirect,
        redirect_uri=REDIRECT_URI,
        client_name=CLIENT_INFO.name,
        client_id=context.get("client_id"),
        client_secret=context.get("client_secret"),
        client_metadata_url=CLIENT_METADATA_URL,
        private_key=key,
        signing_algorithm=context.get("signing_algorithm") or "ES256",
        grant_type=(
            "client_credentials"
            if name.startswith("auth/client-credentials")
            else "authorization_code"
        ),
    )


def _jwt_bearer_oauth(context: Mapping[str, Any]) -> OAuth:
    """Workload identity (the context's ``valid_jwt``) or enterprise-managed authorization."""
    idp = None
    if "idp_id_token" in context:
        idp = IdentityProvider(
            token_endpoint=context["idp_token_endpoint"], client_id=context["idp_client_id"]
        )
    jwt = context.get("valid_jwt") or context["idp_id_token"]
    return OAuth(
        grant_type="jwt_bearer",
        assertion=lambda: jwt,
        identity_provider=idp,
        client_id=context.get("client_id"),
        client_secret=context.get("client_secret"),
    )


async def follow_redirect(authorization_url: str) -> str:
    """Play the user: GET the authorization URL, return where it redirects (not followed)."""
    return await trio.to_thread.run_sync(_redirect_location, authorization_url)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # (the redirect URL is the answer; nothing listens there)


def _redirect_location(url: str) -> str:
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(url, timeout=REQUEST_TIMEOUT) as response:
            raise RuntimeError(f"the authorization endpoint answered {response.status}")
    except urllib.error.HTTPError as answer:
        location = answer.headers.get("Location")
        if answer.code // 100 != 3 or not location:
            raise
        return str(location)


def _has_tools(client: HttpClient) -> bool:
    # The client sends only what the server advertised (2025-06-18: "MUST respect the
    # negotiated capabilities"); a mock that advertises nothing gets no list.
    capabilities = client.server_capabilities
    return capabilities is None or capabilities.tools is not UNSET


async def _succeeds(client: HttpClient, name: str, arguments: Mapping[str, Any]) -> None:
    answer = await client.call_tool(name, arguments)
    if answer.is_error is True:
        raise RuntimeError(f"{name} failed: {answer.content}")


SCENARIOS: Final[dict[str, Scenario]] = {
    "initialize": initialize,
    "tools_call": tools_call,
    "elicitation-sep1034-client-defaults": elicitation_defaults,
    "sse-retry": sse_retry,
    "json-schema-2020-12-preservation": schema_preservation,
    "json-schema-ref-no-deref": list_only,
    "request-metadata": request_metadata,
    "sep-2322-client-request-state": request_state,
    "http-standard-headers": standard_headers,
    "http-custom-headers": custom_headers,
    "http-invalid-tool-headers": invalid_tool_headers,
}


async def run(
    url: str,
    scenario: Scenario,
    mode: ConnectMode,
    context: Mapping[str, Any],
    oauth: OAuth | None = None,
) -> None:
    """Connect in ``mode`` and play ``scenario``."""
    callbacks = ClientCallbacks(elicitation=elicit, sampling=sample, roots=roots)
    async with open_http_client(
        url,
        auth=oauth,
        mode=mode,
        callbacks=callbacks,
        client_info=CLIENT_INFO,
        timeout=REQUEST_TIMEOUT,
        # A legacy server may send its requests on the GET stream (the TS SDK's
        # elicitation does); sse-retry times the *last* GET, so it gets none.
        get_stream=scenario is not sse_retry,
    ) as client:
        await scenario(client, context)


def main(argv: list[str]) -> int:
    """Run the scenario the environment names against the URL in ``argv``."""
    name = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    scenario = authorized if name.startswith(AUTH_PREFIX) else SCENARIOS.get(name)
    if scenario is None or len(argv) < 2:
        print(
            f"usage: MCP_CONFORMANCE_SCENARIO=<{'|'.join(SCENARIOS)}|auth/...> {argv[0]} URL",
            file=sys.stderr,
        )
        return 2
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION")
    mode: ConnectMode = "modern" if version == MODERN else "legacy"
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    oauth = oauth_for(name, context) if name.startswith(AUTH_PREFIX) else None
    try:
        trio.run(run, argv[-1], scenario, mode, context, oauth)
    except Exception as exc:  # (reported; the exit status says it failed)
        print(f"{name}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
