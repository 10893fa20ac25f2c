"""Declared text surfaces (CONTRACT section 14): what the acquirer says the text should cover.

Completeness is declared at acquisition, never inferred from what was extracted: a PDF is
complete only against ``--expected-pages 1,3-12`` or ``--expected-page-count 12``, and then only
when every expected page gave text; a fetched full text only with ``--complete``. Without a
declaration, or for an abstract, the surface is incomplete. Excluded modalities (images, table
structure, embedded files) are always listed: a complete text surface is not a semantically
exhausted document.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..kernel.errors import UsageError
from ..kernel.models import DEFAULT_EXCLUDED_MODALITIES, Access, SurfaceType
from . import Extracted

__all__ = ["MAX_PAGES", "Declaration", "parse_pages", "declare_surface"]

MAX_PAGES = 100_000
"""The largest page number a declaration may name."""

_RANGE_RE = re.compile(r"([0-9]{1,6})(?:-([0-9]{1,6}))?")


@dataclass(frozen=True)
class Declaration:
    """What the acquirer declared: expected pages (a PDF) or a complete whole text."""

    expected_pages: str | None = None
    expected_page_count: int | None = None
    complete: bool = False

    @property
    def given(self) -> bool:
        """Whether anything was declared."""
        return self.expected_pages is not None or self.expected_page_count is not None or self.complete


def parse_pages(spec: str) -> list[int]:
    """``"1,3-12"`` as a sorted list of distinct page numbers (1-based); else a usage error."""
    pages: set[int] = set()
    for part in spec.split(","):
        match = _RANGE_RE.fullmatch(part.strip())
        if match is None:
            raise UsageError(f"--expected-pages {spec[:60]!r}: {part.strip()[:20]!r} is not N or N-M (e.g. 1,3-12)")
        low = int(match.group(1))
        high = int(match.group(2) or low)
        if low < 1 or high < low or high > MAX_PAGES:
            raise UsageError(f"--expected-pages {spec[:60]!r}: {low}-{high} is not a range of pages 1..{MAX_PAGES}")
        pages.update(range(low, high + 1))
    return sorted(pages)


def _extracted_pages(doc: Extracted) -> list[int]:
    """The pages that gave text: a page whose range holds only white space (a scan) did not."""
    return sorted({page for page, start, end in doc.pages or () if doc.text[start:end].strip()})


def declare_surface(doc: Extracted, declaration: Declaration, access: str, method: str) -> dict[str, Any]:
    """The surface of an extracted document under ``declaration`` (without its manifest hash).

    A page declaration on a text without pages, ``--complete`` on a PDF (declare its pages),
    both page options at once, or completeness declared for anything but full text is refused
    with the fix.
    """
    paged = doc.pages is not None
    if declaration.expected_pages is not None and declaration.expected_page_count is not None:
        raise UsageError("give --expected-pages or --expected-page-count, not both")
    if not paged and (declaration.expected_pages is not None or declaration.expected_page_count is not None):
        raise UsageError("--expected-pages/--expected-page-count apply to a PDF; declare a whole text with --complete")
    if paged and declaration.complete:
        raise UsageError("a PDF's completeness is declared by its pages: use --expected-pages or --expected-page-count")
    if declaration.given and access == Access.ABSTRACT.value:
        raise UsageError(
            "an abstract's surface is never complete: declare completeness only for the full text "
            "(or leave the declaration out)"
        )
    base = {"excluded_modalities": list(DEFAULT_EXCLUDED_MODALITIES), "method": method}
    if not paged:
        return {
            "type": SurfaceType.WHOLE_TEXT.value,
            "expected_pages": None,
            "extracted_pages": [],
            "missing_pages": [],
            "unexpected_pages": [],
            "complete": declaration.complete,
            **base,
        }
    expected: list[int] | None = None
    if declaration.expected_pages is not None:
        expected = parse_pages(declaration.expected_pages)
    elif declaration.expected_page_count is not None:
        count = declaration.expected_page_count
        if not 1 <= count <= MAX_PAGES:
            raise UsageError(f"--expected-page-count {count} is not between 1 and {MAX_PAGES}")
        expected = list(range(1, count + 1))
    extracted = _extracted_pages(doc)
    missing = sorted(set(expected) - set(extracted)) if expected is not None else []
    unexpected = sorted(set(extracted) - set(expected)) if expected is not None else []
    return {
        "type": SurfaceType.PAGE_INDEXED_TEXT.value,
        "expected_pages": expected,
        "extracted_pages": extracted,
        "missing_pages": missing,
        "unexpected_pages": unexpected,
        "complete": expected is not None and not missing,
        **base,
    }
