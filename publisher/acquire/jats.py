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
   floating tables there, outside the body);
5. the back matter that says who paid, who helped and who has interests, each
   a titled section: ``<ack>``, ``<sec>`` (e.g. "Competing interests"),
   ``<notes>`` and ``<fn-group>`` of ``<back>`` in document order; then
   article-meta's ``<funding-group>`` as a section "Funding" (its
   ``<funding-statement>`` blocks, else one line per ``<award-group>``).  An
   untitled ``<ack>``, ``<notes>`` or ``<fn-group>`` is titled
   "Acknowledgements", "Notes" or "Footnotes".

References, glossaries, appendices and sub-articles are left out.

Within a block, the layout and the section map are
:mod:`publisher.acquire._jats_flow`'s.
"""

from __future__ import annotations

import re

from lxml import etree

from . import AcquireError, Extracted
from ._jats_flow import SEP, Builder, collapse, first_child, heading_of, inline, local_name, raw_text

__all__ = ["extract_jats", "paper_ids", "safe_xml_parser"]

_PMCID = re.compile(r"(?:PMC)?(\d+)", re.IGNORECASE)
_BACK = {"ack": "Acknowledgements", "notes": "Notes", "fn-group": "Footnotes"}
"""Back-matter elements rendered as sections, with the title an untitled one gets."""


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


def _article(root: etree._Element) -> etree._Element:
    name = local_name(root)
    if name == "article":
        return root
    if name == "pmc-articleset":
        for child in root:
            if local_name(child) == "article":
                return child
        raise AcquireError("jats: <pmc-articleset> holds no <article>")
    raise AcquireError(f"jats: not a JATS article (root element <{name}>)", root=name)


def _find(el: etree._Element | None, *path: str) -> etree._Element | None:
    for name in path:
        if el is None:
            return None
        el = first_child(el, name)
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
        if local_name(el) != "article-id":
            continue
        kind = (el.get("pub-id-type") or "").strip().lower()
        value = collapse(raw_text(el))
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


def _words(el: etree._Element) -> list[str]:
    """An award's parts word by word (a name's surname and given names apart), registry ids left out."""
    if local_name(el) in (None, "institution-id") or el.get("content-type") == "fundref-id":
        return []
    words = collapse(el.text or "").split(" ")
    for c in el:
        words += _words(c) + collapse(c.tail or "").split(" ")
    return [w for w in words if w]


def _back_matter(builder: Builder, back: etree._Element | None, funding: etree._Element | None) -> None:
    """Acknowledgements, back sections, notes and footnotes, then funding, as titled sections."""
    for el in back if back is not None else ():
        name = local_name(el)
        if name == "sec":
            builder.flow(el)
        elif name in _BACK:
            body = [c for c in el if local_name(c) not in ("label", "title")]
            if any(inline(c) for c in body):
                builder.section(heading_of(el).strip() or _BACK[name], body)
    if funding is None:
        return
    lines = [inline(el) for el in funding.iter("{*}funding-statement")] or [
        ", ".join(filter(None, (" ".join(_words(c)) for c in award)))
        for award in funding
        if local_name(award) == "award-group"
    ]
    if any(lines):
        builder.flush()
        builder.settle()
        start = builder.emit("Funding")
        for line in lines:
            builder.emit(line)
        if start is not None:
            builder.sections.append(("Funding", start, builder.size))


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

    builder = Builder()
    meta = _find(article, "front", "article-meta")
    title_el = _find(meta, "title-group", "article-title")
    title = inline(title_el) if title_el is not None else ""
    builder.emit(title)

    abstracts = [el for el in meta if local_name(el) == "abstract"] if meta is not None else []
    for abstract in abstracts:
        own = first_child(abstract, "title")
        heading = inline(own) if own is not None else ""
        if not heading.strip():
            kind = abstract.get("abstract-type")
            heading = f"Abstract ({kind})" if kind else "Abstract"
        builder.section(heading, [c for c in abstract if local_name(c) != "title"])

    body_el = first_child(article, "body")
    before = builder.size
    if body_el is not None:
        builder.flow_children(body_el)
        builder.flush()
    has_body = builder.size > before
    for name in ("floats-group", "floats-wrap"):
        floats = first_child(article, name)
        if floats is not None:
            for child in floats:
                builder.flow(child)
            builder.flush()

    _back_matter(builder, first_child(article, "back"), _find(meta, "funding-group"))

    text = SEP.join(builder.blocks)
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
