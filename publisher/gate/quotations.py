"""One quotation rule for all prose: what reads as a source's words is located, and cited or refused.

Prose can pass for evidence by quoting: a blockquote of invented words, a sentence in quotation
marks, a ``<q>``, an image's alt text or a link's title shown on hover. An agent's report prose,
a concept's prose and the wiki's hand-written pages go through this one rule
(:func:`quotation_findings`), each against the snapshots it may cite: a report's run, or every
run of the wiki for concepts and pages.

What counts as a quotation (:func:`quotations`), outside code and outside footnotes that cite
through a span reference:

* every top-level **blockquote**, of any length (but a callout, one that opens with a bold label
  as in ``> **Note.** …``; the quotations inside a callout are still read), a raw
  ``<blockquote>`` too;
* a **quoted passage** of at least :data:`QUOTE_WORDS` words (:func:`words`) between any pair of
  quotation marks of :data:`QUOTATION_MARKS`: every Unicode initial/final punctuation pair (``“…”``
  ``‘…’`` ``«…»`` ``‹…›`` and the brackets of category Pi/Pf), the same mark at both ends
  (``”…”`` ``»…»`` ``’…’``, as Swedish and Finnish write them), the low marks (``„…“`` ``‚…‘``),
  the reversed guillemets (``»…«`` ``›…‹``), CJK corner brackets (``「…」`` ``『…』``), fullwidth
  and straight marks (``＂…＂`` ``"…"`` ``'…'``); a mark that can be an apostrophe (``'`` ``’``
  ``＇``) closes a passage only where no letter follows it and opens one only where none precedes
  it, so "it's" and "the authors' data" stay words;
* the text of a ``<q>`` element of at least :data:`QUOTE_WORDS` words (the browser draws its
  quotation marks), and the quoted passages of an image's **alt text** and of a **title** (of a
  link, an image or any raw element): what they show of themselves is prose like any other;
* a **plain footnote** (a definition that cites no span): the quotations inside it as above, and
  its own text of at least :data:`QUOTE_WORDS` words, which must be cited where it is a source's
  words (found nowhere, it is the author's note).

Each is looked for in the snapshots with the quote locator
(:func:`publisher.kernel.locate.search_quote`: exact, normalised, fragments at ellipses), each
within its own budget and all of one file's within :data:`PROSE_BUDGET`. Found and cited, in the
same block, by a footnote whose span covers it: it passes. Found but not cited so: a finding
naming the source and the offsets to cite (no reason code: the words are a source's, only the
citation is missing). Found nowhere, or its search stopped at a budget: an **unverified
quotation** (``EXCERPT_MISMATCH``).
"""

from __future__ import annotations

import re
import threading
import unicodedata
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import TYPE_CHECKING, Any, Literal

from ..kernel.checkids import CheckId
from ..kernel.findings import Finding
from ..kernel.locate import (
    LOCATE_BUDGET,
    MAX_FRAGMENTS,
    Budget,
    normal_form,
    normalize,
    search_quote,
    split_fragments,
)
from ..kernel.reasons import Reason
from ..kernel.refs import starts_with_ref
from .mdparts import PartCache, ends_apart, stands_apart

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

__all__ = [
    "NORMAL_TEXTS_CODE_POINTS",
    "PROSE_BUDGET",
    "QUOTATION_MARKS",
    "QUOTE_WORDS",
    "Kind",
    "Quotation",
    "quoted_passages",
    "quotations",
    "quotations_around",
    "keep_closed_block",
    "quotation_findings",
    "words",
]

QUOTE_WORDS = 6
"""Words from which a quoted passage, a ``<q>``, an alt text, a title or a plain footnote reads as
a source's words (a short phrase in quotes, a term, a scare quote or a title stays prose)."""

