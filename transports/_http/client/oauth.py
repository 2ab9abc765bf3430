"""`OAuth`: the HTTP client authorizes itself when a server answers 401 (or 403 for scope).

The decisions are `mcpcore.auth`'s (a sans-IO generator); this module does what it asks:
fetches metadata and tokens (one short-lived connection per request, bounded bodies, no
redirect followed), hands the authorization URL to the user's ``on_redirect`` callback,
asks the ``assertion`` callback for the JWT-bearer grant's JWT, signs ``private_key_jwt``
assertions and DPoP proofs (PyJWT, the ``oauth`` extra), draws the PKCE verifier and
``state`` from `secrets` and reads the clock.

Every URL fetched came from a server, so each is resolved first and checked against
SSRF (`destinations`: never link-local, multicast or reserved addresses; private and
loopback ones only for an MCP server in the same zone, or with
``allow_private_networks=True``), and the connection goes to the very addresses checked.

With a DPoP-bound token (RFC 9449; where the authorization server advertises DPoP)
`OAuthSession` sends ``Authorization: DPoP <token>`` and a fresh proof with every
request, and on a resource server's ``use_dpop_nonce`` 401 sends the request again with
its nonce (the latest nonce is used from then on). An authorization server's latest
nonce is remembered per token endpoint, for the next token request's first proof.

    oauth = OAuth(on_redirect=open_browser_and_wait_for_the_redirect)
    async with open_http_client(url, auth=oauth) as client: ...

Tokens and registrations live in a `TokenStorage` (in memory by default): give the same
storage to the next `OAuth` and it starts from the tokens the last one got.
"""

from __future__ import annotations

import inspect
import secrets
import ssl
import time
from collections.abc import Awaitable, Callable, Generator, Mapping
from typing import TYPE_CHECKING, Final, Protocol, TypeVar

import trio

from mcpcore.auth import (
    MAX_METADATA_SIZE,
    ClientConfig,
    ClientInfo,
    Fetch,
    Fetched,
    FlowInputs,
    GrantType,
    IdentityProvider,
    OAuthError,
    ObtainAssertion,
    Redirect,
    Request,
    SignAssertion,
    SignProof,
    Tokens,
    authorize,
    parse_challenge,
    refresh,
)
from transports._client.errors import ConnectionClosedError
from transports._http.client.auth import AuthHeaders
from transports._http.client.destinations import AddressGuard
from transports._http.client.exchange import BodyTooLargeError, Response
from transports._net.client_connection import Headers
from transports._net.pool import ConnectFailedError, ConnectionPool
from transports._net.url import HttpUrl, parse_url

if TYPE_CHECKING:
    from transports._http.client.dpop import DpopKey

__all__ = [
    "EXPIRY_MARGIN",
    "FETCH_TIMEOUT",
    "MAX_AUTHORIZATIONS",
    "MAX_CHALLENGE_RETRIES",
    "MAX_REMEMBERED_CLIENTS",
    "AssertionSource",
    "InMemoryTokenStorage",
    "OAuth",
    "OAuthSession",
    "RedirectHandler",
    "TokenStorage",
]

