"""The evidence markup: what an evidence element looks like on a page, and how one is written.

Evidence elements, the one markup contract between page generation, the report renderer and
the scanner:

* an excerpt: an element with ``data-source-id``, ``data-start`` and ``data-end`` whose text
  content is exactly ``text[start:end]`` and which holds no child elements;
* a snapshot: ``<pre class="evidence-snapshot" data-source-id=...>`` whose text content is the
  whole snapshot text; its ``<mark class="evidence-span" data-start data-end>`` children
  highlight cited spans and must sit at those offsets;
* a window (``extra: evidence: source_text: windows``): ``<pre class="evidence-window"
  data-window-of=... data-window-start=... data-window-end=...>`` whose text content is
  ``text[window_start:window_end]``; its marks carry offsets into the whole text, so a mark at
  position ``p`` of the window must claim ``window_start + p``. Windows sit in a ``<div
  class="evidence-windows" data-window-of=...>`` (with an empty ``data-search-exclude`` when
  the windows are kept out of the search index).

Page generation (:mod:`.highlight`, :mod:`.pages`, the report template) writes these elements;
:mod:`.scan` reads every page for them, and refuses anything that only looks like one.

HTML built in Python escapes data one way: markupsafe's ``escape``, which Jinja's autoescaping
applies in the templates too (:func:`escape_text` here for evidence text, with the two characters
HTML cannot carry as they are; :func:`.titles.html_text` for titles). Builders return
:class:`~markupsafe.Markup` made from constants, integers and escaped strings only.
"""

from __future__ import annotations

from markupsafe import Markup, escape

__all__ = [
    "EXCERPT_CLASS",
    "SNAPSHOT_CLASS",
    "WINDOW_CLASS",
    "WINDOWS_CLASS",
    "MARK_CLASS",
    "ANCHOR_CLASS",
    "CONTEXT_CLASS",
    "EVIDENCE_ATTRS",
    "EXCERPT_ATTRS",
    "WINDOW_ATTRS",
    "CONTROL_ATTRS",
    "DECORATIVE_CLASSES",
    "CONCEPT_ANCHORS",
    "escape_text",
    "excerpt_html",
]

EXCERPT_CLASS = "evidence-excerpt"
SNAPSHOT_CLASS = "evidence-snapshot"
WINDOW_CLASS = "evidence-window"
WINDOWS_CLASS = "evidence-windows"
MARK_CLASS = "evidence-span"
ANCHOR_CLASS = "evidence-anchor"
CONTEXT_CLASS = "evidence-context"
"""The rest of an excerpt's sentence, just before or after it (:mod:`.context`)."""
DECORATIVE_CLASSES = frozenset(
    {
        "evidence-link",
        "evidence-id",
        "evidence-num",
        "evidence-nowrap",
        "evidence-event-detail",
        "evidence-gap",
        "evidence-report",
        "evidence-provenance",
        CONTEXT_CLASS,
    }
)
"""Classes of generated pages that style tables, identifiers and links; they show no excerpt."""

EXCERPT_ATTRS = ("data-source-id", "data-start", "data-end")
WINDOW_ATTRS = ("data-window-of", "data-window-start", "data-window-end")
CONTROL_ATTRS = ("data-record", "data-evidence-control", "data-verify-ready")
EVIDENCE_ATTRS = (*EXCERPT_ATTRS, *WINDOW_ATTRS, "data-spans", *CONTROL_ATTRS)
"""Attributes that only evidence elements (or the verifier's controls) carry."""

CONCEPT_ANCHORS = ("claim-", "review-")
"""How the ids of a concept page's claims and reviews begin (``fragments.html.j2``): the claims
page and the evidence matrix link to them, so the concept's prose may not take one."""


_CONTROLS = str.maketrans({"\r": "&#13;", "\x00": "&#0;"})

_EXCERPT_TAGS = frozenset({"span", "div", "p", "li", "blockquote", "q"})
"""Elements an excerpt may be written as (an allow-list: the tag name reaches the page as is)."""


def escape_text(text: str) -> Markup:
    """``text`` as HTML character data that every HTML parser reads back unchanged.

    The site's one escaping function: markupsafe's :func:`~markupsafe.escape`, the same that
    Jinja's autoescaping applies in the templates (``& < > " '`` become entities), plus two
    characters it leaves: a carriage return becomes ``&#13;`` (a raw one would be normalised to a
    line feed by a browser), and a NUL becomes ``&#0;``, which every parser reads as U+FFFD: HTML
    cannot carry a NUL, so such an excerpt fails the seal instead of being shown altered.
    Nothing else is touched, so the page holds the excerpt as is. ``text`` is always escaped,
    even when it is already :class:`~markupsafe.Markup`.
    """
    if type(text) is not str:
        text = str(text)
    escaped = escape(text)
    if "\r" in text or "\x00" in text:
        return Markup(str.translate(escaped, _CONTROLS))
    return escaped


def excerpt_html(source_id: str, start: int, end: int, text: str, *, tag: str = "span") -> Markup:
    """The excerpt element: offsets in attributes, the verified text escaped as character data.

    Built from constants, integers and markupsafe-escaped strings only, and wrapped once (an
    excerpt is written for every citation of every page, where ``Markup.format`` costs ten times
    as much); ``tag`` comes from an allow-list.
    """
    if tag not in _EXCERPT_TAGS:
        raise ValueError(f"an excerpt cannot be a <{tag[:20]}> element")
    return Markup(
        f'<{tag} class="{EXCERPT_CLASS}" data-source-id="{escape(source_id)}" data-start="{start:d}" '
        f'data-end="{end:d}">{escape_text(text)}</{tag}>'
    )
