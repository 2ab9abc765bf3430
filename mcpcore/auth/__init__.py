"""OAuth 2.1 for MCP clients, sans-IO: the flow a client runs when a server answers 401.

`authorize` is a generator yielding what it needs done (`Fetch` an URL, `Redirect` the
user, `SignAssertion` with the client's key, `SignProof` for DPoP, `ObtainAssertion` for
the JWT-bearer grant) and sent the answers; it returns a `Grant`.
No IO, clock or randomness here: `FlowInputs` carries the PKCE verifier, the ``state``
and the time. `transports.OAuth` drives it for `transports.open_http_client`.

    flow = authorize(url, parse_challenge(header), config=ClientConfig(), inputs=inputs)
    request = next(flow)
    while True:
        answer = do(request)          # a Fetched, or a str for Redirect / SignAssertion
        try:
            request = flow.send(answer)
        except StopIteration as done:
            grant = done.value
            break
"""

from mcpcore.auth._discovery import (
    LOOPBACK_HOSTS,
    MAX_CHALLENGE_SIZE,
    Challenge,
    as_metadata_urls,
    parse_challenge,
    prm_urls,
    resource_allowed,
)
from mcpcore.auth._dpop import (
    DPOP_ALGORITHM,
    MAX_NONCE_RETRIES,
    SignProof,
    access_token_hash,
    proof_target,
)
from mcpcore.auth._flow import (
    ClientConfig,
    Grant,
    GrantType,
    Request,
    authorize,
    code_challenge,
)
from mcpcore.auth._grants import JWT_BEARER_GRANT, IdentityProvider, ObtainAssertion
from mcpcore.auth._messages import (
    MAX_METADATA_SIZE,
    Fetch,
    Fetched,
    FlowInputs,
    OAuthError,
    Redirect,
    SignAssertion,
)
from mcpcore.auth._tokens import ASSERTION_LIFETIME, ClientInfo, Tokens, refresh

__all__ = [
    "ASSERTION_LIFETIME",
    "DPOP_ALGORITHM",
    "JWT_BEARER_GRANT",
    "LOOPBACK_HOSTS",
    "MAX_CHALLENGE_SIZE",
    "MAX_METADATA_SIZE",
    "MAX_NONCE_RETRIES",
    "Challenge",
    "ClientConfig",
    "ClientInfo",
    "Fetch",
    "Fetched",
    "FlowInputs",
    "Grant",
    "GrantType",
    "IdentityProvider",
    "OAuthError",
    "ObtainAssertion",
    "Redirect",
    "Request",
    "SignAssertion",
    "SignProof",
    "Tokens",
    "access_token_hash",
    "as_metadata_urls",
    "authorize",
    "code_challenge",
    "parse_challenge",
    "prm_urls",
    "proof_target",
    "refresh",
    "resource_allowed",
]
