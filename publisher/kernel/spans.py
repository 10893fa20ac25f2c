"""Span arithmetic, defined once: half-open code-point ranges into a snapshot's text.

Pure functions, no I/O. Every range check, slice and section/page lookup in the product goes
through here.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from .reasons import Reason

__all__ = [
    "MAX_SPAN",
    "check_range",
    "slice_span",
    "RangeMap",
    "locator",
]

MAX_SPAN = 2000
"""Longest span in code points; longer is a failure, never a truncation."""


def check_range(start: int, end: int, text_length: int) -> Reason | None:
    """The reason a span is unusable on a text of ``text_length`` code points, or None."""
    if start < 0 or start >= end or end > text_length:
        return Reason.SPAN_OUT_OF_RANGE
    if end - start > MAX_SPAN:
        return Reason.SPAN_TOO_LONG
    return None


def slice_span(text: str, start: int, end: int) -> tuple[str | None, Reason | None]:
    """``(text[start:end], None)`` for a usable span, else ``(None, reason)``: the one re-slice."""
    reason = check_range(start, end, len(text))
    if reason is not None:
        return None, reason
    return text[start:end], None


class RangeMap(Protocol):
    """Anything with ``start`` and ``end``: a section or page entry."""

    @property
    def start(self) -> int: ...

    @property
    def end(self) -> int: ...


T = TypeVar("T", bound=RangeMap)


def locator(entries: Sequence[T] | None) -> Callable[[int], T | None]:
    """A function finding the entry whose half-open range contains an offset (innermost: the last such start).

    Entries may be nested (sections) or contiguous (pages) and need not be sorted; they are sorted
    once, so looking up every span of a snapshot costs one sort, not one per span. The function
    returns None when no entry contains the offset: a section or page is never guessed.
    """
    if not entries:
        return lambda offset: None
    ordered = sorted(entries, key=lambda e: (e.start, -e.end))
    starts = [e.start for e in ordered]

    def find(offset: int) -> T | None:
        for i in range(bisect_right(starts, offset) - 1, -1, -1):  # no copy of the entries before
            entry = ordered[i]
            if entry.start <= offset < entry.end:
                return entry
        return None

    return find
