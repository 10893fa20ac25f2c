"""Parallel, streaming snapshot verification: every snapshot read and verified once, on every core.

Commands that check many snapshots (the site preflight, ``assemble``, ``verify``, ``promote
--check``) hand :func:`verify_many` a list of requests, each naming a snapshot and the spans to
slice from it. Requests are grouped by snapshot first, so a snapshot cited a thousand times is
read once. Worker processes read and verify the files through the store (every digest
recomputed) and send back a small :class:`SnapshotCheck`: the outcome, the excerpts of the
requested spans and the snapshot's metadata, never its text. Memory therefore stays bounded by
the largest snapshot in flight per worker, not by the corpus.

Results stream back in completion order by default (``ordered=True`` gives input order, i.e. the
order in which each snapshot was first requested). Work is submitted in chunks with a bounded
number in flight. Any :class:`concurrent.futures.Executor` can run it, including a Dask
``distributed.Client(...).get_executor()``; with one worker or a small input everything runs
in-process, with no pool to start.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..kernel.errors import IntegrityError, PublisherError
from ..kernel.eventlog import hash_asset
from ..kernel.models import Asset, Paper
from ..kernel.reasons import Reason
from ..kernel.spans import check_range, locator
from ..kernel.store import read_snapshot

__all__ = [
    "SpanCheck",
    "SnapshotCheck",
    "Request",
    "verify_many",
    "default_workers",
    "terminal_progress",
    "CheckedSnapshots",
    "IN_PROCESS_BYTES",
    "helper_pool",
    "worker_pool",
]

Request = tuple[Path | str, str, Sequence[tuple[int, int]]]
"""``(sources_dir or snapshot file, source_id, [(start, end), ...])``."""

ProgressFn = Callable[[int, int], None]
"""Called as ``progress(done, total)`` after each snapshot is checked."""

IN_PROCESS_BYTES = 16 * 1024 * 1024
"""Below this many bytes of snapshot files, checking in-process beats starting a pool.