#: Authorization flows one request may trigger (a 401, then 403 ``insufficient_scope``
#: step-ups) before its refusal is returned: "clients SHOULD implement retry limits to
#: avoid infinite authorization loops" (2025-11-25 basic/authorization, Scope Challenge
#: Handling); three lets a 401 and two step-ups through.
MAX_AUTHORIZATIONS: Final = 3
#: Retries one request may get in all: each authorization's new token may meet one
#: ``use_dpop_nonce`` challenge ("the client ... retries the request with the supplied
#: nonce", RFC 9449 §9) on top of the authorizations themselves; a server that keeps
#: naming new nonces gets no more.
MAX_CHALLENGE_RETRIES: Final = 2 * MAX_AUTHORIZATIONS
#: Seconds each metadata, registration or token request may take (one round trip to a
#: server that answers in milliseconds; generous for a slow identity provider).
FETCH_TIMEOUT: Final = 30.0
#: Registrations an `InMemoryTokenStorage` keeps, one per authorization server: a server
#: has one or two; a hostile one naming a new issuer on every 401 gets no more than this
#: (the oldest is forgotten, and registered again if it comes back). An `OAuth` keeps
#: as many authorization servers' DPoP nonces, for the same reason.
MAX_REMEMBERED_CLIENTS: Final = 16
#: Seconds before ``expires_in`` runs out that a token is refreshed: a request sent with a
#: token about to expire would arrive with an expired one.
EXPIRY_MARGIN: Final = 30.0
# PKCE verifier: 48 random bytes are 64 base64url characters, inside RFC 7636's 43-128.
_VERIFIER_BYTES: Final = 48
_STATE_BYTES: Final = 24
_AUTHORIZATION: Final = b"authorization"
_DPOP: Final = b"dpop"
_DPOP_HEADER: Final = "dpop"  # (a token request's proof, RFC 9449 §4.1)
_DPOP_NONCE: Final = "dpop-nonce"  # (RFC 9449 §8: an authorization server's nonce)
_DPOP_TOKEN: Final = "DPoP"  # (Tokens.token_type of a DPoP-bound token)
_USE_DPOP_NONCE: Final = "use_dpop_nonce"
_NO_HEADERS: Final[AuthHeaders] = ()
_T = TypeVar("_T")

#: Given the authorization URL, show it to the user (a browser) and return the URL the
#: authorization server redirected back to (with ``code``, ``state`` and ``iss``).
RedirectHandler = Callable[[str], str | Awaitable[str]]
#: Returns a JWT (sync or async): a workload identity token for the JWT-bearer grant, or
#: with an `IdentityProvider` the user's ID token there. Asked anew for every grant, so
#: a short-lived token can be fetched fresh.
AssertionSource = Callable[[], str | Awaitable[str]]


class TokenStorage(Protocol):
    """Where tokens and client registrations are kept between flows (and runs)."""

    async def get_tokens(self) -> Tokens | None:
        """The tokens last obtained, if any."""
        ...

    async def set_tokens(self, tokens: Tokens | None) -> None:
        """Keep ``tokens`` (None forgets them)."""
        ...

    async def get_clients(self) -> Mapping[str, ClientInfo]:
        """Our registrations, by authorization server issuer."""
        ...

    async def set_client(self, client: ClientInfo) -> None:
        """Keep a registration (at ``client.issuer``)."""
        ...


class InMemoryTokenStorage:
    """A `TokenStorage` in memory: what a process gets is lost when it exits."""

    def __init__(self) -> None:
        self._tokens: Tokens | None = None
        self._clients: dict[str, ClientInfo] = {}

    async def get_tokens(self) -> Tokens | None:
        """The tokens last obtained, if any."""
        return self._tokens

    async def set_tokens(self, tokens: Tokens | None) -> None:
        """Keep ``tokens``."""
        self._tokens = tokens

    async def get_clients(self) -> Mapping[str, ClientInfo]:
        """Our registrations, by issuer."""
        return dict(self._clients)

    async def set_client(self, client: ClientInfo) -> None:
        """Keep a registration (at most `MAX_REMEMBERED_CLIENTS`, the newest)."""
        self._clients.pop(client.issuer, None)
        self._clients[client.issuer] = client
        while len(self._clients) > MAX_REMEMBERED_CLIENTS:
            del self._clients[next(iter(self._clients))]


