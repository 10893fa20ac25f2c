"""The kernel's closed vocabularies (access, origin, event types, identity bases, surface types)
and the surface's manifest digest, without the validation library.

The records of :mod:`.models` use these; so do the commands that read a snapshot or append an
event without validating a whole model (:mod:`.shapes`), which therefore start without loading
the validation library. :mod:`.models` re-exports every name here.
"""

import hashlib
from enum import StrEnum
from typing import Any

from .canonical import canonical_bytes

__all__ = [
    "Access",
    "ACCESS_ORDER",
    "Origin",
    "EventType",
    "ACQUISITIONS",
    "Basis",
    "IDENTITY_KINDS",
    "SurfaceType",
    "DEFAULT_EXCLUDED_MODALITIES",
    "surface_manifest_hash",
]


class Access(StrEnum):
    """What the text of a snapshot can support."""

    FULL_TEXT = "full_text"
    ABSTRACT = "abstract"
    PREPRINT = "preprint"
    GUIDELINE = "guideline"
    WEB = "web"


ACCESS_ORDER: dict[Access, int] = {
    Access.WEB: 0,
    Access.ABSTRACT: 1,
    Access.PREPRINT: 2,
    Access.GUIDELINE: 3,
    Access.FULL_TEXT: 4,
}
"""Weakest first: where several snapshots back one artifact, the weakest access wins."""


class Origin(StrEnum):
    """Where a snapshot's text came from."""

    PUBMED = "pubmed"
    PMC = "pmc"
    EUROPEPMC = "europepmc"
    UNPAYWALL = "unpaywall"
    OA_PDF = "oa-pdf"
    USER_SUPPLIED_PDF = "user-supplied-pdf"
    WEB = "web"


class EventType(StrEnum):
    """The kinds of event in ``events.jsonl``; ``fetch_failed`` (ext) logs an attempt that failed."""

    FETCH = "fetch"
    LOCAL_PDF = "local_pdf"
    REGISTER = "register"
    READ = "read"
    FETCH_FAILED = "fetch_failed"


ACQUISITIONS = frozenset({EventType.FETCH, EventType.LOCAL_PDF, EventType.FETCH_FAILED})
"""Event types that record an acquisition attempt: they carry a receipt and may be signed."""


class Basis(StrEnum):
    """What an identity entry rests on (CONTRACT section 18): the document's own statement, a
    registry's canonical article URL, or the acquirer's word alone."""

    DOCUMENT = "document"
    REGISTRY_URL = "registry_url"
    ASSERTED = "asserted"


IDENTITY_KINDS = ("pmid", "doi", "pmcid", "title")
"""The entries an identity may hold: the three paper ids and the title."""


class SurfaceType(StrEnum):
    """How a declared text surface is indexed: by PDF page, or as one whole text."""

    PAGE_INDEXED_TEXT = "PAGE_INDEXED_TEXT"
    WHOLE_TEXT = "WHOLE_TEXT"


DEFAULT_EXCLUDED_MODALITIES = ("IMAGES", "TABLE_STRUCTURE", "EMBEDDED_FILES")
"""What a text surface never covers: a complete text is not a semantically exhausted document."""


def surface_manifest_hash(surface: dict[str, Any], content_hash: str) -> str:
    """``sha256:`` over the surface's fields (but ``manifest_hash``) and the text's content hash."""
    fields = {k: v for k, v in surface.items() if k != "manifest_hash"}
    return "sha256:" + hashlib.sha256(canonical_bytes({"content_hash": content_hash, "surface": fields})).hexdigest()
