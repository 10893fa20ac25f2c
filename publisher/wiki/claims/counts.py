"""What each claim rests on, counted without flattery (the ledger's count grammar, section 14).

Per claim: **citations** (every span an evidence label quotes, counted each time), **excerpts**
(distinct spans), **snapshots** (distinct source ids), **URLs** (distinct snapshot URLs, as
:func:`~.model.url_identity` compares them) and **works** (distinct paper identities). Two
snapshots are one work when they share a PMID, a DOI or a PMCID (each in its canonical form, a
DOI case-insensitively) or the same text, transitively; a snapshot with no paper id is a work of
its own URL. Five citations of one study read as one work, whatever spelling of its ids or
address each snapshot carries; the PMC full text and the PubMed abstract of one paper are one work.

:func:`claim_view` gathers a claim's status, admissibility, provenance now, counts and lineage
(claim → excerpts → snapshots → works → acquisition events) as plain values: the site renders
them and ``claims.json`` carries them for machines.
"""

from __future__ import annotations

from typing import Any

from ...kernel.models import ACQUISITIONS
from ...kernel.trust import Role, event_signature_problem
from ..evidence import WikiCheck
from .log import Assessment, signature_problem
from .model import status_code, url_identity, work_keys
from .provenance import ClaimState

__all__ = ["ADMISSIBLE", "WorkIndex", "claim_view", "claims_document"]

ADMISSIBLE = "structurally admissible proposal for {status} — not adjudicated"
"""What passing the guards means, and all it means."""


class WorkIndex:
    """Paper identities across the wiki's sources: snapshots sharing any id are one work.

    Also indexes every acquisition event by source id, once, so that each claim's lineage costs
    what it cites, not the size of the wiki.
    """

    def __init__(self, wiki: WikiCheck) -> None:
        self._parent: dict[str, str] = {}
        self._of: dict[str, str] = {}
        self._sources = wiki.sources
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
        for sid, info in sorted(wiki.sources.items()):
            keys = work_keys(info.meta.paper, info.meta.url, info.meta.content_hash)
            for key in keys[1:]:
                self._union(keys[0], key)
            self._of[sid] = keys[0]

    def _find(self, key: str) -> str:
        self._parent.setdefault(key, key)
        while self._parent[key] != key:
            self._parent[key] = self._parent[self._parent[key]]
            key = self._parent[key]
        return key

    def _union(self, a: str, b: str) -> None:
        ra, rb = self._find(a), self._find(b)
        if ra != rb:  # the root names the work: a paper id or URL before a text digest
            first, second = sorted((ra, rb), key=lambda k: (k.startswith("text:"), k))
            self._parent[second] = first

    def work(self, source_id: str) -> str:
        """The work a source belongs to: its smallest identity key (``pmcid:PMC1``, ``url:…``)."""
        key = self._of.get(source_id)
        return self._find(key) if key is not None else f"source:{source_id}"


def _verified_signer(wiki: WikiCheck, entry: Assessment) -> str | None:
    """The key id of ``entry``'s signature when a key the wiki trusts verifies it, else None.

    Without trusted keys nothing verifies a signature, so no page may say "signed by".
    """
    keys = wiki.policy.trusted_keys
    if entry.sig is None or not keys or signature_problem(entry, keys) is not None:
        return None
    return entry.sig.key_id


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
    bound = entry.bound if entry is not None else None
    return {
        "concept": state.concept,
        "id": claim.id,
        "statement": claim.statement,
        "claim_hash": state.claim_hash,
        "status": claim.status.value,
        "code": status_code(claim.status),
        "conditions": list(claim.conditions),
        "evidence": list(claim.evidence),
        "review": claim.review,
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
            "works": len(set(work_of.values())),
        },
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
                }
                for sid in snapshots
            ],
            "works": sorted(set(work_of.values())),
            "events": events,
            "review": bound.review.model_dump(mode="json") if bound and bound.review else None,
            "missingness": bound.missingness.model_dump(mode="json") if bound and bound.missingness else None,
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
