"""What leaves a trio nursery, as the caller would have raised it.

trio wraps whatever leaves a nursery in an exception group. Where the tasks of a
nursery are our own and don't raise, a group of one holds the body's exception (a
caller's `KeyboardInterrupt`, a callback's error): `reraise_sole` raises that one as it
was raised, so that ``except OSError`` and ``except KeyboardInterrupt`` work as though no
nursery were involved. (Used by every client opener and by the ``mcpcore`` command.)
"""

from __future__ import annotations

from typing import Any, NoReturn

__all__ = ["reraise_sole"]


def reraise_sole(exc: BaseException) -> NoReturn:
    """Raise the one exception inside ``exc`` if it is a group of one, else ``exc``.

    trio wraps whatever leaves a nursery in an exception group. The client's own tasks
    don't raise, so a group of one holds the body's exception (or a callback's): the
    caller gets it as raised, as though no nursery were involved.
    """
    sole = exc
    while True:
        inner: Any = getattr(sole, "exceptions", None)
        if not (isinstance(inner, tuple) and len(inner) == 1):
            break
        sole = inner[0]
    if sole is exc:
        raise exc
    context = sole.__context__
    try:
        raise sole
    finally:
        sole.__context__ = context  # not "during handling of" the group it came in
