"""The integrity preflight of an evidence wiki: every result and concept checked against its snapshots.

Before a site is built (and before a promotion writes anything) every snapshot referenced by an
accepted claim of any ``result.json`` is re-read and re-hashed once, every excerpt is re-sliced
and compared with ``result.json`` and with the concept footnotes that quote it, paper ids and
asset hashes are checked, and each run's event log must still chain up to the head its result
recorded. Bad evidence is reported as :class:`Finding` values, never raised: the caller (the
build hook, ``promote``) decides what blocks.

Checks and the reason codes they emit:

P1 result.json: readable and valid against :class:`publisher.records.Result` (SCHEMA_ERROR);
   run slugs unique in the wiki (SCHEMA_ERROR); at least one accepted artifact (NO_SPANS).
P2 snapshots: each cited snapshot re-read and verified (UNKNOWN_SOURCE, SNAPSHOT_HASH_MISMATCH).
P3 spans: range and length (SPAN_OUT_OF_RANGE, SPAN_TOO_LONG); the re-slice equals the claim's
   ``excerpt`` (EXCERPT_MISMATCH); the claim's and the artifact's ``access`` are the snapshot's
   (ACCESS_MISMATCH); the artifact's ``url`` is its weakest snapshot's (URL_NOT_RETRIEVED);
   ``paper`` agrees with the snapshot and with the evidence id (NO_PAPER_ID); the artifact's
   ``source_ids`` cover its claims (SCHEMA_ERROR); ``sources[]`` digests agree with the snapshot
   (SNAPSHOT_HASH_MISMATCH).
P4 assets: a stored PDF still hashes to ``asset.sha256`` (ASSET_HASH_MISMATCH).
P5 event log: chain intact, no torn line, and line ``log.events`` digests to ``log.head``
   (SNAPSHOT_HASH_MISMATCH: a recomputed digest differs from the stored one).
P6 concepts: front matter valid, slug equals file name, named runs exist (SCHEMA_ERROR); at least
   one evidence footnote (NO_SPANS); each footnote reference well formed (SCHEMA_ERROR), an
   accepted claim of a run the concept names (SOURCE_OUTSIDE_ACCEPTED), its excerpt as promoted
   equal to the re-slice (EXCERPT_MISMATCH).

A wiki with neither results nor concepts has nothing to verify: that passes with a notice, so a
freshly scaffolded wiki builds. Any evidence present must verify in full.
"""

from __future__ import annotations

import glob
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..gate.assemble import paper_problem
from ..gate.result import AcceptedArtifact, Result
from ..kernel import _fs
from ..kernel.assets import AssetChecker
from ..kernel.canonical import StrictJSONError, loads_strict
from ..kernel.errors import PublisherError
from ..kernel.eventlog import LogState, read_log
from ..kernel.findings import Finding, counts_by_code
from ..kernel.models import ACCESS_ORDER, Access, Event, Paper, first_error
from ..kernel.reasons import Reason
from ..kernel.refs import SpanRef
from ..parallel import ProgressFn, SnapshotCheck, default_workers, verify_many, worker_pool
from ..runs import RUN_LAYOUTS, Run, slug_problem
from .concepts import CONCEPTS_DIR, ConceptDoc, parse_concept

__all__ = [
    "Finding",
    "SourceMeta",
    "SnapshotRequest",
    "SnapshotOutcome",
    "verify_snapshots",
    "RunEvidence",
    "ConceptEvidence",
    "SourceInfo",
    "Preflight",
    "discover",
    "run_preflight",
    "check_concept_text",
]

SpanKey = tuple[str, int, int]
"""``(source_id, start, end)``."""


# ---------------------------------------------------------------------------------------------
# P2/P3: snapshot verification, shaped for a parallel executor


@dataclass(frozen=True)
class SourceMeta:
    """A verified snapshot's metadata (never its text)."""

    source_id: str
    url: str
    title: str | None
    retrieved_at: str
    access: Access
    origin: str
    paper: Paper | None
    asset_path: str | None
    asset_sha256: str | None
    content_hash: str
    record_hash: str | None
    chars: int


@dataclass(frozen=True)
class SnapshotRequest:
    """Read ``source_id`` from ``sources_dir`` once and re-slice ``spans`` from it."""

    sources_dir: str
    source_id: str
    spans: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class SnapshotOutcome:
    """What one request found: metadata and excerpts, or the reason the snapshot failed."""

    sources_dir: str
    source_id: str
    meta: SourceMeta | None
    excerpts: dict[tuple[int, int], str]
    bad_spans: dict[tuple[int, int], Reason]
    reason: Reason | None = None
    detail: str = ""


