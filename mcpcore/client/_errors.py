"""What a client call raises: the server's error, or a local judgement about its answers.

Two families that never mix (CHECKLIST §3: "purely local errors have no code and must
not be mistakable for peer errors"). `McpError` is an error the server sent. Every
`ClientError` is this client's own verdict on what the server did (an unusable result,
no version in common, a loop of cursors); none carries a JSON-RPC code.
"""

from __future__ import annotations

from mcpcore.errors import McpError

__all__ = [
    "ClientError",
    "IncompatibleServerError",
    "InvalidServerResponseError",
    "McpError",
    "PaginationError",
    "TaskCancelledError",
    "TooManyInputRoundsError",
    "UnsupportedInputRequestError",
]


class ClientError(Exception):
    """A local judgement about the server's behaviour; never an error the server sent."""


class InvalidServerResponseError(ClientError):
    """The server answered with something unusable (an `InvalidResponse` event).

    A malformed response, a result of the wrong shape, or a 2026-07-28 ``resultType``
    this client does not recognise ("MUST treat an unrecognized resultType as
    invalid", 2026-07-28 basic).

    Attributes:
        method: The method of our request.
        message: What was wrong.
    """

    def __init__(self, method: str, message: str) -> None:
        super().__init__(f"{method}: {message}")
        self.method = method
        self.message = message


class IncompatibleServerError(ClientError):
    """The server and this client share no protocol version.

    Attributes:
        supported: The versions the server named (its -32022 ``data.supported`` or
            its DiscoverResult), empty when it named none.
    """

    def __init__(self, message: str, supported: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.supported = supported


class UnsupportedInputRequestError(ClientError):
    """A 2026-07-28 server asked for input of a kind this client did not declare.

    "Servers MUST NOT include an input request kind the client did not declare"
    (2026-07-28 basic/patterns/mrtr); the client never invents an answer.

    Attributes:
        key: The server's key of the input request.
        method: Its method (``elicitation/create``, ``sampling/createMessage``,
            ``roots/list``).
    """

    def __init__(self, key: str, method: str, detail: str) -> None:
        super().__init__(f"input request {key!r} ({method}): {detail}")
        self.key = key
        self.method = method


class TooManyInputRoundsError(ClientError):
    """A 2026-07-28 server kept answering `InputRequiredResult` past the round limit.

    Attributes:
        method: The method of the request.
        rounds: How many retries were made.
    """

    def __init__(self, method: str, rounds: int) -> None:
        super().__init__(f"{method}: still asking for input after {rounds} retries")
        self.method = method
        self.rounds = rounds


class TaskCancelledError(ClientError):
    """A task we waited for ended cancelled (2026-07-28 tasks extension).

    Attributes:
        task_id: The task.
    """

    def __init__(self, task_id: str) -> None:
        super().__init__(f"task {task_id} was cancelled")
        self.task_id = task_id


class PaginationError(ClientError):
    """Following a list's cursors did not end: a cursor came back, or too many pages.

    Attributes:
        method: The list method.
    """

    def __init__(self, method: str, message: str) -> None:
        super().__init__(f"{method}: {message}")
        self.method = method
