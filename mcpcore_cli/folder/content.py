"""What a file is: its MIME type from its name, text or binary from its content.

The type comes from the file's extension (the standard library's table, the same on
every machine, plus the source-code types a project folder is full of). Whether it goes
out as ``text`` or as a base64 ``blob`` comes from the bytes themselves: UTF-8 without a
NUL is text, anything else is binary ("Binary data MUST be properly encoded",
2024-11-05 server/resources). The name can't decide that: a ``.ts`` file is TypeScript
far more often than an MPEG stream, and a ``.txt`` file may hold Latin-1.
"""

from __future__ import annotations

import base64
import mimetypes
from typing import Final

from mcpcore import types

__all__ = ["BINARY_FALLBACK", "TEXT_FALLBACK", "contents_of", "mime_type_of"]

#: The type of text whose name says nothing (or says a binary format).
TEXT_FALLBACK: Final = "text/plain"
#: The type of binary data whose name says nothing.
BINARY_FALLBACK: Final = "application/octet-stream"
#: Types of the files a project folder holds that the standard table lacks or gets
#: wrong for source code (it maps ``.ts`` to MPEG transport streams).
_EXTRA_TYPES: Final = {
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".rst": "text/x-rst",
    ".ts": "text/x-typescript",
    ".tsx": "text/x-typescript",
    ".jsx": "text/javascript",
    ".mjs": "text/javascript",
    ".rs": "text/x-rust",
    ".go": "text/x-go",
    ".java": "text/x-java",
    ".kt": "text/x-kotlin",
    ".rb": "text/x-ruby",
    ".toml": "application/toml",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".ini": "text/plain",
    ".cfg": "text/plain",
    ".log": "text/plain",
    ".sql": "application/sql",
    ".svg": "image/svg+xml",
    ".webp": "image/webp",
}
#: Non-``text/`` types whose content is text all the same.
_TEXTUAL: Final = frozenset(
    {
        "application/javascript",
        "application/json",
        "application/sql",
        "application/toml",
        "application/x-sh",
        "application/x-python-code",
        "application/xml",
        "application/yaml",
        "image/svg+xml",
    }
)
# The standard library's own table only: /etc/mime.types differs between machines.
_TABLE: Final = mimetypes.MimeTypes()
for _extension, _type in _EXTRA_TYPES.items():
    _TABLE.add_type(_type, _extension)


def mime_type_of(name: str) -> str | None:
    """The MIME type the file name says, or None when it says nothing."""
    guessed, encoding = _TABLE.guess_type(name, strict=False)
    if encoding is not None:
        return None  # "x.tar.gz" is gzip data, not a tar archive to read as one
    return guessed


def contents_of(
    uri: str, name: str, data: bytes
) -> types.TextResourceContents | types.BlobResourceContents:
    """The contents of a read of the file ``name`` holding ``data``."""
    guessed = mime_type_of(name)
    text = _as_text(data)
    if text is None:
        blob = base64.b64encode(data).decode("ascii")
        return types.BlobResourceContents(uri=uri, blob=blob, mime_type=guessed or BINARY_FALLBACK)
    mime_type = guessed if guessed is not None and _is_textual(guessed) else TEXT_FALLBACK
    return types.TextResourceContents(uri=uri, text=text, mime_type=mime_type)


def _as_text(data: bytes) -> str | None:
    if b"\x00" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _is_textual(mime_type: str) -> bool:
    return (
        mime_type.startswith("text/")
        or mime_type in _TEXTUAL
        or mime_type.endswith(("+json", "+xml"))
    )
