"""Client: the ``x-mcp-header`` declarations of the tools listed, and the tools dropped.

On 2026-07-28 Streamable HTTP a ``tools/call`` mirrors the arguments its tool marks
with ``x-mcp-header`` into ``Mcp-Param-*`` headers, so the client must remember, from
``tools/list``, which tool declares what. A tool whose annotations break the rules
"(C) MUST drop from the tools/list result and SHOULD log a warning" (2026-07-28
server/tools, CHECKLIST §11.1): `ToolHeaderRegistry.learn` returns the listing without
such tools and keeps a bounded record of them (`ToolHeaderRegistry.invalid`) for the
client to show, since the core does no logging.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Final

import msgspec

from mcpcore.http._params import HeaderParam, InvalidHeaderAnnotationError, header_params
from mcpcore.types import ListToolsResult

__all__ = ["MAX_INVALID_TOOLS", "MAX_KNOWN_TOOLS", "InvalidTool", "ToolHeaderRegistry"]

#: Tools whose header declarations are remembered. Only tools that declare some take
#: room; past the limit the earliest learned is forgotten (its calls then go without
#: ``Mcp-Param-*`` headers, and the server says so with -32020). Servers list tens of
#: tools; this bounds what a hostile listing can make a client hold.
MAX_KNOWN_TOOLS: Final = 10_000
#: Dropped tools remembered for `ToolHeaderRegistry.invalid`, the latest first to stay.
MAX_INVALID_TOOLS: Final = 100

_NONE: Final[tuple[HeaderParam, ...]] = ()


@dataclass(frozen=True, slots=True)
class InvalidTool:
    """A tool dropped from a listing for an invalid ``x-mcp-header`` annotation.

    Attributes:
        name: The tool's name.
        reason: What is wrong with its annotations.
    """

    name: str
    reason: str


class ToolHeaderRegistry:
    """What each listed tool mirrors into headers; the tools dropped for bad annotations.

    Args:
        max_tools: See `MAX_KNOWN_TOOLS`.
        max_invalid: See `MAX_INVALID_TOOLS`.
    """

    def __init__(
        self, *, max_tools: int = MAX_KNOWN_TOOLS, max_invalid: int = MAX_INVALID_TOOLS
    ) -> None:
        self._max_tools = max_tools
        self._params: dict[str, tuple[HeaderParam, ...]] = {}
        self._invalid: deque[InvalidTool] = deque(maxlen=max_invalid)

    @property
    def invalid(self) -> tuple[InvalidTool, ...]:
        """The tools dropped so far (at most ``max_invalid``, oldest first)."""
        return tuple(self._invalid)

    def params_for(self, name: str) -> tuple[HeaderParam, ...]:
        """The header declarations of tool ``name``; empty when it has none, or is unknown."""
        return self._params.get(name, _NONE)

    def learn(self, result: ListToolsResult) -> ListToolsResult:
        """Remember the declarations of a ``tools/list`` page; drop its invalid tools.

        Returns:
            ``result`` itself when every tool is valid, else a copy without the
            invalid ones (recorded in `invalid`).
        """
        kept = []
        for tool in result.tools:
            try:
                params = header_params(tool.input_schema)
            except InvalidHeaderAnnotationError as exc:
                self._params.pop(tool.name, None)
                self._invalid.append(InvalidTool(tool.name, str(exc)))
                continue
            kept.append(tool)
            if params:
                self._remember(tool.name, params)
            else:
                self._params.pop(tool.name, None)
        if len(kept) == len(result.tools):
            return result
        return msgspec.structs.replace(result, tools=kept)

    def _remember(self, name: str, params: tuple[HeaderParam, ...]) -> None:
        known = self._params
        known.pop(name, None)  # re-inserted last: the latest learned is the last forgotten
        if len(known) >= self._max_tools:
            del known[next(iter(known))]
        known[name] = params
