"""Compact tables keyed by span: what a wiki check holds for every excerpt its runs accept.

A wiki check holds, until the site is built, every accepted excerpt, which sources and spans it
shows, and which claims of which run cite each span. Held as dicts of ``(source_id, start, end)``
tuples, each span cost about a kilobyte beside its text (the tuple, its two ints, a set's
``(start, end)`` tuple, a list of ``(artifact_id, index)`` tuples, three hash entries). Here a
span is one int (:func:`span_code`) in a dict per source, an excerpt is its UTF-8 bytes, and the
claims citing a span are ints into the run's list of artifact ids: about a third of that.

The tables read like the mappings they replace (``table[(sid, start, end)]``, ``key in table``,
iteration over ``(sid, start, end)`` keys). A key that is not a ``(str, int, int)`` span inside
``0 <= start <= end < 2**32`` is simply absent; storing one is a ``ValueError``.
"""

from __future__ import annotations

import sys
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Collection, Iterator, Mapping, MutableMapping, Set

__all__ = ["SpanKey", "span_code", "ExcerptTable", "SpanSet", "AcceptedSpans"]

SpanKey = tuple[str, int, int]
"""``(source_id, start, end)``."""

_WIDE = 1 << 32
"""Offsets are held below this (four giga code points: no text a snapshot can hold is longer)."""


def span_code(start: object, end: object) -> int | None:
    """One int for the span ``start``..``end``; None for a pair no table holds (not two ints,
    negative, reversed or past :data:`_WIDE`)."""
    if type(start) is int and type(end) is int and 0 <= start <= end < _WIDE:
        return start * _WIDE + end
    return None


def _pair(code: int) -> tuple[int, int]:
    return divmod(code, _WIDE)


def _split(key: object) -> tuple[str, int] | None:
    """``(source_id, code)`` of a span key, or None when ``key`` is not one a table can hold."""
    if type(key) is not tuple or len(key) != 3 or type(key[0]) is not str:
        return None
    code = span_code(key[1], key[2])
    return None if code is None else (key[0], code)


def _storable(key: object) -> tuple[str, int]:
    split = _split(key)
    if split is None:
        raise ValueError(f"not a span key (source_id, start, end) with 0 <= start <= end < 2**32: {key!r}")
    return split


def _utf8(excerpt: object) -> bytes:
    """An excerpt as the table holds it (lone surrogates kept); anything but a str is a ``TypeError``."""
    if not isinstance(excerpt, str):
        raise TypeError(f"an excerpt is a str, not {type(excerpt).__name__}")
    return excerpt.encode("utf-8", "surrogatepass")


class SpanSet(Set[tuple[int, int]]):
    """The ``(start, end)`` spans of one source, a live view of an :class:`ExcerptTable`'s entries
    for it (every span the wiki publishes of the source has its excerpt there)."""

    __slots__ = ("_codes",)

    def __init__(self, codes: Collection[int]) -> None:
        self._codes = codes

    def __contains__(self, span: object) -> bool:
        if type(span) is not tuple or len(span) != 2:
            return False
        code = span_code(span[0], span[1])
        return code is not None and code in self._codes

    def __iter__(self) -> Iterator[tuple[int, int]]:
        return map(_pair, self._codes)

    def __len__(self) -> int:
        return len(self._codes)

    def __repr__(self) -> str:
        return f"SpanSet({sorted(self)!r})"