QUOTATION_MARKS: dict[str, str] = {
    '"': '"',
    "'": "'",
    "\u201c": "\u201d",  # “…”
    "\u201d": "\u201d",  # ”…” (Swedish, Finnish)
    "\u201e": "\u201c\u201d",  # „…“ „…”
    "\u201f": "\u201d",  # ‟…”
    "\u2018": "\u2019",  # ‘…’
    "\u2019": "\u2019",  # ’…’ (Swedish, Finnish)
    "\u201a": "\u2018\u2019",  # ‚…‘ ‚…’
    "\u201b": "\u2019",  # ‛…’
    "\u00ab": "\u00bb",  # «…»
    "\u00bb": "\u00ab\u00bb",  # »…« »…»
    "\u2039": "\u203a",  # ‹…›
    "\u203a": "\u2039\u203a",  # ›…‹ ›…›
    "\u2e02": "\u2e03",
    "\u2e04": "\u2e05",
    "\u2e09": "\u2e0a",
    "\u2e0c": "\u2e0d",
    "\u2e1c": "\u2e1d",
    "\u2e20": "\u2e21",
    "\u300c": "\u300d",  # 「…」
    "\u300e": "\u300f",  # 『…』
    "\u301d": "\u301e\u301f",  # 〝…〞 〝…〟
    "\ufe41": "\ufe42",  # vertical corner brackets
    "\ufe43": "\ufe44",
    "\uff62": "\uff63",  # halfwidth ｢…｣
    "\uff02": "\uff02",  # ＂…＂
    "\uff07": "\uff07",  # ＇…＇
    "\u275b": "\u275c",  # ❛…❜
    "\u275d": "\u275e",  # ❝…❞
    "\U0001f676": "\U0001f677",  # 🙶…🙷
}
"""Each opening quotation mark and the marks that close a passage it opens."""

_APOSTROPHES = frozenset("'\u2019\uff07")
"""Marks that are apostrophes as often as quotation marks."""

_SAME_MARK = frozenset(o for o, closers in QUOTATION_MARKS.items() if o in closers)
"""Marks that open and close alike: one opens only where no letter or digit precedes it."""

_CLOSER_SETS = frozenset(QUOTATION_MARKS.values())
_CLOSER_SETS_OF: dict[str, tuple[str, ...]] = {
    c: tuple(sorted(m for m in _CLOSER_SETS if c in m)) for c in "".join(_CLOSER_SETS)
}
"""For each closing mark, the closer sets it belongs to."""

Kind = Literal["blockquote", "quotation", "q", "alt", "title", "footnote", "cite-line"]
"""What reads as evidence; ``cite-line`` (a span reference or badge written in prose) is the
report check's own, never returned by :func:`quotations`."""

PROSE_BUDGET = 4 * LOCATE_BUDGET
"""The search work all the quotations of one file may do together, over every snapshot it may
cite (see :class:`~publisher.kernel.locate.Budget`); each quotation may do at most
:data:`~publisher.kernel.locate.LOCATE_BUDGET` of it. A quotation found verbatim costs a few
units an occurrence; only words that are nowhere verbatim go on to the normalised and fragment
tiers, where hostile text could otherwise cost tens of seconds a quotation, at every check and
every build. Fail-closed: a quotation whose search stopped without finding a span that cites it
is not verified (``EXCERPT_MISMATCH``), never taken as quoted."""


@dataclass(frozen=True)
class Quotation:
    """Something in prose that reads as a source's words: its 1-based line, kind, words, and the
    footnote labels cited in the same block."""

    line: int
    kind: Kind
    text: str
    labels: tuple[str, ...] = ()


def words(text: str) -> int:
    """How many words ``text`` holds as a reader counts them: runs between white space, each
    letter of a script written without spaces (Han, kana, Hangul: wide letters) one word."""
    count = 0
    for token in unicodedata.normalize("NFKC", text).split():
        wide = sum(1 for c in token if c.isalnum() and unicodedata.east_asian_width(c) in ("W", "F"))
        count += wide or 1
    return count


def _word_char(text: str, i: int) -> bool:
    return 0 <= i < len(text) and text[i].isalnum()


def _opens(text: str, i: int) -> bool:
    mark = text[i]
    if i + 1 >= len(text) or text[i + 1].isspace():
        return False
    return not ((mark in _APOSTROPHES or mark in _SAME_MARK) and _word_char(text, i - 1))


def _closes(text: str, j: int) -> bool:
    if j == 0 or text[j - 1].isspace():
        return False
    return not (text[j] in _APOSTROPHES and _word_char(text, j + 1))


