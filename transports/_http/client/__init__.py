"""The Streamable HTTP client: HTTP/1.1 over trio sockets, both eras, the HTTP+SSE fallback.

One concept per module (the URL, the HTTP/1.1 connections and their pool are
`transports._net`'s, shared with the WebSocket client): `exchange` (a request and its
response), `auth` (bearer tokens), `oauth` (OAuth 2.1, driving `mcpcore.auth`; `assertion`
signs ``private_key_jwt``, `dpop` holds the DPoP key and signs proofs, `destinations`
says which addresses its fetches may reach: the SSRF policy), `router` (where the
server's messages go), `events` (event streams into the router), `answers` (event streams
answering a request), `legacy` (a legacy session: its id, GET streams, re-initialization,
DELETE), `http_sse` (the 2024-11-05 transport), `outcomes` (ending a request without an
answer), `streamable` (the `ClientTransport`), `client` (`open_http_client`). The protocol
decisions that involve no IO live in `mcpcore.http`.
"""

from transports._http.client.auth import HttpAuth
from transports._http.client.client import HttpClient, open_http_client
from transports._http.client.oauth import InMemoryTokenStorage, OAuth, TokenStorage
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
    "InMemoryTokenStorage",
    "OAuth",
    "TokenStorage",
    "open_http_client",
]
