"""Acquisition into the store: fetch, register, local PDF, and bounded reads for agents.

This is the library behind ``publisher source ...``. Only :func:`fetch` and :func:`add_local_pdf`
log ``fresh: true`` events. Every operation checks that the event log can be appended to before
it writes anything, so a failure leaves neither a snapshot nor an event behind.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..kernel import _fs
from ..kernel.canonical import format_ts, utc_now
from ..kernel.errors import EventLogError, IntegrityError, UsageError
from ..kernel.eventlog import append_event, read_log
from ..kernel.ids import LITERATURE_KINDS, IdError, canonical_id, same_id
from ..kernel.models import Access, Event, EventType, Origin, Snapshot
from ..kernel.spans import MAX_SPAN
from ..kernel.store import build_record
from ..runs import Run
from . import AcquireError, Extracted, extract
from .http import http_get
from .select import occurrences

__all__ = [
    "Metadata",
    "Acquired",
    "fetch",
    "register",
    "add_local_pdf",
    "read_window",
    "find_spans",
    "PAPERS_DIR",
    "MAX_READ_WINDOW",
]

PAPERS_DIR = "assets/papers"
"""The wiki's shared PDF library, relative to the wiki root."""

MAX_READ_WINDOW = 20_000
"""Longest window ``source read`` returns at once, in code points."""


@dataclass(frozen=True)
class Metadata:
    """Metadata given on the command line; fills what the document does not state."""

    access: str | None = None
    origin: str | None = None
    pmid: str | None = None
    doi: str | None = None
    pmcid: str | None = None
    title: str | None = None


@dataclass(frozen=True)
class Acquired:
    """What an acquisition produced: the snapshot, whether it is new, and the logged event."""

    snapshot: Snapshot
    created: bool
    event: Event

    def summary(self) -> dict[str, Any]:
        """Machine-readable outcome for ``--json``."""
        snap = self.snapshot
        return {
            "source_id": snap.source_id,
            "created": self.created,
            "url": snap.url,
            "title": snap.title,
            "access": snap.access.value,
            "origin": snap.origin.value,
            "paper": snap.paper.model_dump() if snap.paper else None,
            "chars": len(snap.text),
            "sections": len(snap.sections or ()),
            "pages": len(snap.pages or ()),
            "event_id": self.event.event_id,
            "fresh": self.event.fresh,
        }


def _given_id(kind: str, value: str | None) -> str | None:
    """A paper id from the command line in its stored form; a malformed one is a usage error."""
    if not value:
        return None
    try:
        return canonical_id(kind, value)
    except IdError as exc:
        raise UsageError(f"--{kind}: {exc}") from None


def _stated_id(kind: str, value: str | None) -> str | None:
    """A paper id as the document states it, in the stored form when it has one's shape."""
    if not value:
        return None
    try:
        return canonical_id(kind, value)
    except IdError:
        return value.strip() or None


def _merge(field: str, stated: str | None, given: str | None, same: Any = None) -> str | None:
    if stated is None or stated == "":
        return given
    if given is None:
        return stated
    equal = same(stated, given) if same else stated == given
    if not equal:
        raise UsageError(f"--{field} {given!r} contradicts the document, which states {stated!r}")
    return stated


def _enum(value: str, enum: type[Access] | type[Origin], option: str) -> str:
    try:
        return enum(value).value
    except ValueError:
        choices = ", ".join(e.value for e in enum)
        raise UsageError(f"--{option} {value!r} is not one of: {choices}") from None


def _resolve_metadata(doc: Extracted, meta: Metadata, *, default_origin: str) -> dict[str, Any]:
    """Merge what the document states with what the caller gave; a contradiction is an error."""
    stated = doc.paper or {}
    paper = {
        kind: _merge(
            kind,
            _stated_id(kind, stated.get(kind)),
            _given_id(kind, getattr(meta, kind)),
            lambda a, b, kind=kind: same_id(kind, a, b),
        )
        for kind in LITERATURE_KINDS
    }
    access = _enum(meta.access, Access, "access") if meta.access else None
    origin = _enum(meta.origin, Origin, "origin") if meta.origin else None
    return {
        "title": _merge("title", doc.title, meta.title),
        "paper": paper if any(paper.values()) else None,
        "access": _merge("access", doc.access, access) or Access.WEB.value,
        "origin": _merge("origin", doc.origin, origin) or default_origin,
    }