def quoted_passages(text: str) -> list[tuple[int, str]]:
    """Every passage of ``text`` between a pair of :data:`QUOTATION_MARKS` (where it starts, its
    words), outermost first and in order; a passage never spans another's closing mark."""
    closing: dict[str, list[int]] = {marks: [] for marks in _CLOSER_SETS}
    for j, c in enumerate(text):
        sets = _CLOSER_SETS_OF.get(c)
        if sets and _closes(text, j):
            for marks in sets:
                closing[marks].append(j)
    out: list[tuple[int, str]] = []
    i = 0
    while i < len(text):
        closers = QUOTATION_MARKS.get(text[i])
        if closers is None or not _opens(text, i):
            i += 1
            continue
        ends = closing[closers]
        at = bisect_right(ends, i + 1)
        if at == len(ends):
            i += 1
            continue
        j = ends[at]
        out.append((i + 1, text[i + 1 : j]))
        i = j + 1
    return out


_ADMONITION = re.compile(r'\s*(?:!!!|\?\?\?\+?)[ \t]*[\w-]+(?:[ \t]+[\w-]+)*[ \t]*(?:"[^"\n]*")?[ \t]*$')
"""An admonition or details opener (``!!! note "Title"``): the title is shown as a heading, not
in quotation marks."""


@dataclass
class _Inline:
    """An inline token read: its text as shown (breaks as spaces), where each break is, the
    footnote labels it cites, and the quotations its markup carries (``<q>``, alt, titles)."""

    text: str = ""
    breaks: list[int] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    marked: list[tuple[Kind, str, int]] = field(default_factory=list)


class _RawHtml(HTMLParser):
    """The text, ``<q>`` and ``<blockquote>`` contents and shown attributes of raw HTML."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.found: list[tuple[Kind, str]] = []
        self._open: list[tuple[Kind, list[str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("alt", "title") and value:
                self.found.append(("alt" if name == "alt" else "title", value))
        if tag in ("q", "blockquote"):
            self._open.append(("q" if tag == "q" else "blockquote", []))

    def handle_endtag(self, tag: str) -> None:
        kind = "q" if tag == "q" else "blockquote" if tag == "blockquote" else None
        if kind is not None and self._open and self._open[-1][0] == kind:
            done, parts = self._open.pop()
            self.found.append((done, "".join(parts)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        for _, parts in self._open:
            parts.append(data)


def _raw(html: str) -> _RawHtml:
    parser = _RawHtml()
    parser.feed(html)
    parser.close()
    for kind, parts in parser._open:  # unclosed: what it holds so far
        parser.found.append((kind, "".join(parts)))
    return parser


_MASK = str.maketrans(dict.fromkeys(set(QUOTATION_MARKS) | set("".join(QUOTATION_MARKS.values())), " "))


def _read_inline(token: Token) -> _Inline:
    out = _Inline()
    parts: list[str] = []
    size = 0
    q_depth: list[int] = []  # where each open <q> started in the text

    def add(piece: str) -> None:
        nonlocal size
        parts.append(piece)
        size += len(piece)

    for child in token.children or ():
        kind = child.type
        if kind == "text":
            add(child.content)
        elif kind == "code_inline":
            add(child.content.translate(_MASK))  # code is not a quotation, nor does it close one
        elif kind in ("softbreak", "hardbreak"):
            out.breaks.append(size)
            add(" ")
        elif kind == "footnote_ref":
            out.labels.append(child.meta["label"])
        elif kind == "image":
            out.marked.append(("alt", child.content, size))
            if child.attrs.get("title"):
                out.marked.append(("title", str(child.attrs["title"]), size))
        elif kind == "link_open" and child.attrs.get("title"):
            out.marked.append(("title", str(child.attrs["title"]), size))
        elif kind == "html_inline":
            tag = child.content
            raw = _raw(tag)
            out.marked += [(k, v, size) for k, v in raw.found if k in ("alt", "title")]
            if re.match(r"<q[\s>/]", tag, re.IGNORECASE):
                q_depth.append(size)
            elif re.match(r"</q\s*>", tag, re.IGNORECASE) and q_depth:
                start = q_depth.pop()
                out.marked.append(("q", "".join(parts)[start:], start))
    out.text = "".join(parts)
    for start in q_depth:  # left open: the browser quotes all that follows it
        out.marked.append(("q", out.text[start:], start))
    return out


def _line(block_line: int, breaks: list[int], offset: int) -> int:
    return block_line + bisect_right(breaks, offset)


def _callout(token: Token) -> bool:
    """Whether an inline token opens with a bold label (``**Note.** …``): a callout, not a quote."""
    children = [c for c in token.children or () if not (c.type == "text" and not c.content.strip())]
    return bool(children) and children[0].type == "strong_open"


@dataclass
class _Open:
    """A top-level blockquote being read: where it starts, its text, the labels it cites, and
    whether it is a callout (its quotations are still read, the block itself is not)."""

    line: int
    parts: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    callout: bool = False


_SKIP = "publisher_skip"
"""The ``env`` key under which :func:`quotations` hands its ``skip`` to :func:`_inlines`."""


def _inlines(state: Any) -> None:
    """The quotation parser's core ``inline`` rule: markdown-it's, less the blocks ``skip`` names.

    :func:`quotations` reads nothing of a skipped block's inline children (only its raw
    ``content``), and with the footnotes left in place (``move_to_end=False``) no other token
    depends on what an inline pass registers; so a skipped block is not tokenised (its
    ``children`` stay empty). A concept's generated block is most of its text."""
    md = state.md
    skip: Callable[[int], bool] | None = state.env.get(_SKIP)
    for token in state.tokens:
        if token.type == "inline":
            if token.children is None:
                token.children = []
            if skip is None or not skip((token.map or (0, 0))[0]):
                md.inline.parse(token.content, md, state.env, token.children)


