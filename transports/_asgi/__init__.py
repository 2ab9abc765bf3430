"""The Streamable HTTP endpoint as an ASGI 3 application (`app.AsgiApp`).

The same router, endpoints, sessions, streams, gate and limits as ``serve_http``
(`transports._http.server`): only the bytes are the ASGI server's. `reading` turns an
ASGI request into the router's `HttpRequest` within the limits, `writer` is the
`ResponseWriter` that hands a `Reply`'s decisions to the ASGI server, and `watching`
does for every request what ``serve_http``'s connection watcher does (the nudge of an
answer stream, the client hanging up, keep-alive comments, a client that stopped
reading). Nothing here imports trio: the app runs on asyncio and on trio alike.
"""
