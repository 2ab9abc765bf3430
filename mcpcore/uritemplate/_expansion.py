"""Expansion (RFC 6570 §3): a parsed expression and the variables' values to URI text.

The algorithm of Appendix A, one expression at a time, with the pct-encoding of §3.2.1.
Values may be str, int, float, bool, lists and mappings of those (`_scalar`, `_defined`);
`UriTemplate.expand` joins the expansions with the template's literal text.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import quote

from mcpcore.uritemplate._grammar import _PCT_TRIPLET, _RESERVED, _Expression


def _encode(value: str, allow_reserved: bool) -> str:
    """Pct-encode ``value`` as §3.2.1 says.

    Unreserved characters are kept, and so are reserved ones and existing pct-encoded
    triplets when the operator allows them (``+``, ``#``); the rest is encoded as UTF-8.
    """
    if not allow_reserved:
        return quote(value, safe="")  # quote() always keeps exactly the unreserved set
    pieces = _PCT_TRIPLET.split(value)
    triplets = _PCT_TRIPLET.findall(value)
    out = [quote(pieces[0], safe=_RESERVED)]
    for triplet, piece in zip(triplets, pieces[1:], strict=True):
        out += (triplet, quote(piece, safe=_RESERVED))
    return "".join(out)


def _scalar(value: object, name: str) -> str:
    # Numbers and booleans as JSON writes them: 1024, 1.5, true.
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        return repr(float(value))
    raise TypeError(
        f"the value of {name!r} must be a str, int, float, bool, list, tuple or mapping "
        f"(of those scalars), not {type(value).__name__}"
    )


def _defined(value: object, name: str) -> str | list[str] | dict[str, str] | None:
    """The value as §2.3 sees it, or None when it is undefined.

    None is undefined; so are an empty list or mapping (§2.3: "considered undefined if the
    list contains zero members"), and a mapping whose values are all None.
    """
    if value is None:
        return None
    if isinstance(value, list | tuple):
        items = [_scalar(item, name) for item in value if item is not None]
        return items or None
    if isinstance(value, Mapping):
        pairs = {_scalar(k, name): _scalar(v, name) for k, v in value.items() if v is not None}
        return pairs or None
    return _scalar(value, name)


def _expand(expression: _Expression, values: Mapping[str, object]) -> str:
    """One expression, by the algorithm of RFC 6570 Appendix A."""
    op = expression.operator

    def named(name: str, text: str) -> str:
        return name + ("=" + text if text else op.ifemp)

    def enc(text: str) -> str:
        return _encode(text, op.allow_reserved)

    out: list[str] = []
    for spec in expression.varspecs:
        value = _defined(values.get(spec.name), spec.name)
        if value is None:
            continue  # §3.2.1: undefined variables are skipped
        if isinstance(value, str):
            if spec.prefix is not None:
                value = value[: spec.prefix]  # §2.4.1: counted in characters, before encoding
            out.append(named(spec.name, enc(value)) if op.named else enc(value))
            continue
        if spec.prefix is not None:
            # §2.4.1: "Prefix modifiers are not applicable to variables that have composite
            # values."
            raise ValueError(f"{spec.name!r} has a prefix modifier but a composite value")
        if isinstance(value, dict):
            if spec.explode:  # §2.4.2: name=value pairs, each pair a separate value
                members = [
                    named(enc(k), enc(v)) if op.named else f"{enc(k)}={enc(v)}"
                    for k, v in value.items()
                ]
                out.append(op.sep.join(members))
                continue
            text = ",".join(f"{enc(k)},{enc(v)}" for k, v in value.items())
        else:
            if spec.explode:  # §2.4.2: each list member a separate value
                members = [named(spec.name, enc(v)) if op.named else enc(v) for v in value]
                out.append(op.sep.join(members))
                continue
            text = ",".join(enc(v) for v in value)
        out.append(named(spec.name, text) if op.named else text)
    return op.first + op.sep.join(out) if out else ""
