"""Prose passes one allow-list: the HTML of every page's Markdown, judged before any slot is filled.

Hand-written pages (``docs/*.md``), concept prose and an agent's report prose are Markdown, and
Markdown passes raw HTML through (``attr_list`` and ``md_in_html`` add attributes and markup of
the author's choosing). Whatever route the markup took, it is judged by what it will be, against
one allow-list (:data:`ALLOWED_TAGS`, :data:`ALLOWED_ATTRIBUTES` and the value rules of
:func:`allowed_value`): the elements and attributes Python-Markdown and its usual extensions
produce, plus a fixed set of inert elements. Everything else is refused, never silently removed:

* an element outside the list (script, style, frames, forms and every form control, ``<mark>``
  and ``==highlight==``, raw SVG/MathML, ``<template>`` ...); the outermost one stands for all
  it holds;
* an attribute outside the list, or with a value outside its rule: ``id`` and ``name`` only as
  Markdown makes them (heading slugs, footnote and code-line anchors; never one beginning with
  ``_``, the theme's own ids such as ``#__config``) and each on one element only (a heading named
  like an evidence footnote would take its link and tooltip), ``class`` only from the extensions'
  vocabulary (never ``evidence-*`` or the theme's ``md-*``), ``style`` only as the ``tables``
  extension aligns a column, URLs only of an inert scheme (a raster ``data:image`` in ``src``);
* text that imitates evidence: a span reference (``src-<64 hex>#<start>-<end>``, or shortened as
  the build's source link writes it, ``src-7e4fd0d2…#176-188``) outside code,
  recognised after NFKC folding, without the invisible format characters (a soft hyphen, a
  zero-width space) and with every Unicode dash read as ``-`` (a footnote no check read), and the
  verified badge ("✓ verified") in a title, heading or, in concept and report prose, anywhere
  outside code, where any check mark is refused too; text includes what an image or link shows
  of itself (``alt``, ``title``). Both are compared as people read them
  (:mod:`publisher.kernel.lookalike`: NFKC, then the Unicode confusable skeleton), so a reference
  spelled "ѕrс-…" in Cyrillic letters, "✓ vеrified" with a Cyrillic ``е``, a Greek ``ν``, full-width
  or mathematical letters, and any symbol beside "verified" (a check mark by its Unicode name, an
  "other symbol", a radical sign) are the reference and the badge;
* text shown in another order than it is written: any bidirectional formatting character (an
  embedding, override or isolate, and the implicit marks LRM, RLM, ALM) and any ``dir``
  attribute (``<bdo>`` and ``<bdi>`` are outside the list), which would show "deifirev ✓" as the badge;
* markup that does not end where it started (an unclosed comment, raw-text element or tag),
  which would swallow the theme's markup that follows it, or a stray end tag (``</article>``,
  ``</div>``) that would close the theme's elements around the page's content, or a formatting
  element left open (``<a href>`` at its end), which the parser reopens around all that follows.

The judging walks the page as a browser builds it (lexbor, :func:`publisher.site.checks.scan.parse_page`),
so each finding names its element; the same allow-list drives the sanitiser ``nh3`` (the Rust
``ammonia`` library), and a page whose sanitised form differs from what it is, for a reason the
walk did not name, is refused too (the two parsers must agree before anything is published).
What trusted Markdown extensions generate themselves (Material's emoji SVG through
``pymdownx.emoji``, recorded by :class:`publisher.site.checks.trusted.TrustedOutput`) is set
aside first, one recorded chunk per occurrence, when it passes the SVG allow-list of ``docs/``
files. Each finding names the file and the line (check ``C-PROSE``).

Quotations are the other half of the check: a hand-written page's Markdown goes through the one
quotation rule of all prose (:func:`check_page_quotations`, :mod:`publisher.gate.quotations`),
as concept prose does in the wiki check and report prose in the run check.
"""

from __future__ import annotations

import html
import os
import re
import secrets
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import nh3

