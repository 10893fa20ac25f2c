"""How work grows, not how long it takes: timing tests compare n with 2n on the same machine.

A shared machine makes seconds meaningless; a ratio of CPU times (best of a few runs, this
process only) still tells linear (about 2) from quadratic (about 4).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

__all__ = ["cpu_seconds", "grows_linearly"]


def cpu_seconds(work: Callable[[], Any], repeat: int = 3) -> float:
    """The least CPU time of ``repeat`` runs of ``work`` (this process)."""
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        work()
        best = min(best, time.process_time() - started)
    return best


def grows_linearly(small: Callable[[], Any], double: Callable[[], Any], *, floor: float = 0.02) -> tuple[float, float]:
    """CPU times of work of size n and 2n; asserts the second is under three times the first
    (``floor`` absorbs timer granularity on tiny work)."""
    once, twice = cpu_seconds(small), cpu_seconds(double)
    assert twice < 3 * max(once, floor), f"n: {once:.3f}s, 2n: {twice:.3f}s: the work grows faster than n"
    return once, twice
