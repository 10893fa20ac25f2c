"""Report claims (CONTRACT section 7): every footnote of ``outputs/report.md`` checked as an artifact.

As upstream, every footnote is a citation and must resolve to accepted evidence of the run, else
``SOURCE_OUTSIDE_ACCEPTED``:

- a footnote whose body starts with a span reference is a claim on that span, whose snapshot must
  back an accepted extraction or appraisal;
- a footnote in the upstream forms (paper ids, a bare key, URLs) resolves to accepted records of
  one paper: through its label in ``corpus.jsonl`` when the run has a corpus (as the upstream
  kit resolves them; paper ids it also states must agree), otherwise through the PMID, DOI or
  PMCID it states; a footnote that states nothing to resolve by (``[^smith2024]: Smith JA,
  2024.``) resolves to nothing;
- a reference that no definition answers cites nothing;
- every URL it cites, as a Markdown link or bare, must be the URL of a snapshot fetched in this
  run (which then backs the claim) or an identifier link of a paper behind the claim
  (``URL_NOT_RETRIEVED``).
"""

from __future__ import annotations

from ..kernel.ids import IdError, canonical_id, same_id, split_evidence_id
from ..kernel.reasons import Reason
from .artifacts import Artifact, ArtifactChecker
from .reportmd import Footnote

__all__ = ["ReportClaims"]


