"""Process-pool plumbing behind one small interface: every snapshot of a command read and
verified once, on every core (:func:`verify_many`), and a per-command reader over the outcomes
(:class:`CheckedSnapshots`). The differential tests run the same work in-process and on pools.

Names are loaded on first use (:func:`__getattr__`): ``checks`` and ``pool`` load every record
model, which a command that never checks a snapshot (``publisher --help``) must not pay for.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..kernel.snapshots import SnapshotCheck, SpanCheck
    from .checks import Request
    from .gcpause import fewer_collections, trim_heap
    from .pool import (
        IN_PROCESS_BYTES,
        Batch,
        Batches,
        Workers,
        cut_by_size,
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
    "cut_by_size",
    "folder_bytes",
    "folder_size",
    "pool_pays",
    "worker_pool",
    "warm_pool",
    "ProgressFn",
    "CheckedSnapshots",
]

HOMES: dict[str, str] = {
    "Request": "checks",
    "SnapshotCheck": "checks",
    "SpanCheck": "checks",
    "fewer_collections": "gcpause",
    "trim_heap": "gcpause",
    "IN_PROCESS_BYTES": "pool",
    "Batch": "pool",
    "Batches": "pool",
    "Workers": "pool",
    "cut_by_size": "pool",
    "default_workers": "pool",
    "folder_bytes": "pool",
    "folder_size": "pool",
    "helper_pool": "pool",
    "pool_pays": "pool",
    "verify_many": "pool",
    "warm_pool": "pool",
    "worker_pool": "pool",
    "ProgressFn": "progress",
    "CheckedSnapshots": "reader",
}
"""The submodule that defines each exported name (module ``publisher.parallel.<home>``)."""


def __getattr__(name: str) -> object:
    """Load the submodule defining ``name`` on first use and keep the name (PEP 562)."""
    home = HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