class OAuth:
    """OAuth 2.1 authorization for `open_http_client` (``auth=OAuth(...)``).

    Nothing happens until a server answers 401: then the protected-resource and
    authorization-server metadata are discovered, a client is registered (or the
    pre-registered one, or the Client ID Metadata Document URL, is used), the user is
    sent to ``on_redirect`` (authorization code with PKCE), and the request goes again
    with the token. A 403 ``insufficient_scope`` asks for the wider scope the same way
    (`MAX_AUTHORIZATIONS` per request); expired tokens are refreshed when a refresh
    token allows.

    Where the authorization server advertises DPoP with ES256, tokens are DPoP-bound
    (RFC 9449) to a key pair this `OAuth` generates (one per instance, never stored):
    a token kept in ``storage`` by another instance is refused and authorized anew.

    The flow runs inside the request that met the 401, so the user's sign-in must end
    within that request's timeout (``timeout=`` of `open_http_client`, 60 s by default;
    the first request is the connection's own): raise it for slow sign-ins.

    Args:
        on_redirect: Shows the authorization URL to the user and returns the redirect
            URL (sync or async). Required for ``authorization_code``.
        redirect_uri: Our redirect URI (registered with the authorization server).
        client_name: Our name at registration.
        client_id: A pre-registered client id (no registration is attempted).
        client_secret: Its secret.
        client_metadata_url: The HTTPS URL of our Client ID Metadata Document, used as
            the client id where the server supports them.
        token_endpoint_auth_method: Force ``client_secret_basic``, ``client_secret_post``,
            ``private_key_jwt`` or ``none`` (else chosen from what the server supports).
        private_key: A PEM private key: authenticate with ``private_key_jwt``
            (needs the ``oauth`` extra).
        signing_algorithm: The key's JWS algorithm (``ES256``, ``RS256``...).
        grant_type: ``authorization_code`` (a user signs in), ``client_credentials``
            (the client acts for itself, with a secret or a key), or ``jwt_bearer``
            (RFC 7523: the JWT ``assertion`` returns is the grant).
        assertion: For ``jwt_bearer`` (sync or async): returns the workload's identity
            JWT (workload identity federation, SEP-1933), or with ``identity_provider``
            the user's ID token there.
        identity_provider: Enterprise-managed authorization (SEP-990): the ID token is
            exchanged at this `IdentityProvider` (RFC 8693) for an ID-JAG, the
            assertion of the ``jwt_bearer`` grant.
        dpop: DPoP-bound tokens: None (the default) where the authorization server
            advertises them, True always, False never (needs the ``oauth`` extra).
        scope: The scopes to ask for (else: the challenge's, else the resource's).
        want_refresh_token: Ask for refresh tokens (``offline_access`` when listed).
        storage: Where tokens and registrations are kept (`InMemoryTokenStorage`).
        ssl_context: For ``https`` metadata and token endpoints (the system's store by
            default).
        allow_private_networks: Let the flow's requests reach private (RFC 1918, unique
            local, carrier-grade NAT) and loopback addresses whatever the MCP server's
            address: for an authorization server on the intranet of a public MCP server.
            Without it they are refused (server-side request forgery), unless the MCP
            server is on such an address too. Link-local (cloud metadata services),
            multicast and reserved addresses are refused either way.
    """

    def __init__(
        self,
        *,
        on_redirect: RedirectHandler | None = None,
        redirect_uri: str = "http://127.0.0.1/callback",
        client_name: str = "mcpcore",
        client_id: str | None = None,
        client_secret: str | None = None,
        client_metadata_url: str | None = None,
        token_endpoint_auth_method: str | None = None,
        private_key: str | None = None,
        signing_algorithm: str = "ES256",
        grant_type: GrantType = "authorization_code",
        assertion: AssertionSource | None = None,
        identity_provider: IdentityProvider | None = None,
        dpop: bool | None = None,
        scope: str | None = None,
        want_refresh_token: bool = True,
        storage: TokenStorage | None = None,
        ssl_context: ssl.SSLContext | None = None,
        allow_private_networks: bool = False,
    ) -> None:
        needs = {
            "authorization_code": ("on_redirect", on_redirect),
            "client_credentials": ("a client_id", client_id),
            "jwt_bearer": ("an assertion", assertion),
        }
        what, given = needs[grant_type]
        if given is None:
            raise ValueError(f"the {grant_type} grant needs {what}")
        self.config = ClientConfig(
            redirect_uri=redirect_uri,
            client_name=client_name,
            grant_type=grant_type,
            client_id=client_id,
            client_secret=client_secret,
            client_metadata_url=client_metadata_url,
            token_endpoint_auth_method=token_endpoint_auth_method,
            signing_algorithm=signing_algorithm if private_key is not None else None,
            scope=scope,
            want_refresh_token=want_refresh_token,
            dpop=dpop,
            identity_provider=identity_provider,
        )
        self.storage: TokenStorage = storage if storage is not None else InMemoryTokenStorage()
        self._on_redirect = on_redirect
        self._assertion = assertion
        self._dpop_key: DpopKey | None = None
        self._private_key = private_key
        self._ssl_context = ssl_context
        self.allow_private_networks = allow_private_networks
        self._dpop_nonces: dict[str, str] = {}  # (by token endpoint, the newest last)

    def __repr__(self) -> str:
        return f"OAuth(grant_type={self.config.grant_type!r}, client_id={self.config.client_id!r})"

    def inputs(self) -> FlowInputs:
        """A flow's inputs: fresh randomness, the time, the servers' latest DPoP nonces."""
        return FlowInputs(
            code_verifier=secrets.token_urlsafe(_VERIFIER_BYTES),
            state=secrets.token_urlsafe(_STATE_BYTES),
            jti=secrets.token_urlsafe(_STATE_BYTES),
            now=time.time(),
            dpop_nonces=dict(self._dpop_nonces),
        )

    def session(self, server_url: str) -> OAuthSession:
        """The authorizer of one client connection to ``server_url`` (used by the client)."""
        return OAuthSession(self, parse_url(server_url))

    async def run(self, request: Request, guard: AddressGuard | None = None) -> Fetched | str:
        """Do what the flow asked (a fetch, the user's redirect, a JWT, a signature).

        A fetch goes only where ``guard`` allows (the MCP server's session passes its
        own; without one no server vouches for private or loopback addresses).
        """
        if isinstance(request, Fetch):
            if guard is None:
                guard = AddressGuard(None, allow_private_networks=self.allow_private_networks)
            return await self._fetch(request, guard)
        if isinstance(request, Redirect):
            return await self._redirect(request.url)
        if isinstance(request, ObtainAssertion):
            return await self._obtain_assertion()
        if isinstance(request, SignProof):
            return self.sign_proof(request)
        return self._sign(request)

    def sign_proof(self, request: SignProof) -> str:
        """A DPoP proof of ``request``, signed with this instance's key."""
        key = self._dpop_key
        if key is None:
            # Imported here: PyJWT and cryptography are the oauth extra's.
            from transports._http.client.dpop import DpopKey

            key = self._dpop_key = DpopKey()
        return key.sign(request)

    async def _obtain_assertion(self) -> str:
        source = self._assertion
        if source is None:
            raise OAuthError("the jwt_bearer grant needs assertion=")
        answer = source()
        if inspect.isawaitable(answer):
            answer = await answer
        if not isinstance(answer, str):
            raise TypeError("assertion must return the JWT (a str)")
        return answer

    async def _redirect(self, url: str) -> str:
        handler = self._on_redirect
        if handler is None:
            raise OAuthError("the server needs a user's authorization: pass on_redirect")
        answer = handler(url)
        if inspect.isawaitable(answer):
            answer = await answer
        if not isinstance(answer, str):
            raise TypeError("on_redirect must return the redirect URL")
        return answer

    def _sign(self, request: SignAssertion) -> str:
        if self._private_key is None or self.config.signing_algorithm is None:
            raise OAuthError("private_key_jwt needs private_key")
        # Imported here: PyJWT and cryptography are the oauth extra's, needed only here.
        from transports._http.client.assertion import sign_assertion

        return sign_assertion(request.claims, self._private_key, self.config.signing_algorithm)

    async def _fetch(self, request: Fetch, guard: AddressGuard) -> Fetched:
        url = parse_url(request.url)
        try:
            with trio.fail_after(FETCH_TIMEOUT):
                answer = await self._fetch_from(await guard.check(url), url, request)
        except (ConnectionClosedError, TimeoutError) as exc:
            raise OAuthError(f"{request.method} {request.url} failed: {exc}") from None
        self._notice_nonce(request, answer)
        return answer

    async def _fetch_from(self, addresses: list[str], url: HttpUrl, request: Fetch) -> Fetched:
        # Each address in turn while the connection fails (nothing sent yet), as RFC 8305
        # §5 would, only slower: never the name again (DNS rebinding).
        for address in addresses[:-1]:
            try:
                return await self._fetch_at(address, url, request)
            except ConnectFailedError:
                continue
        return await self._fetch_at(addresses[-1], url, request)

    def _notice_nonce(self, request: Fetch, answer: Fetched) -> None:
        # A token request with a proof: its answer's nonce, a refusal's or a success's
        # ("MAY supply the new nonce value ... in a successful response", RFC 9449 §8.2),
        # goes in the next token request's first proof.
        nonce = answer.headers.get(_DPOP_NONCE)
        if nonce and any(name.lower() == _DPOP_HEADER for name in request.headers):
            self._dpop_nonces.pop(request.url, None)
            self._dpop_nonces[request.url] = nonce
            while len(self._dpop_nonces) > MAX_REMEMBERED_CLIENTS:
                del self._dpop_nonces[next(iter(self._dpop_nonces))]

    async def _fetch_at(self, address: str, url: HttpUrl, request: Fetch) -> Fetched:
        # One connection per request: the flow talks to each server a handful of times.
        pool = ConnectionPool(
            url, ssl_context=self._ssl_context, max_connections=1, max_idle=0, address=address
        )
        try:
            return await _round_trip(pool, url, request)
        finally:
            with trio.CancelScope(shield=True):
                await pool.aclose()


