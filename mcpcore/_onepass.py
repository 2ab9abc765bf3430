"""One-pass decoding of a well-formed request or notification: the hot path of `receive`.

The general path reads the envelope first, with ``params`` kept raw, and then decodes
``params`` into the method's type: two passes over the params. For the common case,
a valid request or notification of a method in the table, msgspec can do it in one:
every method gets a message Struct tagged by ``method``, and one decoder reads the
union of them.

The message Structs are strict so that msgspec itself refuses everything unusual:
``jsonrpc`` must be ``"2.0"``, a request's id must be a string or an integer, and
no member beyond ``jsonrpc``, ``id``, ``method`` and ``params`` is allowed (a stray
``result``, or an ``id`` on a notification). Whatever this path refuses, or does not
know (an unknown method, bad params, invalid JSON), returns None, and the caller takes
the general path, which decides what the peer is told. So this path changes speed,
never behaviour; `tests/core/test_fuzz.py` checks that.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, ClassVar, Literal, Protocol, Union

import msgspec
from msgspec import UNSET, UnsetType

__all__ = ["Call", "build_call_decoder", "build_result_decoder"]


class Call(Protocol):
    """What the call decoder reads of a method (a `mcpcore.methods.MethodSpec` is one)."""

    @property
    def name(self) -> str:
        """The method name: the tag a message of it carries."""

    @property
    def params_type(self) -> Any:
        """The type its ``params`` decode into."""

    @property
    def params_decode(self) -> Callable[[bytes], Any] | None:
        """A custom ``params`` decoder, for types msgspec can't decode alone."""

    @property
    def is_request(self) -> bool:
        """True for a request, False for a notification."""


class _Request(
    msgspec.Struct, tag_field="method", kw_only=True, forbid_unknown_fields=True, gc=False
):
    jsonrpc: Literal["2.0"]
    id: int | str
    spec: ClassVar[Any]  # the MethodSpec (msgspec resolves annotations at runtime)


class _Notification(
    msgspec.Struct, tag_field="method", kw_only=True, forbid_unknown_fields=True, gc=False
):
    jsonrpc: Literal["2.0"]
    spec: ClassVar[Any]  # the MethodSpec (msgspec resolves annotations at runtime)
    # Not a field: a notification that carries an "id" is refused as an unknown member.
    id: ClassVar[None] = None


def build_call_decoder(specs: Iterable[Call]) -> msgspec.json.Decoder[Any]:
    """One decoder for a valid request or notification of any of ``specs``.

    A decoded message has ``spec`` (the one of ``specs`` it is), ``id`` (None for a
    notification) and ``params`` (typed, or UNSET when absent). A message it can't
    decode raises `msgspec.DecodeError`: take the general path. The input must already
    be known to be UTF-8 (msgspec does not check the strings it skips).
    """
    members = []
    for spec in specs:
        if spec.params_decode is not None:
            continue  # params msgspec can't decode alone (a union): general path
        members.append(
            msgspec.defstruct(
                f"_{spec.name}",
                [("params", spec.params_type | UnsetType, UNSET)],
                bases=(_Request if spec.is_request else _Notification,),
                namespace={"spec": spec},
                tag=spec.name,
                kw_only=True,
                forbid_unknown_fields=True,
                gc=False,
            )
        )
    return msgspec.json.Decoder(Union[tuple(members)])  # noqa: UP007


def build_result_decoder(method: str, result_type: Any) -> msgspec.json.Decoder[Any]:
    """One decoder for a whole successful response to a ``method`` request.

    The decoded message has ``id`` and ``result`` (typed). It is as strict as the call
    decoder: ``jsonrpc`` must be ``"2.0"`` and no other member is allowed, so an error
    response, or one carrying both members, is refused (`msgspec.DecodeError`) and
    read by the general path.
    """
    message_type = msgspec.defstruct(
        f"_{method}_result",
        [("jsonrpc", Literal["2.0"]), ("id", int | str), ("result", result_type)],
        kw_only=True,
        forbid_unknown_fields=True,
        gc=False,
    )
    return msgspec.json.Decoder(message_type)
