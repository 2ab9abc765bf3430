"""RFC 6570 URI templates: the RFC's own examples, syntax errors, matching, round trips."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from mcpcore import uritemplate
from mcpcore.uritemplate import (
    MAX_EXPRESSIONS,
    MAX_TEMPLATE_LENGTH,
    MAX_URI_LENGTH,
    MAX_VARSPECS,
    InvalidTemplate,
    UriTemplate,
    is_template,
)

# The variables of RFC 6570 §3.2 (§1.2 uses the same names with the same values). The
# associative array is ordered as the RFC lists it.
RFC_VALUES: dict[str, Any] = {
    "count": ["one", "two", "three"],
    "dom": ["example", "com"],
    "dub": "me/too",
    "hello": "Hello World!",
    "half": "50%",
    "var": "value",
    "who": "fred",
    "base": "http://example.com/home/",
    "path": "/foo/bar",
    "list": ["red", "green", "blue"],
    "keys": {"semi": ";", "dot": ".", "comma": ","},
    "v": "6",
    "x": "1024",
    "y": "768",
    "empty": "",
    "empty_keys": {},
    "undef": None,
}

# §1.2, the examples of each level.
LEVEL_1 = [
    ("{var}", "value"),
    ("{hello}", "Hello%20World%21"),
]
LEVEL_2 = [
    ("{+var}", "value"),
    ("{+hello}", "Hello%20World!"),
    ("{+path}/here", "/foo/bar/here"),
    ("here?ref={+path}", "here?ref=/foo/bar"),
    ("X{#var}", "X#value"),
    ("X{#hello}", "X#Hello%20World!"),
]
LEVEL_3 = [
    ("map?{x,y}", "map?1024,768"),
    ("{x,hello,y}", "1024,Hello%20World%21,768"),
    ("{+x,hello,y}", "1024,Hello%20World!,768"),
    ("{+path,x}/here", "/foo/bar,1024/here"),
    ("{#x,hello,y}", "#1024,Hello%20World!,768"),
    ("{#path,x}/here", "#/foo/bar,1024/here"),
    ("X{.var}", "X.value"),
    ("X{.x,y}", "X.1024.768"),
    ("{/var}", "/value"),
    ("{/var,x}/here", "/value/1024/here"),
    ("{;x,y}", ";x=1024;y=768"),
    ("{;x,y,empty}", ";x=1024;y=768;empty"),
    ("{?x,y}", "?x=1024&y=768"),
    ("{?x,y,empty}", "?x=1024&y=768&empty="),
    ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
    ("{&x,y,empty}", "&x=1024&y=768&empty="),
]
LEVEL_4 = [
    ("{var:3}", "val"),
    ("{var:30}", "value"),
    ("{list}", "red,green,blue"),
    ("{list*}", "red,green,blue"),
    ("{keys}", "semi,%3B,dot,.,comma,%2C"),
    ("{keys*}", "semi=%3B,dot=.,comma=%2C"),
    ("{+path:6}/here", "/foo/b/here"),
    ("{+list}", "red,green,blue"),
    ("{+list*}", "red,green,blue"),
    ("{+keys}", "semi,;,dot,.,comma,,"),
    ("{+keys*}", "semi=;,dot=.,comma=,"),
    ("{#path:6}/here", "#/foo/b/here"),
    ("{#list}", "#red,green,blue"),
    ("{#list*}", "#red,green,blue"),
    ("{#keys}", "#semi,;,dot,.,comma,,"),
    ("{#keys*}", "#semi=;,dot=.,comma=,"),
    ("X{.var:3}", "X.val"),
    ("X{.list}", "X.red,green,blue"),
    ("X{.list*}", "X.red.green.blue"),
    ("X{.keys}", "X.semi,%3B,dot,.,comma,%2C"),
    ("X{.keys*}", "X.semi=%3B.dot=..comma=%2C"),
    ("{/var:1,var}", "/v/value"),
    ("{/list}", "/red,green,blue"),
    ("{/list*}", "/red/green/blue"),
    ("{/list*,path:4}", "/red/green/blue/%2Ffoo"),
    ("{/keys}", "/semi,%3B,dot,.,comma,%2C"),
    ("{/keys*}", "/semi=%3B/dot=./comma=%2C"),
    ("{;hello:5}", ";hello=Hello"),
    ("{;list}", ";list=red,green,blue"),
    ("{;list*}", ";list=red;list=green;list=blue"),
    ("{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"),
    ("{;keys*}", ";semi=%3B;dot=.;comma=%2C"),
    ("{?var:3}", "?var=val"),
    ("{?list}", "?list=red,green,blue"),
    ("{?list*}", "?list=red&list=green&list=blue"),
    ("{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"),
    ("{?keys*}", "?semi=%3B&dot=.&comma=%2C"),
    ("{&var:3}", "&var=val"),
    ("{&list}", "&list=red,green,blue"),
    ("{&list*}", "&list=red&list=green&list=blue"),
    ("{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"),
    ("{&keys*}", "&semi=%3B&dot=.&comma=%2C"),
]
# §3.2.1 - §3.2.9, the examples of each operator.
SECTION_3_2_1 = [
    ("{count}", "one,two,three"),
    ("{count*}", "one,two,three"),
    ("{/count}", "/one,two,three"),
    ("{/count*}", "/one/two/three"),
    ("{;count}", ";count=one,two,three"),
    ("{;count*}", ";count=one;count=two;count=three"),
    ("{?count}", "?count=one,two,three"),
    ("{?count*}", "?count=one&count=two&count=three"),
    ("{&count*}", "&count=one&count=two&count=three"),
]
SECTION_3_2_2 = [
    ("{var}", "value"),
    ("{hello}", "Hello%20World%21"),
    ("{half}", "50%25"),
    ("O{empty}X", "OX"),
    ("O{undef}X", "OX"),
    ("{x,y}", "1024,768"),
    ("{x,hello,y}", "1024,Hello%20World%21,768"),
    ("?{x,empty}", "?1024,"),
    ("?{x,undef}", "?1024"),
    ("?{undef,y}", "?768"),
    ("{var:3}", "val"),
    ("{var:30}", "value"),
    ("{list}", "red,green,blue"),
    ("{list*}", "red,green,blue"),
    ("{keys}", "semi,%3B,dot,.,comma,%2C"),
    ("{keys*}", "semi=%3B,dot=.,comma=%2C"),
]
SECTION_3_2_3 = [
    ("{+var}", "value"),
    ("{+hello}", "Hello%20World!"),
    ("{+half}", "50%25"),
    ("{base}index", "http%3A%2F%2Fexample.com%2Fhome%2Findex"),
    ("{+base}index", "http://example.com/home/index"),
    ("O{+empty}X", "OX"),
    ("O{+undef}X", "OX"),
    ("{+path}/here", "/foo/bar/here"),
    ("here?ref={+path}", "here?ref=/foo/bar"),
    ("up{+path}{var}/here", "up/foo/barvalue/here"),
    ("{+x,hello,y}", "1024,Hello%20World!,768"),
    ("{+path,x}/here", "/foo/bar,1024/here"),
    ("{+path:6}/here", "/foo/b/here"),
    ("{+list}", "red,green,blue"),
    ("{+list*}", "red,green,blue"),
    ("{+keys}", "semi,;,dot,.,comma,,"),
    ("{+keys*}", "semi=;,dot=.,comma=,"),
]
SECTION_3_2_4 = [
    ("{#var}", "#value"),
    ("{#hello}", "#Hello%20World!"),
    ("{#half}", "#50%25"),
    ("foo{#empty}", "foo#"),
    ("foo{#undef}", "foo"),
    ("{#x,hello,y}", "#1024,Hello%20World!,768"),
    ("{#path,x}/here", "#/foo/bar,1024/here"),
    ("{#path:6}/here", "#/foo/b/here"),
    ("{#list}", "#red,green,blue"),
    ("{#list*}", "#red,green,blue"),
    ("{#keys}", "#semi,;,dot,.,comma,,"),
    ("{#keys*}", "#semi=;,dot=.,comma=,"),
]
SECTION_3_2_5 = [
    ("{.who}", ".fred"),
    ("{.who,who}", ".fred.fred"),
    ("{.half,who}", ".50%25.fred"),
    ("www{.dom*}", "www.example.com"),
    ("X{.var}", "X.value"),
    ("X{.empty}", "X."),
    ("X{.undef}", "X"),
    ("X{.var:3}", "X.val"),
    ("X{.list}", "X.red,green,blue"),
    ("X{.list*}", "X.red.green.blue"),
    ("X{.keys}", "X.semi,%3B,dot,.,comma,%2C"),
    ("X{.keys*}", "X.semi=%3B.dot=..comma=%2C"),
    ("X{.empty_keys}", "X"),
    ("X{.empty_keys*}", "X"),
]
SECTION_3_2_6 = [
    ("{/who}", "/fred"),
    ("{/who,who}", "/fred/fred"),
    ("{/half,who}", "/50%25/fred"),
    ("{/who,dub}", "/fred/me%2Ftoo"),
    ("{/var}", "/value"),
    ("{/var,empty}", "/value/"),
    ("{/var,undef}", "/value"),
    ("{/var,x}/here", "/value/1024/here"),
    ("{/var:1,var}", "/v/value"),
    ("{/list}", "/red,green,blue"),
    ("{/list*}", "/red/green/blue"),
    ("{/list*,path:4}", "/red/green/blue/%2Ffoo"),
    ("{/keys}", "/semi,%3B,dot,.,comma,%2C"),
    ("{/keys*}", "/semi=%3B/dot=./comma=%2C"),
]
SECTION_3_2_7 = [
    ("{;who}", ";who=fred"),
    ("{;half}", ";half=50%25"),
    ("{;empty}", ";empty"),
    ("{;v,empty,who}", ";v=6;empty;who=fred"),
    ("{;v,bar,who}", ";v=6;who=fred"),
    ("{;x,y}", ";x=1024;y=768"),
    ("{;x,y,empty}", ";x=1024;y=768;empty"),
    ("{;x,y,undef}", ";x=1024;y=768"),
    ("{;hello:5}", ";hello=Hello"),
    ("{;list}", ";list=red,green,blue"),
    ("{;list*}", ";list=red;list=green;list=blue"),
    ("{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"),
    ("{;keys*}", ";semi=%3B;dot=.;comma=%2C"),
]
SECTION_3_2_8 = [
    ("{?who}", "?who=fred"),
    ("{?half}", "?half=50%25"),
    ("{?x,y}", "?x=1024&y=768"),
    ("{?x,y,empty}", "?x=1024&y=768&empty="),
    ("{?x,y,undef}", "?x=1024&y=768"),
    ("{?var:3}", "?var=val"),
    ("{?list}", "?list=red,green,blue"),
    ("{?list*}", "?list=red&list=green&list=blue"),
    ("{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"),
    ("{?keys*}", "?semi=%3B&dot=.&comma=%2C"),
]
SECTION_3_2_9 = [
    ("{&who}", "&who=fred"),
    ("{&half}", "&half=50%25"),
    ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
    ("{&x,y,empty}", "&x=1024&y=768&empty="),
    ("{&x,y,undef}", "&x=1024&y=768"),
    ("{&var:3}", "&var=val"),
    ("{&list}", "&list=red,green,blue"),
    ("{&list*}", "&list=red&list=green&list=blue"),
    ("{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"),
    ("{&keys*}", "&semi=%3B&dot=.&comma=%2C"),
]
RFC_EXAMPLES = {
    "1.2 level 1": LEVEL_1,
    "1.2 level 2": LEVEL_2,
    "1.2 level 3": LEVEL_3,
    "1.2 level 4": LEVEL_4,
    "3.2.1": SECTION_3_2_1,
    "3.2.2": SECTION_3_2_2,
    "3.2.3": SECTION_3_2_3,
    "3.2.4": SECTION_3_2_4,
    "3.2.5": SECTION_3_2_5,
    "3.2.6": SECTION_3_2_6,
    "3.2.7": SECTION_3_2_7,
    "3.2.8": SECTION_3_2_8,
    "3.2.9": SECTION_3_2_9,
}


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        pytest.param(template, expected, id=f"{section} {template}")
        for section, table in RFC_EXAMPLES.items()
        for template, expected in table
    ],
)
def test_rfc_6570_examples_expand_as_the_rfc_says(template: str, expected: str) -> None:
    assert UriTemplate(template).expand(RFC_VALUES) == expected


# The RFC's examples read back: what `match` makes of each expansion, including where the
# URI can't tell the original values apart (documented on UriTemplate).
RFC_MATCHES: list[tuple[str, dict[str, Any] | None]] = [
    ("{var}", {"var": "value"}),
    ("{hello}", {"hello": "Hello World!"}),
    ("{half}", {"half": "50%"}),
    ("O{empty}X", None),  # "" expands to nothing, and {empty} needs a value
    ("{x,y}", {"x": "1024", "y": "768"}),
    ("{x,hello,y}", {"x": "1024", "hello": "Hello World!", "y": "768"}),
    ("?{x,empty}", {"x": "1024", "empty": ""}),
    ("?{undef,y}", {"undef": "768"}),  # values fill {a,b} from the left
    ("{var:3}", {"var": "val"}),
    ("{list*}", {"list": ["red", "green", "blue"]}),
    ("{keys*}", {"keys": {"semi": ";", "dot": ".", "comma": ","}}),
    ("{list}", None),  # a non-exploded value is a string, and "," is not in one
    ("{+hello}", {"hello": "Hello World!"}),
    ("{base}index", {"base": "http://example.com/home/"}),
    ("{+base}index", {"base": "http://example.com/home/"}),
    ("{+path}/here", {"path": "/foo/bar"}),
    ("here?ref={+path}", {"path": "/foo/bar"}),
    # The reserved value takes all it can, leaving {var} the one character it needs.
    ("up{+path}{var}/here", {"path": "/foo/barvalu", "var": "e"}),
    ("{+x,hello,y}", {"x": "1024", "hello": "Hello World!", "y": "768"}),
    ("{+path,x}/here", {"path": "/foo/bar", "x": "1024"}),
    ("{+path:6}/here", {"path": "/foo/b"}),
    ("{+list}", {"list": "red,green,blue"}),
    ("{+keys*}", {"keys": ["semi=;", "dot=.", "comma=", ""]}),  # "," is in the values
    ("{#hello}", {"hello": "Hello World!"}),
    ("foo{#empty}", {"empty": ""}),
    ("foo{#undef}", {}),
    ("{#path,x}/here", {"path": "/foo/bar", "x": "1024"}),
    ("{#list*}", {"list": ["red", "green", "blue"]}),
    ("{.who,who}", {"who": "fred"}),
    ("{.half,who}", {"half": "50%", "who": "fred"}),
    ("www{.dom*}", {"dom": ["example", "com"]}),
    ("X{.empty}", {"empty": ""}),
    ("X{.x,y}", {"x": "1024", "y": "768"}),
    ("X{.keys*}", None),  # ".dot=." : "." separates the members and is in a value
    ("{/who,dub}", {"who": "fred", "dub": "me/too"}),
    ("{/var,empty}", {"var": "value", "empty": ""}),
    ("{/var:1,var}", {"var": "value"}),
    ("{/list*}", {"list": ["red", "green", "blue"]}),
    ("{/list*,path:4}", {"list": ["red", "green", "blue", "/foo"]}),  # explode is greedy
    ("{/keys*}", {"keys": {"semi": ";", "dot": ".", "comma": ","}}),
    ("{;v,empty,who}", {"v": "6", "empty": "", "who": "fred"}),
    ("{;v,bar,who}", {"v": "6", "who": "fred"}),
    ("{;hello:5}", {"hello": "Hello"}),
    ("{;list*}", {"list": ["red", "green", "blue"]}),
    ("{;keys*}", {"keys": {"semi": ";", "dot": ".", "comma": ","}}),
    ("{?x,y,empty}", {"x": "1024", "y": "768", "empty": ""}),
    ("{?x,y,undef}", {"x": "1024", "y": "768"}),
    ("{?list*}", {"list": ["red", "green", "blue"]}),
    ("{?keys*}", {"keys": {"semi": ";", "dot": ".", "comma": ","}}),
    ("?fixed=yes{&x}", {"x": "1024"}),
    ("{&x,y,empty}", {"x": "1024", "y": "768", "empty": ""}),
    ("{&list*}", {"list": ["red", "green", "blue"]}),
    ("{&keys*}", {"keys": {"semi": ";", "dot": ".", "comma": ","}}),
]


@pytest.mark.parametrize(("template", "expected"), RFC_MATCHES, ids=[t for t, _ in RFC_MATCHES])
def test_rfc_examples_match_back(template: str, expected: dict[str, Any] | None) -> None:
    parsed = UriTemplate(template)
    assert parsed.match(parsed.expand(RFC_VALUES)) == expected


# --- Syntax -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("template", "position", "message"),
    [
        ("{var", 0, "not closed"),
        ("x/{a{b}", 2, "not closed"),
        ("a}b", 1, "unmatched '}'"),
        ("{}", 1, "expected a variable name"),
        ("{=var}", 1, "reserved"),
        ("{|var}", 1, "reserved"),
        ("{$var}", 1, "not an operator or a variable name"),
        ("{a-b}", 2, "expected ',' or '}'"),
        ("{a.}", 2, "expected ',' or '}'"),
        ("{a..b}", 2, "expected ',' or '}'"),
        ("{a,}", 3, "expected a variable name"),
        ("{,a}", 1, "reserved"),
        ("{a b}", 2, "expected ',' or '}'"),
        ("{var:10000}", 5, "from 1 to 9999"),
        ("{var:0}", 5, "from 1 to 9999"),
        ("{var:012}", 5, "from 1 to 9999"),
        ("{var:}", 5, "from 1 to 9999"),
        ("{var:3*}", 6, "both a prefix"),
        ("{var*:3}", 5, "expected ',' or '}'"),
        ("a b{x}", 1, "' '"),
        ("a\n{x}", 1, "'\\n'"),
        ("{x}'", 3, '"\'"'),
        ("a<b", 1, "'<'"),
        ("100%", 3, "'%'"),
        ("%zz{x}", 0, "'%'"),
    ],
)
def test_syntax_errors_say_where(template: str, position: int, message: str) -> None:
    with pytest.raises(InvalidTemplate) as raised:
        UriTemplate(template)
    assert raised.value.position == position
    assert raised.value.template == template
    assert message in str(raised.value)
    assert f"at position {position}" in str(raised.value)
    assert isinstance(raised.value, ValueError)


def test_limits_on_size() -> None:
    UriTemplate("a" * MAX_TEMPLATE_LENGTH)
    with pytest.raises(InvalidTemplate, match="longer than") as raised:
        UriTemplate("a" * (MAX_TEMPLATE_LENGTH + 1))
    assert raised.value.position is None
    UriTemplate("{a}" * MAX_EXPRESSIONS)
    with pytest.raises(InvalidTemplate, match="expressions"):
        UriTemplate("{a}" * (MAX_EXPRESSIONS + 1))
    many = ",".join(f"v{i}" for i in range(MAX_VARSPECS))
    UriTemplate("{" + many + "}")
    with pytest.raises(InvalidTemplate, match="variables"):
        UriTemplate("{" + many + ",one_more}")
    UriTemplate("{var:9999}")


def test_what_parses() -> None:
    assert UriTemplate("").expand({}) == ""
    assert UriTemplate("no/expressions").variables == ()
    parsed = UriTemplate("{/b,a}{?a,c*}{d.e_f,%41:3}")
    assert parsed.variables == ("b", "a", "c", "d.e_f", "%41")
    # §2.1 literals: any URI character, pct-encoded octets, and non-ASCII characters,
    # which expansion pct-encodes as UTF-8.
    parsed = UriTemplate("café/%7e/[x]!{x}")
    assert parsed.expand({"x": "1"}) == "caf%C3%A9/%7e/[x]!1"
    assert parsed.match("caf%c3%a9/%7E/[x]!1") == {"x": "1"}


def test_is_template() -> None:
    assert is_template("test://template/{id}/data")
    assert is_template("{?q}")
    assert not is_template("test://static/resource")
    assert not is_template("test://broken/{id")
    assert not is_template("")


def test_identity_is_the_text() -> None:
    a, b = UriTemplate("x/{y}"), UriTemplate("x/{y}")
    assert a == b
    assert hash(a) == hash(b)
    assert a != UriTemplate("x/{z}")
    assert a != "x/{y}"
    assert {a: 1}[b] == 1
    assert str(a) == "x/{y}"
    assert repr(a) == "UriTemplate('x/{y}')"
    assert a.template == "x/{y}"


# --- Expansion --------------------------------------------------------------------------


def test_expansion_of_scalars() -> None:
    parsed = UriTemplate("{a}/{b}/{c}/{d}/{e}")
    assert parsed.expand({"a": 42, "b": 1.5, "c": True, "d": False, "e": -7}) == (
        "42/1.5/true/false/-7"
    )
    assert UriTemplate("{/t*}").expand({"t": ("x", 2, None)}) == "/x/2"
    assert UriTemplate("{?m*}").expand({"m": {"a": 1, "b": None}}) == "?a=1"
    assert UriTemplate("{?m*}").expand({"m": {"b": None}}) == ""  # all undefined: §2.3
    assert UriTemplate("{x}").expand({}) == ""
    assert UriTemplate("{x:2}").expand({"x": "é€😀"}) == "%C3%A9%E2%82%AC"  # characters


def test_expansion_rejects_what_it_cant_write() -> None:
    with pytest.raises(TypeError, match="'x'"):
        UriTemplate("{x}").expand({"x": b"bytes"})
    with pytest.raises(TypeError):
        UriTemplate("{x}").expand({"x": [["nested"]]})
    with pytest.raises(ValueError, match="prefix"):
        UriTemplate("{x:2}").expand({"x": ["a", "b"]})
    with pytest.raises(ValueError, match="encode"):
        UriTemplate("{x}").expand({"x": "\ud800"})


def test_reserved_expansion_keeps_pct_encoded_triplets() -> None:
    # §3.2.1: U+R allows pct-encoded triplets; a "%" that starts none is encoded.
    assert UriTemplate("{+x}").expand({"x": "a%20b%zz%4"}) == "a%20b%25zz%254"
    assert UriTemplate("{x}").expand({"x": "a%20b"}) == "a%2520b"


# --- Matching ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("template", "uri", "expected"),
    [
        # The MCP cases.
        ("test://template/{id}/data", "test://template/123/data", {"id": "123"}),
        ("test://template/{id}/data", "test://template/1/2/data", None),
        ("test://template/{id}/data", "test://template//data", None),
        ("test://template/{id}/data", "test://other/123/data", None),
        ("file:///{+path}", "file:///a/b%20c.txt", {"path": "a/b c.txt"}),
        ("file:///{+path}", "file:///", None),
        ("file:///{+path}", "file:///a?b#c", {"path": "a?b#c"}),
        # Simple values are pct-decoded, and stop at anything reserved.
        ("x/{v}", "x/a%20b%2Fc%C3%A9", {"v": "a b/cé"}),
        ("x/{v}", "x/a%c3%a9", {"v": "aé"}),
        ("x/{v}", "x/a?b", None),
        ("x/{v}", "x/a,b", None),
        ("x/{v}", "x/%FF", None),  # not UTF-8
        ("x/{+v}", "x/%C3", None),  # a truncated UTF-8 sequence
        ("x/{+v}", "x/a%2Fb", {"v": "a/b"}),
        # Decoded values can be anything: the caller must not trust them.
        ("x/{v}", "x/%2E%2E", {"v": ".."}),
        ("file:///{+p}", "file:///a/../%00", {"p": "a/../\x00"}),
        # Several variables in one segment.
        ("{x},{y}", "1,2", {"x": "1", "y": "2"}),
        ("pt/{x},{y}/z", "pt/10,-20/z", {"x": "10", "y": "-20"}),
        ("{x}.{y}", "a.b.c", {"x": "a.b", "y": "c"}),
        ("{a,b}", "1", {"a": "1"}),  # values fill the variables from the left
        # ... unless a prefix can't take the value: then the variable before is absent.
        ("{a,b:2,c}", "0,000", {"a": "0", "c": "000"}),
        ("{a:2,b}", "000", {"b": "000"}),
        ("{#a:1,b}", "#zz", {"b": "zz"}),
        ("{a:2}", "000", None),
        # (Found by Hypothesis: v3 absent; v4, a prefix, can't take "000".)
        (
            "{v0:2}{v1}{v2:2}{v3,v4:2,v5}",
            "0000,000",
            {"v0": "0", "v1": "0", "v2": "0", "v3": "0", "v5": "000"},
        ),
        ("{a,b}", "", None),
        ("{+x,y}", "a,b,c", {"x": "a", "y": "b,c"}),  # all but the last stop at ","...
        ("{+x,y}", ",,0", {"x": ",,0"}),  # ...if they can
        ("{#x,y}", "#a/b,c", {"x": "a/b", "y": "c"}),
        ("{a}{b}", "x%C3%A9", {"a": "x", "b": "é"}),  # never inside a UTF-8 sequence
        ("{a}{b}", "%C3%A9", None),
        ("{+dir}/{name}.{ext}", "a/b.c/d.tar.gz", {"dir": "a/b.c", "name": "d.tar", "ext": "gz"}),
        # Labels and path segments: each optional, "" allowed.
        ("host{.d}", "host.example", {"d": "example"}),
        ("host{.d}", "host", {}),
        ("host{.d}", "host.", {"d": ""}),
        ("api{/v,r}", "api/v1/users", {"v": "v1", "r": "users"}),
        ("api{/v,r}", "api/v1", {"v": "v1"}),
        ("api{/v,r}", "api//", {"v": "", "r": ""}),
        ("api{/v,r}", "api/a/b/c", None),
        # Path-style parameters.
        ("m{;x,y}", "m;x=1;y=2", {"x": "1", "y": "2"}),
        ("m{;x,y}", "m;y=2", {"y": "2"}),
        ("m{;x,y}", "m;x;y", {"x": "", "y": ""}),
        ("m{;x}", "m;x=", None),
        ("m{;x}", "m;z=1", None),
        # Queries: names in template order, each optional.
        ("q{?a,b}", "q?a=1", {"a": "1"}),
        ("q{?a,b}", "q?b=2", {"b": "2"}),
        ("q{?a,b}", "q?a=1&b=2", {"a": "1", "b": "2"}),
        ("q{?a,b}", "q", {}),
        ("q{?a,b}", "q?a=", {"a": ""}),
        ("q{?a,b}", "q?b=2&a=1", None),
        ("q{?a,b}", "q?", None),
        ("q{?a,b}", "q?c=3", None),
        ("q{?a,b}", "q?a=1&", None),
        ("q{?a}{&b}", "q?a=1&b=2", {"a": "1", "b": "2"}),
        ("q?x=1{&b}", "q?x=1&b=%26", {"b": "&"}),
        ("/search{?q,lang}", "/search?q=caf%C3%A9&lang=fr", {"q": "café", "lang": "fr"}),
        # Fragments.
        ("doc{#section}", "doc#a/b?c", {"section": "a/b?c"}),
        ("doc{#section}", "doc#", {"section": ""}),
        ("doc{#section}", "doc", {}),
        # Explode.
        ("{/path*}", "/a/b/c", {"path": ["a", "b", "c"]}),
        ("{/path*}", "/a%2Fb//c", {"path": ["a/b", "", "c"]}),
        ("{/path*}", "", {}),
        ("files{/path*}/raw", "files/a/b/raw", {"path": ["a", "b"]}),
        ("{?list*}", "?list=a&list=b", {"list": ["a", "b"]}),
        ("{?list*}", "?list=a&list=", {"list": ["a", ""]}),
        ("{?map*}", "?x=1&y=2", {"map": {"x": "1", "y": "2"}}),
        ("{?map*}", "?x=1&x=2", None),  # a mapping has each key once
        ("{?map*}", "?x", None),
        ("{&map*}", "&x=1&y=2", {"map": {"x": "1", "y": "2"}}),
        ("{;list*}", ";list=a;list;list=c", {"list": ["a", "", "c"]}),
        ("{list*}", "a,b", {"list": ["a", "b"]}),
        ("{list*}", "a=1,b=2", {"list": {"a": "1", "b": "2"}}),
        ("{list*}", "a=1,b", None),  # "=" is encoded in a list member
        ("{list*}", "a=1=2", None),  # and in a mapping's value
        ("{+list*}", "a=1=2", {"list": {"a": "1=2"}}),  # but not with "+"
        ("{+list*}", "a=1,b", {"list": ["a=1", "b"]}),  # but not with "+"
        ("x{.list*}", "x.a.b", {"list": ["a", "b"]}),
        # Prefixes: at most n characters, after decoding.
        ("{v:3}", "abc", {"v": "abc"}),
        ("{v:3}", "abcd", None),
        ("{v:3}", "%C3%A9%C3%A9%C3%A9", {"v": "ééé"}),
        ("{v:3}{w}", "abcdef", {"v": "abc", "w": "def"}),
        ("{v:2}{w:2}", "abcd", {"v": "ab", "w": "cd"}),
        ("{?v:2}", "?v=abc", None),
        # A variable used twice must agree with itself.
        ("{x}/{x}", "a/a", {"x": "a"}),
        ("{x}/{x}", "a/b", None),
        ("{/v:1,v}", "/v/value", {"v": "value"}),
        ("{/v:1,v}", "/w/value", None),
        ("{/v:1,v}", "/v", None),  # expansion writes both or neither
        # Literal text: as expansion writes it; hex digits in either case.
        ("a%2Fb/{x}", "a%2fb/1", {"x": "1"}),
        ("a%2Fb/{x}", "a/b/1", None),
    ],
)
def test_matching(template: str, uri: str, expected: dict[str, Any] | None) -> None:
    assert UriTemplate(template).match(uri) == expected


@pytest.mark.parametrize(
    "uri",
    [
        "test://t/a b",
        "test://t/a\tb",
        "test://t/a\x00",
        "test://t/é",
        "test://t/a%zz",
        "test://t/a%4",
        "test://t/a%",
        "test://t/<a>",
        "test://t/a{b}",
        "test://t/a|b",
        "test://t/a\\b",
        'test://t/"a"',
    ],
)
def test_uris_with_characters_a_uri_cant_contain_never_match(uri: str) -> None:
    assert UriTemplate("test://t/{+x}").match(uri) is None


def test_uris_longer_than_the_limit_never_match() -> None:
    parsed = UriTemplate("x/{+rest}")
    at_limit = "x/" + "a" * (MAX_URI_LENGTH - 2)
    assert parsed.match(at_limit) == {"rest": "a" * (MAX_URI_LENGTH - 2)}
    assert parsed.match(at_limit + "a") is None


# Hostile URIs against templates a backtracking regex would need O(n**k) steps for: the
# search stays linear, so the step budget is not what answers them.
@pytest.mark.parametrize(
    ("template", "uri"),
    [
        ("{a}.{b}.{c}", "." * (MAX_URI_LENGTH - 1) + "!"),
        ("{a}{b}{c}{d}x", "a" * MAX_URI_LENGTH),
        ("{+a}/{+b}/{+c}/x", "/" * MAX_URI_LENGTH),
        ("file:///{+dir}/{name}.{ext}", "file:///" + "/" * 4000 + "." * 4000 + "!"),
        ("{a:4000}.{b:4000}.{c}", "." * (MAX_URI_LENGTH - 1) + "!"),
        ("{a:9999}{b:9999}x", "a" * MAX_URI_LENGTH),
        ("{?a*}{&b*}{&c*}x", "?a=b" + "&a=b" * (MAX_URI_LENGTH // 4 - 1)),
        ("{x}{y}", "%41%42" * (MAX_URI_LENGTH // 6) + "/"),
    ],
)
def test_matching_takes_linear_time_on_hostile_uris(template: str, uri: str) -> None:
    parsed = UriTemplate(template)
    # The search itself, which raises rather than answer None when it runs out of steps.
    search = uritemplate._Search(uri)
    assert search.run(parsed._program, 2 * len(parsed._captures)) is None
    assert parsed.match(uri) is None


def test_the_step_budget_is_a_backstop(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed = UriTemplate("{a}.{b}.{c}")
    assert parsed.match("1.2.3") == {"a": "1", "b": "2", "c": "3"}
    monkeypatch.setattr(uritemplate, "MAX_MATCH_STEPS", 5)
    assert parsed.match("1.2.3") is None


# --- Properties -------------------------------------------------------------------------

# Characters a value may hold: every class the encoder treats differently (unreserved,
# reserved, "%", characters a URI can't hold, non-ASCII of 2, 3 and 4 UTF-8 octets),
# plus anything else Unicode has, bar surrogates (UTF-8 can't encode them).
MIXED = "aZ09-._~:/?#[]@!$&'()*+,;= %\"<>\\^`{|}\x00\n\x7fé€😀"
values = st.text(
    alphabet=st.one_of(st.sampled_from(MIXED), st.characters(codec="utf-8")),
    max_size=8,
)
# Literal text: URI characters, non-ASCII (expanded pct-encoded), and pct-encoded octets.
literal_tokens = st.sampled_from(["a", "Z", "0", "-", ".", "_", "~", "/", ":", "@", "é", "%2F"])
# A literal after an expression starts with a reserved character that no expansion of a
# value can contain unencoded, so it ends the value unambiguously. "=" is left out:
# ``{;x}=`` can't tell x="" followed by "=" from the start of ";x=...".
DELIMITERS = "/!:,@$()*+;[]?#&"
TRIPLET = re.compile("%[0-9A-Fa-f]{2}")


def literal(first: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    tail = st.lists(literal_tokens, max_size=4)
    return st.builds(lambda head, rest: head + "".join(rest), first, tail)


@st.composite
def unambiguous_cases(draw: st.DrawFn) -> tuple[str, dict[str, str], dict[str, str]]:
    """A template with one variable per expression, values, and what match must return.

    Excluded, because the URI can't tell (see UriTemplate): an empty value for {x} or
    {+x} (it expands to nothing); a "+" or "#" expression anywhere but last (its value
    can contain any delimiter); two expressions without a delimiter between them; and a
    "+"/"#" value containing a pct-encoded triplet (expansion copies it, match decodes).
    """
    count = draw(st.integers(1, 4))
    operators = [draw(st.sampled_from(["", ".", "/", ";", "?", "&"])) for _ in range(count)]
    if draw(st.booleans()):
        operators[-1] = draw(st.sampled_from(["+", "#"]))
    parts = [draw(literal(st.sampled_from(["", "x", "/", "é", "%41"])))]
    given_values: dict[str, str] = {}
    expected: dict[str, str] = {}
    for index, operator in enumerate(operators):
        name = f"v{index}"
        prefix = draw(st.none() | st.integers(1, 5))
        parts.append("{" + operator + name + (f":{prefix}" if prefix else "") + "}")
        value = draw(values)
        written = value[:prefix] if prefix else value
        assume(written or operator not in ("", "+"))
        assume(operator not in ("+", "#") or not TRIPLET.search(written))
        given_values[name] = value
        expected[name] = written
        if operator not in ("+", "#"):
            follow = literal(st.sampled_from(DELIMITERS))
            parts.append(draw(follow) if index < count - 1 else draw(st.just("") | follow))
    return "".join(parts), given_values, expected


@settings(max_examples=400, deadline=None)
@given(unambiguous_cases())
def test_match_inverts_expand(case: tuple[str, dict[str, str], dict[str, str]]) -> None:
    template, given_values, expected = case
    parsed = UriTemplate(template)
    uri = parsed.expand(given_values)
    assert parsed.match(uri) == expected, uri


RESERVED_OR_PERCENT = re.compile("%(21|23|24|25|26|27|28|29|2A|2B|2C|2F|3A|3B|3D|3F|40|5B|5D)")


def reserved_decoded(uri: str) -> str:
    return RESERVED_OR_PERCENT.sub(lambda found: chr(int(found[1], 16)), uri)


no_triplets = values.filter(lambda v: not TRIPLET.search(v))
member_text = st.text(alphabet="xyé%/=,.;&", max_size=4)  # no hex digits: no triplets
composite = st.one_of(
    no_triplets,
    st.lists(member_text, max_size=3),
    st.dictionaries(member_text, member_text, max_size=3),
    st.none(),
)


@st.composite
def any_template(draw: st.DrawFn) -> tuple[str, set[str], list[list[str]]]:
    """Any template (several variables per expression, modifiers, adjacent expressions),
    the names with a prefix modifier, and the names of each "" or "+" expression."""
    parts = []
    prefixed = set()
    needs_a_value = []
    names = iter(f"v{i}" for i in range(100))
    for _ in range(draw(st.integers(1, 4))):
        parts.append(draw(literal(st.sampled_from(["", "a", "/", ".", ",", ";", "="]))))
        specs = []
        for _ in range(draw(st.integers(1, 3))):
            name = next(names)
            modifier = draw(st.sampled_from(["", "", "*", ":2"]))
            if modifier == ":2":
                prefixed.add(name)
            specs.append(name + modifier)
        operator = draw(st.sampled_from(["", "+", "#", ".", "/", ";", "?", "&"]))
        parts.append("{" + operator + ",".join(specs) + "}")
        if operator in ("", "+"):
            needs_a_value.append([spec.partition(":")[0].rstrip("*") for spec in specs])
    return "".join(parts), prefixed, needs_a_value


@settings(max_examples=500, deadline=None)
@given(any_template(), st.data())
def test_a_match_always_expands_back_to_the_uri(
    case: tuple[str, set[str], list[list[str]]], data: st.DataObject
) -> None:
    # Whatever the template (ambiguous ones too): when match finds values, they are
    # values the template expands to that very URI. ("+" values holding pct-encoded
    # triplets are left out: expansion copies them, match decodes them.)
    template, prefixed, needs_a_value = case
    parsed = UriTemplate(template)
    given_values = {
        name: data.draw(no_triplets if name in prefixed else composite) for name in parsed.variables
    }
    uri = parsed.expand(given_values)
    found = parsed.match(uri)
    if found is not None:
        again = parsed.expand(found)
        if "+" in template or "#" in template:
            # A "+" or "#" value is decoded whole, so what it covers comes back with "%2F"
            # written "/" (and "%25" written "%", which "+" then copies).
            again, uri = reserved_decoded(again), reserved_decoded(uri)
        assert again == uri
    defined = [value for value in given_values.values() if value is not None]
    if (
        "*" not in template
        and all(isinstance(value, str) and value for value in defined)
        and all(any(given_values[name] for name in names) for names in needs_a_value)
    ):
        # Non-empty strings, and a value for every {x,...} and {+x,...} (which match
        # nothing without one): the split they were written with exists, so one is found.
        assert found is not None, uri
