"""The cyclic garbage collector, kept out of the way of bursts of allocation.

A wiki check builds many small objects that live until it ends (records, results, checks):
with the default thresholds the collector runs hundreds of times and walks the whole live heap
again and again. None of that is garbage, so raising the first threshold for the burst costs a
little memory and saves a few percent of the run. Forked workers freeze what they inherit, so
their collections never walk (and so never copy) the pages they share with their parent.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["fewer_collections", "freeze_inherited", "trim_heap", "BURST_THRESHOLD", "TRIM_KEEP"]

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


TRIM_KEEP = 16 * 1024 * 1024
"""Free heap a worker keeps between tasks: below this, :func:`trim_heap` leaves the heap alone."""


def _mallinfo2_type() -> Any:
    """glibc's ``struct mallinfo2`` (2.33 and later) as a ctypes structure: the heap's totals, in
    bytes. Made on the first trim, so that a command which never trims does not load ctypes."""
    import ctypes

    class _MallInfo2(ctypes.Structure):
        _fields_ = [
            (name, ctypes.c_size_t)
            for name in (
                "arena",
                "ordblks",
                "smblks",
                "hblks",
                "hblkhd",
                "usmblks",
                "fsmblks",
                "uordblks",
                "fordblks",
                "keepcost",
            )
        ]

    return _MallInfo2


def trim_heap(keep: int = TRIM_KEEP) -> bool:
    """Hand the heap's free memory back to the system when it holds more than ``keep`` bytes free
    (glibc's ``malloc_trim``; elsewhere nothing); whether it trimmed.

    A worker's heap keeps the pages of what a finished task freed (a run's records, its stored
    result, its snapshots' texts) resident, between small objects that live on; the next task
    then peaks on top of them. Handing back what a large task freed bounds that. What a small
    one freed (a few megabytes, reused by the next task at once) is kept: trimming it after every
    run cost each run a page fault per page used again, a quarter of a worker's time on a wiki of
    many small runs. Where the free total cannot be read (glibc before 2.33), the heap is trimmed
    every time. A fixed mmap threshold, handing every large buffer back at once, cost every
    snapshot read its page faults instead: the floor itself ran a quarter slower.
    """
    global _trim, _info
    if _trim is None:
        import ctypes

        libc: Any = None
        trim: Any = False
        info: Any = False
        try:
            libc = ctypes.CDLL(None)
            trim = libc.malloc_trim
        except (OSError, AttributeError):
            pass
        try:
            info = libc.mallinfo2 if libc is not None else False
            info.restype = _mallinfo2_type()
        except AttributeError:
            info = False
        _info, _trim = info, trim  # each set up whole before a caller sees it
    if not _trim:
        return False
    if _info and _info().fordblks <= keep:
        return False
    _trim(0)
    return True


_trim: Any = None
"""glibc's ``malloc_trim`` once looked up; False where there is none."""
_info: Any = None
"""glibc's ``mallinfo2`` once looked up; False where there is none."""
