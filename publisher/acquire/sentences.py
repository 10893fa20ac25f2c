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
from collections.abc import Iterator
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nltk.tokenize.punkt import PunktSentenceTokenizer

__all__ = ["ABBREVIATIONS", "HEADING_RATIO", "Sentences"]

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


class Sentences:
    """The sentences of one text: all of them in order, or the ones covering a range.

    ``wrapped`` says that single line breaks are wrapping (a PDF's text), not ends (rule 1).
    """

    def __init__(self, text: str, *, wrapped: bool = False) -> None:
        self.text = text
        self.wrapped = wrapped
        self._breaks = _BLANK_LINE if wrapped else _LINE_BREAK
        self._median: float | None = None
        self._break_ends: list[int] | None = None
        self._segmented: dict[tuple[int, int], list[tuple[int, int]]] = {}
        """The sentences of each stretch already segmented: many ranges in one paragraph (a
        review's hits) segment it once."""

    def __iter__(self) -> Iterator[tuple[int, int]]:
        """Every sentence as a half-open ``(start, end)``, in order, without edge whitespace."""
        yield from self._stretch(0, len(self.text))

    def covering(self, start: int, end: int) -> tuple[int, int] | None:
        """The smallest run of whole sentences covering ``text[start:end]``; None if it covers no text.

        Only the stretch (line or paragraph) around the range is segmented, once per instance, so
        the cost follows the paragraph's length, not the text's, however many ranges lie in it.
        """
        if not 0 <= start < end <= len(self.text):
            return None
        after = self._breaks.search(self.text, end)
        hi = after.start() if after else len(self.text)
        lo = self._stretch_start(start)
        stretch = self._segmented.get((lo, hi))
        if stretch is None:
            stretch = self._segmented[(lo, hi)] = list(self._stretch(lo, hi))
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