A forked pool and its traffic cost about 40 ms (the 244 articles of the real corpus, 8 MB, took
46 ms in-process and 86 ms on two forked workers). When the pool has to come from a forkserver
instead (other threads are alive, see :func:`_process_pool`), which takes about 0.6 s, the limit
is :data:`SLOW_START_FACTOR` times larger."""

SLOW_START_FACTOR = 8

_CHUNK_BYTES = 8 * 1024 * 1024
_CHUNK_MAX = 64
_IN_FLIGHT_PER_WORKER = 3


@dataclass(frozen=True, slots=True)
class SpanCheck:
    """One requested span: its excerpt when in range, else the reason it is unusable."""

    start: int
    end: int
    excerpt: str | None
    reason: Reason | None
    section: str | None
    page: int | None

    @property
    def ok(self) -> bool:
        return self.reason is None


@dataclass(frozen=True, slots=True)
class SnapshotCheck:
    """The outcome of reading and verifying one snapshot file, without its text.

    ``location`` is the sources folder the snapshot was read from. When ``ok`` is false,
    ``reason`` is ``UNKNOWN_SOURCE`` or ``SNAPSHOT_HASH_MISMATCH``, ``detail`` says why in one
    line, the metadata fields are None and ``spans`` is empty.
    """

    location: str
    source_id: str
    ok: bool
    reason: Reason | None
    detail: str
    spans: tuple[SpanCheck, ...] = ()
    url: str | None = None
    title: str | None = None
    access: str | None = None
    origin: str | None = None
    paper: Paper | None = None
    asset: Asset | None = None
    retrieved_at: str | None = None
    content_hash: str | None = None
    record_hash: str | None = None
    sealed: bool = False
    text_length: int = 0
    asset_digest: str | None = None
    """The bare sha256 of the asset file as it is now, under ``assets_root`` (None: missing)."""
    assets_root: str | None = None
    """The folder the asset was hashed under; None when it was not hashed."""

    @property
    def key(self) -> tuple[str, str]:
        """``(location, source_id)``: what requests are grouped by."""
        return (self.location, self.source_id)

    @property
    def text_sha256(self) -> str | None:
        """Bare hex digest of the text (verified), as events carry it."""
        return self.content_hash[7:] if self.content_hash else None

    def span(self, start: int, end: int) -> SpanCheck | None:
        """The check of a requested span, or None if it was not requested."""
        for item in self.spans:
            if item.start == start and item.end == end:
                return item
        return None


_Task = tuple[str, str, tuple[tuple[int, int], ...]]


def _normalise(requests: Iterable[Request]) -> list[_Task]:
    """Group requests by (sources folder, source id), keeping first-seen order and unique spans."""
    groups: dict[tuple[str, str], dict[tuple[int, int], None]] = {}
    spelled: dict[Path | str, str] = {}  # one Path parse per distinct location, not per request
    for item in requests:
        location, source_id, spans = item
        folder = spelled.get(location)
        if folder is None:
            folder = spelled[location] = os.fspath(Path(location))
        if os.path.basename(folder) == f"{source_id}.json":
            folder = os.fspath(Path(folder).parent)
        key = (folder, source_id)
        bucket = groups.setdefault(key, {})
        for pair in spans:
            start, end = pair
            if type(start) is not int or type(end) is not int:
                raise TypeError(f"span offsets must be int, got {start!r}, {end!r} for {source_id}")
            bucket[(start, end)] = None
    return [(folder, sid, tuple(spans)) for (folder, sid), spans in groups.items()]


def _check_one(task: _Task, assets_root: str | None = None) -> SnapshotCheck:
    """Read, verify and slice one snapshot (runs in a worker); hash its asset under ``assets_root``."""
    folder, source_id, wanted = task
    try:
        snap = read_snapshot(folder, source_id)
    except PublisherError as exc:
        reason = exc.reason if exc.reason is not None else Reason.SNAPSHOT_HASH_MISMATCH
        return SnapshotCheck(folder, source_id, False, reason, exc.one_line())
    except (OSError, ValueError, MemoryError) as exc:
        detail = f"snapshot {source_id[:80]} cannot be verified: {type(exc).__name__}: {exc}"[:300]
        return SnapshotCheck(folder, source_id, False, Reason.SNAPSHOT_HASH_MISMATCH, detail)
    text = snap.text
    n = len(text)
    spans = []
    section_at = locator(snap.sections)
    page_at = locator(snap.pages)
    for start, end in wanted:
        bad = check_range(start, end, n)
        if bad is not None:
            spans.append(SpanCheck(start, end, None, bad, None, None))
            continue
        section = section_at(start)
        page = page_at(start)
        spans.append(
            SpanCheck(
                start,
                end,
                text[start:end],
                None,
                section.title if section is not None else None,
                page.page if page is not None else None,
            )
        )
    return SnapshotCheck(
        folder,
        source_id,
        True,
        None,
        "sealed" if snap.sealed else "metadata unsealed",
        tuple(spans),
        url=snap.url,
        title=snap.title,
        access=snap.access.value,
        origin=snap.origin.value,
        paper=snap.paper,
        asset=snap.asset,
        retrieved_at=snap.retrieved_at,
        content_hash=snap.content_hash,
        record_hash=snap.record_hash,
        sealed=snap.sealed,
        text_length=n,
        asset_digest=hash_asset(assets_root, snap.asset.path) if assets_root and snap.asset else None,
        assets_root=assets_root if assets_root and snap.asset else None,
    )


def _check_chunk(chunk: list[_Task], assets_root: str | None = None) -> list[SnapshotCheck]:
    """A worker's unit of work: several small snapshots or one large one."""
    return [_check_one(task, assets_root) for task in chunk]


def default_workers() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - platforms without affinity
        return max(1, os.cpu_count() or 1)


def _size(task: _Task) -> int:
    try:
        return os.stat(os.path.join(task[0], f"{task[1]}.json"), follow_symlinks=False).st_size
    except (OSError, ValueError):
        return 0


def _chunks(tasks: list[_Task], sizes: list[int]) -> list[list[_Task]]:
    """Consecutive chunks of at most ``_CHUNK_BYTES`` (or one big file) and ``_CHUNK_MAX`` tasks."""
    out: list[list[_Task]] = []
    current: list[_Task] = []
    weight = 0
    for task, size in zip(tasks, sizes, strict=True):
        if current and (weight + size > _CHUNK_BYTES or len(current) >= _CHUNK_MAX):
            out.append(current)
            current, weight = [], 0
        current.append(task)
        weight += size
    if current:
        out.append(current)
    return out


def _can_fork() -> bool:
    """Whether workers may be forked: fork starts in milliseconds but is only safe while this
    process runs a single thread; with other threads (mkdocs serve, a Dask client) a forked
    child could inherit a held lock."""
    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1


def _in_process_limit() -> int:
    return IN_PROCESS_BYTES if _can_fork() else IN_PROCESS_BYTES * SLOW_START_FACTOR


def helper_pool(workers: int = 1) -> ProcessPoolExecutor | None:
    """A pool of forked workers, or None when this process may not fork (other threads alive).

    For work that only pays when the workers start at once (a build's helper process), unlike
    :func:`verify_many`, which falls back to a forkserver.
    """
    if not _can_fork():
        return None
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork"))


def worker_pool(workers: int) -> ProcessPoolExecutor:
    """A process pool for :func:`verify_many` and its caller's own parallel work (forked when safe)."""
    return _process_pool(workers)


