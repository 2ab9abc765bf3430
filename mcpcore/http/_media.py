"""``Accept`` and ``Content-Type``: the media types a Streamable HTTP exchange must use.

* A POST's ``Accept`` "MUST list both application/json and text/event-stream"
  (2025-03-26 … 2026-07-28 basic/transports); the SDKs answer 406 otherwise. A GET
  opening a stream must accept ``text/event-stream``.
* A POST's body is JSON: a ``Content-Type`` other than ``application/json`` gets 415
  (as the TypeScript SDK answers).

Wildcards count (``*/*``, ``text/*``), a ``q=0`` parameter excludes a type (RFC 9110
§12.5.1), and a request without ``Accept`` accepts anything ("a request without any
Accept header field implies that the user agent will accept any media type").
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "JSON_MEDIA_TYPE",
    "NOT_ACCEPTABLE_STATUS",
    "SSE_MEDIA_TYPE",
    "UNSUPPORTED_MEDIA_STATUS",
    "accepts",
    "accepts_json_and_sse",
    "is_json",
    "names",
]

JSON_MEDIA_TYPE: Final = "application/json"
SSE_MEDIA_TYPE: Final = "text/event-stream"
NOT_ACCEPTABLE_STATUS: Final = 406
UNSUPPORTED_MEDIA_STATUS: Final = 415

# The two Accept values real clients send, answered without parsing.
_BOTH: Final = frozenset(
    {
        "application/json, text/event-stream",
        "text/event-stream, application/json",
        "application/json,text/event-stream",
        "text/event-stream,application/json",
    }
)


def _ranges(accept: str) -> list[str]:
    """The media ranges an ``Accept`` value admits (those with ``q=0`` left out)."""
    admitted: list[str] = []
    for item in accept.split(","):
        media_range, *parameters = item.split(";")
        refused = any(
            name.strip().lower() == "q" and _is_zero(value)
            for name, _, value in (p.partition("=") for p in parameters)
        )
        if not refused:
            admitted.append(media_range.strip().lower())
    return admitted


def _is_zero(qvalue: str) -> bool:
    try:
        return float(qvalue.strip()) == 0
    except ValueError:
        return False


def accepts(accept: str | None, media_type: str) -> bool:
    """Whether an ``Accept`` header value (None: absent) admits ``media_type``."""
    if accept is None:
        return True
    kind = media_type.split("/", 1)[0]
    wanted = {media_type, f"{kind}/*", "*/*"}
    return any(media_range in wanted for media_range in _ranges(accept))


def names(accept: str | None, media_type: str) -> bool:
    """Whether an ``Accept`` value lists ``media_type`` itself, not through a wildcard.

    For a ``GET`` that opens an endless stream: an ``EventSource`` always sends
    ``Accept: text/event-stream``, while a ``curl`` probe sends ``*/*`` and must not be
    left waiting on a stream it did not ask for.
    """
    return accept is not None and media_type in _ranges(accept)


def accepts_json_and_sse(accept: str | None) -> bool:
    """Whether an ``Accept`` value admits both answers a POST may get (JSON and SSE)."""
    if accept is None or accept in _BOTH:
        return True
    return accepts(accept, JSON_MEDIA_TYPE) and accepts(accept, SSE_MEDIA_TYPE)


def is_json(content_type: str | None) -> bool:
    """Whether a ``Content-Type`` value is JSON (parameters such as charset allowed)."""
    if content_type is None:
        return False
    if content_type == JSON_MEDIA_TYPE:
        return True
    return content_type.split(";", 1)[0].strip().lower() == JSON_MEDIA_TYPE
