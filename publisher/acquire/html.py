"""HTML and XHTML: the visible text, one deterministic rendering.

Rendering rules (what offsets into the text depend on):

* Dropped with their content: what a browser does not render (HTML's "hidden elements":
  ``head`` (its ``<title>`` gives ``title``), ``title``, ``script``, ``style``, ``template``,
  ``datalist``, ``noembed``, ``noframes``, ``param``, ``rp``, ``area``, a ``dialog`` without
  ``open``), fallback content a browser shows only when it cannot play, embed or draw (``audio``,
  ``video``, ``iframe``, ``object``, ``embed``, ``canvas``, ``meter``, ``progress``, ``noscript``), ``svg``, ``select``,
  MathML ``annotation``/``annotation-xml``, ``bdo`` (shown in another order than written),
  comments, and hidden elements (``hidden`` attribute, ``aria-hidden="true"``). A namespace
  prefix (``svg:text``) does not hide an element from these rules.
* Inline presentation is read against an allow-list (:mod:`publisher.acquire._inline_css`): an
  element keeps its text only when every declaration of its ``style`` attribute is one that
  cannot make text unseen (a ``display`` other than ``none``, ``visibility: visible``, a
  ``font-size`` of at least 6px, an ``opacity`` of at least 0.5, no negative margin or indent,
  ``position`` static or relative...), and its colours (``color``, ``background-color``,
  ``<font color>``, ``bgcolor``) keep a readable contrast with what it sits on; opacity and a
  relative font size are followed down the tree (nested ``opacity: 0.5`` or ``font-size: 50%``
  compose to text no reader sees, as do nested ``<small>``, ``<sub>`` or ``<sup>``). Anything else
  (``transform``, ``clip``, offsets, white on white, CSS comments or escapes) drops the element
  with its content: text whose visibility cannot be told without rendering the page is left out
  rather than made citable. Style sheets (``<style>``, ``<link>``) are not applied.
* Block elements (``p``, ``div``, ``h1``-``h6``, ``li``, ``tr``, ``section``,
  ``blockquote``, ``pre``, ``table``...) and ``<br>`` end the current line.
  Lines are joined with a single ``"\\n"``; lines with no text are dropped.
* Inside a line, inline text is concatenated and each run of HTML whitespace
  (space, tab, LF, FF, CR; not NBSP or other Unicode spaces) becomes one space;
  a line has no leading or trailing space.  Table cells of one row are joined
  with ``" | "``.
* ``<pre>`` content is kept verbatim (``<br>`` inside it is ``"\\n"``), less
  the one newline that HTML ignores right after the ``<pre>`` tag.
* Character references are decoded by the parser.

Charset: a byte-order mark, then the Content-Type charset, then a ``<meta>``
charset declaration in the first 1024 bytes (outside comments), then UTF-8.  Decoding is strict.

What the page states about itself (``citation_doi``, ``citation_pmid``, ``citation_pmcid``,
``citation_title``, ``dc.identifier``, ``dc.title`` meta, names compared case-insensitively) is
returned as ``stated`` (:mod:`publisher.acquire.identity` weighs it); it adds nothing to the text.

Sections come from ``h1``-``h6``: title is the heading's rendered line; a
section runs from the heading's start to the end of the line before the next
heading of the same or a higher level (a smaller number), or to the end of the
text.  A heading with no text (or only Unicode spaces such as NBSP) makes no
section.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import lxml.html
from lxml import etree

from ..kernel.text import first_line
from . import AcquireError, Extracted
from ._inline_css import PAGE_LOOK, Look, presented, readable
from .identity import identifier_kind
from .plain import decode_text

__all__ = ["extract_html", "sniff_html_charset"]

_DROPPED = frozenset(
    {
        "head", "title", "script", "style", "template", "datalist", "noembed", "noframes",
        "param", "rp", "area", "noscript", "audio", "video", "iframe", "object", "embed",
        "canvas", "svg", "select", "annotation", "annotation-xml", "bdo", "meter", "progress",
    }
)  # fmt: skip
_BLOCKS = frozenset(
    {
        "address", "article", "aside", "blockquote", "body", "caption", "center",
        "dd", "details", "dialog", "dir", "div", "dl", "dt", "fieldset",
        "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5",
        "h6", "header", "hgroup", "hr", "html", "legend", "li", "main", "menu",
        "nav", "ol", "p", "pre", "section", "summary", "table", "tbody",
        "thead", "tfoot", "tr", "ul",
    }
)  # fmt: skip
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_CELLS = frozenset({"td", "th"})
_HTML_SPACE = re.compile(r"[ \t\n\f\r]+")
_META_TAG = re.compile(rb"<meta[\t\n\f\r /]([^>]*)", re.IGNORECASE)
_ATTRIBUTE = re.compile(
    rb"""([^\t\n\f\r />=][^\t\n\f\r />=]*)(?:[\t\n\f\r ]*=[\t\n\f\r ]*(?:"([^"]*)"|'([^']*)'|([^\t\n\f\r >]*)))?"""
)
_CHARSET_IN_CONTENT = re.compile(rb"""charset[\t\n\f\r ]*=[\t\n\f\r ]*["']?([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
_CHARSET_VALUE = re.compile(rb"[\t\n\f\r ]*([A-Za-z0-9_.:-]+)")
_COMMENT = re.compile(rb"<!(?=--).*?(?:-->|\Z)", re.DOTALL)
"""A comment as the prescan skips it: to the first '>' after two dashes, which may be those of
'<!--' itself (``<!-->`` and ``<!--->`` are whole comments), or to the end."""
_XML_DECL = re.compile(r"\A\s*<\?xml[^>]*\?>")
_SNIFF_WINDOW = 1024
_BOMS = (
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xfe\xff", "utf-16"),
    (b"\xff\xfe", "utf-16"),
)


def sniff_html_charset(body: bytes, header_charset: str | None) -> str:
    """The charset to decode an HTML body with (BOM, header, meta, UTF-8)."""
    for bom, name in _BOMS:
        if body.startswith(bom):
            return name
    if header_charset:
        return header_charset
    # A browser's prescan skips comments: a <meta> inside one declares nothing.
    window = _COMMENT.sub(b"", body[:_SNIFF_WINDOW])
    for tag in _META_TAG.finditer(window):
        declared = _meta_charset(tag.group(1))
        if declared is not None:
            # A meta declaration cannot mean UTF-16: the bytes it sits in are ASCII.
            return "utf-8" if declared.startswith("utf-16") else declared
    return "utf-8"


def _meta_charset(attributes: bytes) -> str | None:
    """The charset one ``<meta>`` declares, as a browser's prescan reads it: its ``charset``
    attribute, or the ``charset=`` of its ``content`` when ``http-equiv`` is ``content-type``
    (a ``content`` alone, as in ``<meta name=description content="charset=...">``, declares
    nothing); the first of attributes given twice."""
    seen: dict[bytes, bytes] = {}
    for found in _ATTRIBUTE.finditer(attributes):
        value = next((v for v in found.group(2, 3, 4) if v is not None), b"")
        seen.setdefault(found.group(1).lower(), value)
    if b"charset" in seen:
        match = _CHARSET_VALUE.match(seen[b"charset"])
    elif seen.get(b"http-equiv", b"").strip().lower() == b"content-type":
        match = _CHARSET_IN_CONTENT.search(seen.get(b"content", b""))
    else:
        return None
    return match.group(1).decode("ascii").lower() if match else None


def _collapse(raw: str) -> str:
    return _HTML_SPACE.sub(" ", raw).strip(" ")


_UA_FONT_SIZE = {"small": "smaller", "sub": "smaller", "sup": "smaller", "big": "larger"}
"""Font sizes a browser's own style sheet gives elements, relative to their parent's: nested
``<small>`` shrinks text as nested ``font-size: smaller`` does."""


def _shown(el: etree._Element, tag: str, look: Look) -> Look | None:
    """How ``el``'s text is shown, or None when a reader would not see it or anything in it."""
    if el.get("hidden") is not None:
        return None
    if (el.get("aria-hidden") or "").strip().lower() == "true":
        return None
    if tag == "dialog" and el.get("open") is None:
        return None
    colour = el.get("color") if tag == "font" else None
    return presented(el.get("style") or "", colour, el.get("bgcolor"), look, _UA_FONT_SIZE.get(tag))


@dataclass
class _Flow:
    """Accumulates rendered lines and heading positions."""

    lines: list[str] = field(default_factory=list)
    pieces: list[str] = field(default_factory=list)
    headings: list[tuple[int, int]] = field(default_factory=list)  # (level, line index)
    verbatim: int = 0
    in_heading: bool = False

    def flush(self) -> None:
        raw = "".join(self.pieces)
        self.pieces.clear()
        line = raw if self.verbatim else _collapse(raw)
        if line.strip(" \t\n\f\r"):
            self.lines.append(line)

    def walk(self, el: etree._Element, look: Look = PAGE_LOOK) -> None:
        tag = el.tag if isinstance(el.tag, str) else None
        if tag is None:  # comment or processing instruction: no text, keep tail
            return
        tag = tag.lower().rpartition(":")[2]  # svg:text is svg's text, whatever the prefix
        shown = None if tag in _DROPPED else _shown(el, tag, look)
        if shown is None:
            return
        if tag == "br":
            if self.verbatim:
                self.pieces.append("\n")
            elif self.in_heading:
                self.pieces.append(" ")
            else:
                self.flush()
            return
        if tag in _CELLS and el.getprevious() is not None:
            self.pieces.append(" | ")

        breaks = tag in _BLOCKS and not self.verbatim and not self.in_heading
        level = _HEADINGS.get(tag) if breaks else None
        if breaks:
            self.flush()
        if tag == "pre":
            self.verbatim += 1
        if level is not None:
            self.in_heading = True
            mark = len(self.lines)

        seen = readable(shown)  # this element's own text and its children's tails
        text = el.text
        if tag == "pre" and text and text[0] == "\n":
            text = text[1:]  # HTML ignores a newline right after <pre>
        if text and seen:
            self.pieces.append(text)
        for child in el:
            self.walk(child, shown)
            if child.tail and seen:
                self.pieces.append(child.tail)

        if breaks:
            self.flush()
        if tag == "pre":
            self.verbatim -= 1
        if level is not None:
            self.in_heading = False
            if len(self.lines) > mark and self.lines[mark].strip():
                self.headings.append((level, mark))


def _sections(flow: _Flow, starts: list[int], ends: list[int], size: int) -> tuple[tuple[str, int, int], ...]:
    """Close each heading's section at the next heading of the same or a higher level."""
    out: list[tuple[str, int, int]] = []
    open_: list[tuple[int, int]] = []  # (level, index into out)
    for level, line in flow.headings:
        while open_ and open_[-1][0] >= level:
            _, index = open_.pop()
            title, start, _ = out[index]
            out[index] = (title, start, ends[line - 1])
        open_.append((level, len(out)))
        out.append((flow.lines[line], starts[line], size))
    return tuple(out)


_META_IDS = {"citation_doi": "doi", "citation_pmid": "pmid", "citation_pmcid": "pmcid"}
_META_TITLES = frozenset({"citation_title", "dc.title", "dcterms.title"})
_META_IDENTIFIERS = frozenset({"dc.identifier", "dcterms.identifier"})


def _meta_stated(root: etree._Element) -> tuple[tuple[str, str, str], ...]:
    """The ids and titles the page's ``<meta>`` elements state: ``(kind, value, via)``."""
    out: list[tuple[str, str, str]] = []
    for el in root.iter("meta"):
        name = (el.get("name") or "").strip().lower()
        content = _collapse(el.get("content") or "")
        if not content:
            continue
        via = f"HTML meta {name}"
        if name in _META_IDS:
            out.append((_META_IDS[name], content, via))
        elif name in _META_TITLES:
            out.append(("title", content, via))
        elif name in _META_IDENTIFIERS:
            parsed = identifier_kind(content, el.get("scheme") or "")
            if parsed is not None:
                out.append((parsed[0], parsed[1], via))
    return tuple(out)


def extract_html(body: bytes, charset: str | None) -> Extracted:
    """Render the visible text of an HTML or XHTML body."""
    encoding = sniff_html_charset(body, charset)
    text_in, codec = decode_text(body, encoding, kind="html")
    source = _XML_DECL.sub("", text_in, count=1)

    title: str | None = None
    stated: tuple[tuple[str, str, str], ...] = ()
    flow = _Flow()
    if source.strip(" \t\n\f\r"):
        parser = lxml.html.HTMLParser()
        try:
            root = lxml.html.document_fromstring(source, parser=parser)
        except (etree.ParserError, etree.XMLSyntaxError, ValueError) as exc:
            raise AcquireError(f"html: cannot parse document: {first_line(exc)}") from exc
        # libxml2 recovers from ordinary tag soup, but past its nesting limit it drops
        # content silently; that shows only as a fatal entry in the error log.
        fatal = [e for e in parser.error_log if e.level == etree.ErrorLevels.FATAL]
        if fatal:
            raise AcquireError(f"html: cannot parse document: {fatal[0].message}", line=fatal[0].line)
        head_title = root.find("head/title")
        if head_title is not None:
            title = _collapse(head_title.text_content()) or None
        stated = _meta_stated(root)
        flow.walk(root)
        flow.flush()

    starts: list[int] = []
    ends: list[int] = []
    pos = 0
    for line in flow.lines:
        starts.append(pos)
        pos += len(line)
        ends.append(pos)
        pos += 1
    text = "\n".join(flow.lines)
    sections = _sections(flow, starts, ends, len(text))
    return Extracted(
        text=text,
        title=title,
        paper=None,
        sections=sections or None,
        pages=None,
        kind="html",
        access=None,
        origin=None,
        detail=f"html: {len(sections)} sections, {len(text)} chars ({codec})",
        stated=stated,
    )