from ...gate.quotations import quotation_findings, quotations
from ...kernel import _fs
from ...kernel.checkids import CheckId
from ...kernel.findings import Finding
from ...kernel.lookalike import BIDI_CONTROLS, badge_lookalike, check_mark_like, read_key, ref_lookalikes
from ...kernel.reasons import Reason
from ...kernel.refs import VERIFIED_BADGE, as_read
from ..pages.markup import CONCEPT_ANCHORS
from .inert import svg_problems
from .scan import ascii_lower, find_span_refs, parse_page

__all__ = [
    "CHECK",
    "ALLOWED_TAGS",
    "ALLOWED_ATTRIBUTES",
    "ALLOWED_CLASSES",
    "CHECKED_TYPES",
    "Violation",
    "Author",
    "allowed_value",
    "fold",
    "verified_badge",
    "violations",
    "sanitised",
    "check_prose",
    "check_page_quotations",
    "source_text",
    "prose_file",
]

CHECK = CheckId.PAGE_PROSE

Author = Literal["page", "concept", "report"]
"""Who wrote the prose: the wiki's hand-written pages, a concept file's body, an agent's report."""

_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})

ALLOWED_TAGS = frozenset(
    # Markdown itself
    "p br hr h1 h2 h3 h4 h5 h6 blockquote pre code em strong a img ul ol li".split()
    # footnotes, tables, def_list, abbr, admonition, details, caret, tilde, highlight, md_in_html
    + "div span sup sub table thead tbody tfoot tr th td caption colgroup col dl dt dd abbr".split()
    + "details summary ins del".split()
    # a fixed set of inert elements
    + "b i u s q small cite dfn kbd samp var time wbr ruby rt rp figure figcaption".split()
    + "section article aside header footer address".split()
)
"""Elements prose may carry. Not here, among others: ``mark`` (the highlight is evidence's own),
every form control (``form button input select textarea option label output``), ``svg math``,
``bdo`` and ``bdi`` (which show their text in another order than written: "deifirev ✓" as
"✓ verified")."""

ALLOWED_ATTRIBUTES: dict[str, frozenset[str]] = {
    "*": frozenset({"class", "title", "lang", "id"}),
    "a": frozenset({"href", "name"}),
    "img": frozenset({"src", "alt", "width", "height"}),
    "th": frozenset({"align", "style", "colspan", "rowspan"}),
    "td": frozenset({"align", "style", "colspan", "rowspan"}),
    "ol": frozenset({"start", "type"}),
    "li": frozenset({"value"}),
    "details": frozenset({"open"}),
    "time": frozenset({"datetime"}),
    "q": frozenset({"cite"}),
    "blockquote": frozenset({"cite"}),
    "ins": frozenset({"cite", "datetime"}),
    "del": frozenset({"cite", "datetime"}),
    "col": frozenset({"span"}),
    "colgroup": frozenset({"span"}),
}
"""Attributes prose may carry, by element (``*``: on any allowed element), each value checked by
:func:`allowed_value`. Not ``dir``: a direction shows text in another order than it is written."""

ALLOWED_CLASSES = frozenset(
    # admonition (and pymdownx.details) with Material's types
    "admonition admonition-title note abstract summary tldr info todo tip hint important success check done "
    "question help faq warning caution attention failure fail missing danger error bug example quote cite".split()
    # footnotes, toc permalinks, highlight, emoji, tasklist, tabbed, arithmatex, critic
    + "footnote footnote-ref footnote-backref headerlink highlight highlighttable linenos linenodiv normal "
    "filename code twemoji emojione gemoji task-list task-list-item task-list-indicator tabbed-set "
    "tabbed-alternate tabbed-labels tabbed-content tabbed-block arithmatex critic".split()
    # the footnotes of the report renderer (markdown-it)
    + "footnotes footnotes-sep footnotes-list footnote-item".split()
)
"""Class names the configured extensions write; with code highlighting's short token classes
(``k``, ``nf``, ``s2`` ...) and ``language-*``. Never the site's own (``evidence-*``, ``md-*``)."""

