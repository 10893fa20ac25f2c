"""Provenance at build time: each front-matter claim against the assessment log (CONTRACT section 14).

The one job of this module is the wiki check's re-check of claims (:func:`check_concept_claims`):
each claim in front matter has its shape checked (:func:`.admission.shape_problems`) and must
equal the admitted assessment entry it names, the latest one of its claim (else a finding that
fails the build); the log itself must verify (:func:`log_findings`). The ids that entry bound are
then re-checked against the current state (:func:`provenance_now`), with the grounds admission
used, and a claim whose grounds no longer hold is shown as "admissible when assessed, provenance
invalid now" with the reason, without failing the build.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...kernel.eventlog import LogState
from ...kernel.findings import Finding
from ...kernel.trust import KeyRing
from ..concepts import ConceptClaim, EvidenceFootnote
from ..evidence import ConceptEvidence, RunEvidence, WikiCheck
from ..promoted import is_stable_label, run_label_prefix
from ..revisions import revision_index
from .admission import Proposal, find_record, missing_grounds, review_grounds, shape_problems
from .log import Assessment, signature_problem
from .missingness import LogCache
from .model import CHECK, Guard, claim_hash, conflict_key
from .records import MissingnessRecord, ReviewRecord

__all__ = [
    "ClaimState",
    "bound_problem",
    "provenance_now",
    "same_evidence",
    "AdmittedIndex",
    "admitted_index",
    "check_concept_claims",
    "log_findings",
]


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
    warrant: Any = None
    """Its independent review now (a :class:`.warrant.WarrantState`, which ranks above this
    module); None until the warrants are applied."""

    @property
    def provenance_valid(self) -> bool:
        """Whether every id the assessment bound still holds now."""
        return self.entry is not None and not self.provenance


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
    labels: Sequence[str] | None = None,
) -> list[str]:
    """Why the ids an admitted entry bound do not hold now (empty: provenance valid now).

    ``notes`` (the concept's footnotes by label) is computed once per concept by the caller, so
    the check stays linear in claims and footnotes. ``labels`` are the claim's evidence labels as
    its front matter names them, one per bound item (a positional label the entry bound may have
    been migrated to the stable label of the same facts: :func:`same_evidence`); default: the
    entry's own.
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
    revisions = revision_index(wiki)
    superseded: set[str] = set()
    named = list(labels) if labels is not None and len(labels) == len(bound.evidence) else None
    for at, item in enumerate(bound.evidence):
        label = named[at] if named is not None else item.label
        note = notes.get(label)
        refs = {(r.source_id, r.start, r.end) for r in note.refs} if note is not None else set()
        for ref in item.refs:
            key = (ref.source_id, ref.start, ref.end)
            where = f"{ref.source_id[:16]}…#{ref.start}-{ref.end}"
            ev = runs.get(ref.run)
            info = wiki.sources.get(ref.source_id)
            if key not in refs:
                out.append(f"[^{label}] no longer quotes {where}")
            elif ev is None or key not in ev.accepted:
                out.append(f"{where} is no longer accepted evidence of run {ref.run}")
            elif info is None or info.meta.record_hash != ref.record_hash:
                out.append(f"{where}: the snapshot's sealed metadata changed since assessment")
            newer = revisions.current(ref.source_id)
            if newer is not None and ref.source_id not in superseded:
                superseded.add(ref.source_id)
                out.append(
                    f"{ref.source_id[:16]}… superseded by revision {newer.number} "
                    f"({newer.source_id[:16]}…, run {newer.run})"
                )
    # The record an id names is found and judged again as admission judged it (same claim,
    # complete, facts holding) and must be the one bound: a bound that omits or misplaces it is
    # no ground.
    if entry.review is not None and bound.review is not None:
        reviewed = find_record(wiki, entry.review, ReviewRecord)
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
                problem := review_grounds(
                    ev, entry.review, review, entry.claim_hash, keys=wiki.policy.trusted_keys, logs=logs
                )
            ) is not None:
                out.append(problem.detail)
    if entry.missingness is not None and bound.missingness is not None:
        recorded = find_record(wiki, entry.missingness, MissingnessRecord)
        if isinstance(recorded, str):
            out.append(recorded)
        else:
            ev, record = recorded
            if (ev.slug, record.kind.value) != (bound.missingness.run, bound.missingness.kind):
                out.append(f"{entry.missingness[:16]}… is not the record {entry.assessment_id} bound")
            elif (problem := missing_grounds(wiki, ev, entry.missingness, record, entry.claim_hash, logs)) is not None:
                out.append(problem.detail)
    return out


