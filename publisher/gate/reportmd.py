"""Report claims of ``outputs/report.md`` (CONTRACT section 7).

The report is parsed with markdown-it-py and its footnote plugin, keeping every footnote
definition in place (duplicates and unreferenced ones included, which the plugin's own tail rule
would drop or overwrite). Span references are parsed from the RAW source lines of each
definition with :func:`publisher.refs.parse_refs`: rendered inline text would have eaten the
backslash escapes of a JSON excerpt. Cited URLs are the Markdown links of a definition and the
bare URLs written in its text (outside a quoted excerpt).

As upstream, every footnote is a citation. One whose body starts with a span reference is a
``report_claim`` on that span; one that cites a paper by PMID/DOI/PMCID, or by its label alone
(``[^smith2024]``, resolved through ``corpus.jsonl``), is a ``synthesis_claim``; one that only
cites URLs is a ``report_claim`` on what was retrieved there. A reference (``[^x]``) that no
definition answers is a citation too, of nothing: it is reported with ``defined`` false.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal

from ..kernel.refs import SpanRef, parse_refs, starts_with_ref
from .urls import link_key, url_key, urls_in

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

__all__ = [
    "Footnote",
    "ProseBlock",
    "ParsedReport",
    "parse_report",
    "read_report",
    "markdown_parser",
    "report_tokens",
    "paper_ids_in",
    "link_key",
]

_DEF_START_RE = re.compile(r"\[\^([^\]\s]+)\]:[ \t]?")
_REF_MARK_RE = re.compile(r"\[\^[^\]\s]+\]")
_SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+")
_PMID_RE = re.compile(r"\bPMID:?\s*(\d+)\b", re.IGNORECASE)
_PMCID_RE = re.compile(r"\bPMCID:?\s*(PMC\d+)\b", re.IGNORECASE)
_DOI_RE = re.compile(r"\bDOI:?\s*(10\.[0-9]{3,9}/\S+)", re.IGNORECASE)
_MAX_CLAIM = 1000
_NEWLINE_RE = re.compile(r"\r\n?|\n")
"""Line breaks as markdown-it counts them; ``str.splitlines`` also breaks at U+2028, form feeds
and other separators, which would shift every later line against the parser's token map."""


def markdown_parser(*, keep_definitions: bool = False) -> MarkdownIt:
    """The one Markdown configuration of reports: CommonMark, raw HTML off, footnotes on.

    ``keep_definitions`` leaves footnote definitions where they are written (for reading
    claims); otherwise they are moved to the end as the renderer expects.
    """
    from markdown_it import MarkdownIt
    from mdit_py_plugins.footnote import footnote_plugin

    md = MarkdownIt("commonmark", {"html": False})
    md.use(footnote_plugin, inline=False, move_to_end=not keep_definitions)
    return md


class Footnote:
    """One footnote definition and what it claims.

    ``line``: 1-based line of the definition in report.md; ``ordinal``: 0 for the first
    definition of a label, 1 for a second (duplicate) one, and so on; ``claim``: the sentence that
    cites the footnote (its first citation), None when nothing cites it; ``bare_urls``: the
    ``http(s)`` URLs written in the definition's text that are not the target of a link;
    ``ref_lines``: the 1-based lines of report.md where it is cited; ``defined``: False for a
    reference that no definition answers (``line`` is then its first citation). A plain slotted
    class, as the report's other parts: a dataclass compiles its methods each time its module is
    imported, which every ``assemble`` and ``verify`` pays, and nothing compares these.
    """

    __slots__ = (
        "bare_urls",
        "body",
        "claim",
        "defined",
        "label",
        "line",
        "links",
        "ordinal",
        "paper_ids",
        "ref_error",
        "ref_lines",
        "refs",
    )  # fmt: skip

    def __init__(
        self,
        label: str,
        line: int,
        ordinal: int,
        body: str,
        refs: tuple[SpanRef, ...],
        ref_error: str | None,
        links: tuple[str, ...],
        paper_ids: tuple[tuple[str, str], ...],
        claim: str | None,
        bare_urls: tuple[str, ...] = (),
        ref_lines: tuple[int, ...] = (),
        defined: bool = True,
    ) -> None:
        self.label, self.line, self.ordinal, self.body = label, line, ordinal, body
        self.refs, self.ref_error, self.links, self.paper_ids = refs, ref_error, links, paper_ids
        self.claim, self.bare_urls, self.ref_lines, self.defined = claim, bare_urls, ref_lines, defined

    @property
    def kind(self) -> Literal["report_claim", "synthesis_claim"]:
        """What the footnote claims: every footnote is a citation."""
        if self.refs or self.ref_error is not None or starts_with_ref(self.body):
            return "report_claim"
        if self.paper_ids:
            return "synthesis_claim"
        if self.links or self.bare_urls or not self.defined:
            return "report_claim"
        return "synthesis_claim"

    @property
    def span_form(self) -> bool:
        """Whether the footnote cites spans (this project's form) rather than papers or URLs."""
        return bool(self.refs) or self.ref_error is not None or starts_with_ref(self.body)

    @property
    def artifact_id(self) -> str:
        """``report:<label>``."""
        return f"report:{self.label}"


