"""The import layer: how long ``import mcpcore`` (and the trio drivers) take, cold.

``python -X importtime`` is too noisy on this machine, so each probe is a whole process:
``python -c "import mcpcore"``, timed from spawn to exit, repeated, its median minus the
median of ``python -c "pass"`` (the interpreter's own start-up). The official SDK gets the
same treatment with ``import mcp``, and so do the trio drivers, ``from transports import
serve_http`` (mcpcore, trio, wsproto and the HTTP server: ``import transports`` alone
imports almost nothing since its names load when first used, so it would time nothing but
noise): its row sets it next to ``import mcp``,
the one package in which the SDK ships both its core and its transports. The four
commands are interleaved, and each runs once untimed first so that every ``.pyc`` file
is written before the clock starts (with ``PYTHONDONTWRITEBYTECODE`` removed from the
environment, or nothing would be written).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time

from bench._layer import Context, Layer
from bench._results import MCPCORE, NOT_AVAILABLE, Target, WorkloadResult
from mcpcore_cli.bench.verify import BenchmarkError

__all__ = ["LAYER", "PROBES", "run", "time_command"]

#: "mcpcore under 60 ms".
UNDER_60_MS = Target("import < 60 ms", MCPCORE, 60.0, at_least=False)

#: The probe of the trio drivers (its row shows it in the mcpcore column).
TRANSPORTS = "transports"
#: Each probe's variant name and the Python code it runs.
PROBES = {
    "baseline": "pass",
    MCPCORE: "import mcpcore",
    TRANSPORTS: "from transports import serve_http",
    "sdk": "import mcp",
}

#: The probes' environment. Without PYTHONDONTWRITEBYTECODE (some machines, this one
#: among them, set it), so the warm-up run caches bytecode as an installed package has
#: it; otherwise every timed import would compile every module from source.
_PROBE_ENVIRONMENT = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

#: Runs per probe: full and ``--quick``.
RUNS, QUICK_RUNS = 10, 3


def time_command(code: str) -> float:
    """Milliseconds from spawning ``python -c code`` to its exit.

    Raises:
        BenchmarkError: The command failed (its stderr says why).
    """
    start = time.perf_counter_ns()
    completed = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        env=_PROBE_ENVIRONMENT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    elapsed = (time.perf_counter_ns() - start) / 1e6
    if completed.returncode != 0:
        reason = completed.stderr.decode(errors="replace").strip().splitlines()[-1:]
        raise BenchmarkError(f"python -c {code!r} failed: {' '.join(reason) or 'no message'}")
    return elapsed


def run(context: Context) -> list[WorkloadResult]:
    """Time the imports, interleaved, and report each one net of the interpreter start."""
    probes = {
        name: code for name, code in PROBES.items() if name != "sdk" or "sdk" in context.available
    }
    runs = QUICK_RUNS if context.settings.quick else RUNS
    context.log(f"import: {', '.join(probes.values())} ({runs} runs each)")
    for code in probes.values():
        time_command(code)  # warm-up: compile and cache the bytecode
    times: dict[str, list[float]] = {name: [] for name in probes}
    names = list(probes)
    for index in range(runs):
        shift = index % len(names)
        for name in names[shift:] + names[:shift]:
            times[name].append(time_command(probes[name]))
    baseline = statistics.median(times["baseline"])
    net = {name: statistics.median(values) - baseline for name, values in times.items()}
    sdk_ms = net.get("sdk", NOT_AVAILABLE)
    rows = []
    for probe, name, targets in (
        (MCPCORE, "import time (net of interpreter start)", [UNDER_60_MS]),
        (TRANSPORTS, "import time of transports (net of interpreter start)", []),
    ):
        ours = net[probe]
        rows.append(
            WorkloadResult(
                layer=LAYER.name,
                name=name,
                size_bytes=None,
                unit="ms",
                values={MCPCORE: ours, "sdk": sdk_ms},
                # (raw spawn-to-exit times; the mcpcore key holds this row's probe)
                samples={
                    "baseline": times["baseline"],
                    MCPCORE: times[probe],
                    **({"sdk": times["sdk"]} if "sdk" in times else {}),
                },
                ratios={f"{MCPCORE}/sdk": None if sdk_ms is None else sdk_ms / ours},
                targets=targets,
                notes=[
                    f"median of {runs} fresh processes each, minus python -c pass "
                    f"({baseline:.1f} ms)",
                    f"mcpcore column: {PROBES[probe]}; sdk: import mcp",
                ],
            )
        )
    return rows


LAYER = Layer(
    "import", "import time of mcpcore, of transports and of the SDK, in fresh processes", run
)
