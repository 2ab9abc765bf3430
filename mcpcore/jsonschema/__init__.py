r"""JSON Schema validation for tool arguments and structured content, without IO.

An MCP server validates ``tools/call`` arguments against the tool's ``inputSchema``
before running the handler (a failure becomes a result with ``isError: true``); a client
may validate ``structuredContent`` against ``outputSchema``. Compile a schema once with
`Validator`, then call `Validator.errors` (or `is_valid`, `validate`) per instance::

    validator = Validator(tool_input_schema)  # SchemaError if we can't honour it
    issues = validator.errors(arguments)      # [] when valid

Dialects (MCP 2025-11-25: "JSON Schema 2020-12 is the default dialect when `$schema`
is absent. Implementations MUST support 2020-12, MUST validate by the declared dialect,
and MUST gracefully error on unsupported dialects"): 2020-12 (``$schema`` absent or
``https://json-schema.org/draft/2020-12/schema``) and draft-07
(``http://json-schema.org/draft-07/schema#``, http or https, ``#`` optional). Any other
``$schema`` is a `SchemaError`.

Scope: the 2020-12 Core, Applicator, Unevaluated and Validation vocabularies, with
``unevaluatedProperties``/``unevaluatedItems`` tracked by annotations. ``format`` is an
annotation, not asserted (the 2020-12 default), as are ``title``, ``description``,
``default``, ``examples``, ``x-…`` extensions and any other unknown keyword (Core
§4.3.1). ``$dynamicRef`` is unsupported (a `SchemaError`). ``pattern`` uses Python's
`re` adjusted towards ECMA-262: ``$`` matches only at the end, ``\d``/``\w``/``\b``
are ASCII, ``(?<name>…)`` works.

References stay inside the document: ``#``, ``#/json/pointer``, ``#anchor``, and
``$id``-identified subschemas embedded in it. MCP 2026-07-28: implementations "MUST NOT
auto-dereference network `$ref`s", and "Schemas with an unresolved external `$ref`
SHOULD be rejected": this module performs no IO at all, and any other ``$ref`` is a
`SchemaError` when compiling.

Cost is bounded (2026-07-28: "Validators SHOULD bound composition cost"): compiling by
`MAX_DEPTH` nesting and `MAX_SUBSCHEMAS`, each validation by ``max_depth`` and a step
budget ``max_steps`` standing in for a time budget, since the core reads no clock.
Running out yields one issue with keyword ``"limit"``, never an exception or a hang.
One gap remains: a pathological ``pattern`` can backtrack for long inside `re`, which
no step count sees, so schemas from an untrusted peer deserve care.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpcore.jsonschema._compile import compile_schema
from mcpcore.jsonschema._errors import (
    MAX_DEPTH,
    MAX_STEPS,
    MAX_SUBSCHEMAS,
    MAX_VALUE_NESTING,
    InvalidInstance,
    SchemaError,
    ValidationIssue,
    _LimitError,
)
from mcpcore.jsonschema._state import _Budget, _Notes

__all__ = [
    "MAX_DEPTH",
    "MAX_STEPS",
    "MAX_SUBSCHEMAS",
    "MAX_VALUE_NESTING",
    "InvalidInstance",
    "SchemaError",
    "ValidationIssue",
    "Validator",
    "check_schema",
]

_TOO_DEEP = "validation stopped: the instance nests too deeply"


class Validator:
    """A schema compiled once, for validating any number of JSON instances.

    Instances are JSON values as Python builtins (dict, list, str, int, float, bool,
    None), as msgspec decodes them without a type. JSON Schema keeps booleans apart from
    numbers (``true`` is not an ``integer`` and not equal to ``1``) and counts ``1.0``
    as an integer; both rules hold here although Python's `bool` is an `int`.

    A Validator is immutable, so one may serve many concurrent calls.

    Args:
        schema: the schema document, an object or a boolean.
        max_depth: how deeply evaluation (and the schema document) may nest; see
            `MAX_DEPTH`.
        max_steps: keyword evaluations allowed per validation; see `MAX_STEPS`.

    Raises:
        SchemaError: the schema can't be honoured (unsupported dialect, external or
            dangling ``$ref``, malformed keyword, unsupported keyword, too large).
        ValueError: a limit isn't a positive integer.
    """

    __slots__ = ("_compiled", "_max_depth", "_max_steps")

    def __init__(
        self,
        schema: Mapping[str, Any] | bool,
        *,
        max_depth: int = MAX_DEPTH,
        max_steps: int = MAX_STEPS,
    ) -> None:
        if max_depth < 1 or max_steps < 1:
            raise ValueError("max_depth and max_steps must be positive")
        self._max_depth = max_depth
        self._max_steps = max_steps
        self._compiled = compile_schema(schema, max_depth)

    @property
    def dialect(self) -> str:
        """The dialect the schema is validated by: ``"2020-12"`` or ``"draft-07"``."""
        return self._compiled.dialect

    def errors(self, instance: Any) -> list[ValidationIssue]:
        """Every issue with ``instance``, in evaluation order; ``[]`` when it is valid.

        Past the depth or step budget the answer is a single issue with keyword
        ``"limit"``: the instance is then treated as invalid.
        """
        issues: list[ValidationIssue] = []
        budget = _Budget(self._max_depth, self._max_steps)
        notes = _Notes() if self._compiled.tracking else None
        try:
            self._compiled.root.evaluate(instance, None, budget, issues, notes)
        except _LimitError as limit:
            return [ValidationIssue(limit.path, "limit", limit.message)]
        except RecursionError:  # only if max_depth was raised past what the stack holds
            return [ValidationIssue("", "limit", _TOO_DEEP)]
        return issues

    def is_valid(self, instance: Any) -> bool:
        """Whether ``instance`` is valid (False also when a limit is reached).

        It stops at the first failure, so it is cheaper than `errors` on invalid input.
        """
        budget = _Budget(self._max_depth, self._max_steps)
        notes = _Notes() if self._compiled.tracking else None
        try:
            return self._compiled.root.evaluate(instance, None, budget, None, notes)
        except (_LimitError, RecursionError):
            return False

    def validate(self, instance: Any) -> None:
        """Return quietly if ``instance`` is valid.

        Raises:
            InvalidInstance: it isn't; ``.issues`` lists why.
        """
        issues = self.errors(instance)
        if issues:
            raise InvalidInstance(issues)


def check_schema(schema: Mapping[str, Any] | bool) -> None:
    """Check that a schema compiles, as `Validator` would with default limits.

    Raises:
        SchemaError: it doesn't, and the message says where and why.
    """
    Validator(schema)
