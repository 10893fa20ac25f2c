"""Warrant: a person's review of whether a claim's excerpts say what the claim says (CONTRACT 17).

A verbatim excerpt proves what a source says, not that it says what the claim says (its scope,
population, direction, size). A warrant review records a reviewer's decision on one claim,
``confirmed``, ``qualified`` (with a correction) or ``rejected``, in the wiki's hash-chained
``warrants.jsonl`` (chained and locked by :func:`~publisher.kernel.eventlog.append_chained`, like
``events.jsonl`` and ``assessments.jsonl``). Each entry is bound to the claim's hash, the
assessment that admitted it and every cited span with its excerpt's digest, and signed by a key
holding the ``warrant`` role that signed neither the assessment, nor any acquisition of the cited
sources, nor (for ``not_supported``) an adjudication of the review it rests on, nor (for
``non_evaluable``) the logged fact its missingness record rests on: nobody reviews their own
proposal.

At every build (:func:`apply_warrants`) each claim gets a state: ``author_proposal`` (no
review counts), ``confirmed``, ``qualified``, ``rejected`` (no credit) or ``stale`` (the claim,
its assessment or a cited span changed since the review: no credit). A review whose key the
wiki does not trust for ``warrant``, or whose key is one of the claim's authors, gives no credit
and leaves a notice; a chain that does not verify, or a trusted key's signature that does not
verify, fails the build (``C-WARRANT``), as does any claim without a current ``confirmed`` or
``qualified`` review when the policy says ``require_warrant``.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictStr, ValidationError

from ...acquire.signing import KeyRing, Signer
from ...kernel.canonical import canonical_bytes, format_ts, loads_strict, utc_now
from ...kernel.checkids import CheckId
from ...kernel.errors import PublisherError, UsageError
from ...kernel.eventlog import LogState, append_chained, line_digest, read_chain, read_log
from ...kernel.eventviews import EventView
from ...kernel.findings import Finding
from ...kernel.models import (
    ACQUISITIONS,
    Offset,
    PrefixedDigest,
    SchemaVersion,
    Signature,
    SignedLine,
    SourceId,
    Timestamp,
    enum_from_str,
    first_error,
    list_as_tuple,
)
from ...kernel.trust import Role, line_signature_fault, sign_line
from ..evidence import RunEvidence, WikiCheck
from .adjudications import read_adjudications
from .log import Assessment
from .missingness import LogCache, log_of
from .provenance import ClaimState
from .records import MissingnessRecord, read_record

__all__ = [
    "WARRANTS_FILE",
    "SIGNED_FOR",
    "CHECK",
    "Decision",
    "CorrectionKind",
    "WarrantGuard",
    "WarrantRefusal",
    "Correction",
    "WarrantSpan",
    "Warrant",
    "WarrantState",
    "CREDITED",
    "append_warrant",
    "read_warrants",
    "signature_problem",
    "assessment_digest",
    "current_spans",
    "author_keys",
    "key_label",
    "acquisition_signers",
    "apply_warrants",
]

WARRANTS_FILE = "warrants.jsonl"
"""The log's name, at the wiki root."""

SIGNED_FOR = "warrants"
"""What a warrant's ``sig.run`` names: the wiki's warrant log (not a run)."""

CHECK = CheckId.WARRANT
"""The check id of every warrant finding and refusal."""

_FROZEN = ConfigDict(frozen=True, extra="forbid", strict=True, defer_build=True)


class Decision(StrEnum):
    """What the reviewer decided."""

    CONFIRMED = "confirmed"
    QUALIFIED = "qualified"
    REJECTED = "rejected"


class CorrectionKind(StrEnum):
    """What a qualified claim gets wrong, as the reviewer reads its excerpts."""

    SCOPE = "scope"
    POPULATION = "population"
    DIRECTION = "direction"
    MAGNITUDE = "magnitude"
    DEPENDENCE = "dependence"
    EDITION = "edition"


