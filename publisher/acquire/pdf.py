"""PDF: PDFium's text of each page (through ``pypdfium2``), with page boundaries.

PDFium is the extractor of record (issue 12: on real papers pypdf was reported to lose words of
tables and multi-column pages). On the documents measured so far both recover every word and
PDFium is 10-25x faster; ``benchmarks/pdf_extractors.py`` repeats the comparison.

Layout decision: the text is the pages' texts, in page order, joined by the separator
``"\\n\\f\\n"`` (newline, form feed, newline), so a page break is visible in the text and cannot
be confused with a paragraph break. Page ``n`` (counted from 1) covers exactly its own text,
separator excluded; a page with no extractable text (a scan) still gets an empty range at its
place.

Each page's text is PDFium's, with the one deterministic rendering below, done before any offset
is taken (so page ranges are exact half-open code-point ranges of the stored text):

* PDFium ends lines with ``"\\r\\n"``; each such pair becomes ``"\\n"`` (a lone ``"\\r"`` stays);
* PDFium marks a hyphen that ended a line with U+FFFE (a noncharacter); it becomes ``"-"``, the
  hyphen printed on the page (nothing is joined or dropped);
* lone UTF-16 surrogates (from broken font maps) become U+FFFD, so the text is valid UTF-8;
* characters a reader cannot see on the page are left out: those drawn wholly outside the page's
  crop box, and those whose glyph box is under :data:`MIN_GLYPH` points tall (text set in a
  0.01pt font). Invisible text (render mode 3) stays: it is how a scanned page carries its OCR
  text over the image a reader sees. Text coloured like its background is not detected.

Texts stored by earlier versions (extracted with pypdf) stay valid: a snapshot's text is what was
stored, never re-derived on read.

``title`` is the document information ``/Title`` when it is present and not blank, never
inferred from the page content. What the file states about itself besides (its XMP metadata, read
from the bytes, and a DOI printed with its label on page 1) is returned as ``stated``; see
:mod:`publisher.acquire.identity`. A PDF encrypted with an empty user password opens as readers
open it; any other encryption, or a file PDFium cannot read, is an :class:`AcquireError`.

A document of more than :data:`MAX_PAGES` pages is refused before any page is read: a page tree
may list the same node many times over, so a file of a kilobyte opens as a million pages (a
minute of work per fetch, megabytes of page separators). For the same reason (one page's text,
from a compressed content stream, shown on every page) extraction stops with an error once the
text passes :data:`MAX_TEXT` code points, before it can exhaust memory.
"""

from __future__ import annotations

import re

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from ..kernel.text import first_line
from . import AcquireError, Extracted
from .identity import printed_dois, xmp_stated

__all__ = ["MAX_PAGES", "MAX_TEXT", "PAGE_SEPARATOR", "extract_pdf", "render_page_text"]

MAX_PAGES = 100_000
"""Most pages one PDF may have: the largest page number a surface declaration may name (long books
have a few thousand)."""
MIN_GLYPH = 1.0
"""Least height, in points, of a character's glyph box for it to count as seen (1pt is ~0.35mm)."""
MAX_TEXT = 16 * 1024 * 1024
"""Most code points of text PDFium may give for one PDF (long books give a few million; each
character is weighed for visibility, about 2 microseconds each)."""

PAGE_SEPARATOR = "\n\f\n"
_SURROGATE = re.compile("[\ud800-\udfff]")
_LINE_END_HYPHEN = {0xFFFE: "-"}  # PDFium's mark for a hyphen that ended a line
# PDFium's error code for a missing or wrong password (FPDF_ERR_PASSWORD).
_ERR_PASSWORD = 4


def render_page_text(raw: str) -> str:
    """The deterministic rendering of one page's PDFium text (see the module docstring)."""
    text = "\n".join(raw.split("\r\n")).translate(_LINE_END_HYPHEN)
    return _SURROGATE.sub("\ufffd", text)


