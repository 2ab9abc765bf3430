"""``notifications/tasks`` over a real listen stream: our `Client` against `serve_http`.

The 2026-07-28 tasks extension (SEP-2663): a ``subscriptions/listen`` stream whose filter
names tasks in ``taskIds`` hears each new state of those tasks, the full DetailedTask;
the acknowledgement echoes the ids honoured.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio

from mcpcore import jsonrpc
from mcpcore.client import ClientCallbacks, McpError
from mcpcore.types import CreateTaskExtensionResult, SubscriptionFilter
from tests.transports.test_http_tasks import answer, client_of
from tests.transports.trio_helpers import trio_test


@trio_test
async def test_a_listen_stream_follows_a_task_to_its_end() -> None:
    async with client_of() as client:
        task = await client.session.start_tool("confirm_delete", {"filename": "a.txt"})
        assert isinstance(task, CreateTaskExtensionResult)
        wanted = SubscriptionFilter(task_ids=[task.task_id, "not-a-task"])
        heard: list[Any] = []

        async def take(news: Any) -> bool:
            """Answer what the task asks; True once it completed."""
            heard.append(news.status)
            if news.status == "input_required":
                answers = await client.session.answer_task_input(news)
                await client.session.update_task(task.task_id, answers)
            return bool(news.status == "completed")

        async with client.listen(wanted) as stream:
            assert stream.acknowledged.task_ids == [task.task_id]
            # The task may have asked before the stream opened: what it is now.
            now = await client.session.get_task(task.task_id)
            if now.status == "input_required":
                await take(now)
            async for notification in stream:
                assert notification.method == "notifications/tasks"
                if await take(notification.params):
                    assert notification.params.result["content"][0]["text"] == "Deleted a.txt"
                    break
        assert heard[-2:] == ["working", "completed"]


@trio_test
async def test_following_tasks_without_the_extension_is_refused() -> None:
    async with client_of(ClientCallbacks(elicitation=answer)) as client:
        with pytest.raises(McpError) as refused, trio.fail_after(10):
            async with client.listen(SubscriptionFilter(task_ids=["any"])):
                pass
        assert refused.value.code == jsonrpc.MISSING_REQUIRED_CLIENT_CAPABILITY
