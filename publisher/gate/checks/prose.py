"""Check 10, ``C-PROSE``: an agent's report prose quotes only through spans.

A report is prose around citations, and prose can pass for evidence: a blockquote of invented
words, or a line shaped like the site's cite line (a span reference, the "✓ verified" badge).
The report page shows the author's prose as written, so whatever reads as a source's words must
have been checked. In ``outputs/report.md`` outside footnote definitions:

* every **blockquote** (but a callout, one that opens with a bold label as in ``> **Note.** …``,
  GitHub's convention for an aside; the quotations inside it are still checked), and every
  **quotation** of at least :data:`QUOTE_WORDS` words inside
  double quotation marks (``"…"``, ``“…”``, ``«…»``; single quotes are left alone, they are
  apostrophes as often as quotes), is looked for in the run's snapshots with the quote locator
  (:func:`publisher.kernel.locate.locate`: exact, then normalised, then in fragments at its
  ellipses). Found and cited, in the same paragraph, by a footnote whose span covers it: pass.
  Found but not cited so: a finding of this check naming the source and the offsets to cite
  (no reason code: the words are a source's, only the citation is missing). Found nowhere: an
  **unverified quotation** (``EXCERPT_MISMATCH``: an agent-written excerpt that equals no slice);
* a **span reference or the verified badge** written in the prose itself (also in code, and
  recognised after NFKC folding, so ``＃`` and Unicode dashes count) is ``EXCERPT_MISMATCH``: only
  footnotes cite, and only the build shows the badge.

Fails whatever the gate, like ``C-HYPOTHESIS-WALL``: a forged quotation is never a warning. The
wiki check refuses a run with such a finding, so the build never publishes its report.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from markdown_it.token import Token

from ...kernel.errors import PublisherError
from ...kernel.locate import locate
from ...kernel.reasons import Reason
from ...kernel.refs import looks_like_evidence
from ...kernel.store import read_snapshot
from ..reportmd import Footnote, markdown_parser
from .collect import Collector

__all__ = ["PROSE", "QUOTE_WORDS", "Quotation", "quotations", "check_report_prose"]

PROSE = "C-PROSE"
QUOTE_WORDS = 6
"""Words inside double quotation marks from which a quotation reads as a source's words (a
short phrase in quotes, a term or a title, stays prose)."""

REPORT = "outputs/report.md"

_QUOTED = re.compile(
    r'"([^"\n]+)"|\u201c([^\u201d]+)\u201d|\u00ab([^\u00bb]+)\u00bb|\u201e([^\u201c\u201d]+)[\u201c\u201d]'
)


@dataclass(frozen=True)
class Quotation:
    """Something in the report's prose that reads as evidence: where, what kind, its words, and
    the footnote labels cited in the same block."""

    line: int
    kind: Literal["blockquote", "quotation", "cite-line"]
    text: str
    labels: tuple[str, ...] = ()


def _plain(token: Token) -> tuple[str, list[str], list[str]]:
    """An inline token's text as read (emphasis dropped, breaks as spaces), its footnote labels,
    and the content of its code spans."""
    parts: list[str] = []
    labels: list[str] = []
    code: list[str] = []
    for child in token.children or ():
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
            if child.type == "code_inline":
                code.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif child.type == "footnote_ref":
            labels.append(child.meta["label"])
    return "".join(parts), labels, code


def _callout(token: Token) -> bool:
    """Whether an inline token opens with a bold label (``**Note.** …``): a callout, not a quote."""
    children = [c for c in token.children or () if not (c.type == "text" and not c.content.strip())]
    return bool(children) and children[0].type == "strong_open"


@dataclass
class _Open:
    """A top-level blockquote being read: where it starts, its text, the labels it cites, and
    whether it is a callout (its quotations are still checked, the block itself is not)."""

    line: int
    parts: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    callout: bool = False


def quotations(text: str) -> list[Quotation]:
    """Every blockquote, long quotation and cite-line look-alike of a report, in order."""
    tokens = markdown_parser(keep_definitions=True).parse(text)
    out: list[Quotation] = []
    depth = 0
    quote: _Open | None = None
    for token in tokens:
        if token.type == "footnote_reference_open":
            depth += 1
        elif token.type == "footnote_reference_close":
            depth -= 1
        if depth:
            continue
        if token.type == "blockquote_open" and quote is None:
            quote = _Open((token.map or (0, 0))[0] + 1)
        elif token.type == "blockquote_close" and quote is not None and token.level == 0:
            body = " ".join(quote.parts).strip()
            if body and not quote.callout:
                out.append(Quotation(quote.line, "blockquote", body, tuple(quote.labels)))
            quote = None
        elif token.type in ("inline", "code_block", "fence"):
            line = (token.map or (0, 0))[0] + 1
            if token.type != "inline":
                seen = looks_like_evidence(token.content)
                if seen is not None:
                    out.append(Quotation(line, "cite-line", seen))
                continue
            plain, labels, _ = _plain(token)
            seen = looks_like_evidence(plain)
            if seen is not None:
                out.append(Quotation(line, "cite-line", seen))
            if quote is not None:
                quote.callout = quote.callout or (not quote.parts and _callout(token))
                quote.parts.append(plain)
                quote.labels.extend(labels)
                if not quote.callout:
                    continue  # the blockquote is judged whole
            for match in _QUOTED.finditer(plain):
                quoted = next(g for g in match.groups() if g is not None).strip()
                if len(quoted.split()) >= QUOTE_WORDS:
                    out.append(Quotation(line, "quotation", quoted, tuple(labels)))
    return out


def _cited(footnotes: list[Footnote], labels: tuple[str, ...]) -> set[tuple[str, int, int]]:
    wanted = set(labels)
    return {(r.source_id, r.start, r.end) for n in footnotes if n.label in wanted for r in n.refs}


def check_report_prose(out: Collector, text: str | None) -> None:
    """C-PROSE over the report's prose: quotations located and cited, no cite-line look-alike."""
    if text is None:
        out.add(PROSE, "pass", "no report.md")
        return
    found = quotations(text)
    if not found:
        out.add(PROSE, "pass", "no blockquote, quotation or cite-line look-alike in the report's prose")
        return
    texts: dict[str, str] | None = None
    footnotes = out.rc.inputs.footnotes or []
    problems = 0
    for q in found:
        if q.kind == "cite-line":
            problems += 1
            detail = f"{q.text[:40]!r} in prose is shaped like the site's cite line; only footnotes cite"
            out.find(PROSE, Reason.EXCERPT_MISMATCH, REPORT, detail, line=q.line)
            continue
        if texts is None:
            texts = _run_texts(out)
        hits = [(sid, c.start, c.end) for sid, body in texts.items() for c in locate(body, q.text, limit=8)]
        cited = _cited(footnotes, q.labels)
        if any(s == sid and cs <= start and end <= ce for sid, start, end in hits for s, cs, ce in cited):
            continue
        problems += 1
        words = f"{q.kind} {q.text[:60]!r}"
        if hits:
            sid, start, end = hits[0]
            detail = f"{words} is a source's words: cite it through its span {sid}#{start}-{end} in a footnote"
            out.find(PROSE, None, REPORT, detail, line=q.line, source_id=sid, start=start, end=end)
        else:
            detail = f"unverified quotation: {words} is in none of the run's snapshots"
            out.find(PROSE, Reason.EXCERPT_MISMATCH, REPORT, detail, line=q.line)
    if problems:
        out.add(PROSE, "fail", f"{problems} of {len(found)} quotation(s) or look-alike(s) not quoted through spans")
    else:
        out.add(PROSE, "pass", f"{len(found)} quotation(s), each cited through a span that covers it")


def _run_texts(out: Collector) -> dict[str, str]:
    """The verified text of every snapshot the run holds (read only when its prose quotes)."""
    run = out.rc.run
    texts: dict[str, str] = {}
    folder = run.sources_dir
    for path in sorted(folder.glob("src-*.json")) if folder.is_dir() else ():
        try:
            texts[path.stem] = read_snapshot(folder, path.stem).text
        except PublisherError:
            continue  # C-SNAPSHOT reports it; a quotation is not found in a snapshot that fails
    return texts
