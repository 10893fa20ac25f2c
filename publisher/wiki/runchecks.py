"""The runs of a wiki check: each run read, verified and checked, on the workers or here.

:func:`check_runs` is the run half of :func:`publisher.wiki.check.check_wiki`. On a process pool
every run's own work (its stored result, records, re-assembly and the comparison with the stored
result) runs on a worker (:func:`check_whole_run`); a large run's snapshots are spread over the
workers first. Without a pool the runs are pipelined in this process, one run loaded ahead of the
one checked. Either way the runs are recorded in the order given, so the findings come in the same
order, and each checked run is indexed in the :class:`~publisher.wiki.evidence.WikiCheck`: its
refusals, its result now, the sources and excerpts it accepts.
"""

from __future__ import annotations

import os
import sys
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass, fields, replace
from operator import attrgetter
from pathlib import Path
from typing import Any, cast

from ..gate.checks.assembler import stored_requests
from ..gate.checks.publication import refusals as publication_refusals
from ..gate.checks.runcheck import RunCheck, compact_json
from ..gate.inputs import RunInputs, load_inputs
from ..gate.pipeline import Loaded, Prepared, check_run, prepare, prepare_stored
from ..kernel.errors import PublisherError
from ..kernel.findings import Finding, NoteCode
from ..kernel.locate import forget_normal_forms
from ..kernel.reasons import Reason
from ..kernel.trust import KeyRing
from ..parallel import (
    Batch,
    Batches,
    CheckedSnapshots,
    ProgressFn,
    SnapshotCheck,
    folder_bytes,
    folder_size,
    trim_heap,
)
from ..runs import Run
from .discover import relative
from .evidence import RunEvidence, SourceInfo, WikiCheck, pack_pair, unpack_part
from .spantables import AcceptedSpans, ExcerptTable, SpanKey

__all__ = ["check_runs", "check_whole_run", "index_run", "release_records", "run_bytes", "RunIndex", "WholeRun"]


class _Begun:
    """A run between its stored result's reading and its check: reader, stored result, batches."""

    def __init__(self, ev: RunEvidence, reader: CheckedSnapshots, prepared: Prepared, batch: Batch) -> None:
        self.ev = ev
        self.reader = reader
        self.prepared = prepared
        self.batches = [batch]


def _begin(path: Path, wiki: WikiCheck, batches: Batches, real_root: Path) -> _Begun:
    """Read one run's stored result and hand the snapshots and claims it names to the workers.

    Nothing but the result is read, so the workers start on the run's snapshots at once; the
    records (:func:`_load`) add what the result does not name.
    """
    run = Run(path)
    ev = RunEvidence(run, relative(path, wiki.wiki_root, real_root, wiki.real_path), path.name, {})
    reader = CheckedSnapshots(run.sources_dir, assets_root=wiki.wiki_root)
    prepared = prepare_stored(run, reader)
    return _Begun(ev, reader, prepared, batches.submit(reader.pending()))


def _unreadable(exc: PublisherError, rel: str, wiki_root: Path) -> Finding:
    """The finding of a run whose inputs cannot be read (a malformed config, an unreadable report)."""
    where = exc.context.get("path")
    file = relative(Path(where), wiki_root) if where else f"{rel}/config.json"
    return Finding(exc.reason or Reason.SCHEMA_ERROR, file, f"{exc.message}; the run cannot be assembled", run=rel)


def _load(item: _Begun, wiki: WikiCheck, keys: KeyRing, batches: Batches) -> RunInputs | Finding:
    """Read a begun run's inputs and hand over the snapshots and spans they add; a run that cannot
    be read is a finding (recorded in its turn, after the runs before it)."""
    ev = item.ev
    try:
        inputs = load_inputs(ev.run, wiki_root=wiki.wiki_root, trusted_keys=keys)
    except PublisherError as exc:
        if exc.reason is None:
            raise  # the machine failed (a file that cannot be read): an error, not a finding
        for batch in item.batches:
            batches.drop(batch)
        return _unreadable(exc, ev.rel, wiki.wiki_root)
    ev.slug = inputs.slug
    ev.config = inputs.config.model_dump(mode="json")
    prepare(inputs, item.reader, item.prepared)
    item.batches.append(batches.submit(item.reader.pending()))
    return inputs


