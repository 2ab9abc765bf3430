"""How deeply the peer's JSON may nest, checked before anything decodes it.

msgspec recurses once per level of nesting when it decodes a value (or skips it, or
keeps it raw), and again when it encodes or converts it; so do Python's ``==`` on dicts
and lists, ``repr``, and any recursive walk in a handler. The guard on all of them is
the recursion limit, which counts the frames already on the stack: on CPython 3.11 a
value some 950 levels deep decodes at the top of a reader task, then raises
`RecursionError` when a handler encodes it a few frames deeper; 3.12 and later count C
recursion apart, with limits in the thousands; and msgspec takes some 400 bytes of C
stack a level (measured: a thread with a 256 KiB stack dies of SIGSEGV near 640
levels, before any guard fires). A depth the stack "allows" is no limit at all.

`MAX_JSON_DEPTH` is the limit instead, the same wherever a message is read: a message
nested deeper is refused before it is decoded (-32700, like any JSON that can't be
read), every value the core hands on nests at most that deep, and msgspec never
recurses past ``2 * MAX_JSON_DEPTH + 1`` levels (~400 KiB of C stack) on the peer's
input.

`nests_too_deeply` checks it without parsing, in steps that stop as soon as the answer
is sure: a length comparison for a message of up to 1,025 bytes (every typical
request); a memchr-speed walk from one ``[``/``{`` to the next while they are sparse (a
long text with a few objects); byte counts for dense messages (listings), which bound
the depth from above; and only when those can't tell (a listing of a hundred tools or
more, fewer if their strings hold many brackets, or a message that really nests deep),
one linear pass over the brackets that lie outside strings.

`DECODE_ERRORS` is what decoding the peer's bytes raises when they are no JSON we can
read; every decoder of peer input catches it, so nothing the check lets through can
raise out of a receive path either.
"""

from __future__ import annotations

from itertools import accumulate
from typing import Final

import msgspec

__all__ = ["DECODE_ERRORS", "MAX_JSON_DEPTH", "SHALLOW_SIZE", "nests_too_deeply"]

#: How many arrays and objects may be open at once in a message from the peer:
#: ``[[1]]`` nests 2 deep, and a 2025-03-26 batch counts as one level. Past it the
#: message is refused unread (-32700). Real MCP payloads nest a few to a few dozen
#: levels (JSON Schemas with ``$defs``, structured tool output, documents). 512 leaves
#: half of Python's default recursion limit (1,000 frames) to the code that handles a
#: value, however deep the stack it runs on is (a server's ~50 frames, a handler's
#: own): msgspec encodes, converts and skips at a frame a level, as do ``==`` and
#: ``repr``. (A recursive Python walk at 2 frames a level over a value that deep would
#: not fit: it gets `RecursionError`, an error result, like any handler exception.)
#: It is also where the check stays cheap: a message of up to 1,025 bytes can't nest
#: deeper, nor can a listing of up to about a hundred tools (see `nests_too_deeply`).
#: (serde_json stops at 128, orjson at 1,024.)
MAX_JSON_DEPTH: Final = 512

#: What decoding the peer's bytes with msgspec raises for input that is no JSON we can
#: read: `msgspec.DecodeError` (invalid JSON; its subclass `msgspec.ValidationError` for
#: the wrong shape), `UnicodeDecodeError` (msgspec's answer to invalid UTF-8) and
#: `RecursionError` (nesting past what the stack holds; see the module docstring).
DECODE_ERRORS: Final = (msgspec.DecodeError, UnicodeDecodeError, RecursionError)

#: The most bytes a message can have and still surely nest no deeper than
#: `MAX_JSON_DEPTH`: a valid JSON text nested D deep has D openers and D closers (an
#: invalid one fails to decode anyway, and its decoder recurses at most this deep before
#: it does). A hot path compares the length itself before it calls `nests_too_deeply`:
#: one comparison instead of a call.
SHALLOW_SIZE: Final = 2 * MAX_JSON_DEPTH + 1
# Openers closer together than this on average (over the first `_PROBE` of them) make a
# message dense: counting every byte (~0.3 ns a byte and bracket kind) then costs less
# than a memchr walk (~100 ns an opener).
_PROBE: Final = 16
_DENSE_SPACING: Final = 160