def paper_ids_in(text: str) -> tuple[tuple[str, str], ...]:
    """The PMIDs, DOIs and PMCIDs a footnote states in the upstream form, in order, deduplicated."""
    found: list[tuple[int, str, str]] = []
    for match in _PMID_RE.finditer(text):
        found.append((match.start(), "pmid", match.group(1)))
    for match in _DOI_RE.finditer(text):
        found.append((match.start(), "doi", match.group(1).rstrip(".,;:)]>")))
    for match in _PMCID_RE.finditer(text):
        found.append((match.start(), "pmcid", match.group(1).upper()))
    out: list[tuple[str, str]] = []
    for _, kind, value in sorted(found):
        if (kind, value) not in out:
            out.append((kind, value))
    return tuple(out)


def _raw_body(lines: list[str], begin: int, end: int) -> str:
    """The definition's text from the source lines, without the ``[^label]:`` marker."""
    first = lines[begin]
    match = _DEF_START_RE.search(first)
    head = first[match.end() :] if match else first
    rest = [line.strip() for line in lines[begin + 1 : end]]
    return "\n".join([head, *rest]).strip()


_SENTENCE_WINDOW = 2 * _MAX_CLAIM
"""How far back from its mark a claim sentence is looked for: a paragraph citing thousands of
footnotes must not be split once per footnote from its start (quadratic)."""


def _sentence(content: str, label: str, at: int | None = None) -> str | None:
    """The sentence of ``content`` that ends at the first ``[^label]`` (``at``: where that is, when
    the caller has found it)."""
    if at is None:
        at = content.find(f"[^{label}]")
    if at < 0:
        return None
    before = _REF_MARK_RE.sub("", content[max(0, at - _SENTENCE_WINDOW) : at])
    pieces = [p for p in _SENTENCE_END_RE.split(before) if p.strip()]
    if not pieces:
        return None
    sentence = " ".join(pieces[-1].split())
    return sentence[:_MAX_CLAIM] or None


def _links(tokens: list[Token]) -> tuple[str, ...]:
    out: list[str] = []
    for token in tokens:
        for child in token.children or ():
            if child.type == "link_open":
                href = str(child.attrGet("href") or "")
                if href.lower().startswith(("http://", "https://")) and href not in out:
                    out.append(href)
    return tuple(out)


class _Marks:
    """Where each ``[^label]`` of the given labels is written in an inline token's content: the
    offset of the first and the 1-based report lines, each once, in order. One pass along the
    content for all labels: finding and counting from the start for each label was quadratic in
    a paragraph citing thousands of footnotes.

    Every ``[^`` is looked at, overlapping ones too, and read up to the first ``]`` after it: for
    a label without ``]`` (a footnote label never holds one) that is exactly where
    ``content.find("[^label]")`` finds it; a label holding ``]`` is found that way instead."""

    __slots__ = ("first", "lines")

    def __init__(self, token: Token, labels: set[str]) -> None:
        self.first: dict[str, int] = {}
        self.lines: dict[str, list[int]] = {}
        content = token.content
        start = token.map[0] + 1 if token.map is not None else None
        plain = {label for label in labels if "]" not in label}
        longest = max(map(len, plain), default=0)
        line, counted = start or 0, 0
        at = content.find("[^")
        while at >= 0 and plain:
            close = content.find("]", at + 2, at + 3 + longest)
            label = content[at + 2 : close] if close >= 0 else None
            if label in plain:
                self._add(label, at, line := line + content.count("\n", counted, at), start)
                counted = at
            at = content.find("[^", at + 1)
        for label in labels - plain:
            mark, counted, line = f"[^{label}]", 0, start or 0
            at = content.find(mark)
            while at >= 0:
                self._add(label, at, line := line + content.count("\n", counted, at), start)
                counted = at
                at = content.find(mark, at + len(mark))

    def _add(self, label: str, at: int, line: int, start: int | None) -> None:
        self.first.setdefault(label, at)
        if start is not None:
            lines = self.lines.setdefault(label, [])
            if not lines or lines[-1] != line:
                lines.append(line)


def _bare_urls(text: str, links: tuple[str, ...]) -> tuple[str, ...]:
    """URLs written in ``text`` that are not the target of one of its links."""
    targets = {url_key(link) for link in links}
    return tuple(url for url in urls_in(text) if url_key(url) not in targets)