CHECKED_TYPES = frozenset({"success", "check", "done"})
"""Admonition types whose title Material draws after a check mark: a title "Verified" there
reads as the verified badge."""

_TOKEN_CLASS = re.compile(r"[a-z]{1,3}[0-9]?(?:-[A-Z][A-Za-z0-9]*)*|language-[a-z0-9_+-]{1,40}")
_HEADING_ID = re.compile(r"[^\s_][^\s]*")
_FOOTNOTE_ID = re.compile(r"fn(?:ref[0-9]*)?:[^\s]+|fn(?:ref)?[0-9]+(?::[0-9]+)?")
_CODE_ANCHOR = re.compile(r"__(?:codelineno|span)-[0-9]+-[0-9]+")
_ALIGN = re.compile(r"text-align:\s*(?:left|right|center);?")
_URL_ATTRS = frozenset({"href", "src", "cite"})
_SAFE_SCHEMES = frozenset({"http", "https", "mailto"})
_RASTER = re.compile(r"data:image/(?:png|gif|jpeg|jpg|webp|avif|bmp)[;,]", re.IGNORECASE)
_STRIP = "".join(chr(c) for c in range(0x21))
_TAB_NL = re.compile(r"[\t\n\r]")
_SCHEME = re.compile(r"([a-zA-Z][a-zA-Z0-9+.\-]*):")
_ASCII_WS = re.compile(r"[\t\n\f\r ]+")
_CODE = "pre, code, kbd, samp"
_TITLES = "h1, h2, h3, h4, h5, h6, summary, caption, th, dt, .admonition-title"
_TITLE_LINE = re.compile(
    r"\s*(?:#|!!!|\?\?\?|\||<\s*(?:h[1-6]|summary|caption|th|dt)\b|<[^>]*\badmonition-title\b)", re.IGNORECASE
)
_BADGE = VERIFIED_BADGE
_SHORT_REF = re.compile(r"src-[0-9a-f]{1,63}\s*(?:\.\.\.)?\s*#\s*[0-9]+\s*-\s*[0-9]+", re.IGNORECASE)
"""A span reference shortened as the build writes it in an excerpt's source link
("source src-7e4fd0d2…#176-188"; the ellipsis reads as ``...`` once folded)."""
_ICON = "\ue000"
_ICON_READ = f"<span>{_ICON}</span>"
"""What an icon a trusted extension inlined is read as: a mark that the badge test reads as the
check mark it may show (and the check-mark rule of concept and report prose does not)."""
_NON_ASCII = re.compile("[^\x00-\x7f]")
_TWICE = "a second element of that name (a link, its tooltip or a script finds the first)"
_ANCHOR = "the anchor of a claim or review of the page (the claims page and the matrix link there)"
_SEEN = ("alt", "title")  # attribute values a reader sees: where an image fails to load, on hover


def fold(text: str) -> str:
    """``text`` as a reader takes it in (:func:`publisher.kernel.refs.as_read`: without the
    invisible format characters, NFKC, dashes as ``-``)."""
    return as_read(text)


def verified_badge(text: str) -> bool:
    """Whether ``text`` spells the site's verified badge ("✓ verified", in any form or look-alike)."""
    return _BADGE.search(fold(text)) is not None or badge_lookalike(text) is not None


def _badge(text: str, folded: str | None = None) -> str | None:
    """The badge ``text`` shows (icons read as check marks), as written or by look-alike;
    ``folded`` is ``fold(text)`` when the caller has it already."""
    match = _BADGE.search(_read_icons(fold(text) if folded is None else folded))
    return match.group(0) if match else badge_lookalike(_read_icons(text))


def _scheme(url: str) -> str | None:
    """The scheme a browser's URL parser reads in ``url`` (lower case), if any."""
    cleaned = _TAB_NL.sub("", url.strip(_STRIP))
    match = _SCHEME.match(cleaned)
    return ascii_lower(match.group(1)) if match else None


