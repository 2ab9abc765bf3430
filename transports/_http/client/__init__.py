"""The Streamable HTTP client: h11 over trio sockets, both eras, and the HTTP+SSE fallback.

One concept per module: `_url` (the server's URL), `_connection` (one h11 connection),
`_pool` (keep-alive connections), `_exchange` (a request and its response),
`_auth` (bearer tokens), `_router` (where the server's messages go), `_events`
(event streams into the router), `_answers` (event streams answering a request),
`_legacy` (a legacy session: its id, GET streams, re-initialization, DELETE),
`_http_sse` (the 2024-11-05 transport), `_outcomes` (ending a request without an
answer), `_streamable` (the `ClientTransport`), `_client` (`open_http_client`). The
protocol decisions that involve no IO live in `mcpcore.http`.
"""

from transports._http.client.auth import HttpAuth
from transports._http.client.client import HttpClient, open_http_client
from transports._net.errors import HttpStatusError
from transports._net.pool import (
    CONNECT_TIMEOUT,
    MAX_CLIENT_CONNECTIONS,
    MAX_IDLE_CONNECTIONS,
)

__all__ = [
    "CONNECT_TIMEOUT",
    "MAX_CLIENT_CONNECTIONS",
    "MAX_IDLE_CONNECTIONS",
    "HttpAuth",
    "HttpClient",
    "HttpStatusError",
    "open_http_client",
]