def _process_pool(workers: int) -> ProcessPoolExecutor:
    # Without fork the workers come from a forkserver, which costs a fresh interpreter and imports.
    methods = multiprocessing.get_all_start_methods()
    context: multiprocessing.context.BaseContext
    if _can_fork():
        context = multiprocessing.get_context("fork")
    elif "forkserver" in methods:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["publisher.parallel.batch"])
    else:  # pragma: no cover - Windows
        context = multiprocessing.get_context("spawn")
    return ProcessPoolExecutor(max_workers=workers, mp_context=context)


def verify_many(
    requests: Iterable[Request],
    *,
    executor: Executor | None = None,
    workers: int | None = None,
    progress: ProgressFn | None = None,
    ordered: bool = False,
    assets_root: Path | str | None = None,
) -> Iterator[SnapshotCheck]:
    """Verify every requested snapshot once and slice its spans; yield one check per snapshot.

    ``executor`` runs the work when given (it is not shut down here); otherwise a process pool of
    ``workers`` processes (default: every core) is started, unless there is one worker or the
    snapshots total less than :data:`IN_PROCESS_BYTES` (more without fork), when the work runs in this process.
    Results come in completion order, or in first-request order with ``ordered=True``. A failure
    of the pool itself raises :class:`PublisherError`; a bad snapshot is a failed check, never an
    exception.

    With ``assets_root`` (the wiki root), the worker that verifies a snapshot with an ``asset``
    also hashes that file (``asset_digest``), so stored PDFs are hashed on every core too.
    """
    tasks = _normalise(requests)
    root = os.fspath(assets_root) if assets_root is not None else None
    total = len(tasks)
    if total == 0:
        return
    workers = workers if workers is not None else default_workers()
    if workers < 1:
        raise ValueError("workers must be at least 1")
    sizes = [_size(task) for task in tasks]
    if executor is None and (workers == 1 or total == 1 or sum(sizes) < _in_process_limit()):
        for done, task in enumerate(tasks, 1):
            check = _check_one(task, root)
            if progress is not None:
                progress(done, total)
            yield check
        return
    if not ordered:
        # Largest first, so one big file does not start last and hold up the end of the run.
        pairs = sorted(zip(sizes, tasks, strict=True), key=lambda pair: -pair[0])
        sizes = [size for size, _ in pairs]
        tasks = [task for _, task in pairs]
    chunks = _chunks(tasks, sizes)
    own = executor is None
    pool = _process_pool(workers) if executor is None else executor
    try:
        yield from _stream(pool, chunks, workers, total, progress, ordered, root)
    except BrokenProcessPool as exc:
        raise PublisherError(f"parallel verification failed: a worker process died ({exc})") from exc
    finally:
        if own:
            pool.shutdown(wait=True, cancel_futures=True)


def _stream(
    pool: Executor,
    chunks: list[list[_Task]],
    workers: int,
    total: int,
    progress: ProgressFn | None,
    ordered: bool,
    assets_root: str | None,
) -> Iterator[SnapshotCheck]:
    limit = max(2, workers * _IN_FLIGHT_PER_WORKER)
    pending = iter(chunks)
    in_flight: deque[Future[list[SnapshotCheck]]] = deque()
    done = 0

    def refill() -> None:
        while len(in_flight) < limit:
            chunk = next(pending, None)
            if chunk is None:
                return
            in_flight.append(pool.submit(_check_chunk, chunk, assets_root))

    refill()
    try:
        while in_flight:
            if ordered:
                finished = [in_flight.popleft()]
            else:
                ready, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                finished = [f for f in in_flight if f in ready]
                for future in finished:
                    in_flight.remove(future)
            refill()
            for future in finished:
                for check in future.result():
                    done += 1
                    if progress is not None:
                        progress(done, total)
                    yield check
    finally:
        for future in in_flight:
            future.cancel()


