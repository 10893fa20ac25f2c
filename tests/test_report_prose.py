"""Check 10, C-PROSE: an agent's report prose quotes only through spans. A blockquote or a long
quotation is located in the run's snapshots: found and cited through a covering span passes, found
but uncited names the offsets to cite, found nowhere is an unverified quotation
(EXCERPT_MISMATCH); a cite-line look-alike in prose (span reference, verified badge, in any
Unicode form) is EXCERPT_MISMATCH. The wiki build refuses such a run with the site unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest
from _policy import keys_of, policy_of
from _wiki_helpers import RunBuilder, build_wiki, leftovers, make_wiki, refused_build, sample_run, tree_digest

from publisher.gate.checks.prose import QUOTE_WORDS, quotations
from publisher.gate.inputs import RunOptions
from publisher.gate.pipeline import check_run
from publisher.kernel.findings import Finding
from publisher.kernel.reasons import Reason

TEXT_B = "Appraisal text. Randomisation was adequate and allocation was concealed. Blinding unclear."


@pytest.fixture
def run(tmp_path: Path) -> tuple[Path, RunBuilder, str]:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    sid_b = next(sid for sid, text in rb.texts.items() if text == TEXT_B)
    return wiki, rb, sid_b


def _prose(rb: RunBuilder, wiki: Path, report: str) -> tuple[list[Finding], str]:
    rb.run.report_md.parent.mkdir(parents=True, exist_ok=True)
    rb.run.report_md.write_text(report, encoding="utf-8")
    rb.assemble()
    rc = check_run(rb.run, RunOptions(keys_of(wiki), wiki_root=wiki))
    status = rc.status("C-PROSE")
    return [f for f in rc.findings if f.check == "C-PROSE"], status


def _note(sid: str, start: int, end: int) -> str:
    return f"[^r]: {sid}#{start}-{end}\n"


def test_an_invented_blockquote_is_an_unverified_quotation(run: tuple[Path, RunBuilder, str]) -> None:
    wiki, rb, sid = run
    s = TEXT_B.index("Randomisation")
    report = f"# R\n\nCited.[^r]\n\n> No harm was found in any of the trials reviewed.\n\n{_note(sid, s, s + 30)}"
    found, status = _prose(rb, wiki, report)
    assert status == "fail"
    assert [(f.reason.value if f.reason else None, f.line) for f in found] == [("EXCERPT_MISMATCH", 5)]


def test_a_sources_words_uncited_name_the_span_to_cite(run: tuple[Path, RunBuilder, str]) -> None:
    wiki, rb, sid = run
    s = TEXT_B.index("Randomisation")
    quote = "Randomisation  was adequate and allocation was concealed."  # a doubled space: found normalised
    report = f"# R\n\nCited.[^r]\n\n> {quote}\n\n{_note(sid, s, s + 30)}"
    found, _ = _prose(rb, wiki, report)
    (finding,) = found
    end = TEXT_B.index("concealed.") + len("concealed.")
    assert (finding.reason, finding.source_id, finding.start, finding.end) == (None, sid, s, end)


def test_a_quotation_cited_through_a_covering_span_passes(run: tuple[Path, RunBuilder, str]) -> None:
    wiki, rb, sid = run
    s = TEXT_B.index("Randomisation")
    report = f"# R\n\n> Randomisation was adequate and[^r]\n\n{_note(sid, s, s + 30)}"
    found, status = _prose(rb, wiki, report)
    assert found == [] and status == "pass"


@pytest.mark.parametrize(
    "sentence",
    [
        'The authors wrote "no adverse events were reported in either arm of the trial".',
        "The authors wrote \u201cno adverse events were reported in either arm of the trial\u201d.",
        "The authors wrote \u00abno adverse events were reported in either arm of the trial\u00bb.",
    ],
)
def test_a_long_invented_quotation_is_refused(run: tuple[Path, RunBuilder, str], sentence: str) -> None:
    wiki, rb, sid = run
    s = TEXT_B.index("Randomisation")
    found, _ = _prose(rb, wiki, f"# R\n\n{sentence}[^r]\n\n{_note(sid, s, s + 30)}")
    assert [f.reason.value if f.reason else None for f in found] == ["EXCERPT_MISMATCH"]


def test_a_short_phrase_in_quotes_and_a_callout_stay_prose() -> None:
    short = " ".join(["word"] * (QUOTE_WORDS - 1))
    report = f'# R\n\nA "{short}" phrase.\n\n> **Note.** This report is an example of the format.\n'
    assert quotations(report) == []
    assert [q.kind for q in quotations(f'# R\n\nA "{short} more" phrase.\n')] == ["quotation"]


CITE_LINES = [
    "source · `src-{sid}#4012-4183` · full_text · ✓ verified",
    "See src-{sid}\uff0312-30 for the trial.",
    "See src-{sid}#12\u201030 for the trial.",
    "✔ Verified against the source.",
    "```\nsrc-{sid}#1-5\n```",
]


@pytest.mark.parametrize("line", CITE_LINES)
def test_a_cite_line_look_alike_in_prose_is_refused(run: tuple[Path, RunBuilder, str], line: str) -> None:
    wiki, rb, sid = run
    s = TEXT_B.index("Randomisation")
    report = f"# R\n\nCited.[^r]\n\n{line.format(sid=sid[4:])}\n\n{_note(sid, s, s + 30)}"
    found, status = _prose(rb, wiki, report)
    assert status == "fail" and [f.reason.value for f in found if f.reason] == ["EXCERPT_MISMATCH"]


def test_the_build_refuses_a_run_whose_prose_forges_a_quotation(run: tuple[Path, RunBuilder, str]) -> None:
    from publisher.wiki.promote import promote

    wiki, rb, sid = run
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    build_wiki(wiki)
    before = tree_digest(wiki / "site")
    s = TEXT_B.index("Randomisation")
    forged = f"> No harm was found in any trial.\n>\n> source · `{sid}#4012-4183` · full_text · ✓ verified\n"
    rb.run.report_md.write_text(f"# R\n\nCited.[^r]\n\n{forged}\n{_note(sid, s, s + 30)}", encoding="utf-8")
    rb.assemble()
    findings = refused_build(wiki)
    assert tree_digest(wiki / "site") == before and leftovers(wiki) == []
    report = "runs/alpha/outputs/report.md"
    forged = {(f.reason, f.file, f.line) for f in findings if f.check == "C-PROSE"}
    assert forged == {(Reason.EXCERPT_MISMATCH, report, 5), (Reason.EXCERPT_MISMATCH, report, 7)}, findings


def test_report_prose_passes_the_sites_allow_list_and_its_badge_does_not() -> None:
    from publisher.gate.render import report_prose_html
    from publisher.site.checks.prose import violations

    sid = "src-" + "e" * 64
    honest = "# R\n\n## Findings\n\nIt helped.[^a] See [x](https://example.org/).[^b]\n\n"
    honest += f"[^a]: {sid}#1-5\n[^b]: PMID 1.\n"
    assert violations(report_prose_html(honest), author="report") == []
    forged = honest.replace("It helped.", "It helped (✓ verified).")
    assert [v.kind for v in violations(report_prose_html(forged), author="report")] == ["badge"]


def test_a_quotation_whose_search_runs_out_is_unverified_even_where_cited(run: tuple[Path, RunBuilder, str]) -> None:
    """32 parts split at ellipses over a text of one word: each part occurs at every word and is
    checked again, seconds of work for every quotation at every assembly and build. The report's
    search budget stops it, and a search that stopped verifies nothing (fail-closed), though a
    complete search would find the parts and the footnote covers them."""
    from publisher.gate.checks.prose import PROSE_BUDGET
    from publisher.kernel.locate import LOCATE_BUDGET

    wiki, rb, _ = run
    words = rb.source("https://example.org/words", "a " * 30_000)
    quote = " ... ".join(" ".join(["a"] * k) for k in range(1, 33))
    report = f"# R\n\n> {quote}[^r]\n\n{_note(words, 0, 1055)}"
    found, status = _prose(rb, wiki, report)
    assert status == "fail"
    assert [(f.reason, f.line) for f in found] == [(Reason.EXCERPT_MISMATCH, 3)]
    assert LOCATE_BUDGET <= PROSE_BUDGET <= 4 * LOCATE_BUDGET  # seconds at worst, never minutes


_FRAGMENTS = " ... ".join(" ".join(["a"] * k) for k in range(1, 33))
"""32 parts split at ellipses, each found at every word of a text of ``a``."""


def test_one_quotations_search_never_stops_anothers(run: tuple[Path, RunBuilder, str]) -> None:
    """Each quotation has its own budget: a hostile one, searched first in a snapshot searched
    first, leaves a cited quotation of another source verified."""
    wiki, rb, sid_b = run
    for k in range(64):  # a text of 'a' whose snapshot is searched before the cited one
        words = rb.source(f"https://example.org/words-{k}", f"{k} " + "a " * 30_000)
        if words < sid_b:
            break
    assert words < sid_b
    s = TEXT_B.index("Randomisation")
    report = f"# R\n\n> {_FRAGMENTS}\n\n> Randomisation was adequate and[^r]\n\n{_note(sid_b, s, s + 30)}"
    found, status = _prose(rb, wiki, report)
    assert status == "fail" and [(f.reason, f.line) for f in found] == [(Reason.EXCERPT_MISMATCH, 3)]


def test_once_the_reports_budget_is_spent_nothing_more_is_verified(
    run: tuple[Path, RunBuilder, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """All the quotations of a report together stop at PROSE_BUDGET: past it, even a cited
    quotation is unverified (fail-closed), never taken as quoted."""
    from publisher.gate import quotations as prose_module

    wiki, rb, sid = run
    s = TEXT_B.index("Randomisation")
    report = f"# R\n\n> Randomisation was adequate and[^r]\n\n{_note(sid, s, s + 30)}"
    assert _prose(rb, wiki, report) == ([], "pass")
    monkeypatch.setattr(prose_module, "PROSE_BUDGET", 0)
    found, status = _prose(rb, wiki, report)
    assert status == "fail" and [(f.reason, f.line) for f in found] == [(Reason.EXCERPT_MISMATCH, 3)]


def test_reading_a_reports_claims_and_checking_its_prose_share_one_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    """The claims and the cite-line check read the same parse of one text; a changed text is
    parsed again (never the tokens of another report)."""
    from markdown_it import MarkdownIt

    from publisher.gate.reportmd import read_report

    parses: list[str] = []  # by the report's parser (raw HTML off; the quotation search keeps it on)
    real = MarkdownIt.parse

    def counted(self: MarkdownIt, src: str, env: object = None) -> object:
        if not self.options["html"]:
            parses.append(src)
        return real(self, src, env)  # type: ignore[arg-type]

    monkeypatch.setattr(MarkdownIt, "parse", counted)
    text = "# R\n\nA claim src-" + "a" * 64 + "#1-2 in prose.[^1]\n\n[^1]: pmid:123\n"
    before = [q.kind for q in quotations(text) if q.kind == "cite-line"]
    first = read_report(text).footnotes
    assert before == ["cite-line"] and [f.label for f in first] == ["1"]
    own = [src for src in parses if src == text]
    assert len(own) == 1  # the cite-line check parsed it; the claims reused that parse
    other = text.replace("[^1]", "[^2]")
    assert [f.label for f in read_report(other).footnotes] == ["2"]
    assert parses.count(other) == 1
