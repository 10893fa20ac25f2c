"""Sentence boundaries in a snapshot's text, so that an agent can cite a whole sentence by offsets.

The boundaries inside a paragraph come from a maintained tokenizer, NLTK's Punkt
(``PunktSentenceTokenizer.span_tokenize``, which gives code-point offsets into the very string it
was handed), run untrained with the project's abbreviations (:data:`ABBREVIATIONS`): no model is
downloaded or read at run time, so the same text splits alike on every machine. Only ever a
proposal: the offsets are sliced, range-checked and verified like any other span, so a poor
boundary costs a reader context, never integrity. Nothing here normalizes the text.

What stays here is layout, which a sentence tokenizer does not see:

1. **Hard breaks.** A blank line or a form feed always ends a sentence. In a *block* text (what
   the JATS, HTML and plain extractors write: paragraphs, headings and table rows on lines of their
   own) every line break ends one too. In a *wrapped* text (a PDF's, whose lines are wrapped in
   mid-sentence) a single line break is a space, except after a heading-like line: one that is
   short (under 60 % of the text's median line length), has no final punctuation, and is followed
   by a line starting with a capital letter or a digit.
2. **Labels and continuations.** A list or heading label at the start of a line (``1.``,
   ``2.1.``, ``R1.``, ``Figure 1.``) belongs to what follows it; a bracketed citation stuck to a
   sentence's end (``shown.[12]``) belongs to the sentence it cites from; and a sentence never
   starts with a lower-case letter inside a line (``[5,6]. that combinations``, an abbreviation
   outside the list followed by its phrase): such a cut joins the sentence before.

Punkt never ends a sentence inside a number (``p = 0.003``, ``p < .001``, ``8.9``), nor after an
abbreviation of the list (``et al.``, ``e.g.``, ``Fig.``, ``vs.``): those are not sentence ends,
whatever follows. Known limits: an abbreviation outside the list ends a sentence when a capital
letter follows it; a one-letter token before a capitalised word ends a sentence, so an initial
does too (``vitamin C. At week 6`` is two sentences, and so is ``A. Skillman``); a period with its
space lost (``end.Next``) or a citation stuck on as digits (``shown.12,13 Next``) is no end; a
plain text hard-wrapped at a fixed width reads as one sentence a line (select with
``--from``/``--to`` there).
"""

from __future__ import annotations

import bisect
import re
import statistics
from collections import Counter
from collections.abc import Iterator
from functools import cache
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from nltk.tokenize.punkt import PunktSentenceTokenizer

__all__ = ["ABBREVIATIONS", "HEADING_RATIO", "Sentences", "Sliced"]

HEADING_RATIO = 0.6
"""In wrapped text, a line shorter than this share of the median line length may be a heading."""

ABBREVIATIONS = frozenset(
    """e.g eg i.e ie cf vs v viz approx ca fig figs tab tabs eq eqs no nos ref refs vol vols pp p
    dr drs mr mrs ms prof st sr jr dept univ suppl incl pte ltd inc co corp jan feb mar apr jun jul
    aug sep sept oct nov dec al etc resp spp sp u.s u.k""".split()
)
"""Abbreviations (lower case, without the final period) after which a sentence never ends."""

_BLANK_LINE = re.compile(r"\n[ \t\r]*\n|\f")
_LINE_BREAK = re.compile(r"\n|\f")
_NEXT_WORD = re.compile(r"\s*(\S*)")
_FINAL = ".!?:;,…-–—"
_LABEL = re.compile(
    r"(?:(?:figure|fig\.|table|box|appendix|panel)\s+)?"
    r"(?:[A-Z.]{0,8}\d{1,3}(?:\.\d{1,3})*|[IVXivx]{1,5}|[A-Za-z])[.)]",
    re.IGNORECASE,
)
"""A label alone: ``1.``, ``2.1.``, ``R1.``, ``iv)``, ``A.``, ``Figure 1.``."""
_CITATION = re.compile(r"\[\d[\d,;\s–—-]{0,30}\]")
_CONTINUES = re.compile(r"[:;,.)\]]|\(\s*\d")
"""How no sentence starts inside a line (besides a lower-case letter): closing punctuation, a
numeric parenthesis."""


@cache
def _punkt() -> PunktSentenceTokenizer:
    """Punkt, untrained, with :data:`ABBREVIATIONS` (built once per process; no data is loaded)."""
    from collections import defaultdict

    from nltk.tokenize.punkt import _ORTHO_LC, PunktParameters, PunktSentenceTokenizer

    params = PunktParameters()
    params.abbrev_types = set(ABBREVIATIONS)
    # Untrained, Punkt knows no word's orthographic context and reads any one-letter token before a
    # capitalised word as an initial ("vitamin C. At week 6", "for 4 y. There"). Every word counts
    # as seen in lower case instead: a capitalised word after a period starts a sentence unless the
    # period ends a listed abbreviation (re-joined after Punkt, see _abbreviated).
    params.ortho_context = defaultdict(lambda: _ORTHO_LC)
    return PunktSentenceTokenizer(params)


