"""PDF: pypdf's text of each page, with page boundaries.

Layout decision: the text is the pages' texts, in page order, joined by the
separator ``"\\n\\f\\n"`` (newline, form feed, newline), so a page break is
visible in the text and cannot be confused with a paragraph break.  Page
``n`` (counted from 1) covers exactly its own text, separator excluded; a page
with no extractable text (a scan) still gets an empty range at its place.
Each page's text is kept as pypdf returns it, except that lone UTF-16
surrogates (from broken font maps) become U+FFFD so the text is valid UTF-8.

``title`` is the document information ``/Title`` when it is present and not
blank, never inferred from the page content.

A PDF encrypted with an empty user password (common for "copy-protected"
files) opens as readers open it; any other encryption, or a file pypdf cannot
read, is an :class:`AcquireError`.
"""

from __future__ import annotations

import io
import re

from pypdf import PdfReader

from . import AcquireError, Extracted

__all__ = ["PAGE_SEPARATOR", "extract_pdf"]

PAGE_SEPARATOR = "\n\f\n"
_SURROGATE = re.compile("[\ud800-\udfff]")


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def extract_pdf(body: bytes) -> Extracted:
    """Extract per-page text from a PDF body."""
    try:
        reader = PdfReader(io.BytesIO(body), strict=False)
        if reader.is_encrypted and not reader.decrypt(""):
            raise AcquireError("pdf: encrypted; a password is needed to read it")
        texts = [page.extract_text() or "" for page in reader.pages]
        title = _title(reader)
    except AcquireError:
        raise
    except Exception as exc:  # pypdf raises many types on hostile input
        raise AcquireError(f"pdf: cannot read document: {_one_line(exc)}") from exc

    pages: list[tuple[int, int, int]] = []
    parts: list[str] = []
    pos = 0
    for number, raw in enumerate(texts, start=1):
        page_text = _SURROGATE.sub("\ufffd", raw)
        if parts:
            parts.append(PAGE_SEPARATOR)
            pos += len(PAGE_SEPARATOR)
        parts.append(page_text)
        pages.append((number, pos, pos + len(page_text)))
        pos += len(page_text)
    text = "".join(parts)
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
    )


def _title(reader: PdfReader) -> str | None:
    metadata = reader.metadata
    if metadata is None:
        return None
    value = metadata.title  # resolves an indirect /Title; None when absent
    if value is None:
        return None
    title = _SURROGATE.sub("\ufffd", str(value))
    return title if title.strip() else None
