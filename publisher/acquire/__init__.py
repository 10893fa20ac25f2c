"""Acquisition: turn retrieved bytes into snapshot text, by media type.

Everything here is pure: bytes in, an :class:`Extracted` out, nothing written
anywhere.  The text an extractor returns is what snapshot offsets index into, so
it is never normalized afterwards (no NFC, no whitespace or newline rewriting);
each extractor documents the one deterministic rendering it performs.

Dispatch (:func:`extract`) by media type:

* ``text/plain`` -> :mod:`publisher.acquire.plain` (decoded as served);
* ``text/html``, ``application/xhtml+xml`` -> :mod:`publisher.acquire.html`
  (visible text);
* ``application/xml``, ``text/xml``, ``application/jats+xml`` and any other
  ``+xml`` type whose root is ``<article>`` or ``<pmc-articleset>`` ->
  :mod:`publisher.acquire.jats`;
* ``application/pdf`` (and ``application/octet-stream`` bodies that start
  with the ``%PDF-`` signature) -> :mod:`publisher.acquire.pdf`.

The extractor modules are imported on first use, so importing this package
does not pull in lxml or pypdfium2.  HTTP retrieval lives in
:mod:`publisher.acquire.http`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..kernel.errors import PublisherError

__all__ = [
    "AcquireError",
    "Extracted",
    "check_shown_as_stored",
    "extract",
    "parse_content_type",
]


class AcquireError(PublisherError):
    """Bytes could not be retrieved or turned into text.

    The message is one line; ``context`` holds the facts (url, status, media
    type, limit...) for callers that report structurally.  No closed reason
    code applies to a failed acquisition, so ``reason`` stays ``None``.
    """


@dataclass(frozen=True)
class Extracted:
    """Text derived from one retrieved body, with what the document states.

    ``sections`` and ``pages`` are half-open code-point ranges into ``text``.
    ``access`` and ``origin`` are hints derived from the format (JATS means
    ``pmc``; a JATS body means ``full_text``), ``None`` when nothing follows.
    ``stated`` lists further ids and titles the document states about itself
    (HTML ``citation_*`` meta, PDF XMP, a DOI printed on page 1) as
    ``(kind, value as written, where it was read)``; see
    :mod:`publisher.acquire.identity`.
    """

    text: str
    title: str | None
    paper: dict[str, str | None] | None
    sections: tuple[tuple[str, int, int], ...] | None
    pages: tuple[tuple[int, int, int], ...] | None
    kind: str
    access: str | None
    origin: str | None
    detail: str
    stated: tuple[tuple[str, str, str], ...] = ()


_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_JATS_TYPES = frozenset({"application/xml", "text/xml", "application/jats+xml", "application/x-nxml"})
_PDF_TYPES = frozenset({"application/pdf", "application/x-pdf"})
# PDF readers accept the header anywhere in the first KiB; so does the sniffer.
_PDF_SNIFF_WINDOW = 1024


def parse_content_type(value: str) -> tuple[str, str | None]:
    """Split a Content-Type value into (media type, charset).

    The media type is lowercased without parameters; the charset is the
    ``charset`` parameter lowercased with quotes removed, else ``None``.  An
    empty value yields ``application/octet-stream`` (RFC 9110, 8.3).
    """
    parts = value.split(";")
    media_type = parts[0].strip().lower() or "application/octet-stream"
    charset: str | None = None
    for param in parts[1:]:
        name, sep, raw = param.partition("=")
        if not sep or name.strip().lower() != "charset":
            continue
        raw = raw.strip()
        if len(raw) >= 2 and raw[0] == raw[-1] == '"':
            raw = raw[1:-1]
        charset = raw.strip().lower() or None
        break
    return media_type, charset


def extract(body: bytes, media_type: str, charset: str | None = None, url: str = "") -> Extracted:
    """Derive snapshot text from ``body`` according to its media type.

    ``media_type`` may still carry parameters; a ``charset`` parameter there is
    used when ``charset`` is not given.  ``url`` only enriches error messages.
    Raises :class:`AcquireError` (one-line message) for an unsupported type or
    a body that cannot be decoded or parsed.
    """
    mtype, param_charset = parse_content_type(media_type)
    if charset is None:
        charset = param_charset
    where = f" from {url}" if url else ""

    if mtype == "text/plain":
        from . import plain

        result = plain.extract_plain(body, charset)
    elif mtype in _HTML_TYPES:
        from . import html

        result = html.extract_html(body, charset)
    elif mtype in _JATS_TYPES or mtype.endswith("+xml") or (mtype == "application/octet-stream" and _sniff_jats(body)):
        from . import jats

        result = jats.extract_jats(body, charset)
    elif mtype in _PDF_TYPES or (mtype == "application/octet-stream" and b"%PDF-" in body[:_PDF_SNIFF_WINDOW]):
        from . import pdf

        result = pdf.extract_pdf(body)
    else:
        raise AcquireError(f"unsupported media type {mtype!r}{where}", media_type=mtype, url=url)
    _check_ranges(result)
    return result


_JATS_ROOTS = re.compile(rb"<(?:!DOCTYPE\s+)?(?:article|pmc-articleset)[\s>]")


def _sniff_jats(body: bytes) -> bool:
    """Whether an untyped body (served as octet-stream, e.g. a ``.nxml`` file) is a JATS article."""
    head = body[:4096].lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head.startswith(b"<"):
        return False
    return _JATS_ROOTS.search(head) is not None


def _check_ranges(result: Extracted) -> None:
    """Refuse a result whose text or ranges could not be stored faithfully."""
    try:
        result.text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise AcquireError(f"{result.kind}: extracted text is not encodable as UTF-8", kind=result.kind) from exc
    size = len(result.text)
    spans = [(s, e) for _, s, e in result.sections or ()]
    spans += [(s, e) for _, s, e in result.pages or ()]
    for start, end in spans:
        if not 0 <= start <= end <= size:
            raise AcquireError(
                f"{result.kind}: range [{start}, {end}) outside text of {size} chars",
                kind=result.kind,
                start=start,
                end=end,
            )


_OVERRIDES = re.compile("[\u202d\u202e]")
"""LEFT-TO-RIGHT and RIGHT-TO-LEFT OVERRIDE: the characters after one are shown in reverse order."""
_TAGS = re.compile("[\U000e0000-\U000e007f]")
"""Unicode tag characters: invisible, yet each spells an ASCII character to a program reading them."""
_FLAG = re.compile("\U0001f3f4[\U000e0020-\U000e007e]+\U000e007f")
"""An emoji subdivision flag (England, Scotland, Wales): the one sequence tag characters draw."""


def check_shown_as_stored(doc: Extracted) -> None:
    """Refuse a retrieved document whose text a reader would not see as it is stored.

    * A bidi override: a reader sees what follows it reversed (``\u202eevitceffe ton\u202c``
      shows as "not effective"), so the stored order would be citable while no reader of the
      page sees it, and the order a reader sees would not be. Bidi marks, embeddings and
      isolates reorder runs, not the letters of a word, and stay.
    * Tag characters outside an emoji flag: invisible to a reader, they spell out ASCII text
      that an agent reading the snapshot does read (instructions smuggled into a page).

    Applied to what is retrieved (``source fetch``, ``source local``); text a user registers is
    theirs to vouch for.
    """
    override = _OVERRIDES.search(doc.text)
    if override is not None:
        raise AcquireError(
            f"{doc.kind}: the text holds a bidi override (U+{ord(override.group()):04X}) at offset "
            f"{override.start()}: a reader sees the characters after it in another order than stored",
            kind=doc.kind,
            offset=override.start(),
        )
    if _TAGS.search(doc.text) is not None:
        tag = _TAGS.search(_FLAG.sub(lambda m: "\ufffd" * len(m.group()), doc.text))
        if tag is not None:
            raise AcquireError(
                f"{doc.kind}: the text holds an invisible tag character (U+{ord(tag.group()):04X}) at offset "
                f"{tag.start()}, text no reader sees",
                kind=doc.kind,
                offset=tag.start(),
            )
