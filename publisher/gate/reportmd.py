"""Report claims of ``outputs/report.md`` (CONTRACT section 7).

The report is parsed with markdown-it-py and its footnote plugin, keeping every footnote
definition in place (duplicates and unreferenced ones included, which the plugin's own tail rule
would drop or overwrite). Span references are parsed from the RAW source lines of each
definition with :func:`publisher.refs.parse_refs`: rendered inline text would have eaten the
backslash escapes of a JSON excerpt. Cited URLs are the Markdown links of a definition.

A footnote is a claim when its body starts with a span reference (``report_claim``), when it
cites a paper by PMID/DOI/PMCID in the upstream form (``synthesis_claim``), or when it links an
``http(s)`` URL (``report_claim``: a cited URL must have been retrieved in the run). Other
footnotes are notes and claim nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.footnote import footnote_plugin

from ..kernel.refs import SpanRef, parse_refs, starts_with_ref

__all__ = ["Footnote", "parse_report", "markdown_parser", "paper_ids_in", "link_key"]

_DEF_START_RE = re.compile(r"\[\^([^\]\s]+)\]:[ \t]?")
_REF_MARK_RE = re.compile(r"\[\^[^\]\s]+\]")
_SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+")
_PMID_RE = re.compile(r"\bPMID:?\s*(\d+)\b", re.IGNORECASE)
_PMCID_RE = re.compile(r"\bPMCID:?\s*(PMC\d+)\b", re.IGNORECASE)
_DOI_RE = re.compile(r"\bDOI:?\s*(10\.\d{3,9}/\S+)", re.IGNORECASE)
_MAX_CLAIM = 1000
_NEWLINE_RE = re.compile(r"\r\n?|\n")
"""Line breaks as markdown-it counts them; ``str.splitlines`` also breaks at U+2028, form feeds
and other separators, which would shift every later line against the parser's token map."""


def markdown_parser(*, keep_definitions: bool = False) -> MarkdownIt:
    """The one Markdown configuration of reports: CommonMark, raw HTML off, footnotes on.

    ``keep_definitions`` leaves footnote definitions where they are written (for reading
    claims); otherwise they are moved to the end as the renderer expects.
    """
    md = MarkdownIt("commonmark", {"html": False})
    md.use(footnote_plugin, inline=False, move_to_end=not keep_definitions)
    return md


@dataclass(frozen=True)
class Footnote:
    """One footnote definition and what it claims."""

    label: str
    line: int
    """1-based line of the definition in report.md."""
    ordinal: int
    """0 for the first definition of a label, 1 for a second (duplicate) one, and so on."""
    body: str
    refs: tuple[SpanRef, ...]
    ref_error: str | None
    links: tuple[str, ...]
    paper_ids: tuple[tuple[str, str], ...]
    claim: str | None
    """The sentence that cites the footnote (its first citation), None when nothing cites it."""

    @property
    def kind(self) -> Literal["report_claim", "synthesis_claim"] | None:
        """What the footnote claims, or None for a plain note."""
        if self.refs or self.ref_error is not None or starts_with_ref(self.body):
            return "report_claim"
        if self.paper_ids:
            return "synthesis_claim"
        if self.links:
            return "report_claim"
        return None

    @property
    def artifact_id(self) -> str:
        """``report:<label>``."""
        return f"report:{self.label}"


_LINKS = MarkdownIt("commonmark")


def link_key(url: str) -> str:
    """A URL as a Markdown link's ``href`` holds it once parsed (percent-encoded, punycoded).

    A footnote link to ``https://e.org/Café`` reaches the assembler as ``…/Caf%C3%A9``; a
    snapshot URL is compared in this form too, so that the same address matches itself.
    """
    return str(_LINKS.normalizeLink(url))


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


def _sentence(content: str, label: str) -> str | None:
    """The sentence of ``content`` that ends at the first ``[^label]``."""
    mark = f"[^{label}]"
    at = content.find(mark)
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


def parse_report(text: str) -> list[Footnote]:
    """Every footnote definition of a report, in the order written."""
    md = markdown_parser(keep_definitions=True)
    tokens = md.parse(text)
    lines = _NEWLINE_RE.split(text)
    claims: dict[str, str] = {}
    definitions: list[tuple[str, int, int, list[Token]]] = []
    depth = 0
    current: tuple[str, int, int, list[Token]] | None = None
    for token in tokens:
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
            for child in token.children or ():
                if child.type == "footnote_ref":
                    label = child.meta["label"]
                    if label not in claims:
                        sentence = _sentence(token.content, label)
                        if sentence is not None:
                            claims[label] = sentence
    seen: dict[str, int] = {}
    out: list[Footnote] = []
    for label, begin, end, inner in definitions:
        body = _raw_body(lines, begin, end)
        parsed = parse_refs(body) if starts_with_ref(body) else None
        ordinal = seen.get(label, 0)
        seen[label] = ordinal + 1
        out.append(
            Footnote(
                label=label,
                line=begin + 1,
                ordinal=ordinal,
                body=body,
                refs=parsed.refs if parsed else (),
                ref_error=parsed.error if parsed else None,
                links=_links(inner),
                paper_ids=() if parsed else paper_ids_in(body),
                claim=claims.get(label),
            )
        )
    return out