def _outcome(check: SnapshotCheck) -> SnapshotOutcome:
    """A batch check in the preflight's terms: metadata, excerpts and bad spans, never the text."""
    if not check.ok:
        reason = check.reason or Reason.SNAPSHOT_HASH_MISMATCH
        detail = check.detail.removeprefix(f"{reason.value}: ")
        return SnapshotOutcome(check.location, check.source_id, None, {}, {}, reason, detail)
    meta = SourceMeta(
        source_id=check.source_id,
        url=check.url or "",
        title=check.title,
        retrieved_at=check.retrieved_at or "",
        access=Access(str(check.access)),
        origin=check.origin or "",
        paper=check.paper,
        asset_path=check.asset.path if check.asset else None,
        asset_sha256=check.asset.sha256 if check.asset else None,
        content_hash=check.content_hash or "",
        record_hash=check.record_hash,
        chars=check.text_length,
    )
    excerpts: dict[tuple[int, int], str] = {}
    bad: dict[tuple[int, int], Reason] = {}
    for item in check.spans:
        if item.excerpt is not None:
            excerpts[(item.start, item.end)] = item.excerpt
        else:
            bad[(item.start, item.end)] = item.reason or Reason.SPAN_OUT_OF_RANGE
    return SnapshotOutcome(check.location, check.source_id, meta, excerpts, bad)


def verify_snapshots(
    requests: Sequence[SnapshotRequest],
    executor: Executor | None = None,
    *,
    workers: int | None = None,
    progress: ProgressFn | None = None,
    keep: list[SnapshotCheck] | None = None,
    meanwhile: Callable[[], object] | None = None,
    assets_root: Path | None = None,
) -> list[SnapshotOutcome]:
    """Verify every requested snapshot once, in request order, through :func:`batch.verify_many`.

    Each snapshot file is read once on every core (or on ``executor``); outcomes carry excerpts
    and findings only, never whole texts, so memory stays bounded by the largest snapshot. The
    batch checks themselves are appended to ``keep`` when given. ``meanwhile`` is called after
    each check arrives: a small piece of the caller's own work, done while the workers go on
    with the snapshots still in flight. With ``assets_root`` the workers hash each snapshot's
    asset file too (``SnapshotCheck.asset_digest``).
    """
    checks = []
    for check in verify_many(
        ((r.sources_dir, r.source_id, r.spans) for r in requests),
        executor=executor,
        workers=workers,
        progress=progress,
        assets_root=assets_root,
    ):
        checks.append(check)
        if meanwhile is not None:
            meanwhile()
    if keep is not None:
        keep.extend(checks)
    by_key = {(c.location, c.source_id): _outcome(c) for c in checks}
    return [by_key[(os.fspath(Path(r.sources_dir)), r.source_id)] for r in requests]


# ---------------------------------------------------------------------------------------------
# what the preflight hands its callers


@dataclass(frozen=True)
class VerifiedClaim:
    """One accepted claim whose excerpt was re-sliced and matched."""

    artifact_id: str
    index: int
    claim: str | None
    field: str
    source_id: str
    start: int
    end: int
    excerpt: str
    access: str
    section: str | None
    page: int | None


@dataclass
class RunEvidence:
    """One run with a ``result.json``: where it is, what it accepted, and its fetch events."""

    run: Run
    rel: str
    slug: str
    config: dict[str, Any]
    result: Result | None
    events: list[Event] = field(default_factory=list)
    log: LogState | None = None
    """The event log as read by this preflight (read while the snapshots are checked)."""
    log_error: str | None = None
    """Why the event log could not be read at all (a link, FIFO or folder in its place)."""
    accepted: dict[SpanKey, list[tuple[str, int]]] = field(default_factory=dict)
    failed: dict[SpanKey, Reason] = field(default_factory=dict)
    """Claims ``result.json`` accepts whose evidence failed here, with the reason."""

    @property
    def title(self) -> str:
        """The run's question when it states one, else its slug."""
        question = self.config.get("question")
        return question.strip() if isinstance(question, str) and question.strip() else self.slug

    def claims(self, preflight: Preflight) -> Iterator[tuple[AcceptedArtifact, list[VerifiedClaim]]]:
        """Accepted artifacts in result order with their verified claims."""
        if self.result is None:
            return
        for artifact in self.result.accepted:
            verified = []
            for index, claim in enumerate(artifact.claims):
                key = (claim.source_id, claim.start, claim.end)
                excerpt = preflight.excerpts.get(key)
                if excerpt is None:
                    continue
                verified.append(
                    VerifiedClaim(
                        artifact.artifact_id,
                        index,
                        claim.claim,
                        claim.field,
                        claim.source_id,
                        claim.start,
                        claim.end,
                        excerpt,
                        claim.access.value,
                        claim.section,
                        claim.page,
                    )
                )
            yield artifact, verified


