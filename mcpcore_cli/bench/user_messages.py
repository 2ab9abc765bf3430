"""Reading the user's messages for ``mcpcore bench codec``: files of JSON-RPC messages.

A file holds one message (a JSON object), several (a JSON array of objects), or one per
line (JSON Lines). Each becomes a `Payload`: its kind from its members (``method`` and
``id``: a request; ``method`` alone: a notification; ``result``: a result), written back
as compact JSON with the envelope's members first (``jsonrpc``, ``id``, ``method``), as
peers put messages on the wire: what is timed is a wire message, whatever the file's
layout. A result carries no method; the request with the same id among the messages
read tells it, else ``--result-of``.

Anything else (an error response, a batch, a method mcpcore doesn't know, a file that
isn't JSON) is a `MessageFileError` naming the file and the message: the command prints
it in one line, never a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from mcpcore import DEFAULT_METHODS
from mcpcore_cli.bench.messages import Kind, Payload

__all__ = ["MAX_FILE_SIZE", "MAX_MESSAGES", "MessageFileError", "UserMessage", "read_messages"]

#: Bytes one file may have: the largest MCP messages people send are a few MiB (a big
#: resource); 64 MiB is far past them and still bounded in memory.
MAX_FILE_SIZE: Final = 64 * 1024 * 1024
#: Messages one run times: each is timed for seconds with every codec, so a thousand is
#: already an hour's run; more is a mistake (a log file passed whole).
MAX_MESSAGES: Final = 1000
#: The envelope's members, in the order peers write them.
_ENVELOPE: Final = ("jsonrpc", "id", "method")


class MessageFileError(Exception):
    """A file, or a message in it, that can't be timed (the message says why)."""


@dataclass(frozen=True)
class UserMessage:
    """One message read from the user's files.

    Attributes:
        name: Where it came from: the file's name, and its position when the file
            holds several (``calls.jsonl #3``).
        payload: The wire message and how to type it.
    """

    name: str
    payload: Payload


def read_messages(paths: Sequence[Path], *, result_of: str | None = None) -> list[UserMessage]:
    """Every message of ``paths``, in order, ready to time.

    Raises:
        MessageFileError: A file can't be read, or a message can't be typed.
    """
    found: list[tuple[str, dict[str, Any]]] = []
    for path in paths:
        objects = _objects(path)
        for index, message in enumerate(objects, 1):
            name = path.name if len(objects) == 1 else f"{path.name} #{index}"
            found.append((name, message))
            if len(found) > MAX_MESSAGES:
                raise MessageFileError(f"more than {MAX_MESSAGES} messages: time a sample")
    methods = _request_methods(message for _, message in found)
    return [
        UserMessage(name, _payload(name, message, methods, result_of)) for name, message in found
    ]


def _objects(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of one file (one, an array of them, or JSON Lines)."""
    try:
        if path.stat().st_size > MAX_FILE_SIZE:
            raise MessageFileError(f"{path}: larger than {MAX_FILE_SIZE // 2**20} MiB")
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise MessageFileError(f"{path}: {error}") from None
    try:
        document = json.loads(text)
    except ValueError:
        document = _json_lines(path, text)
    items = document if isinstance(document, list) else [document]
    if not items:
        raise MessageFileError(f"{path}: no messages")
    for item in items:
        if not isinstance(item, dict):
            raise MessageFileError(f"{path}: every message must be a JSON object")
    return items


def _json_lines(path: Path, text: str) -> list[Any]:
    lines = [line for line in text.splitlines() if line.strip()]
    try:
        return [json.loads(line) for line in lines]
    except ValueError as error:
        raise MessageFileError(f"{path}: neither JSON nor JSON Lines ({error})") from None


def _request_methods(messages: Iterable[dict[str, Any]]) -> dict[str, str]:
    """The method of each request id (as JSON text, so that 1 and "1" stay apart)."""
    return {
        json.dumps(message["id"]): message["method"]
        for message in messages
        if "id" in message and isinstance(message.get("method"), str)
    }


def _payload(
    name: str, message: dict[str, Any], methods: dict[str, str], result_of: str | None
) -> Payload:
    kind = _kind(name, message)
    if kind == "result":
        method = methods.get(json.dumps(message.get("id"))) or result_of
        if method is None:
            raise MessageFileError(
                f"{name}: a result doesn't say which request it answers: include the "
                "request with the same id, or pass --result-of METHOD"
            )
    else:
        method = message["method"]
    if method not in DEFAULT_METHODS:
        raise MessageFileError(f"{name}: {method!r} is not an MCP method mcpcore knows")
    if DEFAULT_METHODS[method].is_request != (kind != "notification"):
        expected = "a request" if DEFAULT_METHODS[method].is_request else "a notification"
        raise MessageFileError(f"{name}: {method} is {expected}, this message isn't")
    ordered: dict[str, Any] = {key: message[key] for key in _ENVELOPE if key in message}
    ordered.update(message)
    data = json.dumps(ordered, separators=(",", ":"), ensure_ascii=False).encode()
    return Payload(kind, method, data)


def _kind(name: str, message: dict[str, Any]) -> Kind:
    if message.get("jsonrpc") != "2.0":
        raise MessageFileError(f'{name}: not a JSON-RPC 2.0 message ("jsonrpc": "2.0")')
    if isinstance(message.get("method"), str):
        return "request" if "id" in message else "notification"
    if "result" in message and "id" in message:
        return "result"
    if "error" in message:
        raise MessageFileError(f"{name}: an error response has no typed body to time")
    raise MessageFileError(f"{name}: neither a request, a notification nor a result")