def allowed_value(tag: str, name: str, value: str) -> bool:
    """Whether attribute ``name`` of an allowed ``<tag>`` may hold ``value`` (the value rules of
    the allow-list; the attribute itself must be in :data:`ALLOWED_ATTRIBUTES`)."""
    if name == "id":
        if tag in _HEADINGS:
            return _HEADING_ID.fullmatch(value) is not None
        if tag in ("li", "sup") or (tag == "a" and _FOOTNOTE_ID.fullmatch(value)):
            return _FOOTNOTE_ID.fullmatch(value) is not None
        return tag in ("a", "span") and _CODE_ANCHOR.fullmatch(value) is not None
    if name == "name":
        return _CODE_ANCHOR.fullmatch(value) is not None
    if name == "class":
        tokens = [t for t in _ASCII_WS.split(value) if t]
        return all(t in ALLOWED_CLASSES or _TOKEN_CLASS.fullmatch(t) for t in tokens)
    if name == "style":
        return _ALIGN.fullmatch(value.strip()) is not None
    if name == "align":
        return ascii_lower(value) in ("left", "right", "center")
    if name in _URL_ATTRS:
        scheme = _scheme(value)
        if scheme is None or scheme in _SAFE_SCHEMES:
            return True
        return tag == "img" and name == "src" and _RASTER.match(value.strip()) is not None
    if name in ("start", "value", "span", "colspan", "rowspan", "width", "height"):
        return re.fullmatch(r"[0-9]{1,6}", value.strip()) is not None
    if name == "type":
        return value in ("1", "a", "A", "i", "I")
    if name == "open":
        return value in ("", "open")
    return True  # text: title, alt, lang, dir, datetime


@dataclass(frozen=True)
class Violation:
    """One thing prose may not carry: its kind, what to look for in the source (a tag or
    attribute name, a URL, a reference), a description, and the attribute value if any."""

    kind: str
    name: str
    detail: str
    value: str = ""


def _attribute_problem(tag: str, name: str, value: str) -> Violation | None:
    allowed = ALLOWED_ATTRIBUTES["*"] | ALLOWED_ATTRIBUTES.get(tag, frozenset())
    if name not in allowed:
        what = "an event handler" if name.startswith("on") else "an attribute outside the allow-list"
        return Violation("attribute", name, f"<{tag} {name}>: {what}", value)
    if allowed_value(tag, name, value):
        return None
    if name in _URL_ATTRS:
        return Violation("url", name, f"<{tag} {name}> holds a {_scheme(value)}: URL", value)
    why = {
        "id": "an id Markdown did not make (it could shadow the site's own elements)",
        "name": "a name Markdown did not make (it could shadow the document's own properties)",
        "class": "a class outside the extensions' vocabulary (the site's own look is not prose's)",
        "style": "a style other than a table column's alignment",
    }.get(name, "a value outside the allow-list")
    return Violation("attribute", name, f'<{tag} {name}="{value[:40]}">: {why}', value)


def _set_aside(content_html: str, trusted: Iterable[str]) -> str:
    """``content_html`` with each chunk a trusted extension stashed replaced by a span that reads
    as a check mark (an icon can show one: ``:white_check_mark:`` or ``:material-check:`` before
    "verified" is the badge), one occurrence per recorded chunk (a hand copy of the same markup
    is judged as markup).

    Only a chunk that is an inert SVG (:func:`publisher.site.checks.inert.svg_problems`, the
    allow-list of SVG files) is set aside: the emoji extension inlines an icon file as it is,
    and an icon set can lie where an author writes (a ``docs/.icons`` MkDocs does not publish)."""
    for chunk in trusted:
        if chunk and not svg_problems(chunk.encode("utf-8")):
            content_html = content_html.replace(chunk, _ICON_READ, 1)
    return content_html


