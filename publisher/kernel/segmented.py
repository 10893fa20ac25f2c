"""A long text held as the canonical JSON bytes of its string, decoded a piece at a time.

A snapshot of hundreds of megabytes read as one Python string takes two to four bytes a code point
on top of the file's bytes; the search commands need the text's length, slices of it and the
occurrences of a term, never all of it at once. :class:`SegmentedText` answers those from the
file's own bytes (the string's escaped UTF-8, as :func:`~publisher.kernel.canonical.canonical_bytes`
writes it), cut into pieces at places no escape or UTF-8 sequence straddles, with a checkpoint per
piece (its code-point and byte offsets) so that any ``text[lo:hi]`` decodes only the pieces it
touches. The store builds one only after checking every piece (:func:`decode_piece`, then the
digests); this module does no I/O.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Iterator

from .canonical import string_of_canonical

__all__ = ["PIECE_BYTES", "SegmentedText", "decode_piece", "piece_ends"]

PIECE_BYTES = 1 << 18
"""Bytes of escaped JSON a piece holds (about; a cut moves back to the nearest safe place)."""

_KEPT = 3
"""Decoded pieces a :class:`SegmentedText` keeps (a slice across a seam needs two)."""

_ESCAPE_LONGEST = 6
"""Bytes of the longest escape: a backslash, ``u`` and four hex digits."""


def decode_piece(raw: bytes) -> str:
    """The code points that ``raw``, a piece of a JSON string's content, spells; ValueError unless
    ``raw`` is exactly their canonical spelling (see
    :func:`~publisher.kernel.canonical.string_of_canonical`)."""
    return string_of_canonical(raw)


def _safe_cut(data: bytes, at: int, floor: int) -> int:
    """The nearest position at or before ``at`` (and after ``floor``) where ``data`` may be cut: not
    inside a UTF-8 sequence and with no backslash in the bytes just before (so no escape straddles
    it); ``floor`` if there is none."""
    while at > floor:
        while at > floor and 0x80 <= data[at] < 0xC0:
            at -= 1
        slash = data.rfind(b"\\", max(floor, at - _ESCAPE_LONGEST + 1), at)
        if slash == -1:
            return at
        at = slash
    return floor


def piece_ends(data: bytes, lo: int, hi: int, size: int) -> Iterator[int]:
    """Where the pieces of ``data[lo:hi]`` (a JSON string's content) end, each about ``size`` bytes:
    each a safe cut (see :func:`_safe_cut`), the last one ``hi``. A stretch with no safe cut (a run
    of backslashes) makes a longer piece."""
    start = lo
    while start < hi:
        target = start + size
        end = hi
        while target < hi:
            cut = _safe_cut(data, target, start)
            if cut > start:
                end = cut
                break
            target += size
        yield end
        start = end


class SegmentedText:
    """A text read a piece at a time from verified canonical bytes: ``len``, slicing, indexing and
    ``find`` answer as the whole string would.

    ``data[offsets[k]:offsets[k + 1]]`` spells the code points ``starts[k]`` to ``starts[k + 1]``
    (the last entries are the ends); the pieces must have passed :func:`decode_piece`.
    """

    __slots__ = ("_cache", "_data", "_offsets", "_starts")

    def __init__(self, data: bytes, offsets: list[int], starts: list[int]) -> None:
        self._data = data
        self._offsets = offsets
        self._starts = starts
        self._cache: OrderedDict[int, str] = OrderedDict()

    def __len__(self) -> int:
        return self._starts[-1]

    def __repr__(self) -> str:
        return f"SegmentedText({len(self)} code points in {len(self._starts) - 1} pieces)"

    def pieces(self) -> Iterator[tuple[int, str]]:
        """Every piece in order with the code-point offset it starts at."""
        for k in range(len(self._starts) - 1):
            yield self._starts[k], self._piece(k)

    def _piece(self, k: int) -> str:
        """The decoded piece ``k``, the last few kept."""
        found = self._cache.get(k)
        if found is not None:
            self._cache.move_to_end(k)
            return found
        found = string_of_canonical(self._data[self._offsets[k] : self._offsets[k + 1]], checked=False)
        self._cache[k] = found
        while len(self._cache) > _KEPT:
            self._cache.popitem(last=False)
        return found

    def _piece_of(self, at: int) -> int:
        """The piece holding code point ``at`` (the last piece for the end)."""
        return min(bisect_right(self._starts, at) - 1, len(self._starts) - 2)

    def __getitem__(self, key: int | slice) -> str:
        n = len(self)
        if isinstance(key, int):
            at = key + n if key < 0 else key
            if not 0 <= at < n:
                raise IndexError("text index out of range")
            k = self._piece_of(at)
            return self._piece(k)[at - self._starts[k]]
        lo, hi, step = key.indices(n)
        if step != 1:
            raise ValueError("a segmented text is sliced with a step of one")
        if lo >= hi:
            return ""
        first, last = self._piece_of(lo), self._piece_of(hi - 1)
        if first == last:
            base = self._starts[first]
            return self._piece(first)[lo - base : hi - base]
        parts = [self._piece(first)[lo - self._starts[first] :]]
        parts.extend(self._piece(k) for k in range(first + 1, last))
        parts.append(self._piece(last)[: hi - self._starts[last]])
        return "".join(parts)

    def find(self, sub: str, start: int = 0, end: int | None = None) -> int:
        """``str.find`` over the whole text (``start`` and ``end`` not negative): each piece is
        searched in place, and the seam after it with the term's length less one either side."""
        n = len(self)
        end = n if end is None else max(0, min(end, n))
        start = max(0, start)
        m = len(sub)
        if m == 0:
            return start if start <= end else -1
        if start >= n:
            return -1
        k = self._piece_of(start)
        while start + m <= end:
            base, stop = self._starts[k], self._starts[k + 1]
            i = self._piece(k).find(sub, start - base, min(end, stop) - base)
            if i != -1:
                return base + i
            if stop >= end:
                return -1
            lo = max(start, stop - m + 1)
            i = self[lo : min(end, stop + m - 1)].find(sub)
            if i != -1:
                return lo + i
            start, k = stop, k + 1
        return -1
