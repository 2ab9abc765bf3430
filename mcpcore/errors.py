"""The two ways an exchange goes wrong: our side misused the API, or the peer broke the protocol.

As in h11, both carry a hint of the JSON-RPC error code that answers them, so a
driver that turns an exception into a reply never has to guess.
"""

from __future__ import annotations

from typing import Any

from msgspec import UNSET

from mcpcore.types import Error

__all__ = ["LocalProtocolError", "McpError", "ProtocolError", "RemoteProtocolError"]


class ProtocolError(Exception):
    """Base class of mcpcore's protocol errors.

    Attributes:
        code: The JSON-RPC error code that describes the failure (-32600 by default).
    """

    def __init__(self, message: str, *, code: int = -32600) -> None:
        super().__init__(message)
        self.code = code


class LocalProtocolError(ProtocolError):
    """Our own side tried to do something the protocol forbids.

    Raised synchronously by a `Connection` action before any state changes, so the
    connection stays usable: the caller fixed nothing on the wire.
    """


class RemoteProtocolError(ProtocolError):
    """The peer broke the protocol in a way the connection cannot recover from.

    Garbage that can be answered (bad JSON, an unknown method...) never raises: it
    becomes an `InvalidMessage` event carrying the reply. This is for the rest, such
    as a server that picks a protocol version we do not speak. After it, the
    connection is closed for good.
    """


class McpError(Exception):
    """A JSON-RPC error: one the peer answered with, or one to answer with.

    A client raises it when the server answered a request with an error. A server
    handler, or a client callback (sampling, elicitation, roots), raises it to answer
    with exactly this error: ``McpError(-32602, "Unknown city")``. Its message goes to
    the peer as written, so it must not reveal internals.

    Attributes:
        code: The JSON-RPC error code.
        message: The error's message.
        data: ``error.data`` as plain JSON, or None when there is none.
        method: The method of the request it answers, when known.
    """

    def __init__(
        self, code: int, message: str, data: Any = None, *, method: str | None = None
    ) -> None:
        where = f" ({method})" if method else ""
        super().__init__(f"{code}: {message}{where}")
        self.code = code
        self.message = message
        self.data = data
        self.method = method

    @classmethod
    def from_error(cls, error: Error, method: str | None = None) -> McpError:
        """The exception for an `Error` a server sent.

        Args:
            error: The error object of the response.
            method: The method of the request it answers.

        Returns:
            The exception to raise.
        """
        data = None if error.data is UNSET else error.data
        return cls(error.code, error.message, data, method=method)
