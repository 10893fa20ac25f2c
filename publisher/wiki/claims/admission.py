"""Admission of a claim's status: whether a proposed status may be held (CONTRACT section 14).

The one job of this module is the ``C-CLAIM`` decision ``publisher assess`` logs, in two kinds of
rule kept apart on purpose:

1. **Shape** (:func:`shape_problems`), true or false forever: S, P and C name evidence; P names a
   non-empty condition and only P carries conditions; NS names a review; NE a missingness record.
   The wiki check applies it to every front-matter claim as well.
2. **Grounds against the current state** (:func:`admit`): every evidence label is a footnote of
   the concept whose spans are verified excerpts of accepted artifacts of the runs it names, as
   they assemble now; the review is of the same claim (``claim_hash``), protocol-complete over a
   complete surface, and its snapshot still carries that surface; the missingness record is of the
   same claim and the facts it rests on still hold. The outcome, admitted or not, is logged;
   admission is history and never changes.

How a review or a missingness record grounds a claim (:func:`review_grounds`,
:func:`missing_grounds`, found by :func:`find_record`) is judged here once: the re-check at build
time (:mod:`.provenance`) judges the ids an admission bound with the same functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...kernel.errors import IntegrityError, PublisherError, UsageError
from ...kernel.lookalike import blank
from ...kernel.reasons import Reason
from ...kernel.trust import KeyRing
from ..concepts import ConceptClaim, ConceptDoc, EpistemicStatus
from ..evidence import ConceptEvidence, RunEvidence, WikiCheck
from .adjudications import hit_key, valid_adjudications
from .log import Bound, BoundEvidence, BoundMissingness, BoundRef, BoundReview
from .missingness import LogCache, log_of, missing_basis, missing_kind, restricted, unsigned_fact
from .model import (
    EVIDENCE_STATUSES,
    ID_RE,
    ClaimRefusal,
    Guard,
    claim_hash,
    conflict_key,
    normalise_statement,
    url_identity,
    work_keys,
)
from .records import MissingKind, MissingnessRecord, R, ReviewRecord, read_record
from .reviews import build_review, same_search, sentence_problem

__all__ = [
    "Problem",
    "Proposal",
    "shape_problems",
    "admit",
    "find_record",
    "review_grounds",
    "missing_grounds",
]


@dataclass(frozen=True)
class Problem:
    """A guard that failed, with one line of cause and fix."""

    guard: Guard
    detail: str


@dataclass(frozen=True)
class Proposal:
    """A claim as proposed to ``publisher assess`` (or read from front matter)."""

    claim_id: str
    statement: str
    status: EpistemicStatus
    conditions: tuple[str, ...] = ()
    evidence: tuple[str, ...] = ()
    review: str | None = None
    missingness: str | None = None

    @classmethod
    def of(cls, claim: ConceptClaim) -> Proposal:
        """The proposal a front-matter claim states."""
        return cls(
            claim.id, claim.statement, claim.status, claim.conditions, claim.evidence, claim.review, claim.missingness
        )


def shape_problems(p: Proposal) -> list[Problem]:
    """The rules that hold or fail whatever the state: evidence, conditions, review, missingness.

    Each status rests on its own kind of ground only: S, P and C on evidence labels, NS on a
    review, NE on a missingness record, so that no claim is counted or shown as resting on
    grounds its status does not use.
    """
    out: list[Problem] = []
    status = p.status
    if status in EVIDENCE_STATUSES and not p.evidence:
        out.append(Problem(Guard.EVIDENCE_REQUIRED, f"{status.value} needs at least one evidence label (--evidence)"))
    if status is EpistemicStatus.PARTIALLY_SUPPORTED:
        if not p.conditions or any(blank(c) for c in p.conditions):
            out.append(
                Problem(
                    Guard.CONDITIONS_REQUIRED,
                    "partially_supported needs conditions that each show something (--condition): "
                    "white space, zero-width and other invisible characters are empty",
                )
            )
    elif p.conditions:
        out.append(
            Problem(
                Guard.CONDITIONS_NOT_ALLOWED,
                f"only partially_supported carries conditions, not {status.value}; drop them or propose P",
            )
        )
    seen: set[str] = set()
    repeated: str | None = None
    for label in p.evidence:
        if label in seen:
            repeated = label
            break
        seen.add(label)
    if repeated is not None:  # counted twice, it would flatter the claim's citations
        out.append(Problem(Guard.EVIDENCE_UNRESOLVED, f"[^{repeated[:60]}] is cited twice; cite each label once"))
    if status not in EVIDENCE_STATUSES and p.evidence:
        out.append(
            Problem(
                Guard.EVIDENCE_NOT_ALLOWED,
                f"{status.value} rests on a review or a missingness record, not on evidence labels; drop --evidence",
            )
        )
    if status is not EpistemicStatus.NOT_SUPPORTED and p.review is not None:
        out.append(Problem(Guard.REVIEW_REQUIRED, f"a document review grounds only not_supported, not {status.value}"))
    if status is not EpistemicStatus.NON_EVALUABLE and p.missingness is not None:
        out.append(
            Problem(Guard.MISSINGNESS_REQUIRED, f"a missingness record grounds only non_evaluable, not {status.value}")
        )
    if status is EpistemicStatus.NOT_SUPPORTED and p.review is None:
        out.append(
            Problem(
                Guard.REVIEW_REQUIRED, "not_supported needs a document review (run 'publisher review', then --review)"
            )
        )
    if status is EpistemicStatus.NON_EVALUABLE and p.missingness is None:
        out.append(
            Problem(
                Guard.MISSINGNESS_REQUIRED,
                "non_evaluable needs a missingness record (run 'publisher missing', then --missingness)",
            )
        )
    for name, value, guard in (
        ("review", p.review, Guard.REVIEW_UNRESOLVED),
        ("missingness", p.missingness, Guard.MISSINGNESS_UNRESOLVED),
    ):
        if value is not None and not ID_RE[name].fullmatch(value):
            out.append(
                Problem(guard, f"{value[:80]!r} is not a {name} id ({'rev' if name == 'review' else 'mis'}-<64 hex>)")
            )
    return out


def _named_runs(wiki: WikiCheck, doc: ConceptDoc) -> list[RunEvidence]:
    out = []
    for entry in doc.front.runs:
        ev = wiki.run_by_rel(entry.path)
        if ev is not None and ev.assembled:
            out.append(ev)
    return out


def _resolve_evidence(
    wiki: WikiCheck, ce: ConceptEvidence, labels: Sequence[str]
) -> tuple[list[BoundEvidence], list[Problem]]:
    """Each label as the verified, accepted spans its footnote quotes now."""
    doc = ce.doc
    bound: list[BoundEvidence] = []
    problems: list[Problem] = []
    if doc is None:
        return bound, [Problem(Guard.EVIDENCE_UNRESOLVED, f"{ce.rel} does not parse; fix it first")]
    notes = {note.label: note for note in doc.footnotes}
    named = _named_runs(wiki, doc)
    for label in labels:
        note = notes.get(label)
        if note is None or note.error is not None or not note.refs:
            problems.append(
                Problem(
                    Guard.EVIDENCE_UNRESOLVED,
                    f"[^{label[:60]}] is not an evidence footnote of {ce.rel}; cite the label of a promoted excerpt",
                )
            )
            continue
        refs: list[BoundRef] = []
        for ref in note.refs:
            key = (ref.source_id, ref.start, ref.end)
            ev = next((ev for ev in named if key in ev.accepted), None)
            quoted_ok = ref.quoted is None or ref.quoted == wiki.excerpts.get(key)
            if ev is None or not quoted_ok:
                problems.append(
                    Problem(
                        Guard.EVIDENCE_UNRESOLVED,
                        f"[^{label[:60]}] quotes {ref.source_id}#{ref.start}-{ref.end}, not a verified excerpt of an "
                        "accepted artifact in the concept's runs now; re-assemble and promote, then assess",
                    )
                )
                continue
            info = wiki.sources.get(ref.source_id)
            refs.append(
                BoundRef(
                    run=ev.slug,
                    source_id=ref.source_id,
                    start=ref.start,
                    end=ref.end,
                    record_hash=info.meta.record_hash if info else None,
                )
            )
        if refs and len(refs) == len(note.refs):
            bound.append(BoundEvidence(label=label, refs=tuple(refs)))
    return bound, problems


def find_record(wiki: WikiCheck, rid: str, model: type[R]) -> tuple[RunEvidence, R] | str:
    """The run holding record ``rid`` and the verified record, or why there is none."""
    for ev in wiki.runs:
        try:
            return ev, read_record(ev.run, rid, model)
        except IntegrityError as exc:
            if exc.reason is Reason.UNKNOWN_SOURCE:
                continue
            return f"{rid[:16]}… in {ev.rel} does not verify ({exc.message[:120]})"
    return f"no record {rid[:16]}… in any run of the wiki"


def _review_now(
    ev: RunEvidence, review: ReviewRecord, *, keys: KeyRing, logs: LogCache | None = None
) -> Problem | None:
    """Why a review's ground no longer holds: its snapshot or that snapshot's surface changed, its
    search now exceeds the review budget (``REVIEW_INCOMPLETE``: it did not finish searching), its
    surface is complete only by an acquisition no key of ``keys`` (the wiki's trusted keys) signed
    (``REVIEW_INCOMPLETE``), or executing it again under those keys gives another record."""
    try:
        snap = ev.run.store.read(review.source_id)
    except IntegrityError as exc:
        return _unresolved(f"the reviewed snapshot {review.source_id[:16]}… does not verify now ({exc.reason})")
    manifest = snap.surface.manifest_hash if snap.surface else None
    if manifest != review.surface_manifest_hash:
        return _unresolved(
            f"the reviewed snapshot's declared surface is not the one reviewed ({review.source_id[:16]}…)"
        )
    try:
        again = build_review(
            ev.run,
            review.source_id,
            review.claim,
            review.search_terms,
            review.semantic_queries_declared_not_executed,
            keys=keys,
            logs=logs,
        )
    except PublisherError as exc:
        if isinstance(exc, ClaimRefusal) and exc.guard is Guard.REVIEW_INCOMPLETE:  # over the review budget
            return Problem(Guard.REVIEW_INCOMPLETE, f"re-executing the review is refused: {exc.message}")
        return _unresolved(f"re-executing the review over {review.source_id[:16]}… is refused ({exc.one_line()[:120]})")
    if keys and review.surface_complete and not again.surface_complete:
        return Problem(
            Guard.REVIEW_INCOMPLETE,
            f"{review.source_id[:16]}… has a surface no acquisition signed by a trusted key declared complete; "
            "acquire the source with the wiki's key and review again",
        )
    if not same_search(review, again) or sentence_problem(review, snap.text) is not None:
        return _unresolved(
            f"re-executing the review over {review.source_id[:16]}… gives another result (not written by the tool)"
        )
    return None


def _unresolved(why: str) -> Problem:
    """A review that does not resolve now (``REVIEW_UNRESOLVED``), with the fix."""
    return Problem(Guard.REVIEW_UNRESOLVED, f"{why}; review again")


def _missing_now(
    ev: RunEvidence, record: MissingnessRecord, *, keys: KeyRing, logs: LogCache | None = None
) -> str | None:
    """Why a missingness record's facts no longer hold: the line, the snapshot or a closed gap.

    With ``keys`` (the wiki's trusted keys), the logged fact must be signed by one of them for
    this run and, for a snapshot, seal its metadata: a hand-written line is no fact.
    """
    basis = record.basis
    try:
        derived = missing_basis(
            ev.run, logs=logs, event_id=basis.event_id if basis.source_id is None else None, source_id=basis.source_id
        )
    except (UsageError, IntegrityError, ClaimRefusal) as exc:
        return f"the facts no longer show it missing ({exc.one_line()[:160]})"
    if derived != basis or missing_kind(derived) is not record.kind:
        return "the record's basis is not what the run's facts give now"
    statement = normalise_statement(record.claim)
    if record.claim != statement or record.claim_hash != claim_hash(statement):
        return "the record's claim and claim_hash disagree (not written by 'publisher missing')"
    state = log_of(ev.run, logs)
    if not state.intact:
        return (
            f"the event log of {ev.rel} has a torn or invalid last line or a broken chain: its facts are not "
            "trusted now"
        )
    index = next((i for i, e in enumerate(state.events) if e.event_id == basis.event_id), None)
    if index is None or state.digests[index] != basis.event_digest:
        return f"{basis.event_id} of {ev.rel} is not the logged fact the record rests on"
    if keys:
        unsigned = unsigned_fact(ev.run, basis, keys, logs)
        if unsigned is not None:
            return unsigned
    if record.kind is MissingKind.SOURCE_UNAVAILABLE:
        return None
    try:
        snap = ev.run.store.read(str(basis.source_id))
    except IntegrityError as exc:
        return f"the snapshot {str(basis.source_id)[:16]}… does not verify now ({exc.reason})"
    if snap.record_hash != basis.record_hash:
        return "the snapshot's sealed metadata is not the one the record rests on"
    return None  # a snapshot of the same work acquired since, in any order: missing_basis refuses


def review_grounds(
    ev: RunEvidence,
    rid: str,
    review: ReviewRecord,
    chash: str,
    *,
    keys: KeyRing,
    logs: LogCache | None = None,
) -> Problem | None:
    """Why review ``rid`` does not ground a not_supported of claim ``chash`` now, or None."""
    if review.claim_hash != chash:
        return Problem(
            Guard.REVIEW_OTHER_CLAIM,
            f"{rid[:16]}… reviews another claim ({review.claim_hash[:20]}…); review this statement",
        )
    if not (review.protocol_complete and review.surface_complete):
        why = (
            "its surface is not declared complete"
            if not review.surface_complete
            else "not every declared term was executed"
        )
        return Problem(
            Guard.REVIEW_INCOMPLETE,
            f"{rid[:16]}… is not protocol-complete ({why}); declare a complete surface at acquisition and review again",
        )
    return _review_now(ev, review, keys=keys, logs=logs) or _hits_adjudicated(ev, rid, review, keys)


def _hits_adjudicated(ev: RunEvidence, rid: str, review: ReviewRecord, keys: KeyRing) -> Problem | None:
    """Why a review's hits leave not_supported unadmissible: a hit without a valid adjudication.

    A search that found the claim's terms shows nothing absent until a person has read every hit
    in its sentence and recorded (signed, on a signed wiki) that it does not support the claim.
    """
    if not review.hits:
        return None
    found = valid_adjudications(ev.run, rid, keys)
    if isinstance(found, str):
        return Problem(Guard.REVIEW_UNADJUDICATED, f"{found}: its adjudications are not trusted; repair it by hand")
    open_hits = [(n, h) for n, h in enumerate(review.hits, start=1) if hit_key(h) not in found]
    if not open_hits:
        return None
    n, first = open_hits[0]
    return Problem(
        Guard.REVIEW_UNADJUDICATED,
        f"{rid[:16]}… found {len(review.hits)} hit(s), {len(open_hits)} not adjudicated (first: hit {n}, "
        f"{first.term[:40]!r} #{first.start}-{first.end}); read each in its sentence and record "
        "'publisher review adjudicate --hit N --reason …' if it does not support the claim",
    )


def _published_elsewhere(wiki: WikiCheck, record: MissingnessRecord, ev: RunEvidence) -> str | None:
    """Why the wiki's own published evidence shows available what ``record`` calls missing.

    A source behind accepted evidence anywhere in the wiki fetched from the failed address
    (``SOURCE_UNAVAILABLE``), or of the same work (a shared paper id, URL or text) in full text
    (``ACCESS_RESTRICTED``) or with a complete surface (``SURFACE_INCOMPLETE``): the claim may be
    evaluated on it.
    """
    basis = record.basis
    if record.kind is MissingKind.SOURCE_UNAVAILABLE or basis.source_id is None:
        failed = url_identity(basis.url)
        held = next(
            (sid for sid, info in wiki.sources.items() if info.meta.url and url_identity(info.meta.url) == failed), None
        )
        return f"the wiki publishes evidence from {basis.url[:80]} ({held[:16]}…)" if held else None
    try:
        snap = ev.run.store.read(basis.source_id)
    except IntegrityError:
        return None  # _missing_now names it
    keys = set(work_keys(snap.derived_ids(), snap.url, snap.content_hash)) | {f"url:{url_identity(snap.url)}"}
    for sid, info in wiki.sources.items():
        meta = info.meta
        if sid == snap.source_id or not meta.ok:
            continue
        theirs = set(work_keys(meta.derived_ids(), meta.url, meta.content_hash))
        if meta.url:
            theirs.add(f"url:{url_identity(meta.url)}")
        if not keys & theirs:
            continue
        if record.kind is MissingKind.ACCESS_RESTRICTED and not restricted(meta.access, meta.surface):
            return f"the wiki publishes evidence from the full text of the same work ({sid[:16]}…)"
        if record.kind is MissingKind.SURFACE_INCOMPLETE and meta.surface is not None and meta.surface.complete:
            return f"the wiki publishes evidence from a complete surface of the same work ({sid[:16]}…)"
    return None


def missing_grounds(
    wiki: WikiCheck,
    ev: RunEvidence,
    mid: str,
    record: MissingnessRecord,
    chash: str,
    logs: LogCache | None = None,
) -> Problem | None:
    """Why record ``mid`` does not ground a non_evaluable of claim ``chash`` now, or None."""
    if record.claim_hash != chash:
        return Problem(Guard.MISSINGNESS_OTHER_CLAIM, f"{mid[:16]}… records another claim ({record.claim_hash[:20]}…)")
    now = _missing_now(ev, record, keys=wiki.policy.trusted_keys, logs=logs) or _published_elsewhere(wiki, record, ev)
    if now is not None:
        return Problem(Guard.MISSINGNESS_UNRESOLVED, f"{now}; the claim may be evaluable: assess it on the evidence")
    return None


def _resolve_review(wiki: WikiCheck, rid: str, chash: str) -> tuple[BoundReview | None, list[Problem]]:
    found = find_record(wiki, rid, ReviewRecord)
    if isinstance(found, str):
        return None, [Problem(Guard.REVIEW_UNRESOLVED, f"{found}; run 'publisher review' for this claim")]
    ev, review = found
    problem = review_grounds(ev, rid, review, chash, keys=wiki.policy.trusted_keys)
    if problem is not None:
        return None, [problem]
    return BoundReview(run=ev.slug, source_id=review.source_id, surface_manifest_hash=review.surface_manifest_hash), []


def _resolve_missingness(wiki: WikiCheck, mid: str, chash: str) -> tuple[BoundMissingness | None, list[Problem]]:
    found = find_record(wiki, mid, MissingnessRecord)
    if isinstance(found, str):
        return None, [Problem(Guard.MISSINGNESS_UNRESOLVED, f"{found}; run 'publisher missing' for this claim")]
    ev, record = found
    problem = missing_grounds(wiki, ev, mid, record, chash)
    if problem is not None:
        return None, [problem]
    return BoundMissingness(run=ev.slug, kind=record.kind.value), []


def admit(wiki: WikiCheck, ce: ConceptEvidence, p: Proposal) -> tuple[Bound | None, list[Problem]]:
    """Every guard against the current state; the bound ids when all pass, else the problems."""
    problems = shape_problems(p)
    chash = claim_hash(p.statement)
    doc = ce.doc
    if doc is not None:
        key = conflict_key(p.statement)
        for other in doc.front.claims:
            if other.id != p.claim_id and conflict_key(other.statement) == key:
                problems.append(
                    Problem(
                        Guard.CLAIM_CONFLICT,
                        f"claim {other.id!r} of {ce.rel} has this statement; assess it under that id",
                    )
                )
    evidence, found = _resolve_evidence(wiki, ce, p.evidence)
    problems += found
    review = missing = None
    if p.review is not None and ID_RE["review"].fullmatch(p.review):
        review, found = _resolve_review(wiki, p.review, chash)
        problems += found
    if p.missingness is not None and ID_RE["missingness"].fullmatch(p.missingness):
        missing, found = _resolve_missingness(wiki, p.missingness, chash)
        problems += found
    if problems:
        return None, problems
    return Bound(evidence=tuple(evidence), review=review, missingness=missing), []