def release_records(rc: RunCheck) -> None:
    """Make a checked run's check light to keep: drop its agent records (the assembly read them,
    and nothing after it does) and its snapshot reader's verified checks (their spans are the
    wiki's excerpts; :meth:`~publisher.parallel.CheckedSnapshots.failures`), and hold its results
    as compact JSON, or as the digest of the stored file when that file is the assembly
    (:meth:`RunCheck.pack`, :meth:`RunCheck.settle`). A wiki check holds every run's check until
    the site is built, or ships it from a worker."""
    rc.inputs.records = []
    rc.assembly = replace(rc.assembly, reader=rc.assembly.reader.failures())
    rc.pack(settle=True)


def _finish(loaded: _Begun, inputs: RunInputs, wiki: WikiCheck) -> None:
    """Check one loaded run and index what it accepts now."""
    ev = loaded.ev
    rc = check_run(ev.run, label=ev.rel, loaded=Loaded(inputs, loaded.reader, loaded.prepared, drop_records=True))
    index = index_run(rc)
    release_records(rc)
    ev.check = rc
    ev.events = list(rc.assembly.log.events)
    _record(ev, index, loaded.reader.get, wiki)


@dataclass(frozen=True)
class RunIndex:
    """What a wiki check records of one checked run, taken where the run was checked (on a worker,
    from the result in hand, so that the result itself never has to travel or be read again)."""

    refusals: list[Finding]
    """Why the run's evidence may not be published now (empty if it may)."""
    inputs_hash: str
    unresolved: int
    verdict: str
    """The gate's verdict now (``pass``, ``warn`` or ``fail``)."""
    accepted_count: int
    """How many artifacts the result now accepts."""
    source_ids: list[str]
    """The sources the accepted artifacts name, in the order first named."""
    accepted: AcceptedSpans
    """Each accepted claim's span and the claims citing it."""
    excerpts: ExcerptTable
    """The excerpt of each accepted span."""
    warnings: list[Finding]
    """Missing seals or chain links on a wiki configured unsigned (a note code in ``field``): shown,
    never a refusal."""
    accepted_json: bytes | None = None
    """The result's accepted artifacts now, as compact JSON (None when JSON cannot hold them): what
    the promoted blocks are rendered from (:meth:`RunEvidence.claims`), without the run's check
    unpacked, its stored result read again or the whole result validated in the parent."""


_NOTES = frozenset(code.value for code in NoteCode)
"""The note codes a warning of an unsigned wiki carries in its ``field`` (:attr:`RunIndex.warnings`)."""


def index_run(rc: RunCheck) -> RunIndex:
    """Index a checked run before it is packed (:func:`release_records`): its refusals, and what
    its result now accepts, already in the compact tables the wiki check holds (built where the
    run is checked: a worker ships them as they are, and the parent adopts them)."""
    refusals = publication_refusals(rc)
    result = rc.result
    named: dict[str, None] = {}
    cited: list[tuple[SpanKey, str, int]] = []
    quoted: list[tuple[SpanKey, str]] = []
    for artifact in result["accepted"]:
        artifact_id = artifact["artifact_id"]
        named.update(dict.fromkeys(artifact["source_ids"]))
        for position, claim in enumerate(artifact["claims"]):
            key = (claim["source_id"], claim["start"], claim["end"])
            cited.append((key, artifact_id, position))
            quoted.append((key, claim["excerpt"]))
    accepted, excerpts = AcceptedSpans.of(cited), ExcerptTable.of(quoted)
    counts = result["counts"]
    verdict, accepted_count = str(result["gate"]["verdict"]), int(counts["accepted"])
    inputs_hash = str(result["inputs_hash"])
    unresolved = counts["unresolved"]
    warnings = [f for f in rc.findings if f.severity == "warn" and f.field in _NOTES]
    accepted_json = compact_json(result["accepted"])
    return RunIndex(
        refusals,
        inputs_hash,
        unresolved,
        verdict,
        accepted_count,
        list(named),
        accepted,
        excerpts,
        warnings,
        accepted_json,
    )


