"""The neutral layer under HTTP and WebSocket: sockets, HTTP/1.1 connections, limits.

HTTP/1.1 itself, sans-IO, for both sides: `http1`. Server side: `accepting`
(connections up to a cap), `server_connection` (one `http1` connection per TCP
connection), `request` and `reply` (a request head, an answer or a
refusal), `gate` (Host, Origin, path and bearer token checked before anything else) with
`auth` and its token checks (`jwt_verifier`, `introspection`, both reaching the
authorization server through `backchannel`), `limits`, and `partial` (the process-wide
budget for messages still arriving).
Client side: `url`, `pool` and `client_connection` (keep-alive connections, TLS),
`errors`. Streamable HTTP and WebSocket both build on this; it knows neither.
"""
