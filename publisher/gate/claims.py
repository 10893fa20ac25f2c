"""Report claims (CONTRACT section 7): every footnote of ``outputs/report.md`` checked as an artifact.

A footnote whose body starts with a span reference is a claim on that span; one that cites a paper
by its identifiers must resolve to an accepted extraction or appraisal of that paper; a cited
``http(s)`` URL must be a snapshot fetched in this run; and a report claim may only cite sources
that back accepted evidence of the same run.
"""

from __future__ import annotations

from ..kernel.eventlog import LogState
from ..kernel.ids import same_id
from ..kernel.models import EventType
from ..kernel.reasons import Reason
from .artifacts import Artifact, ArtifactChecker
from .reportmd import Footnote, link_key

__all__ = ["ReportClaims", "fetched_urls"]


def fetched_urls(log: LogState) -> dict[str, list[str]]:
    """URL (as a parsed link holds it, see :func:`link_key`) -> source ids of ``fetch`` events, in log order."""
    out: dict[str, list[str]] = {}
    for event in log.events:
        if event.type is EventType.FETCH:
            ids = out.setdefault(link_key(event.url), [])
            if event.source_id not in ids:
                ids.append(event.source_id)
    return out


class ReportClaims:
    """The report's claims of one assembly, checked with that assembly's :class:`ArtifactChecker`."""

    def __init__(self, checker: ArtifactChecker) -> None:
        self.checker = checker
        self.log = checker.log

    def artifacts(self, footnotes: list[Footnote], accepted_records: list[Artifact]) -> list[Artifact]:
        """One artifact per footnote label that claims anything (plain notes claim nothing)."""
        accepted_sources = {sid for art in accepted_records for sid in art.sources}
        urls = fetched_urls(self.log)
        by_label: dict[str, list[Footnote]] = {}
        for note in footnotes:
            by_label.setdefault(note.label, []).append(note)
        out: list[Artifact] = []
        for label, notes in by_label.items():
            kinds = [n.kind for n in notes if n.kind is not None]
            if not kinds:
                continue
            first = notes[0]
            art = Artifact(first.artifact_id, kinds[0], None, "outputs/report.md")
            art.data = {"label": label, "line": first.line, "text": first.claim}
            for note in notes:
                prefix = "" if note.ordinal == 0 else f"definitions[{note.ordinal}]."
                if note.ordinal:
                    art.find(
                        f"{prefix}label",
                        Reason.SCHEMA_ERROR,
                        f"footnote [^{label}] defined again at line {note.line} (first at line {first.line})",
                    )
                self.check_note(art, note, prefix, urls, accepted_sources, accepted_records)
            self.checker.check_freshness(art)
            out.append(art)
        return out

    def check_note(
        self,
        art: Artifact,
        note: Footnote,
        prefix: str,
        urls: dict[str, list[str]],
        accepted_sources: set[str],
        accepted_records: list[Artifact],
    ) -> None:
        if note.ref_error is not None:
            art.find(f"{prefix}spans", Reason.SCHEMA_ERROR, f"line {note.line}: {note.ref_error}")
        for index, ref in enumerate(note.refs):
            quoted = [("excerpt", ref.quoted)] if ref.quoted is not None else []
            self.checker.check_span(
                art, f"{prefix}spans[{index}]", ref.source_id, ref.start, ref.end, quoted=quoted, claim=note.claim
            )
        for index, url in enumerate(note.links):
            where = f"{prefix}links[{index}]"
            found = tampered = False
            for source_id in urls.get(url, []):
                before = len(art.findings)
                snap = self.checker.snapshot(art, where, source_id)
                tampered = tampered or any(
                    f["reason_code"] == Reason.SNAPSHOT_HASH_MISMATCH.value for f in art.findings[before:]
                )
                if snap is not None and snap.url is not None and link_key(snap.url) == url:
                    found = True
                    art.sources.setdefault(source_id, where)
            if not found and not tampered:
                art.find(where, Reason.URL_NOT_RETRIEVED, f"{url[:200]} has no snapshot fetched in this run")
        for source_id, where in art.sources.items():
            if source_id not in accepted_sources:
                art.find(
                    where,
                    Reason.SOURCE_OUTSIDE_ACCEPTED,
                    f"{source_id} backs no accepted extraction or appraisal of this run",
                    source_id,
                )
        if note.kind == "synthesis_claim":
            matched = [a for a in accepted_records if _resolves(note.paper_ids, a)]
            stated = " ".join(f"{k}:{v}" for k, v in note.paper_ids)
            if not matched:
                art.find(
                    f"{prefix}paper_ids",
                    Reason.SOURCE_OUTSIDE_ACCEPTED,
                    f"{stated} resolves to no accepted extraction or appraisal",
                )
            else:
                art.data["resolves_to"] = [a.artifact_id for a in matched]
                for other in matched:
                    for source_id in other.sources:
                        art.sources.setdefault(source_id, f"{prefix}paper_ids")


def _resolves(paper_ids: tuple[tuple[str, str], ...], art: Artifact) -> bool:
    """Whether an accepted record artifact is the paper an upstream footnote names."""
    matched = False
    paper = art.data.get("_paper")
    for kind, value in paper_ids:
        ids: list[str] = []
        if art.evidence_id and art.evidence_id.split(":", 1)[0].lower() == kind:
            ids.append(art.evidence_id.split(":", 1)[1])
        if isinstance(paper, dict) and paper.get(kind):
            ids.append(paper[kind])
        if not ids:
            continue
        if any(same_id(kind, value, i) for i in ids):
            matched = True
        else:
            return False
    return matched