def _record(ev: RunEvidence, index: RunIndex, source: Callable[[str], SnapshotCheck], wiki: WikiCheck) -> None:
    """Record one checked run in ``wiki`` (its check and events held already): its refusals, its
    result now, and what it accepts; ``source`` gives the verified check of a source it accepts.

    The result's model is made only when first asked for (:attr:`RunEvidence.result`); the wiki
    check itself reads only the run's index.
    """
    ev.inputs_hash = index.inputs_hash
    ev.verdict, ev.accepted_count = index.verdict, index.accepted_count
    ev.hold_accepted(index.accepted_json)
    wiki.findings.extend(index.refusals)
    wiki.notices.extend(f"{ev.rel}: warning {f.one_line()}" for f in index.warnings)
    if index.unresolved and not index.refusals:
        wiki.notices.append(f"{ev.rel}: {index.unresolved} unresolved artifact(s) not published (gate off)")
    # Held until the site is built, for every source and span of a large wiki: the index's compact
    # tables as they came (:mod:`.spantables`), one sources folder per run, each source id once.
    ev.accepted = index.accepted
    wiki.excerpts.absorb(index.excerpts)
    folder: Path | None = None
    for sid in index.source_ids:
        sid = sys.intern(sid)
        info = wiki.sources.get(sid)
        if info is None:
            folder = folder if folder is not None else ev.run.sources_dir
            info = wiki.sources[sid] = SourceInfo(source(sid), folder, spans=wiki.excerpts.spans_of(sid))
        if ev.slug not in info.holders:
            info.holders.append(ev.slug)


@dataclass(frozen=True)
class WholeRun:
    """A run checked whole in a worker process (:func:`check_whole_run`): what the wiki check
    records of it, or the finding of a run whose inputs cannot be read."""

    slug: str | None
    config: dict[str, Any] | None
    packed: bytes | None
    """The run's check, its records released (:func:`release_records`), and its event log as
    assembled, packed here together (:func:`~publisher.wiki.evidence.pack_pair`): the parent holds
    these bytes (:meth:`RunEvidence.hold_packed`) and unpacks a copy of one or the other only when
    asked: the check when a page or a refusal's cause asks for it, so it never rebuilds thousands
    of checks' objects it does not read; the events once per wiki, for the pages and the claims'
    counts."""
    sources: dict[str, SnapshotCheck] | None
    """The verified check of each source the run's accepted artifacts name, without its spans
    (the index carries the excerpts the wiki records)."""
    index: RunIndex | None
    unreadable: Finding | None = None

    def check(self) -> RunCheck | None:
        """The run's check, unpacked (a fresh copy on each call)."""
        return None if self.packed is None else cast(RunCheck, unpack_part(self.packed, 0))


def check_whole_run(
    path: str,
    wiki_root: str,
    keys: KeyRing,
    rel: str,
    checks: Sequence[SnapshotCheck] = (),
    snapshot_bytes: int | None = None,
) -> WholeRun:
    """Read, verify and check one run: a task of the wiki check's pool, so that the run's records,
    its re-assembly and the comparison with its stored result run on a worker beside the other
    runs' hashing, not in the parent after it.

    A small run's snapshots are verified here too. A large run's were spread over the pool first
    (those its stored result names, :func:`stored_requests`): ``checks`` are their outcomes, taken
    when the stored result is valid (then they are exactly what it names); anything more the
    records ask for is verified here. The steps are those of the pipelined path (:func:`_begin`,
    :func:`_load`, :func:`_finish`), in the same order, so the findings are the same. A machine
    failure raises (it travels back).

    A stored result not read yet is not read for the outcomes' sake: they are taken at once, on
    the word of the check to come, which proves the file equal to the assembly (valid, never
    parsed) in the usual case; should the result prove not valid, the run is checked again
    without them, from the start.

    ``snapshot_bytes``: the bytes of the run's snapshot files, as the caller measured them (None:
    not known), which decides how soon the heap is trimmed (:func:`_trim_after`).
    """
    run, root = Run(Path(path)), Path(wiki_root)
    checked = _check_whole(run, root, keys, rel, checks, provisional=True)
    if checked is None:  # the outcomes were taken on the word of a result that is not valid
        checked = _check_whole(run, root, keys, rel, checks, provisional=False)
    if isinstance(checked, Finding):
        return WholeRun(None, None, None, None, None, checked)
    if checked is None:  # unreachable: outcomes taken after the result was read are kept
        raise RuntimeError(f"{rel}: checked again without the handed-over outcomes, and refused again")
    inputs, reader, rc = checked
    # The check travels back pickled: what the parent does not read stays here (it reads the
    # index, and the result again from the stored file if a page asks for it).
    index = index_run(rc)
    release_records(rc)
    sources = {sid: _without_spans(reader.get(sid)) for sid in index.source_ids}
    packed = pack_pair(rc, list(rc.assembly.log.events))
    done = WholeRun(inputs.slug, inputs.config.model_dump(mode="json"), packed, sources, index)
    del rc, inputs, reader, checked
    forget_normal_forms()  # a mismatched quote's or the prose check's normal forms go with the run
    _trim_after(snapshot_bytes)  # what a large run freed leaves before the next run peaks on top of it
    return done


