"""Roots: roots/list (deprecated in 2026-07-28, where it is an MRTR input)."""

from __future__ import annotations

from ._base import UNSET, MCPType, MetaObject, UnsetType, meta_field
from ._common import InputRequestBase, NotificationParams, RequestParams, TypedNotification

__all__ = [
    "ListRootsRequest",
    "ListRootsResult",
    "Root",
    "RootsListChangedNotification",
]


class Root(MCPType, kw_only=True):
    """Represents a root directory or file that the server can operate on."""

    meta: MetaObject | UnsetType = meta_field()
    uri: str
    name: str | UnsetType = UNSET


class ListRootsRequest(InputRequestBase, kw_only=True, tag="roots/list"):
    """Sent from the server to request a list of root URIs from the client."""

    params: RequestParams | UnsetType = UNSET


class ListRootsResult(MCPType, kw_only=True):
    """The result returned by the client for a roots/list request.

    Not a `Result`: in 2026-07-28 it is an MRTR input response and carries no
    ``resultType``.
    """

    meta: MetaObject | UnsetType = meta_field()
    roots: list[Root]


class RootsListChangedNotification(
    TypedNotification, kw_only=True, tag="notifications/roots/list_changed"
):
    """A notification from the client, informing the server that the list of roots has changed.

    Legacy only: 2024-11-05 … 2025-11-25.
    """

    params: NotificationParams | UnsetType = UNSET
