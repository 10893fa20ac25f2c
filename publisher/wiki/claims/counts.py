"""What each claim rests on, counted without flattery (the ledger's count grammar, section 14).

Per claim: **citations** (every span an evidence label quotes, counted each time), **excerpts**
(distinct spans), **snapshots** (distinct source ids), **URLs** (distinct snapshot URLs, as
:func:`~publisher.wiki.works.url_identity` compares them) and **works** (distinct paper identities). Two
snapshots are one work when they share a PMID, a DOI or a PMCID (each in its canonical form, a
DOI case-insensitively) or the same text, transitively; a snapshot with no paper id is a work of
its own URL. Five citations of one study read as one work, whatever spelling of its ids or
address each snapshot carries; the PMC full text and the PubMed abstract of one paper are one work.

:func:`claim_view` gathers a claim's status, admissibility, provenance now, counts and lineage
(claim → excerpts → snapshots → works → acquisition events) and its warrant (section 17: the
state of its independent review, the reviewer's key, the correction) as plain values: the site
renders them and ``claims.json`` carries them for machines.
"""

from __future__ import annotations

from typing import Any

from ...acquire.agentrun import AgentRun, run_classes, trusted_agent_runs
from ...kernel.errors import PublisherError
from ...kernel.models import ACQUISITIONS
from ...kernel.trust import Role, event_signature_problem
from ..evidence import WikiCheck
from ..notices import notice_index, retracted_sources, source_doi
from ..works import works_of
from .adjudications import Adjudication, adjudication_problem, hit_key, valid_adjudications
from .admission import find_record
from .log import Assessment, signature_problem
from .model import status_code, url_identity
from .provenance import ClaimState
from .records import ReviewRecord
from .reviews import sentence_problem

__all__ = ["ADMISSIBLE", "WorkIndex", "claim_view", "claims_document", "review_view"]

ADMISSIBLE = "structurally admissible proposal for {status} — not adjudicated"
"""What passing the guards means, and all it means."""


class WorkIndex:
    """Paper identities across the wiki's sources: snapshots sharing any id are one work
    (:class:`~publisher.wiki.works.Works`).

    Also indexes every acquisition event by source id, once, so that each claim's lineage costs
    what it cites, not the size of the wiki.
    """

    def __init__(self, wiki: WikiCheck) -> None:
        self._sources = wiki.sources
        self._runs = {ev.slug: ev for ev in wiki.runs}
        self._ring = wiki.policy.trusted_keys
        self._agents: dict[str, AgentRun | None] = {}
        self.events: dict[str, list[dict[str, Any]]] = {}
        ring = wiki.policy.trusted_keys
        for ev in wiki.runs:
            name: str | None = None
            for event in ev.events:
                if event.source_id is not None and event.type in ACQUISITIONS:
                    signed_by = None
                    if ring and event.sig is not None:  # a key id is shown only once it verifies
                        name = name if name is not None else ev.run.name()
                        signed_by = (
                            event.sig.key_id
                            if event_signature_problem(event, ring, name, Role.ACQUIRE) is None
                            else None
                        )
                    self.events.setdefault(event.source_id, []).append(
                        {
                            "run": ev.slug,
                            "event_id": event.event_id,
                            "type": event.type.value,
                            "source_id": event.source_id,
                            "signed_by": signed_by,
                        }
                    )
        self._works = works_of(wiki)

    def agent_of(self, slug: str) -> AgentRun | None:
        """The latest trusted ``agent_run`` of the run ``slug`` (None: no agent recorded), read
        once per run."""
        if slug not in self._agents:
            ev = self._runs.get(slug)
            found = trusted_agent_runs(ev.run, self._ring) if ev is not None else []
            self._agents[slug] = found[-1] if found else None
        return self._agents[slug]

    def work(self, source_id: str) -> str:
        """The work a source belongs to: its smallest identity key (``pmcid:PMC1``, ``url:…``)."""
        return self._works.work(source_id)


def _verified_signer(wiki: WikiCheck, entry: Assessment) -> str | None:
    """The key id of ``entry``'s signature when a key the wiki trusts verifies it, else None.

    Without trusted keys nothing verifies a signature, so no page may say "signed by".
    """
    keys = wiki.policy.trusted_keys
    if entry.sig is None or not keys or signature_problem(entry, keys) is not None:
        return None
    return entry.sig.key_id