_PARSERS = threading.local()


def _parser() -> MarkdownIt:
    """This thread's parser for :func:`quotations` (raw HTML read, footnote definitions where
    written); building one costs about as much as parsing a short page."""
    md: MarkdownIt | None = getattr(_PARSERS, "md", None)
    if md is None:
        from markdown_it import MarkdownIt
        from mdit_py_plugins.footnote import footnote_plugin

        md = _PARSERS.md = MarkdownIt("commonmark", {"html": True})
        md.use(footnote_plugin, inline=False, move_to_end=False)
        md.core.ruler.at("inline", _inlines)
    return md


_SMARTY = re.compile(r"^[ \t]*(?:>[ \t]*)*|<<|>>", re.MULTILINE)
_DIGRAPHS = {"<<": "\u00ab", ">>": "\u00bb"}


def _smarty(match: re.Match[str]) -> str:
    """``<<`` and ``>>`` as the ``smarty`` extension shows them (guillemets); a line's blockquote
    markers stay as they are."""
    return _DIGRAPHS.get(match.group(0), match.group(0))


def _long(text: str) -> bool:
    return words(text) >= QUOTE_WORDS


def _marked(kind: Kind, value: str) -> list[str]:
    """The quotations markup carries: a raw ``<blockquote>`` whole, a ``<q>`` of
    :data:`QUOTE_WORDS` words or more whole, and the long quoted passages of what an image or a
    link shows of itself (``alt``, ``title``: prose like any other, read where it is shown)."""
    value = " ".join(value.split())
    if kind == "blockquote":
        return [value] if value else []
    if kind == "q":
        return [value] if _long(value) else []
    return [p.strip() for _, p in quoted_passages(value) if _long(p)]


def quotations(text: str, *, skip: Callable[[int], bool] | None = None) -> list[Quotation]:
    """Every quotation of the Markdown ``text``, in order (lines 1-based in ``text``); ``skip``
    says of a 0-based line that it is not prose to read (a concept's generated block)."""
    tokens = _parser().parse(_SMARTY.sub(_smarty, text), {_SKIP: skip} if skip is not None else None)
    return _read_tokens(tokens, skip)


_CLOSED_BLOCKS: PartCache[bool] = PartCache()
"""Whether a block (its lines after its first, as written) ends apart and defines no link label."""


def _every_line(line: int) -> bool:
    return True


