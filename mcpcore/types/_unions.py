"""Decoding for the untagged unions of the schema.

msgspec decodes a union of Structs only when the Structs are tagged (a shared field whose
value names the type) and allows at most one untagged Struct per union. A few unions in
the schema have no such tag, or a tag that may be missing:

* ``TextResourceContents | BlobResourceContents``: told apart by ``text`` vs ``blob``;
* ``ElicitRequestFormParams | ElicitRequestURLParams``: ``mode``, absent for form mode in
  2025-11-25;
* ``InputRequiredResult | CallToolResult`` (and the read-resource / get-prompt
  counterparts): ``resultType``, absent in results from legacy servers.

For each of them `untagged_union` builds a private, permissive "wire" Struct that holds
the fields of every member, all optional. msgspec decodes into it; its ``__post_init__``
picks the member and rejects a shape no member accepts (a `ValueError` raised there
surfaces from ``msgspec.json.decode`` and ``msgspec.convert`` as a
`msgspec.ValidationError`). The container's ``__post_init__`` then swaps each wire value
for the public Struct with `resolve` / `resolve_each`, so users only ever see the public
types. Values a user built from the public Structs pass through untouched.

A container declares the field so that mypy sees the honest union and msgspec, which
reads annotations at runtime, sees the wire type::

    if TYPE_CHECKING:
        _Item: TypeAlias = TextResourceContents | BlobResourceContents
    else:
        _Item = untagged_union("_Item", (TextResourceContents, BlobResourceContents), pick)
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Literal, TypeVar, Union, cast

import msgspec

from ._base import UNSET, MCPType, UnsetType

__all__ = ["WireUnion", "resolve", "resolve_each", "untagged_union"]

_T = TypeVar("_T")

#: Picks the public Struct a wire value stands for, or raises `ValueError`.
Picker = Callable[[Any], type[MCPType]]
#: Builds the public Struct a wire value stands for, or raises `ValueError`.
Builder = Callable[[Any], MCPType]


class WireUnion(MCPType, kw_only=True):
    """Base of the generated wire Structs; never visible outside the types package.

    The public Struct is built once, in ``__post_init__``: a value that fits no member
    fails right there, where msgspec reports the error with its path
    (``$.contents[0]``). The container's ``__post_init__`` then swaps it in.
    """

    _pick: ClassVar[Picker]
    _build: ClassVar[Builder | None]
    # Per member: its fields, those whose default is not UNSET (a member's own
    # default such as mode="url" must win over an absent value), and the required
    # ones with their wire names.
    _plans: ClassVar[
        dict[type[MCPType], tuple[tuple[str, ...], tuple[str, ...], tuple[tuple[str, str], ...]]]
    ]
    # Where the built Struct waits for the container. A peer that sends this key gains
    # nothing: __post_init__ always overwrites it.
    resolved: Any = msgspec.field(default=UNSET, name="__mcpcore_resolved__")

    def __post_init__(self) -> None:
        cls = type(self)
        self.resolved = self._build_generic() if cls._build is None else cls._build(self)

    def _build_generic(self) -> MCPType:
        target = type(self)._pick(self)
        fields, defaulted, required = type(self)._plans[target]
        for attr, wire_name in required:
            if getattr(self, attr) is UNSET:
                raise ValueError(f"Object missing required field `{wire_name}`")
        values = {name: getattr(self, name) for name in fields}
        for name in defaulted:
            if values[name] is UNSET:
                del values[name]
        return target(**values)

    def resolve(self) -> MCPType:
        """The public Struct this wire value stands for."""
        resolved: MCPType = self.resolved
        return resolved


def resolve(value: _T) -> _T:
    """Replace a decoded wire value with its public Struct; return anything else as is."""
    if isinstance(value, WireUnion):
        return cast(_T, value.resolve())
    return value


def resolve_each(values: list[_T]) -> list[_T]:
    """Replace the wire values of a list in place, and return the list."""
    for index, value in enumerate(values):
        if isinstance(value, WireUnion):
            values[index] = cast(_T, value.resolve())
    return values


def _merge(types: Sequence[Any]) -> Any:
    """The union of the field types of several members, always including `UnsetType`."""
    args: list[Any] = []
    for tp in types:
        for arg in typing.get_args(tp) if typing.get_origin(tp) is Union else (tp,):
            if arg not in args:
                args.append(arg)
    if str in args:
        # msgspec allows one str-like type per union, and ``str`` already covers a
        # member's ``Literal["input_required"]``; the member re-checks it on resolve.
        args = [a for a in args if not _is_str_literal(a)]
    if UnsetType not in args:
        args.append(UnsetType)
    return Union[tuple(args)]  # noqa: UP007  (built at runtime from a tuple)


def _is_str_literal(tp: Any) -> bool:
    return typing.get_origin(tp) is Literal and all(isinstance(v, str) for v in typing.get_args(tp))


def untagged_union(
    name: str,
    members: tuple[type[MCPType], ...],
    pick: Picker,
    build: Builder | None = None,
) -> type[WireUnion]:
    """Build the permissive wire Struct for an untagged union of ``members``.

    Args:
        name: The class name of the wire Struct (private, shows up in reprs only).
        members: The public Structs of the union. A field shared by several members gets
            the union of their types.
        pick: Receives a decoded wire value and returns the member it stands for, or
            raises `ValueError` when no member fits.
        build: Optionally, builds the member directly (explicit construction is an
            order of magnitude cheaper than the generic path); it must check the
            shape as ``pick`` and the members' required fields would.

    Returns:
        A Struct type to use as the runtime annotation of the container's field.
    """
    field_types: dict[str, list[Any]] = {}
    wire_names: dict[str, str] = {}
    plans = {}
    for member in members:
        infos = msgspec.structs.fields(member)
        plans[member] = (
            tuple(f.name for f in infos),
            tuple(f.name for f in infos if not f.required and f.default is not UNSET),
            tuple((f.name, f.encode_name) for f in infos if f.required),
        )
        for info in infos:
            field_types.setdefault(info.name, []).append(info.type)
            wire_names[info.name] = info.encode_name
    fields = [
        (attr, _merge(types), msgspec.field(default=UNSET, name=wire_names[attr]))
        for attr, types in field_types.items()
    ]
    wire = msgspec.defstruct(
        name,
        fields,
        bases=(WireUnion,),
        kw_only=True,
        namespace={
            "_pick": staticmethod(pick),
            "_build": None if build is None else staticmethod(build),
            "_plans": plans,
        },
        module=__name__,
    )
    return cast(type[WireUnion], wire)