def _ensure_appendable(run: Run) -> None:
    """Refuse before writing anything when the log's last line is torn (appends would fail)."""
    state = read_log(run.events_path)
    if state.torn:
        raise EventLogError(
            f"{run.events_path}: the last line is torn; nothing was written. Repair or remove "
            "that line by hand, then retry",
            path=str(run.events_path),
        )


def _log(run: Run, snap: Snapshot, kind: EventType, sha256: str, actor: str, detail: str) -> Event:
    """Log the event for an acquisition; only a fetch or a local PDF is ever fresh."""
    return append_event(
        run.events_path,
        type=kind,
        source_id=snap.source_id,
        url=snap.url,
        fresh=kind in (EventType.FETCH, EventType.LOCAL_PDF),
        sha256=sha256,
        actor=actor,
        detail=detail,
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
    meta: Metadata = Metadata(),
    *,
    actor: str = "main",
    timeout: float = 30.0,
    max_bytes: int = 64 * 1024 * 1024,
) -> Acquired:
    """Retrieve ``url`` over HTTP, derive its text by media type, store it and log a fresh fetch."""
    _ensure_appendable(run)
    try:
        response = http_get(url, timeout=timeout, max_bytes=max_bytes)
        doc = extract(response.body, response.media_type, response.charset, url=response.final_url)
    except AcquireError as exc:
        raise UsageError(f"fetch {url} failed: {exc}") from exc
    fields = _resolve_metadata(doc, meta, default_origin=Origin.WEB.value)
    record = build_record(
        url=response.final_url,
        text=doc.text,
        retrieved_at=format_ts(utc_now()),
        asset=None,
        sections=_sections(doc),
        pages=_pages(doc),
        **fields,
    )
    snap, created = _store(run, record)
    detail = (
        f"HTTP {response.status} {response.media_type}; {len(response.body)} bytes; "
        f"{len(doc.text)} chars; {doc.detail}; redirects {response.redirects}"
    )
    return Acquired(snap, created, _log(run, snap, EventType.FETCH, snap.content_hash[7:], actor, detail))


def register(
    run: Run,
    url: str,
    text_file: Path,
    meta: Metadata = Metadata(),
    *,
    actor: str = "main",
) -> Acquired:
    """Fold text obtained elsewhere into the store; logs a ``register`` event, never fresh."""
    _ensure_appendable(run)
    try:
        data = _fs.read_regular(Path(text_file))
    except OSError as exc:
        raise UsageError(f"cannot read text file {text_file}: {exc.strerror or exc}") from exc
    try:
        doc = extract(data, "text/plain", "utf-8")
    except AcquireError as exc:
        raise UsageError(f"{text_file}: {exc}; convert it to UTF-8 first") from exc
    fields = _resolve_metadata(doc, meta, default_origin=Origin.WEB.value)
    record = build_record(url=url, text=doc.text, retrieved_at=format_ts(utc_now()), **fields)
    snap, created = _store(run, record)
    detail = f"registered from {Path(text_file).name}; {len(doc.text)} chars"
    return Acquired(snap, created, _log(run, snap, EventType.REGISTER, snap.content_hash[7:], actor, detail))


def _copy_into_library(data: bytes, digest: str, wiki: Path) -> str:
    """Store the PDF under its digest in the shared library unless already there; the path."""
    relative = f"{PAPERS_DIR}/{digest}.pdf"
    target = wiki / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    if not _fs.create_exclusive(target, data, mode=0o444):
        existing = hashlib.sha256()
        try:
            existing.update(_fs.read_regular(target, follow_symlinks=False))
        except OSError as exc:
            raise IntegrityError(f"{target} exists but cannot be read: {exc.strerror}") from exc
        if existing.hexdigest() != digest:
            raise IntegrityError(
                f"{target} exists with other bytes (sha256 {existing.hexdigest()}); left untouched",
                path=str(target),
            )
    return relative


