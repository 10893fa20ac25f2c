"""Acquisition into the store: fetch, register, local PDF, and bounded reads for agents.

This is the library behind ``publisher source ...``. Only :func:`fetch` and :func:`add_local_pdf`
log ``fresh: true`` events, each with a retrieval receipt and the ``record_hash`` of the snapshot
it produced or found, signed when a signer is given (see :mod:`.receipts`, :mod:`.signing`).
A failed attempt is logged as ``fetch_failed``. Every operation checks that the event log can be
appended to before it writes anything.

Identities are stable: a user-supplied PDF's URL is ``urn:sha256:<hex of its bytes>``, never a
path of the machine, so the same PDF from two folders is one source. A snapshot's metadata is
sealed when it is first stored: re-acquiring it with a paper id, title, access or origin that
differs from the stored one is refused with the fix (never silently dropped).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..kernel import _fs
from ..kernel.blobs import put_blob
from ..kernel.canonical import format_ts, record_hash_for, utc_now
from ..kernel.errors import UsageError
from ..kernel.eventlog import EventSigner, append_event, check_appendable
from ..kernel.models import Event, EventType, Origin, Receipt, Snapshot
from ..kernel.store import build_record
from ..kernel.trust import KeyRing
from ..runs import Run
from . import AcquireError, Extracted, check_shown_as_stored, extract
from .metadata import Metadata, refuse_amendment, resolve_metadata
from .reading import MAX_READ_WINDOW, find_spans, read_window, snapshot_summary
from .receipts import extractor_id, failure_receipt, http_receipt, local_receipt, log_failed
from .surface import Declaration, declare_surface, parse_pages

__all__ = [
    "Metadata",
    "Declaration",
    "Acquired",
    "fetch",
    "register",
    "add_local_pdf",
    "read_window",
    "snapshot_summary",
    "find_spans",
    "Revision",
    "PAPERS_DIR",
    "MAX_READ_WINDOW",
]

PAPERS_DIR = "assets/papers"
"""The wiki's shared PDF library, relative to the wiki root."""

_NO_METADATA = Metadata()
_UNDECLARED = Declaration()


@dataclass(frozen=True)
class Acquired:
    """What an acquisition produced: the snapshot, whether it is new, and the logged event."""

    snapshot: Snapshot
    created: bool
    event: Event
    notes: tuple[str, ...] = ()
    """What could not be derived of the paper's identity (an ambiguous document, no title)."""

    def summary(self) -> dict[str, Any]:
        """Machine-readable outcome for ``--json``: the snapshot's :func:`snapshot_summary`, and
        what this acquisition did."""
        return snapshot_summary(self.snapshot) | {
            "created": self.created,
            "identity_notes": list(self.notes),
            "event_id": self.event.event_id,
            "fresh": self.event.fresh,
            "signed_by": self.event.sig.key_id if self.event.sig else None,
            "raw_sha256": self.event.receipt.raw_sha256 if self.event.receipt else None,
        }


@dataclass(frozen=True)
class Revision:
    """Where an acquisition's revisions are looked for: the wiki whose earlier runs may hold the
    same work (None: nowhere), the snapshot it explicitly supersedes (``source revise``), and the
    keys the wiki trusts (on a wiki that trusts keys, only a snapshot one of them acquired is a
    revision: :mod:`.revisions`)."""

    wiki: Path | None
    supersedes: str | None
    trusted_keys: KeyRing


_NO_REVISION = Revision(None, None, KeyRing())


def _revised(run: Run, record: dict[str, Any], revision: Revision) -> dict[str, Any]:
    """``record`` with the ``supersedes`` it gets (sealed again), or as it is.

    An explicit ``supersedes`` must name a verified snapshot of the run or its wiki, of the same
    work and other text or URL; otherwise the newest revision of the same work in an earlier run
    of the wiki is superseded, when there is one.
    """
    from .revisions import find_snapshot, prior_revision, refuse_other_work  # an acquisition's only

    if revision.supersedes is not None:
        old = find_snapshot(run, revision.supersedes, revision.wiki, trusted_keys=revision.trusted_keys)
        refuse_other_work(old.snapshot, record)
        prior: str | None = old.snapshot.source_id
    else:
        prior = prior_revision(run, record, revision.wiki, trusted_keys=revision.trusted_keys)
    if prior is None:
        return record
    fields = {k: v for k, v in record.items() if k != "record_hash"} | {"supersedes": prior}
    return fields | {"record_hash": record_hash_for(fields)}


def _ensure_appendable(run: Run) -> None:
    """Refuse before writing anything when the log's last line is torn or invalid (the append
    that follows the write would be refused); reads the last line only."""
    check_appendable(run.events_path)