def violations(content_html: str, *, author: Author = "page", trusted: Iterable[str] = ()) -> list[Violation]:
    """Everything in an HTML fragment (a page's body content) outside the prose allow-list."""
    content_html = _set_aside(content_html, trusted)
    sentinel = f"publisher-end-{secrets.token_hex(8)}"
    tree = parse_page(f'<!DOCTYPE html><body>{content_html}<p id="{sentinel}"></p>')
    out: list[Violation] = []
    ends = tree.css(f'[id="{sentinel}"]')
    if len(ends) != 1 or ends[0].tag != "p" or len(ends[0].attributes) != 1 or _escapes(content_html, sentinel):
        detail = (
            "the markup does not end where it started (an unclosed comment, raw-text element, tag or "
            "<select> would swallow what follows it; a stray end tag would close the page around it)"
        )
        out.append(Violation("unclosed", "", detail))
    inside: set[int] = set()
    named: set[str] = set()  # ids and names so far: each names one element
    body = tree.body
    for node in body.traverse(include_text=False) if body is not None else ():
        if not node.is_element_node or node.mem_id in inside or node.tag == "body":
            continue
        if node.tag == "p" and node.attributes.get("id") == sentinel:
            continue
        tag = node.tag or ""
        if tag not in ALLOWED_TAGS:
            inside.update(n.mem_id for n in node.traverse(include_text=False))  # the outermost stands for all
            what = "a highlight only evidence carries" if tag == "mark" else "an element outside the allow-list"
            out.append(Violation("element", tag, f"<{tag}>: {what}"))
            continue
        own: set[str] = set()  # an element's id and name may be the same (a code line's anchor)
        for name, value in node.attributes.items():
            problem = _attribute_problem(tag, name, value or "")
            if problem is None and name in ("id", "name") and value in named:
                detail = f'<{tag} {name}="{(value or "")[:40]}">: {_TWICE}'
                problem = Violation("attribute", name, detail, value or "")
            if problem is None and name == "id" and author == "concept" and (value or "").startswith(CONCEPT_ANCHORS):
                detail = f'<{tag} id="{(value or "")[:40]}">: {_ANCHOR}'
                problem = Violation("attribute", name, detail, value or "")
            if problem is not None:
                out.append(problem)
            elif name in ("id", "name"):
                own.add(value or "")
        named |= own
    if body is not None:
        out += _looks_verified(tree, body, author)
    if not out and sanitised(content_html) != _structure(content_html, tree, sentinel):
        out.append(Violation("sanitiser", "", "the sanitiser reads this markup otherwise than the browser"))
    return out


_THEME = ("div", "main", "div", "div", "article")
"""The elements a page's content sits in (Material: ``div.md-container > main.md-main >
div.md-main__inner > div.md-content > article.md-typeset``)."""


def _escapes(content_html: str, sentinel: str) -> bool:
    """Whether the fragment, placed where the theme puts a page's content, closes one of the
    theme's elements around it (a stray ``</article>`` or ``</div>``, which a fragment parsed on
    its own ignores) so that what follows it lands outside the article, or leaves a formatting
    element open (``<a href>`` or ``<b>`` at its end), which the parser reopens around every text
    that follows it: the theme's footer turned into the author's link."""
    opening = "".join(f'<{tag} id="{sentinel}-{n}">' for n, tag in enumerate(_THEME))
    tree = parse_page(f'<!DOCTYPE html><body>{opening}{content_html}<p id="{sentinel}">.</p>')
    ends = tree.css(f'[id="{sentinel}"]')
    if len(ends) != 1 or any(n.is_element_node for n in ends[0].iter(include_text=False)):
        return True  # or a formatting element left open, which the text after it would reopen
    node = ends[0].parent
    for n in reversed(range(len(_THEME))):
        if node is None or node.attributes.get("id") != f"{sentinel}-{n}":
            return True
        node = node.parent
    return node is None or node.tag != "body"


def _text_outside(tree: Any, body: Any, skip: str) -> str:
    skipped = {n.mem_id for root in tree.css(skip) for n in root.traverse(include_text=True)}
    return "".join(
        n.text_content or "" for n in body.traverse(include_text=True) if n.is_text_node and n.mem_id not in skipped
    )


