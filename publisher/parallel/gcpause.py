"""The cyclic garbage collector, kept out of the way of bursts of allocation.

A wiki check builds many small objects that live until it ends (records, results, checks):
with the default thresholds the collector runs hundreds of times and walks the whole live heap
again and again. None of that is garbage, so raising the first threshold for the burst costs a
little memory and saves a few percent of the run. Forked workers freeze what they inherit, so
their collections never walk (and so never copy) the pages they share with their parent.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["fewer_collections", "freeze_inherited", "trim_heap", "BURST_THRESHOLD"]

BURST_THRESHOLD = 50_000
"""Allocations between young-generation collections while a burst runs (CPython's default: 700)."""

_lock = threading.Lock()
_depth = 0
_saved: tuple[int, ...] = ()


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    """Raise the young generation's threshold to :data:`BURST_THRESHOLD` while the block runs.

    Nested and concurrent uses share one raise; the last to leave restores what was set before.
    Garbage in cycles is still collected, only less often.
    """
    global _depth, _saved
    with _lock:
        if _depth == 0:
            _saved = gc.get_threshold()
            gc.set_threshold(max(_saved[0], BURST_THRESHOLD), *_saved[1:])
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                gc.set_threshold(*_saved)


def freeze_inherited() -> None:
    """Move every object this process holds now out of the collector's reach (a worker at start)."""
    gc.freeze()


def trim_heap() -> None:
    """Hand the heap's free memory back to the system (glibc's ``malloc_trim``; elsewhere nothing).

    A worker's heap keeps the pages of what a finished task freed (a run's records, its stored
    result, its snapshots' texts) resident, between small objects that live on; the next task
    then peaks on top of them. Trimming once a task ends costs a millisecond or so and a page
    fault for each page used again, where handing every large buffer back at once (a fixed mmap
    threshold) cost every snapshot read its page faults: the floor itself ran a quarter slower.
    """
    global _trim
    if _trim is None:
        try:
            _trim = ctypes.CDLL(None).malloc_trim
        except (OSError, AttributeError):
            _trim = False
    if _trim:
        _trim(0)


_trim: Any = None
"""glibc's ``malloc_trim`` once looked up; False where there is none."""