_PROPOSAL: dict[str, Any] = {
    "state": "author_proposal",
    "warrant_id": None,
    "decision": None,
    "reviewer_key_id": None,
    "reviewer": None,
    "at": None,
    "reason": None,
    "correction": None,
    "changed": [],
}
"""The warrant of a claim no review covers."""


_SHARED = (
    ("model_profile", "requested_model_profile"),
    ("prompt", "prompt_sha256"),
    ("retrieval_infrastructure", "retrieval_infrastructure_sha256"),
)
"""Dependence edges (the ledger's): what two runs may share, and the agent record's field for it."""


def _proposers(refs: list[tuple[str, Any]], works: WorkIndex) -> tuple[list[dict[str, Any]], int, list[dict[str, Any]]]:
    """Who proposed a claim: each cited run's agent record, the number of independent runs (runs
    sharing a model profile and a prompt digest are one), and the dependence edges between runs."""
    runs = sorted({r.run for _, r in refs})
    agents = {slug: works.agent_of(slug) for slug in runs}
    proposed = [
        {
            "run": slug,
            "agent_run_id": a.agent_run_id if a else None,
            "requested_model_profile": a.requested_model_profile if a else None,
            "reported_model_identity": a.reported_model_identity if a else None,
            "prompt_sha256": a.prompt_sha256 if a else None,
        }
        for slug, a in agents.items()
    ]
    cited: dict[str, set[str]] = {}
    for _, r in refs:
        cited.setdefault(r.run, set()).add(works.work(r.source_id))
    edges: list[dict[str, Any]] = []
    for i, a in enumerate(runs):
        for b in runs[i + 1 :]:
            first, second = agents[a], agents[b]
            if first is not None and second is not None:
                for kind, name in _SHARED:
                    value = getattr(first, name)
                    if value is not None and value == getattr(second, name):
                        edges.append({"kind": kind, "runs": [a, b], "value": value})
            for work in sorted(cited[a] & cited[b]):
                edges.append({"kind": "upstream_citation", "runs": [a, b], "value": work})
    return proposed, len(run_classes(agents.items())), edges


def _adjudication_view(wiki: WikiCheck, entry: Adjudication, run_name: str) -> dict[str, Any]:
    ring = wiki.policy.trusted_keys
    signed = entry.sig is not None and bool(ring) and adjudication_problem(entry, ring, run_name) is None
    return {
        "id": entry.adjudication_id,
        "decision": entry.decision,
        "reason": entry.reason,
        "at": entry.at,
        "signed_by": entry.sig.key_id if signed and entry.sig is not None else None,
    }


def review_view(wiki: WikiCheck, rid: str) -> dict[str, Any]:
    """A document review as a reader needs it: its terms with their hit counts, each hit in its
    sentence with the adjudication that decided it (or none), so that a search that found three
    hits never reads like one that found nothing."""
    found = find_record(wiki, rid, ReviewRecord)
    if isinstance(found, str):
        return {"id": rid, "found": False, "problem": found}
    ev, review = found
    try:
        text: str | None = ev.run.store.read(review.source_id).text  # verified on read
    except PublisherError:
        text = None
    adjudicated = valid_adjudications(ev.run, rid, wiki.policy.trusted_keys)
    log_problem = adjudicated if isinstance(adjudicated, str) else None
    decided = adjudicated if isinstance(adjudicated, dict) else {}
    run_name = ev.run.name() if wiki.policy.trusted_keys and decided else ""
    hits = []
    for number, hit in enumerate(review.hits, start=1):
        entry = decided.get(hit_key(hit))
        sentence = hit.sentence.model_dump(mode="json")
        verified = text is not None and sentence_problem(review.model_copy(update={"hits": (hit,)}), text) is None
        if not verified:  # a record not written by the tool: show only what the snapshot says, if anything
            shown = text[hit.start : hit.end] if text is not None and hit.end <= len(text) else ""
            sentence = {"start": hit.start, "end": hit.end, "text": shown}
        hits.append(
            {
                "number": number,
                "term": hit.term,
                "start": hit.start,
                "end": hit.end,
                "match": hit.match,
                "sentence": sentence,
                "sentence_verified": verified,
                "adjudication": _adjudication_view(wiki, entry, run_name) if entry is not None else None,
            }
        )
    return {
        "id": rid,
        "found": True,
        "run": ev.slug,
        "source_id": review.source_id,
        "protocol_complete": review.protocol_complete,
        "terms": [{"term": t, "hits": sum(1 for h in review.hits if h.term == t)} for t in review.search_terms],
        "semantic_queries_declared_not_executed": list(review.semantic_queries_declared_not_executed),
        "hits": hits,
        "adjudicated": sum(1 for h in hits if h["adjudication"] is not None),
        "adjudication_log_problem": log_problem,
    }


