"""The client core every transport shares: `Client`, its calls, and the events it routes.

`client.Client` is the awaitable client users hold; `transport` is the one contract a
transport fulfils for it (`ClientTransport`); `opening.open_client` is the one shape of
every ``open_*_client``; `calls` tracks each call (its answer, its timeout in a cancel
scope, its progress), `routing` hands the Connection's events to calls, notification
queues and the server's requests, and `stream` drives a message stream (stdio,
WebSocket) through the transport's `stream.StreamLink`.
"""
