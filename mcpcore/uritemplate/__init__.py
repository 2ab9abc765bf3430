"""RFC 6570 URI templates: expansion, and matching a URI back to its variables.

MCP resource templates (``ResourceTemplate.uriTemplate``) are RFC 6570 URI templates. A
client expands them (and completes their variables); a server does the inverse: it routes
``resources/read`` of ``test://template/123/data`` to the handler registered for
``test://template/{id}/data`` with ``id="123"``. RFC 6570 defines only expansion (§1.4
leaves matching to regular-expression languages), so the matching rules are ours; they are
documented on `UriTemplate`.

Matching is written by hand rather than compiled to an `re` pattern because the URI comes
from the peer. A backtracking regex costs O(n**k) on a URI that fails to match a template
with k variables that can be split more than one way (``{major}.{minor}.{patch}`` and a
URI of 400 dots already takes a third of a second). The search here remembers which
(template part, URI position) pairs it has tried, so its work grows linearly with the
URI, and a step budget (`MAX_MATCH_STEPS`) bounds it whatever the template.

The package, one concept a module: `_limits` (the bounds on templates and URIs),
`_grammar` (the §2 grammar, the parser and `InvalidTemplate`), `_expansion` (§3), and
`_matching` (the match program and its search). `UriTemplate` ties them together here.
"""

from __future__ import annotations

from collections.abc import Mapping

from mcpcore.uritemplate._expansion import _expand
from mcpcore.uritemplate._grammar import _PCT_TRIPLET, InvalidTemplate, _parse
from mcpcore.uritemplate._limits import (
    MAX_EXPRESSIONS,
    MAX_MATCH_STEPS,
    MAX_PREFIX_LENGTH,
    MAX_TEMPLATE_LENGTH,
    MAX_URI_LENGTH,
    MAX_VARSPECS,
)
from mcpcore.uritemplate._matching import (
    _END,
    _LIT,
    _NOT_URI,
    MatchValue,
    _Compiler,
    _OutOfStepsError,
    _upper_triplet,
    _value,
)
from mcpcore.uritemplate._matching import (
    _Search as _Search,  # explicit: the tests drive the search directly
)

__all__ = [
    "MAX_EXPRESSIONS",
    "MAX_MATCH_STEPS",
    "MAX_PREFIX_LENGTH",
    "MAX_TEMPLATE_LENGTH",
    "MAX_URI_LENGTH",
    "MAX_VARSPECS",
    "InvalidTemplate",
    "MatchValue",
    "UriTemplate",
    "is_template",
]


