"""The ``C-CLAIM`` guards: what makes a proposed status structurally admissible (section 14).

Three kinds of rule, kept apart on purpose:

1. **Shape** (:func:`shape_problems`), true or false forever: S, P and C name evidence; P names a
   non-empty condition and only P carries conditions; NS names a review; NE a missingness record.
2. **Admission** (:func:`admit`), against the current state, at assessment time only: every
   evidence label is a footnote of the concept whose spans are verified excerpts of accepted
   artifacts of the runs it names, as they assemble now; the review is of the same claim
   (``claim_hash``), protocol-complete over a complete surface, and its snapshot still carries that
   surface; the missingness record is of the same claim and the facts it rests on still hold.
   The outcome, admitted or not, is logged; admission is history and never changes.
3. **Agreement and provenance now** (:func:`check_concept_claims`, the wiki check): each claim in
   front matter equals the admitted assessment entry it names (else a finding that fails the
   build); the ids that entry bound are re-checked against the current state, and a claim whose
   grounds no longer hold is shown as "admissible when assessed, provenance invalid now" with
   the reason, without failing the build.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ...acquire.signing import KeyRing
from ...kernel.errors import IntegrityError, PublisherError, UsageError
from ...kernel.eventlog import LogState
from ...kernel.findings import Finding
from ...kernel.models import Access
from ...kernel.reasons import Reason
from ..concepts import ConceptClaim, ConceptDoc, EpistemicStatus, EvidenceFootnote
from ..evidence import ConceptEvidence, RunEvidence, WikiCheck
from .log import (
    Assessment,
    Bound,
    BoundEvidence,
    BoundMissingness,
    BoundRef,
    BoundReview,
    signature_problem,
)
from .missingness import LogCache, log_of, missing_basis, missing_kind, unsigned_fact
from .model import (
    CHECK,
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
from .reviews import build_review, surface_declared_complete

__all__ = [
    "Problem",
    "Proposal",
    "ClaimState",
    "shape_problems",
    "admit",
    "bound_problem",
    "provenance_now",
    "AdmittedIndex",
    "admitted_index",
    "check_concept_claims",
    "log_findings",
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


@dataclass
class ClaimState:
    """One claim of a concept as the wiki check found it: its entry and its provenance now."""

    concept: str
    rel: str
    claim: ConceptClaim
    claim_hash: str
    entry: Assessment | None
    provenance: list[str] = field(default_factory=list)
    """Why the bound grounds no longer hold (empty: provenance valid now)."""

    @property
    def provenance_valid(self) -> bool:
        """Whether every id the assessment bound still holds now."""
        return self.entry is not None and not self.provenance


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
        if not any(c.strip() for c in p.conditions):
            out.append(
                Problem(Guard.CONDITIONS_REQUIRED, "partially_supported needs a non-empty condition (--condition)")
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


def _find_record(wiki: WikiCheck, rid: str, model: type[R]) -> tuple[RunEvidence, R] | str:
    """The run holding record ``rid`` and the verified record, or why there is none."""
    for ev in wiki.runs:
        try:
            return ev, read_record(ev.run, rid, model)
        except IntegrityError as exc:
            if exc.reason is Reason.UNKNOWN_SOURCE:
                continue
            return f"{rid[:16]}… in {ev.rel} does not verify ({exc.message[:120]})"
    return f"no record {rid[:16]}… in any run of the wiki"


def _review_now(ev: RunEvidence, review: ReviewRecord, logs: LogCache | None = None) -> Problem | None:
    """Why a review's ground no longer holds: its snapshot or that snapshot's surface changed, its
    search now exceeds the review budget (``REVIEW_INCOMPLETE``: it did not finish searching), or
    executing it again gives another record."""
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
            logs,
        )
    except PublisherError as exc:
        if isinstance(exc, ClaimRefusal) and exc.guard is Guard.REVIEW_INCOMPLETE:  # over the review budget
            return Problem(Guard.REVIEW_INCOMPLETE, f"re-executing the review is refused: {exc.message}")
        return _unresolved(f"re-executing the review over {review.source_id[:16]}… is refused ({exc.one_line()[:120]})")
    if again.model_copy(update={"created_at": review.created_at}) != review:
        return _unresolved(
            f"re-executing the review over {review.source_id[:16]}… gives another result (not written by the tool)"
        )
    return None


def _unresolved(why: str) -> Problem:
    """A review that does not resolve now (``REVIEW_UNRESOLVED``), with the fix."""
    return Problem(Guard.REVIEW_UNRESOLVED, f"{why}; review again")


def _missing_now(
    ev: RunEvidence, record: MissingnessRecord, logs: LogCache | None = None, keys: KeyRing | None = None
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
        return f"the event log of {ev.rel} is torn or broken: its facts are not trusted now"
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


def _review_grounds(
    ev: RunEvidence,
    rid: str,
    review: ReviewRecord,
    chash: str,
    logs: LogCache | None = None,
    keys: KeyRing | None = None,
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
    now = _review_now(ev, review, logs)
    if now is not None:
        return now
    if keys and not surface_declared_complete(ev.run, ev.run.store.read(review.source_id), logs, keys):
        return Problem(
            Guard.REVIEW_INCOMPLETE,
            f"{rid[:16]}… covers a surface no acquisition signed by a trusted key declared complete; "
            "acquire the source with the wiki's key and review again",
        )
    return None


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
    keys = set(work_keys(snap.paper, snap.url, snap.content_hash)) | {f"url:{url_identity(snap.url)}"}
    for sid, info in wiki.sources.items():
        meta = info.meta
        if sid == snap.source_id or not meta.ok:
            continue
        theirs = set(work_keys(meta.paper, meta.url, meta.content_hash))
        if meta.url:
            theirs.add(f"url:{url_identity(meta.url)}")
        if not keys & theirs:
            continue
        if record.kind is MissingKind.ACCESS_RESTRICTED and meta.access == Access.FULL_TEXT.value:
            return f"the wiki publishes evidence from the full text of the same work ({sid[:16]}…)"
        if record.kind is MissingKind.SURFACE_INCOMPLETE and meta.surface is not None and meta.surface.complete:
            return f"the wiki publishes evidence from a complete surface of the same work ({sid[:16]}…)"
    return None


def _missing_grounds(
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
    now = _missing_now(ev, record, logs, wiki.policy.trusted_keys) or _published_elsewhere(wiki, record, ev)
    if now is not None:
        return Problem(Guard.MISSINGNESS_UNRESOLVED, f"{now}; the claim may be evaluable: assess it on the evidence")
    return None


def _resolve_review(wiki: WikiCheck, rid: str, chash: str) -> tuple[BoundReview | None, list[Problem]]:
    found = _find_record(wiki, rid, ReviewRecord)
    if isinstance(found, str):
        return None, [Problem(Guard.REVIEW_UNRESOLVED, f"{found}; run 'publisher review' for this claim")]
    ev, review = found
    problem = _review_grounds(ev, rid, review, chash, keys=wiki.policy.trusted_keys)
    if problem is not None:
        return None, [problem]
    return BoundReview(run=ev.slug, source_id=review.source_id, surface_manifest_hash=review.surface_manifest_hash), []


def _resolve_missingness(wiki: WikiCheck, mid: str, chash: str) -> tuple[BoundMissingness | None, list[Problem]]:
    found = _find_record(wiki, mid, MissingnessRecord)
    if isinstance(found, str):
        return None, [Problem(Guard.MISSINGNESS_UNRESOLVED, f"{found}; run 'publisher missing' for this claim")]
    ev, record = found
    problem = _missing_grounds(wiki, ev, mid, record, chash)
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


def bound_problem(entry: Assessment) -> str | None:
    """Why an admitted entry's ``bound`` is not what ``publisher assess`` binds for it, or None.

    The command binds every evidence label it names, in order, each to at least one span, and
    the review and the missingness record exactly when it names them. A line that does not is
    no assessment of the tool (an edited or forged log), so its claim is never shown as grounded.
    """
    bound = entry.bound
    if bound is None:
        return f"{entry.assessment_id} is admitted but binds no grounds"
    if [item.label for item in bound.evidence] != list(entry.evidence) or any(not i.refs for i in bound.evidence):
        return f"{entry.assessment_id} does not bind exactly the evidence labels it names"
    if (entry.review is None) != (bound.review is None):
        return f"{entry.assessment_id} does not bind exactly the review it names"
    if (entry.missingness is None) != (bound.missingness is None):
        return f"{entry.assessment_id} does not bind exactly the missingness record it names"
    return None


def provenance_now(
    wiki: WikiCheck,
    ce: ConceptEvidence,
    entry: Assessment,
    notes: dict[str, EvidenceFootnote] | None = None,
    logs: LogCache | None = None,
    runs: dict[str, RunEvidence] | None = None,
) -> list[str]:
    """Why the ids an admitted entry bound do not hold now (empty: provenance valid now).

    ``notes`` (the concept's footnotes by label) is computed once per concept by the caller, so
    the check stays linear in claims and footnotes.
    """
    out: list[str] = []
    bound = entry.bound
    unbound = bound_problem(entry)
    if bound is None or unbound is not None:  # a line the tool did not write: it grounds nothing
        return [unbound or f"{entry.assessment_id} binds no grounds"]
    doc = ce.doc
    if runs is None:
        runs = {ev.slug: ev for ev in wiki.runs}
    if notes is None:
        notes = {note.label: note for note in doc.footnotes} if doc is not None else {}
    for item in bound.evidence:
        note = notes.get(item.label)
        refs = {(r.source_id, r.start, r.end) for r in note.refs} if note is not None else set()
        for ref in item.refs:
            key = (ref.source_id, ref.start, ref.end)
            where = f"{ref.source_id[:16]}…#{ref.start}-{ref.end}"
            ev = runs.get(ref.run)
            info = wiki.sources.get(ref.source_id)
            if key not in refs:
                out.append(f"[^{item.label}] no longer quotes {where}")
            elif ev is None or key not in ev.accepted:
                out.append(f"{where} is no longer accepted evidence of run {ref.run}")
            elif info is None or info.meta.record_hash != ref.record_hash:
                out.append(f"{where}: the snapshot's sealed metadata changed since assessment")
    # The record an id names is found and judged again as admission judged it (same claim,
    # complete, facts holding) and must be the one bound: a bound that omits or misplaces it is
    # no ground.
    if entry.review is not None and bound.review is not None:
        reviewed = _find_record(wiki, entry.review, ReviewRecord)
        if isinstance(reviewed, str):
            out.append(reviewed)
        else:
            ev, review = reviewed
            if (ev.slug, review.source_id, review.surface_manifest_hash) != (
                bound.review.run,
                bound.review.source_id,
                bound.review.surface_manifest_hash,
            ):
                out.append(f"{entry.review[:16]}… is not the review {entry.assessment_id} bound")
            elif (
                problem := _review_grounds(ev, entry.review, review, entry.claim_hash, logs, wiki.policy.trusted_keys)
            ) is not None:
                out.append(problem.detail)
    if entry.missingness is not None and bound.missingness is not None:
        recorded = _find_record(wiki, entry.missingness, MissingnessRecord)
        if isinstance(recorded, str):
            out.append(recorded)
        else:
            ev, record = recorded
            if (ev.slug, record.kind.value) != (bound.missingness.run, bound.missingness.kind):
                out.append(f"{entry.missingness[:16]}… is not the record {entry.assessment_id} bound")
            elif (problem := _missing_grounds(wiki, ev, entry.missingness, record, entry.claim_hash, logs)) is not None:
                out.append(problem.detail)
    return out


def log_findings(state: LogState, ring: KeyRing) -> list[Finding]:
    """``C-CLAIM`` findings of the assessment log itself: a torn line, a broken chain."""
    out: list[Finding] = []
    if state.torn:
        out.append(
            Finding(
                None,
                "assessments.jsonl",
                "the last line is torn; repair it by hand",
                check=CHECK,
                field=Guard.ASSESSMENT_LOG.value,
            )
        )
    for f in state.findings:
        out.append(
            Finding(
                None,
                f.file,
                f"{f.detail}: an edited, reordered or deleted line",
                line=f.line,
                check=CHECK,
                field=Guard.ASSESSMENT_LOG.value,
            )
        )
    return out


AdmittedIndex = dict[tuple[str, str], list[Assessment]]
"""The admitted entries of each (concept, claim id), in log order."""


def admitted_index(entries: Iterable[Assessment]) -> AdmittedIndex:
    """Every admitted entry by (concept, claim id), in log order (built once per wiki check)."""
    out: AdmittedIndex = {}
    for entry in entries:
        if entry.admitted:
            out.setdefault((entry.concept, entry.claim_id), []).append(entry)
    return out


def _superseded_by(entry: Assessment, index: AdmittedIndex, ring: KeyRing) -> Assessment | None:
    """The latest trusted admitted entry of the same claim logged after ``entry``, or None.

    The front matter must carry the claim's latest admission: restoring an older admitted entry
    (a rollback to a status since re-assessed) is no agreement with the log. With trusted keys
    only a signed later entry supersedes (an unsigned one is no assessment of this wiki).
    """
    for later in reversed(index.get((entry.concept, entry.claim_id), ())):
        if later.number <= entry.number:
            return None
        if not ring or signature_problem(later, ring) is None:
            return later
    return None


def _differences(claim: ConceptClaim, entry: Assessment, slug: str) -> list[str]:
    out = []
    if entry.concept != slug or entry.claim_id != claim.id:
        out.append(f"it admitted claim {entry.claim_id!r} of concept {entry.concept!r}")
    if claim_hash(claim.statement) != entry.claim_hash:
        out.append("statement")
    for name in ("status", "conditions", "evidence", "review", "missingness"):
        if getattr(claim, name) != getattr(entry, name):
            out.append(name)
    return out


def check_concept_claims(
    wiki: WikiCheck,
    ce: ConceptEvidence,
    entries: dict[str, Assessment],
    ring: KeyRing,
    log_ok: bool,
    logs: LogCache | None = None,
    runs: dict[str, RunEvidence] | None = None,
    admitted: AdmittedIndex | None = None,
) -> list[ClaimState]:
    """Every claim of one concept: shape, agreement with its entry, provenance now.

    Findings (which fail the build) go to ``wiki.findings``; provenance that no longer holds
    is recorded on the returned states only.
    """
    doc = ce.doc
    if doc is None:
        return []
    states: list[ClaimState] = []
    notes = {note.label: note for note in doc.footnotes}
    if runs is None:
        runs = {ev.slug: ev for ev in wiki.runs}
    if admitted is None:
        admitted = admitted_index(entries.values())
    statements: dict[str, str] = {}
    for index, claim in enumerate(doc.front.claims):

        def add(guard: Guard, detail: str, claim: ConceptClaim = claim, index: int = index) -> None:
            wiki.findings.append(
                Finding(None, ce.rel, detail, artifact_id=f"claim:{claim.id}", check=CHECK, field=guard.value)
            )

        state = ClaimState(ce.slug, ce.rel, claim, claim_hash(claim.statement), None)
        states.append(state)
        for problem in shape_problems(Proposal.of(claim)):
            add(problem.guard, problem.detail)
        first = statements.setdefault(conflict_key(claim.statement), claim.id)
        if first != claim.id:  # one statement, one status, however it was put back by hand
            add(Guard.CLAIM_CONFLICT, f"claim {first!r} of {ce.rel} has this statement; keep one of them")
        if claim.assessment is None:
            add(Guard.ASSESSMENT_MISSING, "no assessment admitted this claim; propose it with 'publisher assess'")
            continue
        entry = entries.get(claim.assessment)
        if entry is None or not entry.admitted:
            what = "is not in assessments.jsonl" if entry is None else "was rejected"
            add(Guard.ASSESSMENT_MISSING, f"{claim.assessment[:40]} {what}; propose the claim with 'publisher assess'")
            continue
        if not log_ok:
            add(Guard.ASSESSMENT_LOG, "assessments.jsonl does not verify, so its entries are not trusted")
            continue
        if ring:
            unsigned = signature_problem(entry, ring)
            if unsigned is not None:
                add(Guard.ASSESSMENT_LOG, f"{unsigned}; assess again with a trusted key (--key)")
                continue
        unbound = bound_problem(entry)
        if unbound is not None:
            add(Guard.ASSESSMENT_LOG, f"{unbound}: not a line 'publisher assess' writes; assess the claim again")
            continue
        differences = _differences(claim, entry, ce.slug)
        later = None if differences else _superseded_by(entry, admitted, ring)
        if later is not None:
            add(
                Guard.ASSESSMENT_MISMATCH,
                f"{entry.assessment_id} was superseded by {later.assessment_id} of the same claim; "
                "restore the front matter it wrote, or propose the change with 'publisher assess'",
            )
            continue
        if differences:
            add(
                Guard.ASSESSMENT_MISMATCH,
                f"front matter differs from {entry.assessment_id} in {', '.join(differences)}; "
                "restore it, or propose the change with 'publisher assess'",
            )
            continue
        state.entry = entry
        state.provenance = provenance_now(wiki, ce, entry, notes, logs, runs)
    return states
