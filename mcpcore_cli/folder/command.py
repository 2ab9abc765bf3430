"""``mcpcore serve``: the command line of the folder server.

    mcpcore serve [PATH] [--transport stdio|http|ws | --stdio] [--host 127.0.0.1]
                  [--port 8000] [--allow-host HOST]... [--token TOKEN]
                  [--include-hidden] [--no-ignore] [--max-file-size 10MiB]
                  [--max-files 10000] [--page-size 1000] [--no-watch] [--verbose]
                  [--busy-poll [SECONDS]] [--workers N|auto]

With no ``--transport`` it serves Streamable HTTP on this machine and prints the URLs, and
how to connect a client, on stdout (`mcpcore_cli.listening` has the network options).
``--workers N`` serves from N processes sharing the port (`mcpcore_cli.workers`).
Logs go to stderr, always: over stdio, stdout belongs to the protocol.

What the folder's ``.gitignore`` files ignore is not served unless ``--no-ignore``
(see `ignore`). ``resources/list`` lists at most ``--max-files`` files (10,000 by
default), ``--page-size`` a page (1,000 by default, more when ``--max-files`` is raised
past 20,000, so that the listing takes at most 20 pages: the MCP Inspector stops after
64); files past the cap can still be read by URI and found with the tools.
"""

from __future__ import annotations

import argparse
import errno
import logging
import os
import re
import sys
from collections.abc import Sequence
from functools import partial
from typing import Any, Final, TextIO

import trio

from mcpcore.server import MAX_PAGE_SIZE
from mcpcore_cli.busypolling import add_busy_poll_option
from mcpcore_cli.deploying import (
    SESSIONS_PER_WORKER,
    add_deployment_options,
    deployment,
    deployment_error,
    redis_url,
    unreachable_errors,
)
from mcpcore_cli.folder.catalog import LISTING_PAGE_SIZE, MAX_LISTED_FILES, MAX_LISTING_PAGES
from mcpcore_cli.folder.folder import DEFAULT_MAX_FILE_SIZE, Folder, human_size
from mcpcore_cli.folder.limit_options import add_limit_options, limits_epilog, serve_limits
from mcpcore_cli.folder.run import DEFAULT_HOST, DEFAULT_PORT, folder_url, serve_folder
from mcpcore_cli.folder.walk import MAX_WALK_ENTRIES
from mcpcore_cli.handover import Inherited, inherited_listening
from mcpcore_cli.listening import (
    add_listening_options,
    allowed_hosts,
    exposure_warning,
    listening_urls,
    token_auth,
)
from mcpcore_cli.stopping import raise_sole, stop_on_terminate
from mcpcore_cli.workers import add_worker_options, run_workers, workers_error

__all__ = ["EXAMPLES", "add_serve_command", "parse_count", "parse_size", "run_serve_command"]

EXAMPLES: Final = """\
examples:
  mcpcore serve                          this folder, at http://127.0.0.1:8000/mcp
  mcpcore serve ~/notes --port 3001      another folder, another port
  mcpcore serve . --stdio                for a client that starts its servers itself
  mcpcore serve . --max-file-size 50MiB  read larger files
  mcpcore serve . --max-files 50000      list more files (2,500 a page)
  mcpcore serve . --no-ignore            serve build artefacts too
  mcpcore serve . --stdio --busy-poll    lower latency per call, for more CPU
  mcpcore serve . --workers auto         one process per core, on one port

connect a client:
  npx @modelcontextprotocol/inspector    then Streamable HTTP, and the URL printed
  npx @modelcontextprotocol/inspector mcpcore serve . --stdio
"""
_UNITS: Final = {"": 1, "b": 1, "k": 1000, "kb": 1000, "kib": 1 << 10, "m": 1000**2}
_UNITS_MORE: Final = {"mb": 1000**2, "mib": 1 << 20, "g": 1000**3, "gb": 1000**3, "gib": 1 << 30}
_SIZE: Final = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*")
_log = logging.getLogger("mcpcore.serve")


def parse_size(text: str) -> int:
    """A size in bytes from ``10MiB``, ``512k``, ``1.5GB`` or ``1000000``."""
    match = _SIZE.fullmatch(text)
    scale = None if match is None else {**_UNITS, **_UNITS_MORE}.get(match.group(2).lower())
    if match is None or scale is None:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (say 10MiB, 512KiB, 1000000)")
    size = int(float(match.group(1)) * scale)
    if size < 1:
        raise argparse.ArgumentTypeError("the size must be at least 1 byte")
    return size


def parse_count(low: int, high: int) -> Any:
    """An argparse ``type``: a whole number from ``low`` to ``high``."""

    def parse(text: str) -> int:
        try:
            count = int(text.replace("_", "").replace(",", ""))
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if not low <= count <= high:
            raise argparse.ArgumentTypeError(f"must be from {low:,} to {high:,}, not {count:,}")
        return count

    return parse