class _SourceExcerpts:
    """The excerpts of one source: its span codes sorted in one array, their UTF-8 texts end to end
    in one bytes object with an array of where each ends (16 bytes a span beside its text, where a
    dict of ints to bytes took about 120). What is set or deleted waits in a small dict until it
    is sorted in (:data:`_LOOSE` entries, or before an iteration or a pickle)."""

    __slots__ = ("_blob", "_codes", "_loose", "_offsets", "_size")

    def __init__(self) -> None:
        self._codes: array[int] = array("Q")
        self._offsets: array[int] = array("Q", [0])
        self._blob = b""
        self._loose: dict[int, bytes | None] = {}
        self._size = 0

    def _index(self, code: int) -> int:
        codes = self._codes
        at = bisect_left(codes, code)
        return at if at < len(codes) and codes[at] == code else -1

    def get(self, code: int) -> bytes | None:
        loose = self._loose
        if code in loose:
            return loose[code]
        at = self._index(code)
        return None if at < 0 else self._blob[self._offsets[at] : self._offsets[at + 1]]

    def __contains__(self, code: object) -> bool:
        return type(code) is int and self.get(code) is not None

    def __setitem__(self, code: int, data: bytes) -> None:
        if self.get(code) is None:
            self._size += 1
        self._loose[code] = data
        if len(self._loose) > _LOOSE:
            self._settle()

    def __delitem__(self, code: int) -> None:
        if self.get(code) is None:
            raise KeyError(code)
        if self._index(code) >= 0:
            self._loose[code] = None
        else:
            del self._loose[code]
        self._size -= 1

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[int]:
        self._settle()
        return iter(self._codes)

    def items(self) -> Iterator[tuple[int, bytes]]:
        self._settle()
        blob, offsets = self._blob, self._offsets
        for at, code in enumerate(self._codes):
            yield code, blob[offsets[at] : offsets[at + 1]]

    @classmethod
    def sorted_from(cls, excerpts: dict[int, bytes]) -> _SourceExcerpts:
        """The excerpts of ``excerpts`` (span code -> UTF-8), sorted into the arrays at once."""
        made = cls()
        made._hold(excerpts)
        made._size = len(excerpts)
        return made

    def update(self, other: _SourceExcerpts) -> None:
        for code, data in other.items():
            self[code] = data

    def _settle(self) -> None:
        """Sort what waits in with what is held."""
        if not self._loose:
            return
        merged: dict[int, bytes] = {}
        blob, offsets = self._blob, self._offsets
        for at, code in enumerate(self._codes):
            merged[code] = blob[offsets[at] : offsets[at + 1]]
        for code, data in self._loose.items():
            if data is None:
                merged.pop(code, None)
            else:
                merged[code] = data
        self._hold(merged)

    def _hold(self, excerpts: dict[int, bytes]) -> None:
        """Hold exactly ``excerpts``, sorted into the arrays, nothing loose."""
        codes = sorted(excerpts)
        ends, total = [0], 0
        for code in codes:
            total += len(excerpts[code])
            ends.append(total)
        self._blob = b"".join(excerpts[code] for code in codes)
        self._codes, self._offsets = array("Q", codes), array("Q", ends)
        self._loose = {}

    def __getstate__(self) -> tuple[array[int], array[int], bytes, int]:
        self._settle()
        return (self._codes, self._offsets, self._blob, self._size)

    def __setstate__(self, state: tuple[array[int], array[int], bytes, int]) -> None:
        self._codes, self._offsets, self._blob, self._size = state
        self._loose = {}


_LOOSE = 64
"""Excerpts set or deleted that wait to be sorted into a source's arrays."""


class ExcerptTable(MutableMapping[SpanKey, str]):
    """Every verified excerpt of a wiki check by span: a mapping of str, held as UTF-8.

    Python keeps a str with one character past U+00FF at two bytes a character (past U+FFFF,
    four), which scientific text nearly always has (an en dash, a Greek letter, a math sign);
    UTF-8 keeps it at about one. Each reading decodes a fresh str; lone surrogates round-trip
    (``surrogatepass``). :meth:`spans_of` is a source's spans, as a live set.
    """

    __slots__ = ("_by_source", "_count")

    def __init__(self) -> None:
        self._by_source: dict[str, _SourceExcerpts] = {}
        self._count = 0

    @classmethod
    def of(cls, entries: list[tuple[SpanKey, str]]) -> ExcerptTable:
        """The table that setting each of ``entries`` in turn makes (a later excerpt of a span
        replaces an earlier one; the same errors), each source's excerpts sorted into its arrays
        at once: a run's index is made whole, and its entries are never read loose."""
        by_source: dict[str, dict[int, bytes]] = {}
        for key, value in entries:
            data = _utf8(value)
            sid, code = _storable(key)
            held = by_source.get(sid)
            if held is None:
                held = by_source[sid] = {}
            held[code] = data
        table = cls()
        for sid, excerpts in by_source.items():
            table._by_source[sid] = _SourceExcerpts.sorted_from(excerpts)
            table._count += len(excerpts)
        return table

    def _held(self, key: object) -> bytes:
        split = _split(key)
        if split is not None:
            held = self._by_source.get(split[0])
            if held is not None:
                found = held.get(split[1])
                if found is not None:
                    return found
        raise KeyError(key)

    def __getitem__(self, key: SpanKey) -> str:
        return self._held(key).decode("utf-8", "surrogatepass")

    def __setitem__(self, key: SpanKey, value: str) -> None:
        data = _utf8(value)
        sid, code = _storable(key)
        held = self._by_source.get(sid)
        if held is None:
            held = self._by_source[sid] = _SourceExcerpts()
        before = len(held)
        held[code] = data
        self._count += len(held) - before

    def __delitem__(self, key: SpanKey) -> None:
        self._held(key)
        sid, code = _storable(key)
        del self._by_source[sid][code]
        self._count -= 1

    def __iter__(self) -> Iterator[SpanKey]:
        for sid, held in self._by_source.items():
            for code in held:
                start, end = _pair(code)
                yield (sid, start, end)

    def __len__(self) -> int:
        return self._count

    def __contains__(self, key: object) -> bool:
        try:
            self._held(key)
        except KeyError:
            return False
        return True

    def absorb(self, other: ExcerptTable) -> None:
        """Hold every excerpt of ``other`` too (a run's, as its check made them): a source this
        table holds nothing of yet takes ``other``'s entries as they are, so ``other`` must not be
        changed afterwards. An excerpt of a span held already replaces it (a span of one source id
        has one text: the id is the text's address)."""
        for sid, incoming in other._by_source.items():
            held = self._by_source.get(sid)
            if held is None:
                self._by_source[sys.intern(sid)] = incoming
                self._count += len(incoming)
            else:
                before = len(held)
                held.update(incoming)
                self._count += len(held) - before

    def spans_of(self, source_id: str) -> SpanSet:
        """The spans of ``source_id`` that have an excerpt here, as a live view."""
        held = self._by_source.get(source_id)
        if held is None:
            held = self._by_source[source_id] = _SourceExcerpts()
        return SpanSet(held)

    def __repr__(self) -> str:
        return f"ExcerptTable({self._count} excerpts)"