def _seen_values(tree: Any) -> str:
    """The values of the attributes a reader sees (``alt``, ``title``) outside code, one a line."""
    skipped = {n.mem_id for root in tree.css(_CODE) for n in root.traverse(include_text=False)}
    values = [
        node.attributes.get(name) or ""
        for node in tree.css(", ".join(f"[{name}]" for name in _SEEN))
        if node.mem_id not in skipped
        for name in _SEEN
    ]
    return "\n".join(v for v in values if v)


def _looks_verified(tree: Any, body: Any, author: Author) -> list[Violation]:
    """Text that imitates evidence: text shown in another order than written, span references
    outside code, the verified badge (in text, or in what an image or a link shows of itself)."""
    out: list[Violation] = []
    raw = body.text(deep=True)
    seen = _seen_values(tree)
    for control in sorted(set(BIDI_CONTROLS.findall(raw + seen))):
        detail = f"text with the bidi control U+{ord(control):04X}, shown in another order than it is written"
        out.append(Violation("bidi", control, detail))
    folded = fold(raw + "\n" + seen)
    if find_span_refs(folded) or _SHORT_REF.search(folded) or ref_lookalikes(raw + "\n" + seen):
        plain = _text_outside(tree, body, _CODE) + "\n" + seen
        outside = fold(plain)
        for ref in find_span_refs(outside):
            detail = (
                f"text {ref[:24]}… quotes a source that no evidence check read (evidence footnotes are "
                "read with CommonMark rules: not after an unclosed fence, nor inside a paragraph)"
            )
            out.append(Violation("reference", ref, detail))
        for short in _SHORT_REF.finditer(outside):
            detail = f"text {short.group(0)[:32]} reads as the build's source link of a sealed excerpt"
            out.append(Violation("reference", short.group(0), detail))
        if not find_span_refs(outside) and not _SHORT_REF.search(outside):
            for ref in ref_lookalikes(plain):
                detail = f"text {ref[:32]} reads as a span reference spelled with look-alike characters"
                out.append(Violation("reference", ref, detail))
    detail = "text shaped like the verified badge, which only the build shows for a sealed excerpt"
    badges = len(out)
    if _badge(raw + "\n" + seen, folded):
        titles = [n.text(deep=True) for n in tree.css(_TITLES)]
        texts = titles if author == "page" else [_text_outside(tree, body, _CODE), seen]
        for text in texts:
            badge = _badge(text)
            if badge:
                out.append(Violation("badge", badge, detail))
    for title in _checked_titles(tree):  # the theme draws a check mark before these
        if _badge(f"\u2713 {title}") and not _badge(title):
            out.append(Violation("badge", title.strip(), f"{detail} (the theme draws its check mark)"))
    if author != "page" and len(out) == badges:  # "✔ checked", "🗹 done" ...
        text = fold(_text_outside(tree, body, _CODE) + "\n" + seen)
        mark = next((ch for ch in _NON_ASCII.findall(text) if check_mark_like(ch)), None)  # no ASCII one is
        if mark:
            why = "a check mark, which in concept and report prose only the build's verified badge shows"
            out.append(Violation("badge", mark, why))
    return out


def _read_icons(text: str) -> str:
    """``text`` with each icon a trusted extension inlined read as a check mark."""
    return text.replace(_ICON, "\u2713")


def _checked_titles(tree: Any) -> list[str]:
    """The titles of admonitions and details the theme marks with a check icon
    (:data:`CHECKED_TYPES`), whatever the prose's own words."""
    out = []
    for node in tree.css(".admonition-title, summary"):
        parent = node.parent
        classes = set(_ASCII_WS.split((parent.attributes.get("class") or "") if parent is not None else ""))
        if classes & CHECKED_TYPES:
            out.append(node.text(deep=True))
    return out


def _nh3_filter(tag: str, name: str, value: str) -> str | None:
    if name not in ALLOWED_ATTRIBUTES["*"] | ALLOWED_ATTRIBUTES.get(tag, frozenset()):
        return None
    return value if allowed_value(tag, name, value) else None