class CheckedSnapshots:
    """A per-command snapshot reader over one sources folder that keeps checks, never texts.

    A command declares what it will ask for (:meth:`want`), :meth:`load` verifies all of it in
    one :func:`verify_many` pass (every core, one read per snapshot), and :meth:`get` and
    :meth:`span` then answer from the small checks. Like ``store.SnapshotReader``, a failure is
    remembered and raised again, as the same :class:`~publisher.errors.PublisherError`, every
    time the snapshot is asked for. A snapshot or span nobody declared is read on demand, alone:
    correct, only slower.
    """

    def __init__(
        self,
        folder: Path | str,
        *,
        executor: Executor | None = None,
        workers: int | None = None,
        progress: ProgressFn | None = None,
        assets_root: Path | str | None = None,
    ) -> None:
        self.folder = Path(folder)
        self.executor = executor
        self.workers = workers
        self.progress = progress
        self.assets_root = os.fspath(assets_root) if assets_root is not None else None
        self._wanted: dict[str, set[tuple[int, int]]] = {}
        self._checks: dict[str, SnapshotCheck] = {}
        self._spans: dict[str, dict[tuple[int, int], SpanCheck]] = {}
        self._errors: dict[str, PublisherError] = {}

    def want(self, source_id: str, spans: Iterable[tuple[int, int]] = ()) -> None:
        """Declare a snapshot (and spans of it) that :meth:`load` should verify."""
        bucket = self._wanted.setdefault(source_id, set())
        for start, end in spans:
            if type(start) is int and type(end) is int:
                bucket.add((start, end))

    def seed(self, checks: Iterable[SnapshotCheck]) -> None:
        """Adopt checks this command already made of this folder's snapshots (others are ignored).

        The build hook hands over its preflight's checks, so a report page re-assembling a run
        reads no snapshot a second time; a span the checks do not hold is still read on demand.
        """
        folder = os.fspath(self.folder)
        for check in checks:
            if check.location == folder:
                self._keep(check)

    def load(self) -> None:
        """Verify every declared snapshot not checked yet, or checked without a declared span."""
        tasks = []
        for source_id, spans in self._wanted.items():
            known = self._checks.get(source_id)
            have = self._spans.get(source_id, {})
            if known is not None and (not known.ok or spans <= have.keys()):
                continue
            tasks.append((self.folder, source_id, sorted(spans | set(have))))
        self._wanted = {}
        checks = verify_many(
            tasks, executor=self.executor, workers=self.workers, progress=self.progress, assets_root=self.assets_root
        )
        for check in checks:
            self._keep(check)

    def _keep(self, check: SnapshotCheck) -> None:
        sid = check.source_id
        self._checks[sid] = check
        self._spans[sid] = {(item.start, item.end): item for item in check.spans}
        if not check.ok:
            self._errors[sid] = _as_error(check)

    def check(self, source_id: str) -> SnapshotCheck:
        """The check of ``source_id``, good or bad (read now if it was never declared)."""
        hit = self._checks.get(source_id)
        if hit is None:
            self._keep(_check_one((os.fspath(self.folder), source_id, ())))
            hit = self._checks[source_id]
        return hit

    def get(self, source_id: str) -> SnapshotCheck:
        """The verified snapshot's check, or the same error every time it is asked for."""
        hit = self.check(source_id)
        if not hit.ok:
            raise self._errors[source_id]
        return hit

    def span(self, source_id: str, start: int, end: int) -> SpanCheck:
        """The excerpt (or range reason) of one span of a verified snapshot."""
        self.get(source_id)
        item = self._spans[source_id].get((start, end))
        if item is None:
            wanted = (*self._spans[source_id], (start, end))
            self._keep(_check_one((os.fspath(self.folder), source_id, wanted)))
            self.get(source_id)
            item = self._spans[source_id][(start, end)]
        return item

    def checks(self) -> dict[str, SnapshotCheck]:
        """Every check held so far, by source id."""
        return dict(self._checks)

    def asset_digests(self, root: Path | str | None) -> dict[str, str | None]:
        """The digests of the assets the checks hashed under ``root``, by asset path."""
        if root is None:
            return {}
        folder = os.fspath(root)
        return {
            c.asset.path: c.asset_digest
            for c in self._checks.values()
            if c.ok and c.asset is not None and c.assets_root == folder
        }


def _as_error(check: SnapshotCheck) -> PublisherError:
    """The error a serial read would have raised, with the same reason and one-line message."""
    reason = check.reason or Reason.SNAPSHOT_HASH_MISMATCH
    prefix = f"{reason.value}: "
    if check.detail.startswith(prefix):
        return IntegrityError(check.detail[len(prefix) :], reason=reason, source_id=check.source_id)
    # A failure outside the store's own checks: keep the message exactly, callers default the code.
    return IntegrityError(check.detail, source_id=check.source_id)


@contextlib.contextmanager
def terminal_progress(label: str, *, quiet: bool = False) -> Iterator[ProgressFn | None]:
    """A ``progress`` callback drawing a rich bar on stderr, or None when it should stay quiet.

    Quiet when asked (``--json``), when stderr is not a terminal, or when ``CI=true``.
    """
    if quiet or os.environ.get("CI", "").lower() == "true" or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    task_id: Any = None

    def update(done: int, total: int) -> None:
        nonlocal task_id
        if task_id is None:
            task_id = bar.add_task(label, total=total)
        bar.update(task_id, completed=done)

    with bar:
        yield update
