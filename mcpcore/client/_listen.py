"""Checking a ``subscriptions/listen`` acknowledgement against what was asked for.

The server acknowledges "the honoured subset of the filter, with unsupported types
omitted", and "(C) SHOULD compare the acknowledged filter with its request"
(2026-07-28 basic/patterns/subscriptions, CHECKLIST §9.2). The comparison says both
what the server dropped (fine, but the client may want to poll instead) and what it
granted without being asked (a server error: "MUST NOT send notification types that
were not requested").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from msgspec import UNSET

from mcpcore.types import SubscriptionFilter

__all__ = ["FilterComparison", "compare_acknowledgement"]

_FLAGS: Final = ("tools_list_changed", "prompts_list_changed", "resources_list_changed")


@dataclass(frozen=True, slots=True)
class FilterComparison:
    """How an acknowledged filter differs from the requested one.

    Attributes:
        dropped: What was asked for and not acknowledged: those notifications won't come.
        unrequested: What was acknowledged without being asked for: a server error.
    """

    dropped: SubscriptionFilter
    unrequested: SubscriptionFilter

    @property
    def honoured_in_full(self) -> bool:
        """Whether the server acknowledged everything that was asked for."""
        return _is_empty(self.dropped)

    @property
    def is_valid(self) -> bool:
        """Whether the acknowledgement stays within the request, as it must."""
        return _is_empty(self.unrequested)


def compare_acknowledgement(
    requested: SubscriptionFilter, acknowledged: SubscriptionFilter
) -> FilterComparison:
    """Compare a listen stream's acknowledgement with the filter of its request.

    Args:
        requested: The ``notifications`` of the ``subscriptions/listen`` request.
        acknowledged: The ``notifications`` of its ``notifications/subscriptions/acknowledged``.

    Returns:
        What was dropped and what was added.
    """
    return FilterComparison(
        dropped=_difference(requested, acknowledged),
        unrequested=_difference(acknowledged, requested),
    )


def _difference(left: SubscriptionFilter, right: SubscriptionFilter) -> SubscriptionFilter:
    """What ``left`` turns on that ``right`` does not."""
    difference = SubscriptionFilter()
    for flag in _FLAGS:
        if getattr(left, flag) is True and getattr(right, flag) is not True:
            setattr(difference, flag, True)
    theirs = set(right.resource_subscriptions or ())
    extra = [uri for uri in left.resource_subscriptions or () if uri not in theirs]
    if extra:
        difference.resource_subscriptions = extra
    return difference


def _is_empty(subscription_filter: SubscriptionFilter) -> bool:
    return all(
        getattr(subscription_filter, flag) is not True for flag in _FLAGS
    ) and subscription_filter.resource_subscriptions in (UNSET, [])
