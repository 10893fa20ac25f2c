"""Where generated pages live (source URIs, as MkDocs names the files it builds)."""

from __future__ import annotations

__all__ = ["INDEX_URIS", "SECTION_INDEX", "source_uri", "concept_uri", "report_uri"]

INDEX_URIS = ("concepts/index.md", "sources/index.md", "runs/index.md")

SECTION_INDEX = {"concept": "concepts/index.md", "source": "sources/index.md", "report": "runs/index.md"}
"""The index page of the section each kind of generated page belongs to (the navigation's current
section while the page is read)."""
"""The three generated index pages, in the navigation."""


def source_uri(source_id: str) -> str:
    """The source page: its link path names the source id."""
    return f"sources/{source_id}.md"


def concept_uri(slug: str) -> str:
    return f"concepts/{slug}.md"


def report_uri(slug: str) -> str:
    return f"runs/{slug}/report.md"
