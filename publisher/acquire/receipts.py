"""Retrieval receipts (CONTRACT section 12): what each acquisition attempt got, bound to its bytes.

Every attempt is logged, failed ones too (``fetch_failed``, never fresh), with a receipt naming
the requested and final URL, the redirects, the status, the media type, the digest and size of
the raw bytes (kept write-once under ``<run>/raw/<sha256>``) and the extractor that derived the
text. The acquisition event also carries the ``record_hash`` of the snapshot it produced or found,
which anchors the sealed metadata to the retrieval.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import __version__
from ..kernel.eventlog import EventSigner, append_event
from ..kernel.models import Event, EventType, Receipt
from ..runs import Run

if TYPE_CHECKING:  # httpx (and the rich and pygments its own command line imports) only when fetching
    from .http import HttpFailure, HttpResult

__all__ = ["extractor_id", "http_receipt", "failure_receipt", "local_receipt", "log_failed"]

_LIBRARIES = {"pdf": "pypdfium2", "html": "lxml", "jats": "lxml"}


def _library(name: str) -> str:
    """``"<name>.<installed version>"``; the package metadata is read here, when a fetch names its
    extractor, not when a read imports this module."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"{name}.{version(name)}"
    except PackageNotFoundError:  # pragma: no cover - an unusual install
        return f"{name}.unknown"


def extractor_id(kind: str) -> str:
    """``"<name>/<version>"`` of the extractor of ``kind``, e.g. ``publisher-pdf/0.1.0+pypdfium2.5.15.2``.

    The library that parses the format is named in the version's local part, because a new
    release of it may derive other text from the same bytes.
    """
    library = _LIBRARIES.get(kind)
    return f"publisher-{kind}/{__version__}" + (f"+{_library(library)}" if library else "")


def http_receipt(result: HttpResult, raw_sha256: str, extractor: str | None) -> Receipt:
    """The receipt of a retrieval that returned a body."""
    return Receipt(
        requested_url=result.requested_url,
        final_url=result.final_url,
        redirects=result.redirects,
        status=result.status,
        media_type=result.media_type,
        raw_sha256=raw_sha256,
        raw_bytes=len(result.body),
        extractor=extractor,
    )


def failure_receipt(exc: HttpFailure, requested_url: str) -> Receipt:
    """The receipt of a retrieval that failed before a usable body arrived."""
    facts = exc.context
    redirects = facts.get("redirects")
    status = facts.get("status")
    final = facts.get("final_url")
    media_type = facts.get("media_type")
    return Receipt(
        requested_url=str(facts.get("url") or requested_url),
        final_url=final if isinstance(final, str) else None,
        redirects=tuple(str(u) for u in redirects) if isinstance(redirects, list | tuple) else (),
        status=status if isinstance(status, int) else None,
        media_type=media_type if isinstance(media_type, str) else None,
        raw_sha256=None,
        raw_bytes=None,
        extractor=None,
    )


def local_receipt(url: str, raw_sha256: str, size: int, extractor: str | None) -> Receipt:
    """The receipt of a user-supplied PDF (no status, no redirects; the bytes are the asset)."""
    return Receipt(
        requested_url=url,
        final_url=url,
        redirects=None,
        status=None,
        media_type="application/pdf",
        raw_sha256=raw_sha256,
        raw_bytes=size,
        extractor=extractor,
    )


def log_failed(run: Run, url: str, receipt: Receipt, detail: str, *, actor: str, signer: EventSigner | None) -> Event:
    """Log a failed acquisition attempt: ``fetch_failed``, no source, never fresh."""
    return append_event(
        run.events_path,
        type=EventType.FETCH_FAILED,
        source_id=None,
        url=url,
        fresh=False,
        sha256=None,
        actor=actor,
        detail=detail,
        receipt=receipt,
        signer=signer,
    )
