"""Parallel, streaming snapshot verification: every snapshot read and verified once, on every core.

Commands that check many snapshots (the wiki check, ``assemble``, ``verify``, ``promote
--check``) hand :func:`verify_many` a list of requests, each naming a snapshot and the spans to
slice from it. Requests are grouped by snapshot first, so a snapshot cited a thousand times is
read once. Worker processes read and verify the files through the store (every digest
recomputed) and send back a small :class:`~publisher.kernel.snapshots.SnapshotCheck`: the
outcome, the excerpts of the requested spans and the snapshot's metadata, never its text. Memory
therefore stays bounded by the largest snapshot in flight per worker, not by the corpus.

Results stream back in completion order by default (``ordered=True`` gives input order, i.e. the
order in which each snapshot was first requested). Work is submitted in chunks with a bounded
number in flight. Any :class:`concurrent.futures.Executor` can run it, including a Dask
``distributed.Client(...).get_executor()``; with one worker or a small input everything runs
in-process, with no pool to start.
"""

from __future__ import annotations

import atexit
import os
import select
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..kernel import snapshots as _snapshots
from ..kernel.errors import PublisherError
from ..kernel.snapshots import PackedCheck, SnapshotCheck, Task
from .checks import Request, check_chunk, normalise
from .gcpause import freeze_inherited
from .progress import ProgressFn

if TYPE_CHECKING:  # the process machinery loads when a pool is made, not for work done in-process
    import multiprocessing.context
    from concurrent.futures import Executor, Future, ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

__all__ = [
    "verify_many",
    "Workers",
    "Batches",
    "Batch",
    "default_workers",
    "folder_bytes",
    "folder_size",
    "pool_pays",
    "helper_pool",
    "worker_pool",
    "warm_pool",
    "IN_PROCESS_BYTES",
]

T = TypeVar("T")

IN_PROCESS_BYTES = 16 * 1024 * 1024
"""Below this many bytes of snapshot files, checking in-process beats starting a pool.

A forked pool and its traffic cost about 40 ms (the 244 articles of the real corpus, 8 MB, took
46 ms in-process and 86 ms on two forked workers). When the pool has to come from a forkserver
instead (other threads are alive, see :func:`_process_pool`), which takes about 0.6 s, the limit
is :data:`SLOW_START_FACTOR` times larger."""

SLOW_START_FACTOR = 8

_CHUNK_BYTES = 8 * 1024 * 1024
_CHUNK_MAX = 256
_IN_FLIGHT_PER_WORKER = 3


@dataclass(frozen=True)
class Workers:
    """Where a command's checks run and who hears how far they are: the one options object of
    :func:`publisher.wiki.check.check_wiki`. A caller says what it means: an executor it owns (a
    Dask cluster's, a server's warm pool), or how many processes the command's own pool may use."""

    executor: Executor | None = None
    """Runs the work when given; the callee never shuts it down."""
    count: int | None = None
    """Processes of the command's own pool (default: every core); 1 works in this process."""
    progress: ProgressFn | None = None
    """Told ``(done, total)`` as snapshots are checked."""


def default_workers() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - platforms without affinity
        return max(1, os.cpu_count() or 1)


def _size(task: Task) -> int:
    try:
        return os.stat(os.path.join(task[0], f"{task[1]}.json"), follow_symlinks=False).st_size
    except (OSError, ValueError):
        return 0


def _worker_died(exc: BrokenProcessPool) -> PublisherError:
    return PublisherError(f"parallel verification failed: a worker process died ({exc})")


def _largest_first(tasks: list[Task], sizes: list[int]) -> tuple[list[Task], list[int]]:
    """The tasks by size, largest first, so one big file does not start last and hold up the end."""
    pairs = sorted(zip(sizes, tasks, strict=True), key=lambda pair: -pair[0])
    return [task for _, task in pairs], [size for size, _ in pairs]


