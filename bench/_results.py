"""What a layer reports: one `WorkloadResult` per workload, with its targets.

A ratio is always a *speed-up of mcpcore*: ``"mcpcore/sdk" = 20`` means mcpcore did the
job 20 times faster than the official SDK. For rates (operations per second) that is
``rate(mcpcore) / rate(other)``; for times (milliseconds) and sizes (bytes) it is
``time(other) / time(mcpcore)``. Either way, above 1 is mcpcore ahead.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from mcpcore_cli.bench.timing import MCPCORE, Samples, ratio_samples

__all__ = [
    "MCPCORE",
    "NOT_AVAILABLE",
    "Target",
    "WorkloadResult",
    "from_samples",
]

#: A variant's value when the library it needs is not installed (or was left out).
NOT_AVAILABLE = None

#: What a row's values count: rates (higher is better), or milliseconds and bytes (lower).
Unit = Literal["msg/s", "round trips/s", "ms", "bytes"]


@dataclass(frozen=True)
class Target:
    """A goal from the issue: a ratio or mcpcore's own value against a threshold.

    Attributes:
        label: How the table shows it (``"SDK >= 15x"``).
        metric: A ratio name (``"mcpcore/sdk"``) or ``"mcpcore"`` for mcpcore's value.
        threshold: The bound.
        at_least: True if the metric must reach the bound, False if it must stay under.
    """

    label: str
    metric: str
    threshold: float
    at_least: bool = True

    def met(self, result: WorkloadResult) -> bool | None:
        """Whether ``result`` meets the target; None when it can't be told (n/a)."""
        value = result.ratios.get(self.metric) if "/" in self.metric else result.value(MCPCORE)
        if value is None:
            return None
        return value >= self.threshold if self.at_least else value < self.threshold


@dataclass
class WorkloadResult:
    """The measurements of one workload, every variant side by side.

    Attributes:
        layer: The layer that measured it (``"codec"``, ``"roundtrip"``, ``"import"``).
        name: The workload, named exactly.
        size_bytes: The message size, when the workload has one.
        unit: What the values count.
        values: Each variant's median; `NOT_AVAILABLE` (None) when it could not run.
        samples: Each variant's per-repetition values.
        ratios: mcpcore's speed-up over each other variant (median of per-repetition
            ratios); None when the other variant could not run.
        targets: The goals that apply to this workload.
        notes: Anything a reader must know to trust the row (outputs that differ, ...).
        parameters: What the row measured, for programs (the chart): ``transport``,
            ``in_flight``, ``era``, ``replies``, ``busy_poll_seconds``... as the layer says.
    """

    layer: str
    name: str
    size_bytes: int | None
    unit: Unit
    values: dict[str, float | None]
    samples: dict[str, list[float]]
    ratios: dict[str, float | None]
    targets: list[Target] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    parameters: dict[str, str | int | float] = field(default_factory=dict)

    def value(self, variant: str) -> float | None:
        """The median of ``variant``, or None if it was not available."""
        return self.values.get(variant)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict of this result."""
        return {
            "layer": self.layer,
            "name": self.name,
            "size_bytes": self.size_bytes,
            "unit": self.unit,
            "values": self.values,
            "samples": self.samples,
            "ratios": self.ratios,
            "targets": [
                {
                    "label": target.label,
                    "metric": target.metric,
                    "threshold": target.threshold,
                    "at_least": target.at_least,
                    "met": target.met(self),
                }
                for target in self.targets
            ],
            "notes": self.notes,
            "parameters": self.parameters,
        }


def from_samples(
    layer: str,
    name: str,
    *,
    size_bytes: int | None,
    unit: Unit,
    measured: Mapping[str, Samples],
    unavailable: tuple[str, ...] = (),
    targets: tuple[Target, ...] = (),
    notes: tuple[str, ...] = (),
    parameters: dict[str, str | int | float] | None = None,
) -> WorkloadResult:
    """Build the result of a rate workload from `mcpcore_cli.bench.timing.measure`'s samples.

    ``unavailable`` names the variants that belong in the table but could not run.
    """
    core = measured[MCPCORE]
    values: dict[str, float | None] = {name: samples.median for name, samples in measured.items()}
    ratios: dict[str, float | None] = {}
    for other, samples in measured.items():
        if other != MCPCORE:
            ratios[f"{MCPCORE}/{other}"] = statistics.median(ratio_samples(core, samples))
    for other in unavailable:
        values[other] = NOT_AVAILABLE
        ratios[f"{MCPCORE}/{other}"] = NOT_AVAILABLE
    return WorkloadResult(
        layer=layer,
        name=name,
        size_bytes=size_bytes,
        unit=unit,
        values=values,
        samples={name: list(samples.rates) for name, samples in measured.items()},
        ratios=ratios,
        targets=list(targets),
        notes=list(notes),
        parameters=dict(parameters or {}),
    )
