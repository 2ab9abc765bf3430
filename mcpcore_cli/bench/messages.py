"""The messages ``mcpcore bench codec`` times: one wire message and how to type it.

A `Payload` is the exact bytes a peer puts on the wire (compact JSON, no trailing
newline) plus what a decoder needs to type them: the JSON-RPC kind, and the method the
message belongs to. For a result that is the method of the request it answers (a
response does not carry it; a real peer looks it up by id). `python -m bench` builds
its fixed workloads as Payloads too (``bench.payloads``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["Kind", "Payload"]

Kind = Literal["request", "notification", "result"]


@dataclass(frozen=True)
class Payload:
    """One wire message and how to read it.

    Attributes:
        kind: ``"request"``, ``"notification"`` or ``"result"``.
        method: The method of the message, or for a result of the request it answers.
        data: The message as compact UTF-8 JSON.
    """

    kind: Kind
    method: str
    data: bytes

    @property
    def size(self) -> int:
        """The message size in bytes."""
        return len(self.data)

    def as_json(self) -> Any:
        """The message parsed with the standard library, to compare outputs against."""
        return json.loads(self.data)