@dataclass
class ConceptEvidence:
    """One concept file and its parsed document (None when it failed to parse)."""

    path: Path
    rel: str
    slug: str
    doc: ConceptDoc | None


@dataclass
class SourceInfo:
    """A source id across the wiki: first verified copy, the runs holding it, cited spans."""

    meta: SourceMeta
    sources_dir: Path
    holders: list[str] = field(default_factory=list)
    spans: set[tuple[int, int]] = field(default_factory=set)


@dataclass
class Preflight:
    """Everything the preflight verified, and every finding."""

    wiki_root: Path
    runs: list[RunEvidence] = field(default_factory=list)
    concepts: list[ConceptEvidence] = field(default_factory=list)
    sources: dict[str, SourceInfo] = field(default_factory=dict)
    excerpts: dict[SpanKey, str] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    snapshot_checks: list[SnapshotCheck] = field(default_factory=list)
    """The batch check of every snapshot file read (excerpts and metadata, never texts), for
    callers that re-assemble a run in the same command (the build's report pages)."""

    @property
    def ok(self) -> bool:
        """No finding at all."""
        return not self.findings

    def run_by_slug(self, slug: str) -> RunEvidence | None:
        """The run with that slug, if any."""
        return next((r for r in self.runs if r.slug == slug), None)

    def run_by_rel(self, rel: str) -> RunEvidence | None:
        """The run at that wiki-relative path, if any."""
        return next((r for r in self.runs if r.rel == rel), None)

    def counts_by_reason(self) -> dict[str, int]:
        """How many findings carry each reason code."""
        return counts_by_code(self.findings)


# ---------------------------------------------------------------------------------------------
# discovery


