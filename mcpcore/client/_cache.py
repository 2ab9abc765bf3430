"""`ResultCache`: the 2026-07-28 ``ttlMs`` / ``cacheScope`` cache of one client session.

2026-07-28 server/utilities/caching (CHECKLIST §10.5): complete results of
``server/discover``, the four list methods and ``resources/read`` carry ``ttlMs`` and
``cacheScope``. The rules kept here:

- The key is the method plus the params that shape the result (the cursor of a page,
  the uri of a read), never ``_meta``: "MUST NOT serve a cached response for a
  different method or params".
- Fresh means ``now < received + ttlMs``. An absent ``ttlMs`` (a legacy result) or a
  negative one counts as 0: stale at once, so never stored.
- One cache per session, and a session is one authorization context: "private"
  results ("MUST NOT be shared across authorization contexts") may live here because
  nothing else reads this cache. Nothing is shared across sessions, "public" included.
- A relevant notification invalidates: ``tools/list_changed`` the tools pages,
  ``prompts/list_changed`` the prompts pages, ``resources/list_changed`` the resource
  and template pages, ``resources/updated`` the read of that uri.

The session decides *what* may be stored (only complete 2026-07-28 results of a first
try: "results of MRTR retries MUST NOT be cached"); this class decides for how long,
and keeps memory bounded. Results are stored encoded and decoded again on every hit,
so a caller that changes a result it got never changes the cache.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from msgspec import UNSET

from mcpcore import jsonrpc

__all__ = [
    "CACHEABLE_METHODS",
    "INVALIDATED_BY",
    "MAX_CACHE_BYTES",
    "MAX_CACHE_ENTRIES",
    "MAX_TTL_MS",
    "ResultCache",
]

#: The methods whose 2026-07-28 results carry cache hints (2026-07-28 caching).
CACHEABLE_METHODS: Final = frozenset(
    {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
    }
)
#: Entries one session keeps. A session caches its discovery, a few list pages and the
#: resources it reads; the bound stops a server with endless pages, or a client reading
#: many URIs, from growing the cache without end. The oldest entry goes first.
MAX_CACHE_ENTRIES: Final = 512
#: Encoded bytes one session keeps (32 MiB): resource reads can be large, and a cache
#: must never cost more memory than the work it saves. A larger single result is not
#: cached at all.
MAX_CACHE_BYTES: Final = 32 * 1024 * 1024
#: The longest time-to-live honoured (24 hours, in milliseconds), as the official SDK
#: clamps it: a server's mistake (or ``ttlMs: 2**53``) must not pin an entry for good.
MAX_TTL_MS: Final = 24 * 60 * 60 * 1000

#: The notifications that make cached results stale, and the methods they concern.
#: ``notifications/resources/updated`` concerns the ``resources/read`` of its uri.
INVALIDATED_BY: Final[dict[str, tuple[str, ...]]] = {
    "notifications/tools/list_changed": ("tools/list",),
    "notifications/prompts/list_changed": ("prompts/list",),
    # Templates enumerate the same resource space, so they change with the list.
    "notifications/resources/list_changed": ("resources/list", "resources/templates/list"),
}
_RESOURCE_UPDATED: Final = "notifications/resources/updated"

_Key = tuple[str, str | None]


@dataclass(frozen=True, slots=True)
class _Entry:
    expires_at: float
    data: bytes
    result_type: type[Any]


class ResultCache:
    """The cached 2026-07-28 results of one session, fresh while their ``ttlMs`` lasts.

    Args:
        clock: Seconds from any fixed origin (a monotonic clock): the cache never reads
            the time itself.
        max_entries: At most this many entries (`MAX_CACHE_ENTRIES`).
        max_bytes: At most this many encoded bytes (`MAX_CACHE_BYTES`).
    """

    def __init__(
        self,
        clock: Callable[[], float],
        *,
        max_entries: int = MAX_CACHE_ENTRIES,
        max_bytes: int = MAX_CACHE_BYTES,
    ) -> None:
        if max_entries < 1 or max_bytes < 1:
            raise ValueError("a cache needs room for at least one entry")
        self._clock = clock
        self._max_entries = max_entries
        self._max_bytes = max_bytes
        # Insertion order is age: the first entry is the oldest.
        self._entries: dict[_Key, _Entry] = {}
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def size_in_bytes(self) -> int:
        """The encoded bytes the cache holds now."""
        return self._bytes

    @staticmethod
    def ttl_ms(result: Any) -> int:
        """The time-to-live a result asks for, as this cache honours it.

        "An absent value → treat as 0. A negative value → ignore and treat as 0"
        (2026-07-28 caching); anything above `MAX_TTL_MS` is clamped to it.
        """
        ttl = getattr(result, "ttl_ms", UNSET)
        if not isinstance(ttl, int) or isinstance(ttl, bool) or ttl < 0:
            return 0
        return min(ttl, MAX_TTL_MS)

    def get(self, method: str, key: str | None = None) -> Any | None:
        """A fresh copy of the cached result of ``method`` for ``key``, or None.

        Args:
            method: The request method.
            key: The result-affecting param: a page's cursor, a read's uri; None for
                ``server/discover`` and the first page of a list (``""`` is a cursor,
                and a different key).
        """
        entry = self._entries.get((method, key))
        if entry is None:
            return None
        if not self._clock() < entry.expires_at:
            self._drop((method, key))
            return None
        return jsonrpc.decoder_for(entry.result_type).decode(entry.data)

    def put(self, method: str, key: str | None, result: Any) -> bool:
        """Store a complete 2026-07-28 result just received; returns whether it was kept.

        A result that is stale at once (``ttlMs`` 0, absent or negative) is not kept,
        and replaces any older entry for the same key: the server has newer data.
        """
        cache_key = (method, key)
        self._drop(cache_key)
        ttl = self.ttl_ms(result)
        if method not in CACHEABLE_METHODS or ttl == 0:
            return False
        data = jsonrpc.encode(result)
        if len(data) > self._max_bytes:
            return False
        self._entries[cache_key] = _Entry(self._clock() + ttl / 1000, data, type(result))
        self._bytes += len(data)
        while len(self._entries) > self._max_entries or self._bytes > self._max_bytes:
            self._drop(next(iter(self._entries)))
        return True

    def invalidate(self, method: str, key: str | None = None) -> bool:
        """Forget one entry; returns whether there was one."""
        return self._drop((method, key))

    def invalidate_method(self, method: str) -> int:
        """Forget every entry of ``method`` (all pages of a list); returns how many."""
        keys = [cache_key for cache_key in self._entries if cache_key[0] == method]
        for cache_key in keys:
            self._drop(cache_key)
        return len(keys)

    def invalidate_for(self, notification: str, uri: str | None = None) -> int:
        """Forget what a server notification makes stale; returns how many entries.

        Args:
            notification: The notification's method.
            uri: The uri of a ``notifications/resources/updated``.
        """
        if notification == _RESOURCE_UPDATED:
            return int(uri is not None and self.invalidate("resources/read", uri))
        return sum(
            self.invalidate_method(method) for method in INVALIDATED_BY.get(notification, ())
        )

    def clear(self) -> None:
        """Forget everything."""
        self._entries.clear()
        self._bytes = 0

    def _drop(self, cache_key: _Key) -> bool:
        entry = self._entries.pop(cache_key, None)
        if entry is None:
            return False
        self._bytes -= len(entry.data)
        return True
