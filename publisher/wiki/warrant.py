"""``publisher warrant``: a reviewer reads a claim's excerpts and records a signed decision.

The whole wiki is checked first (as ``publisher assess`` does), so the claim is reviewed as the
build sees it now: its admitted assessment, its cited spans re-sliced, its counts. A decision is
refused, with nothing written, when the key lacks the ``warrant`` role, when the key signed the
claim's assessment or an acquisition of a cited source (self-review), when the claim has no
current admitted assessment or its grounds no longer hold, or when a correction is missing
(``qualified``) or out of place. An accepted decision is appended to ``warrants.jsonl``
(:mod:`publisher.wiki.claims.warrant`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..acquire.signing import Signer
from ..kernel.errors import PublisherError, UsageError
from ..kernel.sentences import Sentences
from ..kernel.store import read_snapshot
from ..kernel.trust import Role
from .check import check_wiki
from .claims.counts import WorkIndex, claim_view
from .claims.model import normalise_statement
from .claims.provenance import ClaimState
from .claims.warrant import (
    Correction,
    CorrectionKind,
    Decision,
    Warrant,
    WarrantGuard,
    WarrantRefusal,
    append_warrant,
    assessment_digest,
    author_keys,
    current_spans,
    key_label,
)
from .evidence import WikiCheck
from .policy import Policy

__all__ = [
    "AROUND",
    "MAX_CORRECTION",
    "MAX_REASON",
    "ReviewItem",
    "admitted_claim",
    "awaiting_review",
    "parse_correction",
    "record_warrant",
]

AROUND = 160
"""Code points of text shown on each side of the sentence an excerpt lies in."""

MAX_REASON = 2000
"""Longest reason a warrant records (code points, white space collapsed): a longer one is refused."""

MAX_CORRECTION = 1000
"""Longest correction text a warrant records: a longer one is refused."""


@dataclass(frozen=True)
class ReviewItem:
    """One claim as a reviewer reads it: its view (status, conditions, counts, warrant) and each
    cited excerpt inside its sentence, with the text around it."""

    state: ClaimState
    view: dict[str, Any]
    excerpts: list[dict[str, Any]]


def parse_correction(value: str | None) -> Correction | None:
    """``KIND:TEXT`` (kind among scope, population, direction, magnitude, dependence, edition)."""
    if value is None:
        return None
    kind, sep, text = value.partition(":")
    kinds = ", ".join(k.value for k in CorrectionKind)
    if not sep or kind.strip() not in {k.value for k in CorrectionKind} or not text.strip():
        raise UsageError(f"--correction must be KIND:TEXT with KIND one of {kinds}")
    text = normalise_statement(text)
    if len(text) > MAX_CORRECTION:  # signed as typed or not at all: never cut
        raise UsageError(f"--correction's text is {len(text)} characters; at most {MAX_CORRECTION}")
    return Correction(kind=CorrectionKind(kind.strip()), text=text)


def _excerpts(wiki: WikiCheck, state: ClaimState) -> list[dict[str, Any]]:
    """Each cited span in its sentence with ``AROUND`` code points either side."""
    out: list[dict[str, Any]] = []
    if state.entry is None:
        return out
    labels: dict[tuple[str, int, int], list[str]] = {}
    for item in state.entry.bound.evidence if state.entry.bound else ():
        for ref in item.refs:
            labels.setdefault((ref.source_id, ref.start, ref.end), []).append(item.label)
    texts: dict[str, str] = {}
    for span in current_spans(wiki, state.entry):
        info = wiki.sources.get(span.source_id)
        if info is None:
            continue
        if span.source_id not in texts:
            try:
                texts[span.source_id] = read_snapshot(info.sources_dir, span.source_id).text
            except PublisherError:
                continue
        text = texts[span.source_id]
        lo, hi = Sentences(text).covering(span.start, span.end) or (span.start, span.end)
        lo, hi = min(lo, span.start), max(hi, span.end)
        out.append(
            {
                "labels": labels.get((span.source_id, span.start, span.end), []),
                "source_id": span.source_id,
                "source": info.label,
                "url": info.meta.url,
                "start": span.start,
                "end": span.end,
                "before": text[max(0, lo - AROUND) : lo],
                "sentence_before": text[lo : span.start],
                "excerpt": text[span.start : span.end],
                "sentence_after": text[span.end : hi],
                "after": text[hi : hi + AROUND],
            }
        )
    return out


def awaiting_review(wiki: WikiCheck, concept: str | None = None, *, every: bool = False) -> list[ReviewItem]:
    """The admitted claims (of ``concept``, or all) no current review covers: proposals and stale
    reviews (with ``every``, each admitted claim), in concept and front-matter order."""
    works = WorkIndex(wiki)
    out = []
    for state in wiki.claims:
        if state.entry is None or (concept is not None and state.concept != concept):
            continue
        if not every and state.warrant is not None and state.warrant.state not in ("author_proposal", "stale"):
            continue
        out.append(ReviewItem(state, claim_view(wiki, state, works), _excerpts(wiki, state)))
    return out


def admitted_claim(wiki: WikiCheck, concept: str, claim_id: str) -> ClaimState:
    """The admitted claim ``claim_id`` of ``concept``; :class:`WarrantRefusal` (``CLAIM_UNKNOWN``)
    when there is none, before any key is asked for."""
    for state in wiki.claims:
        if state.concept == concept and state.claim.id == claim_id:
            if state.entry is None:
                break
            found: ClaimState = state
            return found
    raise WarrantRefusal(
        WarrantGuard.CLAIM_UNKNOWN,
        f"concept {concept[:60]!r} has no admitted claim {claim_id[:60]!r}; 'publisher warrant --wiki WIKI' lists them",
        artifact_id=f"claim:{claim_id}",
    )


def record_warrant(
    wiki_root: Path,
    concept: str,
    claim_id: str,
    decision: Decision,
    reason: str,
    correction: Correction | None,
    *,
    signer: Signer,
    policy: Policy,
    wiki: WikiCheck | None = None,
) -> Warrant:
    """Check and append one decision on claim ``claim_id`` of ``concept``, signed by ``signer``.

    ``wiki`` is a check of the wiki made with ``policy`` (made here when None). Raises
    :class:`WarrantRefusal` (exit 1) before anything is written when the decision may not be
    recorded.
    """
    reason = " ".join(reason.split())
    if len(reason) > MAX_REASON:  # signed as typed or not at all: never cut
        raise UsageError(f"--reason is {len(reason)} characters; at most {MAX_REASON}")
    if not reason:
        raise WarrantRefusal(
            WarrantGuard.REASON_REQUIRED, "--reason must say why (what the excerpts do and do not say)"
        )
    if decision is Decision.QUALIFIED and correction is None:
        raise WarrantRefusal(
            WarrantGuard.CORRECTION_REQUIRED,
            "a qualified claim needs --correction KIND:TEXT (scope, population, direction, magnitude, dependence, "
            "edition)",
        )
    if decision is not Decision.QUALIFIED and correction is not None:
        raise WarrantRefusal(
            WarrantGuard.CORRECTION_NOT_ALLOWED, f"a correction goes with qualified, not {decision.value}"
        )
    ring = policy.trusted_keys
    if not ring.has_role(signer.key_id, Role.WARRANT):
        holders = ", ".join(key_label(ring, k) for k in ring.ids_for(Role.WARRANT)) or "none"
        raise WarrantRefusal(
            WarrantGuard.NOT_WARRANT_KEY,
            f"key {signer.key_id[:16]}… is not trusted by this wiki with the warrant role (warrant keys: {holders}); "
            "list it as {path: FILE, roles: [warrant]} under extra.evidence.trusted_keys",
            key_id=signer.key_id,
        )
    if wiki is None:
        wiki = check_wiki(Path(wiki_root), policy=policy)
    state = admitted_claim(wiki, concept, claim_id)
    entry = state.entry
    if entry is None:  # admitted_claim returns admitted claims only
        raise WarrantRefusal(WarrantGuard.CLAIM_UNKNOWN, f"claim {claim_id[:60]!r} is not admitted")
    if signer.key_id in author_keys(wiki, entry):
        raise WarrantRefusal(
            WarrantGuard.SELF_REVIEW,
            f"key {key_label(ring, signer.key_id)} signed claim {claim_id}'s assessment or a fact it rests on "
            "(an acquisition of its sources, an adjudication of its review's hits, its missingness fact): a review "
            "must come from someone else's key",
            key_id=signer.key_id,
            artifact_id=f"claim:{claim_id}",
        )
    if state.provenance:
        raise WarrantRefusal(
            WarrantGuard.PROVENANCE_INVALID,
            f"claim {claim_id}'s grounds no longer hold ({state.provenance[0]}); have it assessed again first",
            artifact_id=f"claim:{claim_id}",
        )
    spans = current_spans(wiki, entry)
    return append_warrant(
        Path(wiki_root),
        {
            "concept": concept,
            "claim_id": claim_id,
            "claim_hash": state.claim_hash,
            "assessment_id": entry.assessment_id,
            "assessment_hash": assessment_digest(entry),
            "spans": [s.model_dump(mode="json") for s in spans],
            "decision": decision.value,
            "correction": correction.model_dump(mode="json") if correction else None,
            "reason": reason,
        },
        signer,
    )