class WarrantGuard(StrEnum):
    """Why a warrant was refused or gives no credit (the ``field`` of a ``C-WARRANT`` finding)."""

    CLAIM_UNKNOWN = "CLAIM_UNKNOWN"
    """No claim of that id in the concept, or none admitted by a verifying assessment."""
    PROVENANCE_INVALID = "PROVENANCE_INVALID"
    """The claim's grounds no longer hold: there is nothing current to review."""
    NOT_WARRANT_KEY = "NOT_WARRANT_KEY"
    """The signing key is not trusted by the wiki with the ``warrant`` role."""
    SELF_REVIEW = "SELF_REVIEW"
    """The signing key signed the claim's assessment or an acquisition of a cited source."""
    CORRECTION_REQUIRED = "CORRECTION_REQUIRED"
    """``qualified`` without a correction kind and text."""
    CORRECTION_NOT_ALLOWED = "CORRECTION_NOT_ALLOWED"
    """A correction on ``confirmed`` or ``rejected``."""
    REASON_REQUIRED = "REASON_REQUIRED"
    """A decision without a reason."""
    WARRANT_LOG = "WARRANT_LOG"
    """``warrants.jsonl`` is torn, edited, reordered, or a trusted key's signature does not verify."""
    WARRANT_REQUIRED = "WARRANT_REQUIRED"
    """``require_warrant``: a claim without a current confirmed or qualified review."""


class WarrantRefusal(PublisherError):
    """``publisher warrant`` refused (exit status 1): the guard, one line of cause and fix."""

    exit_status = 1

    def __init__(self, guard: WarrantGuard, message: str, **context: Any) -> None:
        context.setdefault("check", CHECK)
        context.setdefault("field", guard.value)
        super().__init__(message, guard=guard.value, **context)
        self.guard = guard

    def one_line(self) -> str:
        """``C-WARRANT GUARD: message``."""
        return f"{CHECK} {self.guard.value}: {' '.join(self.message.split())}"


class Correction(BaseModel):
    """What a qualified claim should say instead: a kind and the reviewer's text."""

    model_config = _FROZEN
    kind: Annotated[CorrectionKind, enum_from_str(CorrectionKind)]
    text: Annotated[StrictStr, Field(min_length=1, max_length=1000)]


class WarrantSpan(BaseModel):
    """One cited span as the reviewer read it: where it is and the digest of its excerpt."""

    model_config = _FROZEN
    source_id: SourceId
    start: Offset
    end: Offset
    excerpt_sha256: Annotated[StrictStr, Field(pattern=r"^[0-9a-f]{64}$")] | None


class Warrant(SignedLine):
    """One line of ``warrants.jsonl``: a reviewer's decision on one claim (CONTRACT section 17)."""

    model_config = _FROZEN
    schema_version: SchemaVersion
    warrant_id: Annotated[StrictStr, Field(pattern=r"^wr-[0-9]{4,}$")]
    prev: PrefixedDigest | None
    at: Timestamp
    concept: StrictStr
    claim_id: StrictStr
    claim_hash: PrefixedDigest
    assessment_id: StrictStr
    assessment_hash: PrefixedDigest | None = None
    """The digest of the assessment's line (:func:`assessment_digest`): its status, conditions,
    evidence and signer as reviewed. Its id alone is a counter, which another copy of the wiki
    (a fork, a branch) reuses for another assessment; a line without it gives no credit."""
    spans: Annotated[tuple[WarrantSpan, ...], BeforeValidator(list_as_tuple)]
    decision: Annotated[Decision, enum_from_str(Decision)]
    correction: Correction | None
    reason: Annotated[StrictStr, Field(min_length=1, max_length=2000)]
    sig: Signature | None = None

    @property
    def number(self) -> int:
        """The counter in ``warrant_id``."""
        return int(self.warrant_id[3:])

    def wire(self) -> dict[str, Any]:
        """The line as written and signed: without ``assessment_hash`` where it has none, so a line
        written before reviews bound it verifies as it was signed (and reads stale)."""
        data = super().wire()
        if data.get("assessment_hash") is None:
            data.pop("assessment_hash", None)
        return data


def _parse(line: bytes) -> Warrant:
    return Warrant.model_validate(loads_strict(line))


def append_warrant(wiki_root: Path, fields: dict[str, Any], signer: Signer) -> Warrant:
    """Append one signed decision (``fields``: everything but id, prev, at and sig)."""

    def make(number: int, prev: str | None) -> tuple[Warrant, bytes]:
        try:
            entry = Warrant.model_validate(
                {
                    **fields,
                    "schema_version": 1,
                    "warrant_id": f"wr-{number:04d}",
                    "prev": prev,
                    "at": format_ts(utc_now()),
                }
            )
            entry = sign_line(entry, signer, signed_for=SIGNED_FOR)
        except ValidationError as exc:
            raise UsageError(f"refused to log an invalid warrant: {first_error(exc)}") from exc
        return entry, canonical_bytes(entry.wire()) + b"\n"

    return append_chained(Path(wiki_root) / WARRANTS_FILE, make, _parse, what="warrant")