def sanitised(content_html: str) -> list[tuple[str, ...]]:
    """The structure (elements, attributes, text) of ``content_html`` once ``nh3`` has applied the
    allow-list to it, read back as a browser reads it."""
    attributes = {tag: set(names) for tag, names in ALLOWED_ATTRIBUTES.items()}
    cleaned = nh3.clean(
        content_html,
        tags=set(ALLOWED_TAGS),
        clean_content_tags={"script", "style"},
        attributes=attributes,
        attribute_filter=_nh3_filter,
        link_rel=None,
        url_schemes=set(_SAFE_SCHEMES) | {"data"},
        strip_comments=True,
    )
    return _structure(cleaned)


def _structure(fragment: str, tree: Any = None, sentinel: str = "") -> list[tuple[str, ...]]:
    """Elements (tag and sorted attributes) and the text between them (white space collapsed) of
    a fragment, in document order, as a browser builds it (``tree``: the fragment already parsed,
    followed by the end marker ``<p id=sentinel>``, which is left out)."""
    if tree is None:
        tree = parse_page(f"<!DOCTYPE html><body>{fragment}")
    body = tree.body
    out: list[tuple[str, ...]] = []
    text: list[str] = []

    def flush() -> None:
        joined = " ".join("".join(text).split())
        if joined:
            out.append(("#text", joined))
        text.clear()

    for node in body.traverse(include_text=True) if body is not None else ():
        if node.is_text_node:
            text.append(node.text_content or "")
        elif node.is_element_node and node.tag != "body":
            if sentinel and node.tag == "p" and node.attributes.get("id") == sentinel:
                continue
            flush()
            out.append((node.tag or "", *sorted(f"{k}={v or ''}" for k, v in node.attributes.items())))
    flush()
    return out


def _body_start(lines: list[str]) -> int:
    """The index of the first line after a YAML front matter block (0 without one): front matter
    is data, rendered through the escaping boundary, never prose."""
    if not lines or lines[0].rstrip("\r") != "---":
        return 0
    for index in range(1, len(lines)):
        if lines[index].rstrip("\r") in ("---", "..."):
            return index + 1
    return 0


class _Locator:
    """Finds the source line of each violation, in document order: the n-th violation written
    the same way is looked for after the line of the one before it."""

    def __init__(self, source: str, *, titles: bool = False) -> None:
        self.titles = titles
        self.lines = source.split("\n")
        self.decoded = [ascii_lower(fold(_TAB_NL.sub("", html.unescape(line)))) for line in self.lines]
        self._keyed: list[str] | None = None
        self.after: dict[tuple[str, ...], int] = {}
        self.body: int = _body_start(self.lines)

    def keyed(self, n: int) -> str:
        """Line ``n`` as people read it (:func:`publisher.kernel.lookalike.read_key`)."""
        if self._keyed is None:
            self._keyed = [read_key(_TAB_NL.sub("", html.unescape(line))) for line in self.lines]
        return self._keyed[n]

    def _needle(self, v: Violation) -> tuple[tuple[str, ...], Callable[[int], object]]:
        """A key for violations written the same way, and a test of one line (its number)."""
        if v.kind == "element":
            pattern = re.compile(rf"<\s*{re.escape(v.name)}(?![\w-])", re.IGNORECASE)
            if v.name == "mark":  # also the highlight syntax of pymdownx.mark
                pattern = re.compile(r"<\s*mark(?![\w-])|==\S", re.IGNORECASE)
            return ("element", v.name), lambda n: pattern.search(self.lines[n])
        if v.kind == "attribute":
            start = re.escape(v.value[:24])  # values are compared with their case, names without
            pattern = re.compile(rf"(?<![\w-])(?i:{re.escape(v.name)})\s*=\s*[\"']?{start}")
            if v.name in ("id", "class"):  # or attr_list's shorthand
                sigil = "#" if v.name == "id" else "."
                pattern = re.compile(rf"{pattern.pattern}|\{{[^}}]*{re.escape(sigil)}{start}")
            return ("attribute", v.name, v.value), lambda n: pattern.search(self.lines[n])
        text = ascii_lower(fold(_TAB_NL.sub("", v.value if v.kind == "url" else v.name)))[:32]
        key = read_key(v.name)[: 20 if v.kind == "reference" else 32] if v.kind in ("reference", "badge") else ""
        if v.kind == "reference":
            text = text[:20]
        if v.kind == "badge":  # the check mark may be an icon's: its shortcode, then the word
            word = re.sub(r"^[^a-z]*", "", text)
            icon = re.compile(rf":[a-z0-9_+-]+:\s*{re.escape(word)}") if word and word != text else None

            def badge(n: int) -> bool:
                hit = text in self.decoded[n] or (icon is not None and icon.search(self.decoded[n]) is not None)
                hit = hit or (bool(key) and key in self.keyed(n))
                return hit and (not self.titles or _TITLE_LINE.match(self.lines[n]) is not None)

            return (v.kind, text), badge  # a page's badge is refused in a title: look there
        return (v.kind, text), lambda n: text and (text in self.decoded[n] or (key and key in self.keyed(n)))

    def line(self, v: Violation) -> int | None:
        if v.kind in ("unclosed", "sanitiser"):
            return None
        key: tuple[str, ...]
        hit: Callable[[int], object]
        if v.kind == "bidi":  # invisible once folded: looked for as written
            key, hit = ("bidi", v.name), lambda n: v.name in self.lines[n]
        else:
            key, hit = self._needle(v)
        first: int = self.after.get(key, self.body)
        order: list[int] = [*range(first, len(self.lines)), *range(self.body, first)]
        found = next((n + 1 for n in order if hit(n)), None)
        if found is not None:
            self.after[key] = found
        return found


