"""Logged notices of retraction and correction at build time (CONTRACT section 18, check ``C-NOTICE``).

The build reads the wiki's ``notices.jsonl`` (written by ``publisher source notices``) and never
the network. The newest entry of each DOI says what the registry answered when it was asked. A
work with a logged retraction or withdrawal of any of its DOIs gives no credit, through any of its
snapshots (:mod:`.works`): its claims' counts show it apart, and with ``extra: evidence:
retracted: fail`` a claim resting on one refuses the build; with ``warn`` (the default) the build
says so and publishes. A broken log (torn, edited, reordered) is a
finding, and on a wiki that trusts keys so is an entry without a valid signature.
"""

from __future__ import annotations

from typing import Any

from ..acquire.notices import NOTICES_FILE, Notice, notice_signature_problem, read_notices
from ..kernel.checkids import CheckId
from ..kernel.errors import PublisherError
from ..kernel.findings import Finding
from ..kernel.ids import IdError, canonical_id
from .evidence import WikiCheck
from .works import works_of

__all__ = ["CHECK", "NoticeIndex", "notice_index", "check_notices", "retracted_sources", "source_doi"]

CHECK = CheckId.NOTICE


class NoticeIndex:
    """The newest logged notice of each DOI (compared case-insensitively), and the log's findings."""

    def __init__(self, wiki: WikiCheck) -> None:
        self.by_doi: dict[str, Notice] = {}
        self.findings: list[Finding] = []
        path = wiki.wiki_root / NOTICES_FILE
        if not path.exists() and not path.is_symlink():
            return
        try:
            state = read_notices(wiki.wiki_root)
        except PublisherError as exc:
            self.findings.append(Finding(None, NOTICES_FILE, exc.message, check=CHECK))
            return
        self.findings += [Finding(f.reason, NOTICES_FILE, f.detail, line=f.line, check=CHECK) for f in state.findings]
        last = state.last_line_problem("notice")
        if last is not None:
            self.findings.append(Finding(None, NOTICES_FILE, last, check=CHECK, field="log"))
        ring = wiki.policy.trusted_keys
        for entry in state.events:
            if ring and (problem := notice_signature_problem(entry, ring)) is not None:
                self.findings.append(Finding(None, NOTICES_FILE, problem, check=CHECK, field="sig"))
                continue
            self.by_doi[_doi_key(entry.doi)] = entry

    def of(self, doi: str | None) -> Notice | None:
        """The newest notice logged for ``doi`` (None: never asked), however it is spelt: a
        resolver link, a ``doi:`` prefix or another case name the DOI the notice was asked for."""
        return self.by_doi.get(_doi_key(doi)) if doi else None


def _doi_key(doi: str) -> str:
    """A DOI as notices are indexed by it: canonical (:func:`~publisher.kernel.ids.canonical_id`),
    lowercased; a value of no DOI's form as it is, lowercased (it matches nothing asked)."""
    try:
        return canonical_id("doi", doi).lower()
    except IdError:
        return doi.strip().lower()


def notice_index(wiki: WikiCheck) -> NoticeIndex:
    """The wiki's notice index, read once per wiki check."""
    held = getattr(wiki, "_notice_index", None)
    if isinstance(held, NoticeIndex):
        return held
    index = NoticeIndex(wiki)
    setattr(wiki, "_notice_index", index)  # noqa: B010 (an attribute of the check, held for its lifetime)
    return index


def source_doi(wiki: WikiCheck, source_id: str) -> str | None:
    """The DOI a work rests on for ``source_id`` (a derived one; see ``derived_ids``)."""
    info = wiki.sources.get(source_id)
    return info.meta.derived_ids().get("doi") if info is not None else None


def retracted_sources(wiki: WikiCheck, source_ids: Any) -> dict[str, Notice]:
    """Of ``source_ids``, those whose work (:func:`~.works.works_of`) has a logged retraction or
    withdrawal of one of its DOIs, with the notice: a retracted article gives no credit through
    a copy of it that states only its PMCID, nor through a DOI spelt as a resolver link."""
    index = notice_index(wiki)
    if not index.by_doi:
        return {}
    works = works_of(wiki)
    out: dict[str, Notice] = {}
    for sid in source_ids:
        for member in works.members(sid):
            notice = index.of(source_doi(wiki, member))
            if notice is not None and notice.retracted:
                out[sid] = notice
                break
    return out


def check_notices(wiki: WikiCheck) -> None:
    """``C-NOTICE``: the log's findings, and each claim resting on a retracted work (a finding
    with ``retracted: fail``, a notice of the build with ``warn``)."""
    index = notice_index(wiki)
    wiki.findings.extend(index.findings)
    for state in wiki.claims:
        entry = getattr(state, "entry", None)
        bound = getattr(entry, "bound", None)
        if bound is None:
            continue
        sids = sorted({ref.source_id for item in bound.evidence for ref in item.refs})
        for sid, notice in retracted_sources(wiki, sids).items():
            detail = (
                f"claim {state.claim.id} rests on {sid[:16]}…, whose DOI {notice.doi} has a logged retraction "
                f"({notice.notice_id}, {notice.registry} on {notice.at[:10]})"
            )
            if wiki.policy.retracted == "fail":
                wiki.findings.append(Finding(None, state.rel, detail, source_id=sid, check=CHECK, field="retracted"))
            else:
                wiki.notices.append(detail + "; it gives the claim no credit")