def _closed_block(raw: str) -> bool:
    """Whether the block ``raw`` (the lines after its first line, as written), read from the top
    level, ends with its last line standing apart and leaves no link reference definition that
    the prose around it could use.

    Both answers are block-level: which lines are HTML blocks, and the link reference
    definitions the block rules register. The inline pass adds children to inline tokens only
    (footnotes stay in place, ``move_to_end=False``), so none of its blocks is tokenised here
    (:func:`_inlines` skips every line): most of what reading a generated block cost."""
    env: dict[str, Any] = {_SKIP: _every_line}
    return _closes_apart(raw, _parser().parse(_SMARTY.sub(_smarty, raw), env), env)


def _closes_apart(raw: str, tokens: Sequence[Token], env: dict[str, Any]) -> bool:
    """The answer of :func:`_closed_block` from a parse of ``raw`` and the environment it left."""
    return ends_apart(tokens, raw.count("\n") + 1) and not env.get("references")


def keep_closed_block(raw: str, tokens: Sequence[Token], env: dict[str, Any]) -> None:
    """Keep :func:`_closed_block`'s answer for ``raw`` from a parse of the same text by a parser
    whose block rules and options are the quotation parser's (the concept footnote parser: the
    answer is block-level, so its own inline rules, and a footnote tail moving definitions that
    hold no top-level block, change nothing of it), unless ``smarty``'s reading changes ``raw``:
    the quotation parser then reads another text. A concept's generated block is then read by one
    parser instead of two."""
    if ("<<" in raw or ">>" in raw) and _SMARTY.sub(_smarty, raw) != raw:  # smarty changes nothing else
        return
    answer = _closes_apart(raw, tokens, env)
    _CLOSED_BLOCKS.get(raw, lambda _: answer)


def quotations_around(text: str, block: range) -> list[Quotation]:
    """:func:`quotations` of ``text`` with the lines of ``block`` skipped, the same list, without
    reading the block where it stands apart from the prose around it.

    Where the block's first line is a top-level HTML block of its own, its last line is one too
    when the rest of the block is read from the top level (:mod:`.mdparts`; that answer is kept
    by the block's text, for the next file holding it), the block defines no link label and the
    prose writes no footnote reference (a footnote the block defines is then cited nowhere else),
    the block can only open and close around tokens that are skipped: it is left out of the
    parse (its lines left empty, so every line keeps its number). Otherwise the whole text is
    parsed, as :func:`quotations` does."""
    skip = block.__contains__
    lines = text.split("\n")
    first, last = block.start, block.stop - 1
    if block.step != 1 or not 0 <= first < last < len(lines):
        return quotations(text, skip=skip)
    prose = lines[:first] + lines[last + 1 :]
    if any("[^" in line for line in prose):
        return quotations(text, skip=skip)
    head = [_SMARTY.sub(_smarty, line) for line in lines[: first + 2]]
    if not stands_apart(_parser(), head, first) or not _CLOSED_BLOCKS.get(
        "\n".join(lines[first + 1 : last + 1]), _closed_block
    ):
        return quotations(text, skip=skip)
    # The block's inside is left as one empty line, not one per line: nothing is open after its
    # first line, so empty lines there read alike however many (markdown-it looks at every
    # character of its source, a generated block's worth of empty lines included); the lines of
    # what follows are moved back to the text's own numbers.
    gap = max(0, last - first - 2)
    after = first + 2 if gap else len(lines)

    def shifted(line: int) -> int:
        return line + gap if line >= after else line

    kept = head[: first + 1] + [""] * (last - first - 1 - gap) + [_SMARTY.sub(_smarty, line) for line in lines[last:]]
    tokens = _parser().parse("\n".join(kept), {_SKIP: lambda line: skip(shifted(line))})
    if gap:
        for token in tokens:
            if token.map is not None and token.map[1] > after:
                token.map = [shifted(token.map[0]), token.map[1] + gap]
    return _read_tokens(tokens, skip)


