"""The storms layer: a flood of progress notifications, and a flood of cancellations.

Both run over stdio against a server *process*, each client with its own library's
server, legacy era (``initialize`` handshake at 2025-11-25). Each client lives in an
event loop of its own thread (`bench._stdio_runner`); each storm is one operation,
timed inside that loop, checked every time; variants are interleaved per repetition
and the table shows medians (`bench._storm_runner`).

**Progress storm**: one ``tools/call`` of ``progress_storm(count)``, whose handler
reports progress ``1..count`` of ``count`` through its context before answering
(`PROGRESS_COUNT` notifications, `QUICK_PROGRESS_COUNT` with ``--quick``). One
operation = from the call to the result *and* every progress callback the client
will run; the rate is ``count / seconds``, notifications per second.

* ``mcpcore``: ``transports.open_stdio_client(..., mode="legacy")`` and
  ``client.call_tool("progress_storm", {"count": N}, progress=callback)`` against
  `transports.serve_stdio` serving a `mcpcore.server.Server` whose tool awaits
  ``ctx.report_progress(i, N)``. trio on both sides. By design the reader task never
  runs user code: it leaves the latest progress with the waiting call, and the calling
  task runs the callback, so a callback that falls behind sees only the latest value
  (the last one, ``N``, always before the call returns). The notes give how many
  callbacks ran; every notification was still read, decoded and routed.
* ``sdk``: ``mcp.Client(StdioServerParameters(...), mode="legacy")`` and
  ``client.call_tool(..., progress_callback=callback)`` against its ``MCPServer``
  (``MCPServer.run("stdio")``) whose tool awaits ``ctx.report_progress(i, N)``. The
  SDK runs every callback, each in a task of its own, possibly after the result: the
  operation ends when all ``N`` have run.
* ``ceiling``: no MCP. A trio client writes the request line and reads lines with
  msgspec, calling the callback for each notification until the answer; its server
  (`bench._workload_servers` ``ceiling progress``) writes the ``N`` notifications and the
  result encoded by msgspec, in writes of up to 256 KiB (as mcpcore's writer joins them).

**Cancel storm**: `CANCEL_CALLS` calls of ``storm(index)`` started at once on one
connection (`QUICK_CANCEL_CALLS` with ``--quick``), one task each. Once every caller has
started its call, half of them are cancelled (every other call still waiting, up to
half of all calls): the calling task's cancellation, which makes the client send
``notifications/cancelled``. Each handler holds 5 ms shielded from cancellation, so it
finishes anyway: answers the server wrote before it read the cancel arrive late and
must be dropped. One operation = from starting the callers until every one has
settled (an answer, or its cancellation). Checked every time: every caller that was
not cancelled got its own answer (``str(index)``), every cancelled one either raised
its cancellation or (its answer having won the race) got its own answer; afterwards the
connection still answers a call, and for mcpcore its `Connection` has no request left
in flight (``client.session.connection.pending_requests`` is empty). The notes give how
many were cancelled, and for mcpcore how many answers the server still sent for them
(late answers the client dropped), from the server's own count (``storm_stats``).

* ``mcpcore``: trio tasks in a nursery, each call in a `trio.CancelScope`; the cancel
  is ``scope.cancel()``.
* ``sdk``: asyncio tasks, ``client.call_tool`` each; the cancel is ``task.cancel()``
  (the SDK then sends its "courtesy" ``notifications/cancelled``).

No ceiling: a raw ceiling would measure a pipe, not a cancellation protocol.

Both storms run with busy polling off (`STORMS_BUSY_POLL`, the library's default),
mcpcore's client and server and the ceiling's alike (`bench._busy_poll`).

Every storm is bounded in time (`STORM_TIMEOUT`); a variant that fails a check or runs
out of time is reported ``n/a`` with the reason in the notes (mcpcore stops the run).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Final

import msgspec
import trio

from bench._busy_poll import OFF, busy_polling, server_arguments
from bench._layer import Context, Layer
from bench._results import MCPCORE, NOT_AVAILABLE, WorkloadResult
from bench._stdio_runner import AsyncioThread, TrioThread
from bench._storm_runner import StormOutcome, StormRuns, StormVariant, run_storms
from bench._workload_servers import READ_SIZE, SCRIPT
from mcpcore_cli.bench.verify import BenchmarkError

__all__ = [
    "CANCEL_CALLS",
    "LAYER",
    "PROGRESS_COUNT",
    "QUICK_CANCEL_CALLS",
    "QUICK_PROGRESS_COUNT",
    "STORMS_BUSY_POLL",
    "STORM_TIMEOUT",
    "progress_variants",
    "run",
]

#: Progress notifications for one call: the issue's 10,000 (``--quick``: 500).
PROGRESS_COUNT, QUICK_PROGRESS_COUNT = 10_000, 500
#: Calls in flight at once, half of them cancelled: the issue's 10,000 (``--quick``: 500).
CANCEL_CALLS, QUICK_CANCEL_CALLS = 10_000, 500
#: Seconds one storm may take before its variant is given up on.
STORM_TIMEOUT: Final = 120.0
#: The busy-poll budget of mcpcore and the ceiling in both storms: off, the library's
#: default (a storm keeps both sides busy: nothing for a spin to save).
STORMS_BUSY_POLL: Final = OFF
#: Seconds the SDK's progress callbacks (tasks of their own) get to finish after the
#: result arrived, before the storm counts the ones missing as lost.
CALLBACK_DRAIN_TIMEOUT: Final = 10.0

PROGRESS_NAME = "progress storm over stdio: {count:,} notifications, one call"
CANCEL_NAME = "cancel storm over stdio: {calls:,} calls, half cancelled"


# ---------------------------------------------------------------- the progress storm


def _progress_text(count: int) -> str:
    return f"{count} notifications"


def _check_progress(
    column: str, text: str, count: int, callbacks: int, last: float, *, monotonic: bool
) -> str | None:
    if text != _progress_text(count):
        return f"the tool answered {text!r}"
    if last != count:
        return f"the last progress reported was {last}, not {count}"
    if not monotonic:
        return "progress went backwards"
    if column != MCPCORE and callbacks != count:
        return f"{callbacks} callbacks ran for {count} notifications"
    return None


def _open_mcpcore(budget: float) -> Callable[[], AbstractAsyncContextManager[Any]]:
    """Opens mcpcore's client to its storms server, both busy-polling ``budget``."""
    from transports import open_stdio_client

    def opener() -> AbstractAsyncContextManager[Any]:
        return open_stdio_client(
            sys.executable,
            args=[SCRIPT, *server_arguments(budget), "mcpcore", "storms"],
            mode="legacy",
            busy_poll=budget,
        )

    return opener