def read_warrants(wiki_root: Path) -> LogState[Warrant]:
    """Read and check the whole log (chain, order, torn line); a missing log reads as empty.

    Stricter than ``events.jsonl`` (which reads upstream logs without ``prev``): every line of
    this log is written chained, so a line after the first without ``prev`` is a finding.
    """
    state = read_chain(Path(wiki_root) / WARRANTS_FILE, _parse, lambda w: w.warrant_id, WARRANTS_FILE)
    for index, entry in enumerate(state.events, start=1):
        if index > 1 and entry.prev is None and not state.findings:
            state.findings.append(Finding(None, WARRANTS_FILE, f"{entry.warrant_id}: prev missing", line=index))
    return state


def signature_problem(entry: Warrant, ring: KeyRing) -> tuple[bool, str] | None:
    """Why ``entry`` gives no credit, or None when a key of ``ring`` with the ``warrant`` role
    signed it. The flag says whether the line was altered (a trusted key's signature that does
    not verify), which fails the build, rather than merely not counting."""
    fault = line_signature_fault(
        entry, entry.warrant_id, ring, signed_for=SIGNED_FOR, role=Role.WARRANT, log="the warrant log"
    )
    return None if fault is None else (fault[0].altered, fault[1])


def key_label(ring: KeyRing, key_id: str) -> str:
    """What a page calls a trusted key: its file's name without ``.pub`` (``reviewer``), else its
    short id."""
    listed = ring.names.get(key_id)
    if listed:
        return Path(listed).name.removesuffix(".pub")
    return key_id[:16] + "…"


def assessment_digest(entry: Assessment) -> str:
    """The digest of ``entry``'s line in ``assessments.jsonl`` (the ``prev`` digest its next line
    carries): every field of the assessment, its signature included."""
    return line_digest(canonical_bytes(entry.wire()))


def excerpt_digest(text: str) -> str:
    """The bare hex SHA-256 of an excerpt's UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def current_spans(wiki: WikiCheck, entry: Assessment) -> tuple[WarrantSpan, ...]:
    """Every span the admitted ``entry`` bound, once each in order, with its excerpt's digest now
    (None when the span no longer re-slices to a published excerpt)."""
    seen: dict[tuple[str, int, int], WarrantSpan] = {}
    for item in entry.bound.evidence if entry.bound is not None else ():
        for ref in item.refs:
            key = (ref.source_id, ref.start, ref.end)
            if key not in seen:
                text = wiki.excerpts.get(key)
                digest = excerpt_digest(text) if text is not None else None
                seen[key] = WarrantSpan(source_id=ref.source_id, start=ref.start, end=ref.end, excerpt_sha256=digest)
    return tuple(seen.values())


AcquisitionSigners = dict[str, frozenset[str]]
"""The key ids named by the acquisition events of each source, across the wiki's runs."""


def acquisition_signers(wiki: WikiCheck, logs: LogCache | None = None) -> AcquisitionSigners:
    """Every source's acquisition signers, from each run's whole log, read once per wiki check
    (not once per claim). The whole log, not the events as the run's last assembly read them: a
    key that acquired a cited source after that assembly acquired it all the same. A log already
    in ``logs`` is not read again; one read here is not kept there (a wiki of many runs would hold
    them all). A log that cannot be read gives the events assembled from it (the run's check
    reports it)."""
    out: dict[str, set[str]] = {}
    for ev in wiki.runs:
        for event in _whole_log(ev, logs):
            if event.source_id is not None and event.type in ACQUISITIONS and event.sig is not None:
                out.setdefault(event.source_id, set()).add(event.sig.key_id)
    return {sid: frozenset(keys) for sid, keys in out.items()}


def _whole_log(ev: RunEvidence, logs: LogCache | None) -> list[EventView]:
    """The events of ``ev``'s whole log: from ``logs`` when read there, else read now."""
    held = logs.get(ev.run.events_path) if logs is not None else None
    if held is not None:
        return held.events
    try:
        return read_log(ev.run.events_path).events
    except PublisherError:  # a link, a folder or a FIFO in the log's place: the run's check reports it
        return ev.events


