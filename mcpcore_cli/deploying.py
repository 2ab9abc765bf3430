"""``--redis URL``: the command lines' way to join a deployment of several workers.

``mcpcore serve`` and ``examples/everything.py`` share it (`add_deployment_options`).
Processes started with the same ``--redis`` URL, on one host or several, serve as one
server (`transports.Deployment`): one sealing key, and legacy sessions usable from any
of them. The URL may hold a password, so it can come from the ``MCPCORE_REDIS_URL``
environment variable instead (which ``ps`` does not show).
"""

from __future__ import annotations

import argparse
import os
from typing import Final

from transports import Deployment

__all__ = ["REDIS_VARIABLE", "add_deployment_options", "deployment"]

#: The environment variable holding the Redis URL, so that a password stays out of ``ps``.
REDIS_VARIABLE: Final = "MCPCORE_REDIS_URL"


def _redis_url(text: str) -> str:
    try:
        Deployment(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _namespace(text: str) -> str:
    try:
        Deployment("redis://127.0.0.1", namespace=text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def add_deployment_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--redis`` and ``--redis-namespace`` to ``parser``."""
    parser.add_argument(
        "--redis",
        metavar="URL",
        type=_redis_url,
        default=os.environ.get(REDIS_VARIABLE) or None,
        help="share sessions and the sealing key with every process given the same Redis "
        f"(redis://[:password@]host[:port][/db]; or ${REDIS_VARIABLE})",
    )
    parser.add_argument(
        "--redis-namespace",
        metavar="NAME",
        type=_namespace,
        default="mcpcore",
        help="prefix of the deployment's Redis keys (default mcpcore)",
    )


def deployment(arguments: argparse.Namespace) -> Deployment | None:
    """The deployment the parsed options ask to join (None: serve alone)."""
    if arguments.redis is None:
        return None
    return Deployment(arguments.redis, namespace=arguments.redis_namespace)