def cut_by_size(items: Sequence[T], sizes: Sequence[int], most_bytes: int, most_items: int) -> list[list[T]]:
    """``items`` in order, cut into consecutive tasks of at most ``most_bytes`` (one larger item
    alone) and ``most_items`` items: a pool's units of work."""
    out: list[list[T]] = []
    current: list[T] = []
    weight = 0
    for item, size in zip(items, sizes, strict=True):
        if current and (weight + size > most_bytes or len(current) >= most_items):
            out.append(current)
            current, weight = [], 0
        current.append(item)
        weight += size
    if current:
        out.append(current)
    return out


def _chunks(tasks: list[Task], sizes: list[int]) -> list[list[Task]]:
    """Consecutive chunks of at most ``_CHUNK_BYTES`` (or one big file) and ``_CHUNK_MAX`` tasks."""
    return cut_by_size(tasks, sizes, _CHUNK_BYTES, _CHUNK_MAX)


def _can_fork() -> bool:
    """Whether workers may be forked: fork starts in milliseconds but is only safe while this
    process runs a single thread; with other threads (mkdocs serve, a Dask client) a forked
    child could inherit a held lock."""
    return hasattr(os, "fork") and threading.active_count() == 1  # multiprocessing offers fork wherever os has it


def _in_process_limit() -> int:
    return IN_PROCESS_BYTES if _can_fork() else IN_PROCESS_BYTES * SLOW_START_FACTOR


def pool_pays(total_bytes: int, workers: int) -> bool:
    """Whether checking ``total_bytes`` of snapshot files on a pool of ``workers`` beats this process."""
    return workers > 1 and total_bytes >= _in_process_limit()


def folder_bytes(folder: Path | str) -> int:
    """The bytes of the snapshot files (``*.json``) of a sources folder: what its checks could read.

    An estimate made before anyone says which snapshots they need (links and odd entries count
    nothing; a folder that cannot be listed counts nothing).
    """
    return folder_size(folder)[0]


def folder_size(folder: Path | str) -> tuple[int, int]:
    """:func:`folder_bytes` and the number of snapshot files it counted."""
    total = files = 0
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.endswith(".json"):
                    try:
                        if entry.is_file(follow_symlinks=False):
                            total += entry.stat(follow_symlinks=False).st_size
                            files += 1
                    except OSError:
                        continue
    except OSError:
        return 0, 0
    return total, files


_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int, forked: bool) -> None:
    """Worker initializer: the worker dies with the process that asked for it.

    A build killed with SIGKILL runs no cleanup, and a forked worker holds a copy of its own call
    queue's write end, so it would wait forever for work. A forked worker asks the kernel for
    SIGKILL when its parent dies (``PR_SET_PDEATHSIG``, Linux); ``parent`` closes the race of a
    parent that died before the request took effect. A forkserver's worker has the forkserver
    for parent, which stays up while any of its workers does, so it watches ``parent`` itself
    through a pidfd (no polling, no pid reuse) and exits when that process has.

    A worker also freezes what it inherited (:func:`~.gcpause.freeze_inherited`).
    """
    import ctypes
    import signal

    freeze_inherited()
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if forked:
        if os.getppid() != parent:
            os._exit(1)
        return
    try:
        watched = os.pidfd_open(parent)
    except ProcessLookupError:
        os._exit(1)
    except (OSError, AttributeError):  # no pidfd here: the worker ends when its queue's pipe closes
        return

    def wait_for_parent() -> None:
        select.select([watched], [], [])
        os._exit(1)

    threading.Thread(target=wait_for_parent, name="publisher-parent-watch", daemon=True).start()


def _pool(workers: int, context: multiprocessing.context.BaseContext) -> ProcessPoolExecutor:
    from concurrent.futures import ProcessPoolExecutor

    forked = context.get_start_method() == "fork"
    return ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=_die_with_parent, initargs=(os.getpid(), forked)
    )


