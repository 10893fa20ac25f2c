"""JATS markup to text blocks: the inline flow, block elements, headings and the section map.

The document-level order of the blocks (title, abstracts, body, floats, back matter) is
:mod:`publisher.acquire.jats`'s; this module renders element trees into blocks.

Within a block, runs of XML whitespace (space, tab, CR, LF; not NBSP) become
one space, as XML renderings do; ``<preformat>`` and ``<code>`` stay verbatim.
Inline markup (italic, xref markers, sup/sub, footnote references) is kept as
its text.  What the page does not show gives no text: ``<alt-text>``, ``<long-desc>``, MathML
``annotation``/``annotation-xml``, ``<glyph-data>``, and elements of a namespace other than
MathML (an XHTML ``<script>`` smuggled into a paragraph).  In ``<alternatives>`` the TeX
form is skipped when another form has text.  Headings are blocks of their own: a ``<sec>`` heading is its
``<label>`` and ``<title>`` joined by a space.  Figures, tables, boxed text and
supplementary material contribute their label and caption; a table's cells
are included, one row per line with cells joined by ``" | "``, the whole table
one block; table footnotes follow as blocks.

Sections: one entry per ``<sec>`` with a heading and per abstract.  Decision
on nesting: the title is the section's own heading, not a "Parent > Child"
path, so every title is exactly the text at its range start; nesting is
carried by the ranges themselves (a child range lies inside its parent's).
A section runs from its heading's first character to the end of its last
block.  A ``<sec>`` whose label and title are empty (or only Unicode spaces
such as NBSP) contributes its text but no entry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lxml import etree

__all__ = ["SEP", "Builder", "local_name", "collapse", "raw_text", "inline", "first_child", "heading_of"]

_XML_SPACE = re.compile(r"[ \t\r\n]+")
SEP = "\n\n"
_SKIP = frozenset(
    {
        "label",  # consumed by the heading or caption that owns it
        "graphic",
        "inline-graphic",
        "media",
        "object-id",
        "sec-meta",
        "ref-list",
        # Not shown on the page: descriptions for screen readers, MathML annotations, glyph bitmaps.
        "alt-text",
        "long-desc",
        "annotation",
        "annotation-xml",
        "glyph-data",
    }
)
_MATHML = "http://www.w3.org/1998/Math/MathML"
"""The one namespace whose elements render as text; JATS's own elements have none."""
_VERBATIM = frozenset({"preformat", "code"})
# Elements that break the flow of inline text into separate blocks.
_BLOCK = frozenset(
    {
        "p", "sec", "list", "list-item", "def-list", "def-item", "def",
        "disp-quote", "boxed-text", "statement", "fig", "fig-group",
        "table-wrap", "table-wrap-group", "table-wrap-foot", "caption",
        "title", "supplementary-material", "disp-formula", "disp-formula-group",
        "fn", "fn-group", "speech", "verse-group", "verse-line", "attrib",
        "app", "app-group", "glossary", "ack", "notes", "array", "table",
        "preformat", "code", "question", "answer", "explanation",
    }
)  # fmt: skip
_CAPTIONED = frozenset(
    {"fig", "table-wrap", "boxed-text", "supplementary-material", "statement",
     "disp-formula", "fig-group", "table-wrap-group", "list-item", "fn", "app"}
)  # fmt: skip


def local_name(el: etree._Element) -> str | None:
    """Element name, or ``None`` for comments and processing instructions."""
    if isinstance(el, etree._Entity):
        return None
    tag = el.tag
    if not isinstance(tag, str):
        return None
    return etree.QName(tag).localname if tag.startswith("{") else tag


def _skipped(el: etree._Element) -> bool:
    """No text from ``el``: a comment, a skipped element, or one of a foreign namespace (XHTML, SVG...)."""
    name = local_name(el)
    if name is None or name in _SKIP:
        return True
    tag = el.tag
    return isinstance(tag, str) and tag.startswith("{") and not tag.startswith("{" + _MATHML + "}")


def collapse(raw: str) -> str:
    return _XML_SPACE.sub(" ", raw).strip(" ")


def raw_text(el: etree._Element) -> str:
    """All text under ``el`` as inline text: skips, alternatives and entities applied."""
    out: list[str] = []
    _gather(el, out)
    return "".join(out)


