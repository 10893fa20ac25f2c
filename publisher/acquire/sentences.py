"""Sentence boundaries in a snapshot's text, so that an agent can cite a whole sentence by offsets.

A heuristic tuned on scientific prose, and only ever a proposal: the offsets it gives are sliced,
range-checked and verified like any other span, so a poor boundary costs a reader context, never
integrity. Pure functions over ``str`` indices (code points); nothing here normalizes the text.

Rules, in the order they apply:

1. **Hard breaks.** A blank line or a form feed always ends a sentence. In a *block* text (what
   the JATS, HTML and plain extractors write: paragraphs, headings and table rows on lines of their
   own) every line break ends one too. In a *wrapped* text (a PDF's, whose lines are wrapped in
   mid-sentence) a single line break is a space, except after a heading-like line: one that is
   short (under 60 % of the text's median line length), has no final punctuation, and is followed
   by a line starting with a capital letter or a digit.
2. **Terminal punctuation.** ``.``, ``?``, ``!``, ``…`` followed by whitespace end a sentence; the
   sentence keeps closing quotes and brackets right after them, and a citation stuck to them
   (``shown.[12]``, ``shown.12,13``).
3. **Not an end:** a period inside a number (``0.05``, ``p < .001``); a period followed by a
   lower-case letter (``e.g. the``, ``et al. reported``); after an abbreviation that never ends a
   sentence (``Fig. 2``, ``e.g.``, ``vs.``, ``Dr.``, ``No.``, ``U.S.``...); after ``et al.``,
   ``etc.`` and company suffixes unless a capital letter follows; after a one-letter initial
   followed by a capitalised word that does not usually start a sentence (``A. Skillman``); after
   a list or heading label at the start of a line (``1.``, ``2.1.``, ``R1.``, ``A.``).

Known limits: a plain text hard-wrapped at a fixed width reads as one sentence a line (select
with ``--from``/``--to`` there), and an abbreviation outside the lists splits a sentence in two.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterator

__all__ = ["Sentences", "HEADING_RATIO"]

HEADING_RATIO = 0.6
"""In wrapped text, a line shorter than this share of the median line length may be a heading."""

_NEVER_END = frozenset(
    """e.g eg i.e ie cf vs v viz approx ca fig figs tab tabs eq eqs no nos ref refs vol vols pp p
    dr drs mr mrs ms prof st sr jr dept univ suppl incl pte jan feb mar apr jun jul aug sep sept oct
    nov dec""".split()
)
"""Abbreviations (lower case, without the final period) after which a sentence never ends."""

_MAY_END = frozenset({"al", "etc", "inc", "ltd", "co", "corp", "a.m", "p.m"})
"""Abbreviations that end a sentence only when a capital letter follows (``et al. We``)."""

_LABEL_NOUNS = frozenset(
    """group groups arm arms type types phase grade stage class vitamin hepatitis factor table figure
    appendix cohort panel part section protein level model condition trial study""".split()
)
"""Words before a one-letter token that make it a label (``group A.``), not an initial."""

_CAPTIONS = frozenset({"figure", "fig", "table", "box", "appendix", "panel"})
"""Caption words: at the start of a line, ``Figure 1.`` labels the caption that follows."""

_STARTERS = frozenset(
    """The This These Those That There Their They Then Thus Therefore However In On At As An A All
    After Although Among Both But By Each Either For From Further Here If It Its Moreover Most No
    Not Of One Our Overall Since Some Such To Two Under Using We When Where Whether Which While
    With Within Without Finally First Second Third Furthermore Additionally Also Similarly""".split()
)
"""Capitalised words that usually start a sentence: after ``A.`` they mean the sentence ended."""

_TERMINAL = re.compile(
    r"""(?:
          (?<=[A-Za-z)\]])\.\d{1,3}(?:[,–-]\d{1,3}){0,5}      # a citation stuck on: shown.12,13
        | (?P<term>\.{3}|…|[.!?]+)                          # or the punctuation itself,
          ["'”’»)\]]*                                        # closing quotes and brackets,
          (?:\[\d[\d,;\s–—-]{0,30}\])?                          # and a citation: shown.[12]
        )(?=\s|$)
        | (?:(?<=[a-z][a-z])|(?<=[)\]]))\.(?=[A-Z])           # a period with the space lost: end.Next
    """,
    re.VERBOSE,
)
_LABEL = re.compile(r"(?:[A-Z.]{0,8}\d{1,3}(?:\.\d{1,3})*|[IVXivx]{1,5}|[A-Za-z])")
_OPENERS = "\"'“‘«([{"
_BLANK_LINE = re.compile(r"\n[ \t\r]*\n|\f")
_LINE_BREAK = re.compile(r"\n|\f")
_NEXT_WORD = re.compile(r"\s*(\S*)")
_FINAL = ".!?:;,…-–—"


def _median_line(text: str) -> float:
    lengths = [len(line) for line in text.split("\n") if line.strip()]
    return statistics.median(lengths) if lengths else 0.0


def _token_before(text: str, lo: int, pos: int) -> tuple[str, str, int]:
    """The token ending at ``pos`` (openers stripped), the word before it, and the token's start."""
    start = pos
    while start > lo and not text[start - 1].isspace():
        start -= 1
    prev_end = start
    while prev_end > lo and text[prev_end - 1].isspace():
        prev_end -= 1
    prev_start = prev_end
    while prev_start > lo and not text[prev_start - 1].isspace():
        prev_start -= 1
    return text[start:pos].lstrip(_OPENERS), text[prev_start:prev_end], start


