"""``--busy-poll [SECONDS]`` of ``mcpcore serve`` and ``examples/everything.py``: opt-in."""

from __future__ import annotations

import argparse
import math
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio

from mcpcore_cli.busypolling import MAX_BUSY_POLL, add_busy_poll_option
from mcpcore_cli.folder import command
from mcpcore_cli.folder.command import add_serve_command, run_serve_command
from mcpcore_cli.folder.folder import Folder
from mcpcore_cli.folder.run import serve_folder
from tests.cli.folder_tree import make_tree, read_line
from tests.test_everything_example import call_simple_text, everything
from tests.transports.trio_helpers import trio_test
from transports import RECOMMENDED_BUSY_POLL, open_websocket_client
from transports._runtime import busypoll as _busypoll


def serve_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    add_serve_command(parser.add_subparsers(dest="command"))
    return parser


@pytest.mark.parametrize(
    ("options", "budget"),
    [
        ([], 0.0),  # off unless asked
        (["--busy-poll"], RECOMMENDED_BUSY_POLL),
        (["--busy-poll", "0.0002"], 0.0002),
        (["--busy-poll", "0"], 0.0),
        (["--busy-poll", str(MAX_BUSY_POLL)], MAX_BUSY_POLL),
    ],
)
def test_the_budget_is_off_unless_asked_and_recommended_when_named_alone(
    options: list[str], budget: float
) -> None:
    assert serve_parser().parse_args(["serve", ".", *options]).busy_poll == budget
    alone = argparse.ArgumentParser()
    add_busy_poll_option(alone)
    assert alone.parse_args(options).busy_poll == budget


@pytest.mark.parametrize("value", ["-0.001", "1", "nan", "inf", "fast"])
def test_a_budget_out_of_bounds_is_refused(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        serve_parser().parse_args(["serve", ".", "--busy-poll", value])
    error = capsys.readouterr().err
    assert "argument --busy-poll:" in error
    assert value in error


def test_help_says_what_it_buys_and_costs(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        serve_parser().parse_args(["serve", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert "--busy-poll [SECONDS]" in shown
    assert "default: off" in shown
    assert "more CPU" in shown


@pytest.mark.parametrize("options", [[], ["--busy-poll"]])
def test_the_serve_command_hands_the_budget_to_the_folder_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, options: list[str]
) -> None:
    given: list[Any] = []

    async def recording(folder: Folder, **kwargs: Any) -> None:
        given.append(kwargs["busy_poll"])
        kwargs["task_status"].started(None)

    monkeypatch.setattr(command, "serve_folder", recording)
    arguments = serve_parser().parse_args(["serve", str(make_tree(tmp_path)), *options])
    assert run_serve_command(arguments) == 0
    assert given == [RECOMMENDED_BUSY_POLL if options else 0.0]


@pytest.mark.parametrize("budget", [0.0, RECOMMENDED_BUSY_POLL])
@trio_test
async def test_the_folder_server_busy_polls_its_connections_only_when_asked(
    tmp_path: Path, budget: float
) -> None:
    folder = Folder(make_tree(tmp_path))
    async with trio.open_nursery() as nursery:
        url = await nursery.start(
            partial(serve_folder, folder, transport="ws", port=0, watch=False, busy_poll=budget)
        )
        async with open_websocket_client(url) as client:
            await client.list_tools()
            try:
                poller = _busypoll._RUN_POLLER.get()
            except LookupError:
                registered: list[list[float]] = []
            else:
                registered = [list(budgets) for budgets in poller._budgets.values()]
        nursery.cancel_scope.cancel()
    # The server's one connection is registered (the client did not ask).
    assert registered == ([[budget]] if budget else [])


@pytest.mark.parametrize("options", [["--busy-poll"], ["--busy-poll", "0.0001"]])
def test_the_everything_server_takes_the_option(options: list[str]) -> None:
    with everything("--transport", "ws", "--port", "0", *options) as process:
        assert process.stdout is not None
        url = read_line(process, process.stdout).rsplit(" at ", 1)[1].strip()
        assert "test" in trio.run(call_simple_text, url)
        process.terminate()
        process.wait()
    assert process.returncode == 0


def test_the_recommended_budget_is_within_the_bound() -> None:
    assert 0 < RECOMMENDED_BUSY_POLL <= MAX_BUSY_POLL
    assert math.isfinite(MAX_BUSY_POLL)
