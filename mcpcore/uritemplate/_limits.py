"""The limits on URI templates, and on the URIs matched against them.

A template can arrive from a peer (``resources/templates/list``) and a URI always does
(``resources/read``), so both are bounded before any work is done on them, and a match is
bounded by a step budget. The limits are one module because they bound each other's cost
(a match is linear in the URI times the program size, which the template limits bound)
and because parsing, matching and the public API all read them; `mcpcore.uritemplate`
re-exports them.
"""

from __future__ import annotations

from typing import Final

#: The longest template accepted, in characters. Real templates are well under 200; a
#: template can arrive from a peer (``resources/templates/list``), so its size is bounded
#: before any work is done on it.
MAX_TEMPLATE_LENGTH: Final = 2048
#: The most ``{...}`` expressions in one template: bounds the match program's size, and so
#: the cost of every match (which is linear in the URI times the program size).
MAX_EXPRESSIONS: Final = 64
#: The most variable specifications (``{a,b}`` has two) in one template, for the same reason.
MAX_VARSPECS: Final = 128
#: The largest prefix modifier, ``{var:9999}``: RFC 6570 §2.4.1, "a positive integer < 10000".
MAX_PREFIX_LENGTH: Final = 9999
#: The longest URI `UriTemplate.match` considers, in characters; longer ones never match.
#: The same bound as the server's own check on resource URIs.
MAX_URI_LENGTH: Final = 8192
#: The most steps one match may take before it gives up and reports no match. The search
#: visits each (template part, URI position) pair at most once, so a template of typical
#: size against a URI of `MAX_URI_LENGTH` stays far below this, however hostile the URI;
#: the budget is the backstop that makes the bound hold for any template.
MAX_MATCH_STEPS: Final = 250_000