def extract_pdf(body: bytes) -> Extracted:
    """Extract per-page text from a PDF body."""
    if not body:
        raise AcquireError("pdf: cannot read document: the body is empty")
    try:
        document = pdfium.PdfDocument(body, password="")
    except pdfium.PdfiumError as exc:
        if getattr(exc, "err_code", None) == _ERR_PASSWORD:
            raise AcquireError("pdf: encrypted; a password is needed to read it", password_needed=True) from exc
        raise AcquireError(f"pdf: cannot read document: {first_line(exc)}") from exc
    try:
        count = len(document)
        if count > MAX_PAGES:
            raise AcquireError(
                f"pdf: the document has {count} pages, more than the limit of {MAX_PAGES}",
                pages=count,
                max_pages=MAX_PAGES,
            )
        texts = []
        size = 0
        for index in range(count):
            page = document[index]
            textpage = page.get_textpage()
            try:
                raw: str = textpage.get_text_range()
                size += len(raw) + len(PAGE_SEPARATOR)  # what PDFium gave: the work done, shown or not
                if size <= MAX_TEXT:
                    texts.append(render_page_text(_seen_text(page, textpage, raw, index + 1)))
            finally:
                textpage.close()
                page.close()
            if size > MAX_TEXT:
                raise AcquireError(
                    f"pdf: the text passes the limit of {MAX_TEXT} characters by page {index + 1} of {count}",
                    max_text=MAX_TEXT,
                    page=index + 1,
                )
        title = _title(document)
    except AcquireError:
        raise
    except Exception as exc:  # PDFium reports hostile input through several types
        raise AcquireError(f"pdf: cannot read document: {first_line(exc)}") from exc
    finally:
        document.close()

    pages: list[tuple[int, int, int]] = []
    parts: list[str] = []
    pos = 0
    for number, page_text in enumerate(texts, start=1):
        if parts:
            parts.append(PAGE_SEPARATOR)
            pos += len(PAGE_SEPARATOR)
        parts.append(page_text)
        pages.append((number, pos, pos + len(page_text)))
        pos += len(page_text)
    text = "".join(parts)
    stated = xmp_stated(body)
    stated += [("doi", doi, "DOI printed on page 1") for doi in printed_dois(texts[0] if texts else "")]
    return Extracted(
        text=text,
        title=title,
        paper=None,
        sections=None,
        pages=tuple(pages),
        kind="pdf",
        access=None,
        origin=None,
        detail=f"pdf: {len(pages)} pages, {len(text)} chars",
        stated=tuple(stated),
    )


def _seen_text(page: pdfium.PdfPage, textpage: pdfium.PdfTextPage, raw: str, number: int) -> str:
    """PDFium's text of one page (``raw``), less the characters a reader cannot see (module docstring)."""
    count = pdfium_c.FPDFText_CountChars(textpage)
    left, bottom, right, top = page.get_cropbox()
    box = pdfium_c.FS_RECTF()
    unseen = []
    for index in range(count):
        if (
            pdfium_c.FPDFText_IsGenerated(textpage, index) == 1
            or chr(pdfium_c.FPDFText_GetUnicode(textpage, index) or 0x20).isspace()
        ):
            continue
        if not pdfium_c.FPDFText_GetLooseCharBox(textpage, index, box):
            continue
        low, high = min(box.bottom, box.top), max(box.bottom, box.top)
        outside = box.right < left or box.left > right or high < bottom or low > top
        if outside or high - low < MIN_GLYPH:
            unseen.append(index)
    if not unseen:
        return raw
    units = raw.encode("utf-16-le", "surrogatepass")
    if len(units) != 2 * count:
        raise AcquireError(
            f"pdf: page {number} draws text a reader cannot see, and PDFium's text of it cannot be "
            "matched to its characters to leave that text out",
            page=number,
        )
    drop = set(unseen)
    kept = b"".join(units[2 * i : 2 * i + 2] for i in range(count) if i not in drop)
    return kept.decode("utf-16-le", "surrogatepass")


def _title(document: pdfium.PdfDocument) -> str | None:
    value = document.get_metadata_dict().get("Title")
    if not value:
        return None
    title = _SURROGATE.sub("\ufffd", str(value))
    return title if title.strip() else None
