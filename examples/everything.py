"""The "everything" server: every fixture the official MCP conformance suite calls.

Tool, resource and prompt names, arguments and literal texts are the suite's (see
shared/spec/CONFORMANCE.md §5 and §8.3); ``test_simple_text`` comes first because a
probe calls ``tools[0]``. The server is built by `build_server` on the sans-IO core,
with no event loop in sight: the few fixtures that pause between notifications await
the ``sleep`` they are given, so the trio transports and the plain-asyncio example can
both serve it.

    python examples/everything.py --transport stdio
    python examples/everything.py --transport http --port 3001   # http://127.0.0.1:3001/mcp
    python examples/everything.py --transport ws --port 3001     # ws://127.0.0.1:3001/ws

The same server is ``asgi_app``, an ASGI app serving it at ``/mcp`` (from the
repository's root, on asyncio or trio):

    uvicorn examples.everything:asgi_app --port 3001
    hypercorn -k trio examples.everything:asgi_app --bind 127.0.0.1:3001

With ``MCPCORE_REDIS_URL`` set, the app joins that Redis deployment, so that several
ASGI workers (``uvicorn --workers 4``) or hosts serve as one:

    MCPCORE_REDIS_URL=redis://127.0.0.1:6379 uvicorn examples.everything:asgi_app --workers 4
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import logging
import struct
import sys
import time
import zlib
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import msgspec

from mcpcore import jsonrpc, types
from mcpcore.server import Context, McpError, MissingCapabilityError, Server, ToolError

if TYPE_CHECKING:
    from mcpcore_cli.handover import Inherited

Sleep = Callable[[float], Awaitable[None]]

# A 1x1 PNG and a short WAV, made here so that they are real files of their type.


def _png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)  # 1x1, 8-bit RGB
    pixels = zlib.compress(b"\x00\xff\x00\x00")  # one red pixel
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


def _wav() -> bytes:
    samples = b"\x00\x00" * 800  # 0.1 s of silence, 8 kHz, 16-bit mono
    fmt = struct.pack("<HHIIHH", 1, 1, 8000, 16000, 2, 16)
    return (
        b"RIFF"
        + struct.pack("<I", 36 + len(samples))
        + b"WAVEfmt "
        + struct.pack("<I", 16)
        + fmt
        + b"data"
        + struct.pack("<I", len(samples))
        + samples
    )


PNG = base64.b64encode(_png()).decode()
WAV = base64.b64encode(_wav()).decode()

JSON_SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "additionalProperties": False,
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
}


def build_server(sleep: Sleep, **options: Any) -> Server:
    """The everything server; ``options`` go to `Server` (secret, clock...).

    The fixtures are registered in the order of the catalogue (CONFORMANCE §5), which is
    the order the lists show them in: ``test_simple_text`` first.
    """
    server = Server(
        "mcpcore-everything",
        "1.0.0",
        instructions="The mcpcore conformance fixture server.",
        **options,
    )
    _register_content_tools(server, sleep)
    _register_client_request_tools(server)
    _register_feature_tools(server, sleep)
    _register_mrtr_fixtures(server)
    _register_task_fixtures(server, sleep)
    _register_resources(server)
    _register_prompts(server)
    return server


# -- tools ------------------------------------------------------------------------


def _register_content_tools(server: Server, sleep: Sleep) -> None:
    """Register the tools-call-* fixtures (CONFORMANCE §5.2).

    One per kind of content, an error result, and calls that log or report progress
    while they run.
    """

    @server.tool()
    def test_simple_text() -> str:
        """Returns a simple text response."""
        return "This is a simple text response for testing."

    @server.tool()
    def test_image_content() -> types.ImageContent:
        """Returns an image."""
        return types.ImageContent(data=PNG, mime_type="image/png")

    @server.tool()
    def test_audio_content() -> types.AudioContent:
        """Returns audio."""
        return types.AudioContent(data=WAV, mime_type="audio/wav")

    @server.tool()
    def test_embedded_resource() -> types.EmbeddedResource:
        """Returns an embedded resource."""
        return types.EmbeddedResource(
            resource=types.TextResourceContents(
                uri="test://embedded-resource",
                mime_type="text/plain",
                text="This is an embedded resource content.",
            )
        )

    @server.tool()
    def test_multiple_content_types() -> list[types.ContentBlock]:
        """Returns text, an image and an embedded resource."""
        return [
            types.TextContent(text="Multiple content types test:"),
            types.ImageContent(data=PNG, mime_type="image/png"),
            types.EmbeddedResource(
                resource=types.TextResourceContents(
                    uri="test://mixed-content-resource",
                    mime_type="application/json",
                    text='{"test":"data","value":123}',
                )
            ),
        ]

    @server.tool()
    async def test_tool_with_logging(ctx: Context) -> str:
        """Logs three messages while it runs."""
        for text in ("Tool execution started", "Tool processing data", "Tool execution completed"):
            await ctx.log("info", text)
            await sleep(0.05)
        return "Logging test completed"

    @server.tool()
    def test_error_handling() -> str:
        """Always fails, as a tool result with isError."""
        raise ToolError("This tool intentionally returns an error for testing")

    @server.tool()
    async def test_tool_with_progress(ctx: Context) -> str:
        """Reports progress 0, 50, 100."""
        for value in (0, 50, 100):
            await ctx.report_progress(value, 100, f"Progress {value}%")
            await sleep(0.05)
        return "Progress test completed"


def _register_client_request_tools(server: Server) -> None:
    """Register the legacy fixtures that ask the client during a call.

    Sampling, and elicitation forms: plain, SEP-1034 defaults, SEP-1330 enums.
    """

    @server.tool()
    async def test_sampling(ctx: Context, prompt: str) -> str:
        """Asks the client's model."""
        message = types.SamplingMessage(role="user", content=types.TextContent(text=prompt))
        answer = await ctx.sample([message], max_tokens=100)
        return f"LLM response: {_text_of(answer.content)}"

    @server.tool()
    async def test_elicitation(ctx: Context, message: str) -> str:
        """Asks the user for a username and an email."""
        schema = {
            "type": "object",
            "properties": {"username": {"type": "string"}, "email": {"type": "string"}},
            "required": ["username", "email"],
        }
        answer = await ctx.elicit(message, schema)
        return f"User response: action={answer.action}, content={_json(answer.content)}"

    @server.tool()
    async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
        """Asks for a form whose fields all have defaults."""
        schema = {
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "score": {"type": "number", "default": 95.5},
                "status": {
                    "type": "string",
                    "enum": ["active", "inactive", "pending"],
                    "default": "active",
                },
                "verified": {"type": "boolean", "default": True},
            },
        }
        answer = await ctx.elicit("Please review and update the form fields with defaults", schema)
        return f"Elicitation completed: action={answer.action}, content={_json(answer.content)}"

    @server.tool()
    async def test_elicitation_sep1330_enums(ctx: Context) -> str:
        """Asks for a form with every kind of enum."""
        schema = {
            "type": "object",
            "properties": {
                "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                "titledSingle": {
                    "type": "string",
                    "oneOf": [
                        {"const": "value1", "title": "First Option"},
                        {"const": "value2", "title": "Second Option"},
                        {"const": "value3", "title": "Third Option"},
                    ],
                },
                "legacyEnum": {
                    "type": "string",
                    "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"],
                },
                "untitledMulti": {
                    "type": "array",
                    "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
                },
                "titledMulti": {
                    "type": "array",
                    "items": {
                        "anyOf": [
                            {"const": "value1", "title": "First Choice"},
                            {"const": "value2", "title": "Second Choice"},
                            {"const": "value3", "title": "Third Choice"},
                        ]
                    },
                },
            },
        }
        answer = await ctx.elicit("Please select options from the enum fields", schema)
        return f"Elicitation completed: action={answer.action}, content={_json(answer.content)}"


