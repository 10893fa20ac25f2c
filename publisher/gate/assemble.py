"""The assembler gate: agent records + report + snapshots + events -> ``outputs/result.json``.

Every extraction, appraisal and report claim is an artifact. Each is checked completely, every
finding is kept (one ``diagnostics.unresolved[]`` entry per finding, with the field it concerns),
and an artifact with any finding is unresolved whether the gate is on or off; the gate only
decides the verdict. Bad records never raise: only a run that cannot be read at all (no run, a
malformed config, an unreadable report or ``workspace/verifier.json``) is a fatal error.

Of a span, only the claim label, source id and offsets are used. URL, paper ids, access, excerpt,
section and page are derived from the snapshot. Every snapshot the run cites is read and verified
once per command, up front and on every core, through one
:class:`~publisher.batch.CheckedSnapshots`, which keeps the requested excerpts and the metadata,
never the texts.

``inputs_hash`` is ``"sha256:" + sha256(canonical_bytes(inputs))`` where ``inputs`` is this list,
in this order (digests are ``"sha256:"`` + hex of the file's exact bytes, null when absent):

1. ``["run_slug", slug]``
2. ``["config", digest of config.json]``
3. ``["record", "workspace/<folder>/<name>.json", digest]`` for every agent record, extractions
   then appraisals, each folder in name order
4. ``["verifier", digest of workspace/verifier.json]``
5. ``["report", digest of outputs/report.md]``
6. ``["corpus", digest of corpus.jsonl]``
7. ``["source", source_id, status, record_hash, content_hash]`` for every referenced snapshot in
   source-id order; ``status`` is ``ok``, ``UNKNOWN_SOURCE`` or ``SNAPSHOT_HASH_MISMATCH``, and the
   two hashes are null unless it is ``ok``
8. ``["asset", path, bare hex sha256 of the file now or null]`` for every asset of those snapshots,
   in path order (freshness of a local PDF depends on the file)
9. ``["log", log.events, log.head]``

Provenance inputs (CONTRACT section 12), appended only where they apply, so a run assembled
before them hashes as it did:

10. ``["raw", sha256, "ok" or the problem]`` for every receipt's raw file the fresh-fetch rule
    consulted, in digest order
11. ``["trusted_keys", [key id, ...]]`` (sorted) when the wiki lists trusted keys: a change of
    trusted keys makes a result stale, never silently different

The same inputs therefore always assemble to the same result apart from ``generated_at``, which
is what lets the verifier tell a result edited by hand from a run that changed since assembly.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..acquire.signing import KeyRing, load_trusted_keys
from ..kernel import _fs
from ..kernel.assets import AssetChecker
from ..kernel.blobs import BlobChecker
from ..kernel.canonical import (
    SOURCE_ID_RE,
    StrictJSONError,
    canonical_bytes,
    format_ts,
    loads_strict,
    prefixed,
    sha256_hex,
    utc_now,
)
from ..kernel.errors import PublisherError, UsageError
from ..kernel.eventlog import LogState, read_log
from ..kernel.models import ACCESS_ORDER, Access, EventType, Paper, RunConfig
from ..kernel.reasons import Reason
from ..kernel.spans import check_range
from ..parallel import CheckedSnapshots, ProgressFn, SnapshotCheck
from ..runs import Run, find_wiki_root
from .freshness import Freshness, Provenance
from .records import AgentRecord, read_records
from .reportmd import Footnote, link_key, parse_report

__all__ = ["Assembly", "assemble_run", "paper_problem", "gate_setting", "dump_result", "MAX_DETAIL"]

MAX_DETAIL = 300
"""Longest ``detail`` line of a finding."""

_LITERATURE_KINDS = ("pmid", "doi", "pmcid")


def _line(text: str) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= MAX_DETAIL else flat[: MAX_DETAIL - 1] + "…"


def _file_digest(path: Path) -> tuple[str | None, bytes | None]:
    try:
        data = _fs.read_regular(path)
    except FileNotFoundError:
        return None, None
    except _fs.NotRegularFileError as exc:
        raise UsageError(str(exc), reason=Reason.SCHEMA_ERROR) from exc
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from exc
    return prefixed(sha256_hex(data)), data


def gate_setting(cli_gate: bool | None, config: RunConfig) -> tuple[bool, str | None]:
    """Whether the gate is on and what turned it on (``--gate`` first, then the config)."""
    if cli_gate:
        return True, "--gate"
    if config.gates.evidence_kernel:
        return True, "gates.evidence_kernel"
    return False, None


def _norm_pmcid(value: str) -> str:
    value = value.strip().upper()
    return value[3:] if value.startswith("PMC") else value


def _norm_doi(value: str) -> str:
    value = value.strip().lower()
    for prefix in ("https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "doi:"):
        if value.startswith(prefix):
            value = value[len(prefix) :]
    return value


def _same_id(kind: str, a: str, b: str) -> bool:
    if kind == "doi":
        return _norm_doi(a) == _norm_doi(b)
    if kind == "pmcid":
        return _norm_pmcid(a) == _norm_pmcid(b)
    return a.strip() == b.strip()


def paper_problem(evidence_id: str, paper: Paper | None) -> str | None:
    """Why a snapshot's paper does not carry ``evidence_id`` (``NO_PAPER_ID``), or None.

    Only ``pmid:``, ``doi:`` and ``pmcid:`` ids are literature claims; other forms need no paper.
    DOIs compare case-insensitively, PMCIDs with or without their ``PMC`` prefix.
    """
    prefix, sep, value = evidence_id.partition(":")
    kind = prefix.strip().lower()
    if not sep or kind not in _LITERATURE_KINDS:
        return None
    if not value.strip():
        return f"evidence_id {evidence_id!r} names no {kind}"
    if paper is None:
        return f"snapshot has no paper ids; evidence_id {evidence_id}"
    stated = getattr(paper, kind)
    if not stated:
        return f"snapshot paper has no {kind}; evidence_id {evidence_id}"
    if not _same_id(kind, stated, value):
        return f"snapshot paper {kind} {stated} contradicts evidence_id {evidence_id}"
    return None


@dataclass
class _Artifact:
    artifact_id: str
    kind: str
    evidence_id: str | None
    record: str | None
    data: dict[str, Any] = field(default_factory=dict)
    findings: list[dict[str, Any]] = field(default_factory=list)
    claims: list[dict[str, Any]] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)
    """Backing source id -> first field that cites it, in citation order."""

    def find(self, field_name: str, reason: Reason, detail: str, source_id: str | None = None) -> None:
        self.findings.append(
            {
                "artifact_id": self.artifact_id,
                "kind": self.kind,
                "evidence_id": self.evidence_id,
                "field": field_name,
                "reason_code": reason.value,
                "detail": _line(detail),
                "source_id": source_id,
                "record": self.record,
            }
        )


@dataclass
class Assembly:
    """The outcome of one assembly; ``result`` is exactly what ``result.json`` holds."""

    result: dict[str, Any]
    verdict: str
    exit_status: int
    findings: list[dict[str, Any]]
    reader: CheckedSnapshots
    log: LogState
    """The log lines this assembly read (all of them unless ``log_limit`` was given)."""
    full_log: LogState
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
        """Digest of every input read (see the module docstring)."""
        return str(self.result["inputs_hash"])


class _Assembler:
    """One assembly: the shared reader, the log, and memoised freshness per source."""

    def __init__(
        self,
        run: Run,
        reader: CheckedSnapshots,
        assets: AssetChecker,
        config: RunConfig,
        log: LogState,
        provenance: Provenance,
    ):
        self.provenance = provenance
        self.run = run
        self.reader = reader
        self.assets = assets
        self.config = config
        self.log = log
        self.referenced: dict[str, None] = {}
        self.fresh: dict[str, Freshness] = {}
        self.spans_checked = 0
        self.warnings: list[dict[str, Any]] = []

    # -- snapshots ---------------------------------------------------------------------------

    def snapshot(self, art: _Artifact, field_name: str, source_id: str) -> SnapshotCheck | None:
        """The verified snapshot, or None after recording UNKNOWN_SOURCE / SNAPSHOT_HASH_MISMATCH."""
        if not isinstance(source_id, str) or not SOURCE_ID_RE.fullmatch(source_id):
            art.find(field_name, Reason.UNKNOWN_SOURCE, f"{str(source_id)[:80]!r} is not a source id (src-<64 hex>)")
            return None
        self.referenced[source_id] = None
        try:
            return self.reader.get(source_id)
        except PublisherError as exc:
            reason = exc.reason or Reason.SNAPSHOT_HASH_MISMATCH
            art.find(field_name, reason, exc.one_line(), source_id)
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
                    f"event log is not intact (line {first.line}: {first.problem}); no event is trusted",
                )
            self.fresh[snap.source_id] = hit
        return hit

    # -- spans -------------------------------------------------------------------------------

    def check_span(
        self,
        art: _Artifact,
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
                    art.find(
                        field_name,
                        Reason.EXCERPT_MISMATCH,
                        f"{name} differs from the re-slice of {where} at code point {at} "
                        f"(quoted {len(text)}, re-slice {len(excerpt)} code points)",
                        source_id,
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
            problem = paper_problem(evidence_id, snap.paper)
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

    def check_freshness(self, art: _Artifact) -> None:
        """NO_FRESH_FETCH / ASSET_HASH_MISMATCH for every backing source that is not fresh."""
        for source_id, field_name in art.sources.items():
            snap = self.reader.get(source_id)
            fresh = self.freshness_of(snap)
            if not fresh.fresh:
                art.find(field_name, fresh.reason or Reason.NO_FRESH_FETCH, fresh.detail, source_id)

    # -- records -----------------------------------------------------------------------------

    def record_artifact(self, record: AgentRecord) -> _Artifact:
        art = _Artifact(record.artifact_id, record.kind, record.evidence_id, record.record, data=dict(record.data))
        for finding in record.findings:
            art.find(finding.field, finding.reason, finding.detail)
        for where, detail in record.warnings:
            self.warnings.append(
                {"artifact_id": art.artifact_id, "record": record.record, "field": where, "detail": _line(detail)}
            )
        for entry in record.spans:
            span = entry.span
            ids = [record.evidence_id] if record.evidence_id else []
            if span.evidence_id is not None and span.evidence_id not in ids:
                ids.append(span.evidence_id)
            quoted = [(n, v) for n, v in (("text", span.text), ("excerpt", span.excerpt)) if v is not None]
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
                art.find(
                    quote.field,
                    Reason.EXCERPT_MISMATCH,
                    f"legacy quote differs from the re-slice of {where}",
                    quote.source_id,
                )
        if record.quotes:
            self.warnings.append(
                {
                    "artifact_id": art.artifact_id,
                    "record": record.record,
                    "field": "quotes",
                    "detail": f"{len(record.quotes)} legacy quote(s) compared and discarded; quotes are derived",
                }
            )
        self.check_freshness(art)
        if record.kind == "extraction":
            art.data["quotes"] = [c["excerpt"] for c in art.claims]
        return art

    # -- report ------------------------------------------------------------------------------

    def fetched_urls(self) -> dict[str, list[str]]:
        """URL (as a parsed link holds it, see :func:`link_key`) -> source ids of ``fetch`` events, in log order."""
        out: dict[str, list[str]] = {}
        for event in self.log.events:
            if event.type is EventType.FETCH and event.source_id is not None:
                ids = out.setdefault(link_key(event.url), [])
                if event.source_id not in ids:
                    ids.append(event.source_id)
        return out

    def report_artifacts(self, footnotes: list[Footnote], accepted_records: list[_Artifact]) -> list[_Artifact]:
        accepted_sources = {sid for art in accepted_records for sid in art.sources}
        urls = self.fetched_urls()
        by_label: dict[str, list[Footnote]] = {}
        for note in footnotes:
            by_label.setdefault(note.label, []).append(note)
        out: list[_Artifact] = []
        for label, notes in by_label.items():
            kinds = [n.kind for n in notes if n.kind is not None]
            if not kinds:
                continue
            first = notes[0]
            art = _Artifact(first.artifact_id, kinds[0], None, "outputs/report.md")
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
            self.check_freshness(art)
            out.append(art)
        return out

    def check_note(
        self,
        art: _Artifact,
        note: Footnote,
        prefix: str,
        urls: dict[str, list[str]],
        accepted_sources: set[str],
        accepted_records: list[_Artifact],
    ) -> None:
        if note.ref_error is not None:
            art.find(f"{prefix}spans", Reason.SCHEMA_ERROR, f"line {note.line}: {note.ref_error}")
        for index, ref in enumerate(note.refs):
            quoted = [("excerpt", ref.quoted)] if ref.quoted is not None else []
            self.check_span(
                art, f"{prefix}spans[{index}]", ref.source_id, ref.start, ref.end, quoted=quoted, claim=note.claim
            )
        for index, url in enumerate(note.links):
            where = f"{prefix}links[{index}]"
            found = tampered = False
            for source_id in urls.get(url, []):
                before = len(art.findings)
                snap = self.snapshot(art, where, source_id)
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


def _resolves(paper_ids: tuple[tuple[str, str], ...], art: _Artifact) -> bool:
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
        if any(_same_id(kind, value, i) for i in ids):
            matched = True
        else:
            return False
    return matched


def _read_verifier(run: Run) -> tuple[dict[str, list[str]], str | None]:
    """``workspace/verifier.json``: artifact id -> reasons; a malformed file is fatal."""
    digest, data = _file_digest(run.verifier_path)
    if data is None:
        return {}, None
    try:
        raw = loads_strict(data)
    except (StrictJSONError, ValueError) as exc:
        raise UsageError(f"{run.verifier_path}: not strict JSON ({exc})", reason=Reason.SCHEMA_ERROR) from exc
    entries = raw.get("unsupported") if isinstance(raw, dict) else None
    if not isinstance(entries, list):
        raise UsageError(f'{run.verifier_path}: expected {{"unsupported": [...]}}', reason=Reason.SCHEMA_ERROR)
    out: dict[str, list[str]] = {}
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("artifact_id"), str):
            raise UsageError(
                f"{run.verifier_path}: unsupported[{index}] has no artifact_id string", reason=Reason.SCHEMA_ERROR
            )
        reason = entry.get("reason")
        out.setdefault(entry["artifact_id"], []).append(reason if isinstance(reason, str) else "no reason given")
    return out, digest


def _source_entry(
    source_id: str, outcome: SnapshotCheck | PublisherError | None, fresh: Freshness | None
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
            "fresh_detail": _line(fresh.detail) if fresh else "",
        }
    status = "SNAPSHOT_HASH_MISMATCH"
    detail = "not read"
    if isinstance(outcome, PublisherError):
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
        "fresh_detail": _line(detail),
    }


def _accepted_entry(art: _Artifact, reader: CheckedSnapshots) -> dict[str, Any]:
    snaps = [reader.get(sid) for sid in art.sources]
    weakest = min(snaps, key=lambda s: ACCESS_ORDER[Access(str(s.access))]) if snaps else None
    data = {k: v for k, v in art.data.items() if not k.startswith("_")}
    return {
        "artifact_id": art.artifact_id,
        "kind": art.kind,
        "evidence_id": art.evidence_id,
        "record": art.record,
        "source_ids": list(art.sources),
        "paper": weakest.paper.model_dump() if weakest and weakest.paper else None,
        "url": weakest.url if weakest else None,
        "access": weakest.access if weakest else None,
        "fresh": True,
        "claims": art.claims,
        "data": data,
    }


def dump_result(result: dict[str, Any]) -> bytes:
    """The bytes of ``result.json`` (indented for people; key order as built)."""
    return (json.dumps(result, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def assemble_run(
    run: Run,
    *,
    gate: bool | None = None,
    wiki_root: Path | None = None,
    write: bool = True,
    reader: CheckedSnapshots | None = None,
    log_limit: int | None = None,
    executor: Executor | None = None,
    workers: int | None = None,
    progress: ProgressFn | None = None,
    trusted_keys: KeyRing | None = None,
) -> Assembly:
    """Assemble a run into its result; writes ``outputs/result.json`` atomically when ``write``.

    ``gate`` is the ``--gate`` switch (None/False: the config decides). ``wiki_root`` locates
    user-supplied PDFs (default: the nearest folder above the run with ``mkdocs.yml``).
    ``reader`` lets a caller (the verifier) share one read of each snapshot and declare spans of
    its own beforehand; ``log_limit`` makes the assembly read only the first that many log lines,
    as an earlier assembly did (lines appended since do not change what it produced).
    ``executor``, ``workers`` and ``progress`` go to :func:`publisher.batch.verify_many` when no
    ``reader`` is given. ``trusted_keys`` are the keys a fresh acquisition must be signed by
    (default: those the wiki's ``mkdocs.yml`` lists; an empty ring: unsigned provenance).
    """
    config = run.load_config()
    slug = run.slug(config)
    enabled, flag = gate_setting(gate, config)
    config_digest, _ = _file_digest(run.config_path)
    root = wiki_root if wiki_root is not None else find_wiki_root(run.path)
    if reader is None:
        reader = CheckedSnapshots(
            run.sources_dir, executor=executor, workers=workers, progress=progress, assets_root=root
        )
    full_log = log = read_log(run.events_path)
    if log_limit is not None and log_limit < len(full_log.digests):
        log = LogState(
            events=full_log.events[:log_limit],
            digests=full_log.digests[:log_limit],
            findings=list(full_log.findings),
            torn=False,
            chained=full_log.chained,
            exists=full_log.exists,
        )
    # Provenance (CONTRACT section 12): the wiki's trusted keys and the run a signature must name.
    keys = trusted_keys if trusted_keys is not None else load_trusted_keys(root)
    provenance = Provenance(keys, run.name(config), BlobChecker(run.raw_dir))
    asm = _Assembler(run, reader, AssetChecker(root), config, log, provenance)
    unsupported, verifier_digest = _read_verifier(run)

    records = read_records(run.extractions_dir, run.appraisals_dir)
    report_digest, report_bytes = _file_digest(run.report_md)
    footnotes: list[Footnote] | None = None
    if report_bytes is not None:
        try:
            text = report_bytes.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UsageError(f"{run.report_md} is not UTF-8 (byte {exc.start})", reason=Reason.SCHEMA_ERROR) from exc
        footnotes = parse_report(text)
    _declare(reader, records, footnotes or [], asm.fetched_urls())
    reader.load()
    for path, digest in reader.asset_digests(root).items():
        asm.assets.remember(path, digest)  # hashed by the workers that verified the snapshots

    record_arts = [asm.record_artifact(record) for record in records]
    _flag_duplicates(record_arts)
    _flag_unsupported(record_arts, unsupported)
    for art in record_arts:
        if not art.findings and art.sources:
            first = reader.get(next(iter(art.sources)))
            art.data["_paper"] = first.paper.model_dump() if first.paper else None
    accepted_records = [a for a in record_arts if not a.findings]

    report_arts: list[_Artifact] = []
    if footnotes is not None:
        report_arts = asm.report_artifacts(footnotes, accepted_records)
        _flag_unsupported(report_arts, unsupported)
    corpus_digest, _ = _file_digest(run.corpus_path)

    artifacts = record_arts + report_arts
    known = {a.artifact_id for a in artifacts}
    for artifact_id in unsupported:
        if artifact_id not in known:
            asm.warnings.append(
                {
                    "artifact_id": artifact_id,
                    "record": "workspace/verifier.json",
                    "field": "unsupported",
                    "detail": "listed by the checker but no such artifact in this run",
                }
            )
    findings = [f for a in artifacts for f in a.findings]
    accepted = [_accepted_entry(a, reader) for a in artifacts if not a.findings]
    unresolved_count = sum(1 for a in artifacts if a.findings)
    if unresolved_count or not accepted:
        verdict = "fail" if enabled else "warn"
    else:
        verdict = "pass"

    referenced = sorted(asm.referenced)
    sources = []
    assets: dict[str, str | None] = {}
    for source_id in referenced:
        outcome: SnapshotCheck | PublisherError
        try:
            outcome = reader.get(source_id)
        except PublisherError as exc:
            outcome = exc
        fresh = asm.freshness_of(outcome) if isinstance(outcome, SnapshotCheck) else None
        sources.append(_source_entry(source_id, outcome, fresh))
        if isinstance(outcome, SnapshotCheck) and outcome.asset is not None:
            assets[outcome.asset.path] = asm.assets.digest(outcome.asset.path)
    log_ref = {"events": len(log.digests), "head": log.head}
    inputs: list[list[Any]] = [["run_slug", slug], ["config", config_digest]]
    inputs += [["record", r.record, r.digest] for r in records]
    inputs += [["verifier", verifier_digest], ["report", report_digest], ["corpus", corpus_digest]]
    inputs += [["source", s["source_id"], s["status"], s["record_hash"], s["content_hash"]] for s in sources]
    inputs += [["asset", path, assets[path]] for path in sorted(assets)]
    inputs.append(["log", log_ref["events"], log_ref["head"]])
    inputs += provenance.inputs()

    counts_by_reason: dict[str, int] = {}
    for finding in findings:
        counts_by_reason[finding["reason_code"]] = counts_by_reason.get(finding["reason_code"], 0) + 1
    result: dict[str, Any] = {
        "schema_version": 1,
        "run_slug": slug,
        "generated_at": format_ts(utc_now()),
        "config": config.model_dump(mode="json"),
        "gate": {"enabled": enabled, "verdict": verdict, "flag": flag},
        "counts": {
            "artifacts_seen": len(artifacts),
            "accepted": len(accepted),
            "unresolved": unresolved_count,
            "spans_checked": asm.spans_checked,
            "sources": len(sources),
        },
        "accepted": accepted,
        "diagnostics": {
            "unresolved": findings,
            "counts_by_reason": dict(sorted(counts_by_reason.items())),
            "warnings": asm.warnings,
        },
        "sources": sources,
        "log": log_ref,
        "inputs_hash": prefixed(sha256_hex(canonical_bytes(inputs))),
    }
    assembly = Assembly(
        result=result,
        verdict=verdict,
        exit_status=1 if verdict == "fail" else 0,
        findings=findings,
        reader=reader,
        log=log,
        full_log=full_log,
        freshness=dict(asm.fresh),
        referenced=referenced,
        wiki_root=root,
        assets=asm.assets,
        provenance=provenance,
    )
    if write:
        run.outputs_dir.mkdir(parents=True, exist_ok=True)
        _fs.write_atomic(run.result_path, dump_result(result))
        assembly.written = run.result_path
    return assembly


def _declare(
    reader: CheckedSnapshots, records: list[AgentRecord], footnotes: list[Footnote], urls: dict[str, list[str]]
) -> None:
    """Tell the reader every snapshot and span the checks below will ask for, so that one
    parallel pass reads each snapshot once (anything missed is read on demand)."""

    def want(source_id: object, spans: Iterable[tuple[int, int]] = ()) -> None:
        if isinstance(source_id, str) and SOURCE_ID_RE.fullmatch(source_id):
            reader.want(source_id, spans)

    for record in records:
        for entry in record.spans:
            want(entry.span.source_id, [(entry.span.start, entry.span.end)])
        for quote in record.quotes:
            want(quote.source_id, [(quote.start, quote.end)])
    for note in footnotes:
        for ref in note.refs:
            want(ref.source_id, [(ref.start, ref.end)])
        for url in note.links:
            for source_id in urls.get(url, []):
                want(source_id)


def _flag_duplicates(arts: list[_Artifact]) -> None:
    """Two records claiming one artifact id contradict each other: both are SCHEMA_ERROR."""
    by_id: dict[str, list[_Artifact]] = {}
    for art in arts:
        by_id.setdefault(art.artifact_id, []).append(art)
    for same in by_id.values():
        if len(same) < 2:
            continue
        for art in same:
            others = ", ".join(o.record or "?" for o in same if o is not art)
            art.find("evidence_id", Reason.SCHEMA_ERROR, f"{art.artifact_id} is also written by {others}")


def _flag_unsupported(arts: list[_Artifact], unsupported: dict[str, list[str]]) -> None:
    for art in arts:
        for reason in unsupported.get(art.artifact_id, []):
            art.find("verifier", Reason.UNSUPPORTED_VERDICT, f"workspace/verifier.json: {reason}")