def _line_start(text: str, lo: int, pos: int) -> int:
    """Where the text of the line holding ``pos`` starts (after indentation), not before ``lo``."""
    start = max(lo, text.rfind("\n", lo, pos) + 1)
    while start < pos and text[start] in " \t":
        start += 1
    return start


def _is_label(text: str, lo: int, token_start: int, prev: str) -> bool:
    """Whether a label-like token (``1``, ``2.1``, ``R1``, ``A``) labels a heading, list item or caption.

    It does at the start of a line, after the end of a sentence (``nurse. 3. Physical``), or after
    a caption word at the start of a line (``Figure 1. Trial profile``).
    """
    line_start = _line_start(text, lo, token_start)
    if token_start == line_start or prev[-1:] in ".!?:;":
        return True
    return prev.lower().rstrip(".") in _CAPTIONS and token_start - len(prev) - 1 <= line_start


def _ends(text: str, lo: int, hi: int, match: re.Match[str]) -> bool:
    """Whether the terminal punctuation ``match`` ends a sentence inside ``text[lo:hi]``."""
    found = _NEXT_WORD.match(text, match.end(), hi)
    nxt = found.group(1) if found else ""
    if not nxt:
        return True
    first = nxt.lstrip(_OPENERS)[:1] or nxt[:1]
    if first.islower():
        return False
    term = match.group("term") or "."
    if set(term) <= {"!", "?"}:
        return True
    if term != ".":
        return first.isupper()
    token, prev, token_start = _token_before(text, lo, match.start())
    low = token.lower()
    if low in _NEVER_END or low.rsplit(".", 1)[-1] in _NEVER_END or re.fullmatch(r"(?:[A-Z]\.)+[A-Z]", token):
        return False
    if nxt[:1] in "([" and nxt[1:2].isdigit():
        return False  # a trailing parenthesis or citation: "students. (13.6, p = 0.04)"
    glued = match.end() < hi and not text[match.end()].isspace()
    if glued and ("/" in token or "@" in token or low.startswith("www")):
        return False  # a period inside a URL, an address or a path, not a lost space
    if low in _MAY_END or (low == "al" and prev.lower() == "et"):
        return first.isupper() and nxt[:1] not in _OPENERS
    if _LABEL.fullmatch(token) and _is_label(text, lo, token_start, prev):
        return False
    if len(token) == 1 and token.isupper() and prev.lower() not in _LABEL_NOUNS:
        word = nxt.strip(_OPENERS + ",;:")
        if re.fullmatch(r"[A-Z]\.", nxt) or (word[:1].isupper() and word[1:2].islower() and word not in _STARTERS):
            return False  # an initial: "A. Skillman", "U. S. EPA"
    return True


class Sentences:
    """The sentences of one text: all of them in order, or the ones covering a range.

    ``wrapped`` says that single line breaks are wrapping (a PDF's text), not ends (rule 1).
    """

    def __init__(self, text: str, *, wrapped: bool = False) -> None:
        self.text = text
        self.wrapped = wrapped
        self._breaks = _BLANK_LINE if wrapped else _LINE_BREAK
        self._median: float | None = None

    def __iter__(self) -> Iterator[tuple[int, int]]:
        """Every sentence as a half-open ``(start, end)``, in order, without edge whitespace."""
        yield from self._stretch(0, len(self.text))

    def covering(self, start: int, end: int) -> tuple[int, int] | None:
        """The smallest run of whole sentences covering ``text[start:end]``; None if it covers no text.

        Only the stretch (line or paragraph) around the range is segmented, so the cost follows
        the paragraph's length, not the text's.
        """
        if not 0 <= start < end <= len(self.text):
            return None
        after = self._breaks.search(self.text, end)
        hi = after.start() if after else len(self.text)
        found = [(s, e) for s, e in self._stretch(self._stretch_start(start), hi) if s < end and start < e]
        return (found[0][0], found[-1][1]) if found else None

    def _stretch_start(self, pos: int) -> int:
        """The end of the last hard break before ``pos`` (0 if none), looking back in growing windows."""
        width = 4096
        while True:
            lo = max(0, pos - width)
            last = None
            for last in self._breaks.finditer(self.text, lo, pos):  # noqa: B007 - keep the last
                pass
            if last is not None and (last.start() > lo or lo == 0):
                return last.end()
            if lo == 0:
                return 0
            width *= 4

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
        """Sentences of one stretch without hard breaks: cut at terminal punctuation and headings."""
        text = self.text
        ends = set(self._heading_ends(lo, hi)) if self.wrapped else set()
        ends.update(m.end() for m in _TERMINAL.finditer(text, lo, hi) if _ends(text, lo, hi, m))
        start = lo
        for end in [*sorted(ends), hi]:
            s, e = start, end
            while s < e and text[s].isspace():
                s += 1
            while e > s and text[e - 1].isspace():
                e -= 1
            if s < e:
                yield s, e
            start = end
