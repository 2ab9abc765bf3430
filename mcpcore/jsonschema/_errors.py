"""What validation can report, and the limits that bound it.

The public outcomes: `SchemaError` when a schema can't be compiled, `ValidationIssue` for
each reason an instance fails, `InvalidInstance` carrying them; and the constants that
bound the cost of compiling and validating (MCP 2026-07-28: "Validators SHOULD bound
composition cost"). Two private exceptions unwind evaluation when a bound is reached,
so that it ends as one issue with keyword ``"limit"`` instead of a hang or a crash.
They live together, below everything else in the package, because every other module
raises or reports one of them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Final

#: How deeply evaluation may nest: one level per subschema entered (through a property,
#: an item, ``allOf``, ``$ref``…). Flat tool schemas use a handful; a recursive schema
#: spends 2-3 levels per level of the instance (node, ``items``, ``$ref``), so 128 admits
#: trees some 40 levels deep. A level costs about two Python frames, so even with
#: `MAX_VALUE_NESTING` on top the stack stays well inside Python's default limit of
#: 1000. The same bound applies to how deeply the schema document nests (at compile).
MAX_DEPTH: Final = 128
#: Keyword evaluations allowed per `errors`/`is_valid` call. MCP 2026-07-28 asks
#: validators to bound composition cost with a time budget; the sans-IO core reads no
#: clock, so it counts steps instead (one per keyword of each subschema evaluated).
#: Exhausting 100 000 steps takes some 30-70 ms, while a flat tool schema needs a dozen
#: steps per call. The count includes linear work: an array of 100 000 typed items uses
#: it all, so a caller validating outputs that large should raise ``max_steps``.
MAX_STEPS: Final = 100_000
#: Subschemas one document may compile to (MCP 2026-07-28's "maximum subschema count"):
#: bounds compile time and memory for a hostile schema. Generated tool schemas with many
#: ``$defs`` have hundreds at most.
MAX_SUBSCHEMAS: Final = 10_000
#: How deeply a JSON value compared by ``enum``, ``const`` or ``uniqueItems`` may nest.
#: The comparison recurses, so a hostile instance nested thousands deep must stop with a
#: "limit" issue rather than exhaust Python's stack; real arguments nest a few levels.
MAX_VALUE_NESTING: Final = 256


class SchemaError(ValueError):
    """The schema itself is unusable, so no instance can be validated against it.

    Raised while compiling: an unsupported ``$schema`` dialect, a ``$ref`` that leaves
    the document (never fetched) or points nowhere, a malformed keyword value, an
    unsupported keyword (``$dynamicRef``), or a schema past `MAX_SUBSCHEMAS` or the
    depth limit. The message names the schema location, e.g. ``#/properties/age``.
    """


@dataclasses.dataclass(frozen=True, slots=True)
class ValidationIssue:
    """One reason an instance doesn't match its schema.

    Attributes:
        path: JSON pointer (RFC 6901) to the offending value inside the instance, such
            as ``"/address/city"``; ``""`` is the instance itself.
        keyword: the schema keyword that failed (``"type"``, ``"required"``…), or
            ``"limit"`` when validation stopped at the depth or step budget.
        message: a short English explanation. It quotes the schema where useful but
            never the instance's values, so it is safe to send back to the peer.
    """

    path: str
    keyword: str
    message: str

    def __str__(self) -> str:
        return f"{self.path or '/'}: {self.message}"


class InvalidInstance(ValueError):  # noqa: N818 -- public name, fixed by the API
    """The instance does not match the schema; raised by `Validator.validate`.

    Attributes:
        issues: every issue found, in evaluation order (never empty).
    """

    def __init__(self, issues: Sequence[ValidationIssue]) -> None:
        self.issues: tuple[ValidationIssue, ...] = tuple(issues)
        shown = "; ".join(str(issue) for issue in self.issues[:5])
        more = len(self.issues) - 5
        super().__init__(shown + (f" (and {more} more)" if more > 0 else ""))


class _LimitError(Exception):
    """Validation hit the depth or step budget: reported as one "limit" issue."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


class _TooDeepError(Exception):
    """A value compared by enum/const/uniqueItems nests past `MAX_VALUE_NESTING`."""