def _gather(el: etree._Element, out: list[str]) -> None:
    if el.text:
        out.append(el.text)
    children = list(el)
    if local_name(el) == "alternatives":
        children = _pick_alternatives(children)
    for child in children:
        if isinstance(child, etree._Entity):
            out.append(child.text or "")  # the literal "&name;"
        else:
            name = local_name(child)
            if not _skipped(child):
                if name == "break":
                    out.append(" ")
                else:
                    _gather(child, out)
        if child.tail:
            out.append(child.tail)


def _pick_alternatives(children: list[etree._Element]) -> list[etree._Element]:
    others = [c for c in children if local_name(c) != "tex-math"]
    if any(collapse(raw_text(c)) for c in others):
        return others
    return children


def inline(el: etree._Element) -> str:
    return collapse(raw_text(el))


def first_child(el: etree._Element, name: str) -> etree._Element | None:
    for child in el:
        if local_name(child) == name:
            return child
    return None


def heading_of(el: etree._Element) -> str:
    """``<label>`` and ``<title>`` of ``el`` joined by a space (either may be absent)."""
    parts = []
    for name in ("label", "title"):
        child = first_child(el, name)
        if child is not None:
            text = inline(child)
            if text:
                parts.append(text)
    return " ".join(parts)


@dataclass
class Builder:
    """Collects blocks, their offsets, and section ranges."""

    blocks: list[str] = field(default_factory=list)
    size: int = 0
    pieces: list[str] = field(default_factory=list)
    prefix: str = ""
    sections: list[tuple[str, int, int]] = field(default_factory=list)

    def emit(self, block: str, *, verbatim: bool = False) -> int | None:
        """Append a block (led by any pending label); return its start, or ``None``."""
        if not verbatim:
            block = collapse(block)
        if not block.strip(" \t\r\n"):
            return None
        if self.prefix:
            block = f"{self.prefix} {block}"
            self.prefix = ""
        return self._append(block)

    def _append(self, block: str) -> int:
        start = self.size + (len(SEP) if self.blocks else 0)
        self.blocks.append(block)
        self.size = start + len(block)
        return start

    def flush(self) -> None:
        raw = "".join(self.pieces)
        self.pieces.clear()
        self.emit(raw)

    def settle(self) -> None:
        """Emit a label that found no block to lead as a block of its own."""
        if self.prefix:
            prefix, self.prefix = self.prefix, ""
            self._append(prefix)

    def section(self, title: str, body: list[etree._Element]) -> None:
        """Emit a heading block, then ``body`` as flow, and record the range."""
        self.flush()
        self.settle()
        start = self.emit(title)
        if start is None:
            for el in body:
                self.flow(el)
            self.flush()
            return
        index = len(self.sections)
        self.sections.append((title, start, start))  # document order: parent first
        for el in body:
            self.flow(el)
        self.flush()
        self.sections[index] = (title, start, self.size)

    def flow_children(self, el: etree._Element) -> None:
        """The element's own text, then each child in document order with the text after it."""
        if el.text:
            self.pieces.append(el.text)
        for child in el:
            self.flow(child)
            if child.tail:
                self.pieces.append(child.tail)

    def flow(self, el: etree._Element) -> None:
        """Render ``el`` (mixed content) into inline pieces and blocks."""
        if isinstance(el, etree._Entity):
            self.pieces.append(el.text or "")
            return
        name = local_name(el)
        if name is None or _skipped(el):
            return
        if name == "break":
            self.pieces.append(" ")
            return
        if name not in _BLOCK:
            if el.text:
                self.pieces.append(el.text)
            children = list(el)
            if name == "alternatives":
                children = _pick_alternatives(children)
            for child in children:
                self.flow(child)
                if child.tail:
                    self.pieces.append(child.tail)
            return

        self.flush()
        if name == "sec":
            heading = heading_of(el)
            rest = [c for c in el if local_name(c) not in ("label", "title")]
            if heading.strip():
                self.section(heading, rest)
            else:
                self.emit(heading)  # only Unicode spaces (NBSP): text, but no section
                for child in rest:
                    self.flow(child)
        elif name in _VERBATIM:
            self.emit(raw_text(el), verbatim=True)
        elif name == "table":
            rows = []
            for row in el.iter("{*}tr"):
                cells = [inline(c) for c in row if local_name(c) in ("td", "th")]
                if any(cells):
                    rows.append(" | ".join(cells))
            self.emit("\n".join(rows), verbatim=True)
        else:
            if name in _CAPTIONED:
                label = first_child(el, "label")
                if label is not None:
                    self.prefix = " ".join(p for p in (self.prefix, inline(label)) if p)
            self.flow_children(el)
            self.flush()
            self.settle()
        self.flush()