def add_serve_command(commands: Any) -> None:
    """Add ``serve`` to the subcommands of ``mcpcore`` (an argparse subparsers object)."""
    serve = commands.add_parser(
        "serve",
        help="serve a folder's files to MCP clients, read-only",
        description=(
            "Serve the files of a folder to any MCP client, read-only: every file as a\n"
            "resource, change notifications as files change, the tools search_files and\n"
            "grep, and the prompt summarize_file. Hidden files are left out, and so is\n"
            "what the folder's .gitignore files ignore (as git and ripgrep do).\n"
            "\n"
            f"resources/list lists at most --max-files files ({MAX_LISTED_FILES:,} by default),\n"
            f"--page-size a page ({LISTING_PAGE_SIZE:,} by default; more when --max-files is\n"
            f"raised, so that the listing takes at most {MAX_LISTING_PAGES} pages). Files past\n"
            "the cap are still read by URI and found by search_files and grep."
        ),
        epilog=limits_epilog() + "\n" + EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve.add_argument(
        "path", nargs="?", default=".", help="the folder to serve (default: this folder)"
    )
    serve.add_argument(
        "--transport",
        choices=["stdio", "http", "ws"],
        default="http",
        help="http: Streamable HTTP at /mcp (the default); stdio: on stdin and stdout; "
        "ws: WebSocket",
    )
    serve.add_argument(
        "--stdio",
        dest="transport",
        action="store_const",
        const="stdio",
        help="the same as --transport stdio (for launchers that keep --transport for "
        "themselves, as the MCP Inspector does)",
    )
    add_listening_options(serve, default_host=DEFAULT_HOST, default_port=DEFAULT_PORT)
    add_deployment_options(serve)
    serve.add_argument(
        "--include-hidden", action="store_true", help="serve dot files and dot folders too"
    )
    serve.add_argument(
        "--no-ignore",
        action="store_true",
        help="serve what the folder's .gitignore files (and .git/info/exclude) ignore too",
    )
    serve.add_argument(
        "--max-file-size",
        type=parse_size,
        default=DEFAULT_MAX_FILE_SIZE,
        metavar="SIZE",
        help=f"the largest file read (default {human_size(DEFAULT_MAX_FILE_SIZE)})",
    )
    serve.add_argument(
        "--max-files",
        type=parse_count(1, MAX_WALK_ENTRIES),
        default=MAX_LISTED_FILES,
        metavar="N",
        help=f"list at most N files (default {MAX_LISTED_FILES:,}, at most {MAX_WALK_ENTRIES:,})",
    )
    serve.add_argument(
        "--page-size",
        type=parse_count(1, MAX_PAGE_SIZE),
        default=None,
        metavar="N",
        help=f"files per resources/list page (default {LISTING_PAGE_SIZE:,}, or 1/"
        f"{MAX_LISTING_PAGES} of --max-files when that is more; at most {MAX_PAGE_SIZE:,})",
    )
    serve.add_argument(
        "--no-watch",
        action="store_true",
        help="don't watch for changes: no notifications, and the listing stays as at start",
    )
    serve.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="log each request (method, name, outcome, time) and each refusal",
    )
    add_busy_poll_option(serve)
    add_worker_options(serve)
    add_limit_options(serve, parse_size, parse_count)


def run_serve_command(
    arguments: argparse.Namespace,
    *,
    out: TextIO | None = None,
    argv: Sequence[str] | None = None,
) -> int:
    """Run ``mcpcore serve``; returns the exit status.

    Args:
        arguments: What `add_serve_command`'s parser parsed.
        out: Where the URL and the hint go (stdout by default).
        argv: The command line ``arguments`` come from (``sys.argv[1:]`` by default):
            ``--workers`` starts each worker with it.
    """
    logging.basicConfig(
        level=logging.DEBUG if arguments.verbose else logging.INFO,
        stream=sys.stderr,
        format="mcpcore serve: %(message)s",
    )
    problem = workers_error(arguments) or deployment_error(arguments)
    if problem is not None:
        _log.error("error: %s", problem)
        return 2
    inherited = inherited_listening()  # (in a worker of --workers: what it was given)
    if inherited is None and arguments.workers > 1:
        return _supervise(arguments, out or sys.stdout, sys.argv[1:] if argv is None else argv)
    folder = _open_folder(arguments)
    if folder is None:
        return 2
    if inherited is None:  # (a worker leaves the warning to its supervisor)
        _warn_if_exposed(arguments)
    try:
        trio.run(partial(_serve, folder, arguments, out or sys.stdout, inherited))
    except KeyboardInterrupt:
        _log.info("stopped")
    except unreachable_errors(arguments) as exc:
        _log.error("can't join the deployment: %s", exc)
        return 1
    except OSError as exc:
        return _cannot_listen(arguments, exc)
    return 0