def _mcpcore_progress(count: int, budget: float) -> StormVariant:
    from transports import StdioClient

    async def storm(client: StdioClient) -> StormOutcome:
        seen = {"callbacks": 0, "last": 0.0, "monotonic": True}

        def on_progress(value: float, total: float | None, message: str | None) -> None:
            seen["monotonic"] = seen["monotonic"] and value > seen["last"]
            seen["callbacks"] += 1
            seen["last"] = value

        start = time.perf_counter_ns()
        result = await client.call_tool(
            "progress_storm", {"count": count}, progress=on_progress, timeout=STORM_TIMEOUT
        )
        elapsed = time.perf_counter_ns() - start
        [block] = result.content
        text = str(getattr(block, "text", block))
        callbacks = int(seen["callbacks"])
        problem = _check_progress(
            MCPCORE, text, count, callbacks, float(seen["last"]), monotonic=bool(seen["monotonic"])
        )
        return StormOutcome(elapsed, {"callbacks": callbacks}, problem)

    return StormVariant(MCPCORE, TrioThread, _open_mcpcore(budget), storm, busy_poll=budget)


def _sdk_progress(count: int) -> StormVariant:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    parameters = StdioServerParameters(command=sys.executable, args=[SCRIPT, "sdk", "storms"])

    def opener() -> AbstractAsyncContextManager[Client]:
        return Client(parameters, mode="legacy")

    async def storm(client: Client) -> StormOutcome:
        seen = {"callbacks": 0, "last": 0.0}
        every_one_ran = asyncio.Event()

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen["callbacks"] += 1
            seen["last"] = max(seen["last"], progress)
            if seen["callbacks"] == count:
                every_one_ran.set()

        start = time.perf_counter_ns()
        result = await asyncio.wait_for(
            client.call_tool("progress_storm", {"count": count}, progress_callback=on_progress),
            STORM_TIMEOUT,
        )
        # (A timeout here is reported below: fewer callbacks than notifications.)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(every_one_ran.wait(), CALLBACK_DRAIN_TIMEOUT)
        elapsed = time.perf_counter_ns() - start
        [block] = result.content
        text = str(getattr(block, "text", block))
        callbacks = int(seen["callbacks"])
        # (The SDK's callbacks run as concurrent tasks: their order is not checked.)
        problem = _check_progress(
            "sdk", text, count, callbacks, float(seen["last"]), monotonic=True
        )
        return StormOutcome(elapsed, {"callbacks": callbacks}, problem)

    return StormVariant("sdk", AsyncioThread, opener, storm, busy_poll=None)


