"""What the bearer-token tests share: the resource, its issuer, and a guarded request.

`test_jwt_auth` (JWTs against a JWKS) and `test_introspection` (opaque tokens, RFC
7662) guard the same endpoint the same way; only the verifier differs.
"""

from __future__ import annotations

from typing import Final

from tests.transports.http_raw import RawConnection, RawResponse, modern_body, modern_headers

ISSUER: Final = "https://auth.example.com"
RESOURCE: Final = "https://mcp.example.com/mcp"
METADATA: Final = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
SCOPE: Final = "mcp:tools"
DISCOVER: Final = modern_body("server/discover")
DISCOVER_HEADERS: Final = modern_headers("server/discover")
#: The ``WWW-Authenticate`` of a refused token.
INVALID: Final = f'Bearer error="invalid_token", resource_metadata="{METADATA}", scope="{SCOPE}"'


async def discover(http: RawConnection, token: str) -> RawResponse:
    """A 2026-07-28 ``server/discover`` with ``token``; its answer."""
    headers = {**DISCOVER_HEADERS, "Authorization": f"Bearer {token}"}
    return await http.request(headers=headers, body=DISCOVER)