def _read_tokens(tokens: Sequence[Token], skip: Callable[[int], bool] | None) -> list[Quotation]:
    """The quotations of a parse by :func:`_parser`, in order."""
    out: list[Quotation] = []
    quote: _Open | None = None
    depth = 0  # blockquotes open around the token
    note: tuple[int, list[str], list[str]] | None = None  # a plain footnote: line, text, labels
    cites = False  # inside a footnote that cites a span: promotion's form, checked as such
    for index, token in enumerate(tokens):
        start = (token.map or (0, 0))[0]
        if token.type == "footnote_reference_open":
            after = index + 1
            while after < len(tokens) and tokens[after].type not in ("inline", "footnote_reference_close"):
                after += 1
            cites = after < len(tokens) and tokens[after].type == "inline" and starts_with_ref(tokens[after].content)
            note = None if cites else (start + 1, [], [])
            continue
        if token.type == "footnote_reference_close":
            if note is not None and _long(" ".join(note[1])):
                out.append(Quotation(note[0], "footnote", " ".join(" ".join(note[1]).split()), tuple(note[2])))
            note, cites = None, False
            continue
        if cites or (token.type in ("inline", "html_block") and skip is not None and skip(start)):
            continue  # what a skipped block holds; its blockquotes still open and close around it
        if token.type == "blockquote_open":
            depth += 1
            if depth == 1:
                quote = _Open(start + 1)
        elif token.type == "blockquote_close":
            depth -= 1
            if depth == 0 and quote is not None:
                body = " ".join(quote.parts).strip()
                if body and not quote.callout:
                    out.append(Quotation(quote.line, "blockquote", body, tuple(quote.labels)))
                quote = None
        elif token.type == "html_block":
            raw = _raw(token.content)
            for kind, value in raw.found:
                for passage in _marked(kind, value):
                    out.append(Quotation(start + 1, kind, passage))
            for _, passage in quoted_passages(" ".join("".join(raw.text).split())):
                if _long(passage):
                    out.append(Quotation(start + 1, "quotation", passage.strip()))
        elif token.type == "inline":
            read = _read_inline(token)
            plain = read.text
            head = _ADMONITION.match(plain[: read.breaks[0]] if read.breaks else plain)
            offset = head.end() if head else 0
            shown = plain[offset:]
            labels = tuple(read.labels)
            if note is not None:
                note[1].append(plain)
                note[2].extend(read.labels)
            for kind, value, at in read.marked:
                for passage in _marked(kind, value):
                    out.append(Quotation(_line(start + 1, read.breaks, at), kind, passage, labels))
            if quote is not None:
                quote.callout = quote.callout or (not quote.parts and _callout(token))
                quote.parts.append(plain)
                quote.labels.extend(read.labels)
                if not quote.callout:
                    continue  # the blockquote is judged whole
            for at, passage in quoted_passages(shown):
                if _long(passage):
                    line = _line(start + 1, read.breaks, offset + at)
                    out.append(Quotation(line, "quotation", passage.strip(), labels))
    return out


NORMAL_TEXTS_CODE_POINTS = 16_000_000
"""How many code points of snapshots and their normal forms (the text only, not its map; each kept
text counts with its normal form, since it is the key that holds it) the quotation
check keeps between files: a wiki's concepts each search every snapshot, which would otherwise
be normalised again for each concept that quotes."""

_normal_texts: OrderedDict[str, str] = OrderedDict()
_normal_lock = threading.Lock()


def _normal_text(text: str) -> str:
    """The normal form of ``text`` (:func:`~publisher.kernel.locate.normal_form`'s ``text``),
    kept by the text itself for the next files' quotations, least recently used first out."""
    with _normal_lock:
        found = _normal_texts.get(text)
        if found is not None:
            _normal_texts.move_to_end(text)
            return found
    found = normal_form(text).text
    with _normal_lock:
        _normal_texts[text] = found
        held = sum(len(key) + len(kept) for key, kept in _normal_texts.items())
        while len(_normal_texts) > 1 and held > NORMAL_TEXTS_CODE_POINTS:
            key, dropped = _normal_texts.popitem(last=False)
            held -= len(key) + len(dropped)
    return found