def claim_view(wiki: WikiCheck, state: ClaimState, works: WorkIndex) -> dict[str, Any]:
    """Everything about one claim, as plain JSON values (strings are data, never markup)."""
    claim, entry = state.claim, state.entry
    items = entry.bound.evidence if entry and entry.bound else ()
    # The labels as the front matter names them (a migrated positional label reads as its stable one).
    labels = list(claim.evidence) if len(claim.evidence) == len(items) else [item.label for item in items]
    refs = [(label, ref) for label, item in zip(labels, items, strict=True) for ref in item.refs]
    excerpts = sorted({(r.source_id, r.start, r.end) for _, r in refs})
    snapshots = sorted({r.source_id for _, r in refs})
    infos = {sid: info for sid in snapshots if (info := wiki.sources.get(sid)) is not None}
    urls = sorted({url_identity(info.meta.url) for info in infos.values() if info.meta.url})
    work_of = {sid: works.work(sid) for sid in snapshots}
    events = [event for sid in snapshots for event in works.events.get(sid, ())]
    retracted = retracted_sources(wiki, snapshots)
    retracted_works = {work_of[sid] for sid in retracted}
    notices = notice_index(wiki)
    bound = entry.bound if entry is not None else None
    warrant = state.warrant
    proposed, independent, edges = _proposers(refs, works)
    return {
        "concept": state.concept,
        "id": claim.id,
        "statement": claim.statement,
        "claim_hash": state.claim_hash,
        "status": claim.status.value,
        "code": status_code(claim.status),
        "conditions": list(claim.conditions),
        "evidence": list(claim.evidence),
        "review": review_view(wiki, claim.review) if claim.review is not None else None,
        "missingness": claim.missingness,
        "assessment": {
            "id": entry.assessment_id,
            "at": entry.at,
            "signed_by": _verified_signer(wiki, entry),
        }
        if entry is not None
        else None,
        "admissibility": ADMISSIBLE.format(status=claim.status.value) if entry is not None else None,
        "admissible_when_assessed": entry is not None and entry.admitted,
        "provenance_now": {"valid": state.provenance_valid, "reasons": list(state.provenance)},
        "counts": {
            "citations": len(refs),
            "excerpts": len(excerpts),
            "snapshots": len(snapshots),
            "urls": len(urls),
            "works": len(set(work_of.values()) - retracted_works),
            "retracted_works": len(retracted_works),
            "independently_confirmed": warrant.confirmations if warrant is not None else 0,
            "independent_runs": independent,
        },
        "proposed_by": proposed,
        "warrant": warrant.view() if warrant is not None else _PROPOSAL,
        "notices": [
            {
                "source_id": sid,
                "doi": notice.doi,
                "registry": notice.registry,
                "asked_at": notice.at,
                "notice_id": notice.notice_id,
                "updates": [u.model_dump(mode="json") for u in notice.updates],
            }
            for sid in snapshots
            if (notice := notices.of(source_doi(wiki, sid))) is not None
        ],
        "lineage": {
            "excerpts": [
                {"label": label, "run": r.run, "source_id": r.source_id, "start": r.start, "end": r.end}
                for label, r in refs
            ],
            "snapshots": [
                {
                    "source_id": sid,
                    "url": infos[sid].meta.url if sid in infos else None,
                    "access": infos[sid].meta.access if sid in infos else None,
                    "work": work_of[sid],
                    "retracted": sid in retracted,
                }
                for sid in snapshots
            ],
            "works": sorted(set(work_of.values())),
            "events": events,
            "review": bound.review.model_dump(mode="json") if bound and bound.review else None,
            "missingness": bound.missingness.model_dump(mode="json") if bound and bound.missingness else None,
            "dependence": edges,
        },
    }


def claims_document(wiki: WikiCheck) -> dict[str, Any]:
    """``claims.json``: every claim of the wiki with its status, grounds, counts and lineage."""
    works = WorkIndex(wiki)
    return {
        "schema_version": 1,
        "meaning": ADMISSIBLE.format(status="<status>"),
        "claims": [claim_view(wiki, state, works) for state in wiki.claims],
    }