def _log(
    run: Run,
    snap: Snapshot,
    kind: EventType,
    sha256: str,
    actor: str,
    detail: str,
    receipt: Receipt | None = None,
    signer: EventSigner | None = None,
) -> Event:
    """Log the event for an acquisition; only a fetch or a local PDF is ever fresh.

    An acquisition carries its receipt and the ``record_hash`` of the snapshot it produced or
    found, so an edit of the sealed metadata after acquisition is evident, and the snapshot's
    Merkle root and size, so that the signature also vouches for the root excerpt proofs use.
    """
    acquisition = kind in (EventType.FETCH, EventType.LOCAL_PDF)
    return append_event(
        run.events_path,
        type=kind,
        source_id=snap.source_id,
        url=snap.url,
        fresh=acquisition,
        sha256=sha256,
        actor=actor,
        detail=detail,
        record_hash=snap.record_hash if acquisition else None,
        receipt=receipt,
        signer=signer,
        merkle_root=snap.merkle_root if acquisition else None,
        merkle_size=snap.merkle_size if acquisition else None,
        surface=snap.surface if acquisition else None,
        supersedes=snap.supersedes if acquisition else None,
    )


def _store(run: Run, record: dict[str, Any]) -> tuple[Snapshot, bool]:
    return run.store.put(record)


def _sections(doc: Extracted) -> list[dict[str, Any]] | None:
    if doc.sections is None:
        return None
    return [{"title": t, "start": s, "end": e} for t, s, e in doc.sections]


def _pages(doc: Extracted) -> list[dict[str, Any]] | None:
    if doc.pages is None:
        return None
    return [{"page": p, "start": s, "end": e} for p, s, e in doc.pages]


def fetch(
    run: Run,
    url: str,
    meta: Metadata = _NO_METADATA,
    *,
    actor: str = "main",
    timeout: float = 30.0,
    max_bytes: int = 64 * 1024 * 1024,
    signer: EventSigner | None = None,
    declaration: Declaration = _UNDECLARED,
    revision: Revision = _NO_REVISION,
) -> Acquired:
    """Retrieve ``url`` over HTTP, derive its text by media type, store it and log a fresh fetch.

    The raw bytes are kept under ``<run>/raw/<sha256>``; a failure at any step after the attempt
    began is logged as ``fetch_failed`` with what was learnt, then raised as a one-line error.
    ``declaration`` is the surface the caller declares (``--complete``, or a PDF's pages);
    ``revision`` where the snapshot it supersedes is found (:class:`Revision`).
    """
    if declaration.expected_pages is not None:
        parse_pages(declaration.expected_pages)  # a malformed declaration is refused before any request
    _ensure_appendable(run)
    from .http import ROUTE, HttpFailure, ambient_settings, http_get, redact  # httpx for a fetch only

    ignored = ambient_settings()
    route = ROUTE + (f" (ignored {', '.join(ignored)})" if ignored else "")
    try:
        response = http_get(url, timeout=timeout, max_bytes=max_bytes)
    except HttpFailure as exc:
        receipt = failure_receipt(exc, redact(url))
        log_failed(run, receipt.requested_url, receipt, f"{route}; {exc}", actor=actor, signer=signer)
        raise UsageError(f"fetch {receipt.requested_url} failed: {exc}") from exc
    raw_sha256 = put_blob(run.raw_dir, response.body)[0]
    receipt = http_receipt(response, raw_sha256, None)
    try:
        doc = extract(response.body, response.media_type, response.charset, url=response.final_url)
        receipt = receipt.model_copy(update={"extractor": extractor_id(doc.kind)})
        check_shown_as_stored(doc)
        fields, notes = resolve_metadata(
            doc, meta, default_origin=Origin.WEB.value, urls=(response.requested_url, response.final_url)
        )
        record = build_record(
            url=response.final_url,
            text=doc.text,
            retrieved_at=format_ts(utc_now()),
            asset=None,
            sections=_sections(doc),
            pages=_pages(doc),
            surface=declare_surface(doc, declaration, fields["access"], receipt.extractor or doc.kind),
            **fields,
        )
        record = _revised(run, record, revision)
        refuse_amendment(run, record, meta)
        _refuse_other_surface(run, record, declaration)
        run.store.encode(record)  # a text too large to store is a failed attempt, logged as one
    except (AcquireError, UsageError) as exc:
        why = exc.one_line()
        log_failed(
            run, response.requested_url, receipt, f"HTTP {response.status}; {route}; {why}", actor=actor, signer=signer
        )
        raise UsageError(f"fetch {response.requested_url} failed: {why}", **exc.context) from exc
    snap, created = _store(run, record)
    detail = (
        f"HTTP {response.status} {response.media_type}; {len(response.body)} bytes; "
        f"{len(doc.text)} chars; {route}; {doc.detail}; redirects {len(response.redirects)}"
    )
    event = _log(run, snap, EventType.FETCH, snap.content_hash[7:], actor, detail, receipt, signer)
    return Acquired(snap, created, event, notes)


