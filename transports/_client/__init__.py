"""The client core every transport shares: `Client`, its calls, and the events it routes.

`client.Client` is the awaitable client users hold; `transport` is the one contract a
transport fulfils for it; `calls` tracks each call (its answer, timeout, cancellation),
`routing` hands the Connection's events to calls, notification queues and the server's
requests, and `stream` drives a message stream (stdio, WebSocket) for it.
"""
