"""Asking the client for input mid-request, the same way in both eras.

Legacy (2024-11-05 … 2025-11-25): the server sends ``elicitation/create``,
``sampling/createMessage`` or ``roots/list`` as a request of its own and awaits the
answer.

2026-07-28 (basic/patterns/mrtr): servers send no requests. The handler's request is
answered with an `InputRequiredResult` listing what it needs, under keys the handler
chose; the client retries the same request with ``inputResponses`` under those keys
and the ``requestState`` echoed back; the handler runs again from the start, and this
time its questions have answers. The answers of earlier rounds travel inside the
sealed ``requestState`` (the server keeps nothing), with the method, a digest of the
request's parameters, the principal and an expiry, so a state can't be replayed on
another request, by another user, or forever.
"""

from __future__ import annotations

import hashlib
from typing import Any, Final

import msgspec
from msgspec import UNSET

from mcpcore import jsonrpc
from mcpcore.server._sealing import Sealer, TamperedError
from mcpcore.types import (
    CallToolRequestParams,
    GetPromptRequestParams,
    InputRequest,
    ReadResourceRequestParams,
    decode_input_response,
)

__all__ = [
    "DEFAULT_STATE_TTL",
    "MAX_INPUT_REQUESTS",
    "InputRequired",
    "Rounds",
    "StateCodec",
    "request_digest",
]

#: How long a requestState stays valid, in seconds. Long enough for a person to fill
#: in a form; short enough that a leaked state is soon worthless ("SHOULD bind ... a
#: short expiry", 2026-07-28 mrtr).
DEFAULT_STATE_TTL: Final = 600.0
#: Input requests one round may carry. A handler asking for more is a bug, and each
#: one costs the client a user interaction.
MAX_INPUT_REQUESTS: Final = 32
_PURPOSE: Final = b"mcpcore/request-state/v1"
_ENCODER: Final = msgspec.json.Encoder(order="sorted")


class InputRequired(Exception):  # noqa: N818 (a signal, not an error)
    """Raised inside a handler to end this round with an `InputRequiredResult`."""

    def __init__(self, requests: dict[str, InputRequest]) -> None:
        super().__init__("the request needs input from the client")
        self.requests = requests


class _State(msgspec.Struct, array_like=True, gc=False):
    """What a sealed requestState carries (array-like: it travels in every retry)."""

    method: str
    digest: str
    principal: str | None
    expires: float
    round: int
    answers: dict[str, Any]
    handler_state: dict[str, Any]


_STATE_DECODER: Final = msgspec.json.Decoder(_State)


def request_digest(method: str, params: Any) -> str:
    """A digest of what makes a request the same request across its MRTR rounds.

    "The retry repeats the original params" (2026-07-28 mrtr): the tool or prompt name
    and its arguments, or the resource URI; never ``_meta``, ``inputResponses`` or
    ``requestState``, which legitimately change between rounds.
    """
    if isinstance(params, CallToolRequestParams | GetPromptRequestParams):
        identity: Any = [params.name, None if params.arguments is UNSET else params.arguments]
    elif isinstance(params, ReadResourceRequestParams):
        identity = [params.uri]
    else:
        identity = []
    body = _ENCODER.encode([method, identity])
    return hashlib.sha256(body).hexdigest()[:32]


class Rounds(msgspec.Struct):
    """One request's answers so far: from earlier rounds (the state) and from this retry.

    (A Struct: every 2026-07-28 tools/call, resources/read and prompts/get builds one,
    and a Struct is built several times faster than a plain class.)
    """

    answers: dict[str, Any]
    responses: dict[str, Any]
    handler_state: dict[str, Any]
    round: int

    def answer(self, key: str, method: str) -> Any:
        """The typed answer to ``key`` (an ``method`` input request), or None if there is none.

        An answer from this retry that does not decode as ``method``'s result counts as
        missing, so the question is asked again ("SHOULD validate inputResponses...
        return a new InputRequiredResult rather than an error").
        """
        for source in (self.answers, self.responses):
            raw = source.get(key)
            if raw is None:
                continue
            try:
                result = decode_input_response(method, raw)
            except (msgspec.ValidationError, ValueError):
                continue
            self.answers[key] = raw  # carried into the next round's state
            return result
        return None


class StateCodec:
    """Seals and opens request states with the server's key and clock."""

    __slots__ = ("_clock", "_sealer", "_ttl")

    def __init__(self, sealer: Sealer, clock: Any, ttl: float = DEFAULT_STATE_TTL) -> None:
        self._sealer = sealer
        self._clock = clock
        self._ttl = ttl

    def seal(self, method: str, digest: str, principal: str | None, rounds: Rounds) -> str:
        """The requestState for the next round."""
        state = _State(
            method,
            digest,
            principal,
            self._clock() + self._ttl,
            rounds.round + 1,
            rounds.answers,
            rounds.handler_state,
        )
        return self._sealer.seal(_PURPOSE, _ENCODER.encode(state))

    def open(self, token: str, method: str, digest: str, principal: str | None) -> Rounds:
        """The answers a state carries; `TamperedError` when it is not valid for this request."""
        payload = self._sealer.open(_PURPOSE, token)
        try:
            state = _STATE_DECODER.decode(payload)
        except jsonrpc.DECODE_ERRORS:
            raise TamperedError("malformed state") from None
        if state.method != method or state.digest != digest or state.principal != principal:
            raise TamperedError("the state belongs to another request")
        if self._clock() > state.expires:
            raise TamperedError("the state has expired")
        return Rounds(state.answers, {}, state.handler_state, state.round)
