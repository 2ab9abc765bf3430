// The official TypeScript SDK v1 client over its WebSocketClientTransport, against an
// MCP server at the URL given: lists and calls tools, reads a resource, gets a prompt,
// and prints what it got as one JSON document on stdout.
//
//     node ws_ts_client.mjs SDK_DIR ws://127.0.0.1:PORT/ws
//
// SDK_DIR is the folder whose node_modules holds @modelcontextprotocol/sdk (installed
// by tests/transports/ts_sdk.py). Node 22 has the global WebSocket the transport uses.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [sdkDir, url] = process.argv.slice(2);
const esm = join(sdkDir, "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm");
const load = (path) => import(pathToFileURL(join(esm, path)).href);
const { Client } = await load("client/index.js");
const { WebSocketClientTransport } = await load("client/websocket.js");

const client = new Client({ name: "ts-sdk-ws-interop", version: "1.0.0" }, { capabilities: {} });
const transport = new WebSocketClientTransport(new URL(url));
await client.connect(transport);
const tools = await client.listTools();
const called = await client.callTool({ name: "test_simple_text", arguments: {} });
const resource = await client.readResource({ uri: "test://static-text" });
const prompt = await client.getPrompt({
  name: "test_prompt_with_arguments",
  arguments: { arg1: "first", arg2: "second" },
});
console.log(
  JSON.stringify({
    server: client.getServerVersion().name,
    protocol: transport._socket.protocol,
    tools: tools.tools.map((tool) => tool.name),
    called,
    resource,
    prompt,
  }),
);
await client.close();