def _open_folder(arguments: argparse.Namespace) -> Folder | None:
    """The folder to serve, its size logged (None: it can't be served, and that is logged)."""
    try:
        folder = Folder(
            arguments.path,
            include_hidden=arguments.include_hidden,
            gitignore=not arguments.no_ignore,
            max_file_size=arguments.max_file_size,
            max_listed_files=arguments.max_files,
            page_size=arguments.page_size,
        )
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        _log.error("can't serve %s: %s", arguments.path, reason)
        return None
    listed = folder.catalog.snapshot
    more = " (and more, not listed: --max-files)" if listed.truncated else ""
    count = len(listed.files)
    _log.info("serving %d file%s of %s%s", count, "" if count == 1 else "s", folder.path, more)
    return folder


def _warn_if_exposed(arguments: argparse.Namespace) -> None:
    warning = exposure_warning(arguments.host, token_auth(arguments.token))
    if warning is not None and arguments.transport != "stdio":
        _log.warning(warning)


def _cannot_listen(arguments: argparse.Namespace, exc: OSError) -> int:
    if exc.errno == errno.EADDRINUSE:
        _log.error("port %d is already in use: pick another with --port", arguments.port)
    else:
        _log.error("can't listen on %s port %d: %s", arguments.host, arguments.port, exc)
    return 1


def _supervise(arguments: argparse.Namespace, out: TextIO, argv: Sequence[str]) -> int:
    """Serve from ``--workers`` processes, this one their supervisor (`run_workers`)."""
    _warn_if_exposed(arguments)
    if redis_url(arguments) is None and arguments.transport == "http":
        _log.warning(SESSIONS_PER_WORKER)
    try:
        status = run_workers(
            arguments.workers,
            argv,
            host=arguments.host,
            port=arguments.port,
            name="mcpcore serve",
            announce=partial(_announce_workers, arguments, out),
        )
    except OSError as exc:
        return _cannot_listen(arguments, exc)
    if status == 0:
        _log.info("stopped")
    return status


def _announce_workers(arguments: argparse.Namespace, out: TextIO, port: int) -> None:
    url = folder_url(arguments.transport, arguments.host, port)
    _announce(os.path.realpath(arguments.path), url, arguments.host, out)  # (= Folder.path)


def _announce(path: str, url: str, host: str, out: TextIO) -> None:
    print(f"Serving {path} at {url}", file=out)
    for other in listening_urls(url, host)[1:]:
        print(f"  and at {other}", file=out)
    print(_hint(url), file=out, flush=True)


async def _serve(
    folder: Folder, arguments: argparse.Namespace, out: TextIO, inherited: Inherited | None
) -> None:
    try:
        async with trio.open_nursery() as nursery:
            # (a worker's stop is its supervisor's to log)
            stopped = _stopped if inherited is None else _quietly
            await nursery.start(stop_on_terminate, nursery.cancel_scope, stopped)
            if inherited is not None:
                nursery.start_soon(inherited.stop_with_supervisor, nursery.cancel_scope)
            url = await nursery.start(
                partial(
                    _serve_then_stop,
                    nursery.cancel_scope,
                    folder,
                    transport=arguments.transport,
                    host=arguments.host,
                    port=arguments.port,
                    watch=not arguments.no_watch,
                    allowed_hosts=allowed_hosts(arguments.host, arguments.allow_host),
                    auth=token_auth(arguments.token),
                    limits=serve_limits(arguments),
                    busy_poll=arguments.busy_poll,
                    sockets=None if inherited is None else inherited.sockets,
                    secret=None if inherited is None else inherited.key,
                    deployment=deployment(arguments),
                )
            )
            if inherited is not None:
                await inherited.report_ready()  # (the supervisor prints the banner)
            elif url is not None:
                _announce(folder.path, url, arguments.host, out)
    except BaseException as exc:
        raise_sole(exc)


async def _serve_then_stop(
    scope: trio.CancelScope,
    folder: Folder,
    *,
    task_status: trio.TaskStatus[str | None] = trio.TASK_STATUS_IGNORED,
    **options: Any,
) -> None:
    """`serve_folder`, then stop everything (over stdio it returns when stdin ends)."""
    await serve_folder(folder, task_status=task_status, **options)
    scope.cancel()


def _stopped() -> None:
    _log.info("stopped")


def _quietly() -> None:
    pass


def _hint(url: str) -> str:
    if url.startswith("ws"):
        return f"Connect a WebSocket MCP client to {url}; stop with Ctrl+C."
    return (
        f"Connect a client: npx @modelcontextprotocol/inspector (Streamable HTTP, {url}); "
        "stop with Ctrl+C."
    )
