"""JATS XML (PubMed Central ``.nxml``): readable text, a section map, paper ids.

Parsing is hardened against hostile XML: no DTD is loaded, no entity is
resolved (an undeclared or external entity reference stays in the text as its
literal ``&name;``, so nothing is read from disk and nothing expands), no
network access, and libxml2's default size and depth limits stay on
(``huge_tree=False``).  A ``<pmc-articleset>`` wrapper is accepted; its first
``<article>`` is used.  A charset from the Content-Type header overrides the
XML declaration (RFC 7303).

Text layout: blocks joined by a blank line (``"\\n\\n"``), in this order:

1. the ``article-title``;
2. each ``<abstract>`` of ``article-meta`` (not ``trans-abstract``), headed
   by its own ``<title>``, else ``"Abstract"`` (``"Abstract (<type>)"`` for a
   typed one without a title);
3. the ``<body>``;
4. the figures and tables of a ``<floats-group>`` (PMC puts many articles'
   floating tables there, outside the body).

Back matter (references, acknowledgements) and sub-articles are left out.

Within a block, runs of XML whitespace (space, tab, CR, LF; not NBSP) become
one space, as XML renderings do; ``<preformat>`` and ``<code>`` stay verbatim.
Inline markup (italic, xref markers, sup/sub, footnote references) is kept as
its text.  In ``<alternatives>`` the TeX form is skipped when another form
has text.  Headings are blocks of their own: a ``<sec>`` heading is its
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

from . import AcquireError, Extracted

__all__ = ["extract_jats", "paper_ids", "safe_xml_parser"]

_XML_SPACE = re.compile(r"[ \t\r\n]+")
_SEP = "\n\n"
_SKIP = frozenset(
    {
        "label",  # consumed by the heading or caption that owns it
        "graphic",
        "inline-graphic",
        "media",
        "object-id",
        "sec-meta",
        "ref-list",
    }
)
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
_PMCID = re.compile(r"(?:PMC)?(\d+)", re.IGNORECASE)


def safe_xml_parser(encoding: str | None = None) -> etree.XMLParser:
    """An lxml parser that never loads DTDs, resolves entities or uses the network.

    ``encoding`` overrides the document's own declaration when given.
    """
    return etree.XMLParser(
        encoding=encoding,
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        attribute_defaults=False,
        huge_tree=False,
    )


def _local(el: etree._Element) -> str | None:
    """Element name, or ``None`` for comments and processing instructions."""
    if isinstance(el, etree._Entity):
        return None
    tag = el.tag
    if not isinstance(tag, str):
        return None
    return etree.QName(tag).localname if tag.startswith("{") else tag


def _collapse(raw: str) -> str:
    return _XML_SPACE.sub(" ", raw).strip(" ")


def _raw_text(el: etree._Element) -> str:
    """All text under ``el`` as inline text: skips, alternatives and entities applied."""
    out: list[str] = []
    _gather(el, out)
    return "".join(out)


def _gather(el: etree._Element, out: list[str]) -> None:
    if el.text:
        out.append(el.text)
    children = list(el)
    if _local(el) == "alternatives":
        children = _pick_alternatives(children)
    for child in children:
        if isinstance(child, etree._Entity):
            out.append(child.text or "")  # the literal "&name;"
        else:
            name = _local(child)
            if name is not None and name not in _SKIP:
                if name == "break":
                    out.append(" ")
                else:
                    _gather(child, out)
        if child.tail:
            out.append(child.tail)


def _pick_alternatives(children: list[etree._Element]) -> list[etree._Element]:
    others = [c for c in children if _local(c) != "tex-math"]
    if any(_collapse(_raw_text(c)) for c in others):
        return others
    return children


def _inline(el: etree._Element) -> str:
    return _collapse(_raw_text(el))


def _child(el: etree._Element, name: str) -> etree._Element | None:
    for child in el:
        if _local(child) == name:
            return child
    return None


def _heading(el: etree._Element) -> str:
    """``<label>`` and ``<title>`` of ``el`` joined by a space (either may be absent)."""
    parts = []
    for name in ("label", "title"):
        child = _child(el, name)
        if child is not None:
            text = _inline(child)
            if text:
                parts.append(text)
    return " ".join(parts)


@dataclass
class _Builder:
    """Collects blocks, their offsets, and section ranges."""

    blocks: list[str] = field(default_factory=list)
    size: int = 0
    pieces: list[str] = field(default_factory=list)
    prefix: str = ""
    sections: list[tuple[str, int, int]] = field(default_factory=list)

    def emit(self, block: str, *, verbatim: bool = False) -> int | None:
        """Append a block (led by any pending label); return its start, or ``None``."""
        if not verbatim:
            block = _collapse(block)
        if not block.strip(" \t\r\n"):
            return None
        if self.prefix:
            block = f"{self.prefix} {block}"
            self.prefix = ""
        return self._append(block)

    def _append(self, block: str) -> int:
        start = self.size + (len(_SEP) if self.blocks else 0)
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
        name = _local(el)
        if name is None or name in _SKIP:
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
            heading = _heading(el)
            rest = [c for c in el if _local(c) not in ("label", "title")]
            if heading.strip():
                self.section(heading, rest)
            else:
                self.emit(heading)  # only Unicode spaces (NBSP): text, but no section
                for child in rest:
                    self.flow(child)
        elif name in _VERBATIM:
            self.emit(_raw_text(el), verbatim=True)
        elif name == "table":
            rows = []
            for row in el.iter("{*}tr"):
                cells = [_inline(c) for c in row if _local(c) in ("td", "th")]
                if any(cells):
                    rows.append(" | ".join(cells))
            self.emit("\n".join(rows), verbatim=True)
        else:
            if name in _CAPTIONED:
                label = _child(el, "label")
                if label is not None:
                    self.prefix = " ".join(p for p in (self.prefix, _inline(label)) if p)
            self.flow_children(el)
            self.flush()
            self.settle()
        self.flush()


def _article(root: etree._Element) -> etree._Element:
    name = _local(root)
    if name == "article":
        return root
    if name == "pmc-articleset":
        for child in root:
            if _local(child) == "article":
                return child
        raise AcquireError("jats: <pmc-articleset> holds no <article>")
    raise AcquireError(f"jats: not a JATS article (root element <{name}>)", root=name)


def _find(el: etree._Element | None, *path: str) -> etree._Element | None:
    for name in path:
        if el is None:
            return None
        el = _child(el, name)
    return el


def paper_ids(article: etree._Element) -> dict[str, str | None] | None:
    """``{"pmid", "doi", "pmcid"}`` from ``front/article-meta/article-id``.

    The first id of each type wins; ``pmc``/``pmcid`` values become ``"PMC"``
    plus digits (a value that is not digits after an optional ``PMC`` is
    ignored).  ``None`` when none of the three is stated.
    """
    meta = _find(article, "front", "article-meta")
    ids: dict[str, str | None] = {"pmid": None, "doi": None, "pmcid": None}
    if meta is None:
        return None
    for el in meta:
        if _local(el) != "article-id":
            continue
        kind = (el.get("pub-id-type") or "").strip().lower()
        value = _collapse(_raw_text(el))
        if not value:
            continue
        if kind == "pmid" and ids["pmid"] is None:
            ids["pmid"] = value
        elif kind == "doi" and ids["doi"] is None:
            ids["doi"] = value
        elif kind in ("pmc", "pmcid") and ids["pmcid"] is None:
            match = _PMCID.fullmatch(value)
            if match:
                ids["pmcid"] = "PMC" + match.group(1)
    return ids if any(ids.values()) else None


def extract_jats(body: bytes, charset: str | None) -> Extracted:
    """Parse a JATS document and render title, abstract(s) and body."""
    try:
        parser = safe_xml_parser(charset)
    except LookupError as exc:
        raise AcquireError(f"jats: unknown charset {charset!r}", charset=charset) from exc
    try:
        root = etree.fromstring(body, parser)
    except (etree.XMLSyntaxError, LookupError, ValueError) as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise AcquireError(f"jats: malformed XML: {message}") from exc
    article = _article(root)

    builder = _Builder()
    meta = _find(article, "front", "article-meta")
    title_el = _find(meta, "title-group", "article-title")
    title = _inline(title_el) if title_el is not None else ""
    builder.emit(title)

    abstracts = [el for el in meta if _local(el) == "abstract"] if meta is not None else []
    for abstract in abstracts:
        own = _child(abstract, "title")
        heading = _inline(own) if own is not None else ""
        if not heading.strip():
            kind = abstract.get("abstract-type")
            heading = f"Abstract ({kind})" if kind else "Abstract"
        builder.section(heading, [c for c in abstract if _local(c) != "title"])

    body_el = _child(article, "body")
    before = builder.size
    if body_el is not None:
        builder.flow_children(body_el)
        builder.flush()
    has_body = builder.size > before
    for name in ("floats-group", "floats-wrap"):
        floats = _child(article, name)
        if floats is not None:
            for child in floats:
                builder.flow(child)
            builder.flush()

    text = _SEP.join(builder.blocks)
    sections = tuple(builder.sections) or None
    if has_body:
        access: str | None = "full_text"
    elif abstracts:
        access = "abstract"
    else:
        access = None
    return Extracted(
        text=text,
        title=title or None,
        paper=paper_ids(article),
        sections=sections,
        pages=None,
        kind="jats",
        access=access,
        origin="pmc",
        detail=f"jats: {len(sections or ())} sections, {len(text)} chars",
    )
