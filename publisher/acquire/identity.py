"""A snapshot's paper ids and title, each with what it rests on (CONTRACT section 18).

Three bases, strongest first:

* ``document``: the document states it about itself: JATS ``article-id``/``article-title``;
  HTML ``citation_doi``, ``citation_pmid``, ``citation_pmcid``, ``citation_title``,
  ``dc.identifier``, ``dc.title`` meta and ``<title>``; PDF XMP ``prism:doi``, ``dc:identifier``,
  ``dc:title``, the document information ``/Title``, and a DOI printed on page 1 with its label
  (``doi:`` or a ``doi.org`` link);
* ``registry_url``: the address asked for, or answered from, is a registry's canonical article
  URL (PubMed Central, PubMed, Europe PMC, the DOI resolvers);
* ``asserted``: the acquirer's word (``--pmid``, ``--doi``, ``--pmcid``, ``--title``), which
  nothing confirms. It is kept and shown with a mark, and never joins a work with another
  snapshot (:meth:`publisher.kernel.models.Snapshot.derived_ids`).

One kind stated twice with different values by the document is no derivation (the document is
ambiguous, and the note says so); the document and a registry URL naming different values, or an
assertion contradicting either, is refused. A title the document does not state falls back to
its first heading, then its first line: never the bare URL when the text has one.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

from ..kernel.errors import UsageError
from ..kernel.ids import IdError, canonical_id, same_id
from ..kernel.models import Basis
from . import Extracted

__all__ = [
    "Derived",
    "derive_identity",
    "registry_ids",
    "printed_dois",
    "xmp_stated",
    "identifier_kind",
    "TITLE_MAX",
]

TITLE_MAX = 300
"""Longest fallback title (a first line) kept, in code points; a longer line is cut at a space."""

_KINDS = ("pmid", "doi", "pmcid")
_PMCID_PATH = re.compile(r"/(?:pmc/)?articles/(PMC[0-9]+)/?", re.IGNORECASE)
_PUBMED_PATH = re.compile(r"/(?:pubmed/)?([0-9]{1,12})/?")
_EPMC_PATH = re.compile(
    r"/(?:article|abstract)/(MED|PMC)/((?:PMC)?[0-9]{1,12})/?|/articles?/(PMC[0-9]+)/?", re.IGNORECASE
)
_EBI_REST = re.compile(r"/europepmc/webservices/rest/(PMC[0-9]+)/fullTextXML/?", re.IGNORECASE)
_PRINTED_DOI = re.compile(
    r"(?:\bdoi\s*:?\s*|\bhttps?://(?:dx\.)?doi\.org/)(10\.[0-9]{4,9}/[!#-&(-;=?-~]+)", re.IGNORECASE
)
"""A DOI printed with its label; the suffix is printable ASCII but for quotes and angle brackets
(:func:`publisher.kernel.ids.canonical_id`), so it ends at the first character a DOI cannot hold."""
_DOI_TAIL = ".,;:)]}"
_DOT_SEGMENT = re.compile(r"(?:^|/)(?:\.|%2e){1,2}(?:/|$)", re.IGNORECASE)
"""A ``.`` or ``..`` path segment, written or percent-encoded (RFC 3986 section 5.2.4)."""
_XMP_START = re.compile(rb"<x(?:a?p)?:xmpmeta\b")
_XMP_END = re.compile(rb"</x(?:a?p)?:xmpmeta\s*>")
_METADATA_STREAM = re.compile(rb"/Type\s*/Metadata\b")
_STREAM = re.compile(rb"stream\r?\n")
_MAX_XMP = 1 << 20
"""Largest XMP packet read (bytes, decompressed): metadata, never a document's body."""
_MAX_STREAMS = 16


@dataclass(frozen=True)
class Derived:
    """What a snapshot records of its identity: the ``paper`` ids, the ``title`` and ``identity``
    (each id and the title with its basis), and notes saying what could not be derived."""

    paper: dict[str, str | None] | None
    title: str | None
    identity: dict[str, dict[str, str]]
    notes: tuple[str, ...] = field(default=())


def _canonical(kind: str, value: str, notes: list[str]) -> str | None:
    """``value`` in its kind's stored form, or None (with a note) when it is not of that form: a
    document stating ``12345abc`` as its PMID, or a DOI with a zero-width space, names no paper."""
    try:
        return canonical_id(kind, value)
    except IdError:
        notes.append(f"the document states {kind} {value.strip()[:80]!r}, which is not a {kind}: none derived")
        return None


