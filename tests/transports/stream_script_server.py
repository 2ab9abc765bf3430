"""A scripted MCP server for the stream clients' tests: the usual answers, a call's scripted.

    python tests/transports/stream_script_server.py SCRIPT.json

`StreamScript` answers what a client sends with the usual answers of its era
(`tests.transports.mcp_answers`), except ``tools/call``: each call takes the next of the
script's answers, as it is written: its pieces (each sent as one message: a line on
stdio, a frame on WebSocket) and how the server ends after them, if it does. Run as a
program it is a stdio server (one line in, the pieces out as lines); the WebSocket tests
run it in their own process, behind a hand-made WebSocket server.

A script (`StreamScript.from_json`) is JSON, so that it reaches the stdio server's
process as a file::

    {"era": "modern",
     "answers": [{"pieces": [{"json": ...} | {"raw": "<base64>"} | {"oversized": 5000}],
                  "end": null | "cut" | "close"}]}

``{"json": value}`` is a JSON message, where a member ``"id": "<id>"``
(`tests.transports.mcp_answers.ID`) stands for the call's id; ``{"raw": ...}`` bytes as
they are; ``{"oversized": n}`` a JSON string message of ``n`` bytes. ``"cut"``: the
connection ends at once; ``"close"``: it ends the orderly way (a stdio server exits with
status 3; a WebSocket says Close). Standard library only, so that the process starts
fast.
"""

from __future__ import annotations

import base64
import json
import os
import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.transports.mcp_answers import ECHO_TOOL, rpc_error, usual_result, with_id

__all__ = ["CLOSE_STATUS", "StreamScript"]
#: The exit status of a stdio server whose script says ``"close"``.
CLOSE_STATUS = 3


class StreamScript:
    """A scripted server's answers (see the module docstring).

    Args:
        era: ``"modern"`` (2026-07-28) or ``"legacy"``.
        answers: The ``tools/call`` answers, in order.
    """

    def __init__(self, era: str, answers: list[dict[str, Any]]) -> None:
        self.modern = era == "modern"
        self.answers = list(answers)

    @classmethod
    def from_json(cls, text: str) -> StreamScript:
        """The script written as JSON (see the module docstring)."""
        script = json.loads(text)
        return cls(script["era"], script["answers"])

    def respond(self, data: bytes) -> tuple[list[bytes], str | None]:
        """The messages answering a message from the client, and the end after them."""
        try:
            message = json.loads(data)
        except ValueError:
            return [], None
        if not isinstance(message, dict) or "method" not in message or "id" not in message:
            return [], None  # (notifications, and the client's answers, need none)
        request_id, method = message["id"], message["method"]
        if method == "tools/call" and self.answers:
            answer = self.answers.pop(0)
            return [_piece(piece, request_id) for piece in answer["pieces"]], answer["end"]
        params = message.get("params")
        value = usual_result(
            str(method),
            params if isinstance(params, dict) else {},
            modern=self.modern,
            tools=[ECHO_TOOL],
        )
        if value is None:
            out = rpc_error(request_id, -32601, "no such method")
        else:
            out = {"jsonrpc": "2.0", "id": request_id, "result": value}
        return [json.dumps(out).encode()], None


def _piece(piece: dict[str, Any], request_id: Any) -> bytes:
    if "raw" in piece:
        return base64.b64decode(piece["raw"])
    if "oversized" in piece:
        size = int(piece["oversized"])
        return b'"' + b"x" * (size - 2) + b'"'
    return with_id(piece["json"], request_id)


def main() -> None:
    """Serve the script in ``sys.argv[1]`` over stdio, until stdin ends or it says end."""
    script = StreamScript.from_json(Path(sys.argv[1]).read_text())
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        pieces, end = script.respond(line)
        out.writelines(piece + b"\n" for piece in pieces)
        out.flush()
        if end is not None:
            # "cut": gone at once, as a crash; "close": an exit of its own with a status.
            os._exit(0 if end == "cut" else CLOSE_STATUS)


if __name__ == "__main__":
    main()
