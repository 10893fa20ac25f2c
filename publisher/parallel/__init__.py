"""Process-pool plumbing behind one small interface: every snapshot of a command read and
verified once, on every core (:func:`verify_many`), and a per-command reader over the outcomes
(:class:`CheckedSnapshots`). The differential tests run the same work in-process and on pools."""

from .checks import Request, SnapshotCheck, SpanCheck
from .gcpause import fewer_collections, trim_heap
from .pool import (
    IN_PROCESS_BYTES,
    Batch,
    Batches,
    Workers,
    default_workers,
    folder_bytes,
    folder_size,
    helper_pool,
    pool_pays,
    verify_many,
    warm_pool,
    worker_pool,
)
from .progress import ProgressFn
from .reader import CheckedSnapshots

__all__ = [
    "Request",
    "SnapshotCheck",
    "SpanCheck",
    "fewer_collections",
    "trim_heap",
    "IN_PROCESS_BYTES",
    "default_workers",
    "helper_pool",
    "verify_many",
    "Batch",
    "Batches",
    "Workers",
    "folder_bytes",
    "folder_size",
    "pool_pays",
    "worker_pool",
    "warm_pool",
    "ProgressFn",
    "CheckedSnapshots",
]