def log_findings(state: LogState[Assessment], ring: KeyRing) -> list[Finding]:
    """``C-CLAIM`` findings of the assessment log itself: a torn line, a broken chain."""
    return state.integrity_findings("assessments.jsonl", check=CHECK, field=Guard.ASSESSMENT_LOG.value)


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


def same_evidence(labels: Sequence[str], entry: Assessment, notes: dict[str, EvidenceFootnote]) -> bool:
    """Whether the front matter's evidence ``labels`` bind the facts ``entry`` bound.

    The labels the entry names, in order; or, for a label an earlier version derived from a
    position (``publisher migrate labels`` rewrites those), the stable label of the same run whose
    footnote quotes exactly the spans the entry bound. A stable label is never re-pointed: it must
    be the one the entry names.
    """
    if list(labels) == list(entry.evidence):
        return True
    bound = entry.bound
    if bound is None or len(labels) != len(bound.evidence) or len(labels) != len(entry.evidence):
        return False
    for label, item in zip(labels, bound.evidence, strict=True):
        if label == item.label:
            continue
        if is_stable_label(item.label) or not is_stable_label(label):
            return False
        note = notes.get(label)
        if note is None or note.error is not None:
            return False
        quoted = {(r.source_id, r.start, r.end) for r in note.refs}
        if quoted != {(r.source_id, r.start, r.end) for r in item.refs} or len(quoted) != len(note.refs):
            return False
        if any(not label.startswith(run_label_prefix(r.run)) for r in item.refs):
            return False
    return True


def _differences(claim: ConceptClaim, entry: Assessment, slug: str, notes: dict[str, EvidenceFootnote]) -> list[str]:
    out = []
    if entry.concept != slug or entry.claim_id != claim.id:
        out.append(f"it admitted claim {entry.claim_id!r} of concept {entry.concept!r}")
    if claim_hash(claim.statement) != entry.claim_hash:
        out.append("statement")
    for name in ("status", "conditions", "evidence", "review", "missingness"):
        same = (
            same_evidence(claim.evidence, entry, notes)
            if name == "evidence"
            else getattr(claim, name) == getattr(entry, name)
        )
        if not same:
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

        def add(
            guard: Guard, detail: str, fix: str | None = None, claim: ConceptClaim = claim, index: int = index
        ) -> None:
            artifact = f"claim:{claim.id}"
            wiki.findings.append(
                Finding(None, ce.rel, detail, artifact_id=artifact, check=CHECK, field=guard.value, fix=fix)
            )

        state = ClaimState(ce.slug, ce.rel, claim, claim_hash(claim.statement), None)
        states.append(state)
        for problem in shape_problems(Proposal.of(claim)):
            add(problem.guard, problem.detail)
        first = statements.setdefault(conflict_key(claim.statement), claim.id)
        if first != claim.id:  # one statement, one status, however it was put back by hand
            add(Guard.CLAIM_CONFLICT, f"claim {first!r} of {ce.rel} has this statement", "keep one of them")
        if claim.assessment is None:
            add(Guard.ASSESSMENT_MISSING, "no assessment admitted this claim", "propose it with 'publisher assess'")
            continue
        entry = entries.get(claim.assessment)
        if entry is None or not entry.admitted:
            what = "is not in assessments.jsonl" if entry is None else "was rejected"
            add(
                Guard.ASSESSMENT_MISSING, f"{claim.assessment[:40]} {what}", "propose the claim with 'publisher assess'"
            )
            continue
        if not log_ok:
            add(Guard.ASSESSMENT_LOG, "assessments.jsonl does not verify, so its entries are not trusted")
            continue
        if ring:
            unsigned = signature_problem(entry, ring)
            if unsigned is not None:
                add(Guard.ASSESSMENT_LOG, unsigned, "assess again with a trusted key (--key)")
                continue
        unbound = bound_problem(entry)
        if unbound is not None:
            add(Guard.ASSESSMENT_LOG, f"{unbound}: not a line 'publisher assess' writes", "assess the claim again")
            continue
        differences = _differences(claim, entry, ce.slug, notes)
        later = None if differences else _superseded_by(entry, admitted, ring)
        if later is not None:
            add(
                Guard.ASSESSMENT_MISMATCH,
                f"{entry.assessment_id} was superseded by {later.assessment_id} of the same claim",
                "restore the front matter it wrote, or propose the change with 'publisher assess'",
            )
            continue
        if differences:
            add(
                Guard.ASSESSMENT_MISMATCH,
                f"front matter differs from {entry.assessment_id} in {', '.join(differences)}",
                "restore it, or propose the change with 'publisher assess'",
            )
            continue
        state.entry = entry
        state.provenance = provenance_now(wiki, ce, entry, notes, logs, runs, claim.evidence)
    return states