def register(
    run: Run,
    url: str,
    text_file: Path,
    meta: Metadata = _NO_METADATA,
    *,
    actor: str = "main",
    signer: EventSigner | None = None,
) -> Acquired:
    """Fold text obtained elsewhere into the store; logs a ``register`` event (signed when a
    ``signer`` is given, so a signed wiki can tell who registered it), never fresh."""
    _ensure_appendable(run)
    data = _read_input(text_file, "text file")
    try:
        doc = extract(data, "text/plain", "utf-8")
    except AcquireError as exc:
        raise UsageError(f"{text_file}: {exc}; convert it to UTF-8 first") from exc
    fields, notes = resolve_metadata(doc, meta, default_origin=Origin.WEB.value, urls=())
    surface = declare_surface(doc, _UNDECLARED, fields["access"], "register")  # never declared complete
    record = build_record(url=url, text=doc.text, retrieved_at=format_ts(utc_now()), surface=surface, **fields)
    snap, created = _store(run, record)
    detail = f"registered from {Path(text_file).name}; {len(doc.text)} chars"
    return Acquired(
        snap, created, _log(run, snap, EventType.REGISTER, snap.content_hash[7:], actor, detail, signer=signer), notes
    )


def add_local_pdf(
    run: Run,
    pdf: Path,
    wiki: Path,
    meta: Metadata = _NO_METADATA,
    *,
    actor: str = "main",
    signer: EventSigner | None = None,
    declaration: Declaration = _UNDECLARED,
    revision: Revision = _NO_REVISION,
) -> Acquired:
    """Register a user-supplied PDF: copy it into the wiki's library and log a ``local_pdf`` event.

    Its URL is ``urn:sha256:<hex of the bytes>``: where the file sat is never recorded, so the
    same PDF from two folders is the same source. Bytes that are not a readable PDF are kept under
    ``<run>/raw/`` and logged as ``fetch_failed``.
    """
    _ensure_appendable(run)
    data = _read_input(pdf, "PDF")
    if not Path(wiki).is_dir():
        raise UsageError(f"wiki folder {wiki} does not exist")
    digest = hashlib.sha256(data).hexdigest()
    url = f"urn:sha256:{digest}"
    try:
        doc = extract(data, "application/pdf")
        receipt = local_receipt(url, digest, len(data), extractor_id(doc.kind))
        check_shown_as_stored(doc)
        fields, notes = resolve_metadata(doc, meta, default_origin=Origin.USER_SUPPLIED_PDF.value, urls=())
        relative = f"{PAPERS_DIR}/{digest}.pdf"
        record = build_record(
            url=url,
            text=doc.text,
            retrieved_at=format_ts(utc_now()),
            asset={"path": relative, "sha256": digest, "bytes": len(data)},
            sections=_sections(doc),
            pages=_pages(doc),
            surface=declare_surface(doc, declaration, fields["access"], extractor_id(doc.kind)),
            **fields,
        )
        record = _revised(run, record, revision)
        refuse_amendment(run, record, meta)
        _refuse_other_surface(run, record, declaration)
        run.store.encode(record)  # refused before the PDF is copied into the library
    except (AcquireError, UsageError) as exc:
        why = exc.one_line()
        put_blob(run.raw_dir, data)
        failed = local_receipt(url, digest, len(data), None)
        log_failed(run, url, failed, f"local PDF {Path(pdf).name[:80]}; {why}", actor=actor, signer=signer)
        raise UsageError(f"{pdf}: {why}", **{**exc.context, "path": str(pdf)}) from exc
    put_blob(Path(wiki) / PAPERS_DIR, data, suffix=".pdf")
    snap, created = _store(run, record)
    detail = f"local PDF {relative}; {len(data)} bytes; {len(doc.pages or ())} pages; {len(doc.text)} chars"
    return Acquired(snap, created, _log(run, snap, EventType.LOCAL_PDF, digest, actor, detail, receipt, signer), notes)


def _read_input(path: Path, what: str) -> bytes:
    """The bytes of a file the user names (a regular file, read once), else a usage error naming it."""
    try:
        return _fs.read_regular(Path(path))
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path}: {exc.strerror or exc}", path=str(path)) from exc


def _refuse_other_surface(run: Run, record: dict[str, Any], declaration: Declaration) -> None:
    """Refuse a declaration that the stored snapshot (same URL and text) does not already carry.

    The stored record is never rewritten, so a declaration it lacks would be dropped silently.
    """
    if not declaration.given or not run.store.exists(record["source_id"]):
        return
    stored = run.store.read(record["source_id"]).surface
    want = record["surface"]
    if stored is None or (list(stored.expected_pages or ()), stored.complete) != (
        list(want["expected_pages"] or ()),
        want["complete"],
    ):
        raise UsageError(
            f"{record['source_id']} is already stored in this run with another declared surface; "
            "a surface is sealed when first stored: acquire the source with this declaration in a "
            "new run ('publisher run init')",
            source_id=record["source_id"],
        )