_CHECK_FIELDS = tuple(item.name for item in fields(SnapshotCheck))
_CHECK_VALUES = attrgetter(*_CHECK_FIELDS)
_SPANS_AT = _CHECK_FIELDS.index("spans")
_MAKE_CHECK = cast(Callable[..., SnapshotCheck], SnapshotCheck)


def _without_spans(check: SnapshotCheck) -> SnapshotCheck:
    """``replace(check, spans=())``, its fields read in one step (``replace`` walks them in Python
    one by one, about twice the time for a check's two dozen fields)."""
    if not check.spans:
        return check
    values = _CHECK_VALUES(check)
    return _MAKE_CHECK(*values[:_SPANS_AT], (), *values[_SPANS_AT + 1 :])


_TRIM_SMALL_RUNS = 16
"""Small runs a worker checks between two looks at its heap's free memory."""
_SMALL_RUN_BYTES = 1024 * 1024
"""A run whose snapshot files hold at most this many bytes is small: what it frees is reused by
the next run, far below what :func:`~publisher.parallel.trim_heap` hands back."""
_small_runs = 0


def _trim_after(snapshot_bytes: int | None) -> None:
    """Trim the heap (:func:`~publisher.parallel.trim_heap`) after a large run, or a run of unknown
    size, at once; after small runs only every :data:`_TRIM_SMALL_RUNS`-th. Asking glibc how
    much is free walks its free lists (about 0.3 ms in a worker's fragmented heap, a tenth of a
    small run's check), and a small run cannot free what trimming is for."""
    global _small_runs
    if snapshot_bytes is not None and snapshot_bytes <= _SMALL_RUN_BYTES:
        _small_runs += 1
        if _small_runs < _TRIM_SMALL_RUNS:
            return
    _small_runs = 0
    trim_heap()


def _check_whole(
    run: Run, root: Path, keys: KeyRing, rel: str, checks: Sequence[SnapshotCheck], provisional: bool
) -> tuple[RunInputs, CheckedSnapshots, RunCheck] | Finding | None:
    """:func:`check_whole_run` up to the run's check: its inputs, reader and check, the finding of
    a run that cannot be read, or None when ``checks`` were taken ``provisional``-ly (before its
    stored result was read) and that result proved not valid: they may not be kept.

    The stored result's model dies here, before the check is indexed and packed."""
    reader = CheckedSnapshots(run.sources_dir, assets_root=root)
    prepared = prepare_stored(run, reader)
    taken = bool(checks) and ((provisional and not prepared.settled) or prepared.model is not None)
    if taken:
        reader.seed(checks)
    try:
        inputs = load_inputs(run, wiki_root=root, trusted_keys=keys)
    except PublisherError as exc:
        if exc.reason is None:
            raise
        return _unreadable(exc, rel, root)
    prepare(inputs, reader, prepared)
    reader.load()
    rc = check_run(run, label=rel, loaded=Loaded(inputs, reader, prepared, drop_records=True))
    if taken and prepared.model is None:
        return None
    return inputs, reader, rc


_WHOLE_RUN_BYTES = 8 * 1024 * 1024
"""A run whose snapshot files hold at most this many bytes (one chunk of the pool's work) is
checked whole on a worker; a larger run's snapshots are spread over the workers and the run is
checked here (:func:`_check_runs`)."""


