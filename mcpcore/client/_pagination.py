"""Following a paginated list's cursors to the end, safely (CHECKLIST §10.4).

"A missing nextCursor means the end. An empty-string cursor is valid and MUST NOT be
treated as the end" (2024-11-05 server/utilities/pagination), and cursors are opaque:
the client compares them only for equality, to notice a server that sends it round in
a circle, and stops a walk that never ends.
"""

from __future__ import annotations

from typing import Final

from msgspec import UNSET, UnsetType

from mcpcore.client._errors import PaginationError

__all__ = ["MAX_PAGES", "CursorTrail"]

#: Pages one walk over a list may fetch. Page size is the server's choice; at a typical
#: 50 to 100 items a page this is 50k to 100k items, beyond any real server, while a server
#: that hands out fresh cursors forever is stopped after a bounded number of requests.
MAX_PAGES: Final = 1000


class CursorTrail:
    """The cursors one walk over a paginated list has followed.

    Args:
        method: The list method (for the error message).
        max_pages: At most this many pages (`MAX_PAGES`).
    """

    def __init__(self, method: str, max_pages: int = MAX_PAGES) -> None:
        self.method = method
        self.max_pages = max_pages
        self.pages = 0
        self._seen: set[str] = set()

    def follow(self, next_cursor: str | UnsetType) -> str | None:
        """Note one page fetched; return the cursor of the next page, or None at the end.

        Args:
            next_cursor: The page's ``nextCursor`` (UNSET when absent).

        Raises:
            PaginationError: The cursor was already followed in this walk, or the walk
                reached `MAX_PAGES`.
        """
        self.pages += 1
        if next_cursor is UNSET:
            return None
        if next_cursor in self._seen:
            raise PaginationError(self.method, f"the server repeated the cursor {next_cursor!r}")
        if self.pages >= self.max_pages:
            raise PaginationError(self.method, f"more than {self.max_pages} pages")
        self._seen.add(next_cursor)
        return next_cursor
