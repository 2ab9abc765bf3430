// The official TypeScript SDK v1 client over its StreamableHTTPClientTransport, against an
// MCP server at the URL given: connects (the 2025-11-25 handshake and a session), lists
// and calls tools, reads a resource, gets a prompt, calls a tool with progress, ends the
// session (DELETE), and prints what it got as one JSON document on stdout.
//
//     node http_ts_client.mjs SDK_DIR http://127.0.0.1:PORT/mcp
//
// SDK_DIR is the folder whose node_modules holds @modelcontextprotocol/sdk (installed by
// tests/transports/sdk_installs.py). Every request is bounded by REQUEST_TIMEOUT.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const REQUEST_TIMEOUT = 10_000; // ms: a lost answer fails the run instead of hanging it

const [sdkDir, url] = process.argv.slice(2);
const esm = join(sdkDir, "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm");
const load = (path) => import(pathToFileURL(join(esm, path)).href);
const { Client } = await load("client/index.js");
const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");
const { CallToolResultSchema } = await load("types.js");

const options = { timeout: REQUEST_TIMEOUT };
const client = new Client({ name: "ts-sdk-http-interop", version: "1.0.0" }, { capabilities: {} });
const transport = new StreamableHTTPClientTransport(new URL(url));
await client.connect(transport, options);
const session = transport.sessionId;
const protocol = transport.protocolVersion;
const tools = await client.listTools(undefined, options);
const called = await client.callTool(
  { name: "test_simple_text", arguments: {} },
  CallToolResultSchema,
  options,
);
const resource = await client.readResource({ uri: "test://static-text" }, options);
const prompt = await client.getPrompt(
  { name: "test_prompt_with_arguments", arguments: { arg1: "first", arg2: "second" } },
  options,
);
const progress = [];
const slow = await client.callTool(
  { name: "test_tool_with_progress", arguments: {} },
  CallToolResultSchema,
  { ...options, onprogress: (update) => progress.push([update.progress, update.total]) },
);
await transport.terminateSession();
const ended = transport.sessionId === undefined;
await client.close();
console.log(
  JSON.stringify({
    server: client.getServerVersion().name,
    protocol,
    session,
    ended,
    tools: tools.tools.map((tool) => tool.name),
    called,
    resource,
    prompt,
    slow,
    progress,
  }),
);
