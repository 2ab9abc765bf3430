"""What the Redis client raises: the server said no, or the server can't be reached.

The split is the one callers act on. `RedisReplyError` is an answer (a wrong type, a
syntax error, a script's error): the connection is fine and retrying the same command
gives the same answer. `RedisUnavailableError` is the absence of one (refused, lost,
timed out): the state is unknown, and a deployment that shares state through Redis
degrades or retries. Messages name the server as ``host:port`` and never its password.
"""

from __future__ import annotations

__all__ = ["RedisError", "RedisReplyError", "RedisUnavailableError"]


class RedisError(Exception):
    """Base class of everything the Redis client raises."""


class RedisReplyError(RedisError):
    """The server answered a command with an error reply (``WRONGTYPE ...``, ``ERR ...``).

    ``str(error)`` is the server's message as sent, starting with its code. hiredis builds
    one for each error reply it parses, so one also stands for a failed command inside a
    pipeline's or a transaction's (``EXEC``) list of replies.
    """

    @property
    def code(self) -> str:
        """The error's first word, by Redis's convention its kind: ``WRONGTYPE``, ``ERR``."""
        message = str(self)
        return message.split(" ", 1)[0] if message else ""


class RedisUnavailableError(RedisError):
    """No answer: the server can't be reached, the connection was lost, or it timed out.

    Whether a command that was sent took effect is unknown.
    """