def helper_pool(workers: int = 1) -> ProcessPoolExecutor | None:
    """A pool of forked workers, or None when this process may not fork (other threads alive).

    For work that only pays when the workers start at once (a build's helper process), unlike
    :func:`verify_many`, which falls back to a forkserver.
    """
    import multiprocessing

    if not _can_fork():
        return None
    return _pool(workers, multiprocessing.get_context("fork"))


def worker_pool(workers: int) -> ProcessPoolExecutor:
    """A process pool for :func:`verify_many` and its caller's own parallel work (forked when safe)."""
    return _process_pool(workers)


_WARM: dict[int, ProcessPoolExecutor] = {}


def warm_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of ``workers`` processes kept for the life of this process: a server that checks the
    wiki on every change (``mkdocs serve``) pays the pool's start-up once, not per rebuild.

    The caller must not shut it down; it is shut down when the interpreter exits. A pool a dead
    worker broke is replaced by a fresh one.
    """
    pool = _WARM.get(workers)
    if pool is None or getattr(pool, "_broken", False):
        if not _WARM:
            atexit.register(_close_warm)
        pool = _WARM[workers] = _process_pool(workers)
    return pool


def _close_warm() -> None:
    while _WARM:
        _, pool = _WARM.popitem()
        pool.shutdown(wait=True, cancel_futures=True)


def _process_pool(workers: int) -> ProcessPoolExecutor:
    # Without fork the workers come from a forkserver, which costs a fresh interpreter and imports.
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    context: multiprocessing.context.BaseContext
    if _can_fork():
        context = multiprocessing.get_context("fork")  # a record is read by the hand check (no model to build)
    elif "forkserver" in methods:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["publisher.parallel.pool"])
    else:  # pragma: no cover - Windows
        context = multiprocessing.get_context("spawn")
    return _pool(workers, context)


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
    tasks = normalise(requests)
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
            check = _snapshots.check_snapshot(task, root)
            if progress is not None:
                progress(done, total)
            yield check
        return
    if not ordered:
        tasks, sizes = _largest_first(tasks, sizes)
    chunks = _chunks(tasks, sizes)
    from concurrent.futures.process import BrokenProcessPool

    own = executor is None
    pool = _process_pool(workers) if executor is None else executor
    try:
        yield from _stream(pool, chunks, workers, total, progress, ordered, root)
    except BrokenProcessPool as exc:
        raise _worker_died(exc) from exc
    finally:
        if own:
            pool.shutdown(wait=True, cancel_futures=True)


class Batch:
    """What one :meth:`Batches.submit` call handed over: its futures on a pool, or its tasks to run here."""

    __slots__ = ("count", "futures", "tasks")

    def __init__(self, futures: list[Future[list[SnapshotCheck | PackedCheck]]], tasks: list[Task], count: int) -> None:
        self.futures = futures
        self.tasks = tasks
        self.count = count
        """How many snapshots the batch checks."""


class Batches:
    """Snapshot checks handed to one executor in batches, as the caller learns what to check.

    :func:`verify_many` needs every request before it starts; a caller that learns its requests
    piece by piece (the wiki check reads one run's records at a time) submits each piece as soon
    as it is known and collects it later, so the workers check one piece while this process
    reads the next. Each batch is sorted largest first and chunked like :func:`verify_many`'s work;
    batches run in the order they were submitted. With no executor a batch runs in this process
    when it is collected. ``progress`` is called as ``progress(done, total)`` where ``total`` counts
    the snapshots submitted so far. Failures of a snapshot are failed checks; a dead worker raises
    :class:`PublisherError`. Call :meth:`cancel` when giving up, so queued chunks do not run.
    """

    def __init__(
        self,
        executor: Executor | None,
        *,
        assets_root: Path | str | None = None,
        progress: ProgressFn | None = None,
    ) -> None:
        self._executor = executor
        self._root = os.fspath(assets_root) if assets_root is not None else None
        self._progress = progress
        self._done = 0
        self._total = 0
        self._open: set[Future[Any]] = set()

    def submit(self, requests: Iterable[Request]) -> Batch:
        """Hand over the snapshots (and spans) of ``requests``; returns the handle to collect them by."""
        tasks = normalise(requests)
        self._total += len(tasks)
        if self._executor is None or not tasks:
            return Batch([], tasks, len(tasks))
        chunks = _chunks(*_largest_first(tasks, [_size(task) for task in tasks]))
        futures = [self._executor.submit(check_chunk, chunk, self._root) for chunk in chunks]
        self._open.update(futures)
        return Batch(futures, [], len(tasks))

    def collect(self, batch: Batch) -> Iterator[SnapshotCheck]:
        """The checks of one submitted batch, in completion order (blocks until each is done)."""
        for task in batch.tasks:
            yield self._tick(_snapshots.check_snapshot(task, self._root))
        if not batch.futures:
            return
        from concurrent.futures import FIRST_COMPLETED, wait  # an executor exists: already loaded
        from concurrent.futures.process import BrokenProcessPool

        pending = set(batch.futures)
        try:
            while pending:
                ready, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in ready:
                    for check in future.result():
                        yield self._tick(_snapshots.unpacked(check))
        except BrokenProcessPool as exc:
            raise _worker_died(exc) from exc
        finally:
            self._open.difference_update(set(batch.futures) - pending)

    def call(self, fn: Callable[..., T], /, *args: object, count: int) -> Future[T]:
        """Hand one whole task (a run checked whole, say) to the executor, which must exist; it
        counts as ``count`` snapshots in the progress. Take its value with :meth:`outcome`."""
        if self._executor is None:
            raise ValueError("Batches.call needs an executor")
        self._total += count
        future = self._executor.submit(fn, *args)
        self._open.add(future)
        return future

    def outcome(self, future: Future[T], count: int) -> T:
        """The value of a :meth:`call` (blocks until it is done); a dead worker raises
        :class:`PublisherError`, and what the task raised is raised here."""
        from concurrent.futures.process import BrokenProcessPool

        try:
            value = future.result()
        except BrokenProcessPool as exc:
            raise _worker_died(exc) from exc
        finally:
            self._open.discard(future)
        self._done += count
        if self._progress is not None:
            self._progress(self._done, self._total)
        return value

    def drop(self, batch: Batch) -> None:
        """Give up one submitted batch: its queued chunks do not run and it leaves the total."""
        for future in batch.futures:
            future.cancel()
        self._open.difference_update(batch.futures)
        self._total -= batch.count
        batch.futures, batch.tasks, batch.count = [], [], 0

    def cancel(self) -> None:
        """Cancel every chunk submitted and not collected yet (those already running finish)."""
        for future in self._open:
            future.cancel()
        self._open.clear()

    def _tick(self, check: SnapshotCheck) -> SnapshotCheck:
        self._done += 1
        if self._progress is not None:
            self._progress(self._done, self._total)
        return check


def _stream(
    pool: Executor,
    chunks: list[list[Task]],
    workers: int,
    total: int,
    progress: ProgressFn | None,
    ordered: bool,
    assets_root: str | None,
) -> Iterator[SnapshotCheck]:
    from concurrent.futures import FIRST_COMPLETED, wait

    limit = max(2, workers * _IN_FLIGHT_PER_WORKER)
    pending = iter(chunks)
    in_flight: deque[Future[list[SnapshotCheck | PackedCheck]]] = deque()
    done = 0

    def refill() -> None:
        while len(in_flight) < limit:
            chunk = next(pending, None)
            if chunk is None:
                return
            in_flight.append(pool.submit(check_chunk, chunk, assets_root))

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
                    yield _snapshots.unpacked(check)
    finally:
        for future in in_flight:
            future.cancel()
