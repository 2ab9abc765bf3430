"""The two ways an exchange goes wrong: our side misused the API, or the peer broke the protocol.

As in h11, both carry a hint of the JSON-RPC error code that answers them, so a
driver that turns an exception into a reply never has to guess.
"""

from __future__ import annotations

__all__ = ["LocalProtocolError", "ProtocolError", "RemoteProtocolError"]


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