def add_local_pdf(
    run: Run,
    pdf: Path,
    wiki: Path,
    meta: Metadata = Metadata(),
    *,
    actor: str = "main",
) -> Acquired:
    """Register a user-supplied PDF: copy it into the wiki's library and log a ``local_pdf`` event."""
    _ensure_appendable(run)
    try:
        data = _fs.read_regular(Path(pdf))
    except OSError as exc:
        raise UsageError(f"cannot read PDF {pdf}: {exc.strerror or exc}") from exc
    if not Path(wiki).is_dir():
        raise UsageError(f"wiki folder {wiki} does not exist")
    try:
        doc = extract(data, "application/pdf")
    except AcquireError as exc:
        raise UsageError(f"{pdf}: {exc}") from exc
    digest = hashlib.sha256(data).hexdigest()
    fields = _resolve_metadata(doc, meta, default_origin=Origin.USER_SUPPLIED_PDF.value)
    relative = _copy_into_library(data, digest, Path(wiki))
    record = build_record(
        url=Path(os.path.abspath(pdf)).as_uri(),
        text=doc.text,
        retrieved_at=format_ts(utc_now()),
        asset={"path": relative, "sha256": digest, "bytes": len(data)},
        sections=_sections(doc),
        pages=_pages(doc),
        **fields,
    )
    snap, created = _store(run, record)
    detail = f"local PDF {relative}; {len(data)} bytes; {len(doc.pages or ())} pages; {len(doc.text)} chars"
    return Acquired(snap, created, _log(run, snap, EventType.LOCAL_PDF, digest, actor, detail))


def read_window(
    run: Run,
    source_id: str,
    start: int | None = None,
    end: int | None = None,
    *,
    actor: str = "main",
    log: bool = True,
) -> dict[str, Any]:
    """A verified, bounded window of a snapshot's text with its offsets; logs a ``read`` event.

    A window reaching past the end of the text is clamped to it, and the result's ``note`` says
    so (an agent that guessed the length still gets the text and the true offsets); a negative or
    reversed window is a usage error.
    """
    snap = run.store.read(source_id)
    n = len(snap.text)
    lo = 0 if start is None else start
    hi = lo + MAX_READ_WINDOW if end is None else end
    if lo < 0 or hi < lo:
        raise UsageError(f"window [{lo}, {hi}) is not a window: start must be >= 0 and end >= start")
    note = None
    if hi > n:
        if end is not None or lo > n:
            asked = f"[{lo}, {hi})" if end is not None else f"from {lo}"
            note = f"the text has {n} code points: window {asked} clamped to [{min(lo, n)}, {n})"
        lo, hi = min(lo, n), n
    if hi - lo > MAX_READ_WINDOW:
        raise UsageError(f"window of {hi - lo} code points is over the {MAX_READ_WINDOW} limit; read it in parts")
    if log:
        _ensure_appendable(run)
        append_event(
            run.events_path,
            type=EventType.READ,
            source_id=snap.source_id,
            url=snap.url,
            fresh=False,
            sha256=snap.content_hash[7:],
            actor=actor,
            detail=f"window {lo}-{hi} of {n}" + ("; clamped" if note else ""),
        )
    window = {"source_id": snap.source_id, "start": lo, "end": hi, "text": snap.text[lo:hi], "length": n}
    return window | ({"note": note} if note else {})


def find_spans(
    run: Run,
    source_id: str,
    query: str,
    *,
    context: int = 80,
    ignore_case: bool = False,
    limit: int = 200,
) -> dict[str, Any]:
    """Every occurrence of ``query`` with exact offsets and a window of context around it.

    The CONTRACT's shape, exactly; :func:`publisher.acquire.select.select_spans` adds sentences,
    from-to ranges, excerpts, sections and pages.
    """
    if not query:
        raise UsageError("--query must not be empty")
    if len(query) > MAX_SPAN:
        raise UsageError(f"--query is longer than a span may be ({MAX_SPAN} code points)")
    snap = run.store.read(source_id)
    text = snap.text
    pattern = re.compile(re.escape(query), re.IGNORECASE if ignore_case else 0)
    matches: list[dict[str, Any]] = []
    for s, e in itertools.islice(occurrences(text, pattern), limit):
        ws, we = max(0, s - context), min(len(text), e + context)
        matches.append({"start": s, "end": e, "window_start": ws, "window_end": we, "window": text[ws:we]})
    return {"source_id": snap.source_id, "query": query, "matches": matches}
