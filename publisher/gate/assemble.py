"""The assembler gate: a run's inputs and snapshots -> ``outputs/result.json`` (CONTRACT section 8).

Every extraction, appraisal and report claim is an artifact (:mod:`.artifacts`, :mod:`.claims`).
Each is checked completely, every finding is kept, and an artifact with any finding is unresolved
whether the gate is on or off; the gate only decides the verdict. Bad records never raise: only a
run that cannot be read at all (:func:`.inputs.load_inputs`) is a fatal error.

Every snapshot the run cites is read and verified once per command, up front and on every core,
through one :class:`~publisher.parallel.CheckedSnapshots`, which keeps the requested excerpts and
the metadata, never the texts. The result records its inputs (:mod:`.inputs`), so the same inputs
always assemble to the same result apart from ``generated_at``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..kernel import _fs
from ..kernel.assets import AssetChecker
from ..kernel.canonical import SOURCE_ID_RE, dumps_written, format_ts, utc_now
from ..kernel.errors import IntegrityError
from ..kernel.eventlog import LogState
from ..kernel.eventviews import EventView
from ..kernel.findings import Finding, counts_by_code
from ..kernel.reasons import Reason
from ..kernel.text import one_line
from ..kernel.vocab import ACCESS_ORDER, Access
from ..parallel import CheckedSnapshots, SnapshotCheck
from ..runs import Run
from .artifacts import Artifact, ArtifactChecker, flag_duplicates, flag_unsupported, warning_entry
from .claims import ReportClaims
from .freshness import Freshness, Provenance
from .inputs import RunInputs, RunOptions, gate_setting, inputs_digest
from .records import AgentRecord
from .reportmd import Footnote
from .urls import fetched_urls, url_key
from .verdicts import flag_upstream

__all__ = ["Assembly", "assemble", "assemble_run", "declare", "dump_result", "limited_log"]


@dataclass
class Assembly:
    """The outcome of one assembly; ``result`` is exactly what ``result.json`` holds."""

    result: dict[str, Any]
    verdict: str
    exit_status: int
    findings: list[Finding]
    """Every finding against an artifact, in artifact order (``diagnostics.unresolved`` holds them
    in the contract's shape)."""
    reader: CheckedSnapshots
    log: LogState[EventView]
    """The log lines this assembly read (all of them unless ``log_limit`` was given)."""
    full_log: LogState[EventView]
    """The whole log as found on disk."""
    freshness: dict[str, Freshness]
    referenced: list[str]
    wiki_root: Path | None
    assets: AssetChecker
    """Asset digests taken during this assembly (each file hashed once per command)."""
    provenance: Provenance
    """The trusted keys, run name and raw-bytes checks the fresh-fetch rule used."""
    written: Path | None = None

    @property
    def inputs_hash(self) -> str:
        """Digest of every input read (see :mod:`.inputs`)."""
        return str(self.result["inputs_hash"])


def limited_log(log: LogState[EventView], limit: int | None) -> LogState[EventView]:
    """The log as an earlier assembly read it: its first ``limit`` lines (chain findings kept)."""
    if limit is None or limit >= len(log.digests):
        return log
    return LogState(
        events=log.events[:limit],
        digests=log.digests[:limit],
        findings=list(log.findings),
        torn=False,
        chained=log.chained,
        exists=log.exists,
    )


def declare(
    reader: CheckedSnapshots, records: list[AgentRecord], footnotes: list[Footnote], urls: dict[str, list[str]]
) -> None:
    """Tell the reader every snapshot and span an assembly will ask for, so that one parallel
    pass reads each snapshot once (anything missed is read on demand)."""

    def want(source_id: object, spans: Iterable[tuple[int, int]] = ()) -> None:
        if isinstance(source_id, str) and SOURCE_ID_RE.fullmatch(source_id):
            reader.want(source_id, spans)

    for record in records:
        for entry in record.spans:
            want(entry.span.source_id, [(entry.span.start, entry.span.end)])
        for quote in record.quotes:
            want(quote.source_id, [(quote.start, quote.end)])
        for _, url in record.urls:
            for source_id in urls.get(url_key(url), []):
                want(source_id)
    for note in footnotes:
        for ref in note.refs:
            want(ref.source_id, [(ref.start, ref.end)])
        for url in (*note.links, *note.bare_urls):
            for source_id in urls.get(url_key(url), []):
                want(source_id)


def assemble(
    inputs: RunInputs,
    reader: CheckedSnapshots,
    *,
    gate: bool | None = None,
    log_limit: int | None = None,
    declared: bool = False,
) -> Assembly:
    """Assemble loaded ``inputs`` with a reader over the run's snapshots (loaded here if needed).

    ``gate`` is the ``--gate`` switch (None/False: the config decides); ``log_limit`` makes the
    assembly read only the first that many log lines, as an earlier assembly did (lines appended
    since do not change what it produced). ``declared``: the caller already declared to
    ``reader`` what these inputs ask for (:func:`declare`), so it is not declared again.
    """
    config = inputs.config
    enabled, flag = gate_setting(gate, config)
    log = limited_log(inputs.log, log_limit)
    records = inputs.records
    footnotes = inputs.footnotes
    if not declared:
        declare(reader, records, footnotes or [], fetched_urls(log))
    reader.load()
    checker = ArtifactChecker(
        inputs.run, reader, AssetChecker(inputs.wiki_root), config, log, inputs.provenance, inputs.corpus
    )
    for path, digest in reader.asset_digests(inputs.wiki_root).items():
        checker.assets.remember(path, digest)  # hashed by the workers that verified the snapshots

    record_arts = [checker.record_artifact(record) for record in records]
    flag_duplicates(record_arts)
    flag_unsupported(record_arts, inputs.verifier)
    used = flag_upstream(record_arts, inputs.verification)
    papers = _Papers()
    for art in record_arts:
        if not art.findings and art.sources:
            art.data["_paper"] = papers.of(reader.get(next(iter(art.sources))))
    accepted_records = [a for a in record_arts if not a.findings]
    report_arts: list[Artifact] = []
    if footnotes is not None:
        report_arts = ReportClaims(checker).artifacts(footnotes, accepted_records)
        flag_unsupported(report_arts, inputs.verifier)
        used |= flag_upstream(report_arts, inputs.verification)

    artifacts = record_arts + report_arts
    known = {a.artifact_id for a in artifacts}
    for artifact_id in inputs.verifier:
        if artifact_id not in known:
            detail = "listed by the checker but no such artifact in this run"
            checker.warn("workspace/verifier.json", "unsupported", detail, artifact_id)
    for item in inputs.verification.unsupported:
        if item.index not in used:
            field = f"unsupported_claims[{item.index}]"
            checker.warn("outputs/verification.json", field, "names no artifact of this run", item.artifact_id)
    findings = [f for a in artifacts for f in a.findings]
    accepted = [_accepted_entry(a, reader, checker, papers) for a in artifacts if not a.findings]
    unresolved_count = sum(1 for a in artifacts if a.findings)
    verdict = "pass" if not unresolved_count and accepted else "fail" if enabled else "warn"

    referenced = sorted(checker.referenced)
    sources = []
    assets: dict[str, str | None] = {}
    for source_id in referenced:
        outcome: SnapshotCheck | IntegrityError
        try:
            outcome = reader.get(source_id)
        except IntegrityError as exc:
            outcome = exc
        fresh = checker.freshness_of(outcome) if isinstance(outcome, SnapshotCheck) else None
        sources.append(_source_entry(source_id, outcome, fresh))
        if isinstance(outcome, SnapshotCheck) and outcome.asset is not None:
            assets[outcome.asset.path] = checker.assets.digest(outcome.asset.path)
    log_ref = {"events": len(log.digests), "head": log.head}
    inputs_list: list[list[Any]] = [["run_slug", inputs.slug], ["config", inputs.config_digest]]
    inputs_list += [["record", r.record, r.digest] for r in records]
    inputs_list += [["verifier", inputs.verifier_digest], ["verification", inputs.verification.digest]]
    inputs_list += [["report", inputs.report_digest]]
    inputs_list += [["corpus", inputs.corpus_digest]]
    inputs_list += [["source", s["source_id"], s["status"], s["record_hash"], s["content_hash"]] for s in sources]
    inputs_list += [["asset", path, assets[path]] for path in sorted(assets)]
    inputs_list.append(["log", log_ref["events"], log_ref["head"]])
    inputs_list += inputs.provenance.inputs()

    result: dict[str, Any] = {
        "schema_version": 1,
        "run_slug": inputs.slug,
        "generated_at": format_ts(utc_now()),
        "config": config.model_dump(mode="json"),
        "gate": {"enabled": enabled, "verdict": verdict, "flag": flag},
        "counts": {
            "artifacts_seen": len(artifacts),
            "accepted": len(accepted),
            "unresolved": unresolved_count,
            "spans_checked": checker.spans_checked,
            "sources": len(sources),
        },
        "accepted": accepted,
        "diagnostics": {
            "unresolved": [a.entry(f) for a in artifacts for f in a.findings],
            "counts_by_reason": counts_by_code(findings),
            "warnings": [warning_entry(w) for w in checker.warnings],
        },
        "sources": sources,
        "log": log_ref,
        "inputs": inputs_list,
        "inputs_hash": inputs_digest(inputs_list),
    }
    trust = inputs.provenance.declared(log.events)
    if trust is not None:  # the trust policy: an input of the check, declared, never hashed
        result["policy"] = trust.model_dump(mode="json")
    return Assembly(
        result=result,
        verdict=verdict,
        exit_status=1 if verdict == "fail" else 0,
        findings=findings,
        reader=reader,
        log=log,
        full_log=inputs.log,
        freshness=dict(checker.fresh),
        referenced=referenced,
        wiki_root=inputs.wiki_root,
        assets=checker.assets,
        provenance=inputs.provenance,
    )


def assemble_run(run: Run, options: RunOptions, *, gate: bool | None = None, write: bool = True) -> Assembly:
    """Load and assemble a run; writes ``outputs/result.json`` atomically when ``write``.

    ``gate`` is the ``--gate`` switch (None: the run's config decides); ``options`` say where the
    run's wiki is, which keys it trusts and how snapshots are read (:class:`.inputs.RunOptions`).
    """
    inputs = options.load(run)
    assembly = assemble(inputs, options.reader(run, inputs), gate=gate)
    if write:
        _fs.own_folder(run.outputs_dir)
        _fs.write_atomic(run.result_path, dump_result(assembly.result))
        assembly.written = run.result_path
    return assembly


def _source_entry(
    source_id: str, outcome: SnapshotCheck | IntegrityError | None, fresh: Freshness | None
) -> dict[str, Any]:
    if isinstance(outcome, SnapshotCheck):
        snap = outcome
        return {
            "source_id": source_id,
            "status": "ok",
            "url": snap.url,
            "title": snap.title,
            "retrieved_at": snap.retrieved_at,
            "access": snap.access,
            "origin": snap.origin,
            "paper": snap.paper.model_dump() if snap.paper else None,
            "asset": snap.asset.model_dump() if snap.asset else None,
            "content_hash": snap.content_hash,
            "record_hash": snap.record_hash,
            "sealed": snap.sealed,
            "chars": snap.text_length,
            "fresh": bool(fresh and fresh.fresh),
            "fresh_event_id": fresh.event_id if fresh else None,
            "fresh_detail": one_line(fresh.detail) if fresh else "",
        }
    status = "SNAPSHOT_HASH_MISMATCH"
    detail = "not read"
    if isinstance(outcome, IntegrityError):
        status = (outcome.reason or Reason.SNAPSHOT_HASH_MISMATCH).value
        detail = outcome.one_line()
    return {
        "source_id": source_id,
        "status": status,
        "url": None,
        "title": None,
        "retrieved_at": None,
        "access": None,
        "origin": None,
        "paper": None,
        "asset": None,
        "content_hash": None,
        "record_hash": None,
        "sealed": False,
        "chars": None,
        "fresh": False,
        "fresh_event_id": None,
        "fresh_detail": one_line(detail),
    }


class _Papers:
    """Each snapshot's paper as JSON, dumped once per assembly and handed out as a fresh copy
    (an artifact's ``_paper`` and its accepted entry's ``paper`` are never the same object)."""

    def __init__(self) -> None:
        self._dumped: dict[str, dict[str, Any] | None] = {}

    def of(self, snap: SnapshotCheck) -> dict[str, Any] | None:
        """``snap.paper.model_dump()``, or None for a snapshot without a paper."""
        try:
            dumped = self._dumped[snap.source_id]
        except KeyError:
            dumped = self._dumped[snap.source_id] = snap.paper.model_dump() if snap.paper else None
        return dict(dumped) if dumped is not None else None


_ACCESS_RANK = {access.value: rank for access, rank in ACCESS_ORDER.items()}
""":data:`ACCESS_ORDER` by the access's string, as a snapshot check holds it."""


def _rank(snap: SnapshotCheck) -> int:
    """Where a snapshot's access stands, weakest first (an unknown one raises, as Access() does)."""
    rank = _ACCESS_RANK.get(snap.access) if isinstance(snap.access, str) else None
    return rank if rank is not None else ACCESS_ORDER[Access(str(snap.access))]


def _accepted_entry(
    art: Artifact, reader: CheckedSnapshots, checker: ArtifactChecker, papers: _Papers
) -> dict[str, Any]:
    """An accepted artifact as ``result.json`` lists it; ``quotes[]`` is upstream's view of ``claims[]``."""
    snaps = [reader.get(sid) for sid in art.sources]
    weakest = min(snaps, key=_rank) if snaps else None
    data = {k: v for k, v in art.data.items() if not k.startswith("_")}
    return {
        "artifact_id": art.artifact_id,
        "kind": art.kind,
        "evidence_id": art.evidence_id,
        "record": art.record,
        "source_ids": list(art.sources),
        "paper": papers.of(weakest) if weakest else None,
        "url": weakest.url if weakest else None,
        "access": weakest.access if weakest else None,
        "fresh": True,
        "claims": art.claims,
        "quotes": [_quote(claim, reader.get(claim["source_id"]), checker) for claim in art.claims],
        "data": data,
    }


def _quote(claim: dict[str, Any], snap: SnapshotCheck, checker: ArtifactChecker) -> dict[str, Any]:
    """Upstream's quote of one claim: the re-slice with its source, offsets, url, freshness, section, page."""
    return {
        "text": claim["excerpt"],
        "source_id": claim["source_id"],
        "start": claim["start"],
        "end": claim["end"],
        "url": snap.url,
        "fresh": checker.freshness_of(snap).fresh,
        "section": claim["section"],
        "page": claim["page"],
    }


def dump_result(result: dict[str, Any]) -> bytes:
    """The bytes of ``result.json`` (indented for people; key order as built)."""
    return dumps_written(result)