def _abbreviated(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` ends with an abbreviation of the list (which never ends a sentence)."""
    words = text[start:end].split()
    last = words[-1].lstrip("\"'“‘«([{") if words else ""
    return last.endswith(".") and last[:-1].lower() in ABBREVIATIONS


def _median_line(text: str) -> float:
    lengths = [len(line) for line in text.split("\n") if line.strip()]
    return statistics.median(lengths) if lengths else 0.0


class Sliced(Protocol):
    """A text too long to hold as one string (a
    :class:`~publisher.kernel.segmented.SegmentedText`): its length and any slice of it."""

    def __len__(self) -> int: ...

    def __getitem__(self, key: slice, /) -> str: ...


_SPAN = 1 << 20
"""Code points of a long text looked at together (its line lengths, the start of its stretches)."""

_LOOK = 4096
"""Code points of a long text first looked at around a range for the hard breaks about it (twice
as many each time none is found)."""

_REACH = 64
"""Code points after a stretch its sentences may look at (a citation stuck to its last sentence)."""

_BREAK_CHARS = "\n\f \t\r"
"""Every character a hard break is made of: no break runs over a character outside them."""


def _far_median(text: Sliced) -> float:
    """:func:`_median_line` of a long text, a slice at a time, from a count of each line length."""
    counts: Counter[int] = Counter()
    length, blank = 0, True
    for at in range(0, len(text), _SPAN):
        for k, part in enumerate(text[at : at + _SPAN].split("\n")):
            if k:  # a line break ended the line before
                if not blank:
                    counts[length] += 1
                length, blank = 0, True
            length += len(part)
            blank = blank and not part.strip()
    if not blank:
        counts[length] += 1
    total = sum(counts.values())
    if not total:
        return 0.0
    middle: list[int] = []  # the one or two middle lengths, in sorted order
    wanted = [total // 2] if total % 2 else [total // 2 - 1, total // 2]
    seen = 0
    for value in sorted(counts):
        seen += counts[value]
        while wanted and wanted[0] < seen:
            middle.append(value)
            wanted.pop(0)
    return middle[0] if len(middle) == 1 else (middle[0] + middle[1]) / 2


class Sentences:
    """The sentences of one text: all of them in order, or the ones covering a range.

    ``wrapped`` says that single line breaks are wrapping (a PDF's text), not ends (rule 1). A long
    text read a piece at a time (:class:`Sliced`) gives the same sentences: each stretch is found
    by looking near the range and segmented from a string of its own.
    """

    def __init__(self, text: str | Sliced, *, wrapped: bool = False) -> None:
        self.text: str = text if isinstance(text, str) else ""
        self._far: Sliced | None = None if isinstance(text, str) else text
        self.wrapped = wrapped
        self._breaks = _BLANK_LINE if wrapped else _LINE_BREAK
        self._median: float | None = None
        self._break_ends: list[int] | None = None
        self._segmented: dict[tuple[int, int], list[tuple[int, int]]] = {}
        """The sentences of each stretch already segmented: many ranges in one paragraph (a
        review's hits) segment it once."""

    def __iter__(self) -> Iterator[tuple[int, int]]:
        """Every sentence as a half-open ``(start, end)``, in order, without edge whitespace."""
        far = self._far
        if far is None:
            yield from self._stretch(0, len(self.text))
            return
        lo = 0
        while True:  # each stretch between two hard breaks, as the breaks follow one another
            hi, after = self._next_break(far, lo)
            yield from self._far_stretch(far, lo, hi)
            if after is None:
                return
            lo = after

    def _far_stretch(self, far: Sliced, lo: int, hi: int) -> list[tuple[int, int]]:
        """:meth:`_stretch` of a long text: the stretch ``[lo, hi)`` as a string of its own (with what
        its last sentence may look at after it), segmented as the whole text would be."""
        local = Sentences(far[lo : min(len(far), hi + _REACH)], wrapped=self.wrapped)
        if self.wrapped:
            if self._median is None:
                self._median = _far_median(far)
            local._median = self._median
        return [(s + lo, e + lo) for s, e in local._stretch(0, hi - lo)]

    def _next_break(self, far: Sliced, at: int) -> tuple[int, int | None]:
        """Where the first hard break at or after ``at`` starts and ends, as ``search`` from ``at``
        finds it (the text's end and None if there is none), from ever longer slices: a break
        found in a slice is the one the whole text has (no break starts inside another)."""
        n, span = len(far), _LOOK
        while True:
            part = far[at : at + span]
            found = self._breaks.search(part)
            if found is not None:
                return at + found.start(), at + found.end()
            if at + len(part) >= n:
                return n, None
            span *= 2

    def _last_break_end(self, far: Sliced, pos: int) -> int:
        """:meth:`_stretch_start` of a long text: the end of the last hard break ending at or before
        ``pos``. Found in a slice that starts after a character no break holds, where every break
        of the whole text starts anew, and reaching back further while none is found."""
        hi, span = pos, _LOOK
        while hi > 0:
            lo = max(0, hi - span)
            while lo > 0:  # back to a character outside every break
                back = max(0, lo - _LOOK)
                kept = far[back:lo].rstrip(_BREAK_CHARS)
                if kept:
                    lo = back + len(kept)
                    break
                lo = back
            ends = [found.end() for found in self._breaks.finditer(far[lo:hi])]
            if ends:
                return lo + ends[-1]
            hi, span = lo, span * 2
        return 0

    def covering(self, start: int, end: int) -> tuple[int, int] | None:
        """The smallest run of whole sentences covering ``text[start:end]``; None if it covers no text.

        Only the stretch (line or paragraph) around the range is segmented, once per instance, so
        the cost follows the paragraph's length, not the text's, however many ranges lie in it.
        """
        far = self._far
        if not 0 <= start < end <= len(self.text if far is None else far):
            return None
        if far is None:
            after = self._breaks.search(self.text, end)
            hi = after.start() if after else len(self.text)
            lo = self._stretch_start(start)
        else:
            hi, lo = self._next_break(far, end)[0], self._last_break_end(far, start)
        stretch = self._segmented.get((lo, hi))
        if stretch is None:
            made = list(self._stretch(lo, hi)) if far is None else self._far_stretch(far, lo, hi)
            stretch = self._segmented[(lo, hi)] = made
        found = [(s, e) for s, e in stretch if s < end and start < e]
        return (found[0][0], found[-1][1]) if found else None

    def _stretch_start(self, pos: int) -> int:
        """The end of the last hard break before ``pos`` (0 if none): the breaks are found once
        per instance, in one pass, and looked up by bisection."""
        if self._break_ends is None:
            self._break_ends = [m.end() for m in self._breaks.finditer(self.text)]
        at = bisect.bisect_right(self._break_ends, pos)
        return self._break_ends[at - 1] if at else 0

    def _stretch(self, lo: int, hi: int) -> Iterator[tuple[int, int]]:
        """The sentences of ``text[lo:hi]``, which starts right after a hard break (or at 0)."""
        pos = lo
        for brk in self._breaks.finditer(self.text, lo, hi):
            yield from self._split(pos, brk.start())
            pos = brk.end()
        yield from self._split(pos, hi)

    def _heading_ends(self, lo: int, hi: int) -> Iterator[int]:
        """Ends of heading-like lines inside a wrapped paragraph ``text[lo:hi]`` (rule 1)."""
        if self._median is None:
            self._median = _median_line(self.text)
        text, start = self.text, lo
        while (nl := text.find("\n", start, hi)) != -1:
            line = text[start:nl].strip()
            found = _NEXT_WORD.match(text, nl + 1, hi)
            after = found.group(1)[:1] if found else ""
            short = len(line) < HEADING_RATIO * self._median
            if line and line[-1] not in _FINAL and short and (after.isupper() or after.isdigit()):
                yield nl
            start = nl + 1

    def _split(self, lo: int, hi: int) -> Iterator[tuple[int, int]]:
        """Sentences of one stretch without hard breaks: Punkt's, within the heading-like lines."""
        cuts = [*(self._heading_ends(lo, hi) if self.wrapped else ()), hi]
        start = lo
        for end in cuts:
            yield from self._punkt(start, end)
            start = end

    def _punkt(self, lo: int, hi: int) -> Iterator[tuple[int, int]]:
        """Punkt's sentences of ``text[lo:hi]``, labels joined to what they label (rule 2)."""
        text = self.text
        spans: list[tuple[int, int]] = []
        for a, b in _punkt().span_tokenize(text[lo:hi]):
            s, e = lo + a, lo + b
            while s < e and text[s].isspace():
                s += 1
            while e > s and text[e - 1].isspace():
                e -= 1
            if s >= e:
                continue
            if spans and _CITATION.match(text, s):  # "shown. [12] Next": the citation ends the sentence
                cite = _CITATION.match(text, s)
                if cite is not None:
                    spans[-1] = (spans[-1][0], cite.end())
                    s = cite.end()
                    while s < e and text[s].isspace():
                        s += 1
                    if s >= e:
                        continue
            if spans and _LABEL.fullmatch(text, *spans[-1]) and self._at_line_start(spans[-1][0], lo):
                spans[-1] = (spans[-1][0], e)  # "1. Introduction": a label belongs to what follows
                continue
            if spans and (text[s].islower() or _CONTINUES.match(text, s) or _abbreviated(text, *spans[-1])):
                spans[-1] = (spans[-1][0], e)  # "[5,6]. that", ". :", ". (13.6, p = 0.04)", "e.g. “so”"
                continue
            spans.append((s, e))
        yield from spans

    def _at_line_start(self, pos: int, lo: int) -> bool:
        """Whether only indentation lies between the start of ``pos``'s line (or ``lo``) and ``pos``."""
        start = max(lo, self.text.rfind("\n", lo, pos) + 1)
        return not self.text[start:pos].strip() or self.text[start:pos].rstrip()[-1:] in ".!?:;"
