"""``--redis URL``: the command lines' way to join a deployment of several workers.

``mcpcore serve`` and ``examples/everything.py`` share it (`add_deployment_options`).
Processes started with the same ``--redis`` URL, on one host or several, serve as one
server (`transports.Deployment`): one sealing key, and legacy sessions usable from any
of them. The URL may hold a password, so it can come from the ``MCPCORE_REDIS_URL``
environment variable instead (which ``ps`` does not show), which applies to the HTTP
transport only: a variable exported for a deployment's HTTP servers does not stop a stdio
server of the same shell.
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Final

from mcpcore_cli.extra import missing_extra, missing_extra_message

if TYPE_CHECKING:
    from transports import Deployment

__all__ = [
    "REDIS_VARIABLE",
    "SESSIONS_PER_WORKER",
    "add_deployment_options",
    "deployment",
    "deployment_error",
    "redis_url",
    "unreachable_errors",
]

#: The environment variable holding the Redis URL, so that a password stays out of ``ps``.
REDIS_VARIABLE: Final = "MCPCORE_REDIS_URL"
#: What a supervisor of several workers without ``--redis`` warns about.
SESSIONS_PER_WORKER: Final = (
    "each worker keeps its own legacy sessions (2025-11-25 and earlier): a client whose "
    "requests reach another worker gets 404; give --redis URL to share them "
    "(2026-07-28 clients need nothing more)"
)


def _check(url: str, namespace: str = "mcpcore") -> None:
    """Build the `Deployment` the options describe, to refuse a malformed one early."""
    try:
        from transports import Deployment

        Deployment(url, namespace=namespace)
    except ImportError as error:  # (``--redis`` needs the redis extra: hiredis)
        if not missing_extra(error):
            raise
        raise argparse.ArgumentTypeError(
            missing_extra_message("--redis", error, "pip install 'mcpcore[redis]'")
        ) from None
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _redis_url(text: str) -> str:
    _check(text)
    return text


def _namespace(text: str) -> str:
    _check("redis://127.0.0.1", text)
    return text


def add_deployment_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--redis`` and ``--redis-namespace`` to ``parser``."""
    parser.add_argument(
        "--redis",
        metavar="URL",
        type=_redis_url,
        default=None,
        help="share sessions and the sealing key with every process given the same Redis "
        f"(redis://[:password@]host[:port][/db]; or ${REDIS_VARIABLE}, for HTTP)",
    )
    parser.add_argument(
        "--redis-namespace",
        metavar="NAME",
        type=_namespace,
        default="mcpcore",
        help="prefix of the deployment's Redis keys (default mcpcore)",
    )


def redis_url(arguments: argparse.Namespace) -> str | None:
    """The Redis to join: ``--redis``, else `REDIS_VARIABLE` when serving HTTP (None: none)."""
    if arguments.redis is not None:
        return str(arguments.redis)
    if arguments.transport != "http":
        return None
    return os.environ.get(REDIS_VARIABLE) or None


def deployment_error(arguments: argparse.Namespace) -> str | None:
    """What is wrong with the deployment options, if anything (a usage error)."""
    if arguments.redis is not None and arguments.transport != "http":
        return "--redis shares HTTP sessions: it needs --transport http"
    url = redis_url(arguments)
    if url is not None and arguments.redis is None:
        try:
            _check(url, arguments.redis_namespace)
        except argparse.ArgumentTypeError as exc:
            return f"${REDIS_VARIABLE}: {exc}"
    return None


def unreachable_errors(arguments: argparse.Namespace) -> tuple[type[Exception], ...]:
    """The exceptions that mean the ``--redis`` server can't be reached (none without it)."""
    if redis_url(arguments) is None:
        return ()
    from transports import RedisUnavailableError

    return (RedisUnavailableError,)


def deployment(arguments: argparse.Namespace) -> Deployment | None:
    """The deployment the parsed options ask to join (None: serve alone)."""
    url = redis_url(arguments)
    if url is None:
        return None
    from transports import Deployment

    return Deployment(url, namespace=arguments.redis_namespace)