def check_prose(
    content_html: str, *, file: str, source: str | None, trusted: Iterable[str] = (), author: Author = "page"
) -> list[Finding]:
    """Findings for one page's Markdown output: ``file`` names it (relative to the wiki), ``source``
    is its Markdown as written (for line numbers), ``trusted`` the stash chunks of trusted
    extensions during its conversion, ``author`` who wrote it."""
    found = violations(content_html, author=author, trusted=trusted)
    if not found:
        return []
    out = []
    locate = _Locator(source, titles=author == "page") if source is not None else None
    for v in found:
        line = locate.line(v) if locate is not None else None
        reason = Reason.EXCERPT_MISMATCH if v.kind in {"reference", "badge"} else None
        out.append(Finding(reason, file, v.detail, line=line, check=CHECK))
    return out


def check_page_quotations(source: str | None, *, file: str, texts: Callable[[], Mapping[str, str]]) -> list[Finding]:
    """The one quotation rule (:mod:`publisher.gate.quotations`) over a hand-written page's
    Markdown (``source``, front matter aside): every quotation located in ``texts()``, the
    snapshots of the wiki's runs. A page cites no span (a span reference is refused in its text),
    so a source's words there are a finding that names the span to cite from a concept, and words
    found nowhere an unverified quotation (``EXCERPT_MISMATCH``); check ``C-PROSE``."""
    if source is None:
        return []
    lines = source.split("\n")
    start = _body_start(lines)
    body = "\n" * start + "\n".join(lines[start:])  # front matter is data: its lines left blank
    found = quotations(body)
    return quotation_findings(found, file=file, check=CHECK, texts=texts, cited={}, cite_in="a concept")


def source_text(path: Path | None) -> str | None:
    """A page's Markdown source for line numbers (None when it cannot be read)."""
    if path is None:
        return None
    try:
        return _fs.read_regular(path).decode("utf-8", errors="replace")
    except OSError:
        return None


def prose_file(wiki_root: Path, src_uri: str, abs_src_path: str | None, origin: Path | None) -> tuple[str, Path | None]:
    """Where a page's prose comes from: the file to name in findings (relative to the wiki) and
    its path for line numbers. ``origin`` is the concept file of a generated concept page; other
    generated pages (``abs_src_path`` None) hold no prose of their own."""
    path = origin or (Path(abs_src_path) if abs_src_path else None)
    if path is None:
        return f"(generated page) {src_uri}", None
    return os.path.relpath(path, wiki_root).replace(os.sep, "/"), path
