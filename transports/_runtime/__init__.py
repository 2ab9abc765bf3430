"""The runtime every server shares: one reader, one writer, a task per request.

`serving` drives a `mcpcore.Connection` for a stream of messages (stdio, a WebSocket):
a reader task that never runs user code, requests handed to `workers` under their own
cancel scopes past a cap (`admission`), answers written through one bounded `writer`.
`requestlog` logs each request at debug level, `busypoll` is the opt-in spin before the
event loop sleeps. Nothing here knows a transport.
"""
