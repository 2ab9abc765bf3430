"""Reading capability objects: is a feature advertised, and what a request needs from the client."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from msgspec import UNSET

from mcpcore.types import (
    ClientCapabilities,
    CreateMessageRequestParams,
    ElicitationCapability,
    ElicitRequestURLParams,
    RootsCapability,
    SamplingCapability,
)

__all__ = ["elicitation_modes", "has_capability", "required_client_capabilities"]


def has_capability(capabilities: Any, path: str) -> bool:
    """Whether the dotted attribute ``path`` is advertised in ``capabilities``.

    Present means "set and not false": ``"logging": {}`` advertises logging, while
    ``"subscribe": false`` does not advertise subscriptions.
    """
    node = capabilities
    for name in path.split("."):
        node = getattr(node, name, UNSET)
        if node is UNSET or node is None or node is False:
            return False
    return True


def elicitation_modes(capabilities: ClientCapabilities | None) -> frozenset[str]:
    """The elicitation modes a client declared.

    "An empty object means form only" (2025-11-25 client/elicitation); in 2025-06-18,
    before modes existed, ``elicitation: {}`` meant the one (form) mode too.
    """
    declared = None if capabilities is None else capabilities.elicitation
    if declared is None or declared is UNSET:
        return frozenset()
    modes = {
        mode
        for mode, value in (("form", declared.form), ("url", declared.url))
        if value is not UNSET
    }
    return frozenset(modes or {"form"})


def required_client_capabilities(
    method: str, params: Any, capabilities: ClientCapabilities | None
) -> ClientCapabilities | None:
    """What a request to the client needs that the client did not declare, or None.

    Covers legacy server-to-client requests and 2026-07-28 input requests alike. The
    result is shaped as the ``requiredCapabilities`` of a -32021 error.
    """
    needs = _NEEDS.get(method)
    return None if needs is None else needs(params, capabilities)


def _sampling_needs(
    params: Any, capabilities: ClientCapabilities | None
) -> ClientCapabilities | None:
    declared = None if capabilities is None else capabilities.sampling
    wants_tools = isinstance(params, CreateMessageRequestParams) and params.tools is not UNSET
    if declared is None or declared is UNSET:
        return ClientCapabilities(
            sampling=SamplingCapability(tools={}) if wants_tools else SamplingCapability()
        )
    # "tools and toolChoice require sampling.tools" (2025-11-25 client/sampling).
    if wants_tools and declared.tools is UNSET:
        return ClientCapabilities(sampling=SamplingCapability(tools={}))
    return None


def _elicitation_needs(
    params: Any, capabilities: ClientCapabilities | None
) -> ClientCapabilities | None:
    mode = "url" if isinstance(params, ElicitRequestURLParams) else "form"
    if mode in elicitation_modes(capabilities):
        return None
    needed = ElicitationCapability(url={}) if mode == "url" else ElicitationCapability()
    return ClientCapabilities(elicitation=needed)


def _roots_needs(params: Any, capabilities: ClientCapabilities | None) -> ClientCapabilities | None:
    if capabilities is not None and capabilities.roots is not UNSET:
        return None
    return ClientCapabilities(roots=RootsCapability())


# The requests to a client that need a capability it declares, and what each needs.
_NEEDS: Final[dict[str, Callable[[Any, ClientCapabilities | None], ClientCapabilities | None]]] = {
    "sampling/createMessage": _sampling_needs,
    "elicitation/create": _elicitation_needs,
    "roots/list": _roots_needs,
}