async def _round_trip(pool: ConnectionPool, url: HttpUrl, request: Fetch) -> Fetched:
    headers: Headers = [(b"host", url.authority.encode("ascii")), (b"user-agent", b"mcpcore")]
    for name, value in request.headers.items():
        headers.append((name.lower().encode("latin-1"), value.encode("latin-1")))
    connection = await pool.acquire()
    try:
        head = await connection.round_trip(
            request.method.encode("ascii"), url.target.encode("ascii"), headers, request.body
        )
    except BaseException:
        pool.discard(connection)
        raise
    response = Response(pool, connection, head, False)
    try:
        body = await response.read_body(MAX_METADATA_SIZE)
    except BodyTooLargeError:
        raise OAuthError(f"{request.url} answered more than {MAX_METADATA_SIZE} bytes") from None
    except BaseException:
        response.abandon()
        raise
    response.close()
    answer_headers = {
        name.decode("latin-1"): value.decode("latin-1") for name, value in head.headers
    }
    return Fetched(status=head.status, headers=answer_headers, body=body)


class OAuthSession:
    """`OAuth` bound to one server: each request's headers, and what a 401 does.

    Args:
        oauth: The settings, storage and callbacks.
        url: The MCP endpoint.
    """

    def __init__(self, oauth: OAuth, url: HttpUrl) -> None:
        self._oauth = oauth
        self._url = url
        self._guard = AddressGuard(url.host, allow_private_networks=oauth.allow_private_networks)
        self._lock = trio.Lock()
        self._tokens: Tokens | None = None
        self._headers: AuthHeaders = _NO_HEADERS  # (a Bearer token's, built once)
        self._nonce: str | None = None  # the resource server's latest DPoP-Nonce
        self._loaded = False
        self._generation = 0
        # htu of each proof: this origin and the request's path (RFC 9449 §4.2).
        self._origin = f"{url.scheme}://{url.authority}"

    @property
    def generation(self) -> int:
        """Changes each time a new token, or a new DPoP nonce, is obtained."""
        return self._generation

    async def headers(self, method: bytes, target: bytes) -> AuthHeaders:
        """``Authorization`` (and a fresh ``DPoP`` proof), none before any authorization."""
        if not self._loaded or self._expiring():
            async with self._lock:
                if not self._loaded:
                    self._set(await self._oauth.storage.get_tokens())
                    self._loaded = True
                if self._expiring():
                    await self._refresh()
        tokens = self._tokens
        if tokens is None or tokens.token_type != _DPOP_TOKEN:
            return self._headers
        # RFC 9449 §7.1: "Authorization: DPoP <token>" and a proof of this very request,
        # with the token's hash (ath) and the server's nonce.
        token = tokens.access_token
        proof = self._oauth.sign_proof(
            SignProof(
                method=method.decode("ascii"),
                url=self._origin + target.decode("ascii"),
                nonce=self._nonce,
                access_token=token,
            )
        )
        return ((_AUTHORIZATION, b"DPoP " + token.encode("latin-1")), (_DPOP, proof.encode()))

    async def challenged(
        self,
        status: int,
        challenge: str | None,
        seen: int,
        attempt: int,
        nonce: str | None,
        *,
        peer: str | None = None,
    ) -> bool:
        """A 401 or 403 came back: authorize, and say whether to send the request again.

        ``nonce`` is the response's ``DPoP-Nonce``: kept for the next proofs, and a
        ``use_dpop_nonce`` 401 sends the request again with it. ``peer``, the address
        the refused connection reached, is the MCP server's for the SSRF check.

        Raises:
            OAuthError: The authorization failed.
        """
        if peer is not None:
            self._guard.connected_to(peer)
        parsed = parse_challenge(challenge)
        if nonce and self._tokens is not None and self._tokens.token_type == _DPOP_TOKEN:
            if status == 401 and parsed.error == _USE_DPOP_NONCE:
                return self._renonce(nonce, seen, attempt)
            self._nonce = nonce
        if attempt >= MAX_AUTHORIZATIONS:
            return False
        # "insufficient_scope → 403": step up; any other 403 is not ours to fix.
        if status == 403 and parsed.error != "insufficient_scope":
            return False
        async with self._lock:
            if self._generation != seen:
                return True  # (another request got a new token meanwhile)
            oauth = self._oauth
            flow = authorize(
                self._url.text,
                parsed,
                config=oauth.config,
                inputs=oauth.inputs(),
                clients=await oauth.storage.get_clients(),
                previous=self._tokens,
            )
            grant = await self._drive(flow)
            await oauth.storage.set_client(grant.client)
            await self._keep(grant.tokens)
        return True

    def noticed_nonce(self, nonce: str) -> None:
        """A response's ``DPoP-Nonce``: the next proofs carry it (RFC 9449 §9)."""
        tokens = self._tokens
        if tokens is not None and tokens.token_type == _DPOP_TOKEN and nonce != self._nonce:
            self._nonce = nonce
            self._generation += 1  # (a request sent with the old one may be refused)

    def _renonce(self, nonce: str, seen: int, attempt: int) -> bool:
        if attempt >= MAX_CHALLENGE_RETRIES:
            return False
        if self._generation != seen:
            return True  # (a new token or nonce since this request was sent)
        if nonce == self._nonce:
            return False  # (it refused a proof with its own nonce: retrying won't help)
        self._nonce = nonce
        self._generation += 1
        return True

    def _set(self, tokens: Tokens | None) -> None:
        self._tokens = tokens
        if tokens is None or tokens.token_type == _DPOP_TOKEN:
            self._headers = _NO_HEADERS
        else:
            bearer = b"Bearer " + tokens.access_token.encode("latin-1")
            self._headers = ((_AUTHORIZATION, bearer),)

    def _expiring(self) -> bool:
        tokens = self._tokens
        return (
            tokens is not None
            and tokens.refresh_token is not None
            and tokens.expires_at is not None
            and tokens.expires_at - EXPIRY_MARGIN <= time.time()
        )

    async def _refresh(self) -> None:
        tokens = self._tokens
        if tokens is None:
            return
        client = (await self._oauth.storage.get_clients()).get(tokens.issuer)
        if client is None:
            return
        fresh = await self._drive(refresh(tokens, client, self._oauth.inputs()))
        if fresh is None:  # refused: the next 401 authorizes anew
            fresh = Tokens(access_token=tokens.access_token, issuer=tokens.issuer)
        await self._keep(fresh)

    async def _keep(self, tokens: Tokens) -> None:
        self._set(tokens)
        self._generation += 1
        await self._oauth.storage.set_tokens(tokens)

    async def _drive(self, flow: Generator[Request, Fetched | str, _T]) -> _T:
        request = next(flow)
        while True:
            answer = await self._oauth.run(request, self._guard)
            try:
                request = flow.send(answer)
            except StopIteration as done:
                result: _T = done.value
                return result
