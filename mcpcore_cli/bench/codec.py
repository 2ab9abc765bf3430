"""``mcpcore bench codec FILE.json...``: your own messages through mcpcore's typed codec.

Each message of the files (see `mcpcore_cli.bench.user_messages` for what a file may
hold) is decoded to typed objects and encoded back to bytes, once per operation, the
way `mcpcore.Connection` does it; beside it, on the same bytes, the official SDK's
leanest typed path (when ``mcp-types`` is installed and knows the method), bare
``msgspec`` to builtins and back (the ceiling of an untyped path), the standard
library's ``json``, and ``orjson`` (when installed). The variants run interleaved,
``--repeat`` times each, and the table shows each one's median in messages per second,
with mcpcore's median ratio to the SDK.

Before any timing, each variant's output must parse to the same JSON as its input; one
that doesn't (a model that drops a member it doesn't know, say) gets a note under the
table naming what it changed, and its number is still shown.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

from rich import box
from rich.console import Console
from rich.table import Table

from mcpcore_cli.bench.codecs import json_codec, mcpcore_codec, msgspec_codec, orjson_codec
from mcpcore_cli.bench.messages import Payload
from mcpcore_cli.bench.timing import MCPCORE, Samples, Settings, Variant, measure, ratio_samples
from mcpcore_cli.bench.user_messages import MessageFileError, UserMessage, read_messages
from mcpcore_cli.bench.verify import json_differences

__all__ = [
    "DEFAULT_REPEAT",
    "DEFAULT_SECONDS",
    "USAGE",
    "CodecRow",
    "add_arguments",
    "measure_messages",
    "run",
]

#: Repetitions per variant: medians of five hold still on a noisy machine (shared/PERF.md).
DEFAULT_REPEAT: Final = 5
#: Seconds one timed measurement of one variant lasts: long enough for the clock and the
#: garbage collector to average out, short enough that a file of ten messages takes a
#: minute (5 variants x 5 repetitions x 0.2 s per message, plus calibration).
DEFAULT_SECONDS: Final = 0.2
#: The exit status of a usage error or an unreadable file.
USAGE: Final = 2
#: The table's width when the output is not a terminal: an ordinary terminal's.
TABLE_WIDTH: Final = 100
#: The columns, in order; those whose library is missing are left out.
COLUMNS: Final = (MCPCORE, "sdk", "msgspec", "json", "orjson")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``mcpcore bench codec``."""
    parser.add_argument(
        "files",
        nargs="+",
        type=Path,
        metavar="FILE",
        help="JSON-RPC messages: one JSON object, an array of them, or JSON Lines",
    )
    parser.add_argument(
        "--result-of",
        metavar="METHOD",
        help="the method results answer, when the files don't hold their requests",
    )
    parser.add_argument("--repeat", type=int, default=DEFAULT_REPEAT, metavar="N")
    parser.add_argument(
        "--seconds",
        type=float,
        default=DEFAULT_SECONDS,
        metavar="S",
        help=f"length of one timed measurement (default {DEFAULT_SECONDS})",
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the rows as JSON")
    parser.add_argument(
        "--without",
        action="append",
        choices=("sdk", "orjson"),
        default=[],
        help="leave a variant out even when installed",
    )


class CodecRow:
    """One message's numbers: each variant's rates, and what its output check said."""

    def __init__(self, message: UserMessage, samples: dict[str, Samples], notes: list[str]):
        self.message = message
        self.samples = samples
        self.notes = notes

    def median(self, variant: str) -> float | None:
        """The variant's median rate in messages per second (None: not run)."""
        samples = self.samples.get(variant)
        return None if samples is None else samples.median

    def ratio_to(self, variant: str) -> float | None:
        """Mcpcore's median per-repetition ratio to ``variant`` (None: not both ran)."""
        if MCPCORE not in self.samples or variant not in self.samples:
            return None
        return statistics.median(ratio_samples(self.samples[MCPCORE], self.samples[variant]))

    def record(self) -> dict[str, Any]:
        """The row as ``--json`` writes it."""
        payload = self.message.payload
        return {
            "message": self.message.name,
            "method": payload.method,
            "kind": payload.kind,
            "bytes": payload.size,
            "msg_per_s": {name: round(s.median, 1) for name, s in self.samples.items()},
            "mcpcore_vs_sdk": self.ratio_to("sdk"),
            "notes": self.notes,
        }


def run(arguments: argparse.Namespace) -> int:
    """Time the files' messages; print the table (and write ``--json``)."""
    if arguments.repeat < 1 or arguments.seconds <= 0:
        print("mcpcore bench codec: --repeat and --seconds must be positive", file=sys.stderr)
        return USAGE
    try:
        messages = read_messages(arguments.files, result_of=arguments.result_of)
    except MessageFileError as error:
        print(f"mcpcore bench codec: {error}", file=sys.stderr)
        return USAGE
    console = Console(width=None if sys.stdout.isatty() else TABLE_WIDTH)
    settings = Settings(repeat=arguments.repeat, target_seconds=arguments.seconds)
    columns = available_columns(set(arguments.without))
    rows = []
    for message in messages:
        console.print(f"timing {message.name} ({message.payload.size} bytes)", style="dim")
        rows.append(measure_messages(message, columns, settings))
    console.print(table(rows, columns))
    for row in rows:
        for note in row.notes:
            console.print(f"{row.message.name}: {note}")
    if arguments.json is not None:
        records = [row.record() for row in rows]
        arguments.json.write_text(json.dumps(records, indent=2) + "\n")
    return 0


def available_columns(without: set[str]) -> tuple[str, ...]:
    """The variants that can run here: their libraries installed, not left out."""
    needs = {"sdk": "mcp_types", "orjson": "orjson"}
    return tuple(
        name
        for name in COLUMNS
        if name not in without and (name not in needs or importlib.util.find_spec(needs[name]))
    )


def measure_messages(message: UserMessage, columns: Sequence[str], settings: Settings) -> CodecRow:
    """Check then time every variant of ``columns`` on one message."""
    variants, notes = [], []
    for name in columns:
        operation, note = _checked(name, message.payload)
        if note is not None:
            notes.append(f"{name}: {note}")
        if operation is not None:
            variants.append(Variant(name, operation))
    return CodecRow(message, measure(variants, settings) if variants else {}, notes)


def _checked(name: str, payload: Payload) -> tuple[Callable[[], bytes] | None, str | None]:
    """The variant's operation (None when it can't do the job) and a note about it."""
    try:
        operation = _build(name, payload)
        output = operation()
    except Exception as error:  # (any library's refusal: reported, not raised)
        return None, f"can't process this message ({type(error).__name__})"
    differences = json_differences(payload.data, output)
    if differences:
        return operation, f"output differs from the input: {', '.join(differences)}"
    return operation, None


def _build(name: str, payload: Payload) -> Callable[[], bytes]:
    if name == MCPCORE:
        return mcpcore_codec(payload)
    if name == "sdk":
        from mcpcore_cli.bench.sdk_codecs import codec  # (the SDK, imported only here)

        return codec(payload)
    if name == "msgspec":
        return msgspec_codec(payload.data)
    if name == "json":
        return json_codec(payload.data)
    return orjson_codec(payload.data)


def table(rows: Sequence[CodecRow], columns: Sequence[str]) -> Table:
    """The rates table: one row per message, messages per second by variant."""
    grid = Table(box=box.SIMPLE_HEAD, title="decode + encode, messages per second (median)")
    grid.add_column("message", overflow="fold", max_width=30)
    grid.add_column("bytes", justify="right")
    for name in columns:
        grid.add_column(name, justify="right")
    if "sdk" in columns:
        grid.add_column("vs sdk", justify="right")
    for row in rows:
        payload = row.message.payload
        cells = [f"{row.message.name}\n{payload.method} {payload.kind}", f"{payload.size:,}"]
        cells += [_rate(row.median(name)) for name in columns]
        if "sdk" in columns:
            ratio = row.ratio_to("sdk")
            cells.append("-" if ratio is None else f"{ratio:.1f}x")
        grid.add_row(*cells)
    return grid


def _rate(value: float | None) -> str:
    if value is None:
        return "-"
    if value >= 1e6:
        return f"{value / 1e6:.2f}M"
    if value >= 1e3:
        return f"{value / 1e3:.1f}k"
    return f"{value:.0f}"
