"""Check 10, ``C-PROSE``: an agent's report prose quotes only through spans.

A report is prose around citations, and prose can pass for evidence: a blockquote of invented
words, or a line shaped like the site's cite line (a span reference, the "✓ verified" badge).
The report page shows the author's prose as written, so whatever reads as a source's words must
have been checked. In ``outputs/report.md``:

* every **quotation** (:mod:`publisher.gate.quotations`, the one rule of all prose: blockquotes,
  passages between any pair of quotation marks, ``<q>``, quoted passages of alt texts and titles,
  plain footnotes) is looked for in the run's snapshots with the quote locator, within the
  budgets of that module. Found and cited, in the same block, by a footnote whose span covers
  it: pass. Found but not cited so: a finding of this check naming the source and the offsets to
  cite (no reason code: the words are a source's, only the citation is missing). Found nowhere:
  an **unverified quotation** (``EXCERPT_MISMATCH``: an agent-written excerpt that equals no
  slice);
* outside footnote definitions, a **span reference or the verified badge** written in the prose
  itself (also in code, and recognised after NFKC folding, so ``＃`` and Unicode dashes count) is
  ``EXCERPT_MISMATCH``: only footnotes cite, and only the build shows the badge.

Fails whatever the gate, like ``C-HYPOTHESIS-WALL``: a forged quotation is never a warning. The
wiki check refuses a run with such a finding, so the build never publishes its report.
"""

from __future__ import annotations

from ...kernel.checkids import CheckId
from ...kernel.errors import PublisherError
from ...kernel.reasons import Reason
from ...kernel.refs import looks_like_evidence
from ...kernel.store import read_snapshot
from ..quotations import PROSE_BUDGET, QUOTE_WORDS, Quotation, quotation_findings
from ..quotations import quotations as prose_quotations
from ..reportmd import report_tokens
from .collect import Collector

__all__ = ["PROSE", "PROSE_BUDGET", "QUOTE_WORDS", "Quotation", "quotations", "check_report_prose"]

PROSE = CheckId.PROSE

REPORT = "outputs/report.md"


def _cite_lines(text: str) -> list[Quotation]:
    """Every span reference or verified badge written in the report's prose (in code too), outside
    footnote definitions: only footnotes cite, and only the build shows the badge."""
    out: list[Quotation] = []
    depth = 0
    for token in report_tokens(text):
        if token.type == "footnote_reference_open":
            depth += 1
        elif token.type == "footnote_reference_close":
            depth -= 1
        if depth or token.type not in ("inline", "code_block", "fence"):
            continue
        seen_in = token.content
        if token.type == "inline":
            seen_in = "".join(
                " " if c.type in ("softbreak", "hardbreak") else c.content
                for c in token.children or ()
                if c.type in ("text", "code_inline", "softbreak", "hardbreak")
            )
        seen = looks_like_evidence(seen_in)
        if seen is not None:
            out.append(Quotation((token.map or (0, 0))[0] + 1, "cite-line", seen))
    return out


def quotations(text: str) -> list[Quotation]:
    """Every quotation (:func:`publisher.gate.quotations.quotations`) and cite-line look-alike of a
    report, in the order of their lines."""
    return sorted(_cite_lines(text) + prose_quotations(text), key=lambda q: q.line)


def check_report_prose(out: Collector, text: str | None) -> None:
    """C-PROSE over the report's prose: quotations located and cited, no cite-line look-alike."""
    if text is None:
        out.add(PROSE, "pass", "no report.md")
        return
    lines = _cite_lines(text)
    quoted = prose_quotations(text)
    if not lines and not quoted:
        out.add(PROSE, "pass", "no blockquote, quotation or cite-line look-alike in the report's prose")
        return
    for q in lines:
        detail = f"{q.text[:40]!r} in prose is shaped like the site's cite line; only footnotes cite"
        out.find(PROSE, Reason.EXCERPT_MISMATCH, REPORT, detail, line=q.line)
    cited: dict[str, list[tuple[str, int, int]]] = {}
    for note in out.rc.inputs.footnotes or []:
        cited.setdefault(note.label, []).extend((r.source_id, r.start, r.end) for r in note.refs)
    found = quotation_findings(quoted, file=REPORT, check=PROSE, texts=lambda: _run_texts(out), cited=cited)
    for f in found:  # named like the run's other findings
        out.find(PROSE, f.reason, REPORT, f.detail, line=f.line, source_id=f.source_id, start=f.start, end=f.end)
    problems = len(lines) + len(found)
    total = len(lines) + len(quoted)
    if problems:
        out.add(PROSE, "fail", f"{problems} of {total} quotation(s) or look-alike(s) not quoted through spans")
    else:
        out.add(PROSE, "pass", f"{total} quotation(s), each cited through a span that covers it")


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