def identifier_kind(value: str, scheme: str = "") -> tuple[str, str] | None:
    """``(kind, value)`` of a ``dc.identifier``-like value (``doi:…``, a DOI link, ``10.…``,
    ``pmid:…``, ``PMC…``), else None: an identifier of another scheme (an ISSN, a URL) is no id."""
    text = value.strip()
    low = text.lower()
    scheme = scheme.strip().lower()
    for kind, prefixes in (("pmid", ("pmid:", "info:pmid/")), ("pmcid", ("pmcid:", "pmc:"))):
        for prefix in prefixes:
            if low.startswith(prefix):
                text = text[len(prefix) :].strip()
                return (kind, text) if text else None
    if low.startswith("info:doi/"):
        text = text[len("info:doi/") :]
    if scheme in ("pmid", "pmcid"):
        return (scheme, text) if text else None
    try:
        return ("doi", canonical_id("doi", text))
    except IdError:
        pass
    if re.fullmatch(r"PMC[0-9]{1,12}", text, re.IGNORECASE):
        return ("pmcid", text)
    return None


def registry_ids(url: str) -> list[tuple[str, str, str]]:
    """The ids a registry's canonical article URL names: ``[(kind, value, via)]`` (empty for any
    other address). Only the registries' own hosts count; a path merely shaped like one does not."""
    try:
        parts = urlsplit(url.strip())
        host = (parts.hostname or "").rstrip(".").lower()
        port = parts.port
    except ValueError:
        return []
    if parts.scheme.lower() not in ("http", "https") or port not in (None, 80, 443) or parts.username:
        return []
    path = unquote(parts.path)
    via = f"{host} article URL"
    if host in ("doi.org", "dx.doi.org", "www.doi.org"):
        if _DOT_SEGMENT.search(parts.path) or _DOT_SEGMENT.search(path):
            return []  # the client (or the resolver) removes dot segments: another DOI is asked for
        try:
            return [("doi", canonical_id("doi", path.lstrip("/")), via)]
        except IdError:
            return []
    if host == "pmc.ncbi.nlm.nih.gov" or (host == "www.ncbi.nlm.nih.gov" and path.lower().startswith("/pmc/")):
        match = _PMCID_PATH.fullmatch(path)
        return [("pmcid", canonical_id("pmcid", match.group(1)), via)] if match else []
    if host == "pubmed.ncbi.nlm.nih.gov" or (host == "www.ncbi.nlm.nih.gov" and path.startswith("/pubmed/")):
        match = _PUBMED_PATH.fullmatch(path)
        if match is None or (host == "www.ncbi.nlm.nih.gov") != path.startswith("/pubmed/"):
            return []
        return [("pmid", canonical_id("pmid", match.group(1)), via)]
    if host in ("europepmc.org", "www.europepmc.org"):
        match = _EPMC_PATH.fullmatch(path)
        if match is None:
            return []
        if match.group(3):
            return [("pmcid", canonical_id("pmcid", match.group(3)), via)]
        kind = "pmid" if match.group(1).upper() == "MED" else "pmcid"
        try:
            return [(kind, canonical_id(kind, match.group(2)), via)]
        except IdError:
            return []
    if host == "www.ebi.ac.uk":
        match = _EBI_REST.fullmatch(path)
        return [("pmcid", canonical_id("pmcid", match.group(1)), via)] if match else []
    return []


def printed_dois(page_text: str) -> list[str]:
    """Every DOI printed with its label (``doi:``, ``DOI``, a ``doi.org`` link) in ``page_text``,
    canonical, in order, without repeats; a bare ``10.…`` string (a reference's) is not one."""
    found: list[str] = []
    for match in _PRINTED_DOI.finditer(page_text):
        value = match.group(1).rstrip(_DOI_TAIL)
        try:
            doi = canonical_id("doi", value)
        except IdError:
            continue
        if not any(same_id("doi", doi, seen) for seen in found):
            found.append(doi)
    return found