class ProseBlock:
    """One run of inline text of the report outside footnote definitions: a heading or prose.

    ``line``: the 1-based line of report.md where the text starts; ``heading``: the heading level
    (1-6) when the text is a heading, else None; ``text``: the inline source, its line breaks kept
    (line ``line + k`` is after the k-th break)."""

    __slots__ = ("heading", "line", "text")

    def __init__(self, line: int, heading: int | None, text: str) -> None:
        self.line, self.heading, self.text = line, heading, text


class ParsedReport:
    """What one parse of report.md yields: its footnotes (:func:`parse_report`) and its prose."""

    __slots__ = ("blocks", "footnotes")

    def __init__(self, footnotes: list[Footnote], blocks: list[ProseBlock]) -> None:
        self.footnotes, self.blocks = footnotes, blocks


def parse_report(text: str) -> list[Footnote]:
    """Every footnote definition of a report in the order written, then every reference that no
    definition answers (``defined`` false), in the order first cited."""
    return read_report(text).footnotes


_LAST_PARSE: tuple[str, list[Token]] | None = None


def report_tokens(text: str) -> list[Token]:
    """The tokens of a report parsed with its footnote definitions where written.

    The last report parsed is kept, so reading its claims (:func:`read_report`) and checking its
    prose (``C-PROSE``) share one parse of the same text; callers read the tokens and never change
    them. One report's tokens are held at a time.
    """
    global _LAST_PARSE
    last = _LAST_PARSE
    if last is not None and last[0] == text:
        return last[1]
    tokens = markdown_parser(keep_definitions=True).parse(text)
    _LAST_PARSE = (text, tokens)
    return tokens


def read_report(text: str) -> ParsedReport:
    """One parse of the report: its footnotes and its headings and prose, in order."""
    tokens = report_tokens(text)
    lines = _NEWLINE_RE.split(text)
    claims: dict[str, str] = {}
    cited: dict[str, dict[int, None]] = {}  # label -> its lines, in order (a dict as an ordered set)
    dangling: dict[str, dict[int, None]] = {}
    definitions: list[tuple[str, int, int, list[Token]]] = []
    blocks: list[ProseBlock] = []
    depth = 0
    heading: int | None = None
    current: tuple[str, int, int, list[Token]] | None = None
    for token in tokens:
        if token.type == "heading_open" and current is None:
            heading = int(token.tag[1])
        if token.type == "footnote_reference_open":
            depth += 1
            if depth == 1:
                begin, end = token.map or (0, 0)
                current = (token.meta["label"], begin, end, [])
            continue
        if token.type == "footnote_reference_close":
            depth -= 1
            if depth == 0 and current is not None:
                definitions.append(current)
                current = None
            continue
        if current is not None:
            current[3].append(token)
        elif token.type == "inline":
            if token.map is not None:
                blocks.append(ProseBlock(token.map[0] + 1, heading, token.content))
            heading = None
            refs: dict[str, None] = {}  # the labels cited, and written where no reference can be
            loose: dict[str, None] = {}
            for child in token.children or ():
                if child.type == "footnote_ref":
                    refs[child.meta["label"]] = None
                elif child.type == "text":
                    loose.update((match.group(0)[2:-1], None) for match in _REF_MARK_RE.finditer(child.content))
            if not refs and not loose:
                continue
            marks = _Marks(token, {*refs, *loose})
            for label in refs:
                cited.setdefault(label, {}).update(dict.fromkeys(marks.lines.get(label, ())))
                if label not in claims and label in marks.first:
                    sentence = _sentence(token.content, label, marks.first[label])
                    if sentence is not None:
                        claims[label] = sentence
            for label in loose:
                dangling.setdefault(label, {}).update(dict.fromkeys(marks.lines.get(label, ())))
    seen: dict[str, int] = {}
    out: list[Footnote] = []
    for label, begin, end, inner in definitions:
        body = _raw_body(lines, begin, end)
        parsed = parse_refs(body) if starts_with_ref(body) else None
        ordinal = seen.get(label, 0)
        seen[label] = ordinal + 1
        links = _links(inner)
        out.append(
            Footnote(
                label=label,
                line=begin + 1,
                ordinal=ordinal,
                body=body,
                refs=parsed.refs if parsed else (),
                ref_error=parsed.error if parsed else None,
                links=links,
                paper_ids=() if parsed else paper_ids_in(body),
                claim=claims.get(label),
                bare_urls=_bare_urls(parsed.rest if parsed else body, links),
                ref_lines=tuple(cited.get(label, ())),
            )
        )
    for label, where in dangling.items():
        if label in seen:
            continue  # defined, yet written where a footnote reference cannot be (the plugin decides)
        out.append(
            Footnote(
                label=label,
                line=next(iter(where), 0),
                ordinal=0,
                body="",
                refs=(),
                ref_error=None,
                links=(),
                paper_ids=(),
                claim=None,
                ref_lines=tuple(where),
                defined=False,
            )
        )
    return ParsedReport(out, blocks)