_Use = int
"""A claim citing a span: its artifact's index in the run's list of artifact ids times
:data:`_WIDE`, plus the claim's index in the artifact."""


class AcceptedSpans(Mapping[SpanKey, list[tuple[str, int]]]):
    """What one run accepts now: every accepted claim's span -> ``[(artifact_id, claim index),
    ...]`` of the claims citing it, in the order they were added. Each reading is a fresh list.

    Held as two arrays of machine ints per source, sorted by span (a span once per claim citing
    it), searched by bisection: 16 bytes a claim, where a dict of ints took about 140. What is
    added is sorted in when next read (or pickled).
    """

    __slots__ = ("_artifacts", "_codes", "_count", "_pending", "_uses")

    def __init__(self) -> None:
        self._codes: dict[str, array[int]] = {}
        self._uses: dict[str, array[int]] = {}
        self._artifacts: list[str] = []
        self._pending: dict[str, list[tuple[int, _Use]]] = {}
        self._count = 0

    @classmethod
    def of(cls, claims: list[tuple[SpanKey, str, int]]) -> AcceptedSpans:
        """The table of ``claims`` (span, artifact id, claim index), added in turn (:meth:`add`)."""
        table = cls()
        for key, artifact_id, index in claims:
            table.add(key, artifact_id, index)
        return table

    def add(self, key: SpanKey, artifact_id: str, index: int) -> None:
        """Record that claim ``index`` of artifact ``artifact_id`` cites ``key``."""
        sid, code = _storable(key)
        if type(index) is not int or not 0 <= index < _WIDE:
            raise ValueError(f"a claim index is an int in [0, 2**32), not {index!r}")
        artifacts = self._artifacts
        if not artifacts or artifacts[-1] != artifact_id:  # an artifact's claims come together
            artifacts.append(artifact_id)
        self._pending.setdefault(sid, []).append((code, (len(artifacts) - 1) * _WIDE + index))

    def _settle(self) -> None:
        """Sort what was added in with what is held (stable: a span's claims keep their order)."""
        if not self._pending:
            return
        for sid, added in self._pending.items():
            held = self._codes.get(sid)
            pairs = list(zip(held, self._uses[sid], strict=True)) if held is not None else []
            pairs += added
            pairs.sort(key=lambda pair: pair[0])
            self._codes[sid] = array("Q", [code for code, _ in pairs])
            self._uses[sid] = array("Q", [use for _, use in pairs])
        self._pending = {}
        self._count = sum(_distinct(codes) for codes in self._codes.values())

    def __getstate__(self) -> object:
        self._settle()
        return super().__getstate__()

    def _range(self, key: object) -> tuple[str, int, int]:
        """``(source_id, lo, hi)``: where ``key``'s claims lie in its source's arrays."""
        self._settle()
        split = _split(key)
        if split is not None:
            codes = self._codes.get(split[0])
            if codes is not None:
                lo = bisect_left(codes, split[1])
                hi = bisect_right(codes, split[1], lo)
                if lo < hi:
                    return split[0], lo, hi
        raise KeyError(key)

    def __getitem__(self, key: SpanKey) -> list[tuple[str, int]]:
        sid, lo, hi = self._range(key)
        artifacts = self._artifacts
        return [(artifacts[at], index) for at, index in map(_pair, self._uses[sid][lo:hi])]

    def __contains__(self, key: object) -> bool:
        try:
            self._range(key)
        except KeyError:
            return False
        return True

    def __iter__(self) -> Iterator[SpanKey]:
        self._settle()
        for sid, codes in self._codes.items():
            last = -1
            for code in codes:
                if code != last:
                    start, end = _pair(code)
                    yield (sid, start, end)
                    last = code

    def __len__(self) -> int:
        self._settle()
        return self._count

    def sources(self) -> list[str]:
        """The source ids of the accepted spans, sorted."""
        self._settle()
        return sorted(sid for sid, codes in self._codes.items() if codes)

    def __repr__(self) -> str:
        return f"AcceptedSpans({len(self)} spans, {len(self._artifacts)} artifacts)"


def _distinct(codes: array[int]) -> int:
    """How many distinct values a sorted array holds."""
    count, last = 0, -1
    for code in codes:
        if code != last:
            count, last = count + 1, code
    return count