def _adjudicators(wiki: WikiCheck, run_slug: str, review_id: str | None) -> set[str]:
    """The key ids that signed an adjudication of ``review_id`` in the run ``run_slug``."""
    ev = wiki.run_by_slug(run_slug)
    if ev is None or review_id is None:
        return set()
    try:
        log = read_adjudications(ev.run)
    except PublisherError:  # the claim's provenance check reports a log it cannot read
        return set()
    return {a.sig.key_id for a in log.events if a.review_id == review_id and a.sig is not None}


def _missingness_signers(
    wiki: WikiCheck, run_slug: str, mid: str | None, signers: AcquisitionSigners, logs: LogCache | None
) -> set[str]:
    """The key ids that signed the fact missingness record ``mid`` of run ``run_slug`` rests on (its
    basis event: a ``fetch_failed`` or the snapshot's acquisition) or any acquisition of the
    snapshot it names (``signers``). The run's whole log is read, as the record's provenance check
    reads it: a fact logged after the run's last assembly grounds the record all the same."""
    ev = wiki.run_by_slug(run_slug)
    if ev is None or mid is None:
        return set()
    try:
        basis = read_record(ev.run, mid, MissingnessRecord).basis
        events = log_of(ev.run, logs).events
    except PublisherError:  # the claim's provenance check reports a record or log it cannot read
        return set()
    out = {e.sig.key_id for e in events if e.sig is not None and e.event_id == basis.event_id}
    if basis.source_id is not None:
        out |= signers.get(basis.source_id, frozenset())
    return out


def author_keys(
    wiki: WikiCheck, entry: Assessment, signers: AcquisitionSigners | None = None, logs: LogCache | None = None
) -> frozenset[str]:
    """The key ids that proposed the claim: those that signed its assessment, any acquisition of
    a source it cites or (for ``not_supported``) of the source its document review read, or an
    adjudication of that review's hits (the judgement ``not_supported`` rests on), or (for
    ``non_evaluable``) the logged fact its missingness record rests on or an acquisition of the
    snapshot that record names. None of them may review it (whether or not their signatures
    verify: fewer reviewers, never a self-review). ``signers`` is :func:`acquisition_signers` of
    the wiki (made here when None); ``logs`` caches the run logs read for missingness records."""
    if signers is None:
        signers = acquisition_signers(wiki, logs)
    out = {entry.sig.key_id} if entry.sig is not None else set()
    bound = entry.bound
    for item in bound.evidence if bound else ():
        for ref in item.refs:
            out |= signers.get(ref.source_id, frozenset())
    if bound is not None and bound.review is not None:
        out |= signers.get(bound.review.source_id, frozenset())
        out |= _adjudicators(wiki, bound.review.run, entry.review)
    if bound is not None and bound.missingness is not None:
        out |= _missingness_signers(wiki, bound.missingness.run, entry.missingness, signers, logs)
    return frozenset(out)


CREDITED = frozenset({Decision.CONFIRMED.value, Decision.QUALIFIED.value})
"""The states that count as independently reviewed."""


@dataclass
class WarrantState:
    """A claim's warrant now: its state and the review it comes from (None for a proposal)."""

    state: str
    """``author_proposal``, ``confirmed``, ``qualified``, ``rejected`` or ``stale``."""
    review: Warrant | None = None
    reviewer_label: str | None = None
    confirmations: int = 0
    """Distinct reviewers whose latest review of the claim is current and credited (0 unless
    the claim's own state is credited)."""
    changed: list[str] = field(default_factory=list)
    """For ``stale``: what changed since the review."""

    @property
    def credited(self) -> bool:
        """Whether the claim counts as independently reviewed now."""
        return self.state in CREDITED

    def view(self) -> dict[str, Any]:
        """The state as plain JSON values (for pages and ``claims.json``)."""
        review = self.review
        return {
            "state": self.state,
            "warrant_id": review.warrant_id if review else None,
            "decision": review.decision.value if review else None,
            "reviewer_key_id": review.sig.key_id if review and review.sig else None,
            "reviewer": self.reviewer_label,
            "at": review.at if review else None,
            "reason": review.reason if review else None,
            "correction": review.correction.model_dump(mode="json") if review and review.correction else None,
            "changed": list(self.changed),
        }