@dataclass
class _OnPool:
    """A run handed to the pool: its snapshots (a large run's, while they are checked), then its
    check on a worker (:func:`check_whole_run`)."""

    ev: RunEvidence
    count: int
    """Snapshots the progress counts when the check comes back (0 when they were counted as checked)."""
    size: int | None = None
    """The bytes of a small run's snapshot files (None for a large run)."""
    hint: Future[list[tuple[str, list[tuple[int, int]]]]] | None = None
    """A large run's stored result being read on a worker for what it names (:func:`stored_requests`)."""
    batches: list[Batch] | None = None
    """A large run's snapshots, with the workers until its check is sent."""
    future: Future[WholeRun] | None = None


def check_runs(
    paths: Sequence[Path],
    wiki: WikiCheck,
    executor: Executor | None,
    progress: ProgressFn | None,
    meanwhile: Callable[[], object] | None,
    handed_over: Callable[[], object] | None = None,
    workers: int = 2,
) -> None:
    """Verify and check the runs: on ``executor``'s workers when there is one, else here.

    Either way the runs are recorded in the order given, so the findings come in the same order.
    ``meanwhile`` is called as snapshot checks come back (this process parses concepts then);
    ``handed_over`` once every run is with the workers (work queued behind them runs while the last
    runs are checked); ``workers``: how many the executor runs (how far ahead runs are handed out).
    """
    if executor is None:
        _check_runs_here(paths, wiki, progress, meanwhile)
    else:
        ahead = max(_RUNS_AHEAD, 2 * workers)
        _check_runs_on_pool(paths, wiki, executor, progress, meanwhile, handed_over, ahead)


_RUNS_AHEAD = 8
"""Runs with the workers, at least, ahead of the oldest one not yet recorded: enough to keep every
worker busy, few enough that checks done early do not pile up in memory waiting for their turn."""


def _check_runs_on_pool(
    paths: Sequence[Path],
    wiki: WikiCheck,
    executor: Executor,
    progress: ProgressFn | None,
    meanwhile: Callable[[], object] | None,
    handed_over: Callable[[], object] | None,
    ahead: int,
) -> None:
    """Every run's check on a worker (:func:`check_whole_run`), this process only handing work over.

    A run whose snapshot files fit one task goes whole to a worker. A larger run's snapshots are
    spread over the workers first: a worker reads its stored result for what it names
    (:func:`stored_requests`; this process never holds a large result whole), and those snapshots
    go out; when they are checked, the run's check goes to a worker with their outcomes, while the
    next run's snapshots are checked. So the records, the re-assembly and the comparison of every
    run run beside the hashing, and nothing waits on this process. Runs are handed out at most
    ``ahead`` before the oldest one not yet recorded.
    """
    keys = wiki.policy.trusted_keys  # resolved once per wiki, before any run is read
    batches = Batches(executor, assets_root=wiki.wiki_root, progress=progress)
    root = os.fspath(wiki.wiki_root)
    real_root = wiki.wiki_root.resolve()
    queue: deque[_OnPool] = deque()
    hints: deque[_OnPool] = deque()  # large runs whose stored result a worker is reading
    large: deque[_OnPool] = deque()  # large runs whose snapshots are with the workers

    def send(entry: _OnPool, checks: Sequence[SnapshotCheck] = ()) -> None:
        path, rel = os.fspath(entry.ev.run.path), entry.ev.rel
        entry.future = batches.call(check_whole_run, path, root, keys, rel, checks, entry.size, count=entry.count)

    def send_oldest_large() -> None:
        entry = large.popleft()
        checks: list[SnapshotCheck] = []
        for batch in entry.batches or ():
            for check in batches.collect(batch):
                checks.append(check)
                if meanwhile is not None:
                    meanwhile()
        entry.batches = None
        send(entry, checks)

    def hand_out_oldest_hint() -> None:
        entry = hints.popleft()
        if entry.hint is None:  # unreachable: every entry of ``hints`` has one
            raise RuntimeError(f"{entry.ev.rel}: no reading of its stored result")
        named, entry.hint = entry.hint.result(), None
        folder = entry.ev.run.sources_dir
        entry.batches = [batches.submit([(folder, sid, spans) for sid, spans in named])]
        large.append(entry)
        while len(large) > 1:  # one large run's snapshots ahead of the one sent
            send_oldest_large()

    def record_oldest() -> None:
        entry = queue.popleft()
        if entry.future is None:  # a large run not sent yet: the oldest of its stage
            if hints and hints[0] is entry:
                hand_out_oldest_hint()
            if large and large[0] is entry:
                send_oldest_large()
        if entry.future is None:  # unreachable: every entry is sent before it is recorded
            raise RuntimeError(f"{entry.ev.rel}: never sent")
        _adopt(entry.ev, batches.outcome(entry.future, entry.count), wiki)
        if meanwhile is not None:
            meanwhile()

    try:
        for path in paths:
            run = Run(path)
            size, count = folder_size(run.sources_dir)
            ev = RunEvidence(run, relative(path, wiki.wiki_root, real_root, wiki.real_path), path.name, {})
            wiki.runs.append(ev)
            if size <= _WHOLE_RUN_BYTES:
                entry = _OnPool(ev, count, size)
                send(entry)
            else:
                # What the stored result names, read on a worker without validating it (the run's
                # check validates it), goes out as soon as it comes back.
                entry = _OnPool(ev, 0, hint=executor.submit(stored_requests, run))
                hints.append(entry)
                while len(hints) > 1:
                    hand_out_oldest_hint()
            queue.append(entry)
            while len(queue) > ahead:  # checks done early wait in memory: record the oldest
                record_oldest()
        while hints:
            hand_out_oldest_hint()
        while large:
            send_oldest_large()
        if handed_over is not None:
            handed_over()
        while queue:
            record_oldest()
    finally:
        batches.cancel()
        for entry in hints:
            if entry.hint is not None:
                entry.hint.cancel()


