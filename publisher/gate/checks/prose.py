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
  (:func:`publisher.kernel.locate.search_quote`: exact, then normalised, then in fragments at its
  ellipses; all the report's quotations within one work budget, :data:`PROSE_BUDGET`, a
  quotation whose search stopped there being unverified). Found and cited, in the same
  paragraph, by a footnote whose span covers it: pass.
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

from ...kernel.checkids import CheckId
from ...kernel.errors import PublisherError
from ...kernel.locate import LOCATE_BUDGET, Budget, search_quote
from ...kernel.reasons import Reason
from ...kernel.refs import looks_like_evidence
from ...kernel.store import read_snapshot
from ..reportmd import Footnote, markdown_parser
from .collect import Collector

__all__ = ["PROSE", "PROSE_BUDGET", "QUOTE_WORDS", "Quotation", "quotations", "check_report_prose"]

PROSE = CheckId.PROSE
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


PROSE_BUDGET = 4 * LOCATE_BUDGET
"""The search work all the quotations of one report may do together, over every snapshot of the
run (see :class:`~publisher.kernel.locate.Budget`); each quotation may do at most
:data:`~publisher.kernel.locate.LOCATE_BUDGET` of it. A quotation found verbatim costs a few
units an occurrence; only words that are nowhere verbatim go on to the normalised and fragment
tiers, where hostile text (a fragment of one word found everywhere) could otherwise cost tens
of seconds a quotation, at every assembly and every build. Fail-closed: a quotation whose search
stopped, at its own budget or the report's, without finding a span that cites it is not verified
(``EXCERPT_MISMATCH``), never taken as quoted. An ordinary report spends a few thousand units."""


def _search_quotations(out: Collector, quoted: list[Quotation]) -> tuple[list[list[tuple[str, int, int]]], list[bool]]:
    """Where each of ``quoted`` occurs in the run's snapshots, and whether its search stopped.

    Snapshot by snapshot, every quotation in turn: a text is normalised (when a quotation is not
    verbatim in it) once for all of them, not once per quotation. Each quotation has its own
    budget, so that one quotation's cost never stops another's search, and all together the
    report's (:data:`PROSE_BUDGET`)."""
    hits: list[list[tuple[str, int, int]]] = [[] for _ in quoted]
    stopped = [False] * len(quoted)
    budgets = [Budget(LOCATE_BUDGET) for _ in quoted]
    spent = 0
    for sid, body in _run_texts(out).items():
        for i, q in enumerate(quoted):
            if spent >= PROSE_BUDGET:
                stopped[i] = True  # the report's budget is spent: nothing more is searched
                continue
            before = budgets[i].left
            candidates, stop = search_quote(body, q.text, limit=8, budget=budgets[i])
            spent += before - budgets[i].left
            hits[i] += [(sid, c.start, c.end) for c in candidates]
            stopped[i] = stopped[i] or stop
    return hits, stopped


def check_report_prose(out: Collector, text: str | None) -> None:
    """C-PROSE over the report's prose: quotations located and cited, no cite-line look-alike."""
    if text is None:
        out.add(PROSE, "pass", "no report.md")
        return
    found = quotations(text)
    if not found:
        out.add(PROSE, "pass", "no blockquote, quotation or cite-line look-alike in the report's prose")
        return
    quoted = [q for q in found if q.kind != "cite-line"]
    hits, stopped = _search_quotations(out, quoted) if quoted else ([], [])
    footnotes = out.rc.inputs.footnotes or []
    problems = 0
    at = 0
    for q in found:
        if q.kind == "cite-line":
            problems += 1
            detail = f"{q.text[:40]!r} in prose is shaped like the site's cite line; only footnotes cite"
            out.find(PROSE, Reason.EXCERPT_MISMATCH, REPORT, detail, line=q.line)
            continue
        located, stop = hits[at], stopped[at]
        at += 1
        cited = _cited(footnotes, q.labels)
        if any(s == sid and cs <= start and end <= ce for sid, start, end in located for s, cs, ce in cited):
            continue
        problems += 1
        words = f"{q.kind} {q.text[:60]!r}"
        if located:  # a source's words, wherever else the search stopped
            sid, start, end = located[0]
            detail = f"{words} is a source's words: cite it through its span {sid}#{start}-{end} in a footnote"
            out.find(PROSE, None, REPORT, detail, line=q.line, source_id=sid, start=start, end=end)
        elif stop:
            detail = (
                f"unverified quotation: {words} could not be searched for within the search budget "
                f"({LOCATE_BUDGET:,} units of work a quotation, {PROSE_BUDGET:,} a report); "
                "quote it through a cited span"
            )
            out.find(PROSE, Reason.EXCERPT_MISMATCH, REPORT, detail, line=q.line)
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