def _register_feature_tools(server: Server, sleep: Sleep) -> None:
    """Register the fixtures of single features.

    A JSON Schema 2020-12 input passed through verbatim, SSE polling, the
    server-stateless checks (a missing capability, streaming elicitation, logging, list
    changes) and the ``x-mcp-header`` mirror.
    """

    @server.tool(input_schema=JSON_SCHEMA_2020_12)
    def json_schema_2020_12_tool(arguments: dict[str, Any]) -> str:
        """Takes a JSON Schema 2020-12 input with $defs, $ref, allOf and if/then/else."""
        return f"Received: {_json(arguments)}"

    @server.tool()
    async def test_reconnection(ctx: Context) -> str:
        """Logs, closes its stream (HTTP), pauses, logs again; the client resumes the stream."""
        await ctx.log("info", "Before the pause")
        await ctx.close_stream()  # (2025-11-25 SSE polling; nothing happens on stdio)
        await sleep(0.2)
        await ctx.log("info", "After the pause")
        return "Reconnection test completed"

    @server.tool()
    def test_missing_capability(ctx: Context) -> str:
        """Needs the sampling capability on the request."""
        if not ctx.client_supports("sampling/createMessage"):
            raise MissingCapabilityError(
                types.ClientCapabilities(sampling=types.SamplingCapability())
            )
        return "The client declared sampling"

    @server.tool()
    async def test_streaming_elicitation(ctx: Context) -> str:
        """Asks for input the 2026-07-28 way (never as a request on the stream)."""
        answer = await ctx.elicit(
            "What should I stream?",
            {"type": "object", "properties": {"topic": {"type": "string"}}},
            key="topic",
        )
        return f"Streaming about {_json(answer.content)}"

    @server.tool()
    async def test_logging_tool(ctx: Context) -> str:
        """Logs through the normal path: only if the request asked for a log level."""
        await ctx.log("info", "test_logging_tool ran")
        return "Logged (if a log level was set)"

    @server.tool()
    async def test_trigger_tool_change() -> str:
        """Adds and removes a tool, and tells the listeners."""
        server.tools.add(lambda: "dynamic", name="test_dynamic_tool", description="Temporary.")
        server.tools.remove("test_dynamic_tool")
        await server.tools_changed()
        return "Tool list changed"

    @server.tool()
    async def test_trigger_prompt_change() -> str:
        """Adds and removes a prompt, and tells the listeners."""
        server.prompts.add(lambda: "dynamic", name="test_dynamic_prompt", description="Temporary.")
        server.prompts.remove("test_dynamic_prompt")
        await server.prompts_changed()
        return "Prompt list changed"

    @server.tool(
        input_schema={
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
        }
    )
    def test_x_mcp_header(arguments: dict[str, Any]) -> str:
        """Mirrors its region argument into an HTTP header (x-mcp-header)."""
        return f"region={arguments.get('region')}"