def _check_runs_here(
    paths: Sequence[Path],
    wiki: WikiCheck,
    progress: ProgressFn | None,
    meanwhile: Callable[[], object] | None,
) -> None:
    """Load, verify and check the runs in this process, one run loaded ahead of the one checked:
    each run's stored result is read first, then its records, then it is assembled again and
    compared (:func:`_begin`, :func:`_load`, :func:`_finish`)."""
    keys = wiki.policy.trusted_keys  # resolved once per wiki, before any run is read
    batches = Batches(None, assets_root=wiki.wiki_root, progress=progress)
    real_root = wiki.wiki_root.resolve()
    ahead: deque[tuple[_Begun, RunInputs] | Finding] = deque()
    loaded = 0  # runs in ``ahead`` with their inputs read: one is kept ahead of the one checked

    def check_next() -> None:
        nonlocal loaded
        item = ahead.popleft()
        if isinstance(item, Finding):  # a run whose inputs could not be read, in its turn
            wiki.findings.append(item)
            return
        loaded -= 1
        begun, inputs = item
        for batch in begun.batches:
            for check in batches.collect(batch):
                begun.reader.keep(check)
                if meanwhile is not None:
                    meanwhile()
        _finish(begun, inputs, wiki)
        forget_normal_forms()  # as a worker does after each run

    for path in paths:
        item = _begin(path, wiki, batches, real_root)
        wiki.runs.append(item.ev)
        inputs = _load(item, wiki, keys, batches)
        if isinstance(inputs, Finding):
            ahead.append(inputs)
        else:
            ahead.append((item, inputs))
            loaded += 1
        while loaded > 1:
            check_next()
    while ahead:
        check_next()


def _adopt(ev: RunEvidence, done: WholeRun, wiki: WikiCheck) -> None:
    """Record a run a worker checked whole, as :func:`_load` and :func:`_finish` would have."""
    if done.unreadable is not None:
        wiki.findings.append(done.unreadable)
        return
    packed, sources, index = done.packed, done.sources, done.index
    if packed is None or sources is None or done.slug is None or index is None:
        raise RuntimeError(f"{ev.rel}: a worker returned an incomplete check")  # unreachable by construction
    ev.slug = done.slug
    ev.config = done.config or {}
    ev.hold_packed(packed)
    _record(ev, index, sources.__getitem__, wiki)


def run_bytes(paths: Iterable[Path]) -> int:
    """The bytes of the snapshot files of ``paths``' runs (whether a pool pays for them)."""
    return sum(folder_bytes(Run(path).sources_dir) for path in paths)