class ReportClaims:
    """The report's claims of one assembly, checked with that assembly's :class:`ArtifactChecker`."""

    def __init__(self, checker: ArtifactChecker) -> None:
        self.checker = checker
        self.corpus = checker.corpus
        self._index: tuple[list[Artifact], _Index] | None = None

    def _indexed(self, accepted: list[Artifact]) -> _Index:
        """``accepted`` indexed by paper id and evidence id, made once for the list a report's
        footnotes share (so n footnotes over n records cost n lookups, not n x n comparisons)."""
        if self._index is None or self._index[0] is not accepted:
            self._index = (accepted, _Index(accepted))
        return self._index[1]

    def artifacts(self, footnotes: list[Footnote], accepted_records: list[Artifact]) -> list[Artifact]:
        """One artifact per footnote label: every footnote is a citation."""
        accepted_sources = {sid for art in accepted_records for sid in art.sources}
        by_label: dict[str, list[Footnote]] = {}
        for note in footnotes:
            by_label.setdefault(note.label, []).append(note)
        out: list[Artifact] = []
        for label, notes in by_label.items():
            first = notes[0]
            art = Artifact(first.artifact_id, first.kind, None, "outputs/report.md")
            art.data = {"label": label, "line": first.line, "text": first.claim, "_ref_lines": first.ref_lines}
            if not first.defined:
                art.find(
                    "definition",
                    Reason.SOURCE_OUTSIDE_ACCEPTED,
                    f"[^{label}] is cited on line {first.line} but never defined: it cites nothing",
                )
                out.append(art)
                continue
            for note in notes:
                prefix = "" if note.ordinal == 0 else f"definitions[{note.ordinal}]."
                if note.ordinal:
                    art.find(
                        f"{prefix}label",
                        Reason.SCHEMA_ERROR,
                        f"footnote [^{label}] defined again at line {note.line} (first at line {first.line})",
                    )
                self.check_note(art, note, prefix, accepted_sources, accepted_records)
            self.checker.check_freshness(art)
            out.append(art)
        return out

    def check_note(
        self,
        art: Artifact,
        note: Footnote,
        prefix: str,
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
        if not note.span_form:
            matched = self._resolve(art, note, prefix, accepted_records)
            if matched:
                art.data["resolves_to"] = [a.artifact_id for a in matched]
                named = {a.evidence_id for a in matched}
                art.evidence_id = named.pop() if len(named) == 1 else None
                for other in matched:
                    for source_id in other.sources:
                        art.sources.setdefault(source_id, f"{prefix}paper_ids")
        cited = [(f"{prefix}links[{i}]", url) for i, url in enumerate(note.links)]
        cited += [(f"{prefix}urls[{i}]", url) for i, url in enumerate(note.bare_urls)]
        for where, url in cited:
            retrieved = self.checker.check_url(art, where, url)
            if retrieved is not None:
                art.sources.setdefault(retrieved, where)
        for source_id, where in art.sources.items():
            if source_id not in accepted_sources:
                art.find(
                    where,
                    Reason.SOURCE_OUTSIDE_ACCEPTED,
                    f"{source_id} backs no accepted extraction or appraisal of this run",
                    source_id,
                )

    def _resolve(self, art: Artifact, note: Footnote, prefix: str, accepted: list[Artifact]) -> list[Artifact]:
        """The accepted records an upstream-form footnote names; records SOURCE_OUTSIDE_ACCEPTED when none."""
        stated = " ".join(f"{k}:{v}" for k, v in note.paper_ids)
        if self.corpus:
            evidence_id, problem = self.corpus.resolve_label(note.label)
            if evidence_id is None:
                art.find(f"{prefix}label", Reason.SOURCE_OUTSIDE_ACCEPTED, problem or "label resolves to nothing")
                return []
            matched = [accepted[at] for at in self._indexed(accepted).by_evidence_id.get(evidence_id, [])]
            if not matched:
                art.find(
                    f"{prefix}label",
                    Reason.SOURCE_OUTSIDE_ACCEPTED,
                    f"[^{note.label}] names {evidence_id}, which has no accepted extraction or appraisal",
                )
                return []
            for kind, value in note.paper_ids:
                if not self._agrees(evidence_id, matched, kind, value):
                    art.find(
                        f"{prefix}paper_ids",
                        Reason.SOURCE_OUTSIDE_ACCEPTED,
                        f"{kind}:{value} stated in [^{note.label}] contradicts {evidence_id}",
                    )
                    return []
            return matched
        if not note.paper_ids:
            if note.links or note.bare_urls:
                return []  # a citation of URLs only: what was retrieved there must back accepted evidence
            art.find(
                f"{prefix}label",
                Reason.SOURCE_OUTSIDE_ACCEPTED,
                f"[^{note.label}] states no span reference, paper id or URL, and the run has no corpus.jsonl to "
                "resolve its label",
            )
            return []
        named = self._indexed(accepted).stating(note.paper_ids)  # the only records that can resolve
        matched = [accepted[at] for at in sorted(named) if _resolves(note.paper_ids, accepted[at])]
        if not matched:
            detail = f"{stated} resolves to no accepted extraction or appraisal"
            art.find(f"{prefix}paper_ids", Reason.SOURCE_OUTSIDE_ACCEPTED, detail)
        return matched

    def _agrees(self, evidence_id: str, matched: list[Artifact], kind: str, value: str) -> bool:
        """Whether a paper id a footnote states can be ``evidence_id``'s (no known id of that kind differs)."""
        known: list[str] = []
        record = self.corpus.record(evidence_id)
        if record is not None and kind in record.ids:
            known.append(record.ids[kind])
        split = split_evidence_id(evidence_id)
        if split is not None and split[0] == kind:
            known.append(split[1])
        for art in matched:
            paper = art.data.get("_paper")
            if isinstance(paper, dict) and paper.get(kind):
                known.append(paper[kind])
        try:
            canonical_id(kind, value)
        except IdError:
            return False
        return all(same_id(kind, value, k) for k in known)


def _artifact_ids(art: Artifact) -> list[tuple[str, str]]:
    """The paper ids an accepted record states (its evidence id, its ``_paper``), as ``(kind, value)``."""
    ids: list[tuple[str, str]] = []
    if art.evidence_id and ":" in art.evidence_id:
        kind, value = art.evidence_id.split(":", 1)
        ids.append((kind.lower(), value))
    paper = art.data.get("_paper")
    if isinstance(paper, dict):
        ids += [(kind, value) for kind, value in paper.items() if isinstance(value, str) and value]
    return ids


def _id_key(kind: str, value: str) -> tuple[str, str] | None:
    """The key two spellings of one paper id share (:func:`same_id` is equality of keys), or None."""
    try:
        canonical = canonical_id(kind, value)
    except IdError:
        return None
    return kind, canonical.lower() if kind == "doi" else canonical


class _Index:
    """Where each record of a list of accepted records stands, by evidence id and by the key of
    every paper id it states."""

    def __init__(self, accepted: list[Artifact]) -> None:
        self.by_evidence_id: dict[str | None, list[int]] = {}
        self.by_paper_id: dict[tuple[str, str], set[int]] = {}
        for at, art in enumerate(accepted):
            self.by_evidence_id.setdefault(art.evidence_id, []).append(at)
            for kind, value in _artifact_ids(art):
                key = _id_key(kind, value)
                if key is not None:
                    self.by_paper_id.setdefault(key, set()).add(at)

    def stating(self, paper_ids: tuple[tuple[str, str], ...]) -> set[int]:
        """The places of the records that state at least one of ``paper_ids`` (a superset of
        those that resolve)."""
        named: set[int] = set()
        for kind, value in paper_ids:
            key = _id_key(kind, value)
            if key is not None:
                named |= self.by_paper_id.get(key, set())
        return named


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