class UriTemplate:
    """An RFC 6570 URI template (levels 1-4), parsed once, to expand and to match.

    `expand` follows the RFC exactly. `match` is its inverse: the variables of a URI that
    the template could expand to, pct-decoded, or None. The rules:

    * The URI must be at most `MAX_URI_LENGTH` characters of URI syntax (RFC 3986:
      unreserved, reserved, and ``%`` only in well-formed pct-encoded octets), or nothing
      matches. Hex digits match in either case.
    * Literal text matches the text expansion writes for it: itself, or pct-encoded
      UTF-8 for characters a URI can't contain (``{x}é`` matches ``1%C3%A9``).
    * A variable's value matches what expanding a string could write: for ``{var}``,
      ``{.var}``, ``{/var}``, ``{;var}``, ``{?var}`` and ``{&var}``, unreserved characters
      and pct-encoded octets, so ``{id}`` stops at ``/``, ``?``, ``#``, ``,`` and such;
      ``{+var}`` and ``{#var}`` allow reserved characters too, so ``file:///{+path}``
      captures ``a/b/c.txt``. Values come back pct-decoded, all of them (``{+path}``
      gives ``a/b`` for both ``a/b`` and ``a%2Fb``, and ``{id}`` gives ``a/b`` for
      ``a%2Fb``). A value whose octets are not UTF-8 makes the match fail; the search
      never splits a UTF-8 sequence between two variables.
    * ``{var}`` and ``{+var}`` never match the empty string: an empty value and an
      undefined one both expand to nothing, so ``test://template/{id}/data`` does not
      match ``test://template//data``. (In ``{a,b}`` and ``{+a,b}`` the first value must
      be non-empty.) The other operators write something even for an empty value
      (``{/var}`` writes ``/``, ``{?var}`` writes ``?var=``), so there ``""`` matches
      back; ``{;var}`` matches ``;var`` as ``""``, and ``;var=`` not at all.
    * Other variables may be absent, as expansion omits undefined ones; an absent
      variable is missing from the result. For ``.``, ``/``, ``;``, ``?`` and ``&`` each
      variable is optional on its own, and named ones must appear in template order:
      ``{?a,b}`` matches ``?a=1``, ``?b=2``, ``?a=1&b=2`` and the empty string, not
      ``?b=2&a=1``. For ``{a,b}``, ``{+a,b}`` and ``{#a,b}`` absent variables are
      indistinguishable, so values fill the variables from the left; a variable is
      absent only where the values can't fill it (``{a,b:2,c}`` matches ``0,000`` as
      ``a="0"``, ``c="000"``: ``b`` takes at most 2 characters). In a
      multi-variable expression every variable but the last stops at the separator if
      it can (``{.x,y}`` splits ``.1024.768`` as ``x="1024"``, ``y="768"``).
    * A prefix ``{var:3}`` matches at most 3 characters (pct-decoded characters, as the
      RFC counts them), and gives only those: the rest of the value is not in the URI.
    * Exploded variables give lists, or mappings when every member is ``key=value``:
      ``{/path*}`` matches ``/a/b/c`` as ``["a", "b", "c"]``, ``{?list*}`` matches
      ``?list=a&list=b`` as ``["a", "b"]`` (members named after the variable), and
      ``{?map*}`` matches ``?x=1&y=2`` as ``{"x": "1", "y": "2"}``. An exploded variable
      takes as many members as it can. Members separated by a character a member may
      contain (``.`` for ``{.list*}``, ``,`` for ``{+list*}``) can't be told apart, nor
      a one-member mapping keyed by the variable's own name from a list. A non-exploded
      variable always gives a string: ``{list}`` matches ``a,b`` only where ``,`` is
      allowed (``{+list}``), as ``"a,b"``.
    * A variable used twice must match the same value (a prefix: the value's prefix),
      and be present in both places or in neither.
    * When the URI can be split between variables in more than one way, each variable
      takes as much as it can, leftmost first, as a backtracking regex would
      (``{+path}/{name}`` gives ``path="a/b"``, ``name="c"`` for ``a/b/c``); if any split
      works, one is found. The search is linear in the URI (see `MAX_MATCH_STEPS`).

    So ``match(expand(values)) == values`` holds for string values except where a rule
    above says the URI can't tell: an empty or undefined ``{var}``/``{+var}``, a value
    containing a character that separates it from the next variable, and a ``+``/``#``
    value containing pct-encoded triplets (expansion copies them; matching decodes them).

    A matched value is any string at all once decoded: ``%2F``, ``%2E%2E`` and ``%00``
    decode to ``/``, ``..`` and NUL in every operator. Treat values as untrusted input
    (a ``{+path}`` resolved against a directory must be checked to stay inside it).

    Templates compare, hash and print as their text.

    Attributes:
        template: the template's text.
        variables: the variable names in order of first appearance.
    """

    __slots__ = ("_captures", "_parts", "_program", "template", "variables")

    def __init__(self, template: str) -> None:
        """Parse ``template``.

        Raises:
            InvalidTemplate: if it doesn't follow RFC 6570 §2, or exceeds a limit
                (`MAX_TEMPLATE_LENGTH`, `MAX_EXPRESSIONS`, `MAX_VARSPECS`).
        """
        self.template = template
        self._parts = _parse(template)
        names = [
            spec.name for part in self._parts if not isinstance(part, str) for spec in part.varspecs
        ]
        self.variables: tuple[str, ...] = tuple(dict.fromkeys(names))
        compiler = _Compiler()
        for part in self._parts:
            if isinstance(part, str):
                compiler.literal(part)
            else:
                compiler.expression(part)
        compiler.emit(_END)
        self._program = tuple(compiler.program)
        self._captures = tuple(compiler.captures)

    def expand(self, values: Mapping[str, object]) -> str:
        """The URI for ``values`` (RFC 6570 §3).

        Args:
            values: the variables' values: a str, int, float or bool (written ``1024``,
                ``1.5``, ``true``), a list or tuple of those (a value list), or a mapping
                of them (an associative array, in its order). A missing name or None is
                undefined and skipped; so is an empty list or mapping.

        Returns:
            The expansion: every character outside the operator's allowed set
            pct-encoded as UTF-8.

        Raises:
            TypeError: for a value of another type.
            ValueError: for a prefix modifier on a list or mapping (§2.4.1), or a string
                that can't be encoded as UTF-8 (a lone surrogate).
        """
        return "".join(
            part if isinstance(part, str) else _expand(part, values) for part in self._parts
        )

    def match(self, uri: str) -> dict[str, MatchValue] | None:
        """The variables this template expands to ``uri`` with, or None (see the class).

        Args:
            uri: the URI to match, at most `MAX_URI_LENGTH` characters.

        Returns:
            Each variable present in the URI, pct-decoded: a str, or for an exploded
            variable a list of str or a dict of str to str. None if the template can't
            produce ``uri``.
        """
        if len(uri) > MAX_URI_LENGTH or _NOT_URI.search(uri):
            return None
        if "%" in uri:
            uri = _PCT_TRIPLET.sub(_upper_triplet, uri)
        first = self._program[0]
        if first.code == _LIT and not uri.startswith(first.text):
            return None  # the common miss: another scheme or path
        try:
            # The package's MAX_MATCH_STEPS, read on each call as it always was.
            saved = _Search(uri, MAX_MATCH_STEPS).run(self._program, 2 * len(self._captures))
        except _OutOfStepsError:
            return None
        return None if saved is None else self._bind(uri, saved)

    def _bind(self, uri: str, saved: list[int]) -> dict[str, MatchValue] | None:
        """The variables of a match: each capture's span of ``uri``, decoded; or None.

        A variable captured more than once must take one value everywhere (a prefix
        capture, ``{var:3}``, only the start of it), and one that is absent somewhere is
        absent everywhere.
        """
        result: dict[str, MatchValue] = {}
        prefixes: dict[str, list[tuple[int, str]]] = {}
        absent: set[str] = set()
        for capture in self._captures:
            start, end = saved[capture.slot], saved[capture.slot + 1]
            if start < 0:
                absent.add(capture.name)
                continue
            value = _value(uri[start:end], capture)
            if value is None:
                return None
            if capture.prefix is not None and isinstance(value, str):
                prefixes.setdefault(capture.name, []).append((capture.prefix, value))
            elif result.setdefault(capture.name, value) != value:
                return None
        for name, truncated in prefixes.items():
            full = result.setdefault(name, max((value for _, value in truncated), key=len))
            if not isinstance(full, str) or any(full[:n] != value for n, value in truncated):
                return None
        if absent & result.keys():
            return None  # expansion writes a defined variable everywhere it appears
        return result

    def __str__(self) -> str:
        return self.template

    def __repr__(self) -> str:
        return f"UriTemplate({self.template!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, UriTemplate):
            return NotImplemented
        return self.template == other.template

    def __hash__(self) -> int:
        return hash(self.template)


def is_template(text: str) -> bool:
    """Whether ``text`` is a valid URI template with at least one expression.

    A URI with no ``{...}`` (a static resource's) is not a template; nor is text that
    isn't valid RFC 6570.
    """
    if "{" not in text:
        return False
    try:
        return any(not isinstance(part, str) for part in _parse(text))
    except InvalidTemplate:
        return False