def _xmp_packets(body: bytes) -> list[bytes]:
    """XMP packets of a PDF's bytes: written in the clear, or in a FlateDecode metadata stream."""
    packets: list[bytes] = []
    start = _XMP_START.search(body)
    if start is not None:
        end = _XMP_END.search(body, start.end())
        if end is not None and end.end() - start.start() <= _MAX_XMP:
            packets.append(body[start.start() : end.end()])
    if packets:
        return packets
    for count, marker in enumerate(_METADATA_STREAM.finditer(body)):
        if count >= _MAX_STREAMS:
            break
        stream = _STREAM.search(body, marker.end(), marker.end() + 4096)
        if stream is None or b"FlateDecode" not in body[max(0, marker.start() - 512) : stream.start()]:
            continue
        inflater = zlib.decompressobj()
        try:
            data = inflater.decompress(body[stream.end() : stream.end() + _MAX_XMP], _MAX_XMP)
        except zlib.error:
            continue
        start = _XMP_START.search(data)
        end = _XMP_END.search(data, start.end()) if start is not None else None
        if start is not None and end is not None:
            packets.append(data[start.start() : end.end()])
    return packets


_XMP_FIELDS = {
    ("http://prismstandard.org/namespaces/basic/2.0/", "doi"): ("doi", "XMP prism:doi"),
    ("http://prismstandard.org/namespaces/basic/3.0/", "doi"): ("doi", "XMP prism:doi"),
    ("http://purl.org/dc/elements/1.1/", "identifier"): ("identifier", "XMP dc:identifier"),
    ("http://purl.org/dc/elements/1.1/", "title"): ("title", "XMP dc:title"),
}
_RDF_LI = "{http://www.w3.org/1999/02/22-rdf-syntax-ns#}li"
_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"


def xmp_stated(body: bytes) -> list[tuple[str, str, str]]:
    """The ids and title a PDF's XMP metadata states: ``[(kind, value, via)]``.

    The packet is read from the file's bytes (PDFium offers no XMP) and parsed without DTDs,
    entities or the network; a packet that does not parse states nothing.
    """
    from lxml import etree

    from .jats import safe_xml_parser

    out: list[tuple[str, str, str]] = []
    for packet in _xmp_packets(body):
        try:
            root = etree.fromstring(packet, safe_xml_parser())
        except (etree.XMLSyntaxError, ValueError):
            continue
        for el in root.iter():
            if not isinstance(el.tag, str):
                continue
            qname = etree.QName(el)
            known = _XMP_FIELDS.get((qname.namespace or "", qname.localname))
            if known is None:
                continue
            kind, via = known
            items = [li for li in el.iter(_RDF_LI)] or [el]
            if kind == "title":
                default = [li for li in items if li.get(_XML_LANG) == "x-default"] or items[:1]
                items = default
            for item in items:
                value = " ".join("".join(item.itertext()).split())
                if not value:
                    continue
                if kind == "identifier":
                    parsed = identifier_kind(value)
                    if parsed is not None:
                        out.append((parsed[0], parsed[1], via))
                else:
                    out.append((kind, value, via))
    return out


_TITLE_VIA = {"jats": "JATS article-title", "html": "HTML <title>", "pdf": "PDF document information /Title"}


def _fallback_title(doc: Extracted) -> tuple[str, str] | None:
    """The document's first heading, else its first line (cut at a space past :data:`TITLE_MAX`)."""
    for title, _, _ in doc.sections or ():
        if title.strip():
            return " ".join(title.split()), "first heading"
    for line in doc.text.splitlines():
        shown = " ".join(line.split())
        if shown:
            if len(shown) > TITLE_MAX:
                cut = shown[:TITLE_MAX].rsplit(" ", 1)[0] or shown[:TITLE_MAX]
                shown = cut + "…"
            return shown, "first line"
    return None


def _one(
    kind: str, candidates: list[tuple[str, str]], what: str, notes: list[str], *, refuse: bool
) -> tuple[str, str] | None:
    """The single value ``candidates`` agree on as ``(value, via)``; several values are ambiguous."""
    values: list[tuple[str, str]] = []
    for value, via in candidates:
        if not any(same_id(kind, value, v) or value == v for v, _ in values):
            values.append((value, via))
    if len(values) <= 1:
        return values[0] if values else None
    listed = ", ".join(repr(v) for v, _ in values[:3])
    if refuse:
        raise UsageError(f"{what} names several {kind}s ({listed}); none was stored", field=kind)
    notes.append(f"the document states several {kind}s ({listed}): none derived")
    return None


