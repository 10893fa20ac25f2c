"""``publisher missing``: a missingness record derived only from trusted facts (section 14).

The facts are the run's own: a ``fetch_failed`` event of its intact, hash-chained log
(``SOURCE_UNAVAILABLE``), or a verified snapshot acquired in the run whose access is restricted
(:func:`restricted`: an abstract, or a text other than full text without a complete declared
surface; ``ACCESS_RESTRICTED``) or whose declared surface misses pages (``SURFACE_INCOMPLETE``).
A web page fetched whole and declared complete misses nothing.
When the facts show nothing missing, the record is refused: a claim cannot be declared
non-evaluable by saying so. Records are content-addressed and write-once, so asking again
returns the same id and leaves the stored file (and its ``created_at``) untouched.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...kernel.canonical import format_ts, utc_now
from ...kernel.errors import IntegrityError, UsageError
from ...kernel.eventlog import LogState, read_log
from ...kernel.eventviews import EventView
from ...kernel.models import Access, EventType, Snapshot, Surface
from ...kernel.reasons import Reason
from ...kernel.trust import KeyRing, Role, event_signature_problem
from ...kernel.views import SurfaceView
from ...runs import Run
from .model import ClaimRefusal, Guard, claim_hash, normalise_statement, url_identity, work_keys
from .records import MissingBasis, MissingKind, MissingnessRecord, write_record

__all__ = [
    "LogCache",
    "Missing",
    "log_of",
    "record_missing",
    "missing_basis",
    "missing_kind",
    "available_now",
    "unsigned_fact",
]


@dataclass(frozen=True)
class Missing:
    """What ``publisher missing`` wrote or found: the record, its id, whether it is new."""

    record: MissingnessRecord
    missingness_id: str
    created: bool


LogCache = dict[Path, LogState[EventView]]
"""Event logs already read in one check, by path (a check reads each run's log once)."""


def log_of(run: Run, logs: LogCache | None = None) -> LogState[EventView]:
    """The run's event log, read once per ``logs`` cache."""
    if logs is None:
        return read_log(run.events_path)
    state = logs.get(run.events_path)
    if state is None:
        state = logs[run.events_path] = read_log(run.events_path)
    return state


def _intact_log(run: Run, logs: LogCache | None = None) -> LogState[EventView]:
    state = log_of(run, logs)
    if not state.intact:
        raise IntegrityError(
            f"{run.path.name}/events.jsonl has a torn or invalid last line or a broken chain: its events are not "
            "trusted facts; "
            "run 'publisher verify' and repair the log first",
            reason=Reason.SCHEMA_ERROR,
        )
    return state


def missing_basis(
    run: Run, *, event_id: str | None = None, source_id: str | None = None, logs: LogCache | None = None
) -> MissingBasis:
    """The facts that show something missing, from an event or a snapshot; refused otherwise."""
    if (event_id is None) == (source_id is None):
        raise UsageError("give exactly one of --event or --source-id")
    state = _intact_log(run, logs)
    slug = run.slug()
    if event_id is not None:
        index = next((i for i, e in enumerate(state.events) if e.event_id == event_id), None)
        if index is None:
            raise UsageError(f"no event {event_id[:40]!r} in {run.path.name}/events.jsonl")
        event, digest = state.events[index], state.digests[index]
        if event.type is not EventType.FETCH_FAILED:
            raise ClaimRefusal(
                Guard.NOTHING_MISSING,
                f"{event_id} is a {event.type.value} event, not fetch_failed: nothing shows the source unavailable; "
                "name a fetch_failed event, or the snapshot with --source-id",
            )
        basis = MissingBasis(run=slug, event_id=event.event_id, event_digest=digest, url=event.url)
        _refuse_if_available(run, state, basis, None)
        return basis
    snap = run.store.read(str(source_id))  # verified on read: a tampered snapshot is no fact
    acquired = [
        (event, digest)
        for event, digest in zip(state.events, state.digests, strict=True)
        if event.source_id == snap.source_id and event.type in (EventType.FETCH, EventType.LOCAL_PDF)
    ]
    if not acquired:
        raise ClaimRefusal(
            Guard.NOTHING_MISSING,
            f"{snap.source_id} was never acquired in this run (no fetch or local_pdf event): registered text is "
            "no fact about what is missing; acquire the source with 'publisher source fetch' or 'source local'",
        )
    event, digest = acquired[-1]
    common = {
        "run": slug,
        "event_id": event.event_id,
        "event_digest": digest,
        "url": snap.url,
        "source_id": snap.source_id,
        "record_hash": snap.record_hash,
    }
    surface = snap.surface
    found: MissingBasis | None = None
    if surface is not None and surface.missing_pages:  # the more specific fact first
        found = MissingBasis(**common, manifest_hash=surface.manifest_hash, missing_pages=surface.missing_pages)
    elif restricted(snap.access, snap.surface):
        found = MissingBasis(**common, access=snap.access.value)
    if found is not None:
        _refuse_if_available(run, state, found, snap)
        return found
    raise ClaimRefusal(
        Guard.NOTHING_MISSING,
        f"{snap.source_id} is full text with no declared page missing: the facts show nothing missing, so no "
        "missingness record is made (review the source with 'publisher review' instead)",
    )


def restricted(access: Access | str | None, surface: Surface | SurfaceView | None) -> bool:
    """Whether a snapshot's access shows text missing: an abstract (or an access this version does
    not know), or any text other than full text whose surface is not declared complete. A web
    page, guideline or preprint fetched whole and declared complete (``--complete``) misses nothing."""
    try:
        kind = Access(access or "")
    except ValueError:
        return True
    if kind is Access.FULL_TEXT:
        return False
    return kind is Access.ABSTRACT or surface is None or not surface.complete


def _work_keys(snap: Snapshot) -> set[str]:
    """A snapshot's work identities (:func:`~.model.work_keys`) and its URL."""
    return set(work_keys(snap.derived_ids(), snap.url, snap.content_hash)) | {f"url:{url_identity(snap.url)}"}


def available_now(run: Run, state: LogState[EventView], basis: MissingBasis, snap: Snapshot | None) -> str | None:
    """Why the run's own facts show available what ``basis`` shows missing, or None.

    Whatever the order of acquisition: a fresh fetch of the failed URL (as :func:`~.model.url_identity`
    compares addresses) anywhere in the log; for
    a snapshot (``snap``), another snapshot of the same work (a shared URL or paper id) acquired
    in the run with full text (``ACCESS_RESTRICTED``) or a complete declared surface
    (``SURFACE_INCOMPLETE``). A record cannot make a claim non-evaluable while the run holds
    what it says is missing.
    """
    kind = missing_kind(basis)
    if kind is MissingKind.SOURCE_UNAVAILABLE:
        failed = url_identity(basis.url)
        for e in state.events:
            requested = e.receipt.requested_url if e.receipt is not None else None
            fetched = {url_identity(u) for u in (e.url, requested) if u}
            if e.type is EventType.FETCH and e.fresh and failed in fetched:
                return f"{basis.url[:80]} was fetched in {e.event_id} of {run.path.name}: the source is available"
        return None
    if snap is None:
        return None
    keys = _work_keys(snap)
    acquired = {e.source_id for e in state.events if e.type in (EventType.FETCH, EventType.LOCAL_PDF) and e.source_id}
    for other_id in sorted(acquired - {snap.source_id}):
        try:
            other = run.store.read(str(other_id))
        except IntegrityError:
            continue
        if not keys & _work_keys(other):
            continue
        if kind is MissingKind.ACCESS_RESTRICTED and not restricted(other.access, other.surface):
            return f"the run holds the full text of the same work ({other.source_id[:16]}…)"
        if kind is MissingKind.SURFACE_INCOMPLETE and other.surface is not None and other.surface.complete:
            return f"the run holds a complete surface of the same work ({other.source_id[:16]}…)"
    return None


def _refuse_if_available(run: Run, state: LogState[EventView], basis: MissingBasis, snap: Snapshot | None) -> None:
    why = available_now(run, state, basis, snap)
    if why is not None:
        raise ClaimRefusal(
            Guard.NOTHING_MISSING,
            f"{why}, so nothing is missing and no missingness record is made (assess the claim on that evidence, "
            "or review it with 'publisher review')",
        )


def missing_kind(basis: MissingBasis) -> MissingKind:
    """The kind of missingness a basis shows."""
    if basis.source_id is None:
        return MissingKind.SOURCE_UNAVAILABLE
    if basis.missing_pages:
        return MissingKind.SURFACE_INCOMPLETE
    return MissingKind.ACCESS_RESTRICTED


def unsigned_fact(run: Run, basis: MissingBasis, keys: KeyRing, logs: LogCache | None = None) -> str | None:
    """Why the logged fact ``basis`` names is not signed for ``run`` by a key of ``keys``, or None.

    With trusted keys a line appended by hand to the log is no fact: the event must verify against
    one of them for this run and, for a snapshot's kind, seal the snapshot's metadata as the basis
    names it (``record_hash``).
    """
    state = log_of(run, logs)
    fact = next((e for e in state.events if e.event_id == basis.event_id), None)
    if fact is None:
        return f"{basis.event_id} is not in {run.path.name}/events.jsonl"
    unsigned = event_signature_problem(fact, keys, run.name(), Role.ACQUIRE)
    if unsigned is not None:
        return f"{unsigned}: with trusted keys only a signed acquisition fact counts"
    if basis.source_id is not None and fact.record_hash != basis.record_hash:
        return f"{basis.event_id} of {run.path.name} does not seal the snapshot metadata the record rests on"
    return None


def record_missing(
    run: Run, claim: str, *, keys: KeyRing, event_id: str | None = None, source_id: str | None = None
) -> Missing:
    """Derive, write (once) and return the missingness record of ``claim`` in ``run``.

    ``keys`` are the wiki's trusted keys, those of the policy MkDocs resolves, as the build reads
    them: with any, the fact must be signed by one of them (:func:`unsigned_fact`), else nothing
    is written.
    """
    statement = normalise_statement(claim)
    if not statement:
        raise UsageError("--claim must not be empty")
    basis = missing_basis(run, event_id=event_id, source_id=source_id)
    unsigned = unsigned_fact(run, basis, keys) if keys else None
    if unsigned is not None:
        raise ClaimRefusal(Guard.NOTHING_MISSING, f"{unsigned}; acquire with the wiki's key and ask again")
    record = MissingnessRecord(
        schema_version=1,
        claim=statement,
        claim_hash=claim_hash(statement),
        kind=missing_kind(basis),
        basis=basis,
        created_at=format_ts(utc_now()),
    )
    stored, rid, created = write_record(run, record)
    return Missing(stored, rid, created)