# -- resources and prompts --------------------------------------------------------


def _register_resources(server: Server) -> None:
    """Register the resources (CONFORMANCE §5.3): text, binary, one to subscribe to, a template."""

    @server.resource("test://static-text", name="static-text", mime_type="text/plain")
    def static_text() -> str:
        return "This is the content of the static text resource."

    @server.resource("test://static-binary", name="static-binary", mime_type="image/png")
    def static_binary() -> bytes:
        return _png()

    @server.resource("test://watched-resource", name="watched-resource", mime_type="text/plain")
    def watched_resource() -> str:
        return "A resource to subscribe to."

    @server.resource_template(
        "test://template/{id}/data", name="template-data", mime_type="application/json"
    )
    def template_data(id: str) -> str:
        return _json({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


def _register_prompts(server: Server) -> None:
    """Register the prompts (CONFORMANCE §5.4) and the completion of one (§5.5).

    A plain prompt, one with arguments, one embedding a resource, one with an image,
    and the MRTR one.
    """

    @server.prompt()
    def test_simple_prompt() -> str:
        """A simple prompt without arguments."""
        return "This is a simple prompt for testing."

    @server.prompt()
    def test_prompt_with_arguments(
        arg1: Annotated[str, msgspec.Meta(description="First test argument")],
        arg2: Annotated[str, msgspec.Meta(description="Second test argument")],
    ) -> str:
        """A prompt with two required arguments."""
        return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"

    @server.prompt()
    def test_prompt_with_embedded_resource(
        resourceUri: Annotated[str, msgspec.Meta(description="URI of the resource")],  # noqa: N803
    ) -> list[types.PromptMessage]:
        """A prompt that embeds a resource."""
        resource = types.TextResourceContents(
            uri=resourceUri, mime_type="text/plain", text="Embedded resource content for testing."
        )
        return [
            types.PromptMessage(role="user", content=types.EmbeddedResource(resource=resource)),
            types.PromptMessage(
                role="user",
                content=types.TextContent(text="Please process the embedded resource above."),
            ),
        ]

    @server.prompt()
    def test_prompt_with_image() -> list[types.PromptMessage]:
        """A prompt with an image."""
        return [
            types.PromptMessage(
                role="user", content=types.ImageContent(data=PNG, mime_type="image/png")
            ),
            types.PromptMessage(
                role="user", content=types.TextContent(text="Please analyze the image above.")
            ),
        ]

    @server.prompt()
    async def test_input_required_result_prompt(ctx: Context) -> str:
        """A prompt that asks the user for context first."""
        schema = {
            "type": "object",
            "properties": {"context": {"type": "string"}},
            "required": ["context"],
        }
        answer = await ctx.elicit("What context should the prompt use?", schema, key="user_context")
        context = (
            (answer.content or {}).get("context", "") if answer.content is not types.UNSET else ""
        )
        return f"Use this context: {context}"

    @server.completion(prompt="test_prompt_with_arguments")
    def complete_arguments(argument: str, value: str) -> list[str]:
        candidates = ["paris", "park", "party"] if argument == "arg1" else ["alpha", "beta"]
        return [c for c in candidates if c.startswith(value)]


def form(**properties: str) -> dict[str, Any]:
    """An elicitation form whose fields (all required) are ``name=type``."""
    return {
        "type": "object",
        "properties": {name: {"type": kind} for name, kind in properties.items()},
        "required": list(properties),
    }


def _register_mrtr_fixtures(server: Server) -> None:
    """Register the 2026-07-28 multi round-trip fixtures (CONFORMANCE §8.3).

    In the legacy era the same handlers send server-to-client requests instead.
    """

    @server.tool()
    async def test_input_required_result_elicitation(ctx: Context) -> str:
        """Asks the user's name (key user_name)."""
        answer = await ctx.elicit("What is your name?", form(name="string"), key="user_name")
        return f"Hello, {(answer.content or {}).get('name', 'stranger')}!"

    @server.tool()
    async def test_input_required_result_sampling(ctx: Context) -> str:
        """Asks the client's model a question (key capital_question)."""
        question = types.SamplingMessage(
            role="user", content=types.TextContent(text="What is the capital of France?")
        )
        answer = await ctx.sample([question], max_tokens=100, key="capital_question")
        return f"The model said: {_text_of(answer.content)}"

    @server.tool()
    async def test_input_required_result_list_roots(ctx: Context) -> str:
        """Asks for the client's roots (key client_roots)."""
        roots = await ctx.list_roots(key="client_roots")
        return f"Found {len(roots.roots)} root(s)"

    @server.tool()
    async def test_input_required_result_request_state(ctx: Context) -> str:
        """Asks for a confirmation; the answer comes back with the request state."""
        answer = await ctx.elicit("Please confirm", form(ok="boolean"), key="confirm")
        return "state-ok" if (answer.content or {}).get("ok") is True else "state-not-confirmed"

    @server.tool()
    async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
        """Asks three things at once."""
        greeting = types.SamplingMessage(
            role="user", content=types.TextContent(text="Generate a greeting")
        )
        answers = await ctx.request_input(
            {
                "user_name": types.ElicitRequest(
                    params=types.ElicitRequestFormParams(
                        message="What is your name?", requested_schema=form(name="string")
                    )
                ),
                "greeting": types.CreateMessageRequest(
                    params=types.CreateMessageRequestParams(messages=[greeting], max_tokens=50)
                ),
                "client_roots": types.ListRootsRequest(),
            }
        )
        return f"Got {len(answers)} answers"

    @server.tool()
    async def test_input_required_result_multi_round(ctx: Context) -> str:
        """Asks one question, then another."""
        name = await ctx.elicit("Step 1: What is your name?", form(name="string"), key="step1")
        color = await ctx.elicit(
            "Step 2: What is your favorite color?", form(color="string"), key="step2"
        )
        return f"{_json(name.content)} likes {_json(color.content)}"

    @server.tool()
    async def test_input_required_result_tampered_state(ctx: Context) -> str:
        """Asks for a confirmation; a tampered state is refused before this runs again."""
        await ctx.elicit("Please confirm", form(ok="boolean"), key="confirm")
        return "confirmed"

    @server.tool()
    async def test_input_required_result_capabilities(ctx: Context) -> str:
        """Asks only what the request's capabilities allow."""
        if ctx.client_supports("elicitation/create"):
            await ctx.elicit("Anything to add?", form(note="string"), key="note")
        else:
            question = types.SamplingMessage(role="user", content=types.TextContent(text="Hi?"))
            await ctx.sample([question], max_tokens=10, key="hello")
        return "done"


def _register_task_fixtures(server: Server, sleep: Sleep) -> None:
    """Register the tasks extension's fixtures (CONFORMANCE §8.4, the ``tasks-*`` scenarios).

    Tools registered with ``task=...`` run as tasks for a client that declared
    ``io.modelcontextprotocol/tasks`` on its request (2026-07-28).
    """

    @server.tool()
    def greet(name: str) -> str:
        """Greets; never a task."""
        return f"Hello, {name}!"

    @server.tool(task="optional")
    async def slow_compute(seconds: float, label: str = "") -> str:
        """Sleeps ``seconds`` seconds, then answers (a task for clients that take one)."""
        await sleep(seconds)
        return f"Computed {label or 'result'} after {seconds:g}s"

    @server.tool(task="required")
    async def failing_job() -> str:
        """Fails as a tool after about a second: the task completes with isError."""
        await sleep(1)
        raise ToolError("failing_job failed, as it always does")

    @server.tool(task="optional")
    async def protocol_error_job() -> str:
        """Fails at the protocol level: the task fails with a JSON-RPC error."""
        raise McpError(jsonrpc.INTERNAL_ERROR, "protocol_error_job hit an internal error")

    @server.tool(task="optional")
    async def confirm_delete(ctx: Context, filename: str) -> str:
        """Asks for a confirmation inside the task, then deletes (nothing)."""
        answer = await ctx.elicit(f"Delete {filename}?", form(confirm="boolean"), key="confirm")
        confirmed = (answer.content or {}).get("confirm") is True
        return f"Deleted {filename}" if confirmed else f"Kept {filename}"

    @server.tool(task="optional")
    async def multi_input(ctx: Context) -> str:
        """Asks two questions at once inside the task."""
        answers = await ctx.request_input(
            {
                "name": types.ElicitRequest(
                    params=types.ElicitRequestFormParams(
                        message="What is your name?", requested_schema=form(name="string")
                    )
                ),
                "confirm": types.ElicitRequest(
                    params=types.ElicitRequestFormParams(
                        message="Confirm?", requested_schema=form(confirm="boolean")
                    )
                ),
            }
        )
        return f"Got {len(answers)} answers"

    @server.tool(task="required", gather_input_first=True)
    async def test_tool_with_task(ctx: Context) -> str:
        """Asks the user's name within the request, then runs as a task."""
        answer = await ctx.elicit("What is your name?", form(name="string"), key="user_name")
        await ctx.start_task()
        return f"Hello, {(answer.content or {}).get('name', 'stranger')}, from a task!"


def _text_of(content: Any) -> str:
    blocks = content if isinstance(content, list) else [content]
    return " ".join(block.text for block in blocks if isinstance(block, types.TextContent))


def _json(value: Any) -> str:
    return msgspec.json.encode(None if value is types.UNSET else value).decode()


def main(argv: list[str] | None = None) -> int:
    """Serve the everything server over the transport named on the command line.

    Over HTTP and WebSocket the URLs it serves go to stdout; over stdio, stdout is the
    protocol's. Ctrl+C or SIGTERM stops it (status 0).
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transport", choices=["stdio", "http", "ws"], default="stdio")
    from mcpcore_cli.listening import add_listening_options

    add_listening_options(parser, default_host="127.0.0.1", default_port=3001)
    from mcpcore_cli.workers import add_worker_options, run_workers, workers_error

    add_worker_options(parser)
    from mcpcore_cli.busypolling import add_busy_poll_option

    add_busy_poll_option(parser)
    from mcpcore_cli.deploying import add_deployment_options

    add_deployment_options(parser)
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="log each request and refusal to stderr"
    )
    arguments = parser.parse_args(argv)
    problem = workers_error(arguments)
    if problem is not None:
        parser.error(problem)
    from mcpcore_cli.deploying import (
        SESSIONS_PER_WORKER,
        deployment_error,
        redis_url,
        unreachable_errors,
    )

    problem = deployment_error(arguments)
    if problem is not None:
        parser.error(problem)
    if arguments.verbose:
        logging.basicConfig(
            level=logging.DEBUG, stream=sys.stderr, format="everything.py: %(message)s"
        )
    from mcpcore_cli.handover import inherited_listening

    inherited = inherited_listening()  # (a worker of a supervisor's: what it was given)
    if inherited is None and arguments.workers > 1:  # (the supervisor)
        if redis_url(arguments) is None and arguments.transport == "http":
            print(f"everything.py: warning: {SESSIONS_PER_WORKER}", file=sys.stderr)
        return run_workers(
            arguments.workers,
            sys.argv[1:] if argv is None else argv,
            host=arguments.host,
            port=arguments.port,
            name="everything.py",
            announce=partial(_announce, arguments),
        )
    import trio

    try:
        with contextlib.suppress(KeyboardInterrupt):  # Ctrl+C: the way to stop it
            trio.run(_serve, arguments, inherited)
    except unreachable_errors(arguments) as exc:
        print(f"everything.py: can't join the deployment: {exc}", file=sys.stderr)
        return 1
    return 0


def _announce(arguments: argparse.Namespace, port: int) -> None:
    """Print where the server listens (and, to stderr, when no token guards it)."""
    from mcpcore_cli.listening import exposure_warning, first_url, listening_urls, token_auth

    scheme, path = ("http", "/mcp") if arguments.transport == "http" else ("ws", "/ws")
    url = first_url(scheme, arguments.host, port, path)
    print(f"Serving the everything server at {url}", flush=True)
    for other in listening_urls(url, arguments.host)[1:]:
        print(f"  and at {other}", flush=True)
    warning = exposure_warning(arguments.host, token_auth(arguments.token))
    if warning is not None:
        print(warning, file=sys.stderr, flush=True)


async def _serve(arguments: argparse.Namespace, inherited: Inherited | None) -> None:
    import trio

    from mcpcore_cli.deploying import deployment, redis_url
    from mcpcore_cli.listening import allowed_hosts, token_auth
    from mcpcore_cli.stopping import raise_sole, stop_on_terminate
    from transports import serve_http, serve_stdio, serve_websocket

    server = build_server(trio.sleep)
    if inherited is not None and redis_url(arguments) is None:
        # Every worker the same key: any accepts another's cursor. (With --redis, the
        # deployment's, which workers on other hosts share too.)
        server.configure(secret=inherited.key, clock=time.time)
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(stop_on_terminate, nursery.cancel_scope, lambda: None)
            if arguments.transport == "stdio":
                await serve_stdio(server, busy_poll=arguments.busy_poll)
                nursery.cancel_scope.cancel()
                return
            if inherited is not None:
                nursery.start_soon(inherited.stop_with_supervisor, nursery.cancel_scope)
            # Serves http://HOST:PORT/mcp (which takes WebSocket upgrades too) or
            # ws://HOST:PORT/ws (subprotocol "mcp"), both eras, until stopped.
            auth = token_auth(arguments.token)
            serve: Any = serve_websocket
            if arguments.transport == "http":
                serve = partial(serve_http, deployment=deployment(arguments))
            port = await nursery.start(
                partial(
                    serve,
                    server,
                    host=arguments.host,
                    port=arguments.port,
                    sockets=None if inherited is None else inherited.sockets,
                    allowed_hosts=allowed_hosts(arguments.host, arguments.allow_host),
                    auth=auth,
                    busy_poll=arguments.busy_poll,
                )
            )
            if inherited is None:
                _announce(arguments, port)
            else:
                await inherited.report_ready()  # (the supervisor prints the banner)
    except BaseException as exc:
        raise_sole(exc)


def _asgi_app() -> Any:
    """The everything server as an ASGI app at ``/mcp`` (asyncio or trio: anyio's sleep).

    One worker of a deployment when ``MCPCORE_REDIS_URL`` names a Redis.
    """
    import os

    import anyio

    from mcpcore_cli.deploying import REDIS_VARIABLE
    from transports import AsgiApp, Deployment

    redis = os.environ.get(REDIS_VARIABLE)
    deployment = Deployment(redis) if redis else None
    return AsgiApp(build_server(anyio.sleep), deployment=deployment)


#: The everything server as an ASGI app (``uvicorn examples.everything:asgi_app``).
asgi_app = _asgi_app()


if __name__ == "__main__":
    sys.exit(main())
