"""Pagination of the list methods, with cursors a client can't forge.

"The cursor is an opaque string ... (C) MUST treat cursors as opaque"; "invalid cursor
SHOULD → -32602"; "(S) SHOULD provide stable cursors" (2024-11-05
server/utilities/pagination). A cursor is the next position, sealed with the server's
key and the list's name, so a client can neither invent a position nor reuse one list's
cursor on another. Lists keep registration order, so a position stays meaningful.

Without a key nothing can be sealed, and every list comes back as one page.
"""

from __future__ import annotations

from typing import Final, TypeVar

from msgspec import UNSET, UnsetType

from mcpcore import jsonrpc
from mcpcore.errors import McpError
from mcpcore.server._sealing import Sealer, TamperedError

__all__ = ["DEFAULT_PAGE_SIZE", "MAX_PAGE_SIZE", "Paginator"]

#: Items per page unless the server says otherwise: the official SDKs' order of
#: magnitude, small enough that a page of tools with schemas stays well under 1 MiB.
DEFAULT_PAGE_SIZE: Final = 100
#: The largest page a server may configure, to keep every response bounded.
MAX_PAGE_SIZE: Final = 10_000
_PURPOSE: Final = b"mcpcore/cursor/v1"
_T = TypeVar("_T")


class Paginator:
    """Cuts lists into pages and checks the cursors that come back."""

    __slots__ = ("_page_size", "_sealer")

    def __init__(self, sealer: Sealer | None, page_size: int = DEFAULT_PAGE_SIZE) -> None:
        if not 0 < page_size <= MAX_PAGE_SIZE:
            raise ValueError(f"page_size must be between 1 and {MAX_PAGE_SIZE}")
        self._sealer = sealer
        self._page_size = page_size

    def page(
        self, list_name: str, items: list[_T], cursor: str | UnsetType
    ) -> tuple[list[_T], str | UnsetType]:
        """The page ``cursor`` points at, and the cursor of the next page (UNSET at the end)."""
        start = 0 if cursor is UNSET else self._open(list_name, cursor)
        if self._sealer is None:
            return items, UNSET
        end = start + self._page_size
        next_cursor: str | UnsetType = UNSET
        if end < len(items):
            next_cursor = self._sealer.seal(_PURPOSE, f"{list_name}\0{end}".encode())
        return items[start:end], next_cursor

    def _open(self, list_name: str, cursor: str) -> int:
        if self._sealer is not None:
            try:
                name, _, position = self._sealer.open(_PURPOSE, cursor).decode().partition("\0")
                if name == list_name and position.isdigit():
                    return int(position)
            except (TamperedError, UnicodeDecodeError):
                pass
        raise McpError(jsonrpc.INVALID_PARAMS, "Invalid cursor")
