"""Artifacts and the span checks of CONTRACT sections 4-6: every finding of an extraction or appraisal.

An :class:`ArtifactChecker` holds what one assembly shares: the snapshot reader, the event log, the
run config, the corpus and freshness memoised per source. Of a span only the claim label, the
source id and the offsets are used; URL, paper ids, access, excerpt, section and page come from
the snapshot. Every finding is kept (one ``diagnostics.unresolved[]`` entry per finding, with its
field), so none hides another.

Besides the span checks, a record is checked against the run as the upstream kit checks it: its
``evidence_id`` must be listed in a ``corpus.jsonl`` that lists any (``SCHEMA_ERROR``); its spans
may only cite snapshots the corpus registers for that id, when it names any (``NO_PAPER_ID``);
every URL written in it must have been retrieved in the run (``URL_NOT_RETRIEVED``); and a record
stating ``evidence_basis: fulltext`` may not rest on abstracts alone (``ACCESS_MISMATCH``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..kernel.assets import AssetChecker
from ..kernel.canonical import SOURCE_ID_RE
from ..kernel.errors import IntegrityError, PublisherError
from ..kernel.eventlog import LogState
from ..kernel.eventviews import EventView
from ..kernel.findings import Finding, Located, LocateOutcome
from ..kernel.ids import paper_problem, split_evidence_id
from ..kernel.reasons import Reason
from ..kernel.shapes import ConfigView
from ..kernel.spans import MAX_SPAN, check_range
from ..kernel.store import read_snapshot
from ..kernel.text import one_line
from ..kernel.vocab import Access
from ..parallel import CheckedSnapshots, SnapshotCheck
from ..runs import Run
from .corpus import Corpus
from .freshness import Freshness, Provenance
from .records import AgentRecord
from .urls import fetched_urls, identifier_keys, url_key

if TYPE_CHECKING:
    from ..kernel.locate import Budget

__all__ = [
    "Artifact",
    "ArtifactChecker",
    "flag_duplicates",
    "flag_unsupported",
    "warning_entry",
    "LOG_NOT_INTACT",
    "RESULT_FILE",
]

MAX_LOCATED = 100
"""Most mismatched quotes one assembly locates for its EXCERPT_MISMATCH details; all of them
together do at most :data:`~publisher.kernel.locate.LOCATE_BUDGET` work."""

RESULT_FILE = "outputs/result.json"
"""Where a finding with no record of its own is reported."""

LOG_NOT_INTACT = "event log is not intact"
"""Start of the detail of a freshness finding voided by a broken log (grouped under C-EVENT-LOG)."""


class Artifact:
    """One extraction, appraisal or report claim being checked; any finding leaves it unresolved.

    ``sources``: backing source id -> first field that cites it, in citation order. A plain
    slotted class: a dataclass compiles its methods at import, which every ``assemble`` and
    ``verify`` paid, and nothing compares or copies these."""

    __slots__ = ("artifact_id", "claims", "data", "evidence_id", "findings", "kind", "record", "sources")

    def __init__(
        self,
        artifact_id: str,
        kind: str,
        evidence_id: str | None,
        record: str | None,
        data: dict[str, Any] | None = None,
    ) -> None:
        self.artifact_id, self.kind, self.evidence_id, self.record = artifact_id, kind, evidence_id, record
        self.data: dict[str, Any] = {} if data is None else data
        self.findings: list[Finding] = []
        self.claims: list[dict[str, Any]] = []
        self.sources: dict[str, str] = {}

    def find(
        self,
        field_name: str,
        reason: Reason,
        detail: str,
        source_id: str | None = None,
        *,
        differs_at: int | None = None,
        located: Located | None = None,
    ) -> None:
        """Record a finding against this artifact (it stays unresolved)."""
        self.findings.append(
            Finding(
                reason,
                self.record or RESULT_FILE,
                one_line(detail),
                artifact_id=self.artifact_id,
                field=field_name,
                source_id=source_id,
                differs_at=differs_at,
                located=located,
            )
        )

    def entry(self, finding: Finding) -> dict[str, Any]:
        """One of this artifact's findings as ``result.json``'s ``diagnostics.unresolved[]`` lists it."""
        return {
            "artifact_id": self.artifact_id,
            "kind": self.kind,
            "evidence_id": self.evidence_id,
            "field": finding.field,
            "reason_code": finding.code,
            "detail": finding.detail,
            "source_id": finding.source_id,
            "record": self.record,
        }


def warning_entry(warning: Finding) -> dict[str, Any]:
    """A warning (something ignored on purpose) as ``diagnostics.warnings[]`` lists it."""
    return {
        "artifact_id": warning.artifact_id,
        "record": warning.file,
        "field": warning.field,
        "detail": warning.detail,
    }


class ArtifactChecker:
    """One assembly: the shared reader, the log, and memoised freshness per source."""

    def __init__(
        self,
        run: Run,
        reader: CheckedSnapshots,
        assets: AssetChecker,
        config: ConfigView,
        log: LogState[EventView],
        provenance: Provenance,
        corpus: Corpus | None = None,
    ):
        self.provenance = provenance
        self.run = run
        self.reader = reader
        self.assets = assets
        self.config = config
        self.log = log
        self.corpus = corpus if corpus is not None else Corpus()
        self.fetched = fetched_urls(log)
        """:func:`~.urls.url_key` -> source ids of the log's ``fetch`` events."""
        self.referenced: dict[str, None] = {}
        self.fresh: dict[str, Freshness] = {}
        self.spans_checked = 0
        self.warnings: list[Finding] = []
        """What was ignored on purpose (severity ``warn``): never blocks."""
        self._located_text: tuple[str, str] | None = None
        self._located_count = 0
        self._located_budget: Budget | None = None
        """The work budget of every quote located by this checker (made with the first: the
        quote locator and its tables load only where a quote mismatches)."""
        self._paper_problems: dict[tuple[str, str], str | None] = {}

    # -- snapshots ---------------------------------------------------------------------------

    def warn(self, file: str, field_name: str, detail: str, artifact_id: str | None) -> None:
        """Note something ignored on purpose (an unknown field, a discarded quote)."""
        self.warnings.append(
            Finding(None, file, one_line(detail), artifact_id=artifact_id, field=field_name, severity="warn")
        )

    def snapshot(self, art: Artifact, field_name: str, source_id: str) -> SnapshotCheck | None:
        """The verified snapshot, or None after recording UNKNOWN_SOURCE / SNAPSHOT_HASH_MISMATCH."""
        if not isinstance(source_id, str) or not SOURCE_ID_RE.fullmatch(source_id):
            art.find(field_name, Reason.UNKNOWN_SOURCE, f"{str(source_id)[:80]!r} is not a source id (src-<64 hex>)")
            return None
        self.referenced[source_id] = None
        try:
            return self.reader.get(source_id)
        except IntegrityError as exc:
            reason = exc.reason or Reason.SNAPSHOT_HASH_MISMATCH
            art.find(field_name, reason, one_line(exc.message), source_id)
            return None

    def freshness_of(self, snap: SnapshotCheck) -> Freshness:
        hit = self.fresh.get(snap.source_id)
        if hit is None:
            hit = self.provenance.freshness(snap, self.log.events, self.config.created_at, self.assets)
            if hit.fresh and self.log.findings:
                first = self.log.findings[0]
                hit = Freshness(
                    False,
                    None,
                    Reason.NO_FRESH_FETCH,
                    f"{LOG_NOT_INTACT} (line {first.line}: {first.detail}); no event is trusted",
                )
            self.fresh[snap.source_id] = hit
        return hit

    # -- spans -------------------------------------------------------------------------------

    def located(self, source_id: str, quoted: str, start: int, end: int) -> Located:
        """Where a mismatched quote really is, for an EXCERPT_MISMATCH detail: the nearest candidate.

        The quote locator only suggests: the span stays rejected, and the finding names the
        candidate (its offsets and kind, in ``located`` and the detail) so that the author can cite
        it instead. The last text located in is kept (mismatches come in runs on one source), its
        normal form is built once per process and only for a quote not found verbatim
        (:func:`~publisher.kernel.locate.normal_form`), and at most
        :data:`MAX_LOCATED` quotes are located per assembly within one shared work budget, so a
        record of thousands of bad quotes, or of a few hostile ones, costs no more than a few. A
        search that stops at the budget names no candidate: the finding stands as it is.
        """
        if not quoted.strip() or len(quoted) > 2 * MAX_SPAN:
            return Located(LocateOutcome.NOT_SEARCHED)
        if self._located_count >= MAX_LOCATED:
            return Located(LocateOutcome.OVER_LIMIT)
        self._located_count += 1
        if self._located_text is None or self._located_text[0] != source_id:
            try:
                text = read_snapshot(self.reader.folder, source_id).text
            except PublisherError:
                return Located(LocateOutcome.NOT_SEARCHED)
            self._located_text = (source_id, text)
        _, text = self._located_text
        from ..kernel.locate import LOCATE_BUDGET, Budget, nearest, search_quote

        if self._located_budget is None:
            self._located_budget = Budget(LOCATE_BUDGET)
        candidates, stopped = search_quote(text, quoted, budget=self._located_budget)  # normal_form when needed
        if stopped:
            return Located(LocateOutcome.BUDGET)
        best = nearest(candidates, start, end)
        if best is None:
            return Located(LocateOutcome.NOWHERE)
        return Located(LocateOutcome.LOCATED, best.kind, best.start, best.end, len(candidates))

    @staticmethod
    def located_words(located: Located) -> str:
        """The detail's wording of :meth:`located` (the finding's ``located`` field holds the facts)."""
        match located.outcome:
            case LocateOutcome.LOCATED:
                more = f" of {located.candidates}" if located.candidates > 1 else ""
                return f"nearest located candidate{more}: {located.start}-{located.end} ({located.kind})"
            case LocateOutcome.NOWHERE:
                return "the quote is found nowhere in the snapshot"
            case LocateOutcome.OVER_LIMIT:
                return f"not located (over {MAX_LOCATED} mismatches)"
            case LocateOutcome.BUDGET:
                from ..kernel.locate import LOCATE_BUDGET

                return f"not located (the search stopped at its budget of {LOCATE_BUDGET:,} units of work)"
            case _:
                return "not located"

    def check_span(
        self,
        art: Artifact,
        field_name: str,
        source_id: str,
        start: int,
        end: int,
        *,
        quoted: Iterable[tuple[str, str]] = (),
        access: str | None = None,
        evidence_ids: Iterable[str] = (),
        claim: str | None = None,
    ) -> None:
        """Every span check of section 4; an intact span becomes a claim of the artifact."""
        self.spans_checked += 1
        snap = self.snapshot(art, field_name, source_id)
        if snap is None:
            return
        art.sources.setdefault(source_id, field_name)
        where = f"{source_id}#{start}-{end}"
        ok = True
        sliced = self.reader.span(source_id, start, end)
        excerpt = sliced.excerpt
        reason = check_range(start, end, snap.text_length)
        if reason is not None or excerpt is None:
            ok = False
            reason = reason or sliced.reason or Reason.SPAN_OUT_OF_RANGE
            art.find(field_name, reason, f"{where} on a text of {snap.text_length} code points", source_id)
        else:
            for name, text in quoted:
                if text != excerpt:
                    ok = False
                    at = next((i for i, (a, b) in enumerate(zip(text, excerpt, strict=False)) if a != b), None)
                    at = min(len(text), len(excerpt)) if at is None else at
                    located = self.located(source_id, text, start, end)
                    art.find(
                        field_name,
                        Reason.EXCERPT_MISMATCH,
                        f"{name} differs from the re-slice of {where} at code point {at} "
                        f"(quoted {len(text)}, re-slice {len(excerpt)} code points); " + self.located_words(located),
                        source_id,
                        differs_at=at,
                        located=located,
                    )
        if access is not None and access != snap.access:
            ok = False
            art.find(
                field_name,
                Reason.ACCESS_MISMATCH,
                f"span states access {access!r}; snapshot {source_id} is {snap.access}",
                source_id,
            )
        for evidence_id in evidence_ids:
            problem = self._paper_problem(evidence_id, snap)
            if problem is not None:
                ok = False
                art.find(field_name, Reason.NO_PAPER_ID, f"{problem} ({source_id})", source_id)
        if ok:
            art.claims.append(
                {
                    "claim": claim,
                    "field": field_name,
                    "source_id": source_id,
                    "start": start,
                    "end": end,
                    "access": snap.access,
                    "excerpt": excerpt,
                    "section": sliced.section,
                    "page": sliced.page,
                }
            )

    def _paper_problem(self, evidence_id: str, snap: SnapshotCheck) -> str | None:
        """:func:`~publisher.kernel.ids.paper_problem` of a verified snapshot, once per evidence id
        and snapshot (a record's spans mostly cite one snapshot under one id)."""
        key = (evidence_id, snap.source_id)
        try:
            return self._paper_problems[key]
        except KeyError:
            problem = self._paper_problems[key] = paper_problem(evidence_id, snap.paper)
            return problem

    def check_freshness(self, art: Artifact) -> None:
        """ASSET_HASH_MISMATCH for a backing source whose stored PDF changed; NO_FRESH_FETCH for one not fresh."""
        for source_id, field_name in art.sources.items():
            snap = self.reader.get(source_id)
            problem = self.assets.check(snap)
            if problem is not None:
                art.find(field_name, Reason.ASSET_HASH_MISMATCH, problem, source_id)
                continue
            fresh = self.freshness_of(snap)
            if not fresh.fresh:
                art.find(field_name, fresh.reason or Reason.NO_FRESH_FETCH, fresh.detail, source_id)

    # -- cited URLs --------------------------------------------------------------------------

    def check_url(self, art: Artifact, field_name: str, url: str, *, same_study: bool = False) -> str | None:
        """URL_NOT_RETRIEVED unless ``url`` names a retrieval of this run. Returns the source id it names.

        A URL passes as an identifier link (PubMed, DOI, PMC) of a paper whose snapshot backs the
        artifact (None is returned), or as the URL of a snapshot with a ``fetch`` event in the log.
        With ``same_study``, that snapshot must also back the artifact or be registered for its
        evidence id (a record may only cite where its own paper was read).
        """
        key = url_key(url)
        papers = [self.reader.get(sid).paper for sid in art.sources if self._verifies(sid)]
        if key.lower() in identifier_keys(papers):
            return None
        tampered = False
        for source_id in self.fetched.get(key, []):
            before = len(art.findings)
            snap = self.snapshot(art, field_name, source_id)
            tampered = tampered or len(art.findings) > before
            if snap is None or snap.url is None or url_key(snap.url) != key:
                continue
            if same_study and source_id not in art.sources:
                if art.evidence_id is None or split_evidence_id(art.evidence_id) is None:
                    continue
                if paper_problem(art.evidence_id, snap.paper) is not None:
                    continue
            return source_id
        if not tampered:
            art.find(field_name, Reason.URL_NOT_RETRIEVED, f"{url[:200]} has no snapshot fetched in this run")
        return None

    def _verifies(self, source_id: str) -> bool:
        try:
            self.reader.get(source_id)
        except IntegrityError:
            return False
        return True

    # -- records -----------------------------------------------------------------------------

    def record_artifact(self, record: AgentRecord) -> Artifact:
        art = Artifact(record.artifact_id, record.kind, record.evidence_id, record.record, data=dict(record.data))
        for finding in record.findings:
            art.find(finding.field or "record", finding.reason or Reason.SCHEMA_ERROR, finding.detail)
        for where, detail in record.warnings:
            self.warn(record.record, where, detail, art.artifact_id)
        entry_of = self.corpus.record(record.evidence_id)
        if self.corpus and record.evidence_id is not None and entry_of is None:
            art.find("evidence_id", Reason.SCHEMA_ERROR, f"evidence_id {record.evidence_id} is not in corpus.jsonl")
        registered = entry_of.source_ids if entry_of is not None else ()
        for entry in record.spans:
            span = entry.span
            # A span on a snapshot that is missing or does not verify has that as its one root
            # (check_span reports it); whether the corpus registers it is then beside the point.
            if (
                registered
                and span.source_id not in registered
                and SOURCE_ID_RE.fullmatch(span.source_id) is not None
                and self._verifies(span.source_id)
            ):
                art.find(
                    entry.field,
                    Reason.NO_PAPER_ID,
                    f"{span.source_id} is not registered for {record.evidence_id} in corpus.jsonl source_ids",
                    span.source_id,
                )
            ids = [record.evidence_id] if record.evidence_id else []
            if span.evidence_id is not None and span.evidence_id not in ids:
                ids.append(span.evidence_id)
            quoted = (
                [(n, v) for n, v in (("text", span.text), ("excerpt", span.excerpt)) if v is not None]
                if span.text is not None or span.excerpt is not None
                else ()
            )
            self.check_span(
                art,
                entry.field,
                span.source_id,
                span.start,
                span.end,
                quoted=quoted,
                access=span.access,
                evidence_ids=ids,
                claim=span.claim,
            )
        for quote in record.quotes:
            self.spans_checked += 1
            snap = self.snapshot(art, quote.field, quote.source_id)
            if snap is None:
                continue
            where = f"{quote.source_id}#{quote.start}-{quote.end}"
            reason = check_range(quote.start, quote.end, snap.text_length)
            if reason is not None:
                art.find(quote.field, reason, f"legacy quote {where} on a text of {snap.text_length}", quote.source_id)
            elif self.reader.span(quote.source_id, quote.start, quote.end).excerpt != quote.text:
                located = self.located(quote.source_id, quote.text, quote.start, quote.end)
                art.find(
                    quote.field,
                    Reason.EXCERPT_MISMATCH,
                    f"legacy quote differs from the re-slice of {where}; " + self.located_words(located),
                    quote.source_id,
                    located=located,
                )
        if record.quotes:
            detail = f"{len(record.quotes)} legacy quote(s) compared and discarded; quotes are derived"
            self.warn(record.record, "quotes", detail, art.artifact_id)
        self.check_freshness(art)
        for where, url in record.urls:
            self.check_url(art, where, url, same_study=True)
        self._check_basis(art)
        if record.kind == "extraction":
            art.data["quotes"] = [c["excerpt"] for c in art.claims]
        return art

    def _check_basis(self, art: Artifact) -> None:
        """ACCESS_MISMATCH for a record stating a full-text basis that rests on abstracts only."""
        if art.data.get("evidence_basis") != "fulltext" or not art.sources:
            return
        access = [self.reader.get(sid).access for sid in art.sources if self._verifies(sid)]
        if access and all(a == Access.ABSTRACT.value for a in access):
            art.find(
                "evidence_basis",
                Reason.ACCESS_MISMATCH,
                f"evidence_basis 'fulltext' but all {len(access)} snapshot(s) behind the record are abstracts",
            )


def flag_duplicates(arts: list[Artifact]) -> None:
    """Two records claiming one artifact id contradict each other: both are SCHEMA_ERROR."""
    by_id: dict[str, list[Artifact]] = {}
    for art in arts:
        by_id.setdefault(art.artifact_id, []).append(art)
    for same in by_id.values():
        if len(same) < 2:
            continue
        for art in same:
            others = ", ".join(o.record or "?" for o in same if o is not art)
            art.find("evidence_id", Reason.SCHEMA_ERROR, f"{art.artifact_id} is also written by {others}")


def flag_unsupported(arts: list[Artifact], unsupported: dict[str, list[str]]) -> None:
    for art in arts:
        for reason in unsupported.get(art.artifact_id, []):
            art.find("verifier", Reason.UNSUPPORTED_VERDICT, f"workspace/verifier.json: {reason}")
