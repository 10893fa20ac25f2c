"""Presentational text written into Markdown so that it renders as exactly that text.

Claim labels, titles and field names reach concept files through here; evidence excerpts never
go through Markdown at all (the site fills them in as HTML after Markdown has run).
"""

from __future__ import annotations

import re
import unicodedata

from ..kernel.lookalike import BIDI_CONTROLS

__all__ = ["markdown_text", "markdown_code"]

_ALWAYS_ENCODED = frozenset("!\"#$&'*+/<=>@[\\]^_`{|}~")
"""ASCII punctuation that Markdown or a common extension reads as markup wherever it stands."""
_NAMED_REFS = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}
_MARKUP = re.compile("[" + re.escape("".join(sorted(_ALWAYS_ENCODED | frozenset(".:-()")))) + "]")
"""The characters that may need a reference anywhere in a text, not only at its start."""
_LEADING_NUMBER_RE = re.compile(r"\d+")
_SHORT_PARENS_RE = re.compile(r"\([a-z]{1,2}\)")


def _char_ref(ch: str) -> str:
    return _NAMED_REFS.get(ch) or f"&#{ord(ch)};"


def _needs_ref(flat: str, i: int, lead: int) -> bool:
    """Whether ``flat[i]`` must be written as a character reference to stay plain text.

    Characters of :data:`_ALWAYS_ENCODED` always; any ASCII punctuation that starts the text (a
    list marker, heading, quote, definition or details block there); and ``. : - ( )`` where
    an extension would read them: a dot in a run of dots (ellipsis), between two letters (a
    bare web address) or ending a leading number (an ordered list), also ``)`` there; a colon
    not followed by a space (emoji shortcodes, URL schemes); a hyphen next to a hyphen (dashes,
    arrows); a parenthesis opening one or two lower-case letters (``(c)``, ``(tm)`` symbols).
    """
    ch = flat[i]
    if ch in _ALWAYS_ENCODED:
        return True
    if ch not in ".:-()" and not (i == 0 and ch in ",;?%"):
        return False
    if i == 0 or (i == lead and ch in ".)"):
        return True
    before = flat[i - 1]
    after = flat[i + 1] if i + 1 < len(flat) else ""
    if ch == ".":
        return "." in (before, after) or (before.isalpha() and after.isalpha())
    if ch == ":":
        return after not in ("", " ")
    if ch == "-":
        return "-" in (before, after)
    if ch == "(":
        return _SHORT_PARENS_RE.match(flat, i) is not None
    return False


def markdown_text(text: str) -> str:
    """``text`` as one line of Markdown that renders as exactly that text, whatever the extensions.

    For presentational text (claim labels, titles); evidence excerpts never go through Markdown
    at all. Whitespace runs become one space; control characters are dropped (HTML cannot show
    them), and so are the bidi controls that would show the text in another order than it is
    written (:data:`~publisher.kernel.lookalike.BIDI_CONTROLS`, refused in prose); every character that
    plain Markdown or a common extension (smarty, emoji, arithmatex, critic, keys, magiclink,
    smartsymbols, caret, mark, tilde, tables, footnotes, attribute lists ...) could read as markup
    is written as an HTML character reference (``&#61;`` for ``=``, ``&amp;`` for ``&``), which
    Markdown passes through untouched and every HTML reader decodes. Backslash escapes are not
    used: Python-Markdown honours them only for its own markup characters and leaves the
    backslash visible before others. Letters, digits, non-ASCII text, spaces and ordinary
    sentence punctuation stay as they are, so the file stays readable (``docs/concept-files.md``
    lists the rules).
    """
    if text.isprintable():  # no control character and no bidi control: nothing to drop
        shown = text
    else:
        shown = "".join(ch for ch in BIDI_CONTROLS.sub("", text) if ch.isspace() or unicodedata.category(ch) != "Cc")
    flat = " ".join(shown.split())
    if not flat:
        return flat
    lead_match = _LEADING_NUMBER_RE.match(flat)
    lead = lead_match.end() if lead_match else -1
    # Past the first character only the characters of _MARKUP can need a reference, so only
    # they are looked at: the same text as asking _needs_ref of every position.
    pieces: list[str] = []
    last = 0
    if _needs_ref(flat, 0, lead):
        pieces.append(_char_ref(flat[0]))
        last = 1
    for found in _MARKUP.finditer(flat, 1):
        at = found.start()
        if _needs_ref(flat, at, lead):
            pieces += (flat[last:at], _char_ref(flat[at]))
            last = at + 1
    if not pieces:
        return flat
    pieces.append(flat[last:])
    return "".join(pieces)


def markdown_code(text: str) -> str:
    """``text`` as inline code that survives any backticks inside it."""
    flat = " ".join(text.split())
    fence = "`"
    while fence in flat:
        fence += "`"
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"