class _ProgressCeilingClient:
    """The raw ceiling's client: one request line out, JSON lines in, msgspec only."""

    def __init__(self, process: trio.Process) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        self._stdin = process.stdin
        self._stdout = process.stdout
        self._decode = msgspec.json.Decoder().decode
        self._encode = msgspec.json.Encoder().encode
        self._next_id = 0

    async def call(
        self, count: int, on_progress: Callable[[float, float | None, str | None], None]
    ) -> Any:
        """Call ``progress_storm(count)``; run ``on_progress`` per notification; the result."""
        self._next_id += 1
        request_id = self._next_id
        request = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {
                "name": "progress_storm",
                "arguments": {"count": count},
                "_meta": {"progressToken": f"ceiling-{request_id}"},
            },
        }
        await self._stdin.send_all(self._encode(request) + b"\n")
        decode, rest = self._decode, b""
        while chunk := await self._stdout.receive_some(READ_SIZE):
            *lines, rest = (rest + chunk).split(b"\n")
            for line in lines:
                message = decode(line)
                if "method" in message:
                    params = message["params"]
                    on_progress(params["progress"], params.get("total"), params.get("message"))
                elif message.get("id") == request_id:
                    return message["result"]
        raise BenchmarkError("progress ceiling: the server hung up")


def _ceiling_progress(count: int, budget: float) -> StormVariant:
    @asynccontextmanager
    async def opener() -> AsyncIterator[_ProgressCeilingClient]:
        process = await trio.lowlevel.open_process(
            [sys.executable, SCRIPT, *server_arguments(budget), "ceiling", "progress"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        # (As open_stdio_client finds the pipe its server writes to.)
        stdout = process.stdout
        fd = stdout.fileno() if isinstance(stdout, trio.lowlevel.FdStream) else -1
        try:
            with busy_polling(fd, budget):
                yield _ProgressCeilingClient(process)
        finally:
            process.kill()
            with trio.CancelScope(shield=True):
                await process.wait()

    async def storm(client: _ProgressCeilingClient) -> StormOutcome:
        seen = {"callbacks": 0, "last": 0.0, "monotonic": True}

        def on_progress(value: float, total: float | None, message: str | None) -> None:
            seen["monotonic"] = seen["monotonic"] and value > seen["last"]
            seen["callbacks"] += 1
            seen["last"] = value

        start = time.perf_counter_ns()
        with trio.fail_after(STORM_TIMEOUT):
            result = await client.call(count, on_progress)
        elapsed = time.perf_counter_ns() - start
        text = str(result["content"][0]["text"])
        callbacks = int(seen["callbacks"])
        problem = _check_progress(
            "ceiling",
            text,
            count,
            callbacks,
            float(seen["last"]),
            monotonic=bool(seen["monotonic"]),
        )
        return StormOutcome(elapsed, {"callbacks": callbacks}, problem)

    return StormVariant("ceiling", TrioThread, opener, storm, busy_poll=budget)


# ---------------------------------------------------------------- the cancel storm


def _to_cancel(calls: int, finished: list[bool]) -> list[int]:
    """Half of all calls, taken from those still waiting: every other one, then the rest."""
    waiting = [index for index in range(calls) if not finished[index]]
    chosen = waiting[::2][: calls // 2]
    if len(chosen) < calls // 2:
        chosen += waiting[1::2][: calls // 2 - len(chosen)]
    return chosen


def _check_cancel_storm(
    calls: int, cancelled: list[int], results: dict[int, str], caught: set[int]
) -> str | None:
    chosen = set(cancelled)
    for index in range(calls):
        answer = results.get(index)
        if index in caught:
            if index not in chosen:
                return f"call {index} was cancelled but nobody cancelled it"
            if answer is not None:
                return f"call {index} was both answered and cancelled"
        elif answer != str(index):
            return f"call {index} got {answer!r}, not its own answer"
    if len(results) + len(caught) != calls:
        return f"{calls - len(results) - len(caught)} calls never settled"
    return None


async def _wait_until(ready: Callable[[], bool], checkpoint: Callable[[], Any]) -> None:
    """Yield to the other tasks until ``ready()`` (bounded by the caller's timeout)."""
    while not ready():
        await checkpoint()


def _mcpcore_cancel(calls: int, budget: float) -> StormVariant:
    from transports import StdioClient

    async def storm(client: StdioClient) -> StormOutcome:
        results: dict[int, str] = {}
        caught: set[int] = set()
        finished = [False] * calls
        scopes = [trio.CancelScope() for _ in range(calls)]
        issued = 0

        async def caller(index: int) -> None:
            nonlocal issued
            with scopes[index]:
                issued += 1
                result = await client.call_tool("storm", {"index": index}, timeout=STORM_TIMEOUT)
                [block] = result.content
                results[index] = str(getattr(block, "text", block))
            if scopes[index].cancelled_caught:
                caught.add(index)
            finished[index] = True

        start = time.perf_counter_ns()
        with trio.fail_after(STORM_TIMEOUT):
            async with trio.open_nursery() as nursery:
                for index in range(calls):
                    nursery.start_soon(caller, index)
                # A caller counts itself just before calling, and reaches the
                # client's first checkpoint with its request registered.
                await _wait_until(lambda: issued == calls, trio.lowlevel.checkpoint)
                cancelled = _to_cancel(calls, finished)
                for index in cancelled:
                    scopes[index].cancel()
        elapsed = time.perf_counter_ns() - start
        problem = _check_cancel_storm(calls, cancelled, results, caught)
        left = client.session.connection.pending_requests
        if problem is None and left:
            problem = f"{len(left)} requests still pending after the storm"
        with trio.fail_after(STORM_TIMEOUT):
            after = await client.call_tool("storm", {"index": -1})
            stats = await client.call_tool("storm_stats", {})
        if problem is None and str(getattr(after.content[0], "text", "")) != "-1":
            problem = "the connection did not answer after the storm"
        finished_on_server, answered_on_server = map(
            int, str(getattr(stats.content[0], "text", "0 0")).split()
        )
        facts = {
            "cancelled": len(caught),
            "answered": len(results),
            "late": answered_on_server - 1 - len(results),  # (the -1 call after the storm)
            "handlers": finished_on_server - 1,
        }
        return StormOutcome(elapsed, facts, problem)

    return StormVariant(MCPCORE, TrioThread, _open_mcpcore(budget), storm, busy_poll=budget)


def _sdk_cancel(calls: int) -> StormVariant:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    parameters = StdioServerParameters(command=sys.executable, args=[SCRIPT, "sdk", "storms"])
    # The SDK logs a warning for each cancelled call whose notifications/cancelled its
    # full transport could not take ("courtesy cancel ... gave up"): thousands of lines
    # per storm on stderr, where they would bury the progress display.
    logging.getLogger("mcp").setLevel(logging.ERROR)

    def opener() -> AbstractAsyncContextManager[Client]:
        return Client(parameters, mode="legacy")

    async def storm(client: Client) -> StormOutcome:
        results: dict[int, str] = {}
        finished = [False] * calls
        issued = 0

        async def caller(index: int) -> None:
            nonlocal issued
            issued += 1
            try:
                result = await client.call_tool("storm", {"index": index})
                [block] = result.content
                results[index] = str(getattr(block, "text", block))
            finally:
                finished[index] = True

        async def settle() -> tuple[list[int], list[Any]]:
            tasks = [asyncio.create_task(caller(index)) for index in range(calls)]
            await _wait_until(lambda: issued == calls, lambda: asyncio.sleep(0))
            cancelled = _to_cancel(calls, finished)
            for index in cancelled:
                tasks[index].cancel()
            return cancelled, await asyncio.gather(*tasks, return_exceptions=True)

        start = time.perf_counter_ns()
        cancelled, outcomes = await asyncio.wait_for(settle(), STORM_TIMEOUT)
        elapsed = time.perf_counter_ns() - start
        caught = {
            index
            for index, outcome in enumerate(outcomes)
            if isinstance(outcome, asyncio.CancelledError)
        }
        errors = [
            outcome
            for outcome in outcomes
            if isinstance(outcome, BaseException)
            and not isinstance(outcome, asyncio.CancelledError)
        ]
        problem = _check_cancel_storm(calls, cancelled, results, caught)
        if problem is None and errors:
            problem = f"a call failed: {errors[0]!r}"
        after = await asyncio.wait_for(client.call_tool("storm", {"index": -1}), STORM_TIMEOUT)
        if problem is None and str(getattr(after.content[0], "text", "")) != "-1":
            problem = "the connection did not answer after the storm"
        return StormOutcome(elapsed, {"cancelled": len(caught), "answered": len(results)}, problem)

    return StormVariant("sdk", AsyncioThread, opener, storm, busy_poll=None)


# ---------------------------------------------------------------- the rows


def _median_fact(runs: StormRuns, column: str, fact: str) -> int:
    values = [outcome.facts[fact] for outcome in runs.outcomes.get(column, ())]
    return round(statistics.median(values)) if values else 0


def _failure_notes(runs: StormRuns) -> list[str]:
    return [f"{column}: n/a: {why}" for column, why in runs.failed.items()]


def _combined(progress: StormVariant, cancel: StormVariant | None) -> StormVariant:
    """One client (and server) for both storms: the progress storm, then the cancel storm.

    Each storm's time goes into the outcome's facts (``progress_ns``, ``cancel_ns``).
    """
    if cancel is not None and (cancel.column, cancel.busy_poll) != (
        progress.column,
        progress.busy_poll,
    ):
        raise ValueError("two columns (or two busy-poll budgets) in one variant")

    async def storms(client: Any) -> StormOutcome:
        first = await progress.storm(client)
        facts = {"progress_ns": first.elapsed_ns, **first.facts}
        if cancel is None or first.problem is not None:
            return StormOutcome(first.elapsed_ns, facts, first.problem)
        second = await cancel.storm(client)
        facts.update(second.facts, cancel_ns=second.elapsed_ns)
        return StormOutcome(first.elapsed_ns + second.elapsed_ns, facts, second.problem)

    return StormVariant(
        progress.column, progress.thread, progress.opener, storms, busy_poll=progress.busy_poll
    )


def _progress_row(runs: StormRuns, count: int) -> WorkloadResult:
    rates = {
        column: [count * 1e9 / outcome.facts["progress_ns"] for outcome in outcomes]
        for column, outcomes in runs.outcomes.items()
    }
    ours = rates[MCPCORE]
    values: dict[str, float | None] = {
        column: statistics.median(samples) for column, samples in rates.items()
    }
    ratios: dict[str, float | None] = {
        f"{MCPCORE}/{column}": statistics.median(a / b for a, b in zip(ours, samples, strict=True))
        for column, samples in rates.items()
        if column != MCPCORE
    }
    for column in ("sdk", "ceiling"):
        if column not in rates:
            values[column] = NOT_AVAILABLE
            ratios[f"{MCPCORE}/{column}"] = NOT_AVAILABLE
    callbacks = ", ".join(
        f"{column} {_median_fact(runs, column, 'callbacks'):,}" for column in runs.outcomes
    )
    return WorkloadResult(
        layer=LAYER.name,
        name=PROGRESS_NAME.format(count=count),
        size_bytes=None,
        unit="msg/s",
        values=values,
        samples=rates,
        ratios=ratios,
        notes=[
            "notifications per second, from the call until its result and every "
            "progress callback the client runs; legacy era, each client against its "
            f"own library's server process; median of {len(ours)} storms",
            f"progress callbacks run per call (median): {callbacks}; mcpcore's client "
            "hands a callback only the latest progress it has not seen (the last one "
            "always), the SDK runs one task per notification",
            *_failure_notes(runs),
        ],
        parameters={"busy_poll_seconds": STORMS_BUSY_POLL},
    )


def _cancel_row(runs: StormRuns, calls: int) -> WorkloadResult:
    times = {
        column: [outcome.facts["cancel_ns"] / 1e6 for outcome in outcomes]
        for column, outcomes in runs.outcomes.items()
        if column != "ceiling"
    }
    ours = times[MCPCORE]
    values: dict[str, float | None] = {
        column: statistics.median(samples) for column, samples in times.items()
    }
    ratios: dict[str, float | None] = {
        f"{MCPCORE}/{column}": statistics.median(b / a for a, b in zip(ours, samples, strict=True))
        for column, samples in times.items()
        if column != MCPCORE
    }
    if "sdk" not in times:
        values["sdk"] = NOT_AVAILABLE
        ratios[f"{MCPCORE}/sdk"] = NOT_AVAILABLE
    counts = "; ".join(
        f"{column} {_median_fact(runs, column, 'cancelled'):,} cancelled, "
        f"{_median_fact(runs, column, 'answered'):,} answered"
        for column in times
    )
    return WorkloadResult(
        layer=LAYER.name,
        name=CANCEL_NAME.format(calls=calls),
        size_bytes=None,
        unit="ms",
        values=values,
        samples=times,
        ratios=ratios,
        notes=[
            "milliseconds from starting every caller until each has its answer or its "
            "cancellation; legacy era; each handler holds 5 ms shielded, so cancelled "
            f"calls still finish on the server; median of {len(ours)} storms",
            f"per storm (median): {counts} (the rest of the cancelled calls were answered "
            "before their cancellation took effect)",
            f"mcpcore's server still sent {_median_fact(runs, MCPCORE, 'late'):,} answers "
            "to cancelled calls (late, dropped by the client); it ran "
            f"{_median_fact(runs, MCPCORE, 'handlers'):,} handlers; no request left "
            "pending on the client's Connection after any storm",
            *_failure_notes(runs),
        ],
        parameters={"busy_poll_seconds": STORMS_BUSY_POLL},
    )


def progress_variants(context: Context, count: int, budget: float) -> list[StormVariant]:
    """The progress storm's columns: mcpcore and the ceiling busy-polling ``budget``."""
    variants = [_mcpcore_progress(count, budget)]
    if "sdk" in context.available:
        variants.append(_sdk_progress(count))
    return [*variants, _ceiling_progress(count, budget)]


def run(context: Context) -> list[WorkloadResult]:
    """Run the progress storm and the cancel storm; one row each.

    Each client (and its server) runs both storms, one after the other, so that each
    server process starts once.
    """
    quick = context.settings.quick
    count = QUICK_PROGRESS_COUNT if quick else PROGRESS_COUNT
    calls = QUICK_CANCEL_CALLS if quick else CANCEL_CALLS
    context.log(
        f"storms: progress storm of {count:,} notifications, "
        f"cancel storm of {calls:,} calls (half cancelled)"
    )
    cancels = {MCPCORE: _mcpcore_cancel(calls, STORMS_BUSY_POLL)}
    if "sdk" in context.available:
        cancels["sdk"] = _sdk_cancel(calls)
    variants = [
        _combined(progress, cancels.get(progress.column))
        for progress in progress_variants(context, count, STORMS_BUSY_POLL)
    ]
    runs = run_storms(context, LAYER.name, variants)
    return [_progress_row(runs, count), _cancel_row(runs, calls)]


LAYER = Layer("storms", "progress storm and cancel storm over stdio, ours vs the SDK", run)