def _absent(body: str, quote: str, needle: str, first: str | None) -> bool:
    """Whether :func:`~publisher.kernel.locate.search_quote` of ``quote`` in ``body`` would find
    nothing and spend nothing: no verbatim occurrence, the normalised ``needle`` not in the
    normal form, and no fragment search or its ``first`` part not there either (each tier pays
    only for occurrences it meets). Settled without the text's map, from its kept normal form."""
    if not needle or quote in body:
        return False
    norm = _normal_text(body)
    return needle not in norm and (first is None or first not in norm)


def _search(
    texts: Mapping[str, str], quoted: Sequence[Quotation]
) -> tuple[list[list[tuple[str, int, int]]], list[bool]]:
    """Where each of ``quoted`` occurs in ``texts`` (by source id), and whether its search stopped.

    Snapshot by snapshot, every quotation in turn; a snapshot where a quotation cannot occur at
    all (:func:`_absent`) is passed over as the search would pass it, without its map. Each
    quotation has its own budget, all of them together :data:`PROSE_BUDGET`."""
    hits: list[list[tuple[str, int, int]]] = [[] for _ in quoted]
    stopped = [False] * len(quoted)
    budgets = [Budget(LOCATE_BUDGET) for _ in quoted]
    needles = [normalize(q.text) for q in quoted]
    firsts: list[str | None] = []
    for q, needle in zip(quoted, needles, strict=True):
        parts = split_fragments(q.text)
        fragments = bool(parts) and parts != [needle] and len(parts) <= MAX_FRAGMENTS
        firsts.append(parts[0] if fragments else None)
    spent = 0
    for sid in sorted(texts):
        body = texts[sid]
        for i, q in enumerate(quoted):
            if spent >= PROSE_BUDGET:
                stopped[i] = True  # the file's budget is spent: nothing more is searched
                continue
            if q.text.strip() and _absent(body, q.text, needles[i], firsts[i]):
                continue
            before = budgets[i].left
            candidates, stop = search_quote(body, q.text, limit=8, budget=budgets[i])
            spent += before - budgets[i].left
            hits[i] += [(sid, c.start, c.end) for c in candidates]
            stopped[i] = stopped[i] or stop
    return hits, stopped


def quotation_findings(
    found: Sequence[Quotation],
    *,
    file: str,
    check: CheckId,
    texts: Callable[[], Mapping[str, str]],
    cited: Mapping[str, Iterable[tuple[str, int, int]]],
    line_offset: int = 0,
    cite_in: str = "a footnote",
) -> list[Finding]:
    """The rule over the quotations ``found`` in ``file``: each located in ``texts()`` (source id
    to snapshot text, read only when there is a quotation), passing only where a footnote label
    of its block cites (``cited``: label to spans) a span covering an occurrence. ``check`` names
    the check of the findings, ``line_offset`` is added to each quotation's line, ``cite_in``
    says where the words may be cited from (a page can cite no span: "a concept")."""
    if not found:
        return []
    hits, stopped = _search(texts(), found)
    out: list[Finding] = []
    for q, located, stop in zip(found, hits, stopped, strict=True):
        spans = {span for label in q.labels for span in cited.get(label, ())}
        if any(s == sid and cs <= start and end <= ce for sid, start, end in located for s, cs, ce in spans):
            continue
        words_ = f"{q.kind} {q.text[:60]!r}"
        line = q.line + line_offset
        if located:
            sid, start, end = located[0]
            detail = f"{words_} is a source's words: cite it through its span {sid}#{start}-{end} in {cite_in}"
            out.append(Finding(None, file, detail, line=line, source_id=sid, start=start, end=end, check=check))
        elif q.kind == "footnote" and not stop:
            continue  # a note of the author's own, in none of the sources
        elif stop:
            detail = (
                f"unverified quotation: {words_} could not be searched for within the search budget "
                f"({LOCATE_BUDGET:,} units of work a quotation, {PROSE_BUDGET:,} a file); quote it through a cited span"
            )
            out.append(Finding(Reason.EXCERPT_MISMATCH, file, detail, line=line, check=check))
        else:
            detail = f"unverified quotation: {words_} is in none of the snapshots it may cite"
            out.append(Finding(Reason.EXCERPT_MISMATCH, file, detail, line=line, check=check))
    return out