def _check_given(kind: str, given: str | None) -> str | None:
    if not given:
        return None
    try:
        return canonical_id(kind, given)
    except IdError as exc:
        raise UsageError(f"--{kind}: {exc}", field=kind) from None


def derive_identity(
    doc: Extracted, *, urls: tuple[str, ...], given: dict[str, str | None], given_title: str | None
) -> Derived:
    """Each paper id and the title of ``doc`` with its basis, from the document, the registry URLs
    among ``urls`` (the address asked for and the one that answered) and what the caller gave.

    Raises :class:`UsageError` (field: the id's kind) when the document and a registry URL disagree,
    or when a given id or title contradicts a derived one.
    """
    notes: list[str] = []
    stated: dict[str, list[tuple[str, str]]] = {k: [] for k in (*_KINDS, "title")}
    for kind, value in (doc.paper or {}).items():
        if kind in _KINDS and value and (canonical := _canonical(kind, value, notes)) is not None:
            stated[kind].append((canonical, f"{doc.kind.upper()} article-id"))
    for kind, value, via in doc.stated:
        if kind in _KINDS and (canonical := _canonical(kind, value, notes)) is not None:
            stated[kind].append((canonical, via))
        elif kind == "title" and value.strip():
            stated["title"].append((" ".join(value.split()), via))
    if doc.title and doc.title.strip():
        stated["title"].append((doc.title, _TITLE_VIA.get(doc.kind, f"{doc.kind} title")))
    registry: dict[str, list[tuple[str, str]]] = {k: [] for k in _KINDS}
    for url in dict.fromkeys(urls):
        for kind, value, via in registry_ids(url):
            registry[kind].append((value, via))

    identity: dict[str, dict[str, str]] = {}
    paper: dict[str, str | None] = {}
    for kind in _KINDS:
        from_doc = _one(kind, stated[kind], "the document", notes, refuse=False)
        from_url = _one(kind, registry[kind], "the registry URLs", notes, refuse=True)
        asked = _check_given(kind, given.get(kind))
        if from_doc and from_url and not same_id(kind, from_doc[0], from_url[0]):
            raise UsageError(
                f"the document states {kind} {from_doc[0]!r} but its registry URL names {from_url[0]!r}", field=kind
            )
        entry: dict[str, str] | None = None
        if from_doc is not None:
            entry = {"value": from_doc[0], "basis": Basis.DOCUMENT.value, "via": from_doc[1]}
        elif from_url is not None:
            entry = {"value": from_url[0], "basis": Basis.REGISTRY_URL.value, "via": from_url[1]}
        if entry is not None and asked is not None and not same_id(kind, entry["value"], asked):
            whose = "the document, which states" if from_doc is not None else "its registry URL, which names"
            raise UsageError(f"--{kind} {asked!r} contradicts {whose} {entry['value']!r}", field=kind)
        if entry is None and asked is not None:
            entry = {"value": asked, "basis": Basis.ASSERTED.value, "via": f"command line --{kind}"}
        paper[kind] = entry["value"] if entry is not None else None
        if entry is not None:
            identity[kind] = entry

    title = _title(doc, stated["title"], given_title, notes)
    if title is not None:
        identity["title"] = title
    return Derived(
        paper=paper if any(paper.values()) else None,
        title=title["value"] if title is not None else None,
        identity=identity,
        notes=tuple(notes),
    )


def _title(doc: Extracted, stated: list[tuple[str, str]], given: str | None, notes: list[str]) -> dict[str, str] | None:
    """The title entry: what the document states (an assertion must equal one of its titles),
    else the assertion, else the first heading or line."""
    if stated:
        if given is not None and all(given != value for value, _ in stated):
            raise UsageError(
                f"--title {given!r} contradicts the document, which states {stated[0][0]!r}", field="title"
            )
        value, via = next(((v, w) for v, w in stated if v == given), stated[0])
        return {"value": value, "basis": Basis.DOCUMENT.value, "via": via}
    if given is not None:
        return {"value": given, "basis": Basis.ASSERTED.value, "via": "command line --title"}
    fallback = _fallback_title(doc)
    if fallback is None:
        notes.append("the text states no title")
        return None
    return {"value": fallback[0], "basis": Basis.DOCUMENT.value, "via": fallback[1]}