# For `_depth`: brackets become steps of +1 and -1 (bytes read as signed), quotes stay,
# everything else goes.
_STEPS: Final = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
_UNSTRUCTURAL: Final = bytes(byte for byte in range(256) if byte not in b'[]{}"')
# Peeling the innermost (empty, once the rest is gone) arrays and objects a few times
# in C first leaves the running sum a fraction of the brackets to add up.
_PEELS: Final = 3


def nests_too_deeply(data: bytes) -> bool:
    """Whether ``data`` opens more than `MAX_JSON_DEPTH` arrays and objects at once.

    Brackets inside strings don't count. Exact for valid JSON; for invalid JSON the
    answer may be either, and either way the message can't be decoded. Linear in
    ``len(data)``, and it never recurses.
    """
    if len(data) <= SHALLOW_SIZE:
        return False
    openers = _sparse_openers(data)
    if openers is None:  # dense
        if _count_bound(data) <= MAX_JSON_DEPTH:
            return False
    elif openers <= MAX_JSON_DEPTH:
        return False
    return _depth(data) > MAX_JSON_DEPTH


def _sparse_openers(data: bytes) -> int | None:
    """How many ``[`` and ``{`` there are (in strings too), up to one past the limit.

    Found one memchr-speed `bytes.find` at a time, so a long text with a few objects
    costs a handful of calls. None once they turn out dense.
    """
    find = data.find
    found = 0
    for opener in (b"{", b"["):
        at = find(opener)
        while at >= 0:
            found += 1
            if found > MAX_JSON_DEPTH:
                return found
            if found == _PROBE and at < _PROBE * _DENSE_SPACING:
                return None
            at = find(opener, at + 1)
    return found


def _count_bound(data: bytes) -> int:
    """An upper bound on the depth of the JSON text ``data``, from byte counts alone.

    No more arrays and objects are open at any point than were opened before it, nor
    than are closed after it (brackets in strings only raise both counts): at most the
    openers in the first half, then at most the closers in the second. A listing, its
    brackets spread evenly, gets about half its openers.
    """
    count = data.count
    middle = len(data) // 2
    opened = count(b"[", 0, middle) + count(b"{", 0, middle)
    return max(opened, count(b"]", middle) + count(b"}", middle))


def _depth(data: bytes) -> int:
    """The most arrays and objects open at once in the JSON text ``data``.

    In C-speed passes but one: escapes are cut out (so that every quote left delimits a
    string), then strings, then the brackets' running sum is taken.
    """
    if b"\\" in data:
        data = _without_escapes(data)
    skeleton = data.translate(_STEPS, _UNSTRUCTURAL)
    quotes = skeleton.count(b'"')
    if quotes:
        # A string with no bracket in it is two adjacent quotes here, and so are the
        # end of one string and the start of the next (``"a":"b"``): quotes that all
        # pair up that way hold no bracket, and can simply go.
        if skeleton.count(b'""') * 2 == quotes:
            skeleton = skeleton.translate(None, b'"')
        else:
            # Dropping those pairs keeps the quotes alternating open, close; then the
            # strings left (the ones holding brackets) are every other piece.
            pieces = skeleton.replace(b'""', b"").split(b'"')
            skeleton = b"".join(pieces[::2])
    peeled = 0
    while peeled < _PEELS and skeleton:
        # Every innermost pair goes at once: the depth drops by exactly one.
        skeleton = skeleton.replace(b"\x01\xff", b"")
        peeled += 1
    return peeled + max(accumulate(memoryview(skeleton).cast("b")), default=0)


def _without_escapes(data: bytes) -> bytes:
    r"""``data`` with the escapes that could fool `_depth` (``\"`` and ``\\``) cut out.

    Escapes occur only in strings, and each backslash that starts one takes the next
    byte with it; `bytes.replace` pairs backslashes from the left as a parser does, so
    once the escaped backslashes are gone every ``\"`` left is an escaped quote. (The
    backslash of any other escape, ``\n`` or ``\u``, is no bracket and no quote: the
    translation in `_depth` drops it.) Two C passes; a loop over each backslash took
    twice as long on escape-heavy listings.
    """
    return data.replace(b"\\\\", b"").replace(b'\\"', b"")