def _changes(review: Warrant, state: ClaimState, entry: Assessment, spans: Sequence[WarrantSpan]) -> list[str]:
    out = []
    if review.claim_hash != state.claim_hash:
        out.append("statement")
    if review.assessment_id != entry.assessment_id:
        out.append(f"assessment ({review.assessment_id} reviewed, {entry.assessment_id} now)")
    elif review.assessment_hash is None:
        out.append(f"assessment ({review.warrant_id} does not bind {entry.assessment_id}'s content)")
    elif review.assessment_hash != assessment_digest(entry):
        out.append(f"assessment ({entry.assessment_id} is not the assessment reviewed under that id)")
    if tuple(review.spans) != tuple(spans):
        out.append("cited spans")
    return out


def _log_findings(state: LogState[Warrant]) -> list[Finding]:
    return state.integrity_findings(WARRANTS_FILE, check=CHECK, field=WarrantGuard.WARRANT_LOG.value)


def apply_warrants(wiki: WikiCheck, states: Iterable[ClaimState], logs: LogCache | None = None) -> None:
    """Give each admitted claim of ``states`` its warrant state; findings (a log that does not
    verify, ``require_warrant``) to ``wiki.findings``, reviews that give no credit to notices.
    ``logs``: the run logs the claims' provenance checks read (each read once per check)."""
    states = [s for s in states if s.entry is not None]
    path = wiki.wiki_root / WARRANTS_FILE
    if not states and not os.path.lexists(path):
        return
    try:
        log = read_warrants(wiki.wiki_root)
    except PublisherError as exc:  # a link, a folder or a FIFO in the log's place
        wiki.findings.append(
            Finding(None, WARRANTS_FILE, exc.message, check=CHECK, field=WarrantGuard.WARRANT_LOG.value)
        )
        log = LogState()
    wiki.findings.extend(_log_findings(log))
    ring = wiki.policy.trusted_keys
    trusted = log.intact
    logs = {} if logs is None else logs
    signers = acquisition_signers(wiki, logs) if states else {}
    by_claim: dict[tuple[str, str], list[Warrant]] = {}
    for line, review in enumerate(log.events, start=1):
        problem = signature_problem(review, ring)
        if problem is not None:
            altered, why = problem
            if altered:
                wiki.findings.append(
                    Finding(None, WARRANTS_FILE, why, line=line, check=CHECK, field=WarrantGuard.WARRANT_LOG.value)
                )
            else:
                wiki.notices.append(f"warrant {why}: it gives no credit")
            continue
        by_claim.setdefault((review.concept, review.claim_id), []).append(review)
    for state in states:
        entry = state.entry
        if entry is None:
            continue
        authors = author_keys(wiki, entry, signers, logs)
        spans = current_spans(wiki, entry)
        latest: Warrant | None = None
        per_reviewer: dict[str, Warrant] = {}
        for review in by_claim.get((state.concept, state.claim.id), ()) if trusted else ():
            key = review.sig.key_id if review.sig else ""
            if key in authors:
                wiki.notices.append(
                    f"warrant {review.warrant_id} of claim {state.claim.id} is signed by one of its authors' "
                    "keys (a self-review): it gives no credit"
                )
                continue
            latest = review
            per_reviewer[key] = review
        state.warrant = _state_of(latest, per_reviewer, state, entry, spans, ring)
        if wiki.policy.require_warrant and not state.warrant.credited:
            wiki.findings.append(
                Finding(
                    None,
                    state.rel,
                    f"claim {state.claim.id} is {state.warrant.state.replace('_', ' ')}: require_warrant needs a "
                    "current confirmed or qualified review",
                    artifact_id=f"claim:{state.claim.id}",
                    check=CHECK,
                    field=WarrantGuard.WARRANT_REQUIRED.value,
                    fix="review the claim with 'publisher warrant'",
                )
            )


def _state_of(
    latest: Warrant | None,
    per_reviewer: dict[str, Warrant],
    state: ClaimState,
    entry: Assessment,
    spans: Sequence[WarrantSpan],
    ring: KeyRing,
) -> WarrantState:
    if latest is None:
        return WarrantState("author_proposal")
    label = key_label(ring, latest.sig.key_id) if latest.sig else None
    changed = _changes(latest, state, entry, spans)
    if changed:
        return WarrantState("stale", latest, label, 0, changed)
    found = WarrantState(latest.decision.value, latest, label)
    if found.credited:
        found.confirmations = sum(
            1 for r in per_reviewer.values() if r.decision.value in CREDITED and not _changes(r, state, entry, spans)
        )
    return found