def _rel(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def discover(wiki_root: Path, layouts: Iterable[str] = RUN_LAYOUTS) -> tuple[list[Path], list[Path]]:
    """Run folders holding ``outputs/result.json`` and concept files, each sorted."""
    runs: list[Path] = []
    seen: set[Path] = set()
    for pattern in layouts:
        for name in sorted(glob.glob(os.path.join(glob.escape(str(wiki_root)), pattern))):
            path = Path(name)
            if path.is_dir() and Run(path).result_path.is_file() and path.resolve() not in seen:
                seen.add(path.resolve())
                runs.append(path)
    folder = wiki_root / CONCEPTS_DIR
    # Everything but a real folder: a link, FIFO or device named *.md is refused by the reader,
    # never skipped in silence (nor followed out of the wiki).
    concepts = sorted(p for p in folder.glob("*.md") if p.is_symlink() or not p.is_dir()) if folder.is_dir() else []
    return runs, concepts


def _load_run(path: Path, wiki_root: Path, out: list[Finding]) -> RunEvidence:
    run = Run(path)
    rel = _rel(path, wiki_root)
    result_rel = _rel(run.result_path, wiki_root)
    config: dict[str, Any] = {}
    try:
        raw_config = loads_strict(_fs.read_regular(run.config_path))
        if isinstance(raw_config, dict):
            config = raw_config
    except (OSError, ValueError, StrictJSONError):
        config = {}
    result: Result | None = None
    try:
        result = Result.model_validate(loads_strict(_fs.read_regular(run.result_path)))
    except (OSError, ValueError, StrictJSONError, ValidationError) as exc:
        if isinstance(exc, ValidationError):
            why = first_error(exc, "result")
        else:
            why = f"not strict JSON ({' '.join(str(exc).split())[:160]})"
        out.append(Finding(Reason.SCHEMA_ERROR, result_rel, why))
    slug = result.run_slug if result is not None else str(config.get("run_slug") or path.name)
    own = config.get("run_slug") or path.name  # what assembling the run now would call it
    problem = slug_problem(own) if isinstance(own, str) else None
    if problem is not None:
        out.append(Finding(Reason.SCHEMA_ERROR, _rel(run.config_path, wiki_root), problem, field="run_slug"))
    return RunEvidence(run, rel, slug, config, result)


# ---------------------------------------------------------------------------------------------
# the checks


def _weakest(metas: list[SourceMeta]) -> SourceMeta | None:
    return min(metas, key=lambda m: ACCESS_ORDER[m.access]) if metas else None


def _check_run(
    ev: RunEvidence,
    outcomes: dict[tuple[str, str], SnapshotOutcome],
    by_dir: dict[str, list[SnapshotOutcome]],
    assets: AssetChecker,
    pre: Preflight,
) -> None:
    """P1, P3, P4 and P5 for one run whose snapshots were verified."""
    result = ev.result
    if result is None:
        return
    file = _rel(ev.run.result_path, pre.wiki_root)
    add = pre.findings.append
    sources_dir = str(ev.run.sources_dir)
    if not result.accepted:
        add(Finding(Reason.NO_SPANS, file, "result.json accepts no artifact: an empty evidence set is not a pass"))
    # P4: every referenced snapshot's asset, once per run.
    reported: set[tuple[str, str]] = set()
    for held in by_dir.get(sources_dir, ()):
        meta = held.meta
        if meta is None:
            continue
        problem = _asset_problem(meta, assets)
        if problem:
            add(Finding(Reason.ASSET_HASH_MISMATCH, file, problem, source_id=meta.source_id))
    for artifact in result.accepted:
        metas: dict[str, SourceMeta] = {}
        for sid in artifact.source_ids:
            cited = outcomes.get((sources_dir, sid))
            if cited is not None and cited.meta is not None:
                metas[sid] = cited.meta
        for index, claim in enumerate(artifact.claims):
            _check_claim(pre, ev, artifact, index, outcomes[(sources_dir, claim.source_id)], file, reported)
        _check_derived(artifact, [metas[s] for s in artifact.source_ids if s in metas], file, add)
    _check_sources(result, outcomes, sources_dir, file, add)
    _check_log(ev, file, add)


def _check_claim(
    pre: Preflight,
    ev: RunEvidence,
    artifact: AcceptedArtifact,
    index: int,
    outcome: SnapshotOutcome,
    file: str,
    reported: set[tuple[str, str]],
) -> None:
    """P2/P3 for one accepted claim; a matching excerpt joins the verified index."""
    claim = artifact.claims[index]
    aid, sid, start, end = artifact.artifact_id, claim.source_id, claim.start, claim.end

    def add(reason: Reason, detail: str) -> None:
        pre.findings.append(Finding(reason, file, detail, aid, source_id=sid, start=start, end=end))

    if sid not in artifact.source_ids:
        add(Reason.SCHEMA_ERROR, f"claims[{index}] cites a source not in source_ids")
    if outcome.meta is None:
        ev.failed[(sid, start, end)] = outcome.reason or Reason.SNAPSHOT_HASH_MISMATCH
        if (sid, aid) not in reported:
            reported.add((sid, aid))
            add(outcome.reason or Reason.SNAPSHOT_HASH_MISMATCH, outcome.detail)
        return
    bad = outcome.bad_spans.get((start, end))
    if bad is not None:
        ev.failed[(sid, start, end)] = bad
        add(bad, f"claims[{index}] [{start}, {end}) on a text of {outcome.meta.chars}")
        return
    excerpt = outcome.excerpts[(start, end)]
    if claim.excerpt != excerpt:
        ev.failed[(sid, start, end)] = Reason.EXCERPT_MISMATCH
        add(Reason.EXCERPT_MISMATCH, f"claims[{index}].excerpt differs from the re-slice")
    else:
        pre.excerpts[(sid, start, end)] = excerpt
        ev.accepted.setdefault((sid, start, end), []).append((aid, index))
    if claim.access != outcome.meta.access:
        add(
            Reason.ACCESS_MISMATCH, f"claims[{index}].access {claim.access.value}, snapshot {outcome.meta.access.value}"
        )
    if artifact.evidence_id is not None:
        problem = paper_problem(artifact.evidence_id, outcome.meta.paper)
        if problem:
            add(Reason.NO_PAPER_ID, problem)


def _asset_problem(meta: SourceMeta, assets: AssetChecker) -> str | None:
    if meta.asset_path is None:
        return "user-supplied PDF snapshot has no asset" if meta.origin == "user-supplied-pdf" else None
    got = assets.digest(meta.asset_path)
    if got is None:
        return f"asset {meta.asset_path} is missing"
    if got != meta.asset_sha256:
        return f"asset {meta.asset_path} hashes to {got}, expected {meta.asset_sha256}"
    return None


def _check_derived(
    artifact: AcceptedArtifact, metas: list[SourceMeta], file: str, add: Callable[[Finding], None]
) -> None:
    """The artifact's url, access and paper are its weakest snapshot's."""
    if len(metas) != len(artifact.source_ids):
        return
    weakest = _weakest(metas)
    if weakest is None:
        return
    aid = artifact.artifact_id
    sid = weakest.source_id
    if artifact.url != weakest.url:
        add(Finding(Reason.URL_NOT_RETRIEVED, file, f"url {artifact.url!r} is not its snapshot's", aid, source_id=sid))
    if artifact.access != weakest.access:
        stated = artifact.access.value if artifact.access else None
        add(
            Finding(
                Reason.ACCESS_MISMATCH, file, f"access {stated}, snapshot {weakest.access.value}", aid, source_id=sid
            )
        )
    if artifact.paper != weakest.paper:
        add(Finding(Reason.NO_PAPER_ID, file, "paper differs from its snapshot's paper ids", aid, source_id=sid))


def _check_sources(
    result: Result,
    outcomes: dict[tuple[str, str], SnapshotOutcome],
    sources_dir: str,
    file: str,
    add: Callable[[Finding], None],
) -> None:
    """``sources[]`` digests agree with the snapshots as read now."""
    for entry in result.sources:
        outcome = outcomes.get((sources_dir, entry.source_id))
        if outcome is None or outcome.meta is None or entry.status != "ok":
            continue
        meta = outcome.meta
        for name, stated, got in (
            ("content_hash", entry.content_hash, meta.content_hash),
            ("record_hash", entry.record_hash, meta.record_hash),
            ("url", entry.url, meta.url),
        ):
            if stated != got:
                add(
                    Finding(
                        Reason.SNAPSHOT_HASH_MISMATCH,
                        file,
                        f"sources[].{name} {stated} differs from the snapshot's {got}",
                        source_id=entry.source_id,
                    )
                )


def _read_log_safely(path: Path) -> tuple[LogState, str | None]:
    """The log, or an empty state and why it cannot be read (never an exception)."""
    try:
        return read_log(path), None
    except PublisherError as exc:
        return LogState(), exc.one_line()


def _crlf_log(path: Path) -> bool:
    """Whether the log's lines end in CRLF: a checkout or an editor converted its line endings."""
    try:
        data = _fs.read_regular(path, follow_symlinks=False)
    except OSError:
        return False
    return b"\r\n" in data


def _check_log(ev: RunEvidence, file: str, add: Callable[[Finding], None]) -> None:
    """P5: chain intact and the head the result recorded still digests the same prefix.

    A log that cannot be read (a link, FIFO or folder in its place) and a log whose line endings
    were converted to CRLF each give one finding naming the cause and the fix, not one per line.
    """
    where = ev.rel + "/events.jsonl"
    if ev.log is None:
        ev.log, ev.log_error = _read_log_safely(ev.run.events_path)
    state = ev.log
    ev.events = state.events
    if ev.log_error is not None:
        add(Finding(Reason.SNAPSHOT_HASH_MISMATCH, where, ev.log_error, check="C-EVENT-LOG"))
        return
    if (state.torn or state.findings) and _crlf_log(ev.run.events_path):
        add(
            Finding(
                Reason.SNAPSHOT_HASH_MISMATCH,
                where,
                "the log's line endings were converted to CRLF (by git's autocrlf or an editor), so every line "
                "digests differently; restore the exact bytes: add '*.jsonl -text' to .gitattributes "
                "(publisher new writes it) and check the file out again, or strip the CR before each LF",
                check="C-LINE-ENDINGS",
            )
        )
        return
    if state.torn:
        add(Finding(Reason.SNAPSHOT_HASH_MISMATCH, where, "the last line is torn", line=len(state.digests) + 1))
    for item in state.findings:
        add(Finding(Reason.SNAPSHOT_HASH_MISMATCH, where, f"event chain broken: {item.problem}", line=item.line))
    result = ev.result
    if result is None:
        return
    want, count = result.log.head, result.log.events
    if count == 0:
        if want is not None:
            add(Finding(Reason.SNAPSHOT_HASH_MISMATCH, where, "result.json records a head for an empty log"))
        return
    got = state.head_at(count)
    if got is None:
        add(
            Finding(
                Reason.SNAPSHOT_HASH_MISMATCH,
                where,
                f"result.json read {count} log lines; the log now has {len(state.digests)}",
            )
        )
    elif got != want:
        add(
            Finding(Reason.SNAPSHOT_HASH_MISMATCH, where, f"line {count} digests to {got}, result.json recorded {want}")
        )


def _check_concept(ce: ConceptEvidence, pre: Preflight, run_for: Callable[[str], RunEvidence | None]) -> None:
    """P6 for one parsed concept."""
    doc = ce.doc
    if doc is None:
        return
    add = pre.findings.append
    if doc.front.concept != ce.slug:
        add(
            Finding(
                Reason.SCHEMA_ERROR, ce.rel, f"front matter names concept {doc.front.concept!r}, file is {ce.slug!r}"
            )
        )
    named: list[RunEvidence] = []
    for entry in doc.front.runs:
        ev = run_for(entry.path)
        if ev is None or ev.result is None:
            add(
                Finding(
                    Reason.SCHEMA_ERROR,
                    ce.rel,
                    f"names run {entry.run!r} at {entry.path}, which has no valid result.json",
                )
            )
            continue
        if ev.slug != entry.run:
            add(Finding(Reason.SCHEMA_ERROR, ce.rel, f"run at {entry.path} is {ev.slug!r}, not {entry.run!r}"))
        if entry.inputs_hash is not None and entry.inputs_hash != ev.result.inputs_hash:
            pre.notices.append(f"{ce.rel}: run {entry.run} was re-assembled since promotion; re-promote to refresh")
        named.append(ev)
    if not doc.footnotes:
        add(Finding(Reason.NO_SPANS, ce.rel, "no evidence footnote: an empty evidence set is not a pass"))
    for note in doc.footnotes:
        line = doc.file_line(note.first)
        if note.error is not None:
            add(Finding(Reason.SCHEMA_ERROR, ce.rel, note.error, label=note.label, line=line))
        for ref in note.refs:
            _check_ref(pre, ce, named, note.label, line, ref)


def _check_ref(
    pre: Preflight, ce: ConceptEvidence, named: list[RunEvidence], label: str, line: int, ref: SpanRef
) -> None:
    """P6 for one reference of a concept footnote."""

    def add(reason: Reason, detail: str) -> None:
        pre.findings.append(
            Finding(
                reason, ce.rel, detail, label=label, source_id=ref.source_id, start=ref.start, end=ref.end, line=line
            )
        )

    key = (ref.source_id, ref.start, ref.end)
    if not any(key in ev.accepted for ev in named):
        # A claim its run accepted but whose evidence failed here carries that failure's code,
        # so a tampered snapshot is named as such on every concept that quotes it.
        failed = next((ev.failed[key] for ev in named if key in ev.failed), None)
        if failed is not None:
            add(failed, "quotes a claim whose evidence failed verification in its run")
        else:
            add(Reason.SOURCE_OUTSIDE_ACCEPTED, "not an accepted claim of any run this concept names")
        return
    if ref.quoted is not None and ref.quoted != pre.excerpts[key]:
        add(Reason.EXCERPT_MISMATCH, "excerpt as promoted differs from the re-slice")


def check_concept_text(pre: Preflight, text: str, rel: str, slug: str) -> list[Finding]:
    """P6 for a concept not yet on disk (promotion checks what it is about to write)."""
    before = len(pre.findings)
    ce = _parse_concept(text, rel, slug, pre.wiki_root, pre.findings)
    _check_concept(ce, pre, lambda path: pre.run_by_rel(path))
    found = pre.findings[before:]
    del pre.findings[before:]
    return found


def _parse_concept(text: str, rel: str, slug: str, wiki_root: Path, out: list[Finding]) -> ConceptEvidence:
    path = wiki_root / rel
    try:
        doc: ConceptDoc | None = parse_concept(text, where=rel)
    except PublisherError as exc:
        out.append(Finding(exc.reason or Reason.SCHEMA_ERROR, rel, exc.message.removeprefix(f"{rel}: ")))
        doc = None
    return ConceptEvidence(path, rel, slug, doc)


def _read_concept(path: Path, wiki_root: Path, out: list[Finding], folder_rel: str | None = None) -> ConceptEvidence:
    rel = (folder_rel if folder_rel is not None else _rel(path.parent, wiki_root)) + "/" + path.name
    try:
        text = _fs.read_regular(path, follow_symlinks=False).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        out.append(Finding(Reason.SCHEMA_ERROR, rel, f"cannot be read as UTF-8 ({exc})"))
        return ConceptEvidence(path, rel, path.stem, None)
    return _parse_concept(text, rel, path.stem, wiki_root, out)


_CONCEPTS_PER_TASK = 16
"""Concept files parsed per task when the concepts are parsed on the workers."""


def read_concepts(paths: list[str], wiki_root: str, folders: list[str]) -> list[tuple[ConceptEvidence, list[Finding]]]:
    """Read and parse concept files (a worker's unit of work); each with its own findings.

    ``folders`` holds each file's folder relative to the wiki root.
    """
    out = []
    for path, folder in zip(paths, folders, strict=True):
        findings: list[Finding] = []
        out.append((_read_concept(Path(path), Path(wiki_root), findings, folder), findings))
    return out


def _inside(root: Path, rel: str) -> Path | None:
    candidate = (root / rel).resolve()
    try:
        candidate.relative_to(root.resolve())
    except ValueError:
        return None
    return candidate


def _verify_runs(
    evidence: Sequence[RunEvidence],
    pre: Preflight,
    executor: Executor | None,
    workers: int | None,
    progress: ProgressFn | None,
    meanwhile: Callable[[], object] | None,
) -> dict[tuple[str, str], SnapshotOutcome]:
    """P2 for these runs: one request per snapshot file, every cited span at once."""
    wanted: dict[tuple[str, str], set[tuple[int, int]]] = {}
    for ev in evidence:
        if ev.result is None:
            continue
        folder = str(ev.run.sources_dir)
        for artifact in ev.result.accepted:
            for sid in artifact.source_ids:
                wanted.setdefault((folder, sid), set())
            for claim in artifact.claims:
                wanted.setdefault((folder, claim.source_id), set()).add((claim.start, claim.end))
    requests = [SnapshotRequest(d, s, tuple(sorted(spans))) for (d, s), spans in sorted(wanted.items())]
    verified = verify_snapshots(
        requests,
        executor,
        workers=workers,
        progress=progress,
        keep=pre.snapshot_checks,
        meanwhile=meanwhile,
        assets_root=pre.wiki_root,
    )
    return {(o.sources_dir, o.source_id): o for o in verified}


def run_preflight(
    wiki_root: Path,
    *,
    layouts: Iterable[str] = RUN_LAYOUTS,
    runs: Sequence[Path] | None = None,
    concepts: Sequence[Path] | None = None,
    executor: Executor | None = None,
    workers: int | None = None,
    progress: ProgressFn | None = None,
) -> Preflight:
    """Verify the wiki's evidence; ``runs``/``concepts`` narrow it (default: discover them all).

    Runs a concept names are loaded too, even outside the usual layouts. Never raises for bad
    evidence: every problem is a :class:`Finding`. Snapshots are verified by
    :func:`publisher.batch.verify_many` (every core by default; ``executor``, ``workers`` and
    ``progress`` go to it).
    """
    wiki_root = Path(wiki_root)
    pre = Preflight(wiki_root)
    found_runs, found_concepts = discover(wiki_root, layouts)
    run_paths = list(runs) if runs is not None else found_runs
    concept_paths = list(concepts if concepts is not None else found_concepts)
    concept_findings: list[Finding] = []
    run_findings: list[Finding] = []
    todo: deque[Callable[[], object]] = deque()

    folders: dict[Path, str] = {}  # each concepts folder resolved once, not once per concept

    def folder_of(path: Path) -> str:
        folder = folders.get(path.parent)
        if folder is None:
            folder = folders[path.parent] = _rel(path.parent, wiki_root)
        return folder

    def parse_concept_at(path: Path) -> None:
        pre.concepts.append(_read_concept(path, wiki_root, concept_findings, folder_of(path)))

    def read_log_of(ev: RunEvidence) -> None:
        ev.log, ev.log_error = _read_log_safely(ev.run.events_path)

    def next_piece() -> None:
        if todo:
            todo.popleft()()

    # Many concepts are parsed on the workers, in tasks queued before the snapshot checks, on the
    # same pool, while this process reads the runs; else this process parses them while the
    # workers check the snapshots (one concept per check that comes back), as it reads the event
    # logs. The runs found on disk are verified first; a run that only a concept names (outside
    # the usual layouts) is loaded and verified once the concepts are known.
    many_concepts = len(concept_paths) >= 2 * _CONCEPTS_PER_TASK
    own_pool = None
    if executor is None and many_concepts:
        count = workers if workers is not None else default_workers()
        if count > 1:
            executor = own_pool = worker_pool(count)
    try:
        parsing: list[Future[list[tuple[ConceptEvidence, list[Finding]]]]] = []
        if executor is not None and many_concepts:
            for at in range(0, len(concept_paths), _CONCEPTS_PER_TASK):
                chunk = concept_paths[at : at + _CONCEPTS_PER_TASK]
                parsing.append(
                    executor.submit(
                        read_concepts,
                        [os.fspath(p) for p in chunk],
                        os.fspath(wiki_root),
                        [folder_of(p) for p in chunk],
                    )
                )
        else:
            todo.extend(partial(parse_concept_at, path) for path in concept_paths)
        for path in run_paths:
            pre.runs.append(_load_run(path, wiki_root, run_findings))
        todo.extend(partial(read_log_of, ev) for ev in pre.runs)
        outcomes = _verify_runs(pre.runs, pre, executor, workers, progress, next_piece)
        while todo:
            next_piece()
        for future in parsing:
            for ce, found in future.result():
                pre.concepts.append(ce)
                concept_findings.extend(found)
    finally:
        if own_pool is not None:
            own_pool.shutdown(wait=True, cancel_futures=True)
            executor = None
    resolved: dict[str, Path | None] = {}  # each run path a concept names, resolved once

    def inside(rel: str) -> Path | None:
        if rel not in resolved:
            resolved[rel] = _inside(wiki_root, rel)
        return resolved[rel]

    known = {p.resolve() for p in run_paths}
    named: list[RunEvidence] = []
    for ce in pre.concepts:
        for entry in ce.doc.front.runs if ce.doc else ():
            target = inside(entry.path)
            if target is not None and target not in known and Run(target).result_path.is_file():
                known.add(target)
                named.append(_load_run(target, wiki_root, run_findings))
    if named:
        pre.runs.extend(named)
        outcomes.update(_verify_runs(named, pre, executor, workers, progress, None))
    pre.findings.extend(concept_findings)
    pre.findings.extend(run_findings)

    slugs: dict[str, str] = {}
    for ev in pre.runs:
        if ev.slug in slugs:
            pre.findings.append(
                Finding(Reason.SCHEMA_ERROR, ev.rel, f"run slug {ev.slug!r} is also used by {slugs[ev.slug]}")
            )
        slugs.setdefault(ev.slug, ev.rel)

    by_dir: dict[str, list[SnapshotOutcome]] = {}
    for outcome in outcomes.values():
        by_dir.setdefault(outcome.sources_dir, []).append(outcome)
    assets = AssetChecker(wiki_root)
    for check in pre.snapshot_checks:
        if check.ok and check.asset is not None:
            assets.remember(check.asset.path, check.asset_digest)
    for ev in pre.runs:
        _check_run(ev, outcomes, by_dir, assets, pre)
        if ev.result is None:
            continue
        for outcome in by_dir.get(str(ev.run.sources_dir), ()):
            if outcome.meta is None:
                continue
            sid = outcome.source_id
            info = pre.sources.setdefault(sid, SourceInfo(outcome.meta, ev.run.sources_dir))
            if ev.slug not in info.holders:
                info.holders.append(ev.slug)
        for sid, start, end in ev.accepted:
            pre.sources[sid].spans.add((start, end))

    by_path: dict[Path, RunEvidence] = {}
    for ev in pre.runs:
        by_path.setdefault(ev.run.path.resolve(), ev)

    def run_for(rel: str) -> RunEvidence | None:
        target = inside(rel)
        return by_path.get(target) if target is not None else None

    for ce in pre.concepts:
        _check_concept(ce, pre, run_for)

    if not pre.runs and not pre.concepts:
        pre.notices.append("no run results and no concepts: nothing to verify")
    return pre
