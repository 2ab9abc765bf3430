"""``mcpcore bench codec``: the user's own message files, read, checked and timed.

The timings are as short as the harness allows (``--repeat 1 --seconds 0.01``): these
tests check what is read, what is reported and how failures are told, never a speed.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from mcpcore_cli.bench import codec
from mcpcore_cli.bench.user_messages import MessageFileError, read_messages

CALL = {
    "params": {"name": "weather", "arguments": {"city": "Paris"}},
    "method": "tools/call",
    "id": 7,
    "jsonrpc": "2.0",
}
LIST = {"jsonrpc": "2.0", "id": "a", "method": "tools/list", "params": {}}
LISTED = {"id": "a", "jsonrpc": "2.0", "result": {"tools": [{"name": "w", "inputSchema": {}}]}}
PROGRESS = {
    "jsonrpc": "2.0",
    "method": "notifications/progress",
    "params": {"progressToken": "t", "progress": 5, "total": 10},
}
QUICK = ["--repeat", "1", "--seconds", "0.01"]


def bench_codec(*arguments: str) -> int:
    """``mcpcore bench codec ARGUMENTS``: the subcommand's own parser and run."""
    parser = argparse.ArgumentParser(prog="mcpcore bench codec")
    codec.add_arguments(parser)
    return codec.run(parser.parse_args(arguments))


def write(path: Path, *messages: dict[str, Any], lines: bool = False) -> Path:
    if lines:
        path.write_text("".join(json.dumps(message) + "\n" for message in messages))
    elif len(messages) == 1:
        path.write_text(json.dumps(messages[0], indent=2))
    else:
        path.write_text(json.dumps(list(messages)))
    return path


def test_a_file_holds_one_message_an_array_or_json_lines(tmp_path: Path) -> None:
    one = write(tmp_path / "call.json", CALL)
    many = write(tmp_path / "list.json", LIST, LISTED)
    lines = write(tmp_path / "progress.jsonl", PROGRESS, CALL, lines=True)
    messages = read_messages([one, many, lines])
    assert [m.name for m in messages] == [
        "call.json",
        "list.json #1",
        "list.json #2",
        "progress.jsonl #1",
        "progress.jsonl #2",
    ]
    kinds = [(m.payload.kind, m.payload.method) for m in messages]
    assert kinds == [
        ("request", "tools/call"),
        ("request", "tools/list"),
        ("result", "tools/list"),  # (its request's id names the method)
        ("notification", "notifications/progress"),
        ("request", "tools/call"),
    ]
    # Timed as a wire message: compact, the envelope's members first, the rest in order.
    assert messages[0].payload.data == (
        b'{"jsonrpc":"2.0","id":7,"method":"tools/call",'
        b'"params":{"name":"weather","arguments":{"city":"Paris"}}}'
    )
    assert json.loads(messages[2].payload.data) == LISTED


def test_a_result_without_its_request_needs_result_of(tmp_path: Path) -> None:
    alone = write(tmp_path / "listed.json", LISTED)
    with pytest.raises(MessageFileError, match="--result-of"):
        read_messages([alone])
    (message,) = read_messages([alone], result_of="tools/list")
    assert (message.payload.kind, message.payload.method) == ("result", "tools/list")


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ('{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"x"}}', "error response"),
        ('{"jsonrpc":"2.0","id":1,"method":"tools/explode","params":{}}', "not an MCP method"),
        ('{"jsonrpc":"2.0","method":"tools/call","params":{}}', "is a request"),
        ('{"jsonrpc":"2.0","id":1,"method":"notifications/progress"}', "is a notification"),
        ('{"id":1,"method":"tools/list"}', "JSON-RPC 2.0"),
        ("[1, 2]", "JSON object"),
        ("[]", "no messages"),
        ("{not json\n", "neither JSON nor JSON Lines"),
    ],
)
def test_what_cant_be_timed_is_refused_with_the_reason(
    tmp_path: Path, content: str, reason: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(MessageFileError, match=reason):
        read_messages([path])


def test_the_command_times_every_variant_and_writes_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = [write(tmp_path / "call.json", CALL), write(tmp_path / "list.jsonl", LIST, LISTED)]
    out = tmp_path / "rows.json"
    status = bench_codec(*map(str, files), *QUICK, "--json", str(out))
    assert status == 0
    printed = capsys.readouterr().out
    # (orjson is the bench extra's, not the test extra's: its column shows where installed)
    columns = codec.available_columns(set())
    assert {"mcpcore", "sdk", "msgspec", "json"} <= set(columns)
    assert ("orjson" in columns) == (importlib.util.find_spec("orjson") is not None)
    for column in (*columns, "vs sdk"):
        assert column in printed
    assert max(len(line) for line in printed.splitlines()) <= 100  # (not a terminal: 100)
    rows = json.loads(out.read_text())
    assert [(r["message"], r["kind"]) for r in rows] == [
        ("call.json", "request"),
        ("list.jsonl #1", "request"),
        ("list.jsonl #2", "result"),
    ]
    for row in rows:
        assert set(row["msg_per_s"]) == set(columns)
        assert all(rate > 0 for rate in row["msg_per_s"].values())
        assert row["mcpcore_vs_sdk"] > 0
    # The SDK's 2025-11-25 models add members to a tools/list result: said, not hidden.
    assert any("sdk: output differs" in note for note in rows[2]["notes"])
    assert "list.jsonl #2: sdk: output differs from the input" in printed
    assert rows[0]["notes"] == []


def test_a_variant_that_refuses_the_message_is_noted_and_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A tools/call without the tool's name: mcpcore's typed path (and the SDK's) refuse it.
    nameless = {**CALL, "params": {"arguments": {}}}
    path = write(tmp_path / "nameless.json", nameless)
    out = tmp_path / "rows.json"
    status = bench_codec(str(path), *QUICK, "--without", "sdk", "--json", str(out))
    assert status == 0
    (row,) = json.loads(out.read_text())
    assert "mcpcore" not in row["msg_per_s"]
    assert "sdk" not in row["msg_per_s"]  # (--without)
    assert row["msg_per_s"]["msgspec"] > 0
    assert row["notes"] == ["mcpcore: can't process this message (ValidationError)"]
    assert row["mcpcore_vs_sdk"] is None


def test_an_unreadable_file_is_one_line_and_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = bench_codec(str(tmp_path / "missing.json"))
    assert status == 2
    error = capsys.readouterr().err
    assert error.startswith("mcpcore bench codec: ")
    assert "Traceback" not in error
    assert len(error.strip().splitlines()) == 1
