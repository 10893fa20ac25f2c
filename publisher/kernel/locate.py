"""The quote locator: where in a snapshot's text a quote (or a search term) really is.

Pure functions, no I/O. An agent often quotes a passage with a doubled space, typographic
quotation marks, a different dash or an ellipsis where it left words out; an exact search then
finds nothing and the agent guesses offsets. The locator turns a quote into *candidate* offsets,
each a half-open code-point range into the raw text, in three tiers tried in order:

1. ``exact``: the quote occurs verbatim.
2. ``normalized``: the quote occurs once both sides are normalised by :func:`normalize` (NFKC,
   typographic quotation marks and dashes folded to ASCII, every whitespace run collapsed to one
   space). Each match is mapped back to raw offsets through a position map, so ``text[start:end]``
   is always the raw passage, starting and ending on whole raw characters, and normalises to the
   normalised quote (a match that would cut through a character whose normal form is longer, such
   as a ligature, is never suggested).
3. ``fragments``: the quote is split at its ellipses (``...``, ``…``, ``[...]``) and every part is
   found, normalised, in order, the whole within :data:`~publisher.kernel.spans.MAX_SPAN` code
   points; the candidate covers the first part's start to the last part's end and lists the parts.
   A quote of more than :data:`MAX_FRAGMENTS` parts gets no fragments candidate (chaining that many
   parts through a long text is work an agent's quote must not be able to demand).

Every candidate of the first tier that finds any is returned (a quote that occurs twice has two).
The locator only *suggests*: nothing it returns is ever accepted as evidence; offsets count only
once the gate re-slices them and the re-slice equals what is quoted.

:func:`find_term` is the search behind document reviews and the report-prose quotation check: every
occurrence of a term, exact and normalised together, each with its kind.

Hostile text can make a search do far more work than its answer shows (a million near-matches that
all fail the re-check, a term that lands inside every ligature, a short fragment found everywhere),
so :func:`search_term` and :func:`search_quote` take a :class:`Budget` of work units (never
seconds) and say when they stopped at it; a caller that stopped must never report "not found".
:func:`normal_form` remembers the normal form of the last few texts, so a text searched again (every
stored review of one snapshot, at every build) is normalised once per process.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from bisect import bisect_left
from collections import OrderedDict, deque
from collections.abc import Callable, Collection, Generator, Iterator
from typing import Literal, cast

from .frozen import FrozenValue
from .segmented import SegmentedText
from .spans import MAX_SPAN

__all__ = [
    "CHECK_OVERHEAD",
    "FIND_STRIDE",
    "LOCATE_BUDGET",
    "MAX_CANDIDATES",
    "MAX_FRAGMENTS",
    "MAX_REMEMBERED",
    "NON_ASCII_COST",
    "OCCURRENCE_COST",
    "REMEMBERED_CODE_POINTS",
    "STREAM_ABOVE",
    "Budget",
    "Candidate",
    "Fragment",
    "Normalized",
    "Occurrence",
    "Text",
    "check_cost",
    "find_term",
    "search_term",
    "search_terms",
    "locate",
    "search_quote",
    "nearest",
    "normal_form",
    "forget_normal_forms",
    "normalize",
    "normalize_map",
    "split_fragments",
]

MAX_CANDIDATES = 200
"""Most candidates (or occurrences) returned for one quote; the first ones in text order."""

MAX_FRAGMENTS = 32
"""Most parts a quote may be split into at its ellipses and still be located in fragments."""

OCCURRENCE_COST = 3
"""What examining one occurrence of a normalised term costs a :class:`Budget`: about the time
normalising three ASCII code points again takes, so that occurrences that are never checked
(inside what one raw character produced) are bounded too."""

NON_ASCII_COST = 16
"""What normalising one code point outside ASCII costs a :class:`Budget` (an ASCII one costs one):
each goes through NFKC on its own, about sixteen times the work (measured: combining marks,
ligatures, no-break spaces, Greek, CJK)."""

CHECK_OVERHEAD = 5
"""What normalising a raw slice again costs a :class:`Budget` beyond its code points: the call
itself (measured: about 2.3 µs, what five ASCII code points cost), so that a short part found
everywhere (a fragment of one word) is not checked for almost nothing."""

FIND_STRIDE = 64
"""Code points of a term that finding its next occurrence costs one unit of a :class:`Budget` for,
on top of :data:`OCCURRENCE_COST`: each search for the next occurrence starts over with the whole
term (measured: about 3 ns a code point, some sixty times less than normalising one), so a
2,000-code-point term occurring at every position of a long text costs seconds unless counted."""

LOCATE_BUDGET = 2_000_000
"""The work :func:`search_quote` may do for one quote (or a caller for all its quotes together)
where an agent or a record supplies the quote: under a second at worst (see :class:`Budget`)."""

MAX_REMEMBERED = 4
"""Most texts whose normal form :func:`normal_form` keeps (the most recently used ones)."""

REMEMBERED_CODE_POINTS = 1_000_000
"""Most code points of normal forms, all kept texts together, that :func:`normal_form` keeps (a
normal form holds about 80 bytes a code point with its position map, and one raw code point can
become eighteen: counted on the normal form, some 80 MB at most, in a build or a tool server
that lives on); the most recent one is kept whatever its length (it was just built: keeping it
costs no more memory than the search that built it held)."""

Kind = Literal["exact", "normalized", "fragments"]

Text = str | SegmentedText
"""A text searched: a string, or a long one read a piece at a time (:func:`search_term` finds the
same occurrences in both)."""

# Typographic marks folded to their ASCII look-alikes after NFKC (which leaves these alone).
_FOLDS = str.maketrans(
    {
        "\u2018": "'",  # left single quotation mark
        "\u2019": "'",  # right single quotation mark
        "\u201a": "'",  # single low-9 quotation mark
        "\u201b": "'",  # single high-reversed-9 quotation mark
        "\u2032": "'",  # prime
        "\u201c": '"',  # left double quotation mark
        "\u201d": '"',  # right double quotation mark
        "\u201e": '"',  # double low-9 quotation mark
        "\u201f": '"',  # double high-reversed-9 quotation mark
        "\u2033": '"',  # double prime
        "\u00ab": '"',  # left-pointing double angle quotation mark
        "\u00bb": '"',  # right-pointing double angle quotation mark
        "\u2010": "-",  # hyphen
        "\u2011": "-",  # non-breaking hyphen
        "\u2012": "-",  # figure dash
        "\u2013": "-",  # en dash
        "\u2014": "-",  # em dash
        "\u2015": "-",  # horizontal bar
        "\u2212": "-",  # minus sign
        "\ufe58": "-",  # small em dash
        "\ufe63": "-",  # small hyphen-minus
    }
)

_ELLIPSIS_RE = re.compile(r"\s*[\[(]?\s*\.{3,}\s*[\])]?\s*")
"""An ellipsis in a normalised quote (NFKC has already turned ``…`` into ``...``), with any
brackets around it and the white space either side."""


class Fragment(FrozenValue):
    """One part of a ``fragments`` candidate: a half-open raw code-point range. The value classes
    of this module are frozen and equal by their fields (:class:`~.frozen.FrozenValue`: no
    dataclass methods compiled when a command imports the locator)."""

    __slots__ = ("end", "start")
    _fields = ("start", "end")
    start: int
    end: int

    def __init__(self, start: int, end: int) -> None:
        object.__setattr__(self, "start", start)  # set one by one: made for every match found
        object.__setattr__(self, "end", end)


class Candidate(FrozenValue):
    """Offsets where a quote may be: ``text[start:end]`` is the raw passage; a suggestion only.

    ``fragments``: for kind ``fragments``, each part's raw range, in order (empty for the other
    kinds)."""

    __slots__ = ("end", "fragments", "kind", "start")
    _fields = ("kind", "start", "end", "fragments")
    kind: Kind
    start: int
    end: int
    fragments: tuple[Fragment, ...]

    def __init__(self, kind: Kind, start: int, end: int, fragments: tuple[Fragment, ...] = ()) -> None:
        setattr_ = object.__setattr__  # one by one: made for every match found
        setattr_(self, "kind", kind)
        setattr_(self, "start", start)
        setattr_(self, "end", end)
        setattr_(self, "fragments", fragments)

    def as_json(self) -> dict[str, object]:
        """The shape of CONTRACT section 15: ``fragments`` only for kind ``fragments``."""
        out: dict[str, object] = {"kind": self.kind, "start": self.start, "end": self.end}
        if self.kind == "fragments":
            out["fragments"] = [{"start": f.start, "end": f.end} for f in self.fragments]
        return out


class Occurrence(FrozenValue):
    """One occurrence of a search term: raw offsets and how it was found (``exact`` or ``normalized``)."""

    __slots__ = ("end", "kind", "start")
    _fields = ("kind", "start", "end")
    kind: Literal["exact", "normalized"]
    start: int
    end: int

    def __init__(self, kind: Literal["exact", "normalized"], start: int, end: int) -> None:
        setattr_ = object.__setattr__  # one by one: made for every occurrence found
        setattr_(self, "kind", kind)
        setattr_(self, "start", start)
        setattr_(self, "end", end)


class Budget:
    """The work searches may still do, shared by every search it is passed to.

    Each occurrence found (verbatim or normalised) costs :data:`OCCURRENCE_COST` and a unit per
    :data:`FIND_STRIDE` code points of what is searched, and :func:`check_cost` of its raw slice when
    that is normalised again to check it (a verbatim occurrence needs no check): a long term over a
    repetitive text, a short one over long white-space runs, or one that keeps landing inside what a
    ligature produced would otherwise cost seconds to minutes. A search that finds ``left`` spent
    stops before its next occurrence and says so; one budget passed to many searches bounds them all
    together (a document review's terms, an assembly's mismatched quotes).
    """

    __slots__ = ("left",)

    def __init__(self, left: int) -> None:
        self.left = left

    def __repr__(self) -> str:
        return f"Budget(left={self.left!r})"

    def __eq__(self, other: object) -> bool:
        return self.left == other.left if other.__class__ is self.__class__ else NotImplemented

    __hash__ = None  # type: ignore[assignment]  # a mutable budget is not hashed (as its dataclass was not)


class Normalized(FrozenValue):
    """A text's normal form with, for each of its code points, the raw range it came from.

    ``text[i]`` was produced by ``raw[starts[i]:ends[i]]``: a whole raw character, a cluster of a
    base and its combining marks (normalised together, as NFKC composes them), or a whole white
    space run (for its one space). The ranges never go backwards.
    """

    __slots__ = ("ends", "starts", "text")
    _fields = ("text", "starts", "ends")
    text: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]

    def __init__(self, text: str, starts: tuple[int, ...], ends: tuple[int, ...]) -> None:
        self._init(text, starts, ends)

    def raw_range(self, start: int, end: int) -> tuple[int, int] | None:
        """The raw range behind the normalised range ``[start, end)``, or None when ``start`` or
        ``end`` falls inside what one raw cluster produced (such a range has no raw slice)."""
        if start >= end:
            return None
        starts, ends = self.starts, self.ends
        if start > 0 and ends[start - 1] > starts[start]:
            return None
        if end < len(starts) and ends[end - 1] > starts[end]:
            return None
        return starts[start], ends[end - 1]


def _fold(piece: str, fold_case: bool) -> str:
    out = unicodedata.normalize("NFKC", piece).translate(_FOLDS)
    return out.casefold() if fold_case else out


def _cluster_end(text: str, i: int, n: int | None = None) -> int:
    """The end of the cluster starting at ``i`` (at most ``n``, the text's end by default): the raw
    characters NFKC must see together.

    An ASCII character never combines with what precedes it; any other character joins the cluster
    while normalising the two together differs from normalising them apart (a combining mark, a
    conjoining jamo).
    """
    if n is None:
        n = len(text)
    j = i + 1
    if j == n or text[j].isascii():
        return j
    piece = unicodedata.normalize("NFKC", text[i:j])
    while j < n and not text[j].isascii():
        joined = unicodedata.normalize("NFKC", text[i : j + 1])
        if joined == piece + unicodedata.normalize("NFKC", text[j]):
            break
        piece = joined
        j += 1
    return j


def normalize_map(text: str, *, fold_case: bool = False, lo: int = 0, hi: int | None = None) -> Normalized:
    """``text`` normalised as the locator compares it, with the position map back to raw offsets.

    NFKC, typographic quotation marks and dashes folded to ASCII, every white space run (after
    NFKC, so a no-break space counts) collapsed to one space; ``fold_case`` also case-folds.
    Leading and trailing white space is kept (as one space) so that offsets stay aligned.
    ``lo``/``hi`` normalise only ``text[lo:hi]``, its map still in offsets of ``text``: cut where
    :func:`_cut_at` allows, the pieces' normal forms put end to end are the whole text's.
    """
    out: list[str] = []  # pieces of the normal form (a space in them stands for white space)
    starts: list[int] = []
    ends: list[int] = []
    n = len(text) if hi is None else hi
    i = lo
    stretches = _ASCII_STRETCH.finditer(text, lo, n)  # long runs of ASCII, taken a stretch at a time
    stretch = next(stretches, None)
    at = n if stretch is None else stretch.start()
    while i < n:
        if i >= at and stretch is not None:
            if i == at:  # always so: a cluster starts every stretch (it never begins with ASCII)
                # The last ASCII character before another is a cluster's start (a mark may follow).
                end = n if stretch.end() == n else stretch.end() - 1
                _ascii_run(text, i, end, fold_case, out, starts, ends)
                i = end
            stretch = next(stretches, None)
            at = n if stretch is None else stretch.start()
            continue
        ch = text[i]
        if ch.isascii() and (i + 1 == n or text[i + 1].isascii()):
            j = i + 1
            piece = ch.lower() if fold_case else ch
        else:
            j = _cluster_end(text, i, n)
            piece = _fold(text[i:j], fold_case)
        for c in piece:
            if c.isspace():
                if out and out[-1][-1] == " ":  # the run goes on: its one space covers this cluster too
                    ends[-1] = j
                    continue
                c = " "
            out.append(c)
            starts.append(i)
            ends.append(j)
        i = j
    return Normalized("".join(out), tuple(starts), tuple(ends))


_ASCII_STRETCH = re.compile(r"[\x00-\x7f]{17,}")
"""17 or more ASCII characters in a row: taken a stretch at a time (fewer go one by one, faster for
them than finding where they end)."""
_ASCII_SPACE = "".join(c for c in map(chr, range(128)) if c.isspace())
_AS_SPACE = str.maketrans(dict.fromkeys(_ASCII_SPACE, " "))
_ASCII_RUN = re.compile(f"[{re.escape(_ASCII_SPACE)}]{{2,}}")
"""Two or more ASCII white-space characters (what ``str.isspace`` calls white space) in a row."""


def _ascii_run(
    text: str, start: int, end: int, fold_case: bool, out: list[str], starts: list[int], ends: list[int]
) -> None:
    """Append the normal form of ``text[start:end]``, all ASCII and none of it combining with what
    follows, to ``out`` with its position map: each character stands for itself (lower-cased with
    ``fold_case``, a white-space character as a space), each run of white space for one space
    (which lengthens the run just before it, if any). Between two runs the map is one to one, so
    it is built a stretch at a time: plain text is mostly this."""
    segment = text[start:end]
    if fold_case:
        segment = segment.lower()
    pos = 0
    for run in [*_ASCII_RUN.finditer(segment), None]:
        stop = len(segment) if run is None else run.start()
        if pos < stop and segment[pos] in _ASCII_SPACE and out and out[-1][-1] == " ":
            ends[-1] = start + pos + 1  # a white-space character that goes on the run before
            pos += 1
        if pos < stop:
            out.append(segment[pos:stop].translate(_AS_SPACE))
            starts.extend(range(start + pos, start + stop))
            ends.extend(range(start + pos + 1, start + stop + 1))
        if run is None:
            return
        if out and out[-1][-1] == " ":
            ends[-1] = start + run.end()
        else:
            out.append(" ")
            starts.append(start + run.start())
            ends.append(start + run.end())
        pos = run.end()


STREAM_ABOVE = REMEMBERED_CODE_POINTS
"""Texts longer than this are searched a block at a time (:func:`_stream`) instead of through
a normal form of the whole text, whose position map holds some 80 bytes a code point: a 200 MB
snapshot would need about 16 GB."""

BLOCK = 1 << 16
"""Raw code points a streamed search takes at a time (a few MB at most, let go before the next)."""

_CUT_PATTERN = (
    "[!-~\u0400-\u04ff\u0391-\u03c9\u0621-\u064a\u3041-\u3096\u30a1-\u30fa\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3]"
)
"""Characters that always start a cluster of their own and normalise to no white space: printable
ASCII other than the space, and the letters of the Cyrillic, Greek, Arabic, kana, CJK and Hangul
syllable blocks (starters that no preceding character composes with). The normal form of a text cut
before one is the normal forms of the two parts put end to end, map included."""

_cut_re: re.Pattern[str] | None = None
""":data:`_CUT_PATTERN` compiled, on the first cut: its code-point ranges cost some 10 ms of CPU to
compile, which a command that never normalises a text (``source read``) should not pay."""

_FOLD_PAIRS = tuple((chr(key), value) for key, value in _FOLDS.items() if isinstance(value, str))
"""The typographic folds as pairs (``str.replace`` a pair at a time outruns ``str.translate`` with a
table some twenty times)."""


_CUT_LOOK = 4096
"""Code points of a segmented text first looked at for the next cut (twice as many each time)."""


def _cut_at(text: Text, at: int) -> int:
    """The first position at or after ``at`` where a text may be cut for normalising (see
    :data:`_CUT_PATTERN`), or the text's length."""
    global _cut_re
    if _cut_re is None:
        _cut_re = re.compile(_CUT_PATTERN)
    if isinstance(text, str):
        found = _cut_re.search(text, at)
        return len(text) if found is None else found.start()
    n, span = len(text), _CUT_LOOK  # the pattern is one character: looked for a slice at a time
    while at < n:
        part = text[at : at + span]
        found = _cut_re.search(part)
        if found is not None:
            return at + found.start()
        at, span = at + len(part), span * 2
    return n


def _normal_text(text: str, lo: int, hi: int, fold_case: bool) -> str:
    """``normalize_map(text, fold_case=fold_case, lo=lo, hi=hi).text`` without the map, at the speed
    of the library's own passes: NFKC of the whole piece is NFKC of each of its clusters put end to
    end (that is how clusters are cut), and the folds, case folding and white-space runs act a
    character at a time."""
    piece = text[lo:hi]
    wide = False
    if not piece.isascii():
        piece = _nfkc_of_runs(piece)
        for mark, folded in _FOLD_PAIRS:
            if mark in piece:
                piece = piece.replace(mark, folded)
        wide = not piece.isascii() and any(space in piece for space in _WIDE_SPACES)
    if fold_case:
        piece = piece.casefold()
    if wide:  # rare: white space outside ASCII that NFKC keeps is white space all the same
        for space in _WIDE_SPACES:
            piece = piece.replace(space, " ")
    return _one_space(piece)


_WIDE_SPACES = "\x85\u1680\u2028\u2029"
"""The white space outside ASCII that NFKC and case folding leave as it is: NFKC makes every other
such character a space (the tests check this against every code point). :func:`_normal_text` looks
for these only in a block that is not ASCII once normalised."""

_NARROW_SPACES = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f"
"""The ASCII white space (what ``str.isspace`` calls white space) other than the space itself."""

_SPACE_RUN = re.compile(" +")


def _one_space(piece: str) -> str:
    """Every white-space run of ``piece`` as one space, at the ends too (what ``" ".join(piece.split())``
    does in between), where none of its white space lies outside ASCII: each other white-space
    character becomes a space, then each run of spaces one. Prose has few runs, so finding them
    beats splitting the piece into its words some threefold."""
    for space in _NARROW_SPACES:
        if space in piece:
            piece = piece.replace(space, " ")
    at = piece.find("  ")
    if at == -1:
        return piece
    out: list[str] = []
    pos = 0
    while at != -1:
        run = _SPACE_RUN.match(piece, at)
        end = run.end() if run is not None else at + 2  # always a match: two spaces start there
        out.append(piece[pos : at + 1])
        pos = end
        at = piece.find("  ", end)
    out.append(piece[pos:])
    return "".join(out)


def _nfkc_of_runs(piece: str) -> str:
    """``piece`` with NFKC taken as :func:`normalize_map` takes it (cluster by cluster), looking only
    at its runs of code points outside ASCII, each with the ASCII character before it (a combining
    mark's base): ASCII is its own normal form and starts a cluster of its own. A run NFKC leaves
    as it is is left so cluster by cluster too; any other is cut into the map's clusters. Prose is
    mostly ASCII, and normalising every character costs some four times more than finding the few
    that need it (the ASCII codec marks each of them with a ``?``, at the speed of a copy)."""
    marked = piece.encode("ascii", "replace")
    out: list[str] = []
    pos, n = 0, len(piece)
    i = marked.find(b"?")
    while i != -1:
        if piece[i] == "?":  # a question mark of the text itself
            i = marked.find(b"?", i + 1)
            continue
        j = i + 1
        while j < n and not piece[j].isascii():
            j += 1
        base = i - 1 if i > pos else i  # everything from ``pos`` to ``i`` is ASCII
        out.append(piece[pos:base])
        run = piece[base:j]
        normal = unicodedata.normalize("NFKC", run)
        if normal != run and j - i > 1:  # the map normalises each cluster apart: a mark may not
            # compose across one. One code point outside ASCII (after its base, or alone) is one
            # cluster with the base, or two whose normal forms put together are the run's.
            normal = "".join(_clusters_normal(piece, base, j))
        out.append(normal)
        pos = j
        i = marked.find(b"?", j)
    out.append(piece[pos:])
    return "".join(out)


def _clusters_normal(text: str, lo: int, hi: int) -> Iterator[str]:
    """NFKC of each cluster of ``text[lo:hi]`` in turn, cut as :func:`normalize_map` cuts them."""
    while lo < hi:
        end = _cluster_end(text, lo, hi)
        yield unicodedata.normalize("NFKC", text[lo:end])
        lo = end


def _only_verbatim(text: Text, needle: str, window: str, ends: list[int], lo: int, hi: int) -> bool:
    """Whether the occurrences of ``needle`` in ``window`` (the normal form reaching into
    ``text[lo:hi]``) are just the verbatim ones ending there (``ends``: every verbatim occurrence's
    end, sorted). A verbatim occurrence of an ASCII term that is its own normal form, with an ASCII
    character (or the end) after it, is whole clusters and normalises to one occurrence of the
    needle ending in the block: as many occurrences as such verbatim ones means no other."""
    first, last = bisect_left(ends, lo + 1), bisect_left(ends, hi + 1)
    if any(end < len(text) and not text[end].isascii() for end in ends[first:last]):
        return False  # a combining mark after it joins its last character's cluster
    count, at = 0, window.find(needle)
    while at != -1:
        count += 1
        at = window.find(needle, at + 1)
    return count == last - first


class _Streamed:
    """One needle's search in :func:`_stream`: what it looks for, may find and has found."""

    def __init__(
        self, needle: str, limit: int, budget: Budget | None, exact: Collection[tuple[int, int]], simple: bool
    ) -> None:
        self.needle, self.limit, self.budget, self.exact, self.simple = needle, limit, budget, exact, simple
        self.ends = sorted(end for _, end in exact) if simple else []
        self.hits: list[tuple[int, int]] = []
        self.stopped = False

    @property
    def done(self) -> bool:
        return self.stopped or len(self.hits) >= self.limit


def _stream(text: Text, fold_case: bool, searches: list[_Streamed], ahead: Callable[[int], None] | None = None) -> None:
    """:func:`_normalized_hits` of each of several needles over ``text`` a :data:`BLOCK` at a time,
    never normalised whole, in one pass.

    Each block, cut where :func:`_cut_at` allows, is normalised once without a map, for every
    needle. Only a block whose normal form, after the last ``len(needle) - 1`` code points of what
    came before it, holds a needle is mapped, together with as many blocks before it as those code
    points come from (a block of white space normalises to one), and searched from where an
    occurrence could first reach into it: an occurrence is found once, with the block it ends in.
    The blocks kept before are those the longest needle may reach back into; a shorter one looks
    only as far back as its own length, so every needle finds, stops and is paid for as alone. A
    ``simple`` search (an ASCII term that is its own normal form, ``exact`` holding its verbatim
    occurrences) does not map a block whose normal form holds only those (:func:`_only_verbatim`).
    ``ahead``, when given, is called with each block's end before the block is searched (see
    :func:`_search_far`)."""
    n = len(text)
    lo = 0
    before: deque[tuple[int, str]] = deque()  # the blocks before: their starts and normal forms
    longest = max((len(search.needle) for search in searches), default=0)
    while lo < n and not all(search.done for search in searches):
        hi = _cut_at(text, min(n, lo + BLOCK))
        if ahead is not None:
            ahead(hi)
            if all(search.done for search in searches):
                break
        if isinstance(text, str):
            normal = _normal_text(text, lo, hi, fold_case)
        else:
            block = text[lo:hi]
            normal = _normal_text(block, 0, len(block), fold_case)
        prev = "".join(part for _, part in before)
        local: str | None = None
        norm: Normalized | None = None  # mapped once for every needle that needs it
        for search in searches:
            needle = search.needle
            if search.done:
                continue
            reach = max(0, len(prev) - len(needle) + 1)
            tail = prev[reach:]  # an occurrence reaching back into it ends in the seam, not copied whole
            if needle not in normal and needle not in tail + normal[: len(needle) - 1]:
                continue
            window = tail + normal
            if search.simple and _only_verbatim(text, needle, window, search.ends, lo, hi):
                continue
            first = before[0][0] if before else lo
            left = search.limit - len(search.hits)
            if isinstance(text, str):
                if norm is None:
                    norm = normalize_map(text, fold_case=fold_case, lo=first, hi=hi)
                found, stopped = _normalized_hits(
                    text, norm, needle, fold_case, left, search.budget, search.exact, reach
                )
            else:  # the same map, of the blocks' own string (its offsets shifted back)
                if local is None or norm is None:
                    local = text[first:hi]
                    norm = normalize_map(local, fold_case=fold_case)
                found, stopped = _normalized_hits(
                    local, norm, needle, fold_case, left, search.budget, search.exact, reach, first
                )
            search.hits.extend(found)
            search.stopped = stopped
        before.append((lo, normal))
        held = len(prev) + len(normal)
        while before and held - len(before[0][1]) >= longest - 1:
            held -= len(before.popleft()[1])
        lo = hi


_remembered: OrderedDict[tuple[str, bool], Normalized] = OrderedDict()
_remembered_lock = threading.Lock()


def normal_form(text: str, *, fold_case: bool = False) -> Normalized:
    """:func:`normalize_map` of ``text``, built once for the last few texts searched.

    Keyed by the text itself (so an entry can never answer for other bytes), at most
    :data:`MAX_REMEMBERED` texts and :data:`REMEMBERED_CODE_POINTS` normalised code points together, least
    recently used first out. The pass is linear in the text, but a snapshot searched again and
    again (every stored review of it re-executed at every build, every tool call of an agent)
    would pay it each time.
    """
    key = (text, fold_case)
    with _remembered_lock:  # the tool server runs its tools on worker threads
        found = _remembered.get(key)
        if found is not None:
            _remembered.move_to_end(key)
            return found
    found = normalize_map(text, fold_case=fold_case)  # outside the lock: seconds for a large text
    with _remembered_lock:
        _remembered[key] = found
        _remembered.move_to_end(key)
        held = sum(len(kept.text) for kept in _remembered.values())
        while len(_remembered) > 1 and (len(_remembered) > MAX_REMEMBERED or held > REMEMBERED_CODE_POINTS):
            _, dropped = _remembered.popitem(last=False)
            held -= len(dropped.text)
    return found


def forget_normal_forms() -> None:
    """Let go of every normal form :func:`normal_form` keeps: a pass that searched many texts (a
    run's checks on a worker, a wiki's claims) calls it when done, so that the last text it
    normalised, kept whatever its length, does not stay resident under what comes next."""
    with _remembered_lock:
        _remembered.clear()


def normalize(text: str, *, fold_case: bool = False) -> str:
    """``text`` in the locator's normal form (see :func:`normalize_map`), trimmed at both ends."""
    return normalize_map(text, fold_case=fold_case).text.strip(" ")


def split_fragments(quote: str) -> list[str]:
    """The normalised, non-empty parts of a quote split at its ellipses (``...``, ``…``, ``[…]``)."""
    return [part.strip(" ") for part in _ELLIPSIS_RE.split(normalize(quote)) if part.strip(" ")]


def _find_cost(needle: str) -> int:
    """What finding the next occurrence of ``needle`` costs a :class:`Budget` (see there)."""
    return OCCURRENCE_COST + len(needle) // FIND_STRIDE


def _paid(budget: Budget | None, cost: int) -> bool:
    """Pay ``cost`` for the next step of a search; False (nothing paid) once ``budget`` is spent.
    The step that spends the last of it is still taken: a budget never stops a search midway."""
    if budget is None:
        return True
    if budget.left <= 0:
        return False
    budget.left -= cost
    return True


def _exact(text: Text, quote: str, limit: int, budget: Budget | None = None) -> tuple[list[tuple[int, int]], bool]:
    """The first ``limit`` verbatim occurrences (overlapping ones included), and whether ``budget``
    stopped the search first."""
    if not isinstance(text, str):
        return _drained(_exact_steps(text, quote, limit, budget))
    hits: list[tuple[int, int]] = []
    cost = _find_cost(quote)
    i = text.find(quote)
    while i != -1 and len(hits) < limit:
        if not _paid(budget, cost):
            return hits, True
        hits.append((i, i + len(quote)))
        i = text.find(quote, i + 1)
    return hits, False


_Steps = Generator[int, None, tuple[list[tuple[int, int]], bool]]
"""A verbatim search taken a stretch at a time: it yields where it has looked up to, and returns
what :func:`_exact` returns."""


def _exact_steps(
    text: Text, quote: str, limit: int, budget: Budget | None, hits: list[tuple[int, int]] | None = None
) -> _Steps:
    """:func:`_exact` a :data:`BLOCK` of starts at a time (the same occurrences, paid for in the
    same order), so that searches go through a segmented text together and each piece is decoded
    once for all of them (:func:`_search_far`); ``hits`` collects the occurrences as they are found."""
    hits = [] if hits is None else hits
    cost = _find_cost(quote)
    n, m, at = len(text), len(quote), 0
    while at < n:
        stop = min(n, at + BLOCK)
        i = text.find(quote, at, stop + m - 1)  # the occurrences that start before ``stop``
        while i != -1 and len(hits) < limit:
            if not _paid(budget, cost):
                return hits, True
            hits.append((i, i + m))
            i = text.find(quote, i + 1, stop + m - 1)
        if len(hits) >= limit:
            break
        at = stop
        yield at
    return hits, False


def _drained(steps: _Steps) -> tuple[list[tuple[int, int]], bool]:
    """What a search taken a stretch at a time returns, all its steps taken."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            result: tuple[list[tuple[int, int]], bool] = done.value
            return result


def _case_key(ch: str) -> str:
    """One code point standing for every code point a case-insensitive regular expression takes
    for ``ch`` (and a few more: ``ß`` and ``s`` share one): its lower case, through upper and
    lower case again (``ı``, ``ſ``, ``ς``, the Kelvin sign) and case folding (``ẞ``, ``µ``), each
    time the first code point. Checked over every code point against :mod:`re`'s own tables."""
    return ch.lower()[0].upper()[0].lower()[0].casefold()[0]


def _caseless_exact(
    text: Text, term: str, limit: int, budget: Budget | None = None
) -> tuple[list[tuple[int, int]], bool]:
    """The first ``limit`` occurrences of ``term`` as ``re.IGNORECASE`` matches it, and whether
    ``budget`` stopped the search first.

    Scanning with the regular expression costs the text's length times the term's at worst (a
    term of a thousand ``a`` and a ``b`` over a text of ``a``), so both are mapped, one code point
    for one, to :func:`_case_key` and searched as plain strings (linear), and each position found
    is confirmed by the regular expression there (the key is coarser than its case rules). A text
    over :data:`STREAM_ABOVE` is keyed a :data:`BLOCK` at a time (each with the term's length less
    one after it), never copied whole."""
    return _drained(_caseless_steps(text, term, limit, budget))


def _caseless_steps(
    text: Text, term: str, limit: int, budget: Budget | None, hits: list[tuple[int, int]] | None = None
) -> _Steps:
    """:func:`_caseless_exact` a window at a time (see :func:`_exact_steps`)."""
    pattern = re.compile(re.escape(term), re.IGNORECASE)
    hits = [] if hits is None else hits
    cost = _find_cost(term) + len(term) // FIND_STRIDE  # the find, then the confirmation
    step = max(1, len(text) if len(text) <= STREAM_ABOVE else BLOCK)
    for lo in range(0, len(text), step):
        window = text[lo : lo + step + len(term) - 1]
        if window.isascii() and term.isascii():
            keyed, key = window.lower(), term.lower()
        else:
            table = {ord(c): k for c in set(window).union(term) if (k := _case_key(c)) != c}
            keyed, key = window.translate(table), term.translate(table)
        i = keyed.find(key)
        while i != -1 and i < step and len(hits) < limit:
            if not _paid(budget, cost):
                return hits, True
            match = pattern.match(window, i)  # a literal: the window holds all it can match
            if match is not None:
                hits.append((lo + i, lo + match.end()))
            i = keyed.find(key, i + 1)
        if len(hits) >= limit:
            break
        yield lo + step
    return hits, False


def check_cost(piece: str) -> int:
    """What normalising ``piece`` again costs a :class:`Budget`: :data:`CHECK_OVERHEAD` and its
    length, with every code point outside ASCII counted :data:`NON_ASCII_COST` times."""
    if piece.isascii():
        return CHECK_OVERHEAD + len(piece)
    ascii_count = len(piece.encode("ascii", "ignore"))
    return CHECK_OVERHEAD + ascii_count + NON_ASCII_COST * (len(piece) - ascii_count)


def _normalized_hits(
    text: str,
    norm: Normalized,
    needle: str,
    fold_case: bool,
    limit: int,
    budget: Budget | None = None,
    exact: Collection[tuple[int, int]] = (),
    skip: int = 0,
    offset: int = 0,
) -> tuple[list[tuple[int, int]], bool]:
    """Raw ranges of every aligned occurrence of the normalised ``needle`` whose raw slice
    normalises back to it (checked, never assumed, except for a range in ``exact``: a verbatim
    occurrence of the term normalises to the needle by definition); and whether the search stopped
    because ``budget`` (None: no budget) could not pay for the next occurrence (see :class:`Budget`).
    Occurrences are looked for from ``norm.text[skip]`` on. ``offset``: where ``text`` starts in the
    text searched (a piece of a long one): ``exact`` and the ranges returned are in its offsets."""
    hits: list[tuple[int, int]] = []
    if not needle:
        return hits, False
    cost = _find_cost(needle)
    i = norm.text.find(needle, skip)
    while i != -1 and len(hits) < limit:
        if not _paid(budget, cost):
            return hits, True
        raw = norm.raw_range(i, i + len(needle))
        if raw is not None and (raw[0] + offset, raw[1] + offset) in exact:
            hits.append((raw[0] + offset, raw[1] + offset))
        elif raw is not None:
            piece = text[raw[0] : raw[1]]
            if budget is not None:
                budget.left -= check_cost(piece)
            if normalize(piece, fold_case=fold_case) == needle:
                hits.append((raw[0] + offset, raw[1] + offset))
        i = norm.text.find(needle, i + 1)
    return hits, False


def find_term(
    text: str,
    term: str,
    *,
    fold_case: bool = False,
    limit: int = MAX_CANDIDATES,
    mapped: Normalized | None = None,
) -> list[Occurrence]:
    """Every occurrence of ``term`` in ``text`` (see :func:`search_term`, without a budget)."""
    return search_term(text, term, fold_case=fold_case, limit=limit, mapped=mapped)[0]


def search_term(
    text: Text,
    term: str,
    *,
    fold_case: bool = False,
    limit: int = MAX_CANDIDATES,
    mapped: Normalized | None = None,
    budget: int | Budget | None = None,
) -> tuple[list[Occurrence], bool]:
    """Every occurrence of ``term`` in ``text``, exactly and after the locator's normalisation.

    Returns raw code-point offsets in text order, each with its kind: ``exact`` where the term
    occurs verbatim (case-insensitively with ``fold_case``), else ``normalized`` where it occurs
    only once both are normalised (:func:`normalize_map`); a range found both ways is reported
    once, as ``exact``. At most ``limit`` occurrences, the first ones. This is the one term search
    of the product: document reviews and the report-prose quotation check call it, so that a term
    is found the same way everywhere. An empty (or white-space-only) term finds nothing.
    ``mapped`` is ``normalize_map(text, fold_case=fold_case)`` when the caller already has it
    (searching many terms in one text); without it, :func:`normal_form` builds it only when the
    normalised search is reached, and keeps it for the next search of the same text. ``budget``:
    the work the search may do, as a number or as a :class:`Budget` shared by several searches
    (see there); the second value says whether the search stopped there, its occurrences then
    being the first ones found exactly and those checked (a caller must then never report an
    occurrence absent). With ``fold_case`` the
    verbatim search is as :data:`re.IGNORECASE` compares, in time linear in the text. A
    :class:`~publisher.kernel.segmented.SegmentedText` is always searched a block at a time.
    """
    return _search_all(text, [term], fold_case, limit, mapped, [budget])[0]


def search_terms(
    text: Text,
    terms: list[str],
    *,
    fold_case: bool = False,
    limit: int = MAX_CANDIDATES,
    budget: int | None = None,
) -> list[tuple[list[Occurrence], bool]]:
    """:func:`search_term` of each of ``terms``, each with a budget of its own (``budget`` units, or
    none), its answer what :func:`search_term` alone gives: over a long text the blocks are
    normalised once for all the terms (``--from`` and ``--to`` in one pass)."""
    return _search_all(text, terms, fold_case, limit, None, [budget] * len(terms))


def _search_all(
    text: Text,
    terms: list[str],
    fold_case: bool,
    limit: int,
    mapped: Normalized | None,
    budgets: list[int | Budget | None],
) -> list[tuple[list[Occurrence], bool]]:
    """The searches of :func:`search_term` and :func:`search_terms`: each term's verbatim
    occurrences, then its normalised ones (the streamed ones of all terms in one pass)."""
    found: list[dict[tuple[int, int], Literal["exact", "normalized"]]] = []
    stops: list[bool] = []
    streamed: list[tuple[int, _Streamed]] = []
    spends = [Budget(budget) if isinstance(budget, int) else budget for budget in budgets]
    if not isinstance(text, str):
        return _search_far(text, terms, fold_case, limit, spends)
    for k, term in enumerate(terms):
        found.append({})
        stops.append(False)
        if not term.strip():
            continue
        spend = spends[k]
        if fold_case:
            exact, stopped = _caseless_exact(text, term, limit, spend)
        else:
            exact, stopped = _exact(text, term, limit, spend)
        found[-1] = dict.fromkeys(exact, "exact")
        stops[-1] = stopped
        if stopped:
            continue
        needle = normalize(term, fold_case=fold_case)
        verbatim = frozenset(exact) if not fold_case else frozenset()  # a case-insensitive match is checked
        if mapped is None and len(text) > STREAM_ABOVE:
            simple = not fold_case and term == needle and term.isascii()
            streamed.append((len(found) - 1, _Streamed(needle, limit, spend, verbatim, simple)))
            continue
        norm = mapped if mapped is not None else normal_form(text, fold_case=fold_case)
        normalized, stops[-1] = _normalized_hits(text, norm, needle, fold_case, limit, spend, verbatim)
        for hit in normalized:
            found[-1].setdefault(hit, "normalized")
    if streamed:
        _stream(text, fold_case, [search for _, search in streamed])
        for at, search in streamed:
            for hit in search.hits:
                found[at].setdefault(hit, "normalized")
            stops[at] = search.stopped
    out = []
    for hits, stopped in zip(found, stops, strict=True):
        ordered = sorted(hits.items())[:limit]
        out.append(([Occurrence(kind, start, end) for (start, end), kind in ordered], stopped))
    return out


def _search_far(
    text: SegmentedText, terms: list[str], fold_case: bool, limit: int, spends: list[Budget | None]
) -> list[tuple[list[Occurrence], bool]]:
    """:func:`_search_all` over a segmented text in one pass through its pieces: each term's
    verbatim search is taken a block ahead of the normalised ones (which need the verbatim
    occurrences of the blocks they look at), so every piece is decoded about once. The answers are
    :func:`search_term`'s; only where a budget runs out may it stop elsewhere (a verbatim search
    that stops ends its term's normalised one there, keeping what it found)."""
    asked = [k for k, term in enumerate(terms) if term.strip()]
    step_of = _caseless_steps if fold_case else _exact_steps
    exact: dict[int, list[tuple[int, int]]] = {k: [] for k in asked}
    steps = {k: step_of(text, terms[k], limit, spends[k], exact[k]) for k in asked}
    done: dict[int, bool] = {}  # each finished verbatim search: whether its budget stopped it
    searched: dict[int, _Streamed] = {}
    for k in asked:
        needle = normalize(terms[k], fold_case=fold_case)
        simple = not fold_case and terms[k] == needle and terms[k].isascii()
        searched[k] = _Streamed(needle, limit, spends[k], set(), simple)
    taken = dict.fromkeys(asked, 0)  # how many of each term's verbatim occurrences the search knows
    looked = dict.fromkeys(asked, 0)  # where each verbatim search has looked up to

    def ahead(upto: int) -> None:
        """Each verbatim search taken past ``upto``, what it found handed to its normalised one."""
        for k in asked:
            while k not in done and looked[k] < upto:
                try:
                    looked[k] = next(steps[k])
                except StopIteration as finished:
                    done[k] = finished.value[1]
            search, new = searched[k], exact[k][taken[k] :]
            taken[k] += len(new)
            if not fold_case:  # a case-insensitive match is checked like any other
                cast(set[tuple[int, int]], search.exact).update(new)
                if search.simple:
                    search.ends.extend(end for _, end in new)
            if done.get(k):
                search.stopped = True

    _stream(text, fold_case, list(searched.values()), ahead)
    ahead(len(text) + 1)
    out: list[tuple[list[Occurrence], bool]] = []
    for k in range(len(terms)):
        if k not in searched:
            out.append(([], False))
            continue
        found: dict[tuple[int, int], Literal["exact", "normalized"]] = dict.fromkeys(exact[k], "exact")
        for hit in searched[k].hits:
            found.setdefault(hit, "normalized")
        ordered = sorted(found.items())[:limit]
        out.append(([Occurrence(kind, start, end) for (start, end), kind in ordered], searched[k].stopped))
    return out


def _fragment_candidates(
    text: str, norm: Normalized, parts: list[str], limit: int, budget: Budget | None = None
) -> tuple[list[Candidate], bool]:
    """For each occurrence of the first part, the nearest chain of the others in order, within a span;
    and whether ``budget`` stopped the search first (its candidates are then none: a chain not yet
    tried may be tighter than one found).

    Chains are greedy, so a later first occurrence never ends earlier: candidates come in text
    order, and the chaining stops once ``limit`` of them are known and the next ends later (the work
    is at most ``limit + 1`` chains plus those over a span, each of at most :data:`MAX_FRAGMENTS`
    steps, not one chain for every occurrence of the first part). Every occurrence of every part is
    found first, which ``budget`` pays for as for a term (a short part may occur everywhere), and
    each chain costs a unit a step.
    """
    # Per distinct part, every hit: (norm start, norm end, raw start, raw end).
    found: dict[str, list[tuple[int, int, int, int]]] = {}
    for part in parts:
        if part in found:
            continue
        hits = []
        cost = _find_cost(part)
        i = norm.text.find(part)
        while i != -1:
            if not _paid(budget, cost):
                return [], True
            raw = norm.raw_range(i, i + len(part))
            if raw is not None:
                piece = text[raw[0] : raw[1]]
                if budget is not None:
                    budget.left -= check_cost(piece)
                if normalize(piece) == part:
                    hits.append((i, i + len(part), *raw))
            i = norm.text.find(part, i + 1)
        if not hits:
            return [], False
        found[part] = hits
    located = [found[part] for part in parts]
    firsts = [[hit[0] for hit in hits] for hits in located]
    by_end: dict[int, Candidate] = {}
    for first in located[0]:
        if not _paid(budget, len(parts)):
            return [], True
        chain = [first]
        for hits, starts in zip(located[1:], firsts[1:], strict=True):
            k = bisect_left(starts, chain[-1][1])
            if k == len(hits):
                break
            chain.append(hits[k])
        if len(chain) < len(parts):
            break  # a later first part cannot complete a chain that an earlier one could not
        start, end = chain[0][2], chain[-1][3]
        if end - start > MAX_SPAN:
            continue
        if len(by_end) >= limit and end not in by_end:
            break  # every later chain ends here or later: the first ``limit`` candidates are known
        # Of the chains ending at one place, the tightest (latest start) is the candidate.
        by_end[end] = Candidate("fragments", start, end, tuple(Fragment(h[2], h[3]) for h in chain))
    return sorted(by_end.values(), key=lambda c: (c.start, c.end))[:limit], False


def locate(text: str, quote: str, *, limit: int = MAX_CANDIDATES, mapped: Normalized | None = None) -> list[Candidate]:
    """Candidate raw offsets of ``quote`` in ``text``: exact, else normalised, else fragments.

    Returns every candidate of the first tier that finds any, in text order (at most ``limit``),
    or an empty list. A suggestion only: see the module docstring. ``mapped`` is
    ``normalize_map(text)`` when the caller already has it (locating many quotes in one text);
    without it, :func:`normal_form` builds it only when a quote is not found verbatim.
    Unbounded: where the quote or the text is not the caller's own, use :func:`search_quote`.
    """
    return search_quote(text, quote, limit=limit, mapped=mapped)[0]


def search_quote(
    text: str,
    quote: str,
    *,
    limit: int = MAX_CANDIDATES,
    mapped: Normalized | None = None,
    budget: int | Budget | None = None,
) -> tuple[list[Candidate], bool]:
    """:func:`locate` within ``budget`` (a number, or a :class:`Budget` shared by several quotes);
    the second value says whether the search stopped there.

    A search that stopped did not finish the tier it was in: its candidates (possibly none) are
    genuine but maybe not all, and a later tier was never tried, so an empty list then means
    "not known", never "not found". The budget pays for every occurrence examined in every tier,
    the checks of normalised ones and the fragments' chains; not for ``mapped`` (see
    :func:`normal_form`).
    """
    if not quote.strip():
        return [], False
    spend = Budget(budget) if isinstance(budget, int) else budget
    exact, stopped = _exact(text, quote, limit, spend)
    if exact or stopped:
        return [Candidate("exact", s, e) for s, e in exact], stopped
    norm = mapped if mapped is not None else normal_form(text)
    needle = normalize(quote)
    hits, stopped = _normalized_hits(text, norm, needle, False, limit, spend)
    if hits or stopped:
        return [Candidate("normalized", s, e) for s, e in hits], stopped
    parts = split_fragments(quote)
    if not parts or parts == [needle] or len(parts) > MAX_FRAGMENTS:
        return [], False
    return _fragment_candidates(text, norm, parts, limit, spend)


def nearest(candidates: list[Candidate], start: int, end: int) -> Candidate | None:
    """The candidate closest to the range ``[start, end)`` (smallest start, then end, distance)."""
    if not candidates:
        return None
    return min(candidates, key=lambda c: (abs(c.start - start) + abs(c.end - end), c.start))
