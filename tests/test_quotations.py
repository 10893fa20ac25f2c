"""One quotation rule for all prose (C-PROSE): report prose, concept prose and hand-written pages.

Every quotation-mark convention, ``<q>``, the quoted passages of alt texts and link titles,
blockquotes and plain footnotes: a quotation found nowhere in the snapshots it may cite is an
unverified quotation (EXCERPT_MISMATCH), one that is a source's words must be cited through a
covering span (a finding naming the span), one cited so passes. A footnote that cites a span is
exactly what promotion writes: a real reference followed by words of the author's own is refused,
and the build leaves the site byte-identical.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from pathlib import Path

import pytest
from _policy import keys_of, policy_of
from _wiki_helpers import RunBuilder, build_wiki, leftovers, make_wiki, refused_build, sample_run, tree_digest
from hypothesis import given, settings
from hypothesis import strategies as st

from publisher.gate.inputs import RunOptions
from publisher.gate.pipeline import check_run
from publisher.gate.quotations import (
    QUOTATION_MARKS,
    QUOTE_WORDS,
    Quotation,
    quotation_findings,
    quotations,
    quotations_around,
    quoted_passages,
    words,
)
from publisher.kernel.checkids import CheckId
from publisher.kernel.findings import Finding
from publisher.kernel.reasons import Reason
from publisher.site.checks.prose import check_page_quotations
from publisher.wiki.check import check_wiki
from publisher.wiki.promote import promote

FORGED = "No adverse events were reported in either arm of the trial"
"""Words in none of the sample run's snapshots."""

REAL = "Randomisation was adequate and allocation was concealed."
"""Words of the sample run's second snapshot (seven of them), not cited as a whole."""

CONVENTIONS = {
    "curly-double": "The authors wrote \u201c{q}\u201d.",
    "curly-single": "The authors wrote \u2018{q}\u2019.",
    "low-9": "Die Autoren schrieben \u201e{q}\u201c.",
    "same-mark": "F\u00f6rfattarna skrev \u201d{q}\u201d.",
    "same-mark-single": "F\u00f6rfattarna skrev \u2019{q}\u2019.",
    "guillemets": "Les auteurs ont \u00e9crit \u00ab{q}\u00bb.",
    "guillemets-reversed": "Die Autoren schrieben \u00bb{q}\u00ab.",
    "guillemets-same": "Kirjoittajat kirjoittivat \u00bb{q}\u00bb.",
    "single-guillemets": "Les auteurs\u00a0: \u2039{q}\u203a.",
    "single-guillemets-reversed": "Die Autoren: \u203a{q}\u2039.",
    "cjk-corner": "\u8457\u8005\u306f\u300c{q}\u300d\u3068\u66f8\u3044\u305f\u3002",
    "cjk-white-corner": "\u8457\u8005\u306f\u300e{q}\u300f\u3068\u66f8\u3044\u305f\u3002",
    "fullwidth": "\u8457\u8005\uff1a\uff02{q}\uff02\u3002",
    "fullwidth-single": "\u8457\u8005\uff1a\uff07{q}\uff07\u3002",
    "straight-double": 'The authors wrote "{q}".',
    "straight-single": "The authors wrote '{q}'.",
    "smarty-guillemets": "Les auteurs ont \u00e9crit <<{q}>>.",
    "q-element": "The authors wrote <q>{q}</q>.",
    "alt-text": "![Figure 2: \u201c{q}\u201d](figure.png)",
    "link-title": '[The trial](https://example.org/trial "Its abstract: \u201c{q}\u201d").',
    "blockquote": "> {q}",
    "plain-footnote": "See the note.[^note]\n\n[^note]: The abstract says \u201c{q}\u201d.",
}
"""Each way prose can quote, with ``{q}`` where the quoted words go."""


def _line_of(text: str, words_: str) -> int:
    return next(n for n, line in enumerate(text.split("\n"), 1) if words_ in line)


def _c_prose(findings: list[Finding] | tuple[Finding, ...]) -> list[tuple[str | None, int | None]]:
    return [(f.reason.value if f.reason else None, f.line) for f in findings if f.check in ("C-PROSE", "C-PAGE-PROSE")]


# -- what counts as a quotation -----------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CONVENTIONS))
def test_every_convention_is_read_as_a_quotation(name: str) -> None:
    text = f"# Page\n\n{CONVENTIONS[name].format(q=FORGED)}\n"
    found = quotations(text)
    assert [q.line for q in found if FORGED in q.text][:1] == [_line_of(text, FORGED)]


def test_every_initial_and_final_quotation_mark_of_unicode_pairs_up() -> None:
    """Every character of categories Pi and Pf opens or closes a passage (a new pair in a later
    Unicode version fails this test, never passes the check unread)."""
    closers = set("".join(QUOTATION_MARKS.values()))
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        category = unicodedata.category(char)
        if category == "Pi":
            assert char in QUOTATION_MARKS, f"U+{code:04X}"
        elif category == "Pf":
            assert char in closers, f"U+{code:04X}"


def test_apostrophes_and_short_phrases_stay_prose() -> None:
    short = " ".join(["word"] * (QUOTE_WORDS - 1))
    text = (
        f"It's the authors' view that the 'placebo' arm did well; a \u201c{short}\u201d phrase, "
        "the patients\u2019 diaries and the nurses\u2019 rota were kept for six months in the ward.\n\n"
        f'!!! note "A title of more than six words here"\n    Body.\n\n'
        f"`\u201cin code this is not a quotation at all\u201d`\n\n"
        f"```\n\u201cnor in a fenced block of code anywhere\u201d\n```\n"
        "> **Note.** A callout of the author's own, not a quotation.\n"
    )
    assert quotations(text) == []
    assert quoted_passages("don't 'quote' it's") == [(7, "quote")]


def test_a_q_element_left_open_quotes_what_follows_it() -> None:
    found = quotations(f"The authors: <q>{FORGED}\n")
    assert [(q.kind, q.text) for q in found] == [("q", FORGED)]


def test_words_of_scripts_without_spaces_count_letter_by_letter() -> None:
    assert words("\u6240\u6709\u53c2\u4e0e\u8005\u5747\u672a\u62a5\u544a") == 9
    assert words("\uff28\uff45\uff4c\uff4c\uff4f \uff57\uff4f\uff52\uff4c\uff44") == 2  # fullwidth Latin: words
    found = quotations("\u8457\u8005\u306f\u300c\u6240\u6709\u53c2\u4e0e\u8005\u5747\u672a\u62a5\u544a\u300d\u3002\n")
    assert [q.kind for q in found] == ["quotation"]


def test_a_footnote_that_cites_a_span_is_not_read_as_prose() -> None:
    sid = "src-" + "a" * 64
    text = f"Cited.[^a]\n\n[^a]: {sid}#1-5 \u201c{FORGED}\u201d\n"
    assert quotations(text) == []


# -- report prose -------------------------------------------------------------------------------


@pytest.fixture
def wiki_run(tmp_path: Path) -> tuple[Path, RunBuilder]:
    wiki = make_wiki(tmp_path / "wiki")
    return wiki, sample_run(wiki)


def _report_findings(wiki: Path, rb: RunBuilder, prose: str) -> list[Finding]:
    sid = next(sid for sid, text in rb.texts.items() if REAL in text)
    start = rb.texts[sid].index("Randomisation")
    report = f"# R\n\nCited.[^r]\n\n{prose}\n\n[^r]: {sid}#{start}-{start + 30}\n"
    rb.run.report_md.parent.mkdir(parents=True, exist_ok=True)
    rb.run.report_md.write_text(report, encoding="utf-8")
    rb.assemble()
    return [f for f in check_run(rb.run, RunOptions(keys_of(wiki), wiki_root=wiki)).findings if f.check == "C-PROSE"]


@pytest.mark.parametrize("name", sorted(CONVENTIONS))
def test_report_prose_refuses_a_forged_quotation(wiki_run: tuple[Path, RunBuilder], name: str) -> None:
    wiki, rb = wiki_run
    prose = CONVENTIONS[name].format(q=FORGED)
    found = _report_findings(wiki, rb, prose)
    assert _c_prose(found) == [("EXCERPT_MISMATCH", 5 + _line_of(prose, FORGED) - 1)]
    assert all(f.file.endswith("outputs/report.md") for f in found)


@pytest.mark.parametrize("name", sorted(CONVENTIONS))
def test_report_prose_names_the_span_of_a_sources_words(wiki_run: tuple[Path, RunBuilder], name: str) -> None:
    wiki, rb = wiki_run
    (finding,) = _report_findings(wiki, rb, CONVENTIONS[name].format(q=REAL.rstrip(".")))
    sid = next(sid for sid, text in rb.texts.items() if REAL in text)
    assert (finding.reason, finding.source_id, finding.start) == (None, sid, rb.texts[sid].index(REAL))


def test_a_skipped_block_is_left_out_and_the_prose_around_it_still_read() -> None:
    """The parser does not tokenise what ``skip`` names (a concept's generated block): the
    quotations around it, and the footnotes it defines that they cite, are read as without it."""
    forged = "the trial proved the drug cured every single patient"
    text = "\n".join(
        [
            f"> {forged} at once[^n1]",
            "",
            "<!-- begin -->",
            f"- “{forged} in the block”[^n1]",
            "",
            '[^n1]: src-0000000000000000#0-10 "x"',
            "<!-- end -->",
            "",
            f"After it: “{forged} again”[^n1] and <q>{forged} too</q>.",
        ]
    )
    skipped = range(2, 7)
    found = quotations(text, skip=skipped.__contains__)
    assert found == [q for q in quotations(text) if q.line - 1 not in skipped]
    assert [(q.line, q.kind, q.labels) for q in found] == [
        (1, "blockquote", ("n1",)),
        (9, "q", ("n1",)),
        (9, "quotation", ("n1",)),
    ]


_QUOTING = "the trial proved the drug cured every single patient"

_PROSE_PIECES = [
    "```",
    "<pre>",
    "<!-- a comment left open",
    "- an item",
    "> a quote",
    f"> {_QUOTING}",
    f"Prose: “{_QUOTING}”.",
    f"Prose <<{_QUOTING}>> in guillemets.",
    f"Cited in the block[^n1]: “{_QUOTING}”.",
    "| a | b |\n|---|---|",
    "    indented code",
    "A setext title",
    "===",
    "[c]: https://example.org/reference",
    f'[The trial][c] and [the other][d]: "{_QUOTING}"',
    "",
]
"""Prose around a block: quotations, what could stay open into it, labels it could read."""

_BLOCK_PIECES = [
    "```",
    "<pre>",
    f"- “{_QUOTING} in the block”[^n1]",
    f"> {_QUOTING}",
    '[^n1]: src-0000000000000000#0-10 "x"',
    "[d]: https://example.org/defined-in-the-block 'a title'",
    "<!-- a comment -->",
    "",
]
"""Lines of a generated block: what it shows, what could stay open past its end."""


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(_PROSE_PIECES), max_size=5),
    st.lists(st.sampled_from(_BLOCK_PIECES), max_size=6),
    st.lists(st.sampled_from(_PROSE_PIECES), max_size=5),
)
def test_a_block_left_out_of_the_parse_gives_the_quotations_of_the_whole_parse(
    before: list[str], block: list[str], after: list[str]
) -> None:
    """:func:`quotations_around` leaves a block out of the parse only where that cannot change
    what the prose around it reads: the same quotations, lines and labels as the whole parse
    with the block skipped, whatever stays open into the block or past it, and whatever label
    one side defines for the other."""
    lines = [*before, "<!-- begin -->", *block, "", "<!-- end -->", *after]
    text = "\n".join(lines)
    block_lines = range(len(before), len(before) + len(block) + 3)
    assert quotations_around(text, block_lines) == quotations(text, skip=block_lines.__contains__)


_INLINE_PIECES = [
    "*<!-- not a comment --*",
    "`<!-- code -->`",
    "[^n1] and [d] and [d][] and ![d]",
    "<span>[d]: https://example.org/in-a-span</span>",
    "\\<!-- escaped -->",
    "<<a>> and <<!-- x -->>",
]
"""Lines whose inline reading (emphasis, code, references, raw HTML, escapes) could only matter
if the inline pass touched what the block rules found."""


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_BLOCK_PIECES + _INLINE_PIECES + _PROSE_PIECES), max_size=8))
def test_a_block_closes_as_the_whole_parse_with_inlines_says(lines: list[str]) -> None:
    """Whether a block ends apart and defines no link label is read from the block rules alone
    (no inline pass): the answer of a parse that tokenises every inline, for any block."""
    from publisher.gate import quotations as quotations_module
    from publisher.gate.mdparts import ends_apart, parse_part

    raw = "\n".join([*lines, "", "<!-- end -->"])
    smart = quotations_module._SMARTY.sub(quotations_module._smarty, raw)
    tokens, env = parse_part(quotations_module._parser(), smart)
    assert any(t.children for t in tokens if t.type == "inline") or not any(t.type == "inline" for t in tokens)
    whole = ends_apart(tokens, raw.count("\n") + 1) and not env.get("references")
    assert quotations_module._closed_block(raw) == whole


_FOOTNOTE_BLOCK_PIECES = [
    "[^n2]: a note",
    "[^n3]: a note\n    <!-- inside the note -->",
    "    <!-- indented -->",
    "<!-- a comment -->>",
    "<!-- a comment -->",
    "<div>",
    "</div>",
    "- item[^n2]",
    "text << and >> there",
]


def test_the_footnote_parser_reads_blocks_as_the_quotation_parser() -> None:
    """What lets one parse of a generated block serve both readings: the two parsers have the same
    block rules, in the same order, and the same options."""
    from publisher.gate import quotations as quotations_module
    from publisher.wiki import concepts

    footnotes, quotes = concepts._footnote_parser(), quotations_module._parser()
    assert footnotes.block.ruler.get_all_rules() == quotes.block.ruler.get_all_rules()
    assert footnotes.block.ruler.get_active_rules() == quotes.block.ruler.get_active_rules()
    assert footnotes.options == quotes.options


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_BLOCK_PIECES + _FOOTNOTE_BLOCK_PIECES + _INLINE_PIECES), max_size=8))
def test_a_block_read_by_the_footnote_parser_closes_as_the_quotation_parser_says(lines: list[str]) -> None:
    """The answer kept from the footnote parser's reading of a block is the quotation parser's
    own, for any block; a block that smarty reads otherwise keeps nothing."""
    from publisher.gate import quotations as quotations_module
    from publisher.gate.mdparts import parse_part
    from publisher.wiki import concepts

    raw = "\n".join([*lines, "", "<!-- end -->"])
    quotations_module._CLOSED_BLOCKS.clear()
    tokens, env = parse_part(concepts._footnote_parser(), raw)
    quotations_module.keep_closed_block(raw, tokens, env)
    kept: list[bool] = []
    quotations_module._CLOSED_BLOCKS.get(raw, lambda _: kept.append(True) or False)
    quotations_module._CLOSED_BLOCKS.clear()
    fresh = quotations_module._CLOSED_BLOCKS.get(raw, quotations_module._closed_block)
    quotations_module._CLOSED_BLOCKS.clear()
    if "<<" in raw or ">>" in raw:
        assert kept == [True], "nothing kept where smarty changes the text"
        return
    assert not kept
    quotations_module.keep_closed_block(raw, tokens, env)
    assert quotations_module._CLOSED_BLOCKS.get(raw, lambda _: not fresh) == fresh


def test_a_block_that_stands_apart_is_read_once_for_every_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two files holding the same block: whether it closes is read once for both, and the
    quotations around it are each file's own, as the whole parse gives them."""
    from publisher.gate import quotations as quotations_module

    quotations_module._CLOSED_BLOCKS.clear()
    read: list[str] = []
    real = quotations_module._closed_block
    monkeypatch.setattr(quotations_module, "_closed_block", lambda raw: read.append(raw) or real(raw))
    block = ["<!-- begin -->", f"> {_QUOTING} in the block", "", "<!-- end -->"]
    texts = ["\n".join([f"> {_QUOTING}", "", *block]), "\n".join(["Intro.", "", *block, f"Then <q>{_QUOTING}</q>."])]
    ranges = [range(2, 6), range(2, 6)]
    found = [quotations_around(text, lines) for text, lines in zip(texts, ranges, strict=True)]
    assert len(read) == 1
    assert found == [quotations(t, skip=r.__contains__) for t, r in zip(texts, ranges, strict=True)]
    assert [[(q.line, q.kind) for q in one] for one in found] == [[(1, "blockquote")], [(7, "q")]]


def test_snapshots_passed_over_without_their_map_still_locate_and_refuse() -> None:
    """The search passes over a snapshot from its kept normal form only where it cannot hold the
    words: a quotation found only after normalisation, or only in fragments, is still located,
    in every file that quotes it (the second reads the kept form), and a doctored one refused."""
    real = "Randomisation was adequate in every one of the participating centres."
    texts = {f"src-{n:016x}": f"Unrelated text number {n} about something else entirely." for n in range(6)}
    texts["src-00000000000000aa"] = f"Methods. {real} Results followed."
    at = texts["src-00000000000000aa"].index(real)
    spaced = "Randomisation  was\nadequate in every one of the participating centres."
    cut = "Randomisation was adequate … the participating centres."
    doctored = "Randomisation was adequate in none of the participating centres."
    for file in ("concepts/a.md", "concepts/b.md"):
        found = [Quotation(n + 1, "blockquote", t) for n, t in enumerate([spaced, cut, doctored])]
        got = quotation_findings(found, file=file, check=CheckId.PROSE, texts=lambda: texts, cited={})
        assert [(f.line, f.reason, f.source_id, f.start) for f in got] == [
            (1, None, "src-00000000000000aa", at),
            (2, None, "src-00000000000000aa", at),
            (3, Reason.EXCERPT_MISMATCH, None, None),
        ]


# -- concept prose ------------------------------------------------------------------------------


def _with_prose(concept: Path, prose: str) -> int:
    """``prose`` written before the concept's generated block; the 1-based line it starts on."""
    text = concept.read_text(encoding="utf-8")
    head, tail = text.split("<!-- publisher:generated:begin -->", 1)
    head += f"{prose}\n\n"
    concept.write_text(head + "<!-- publisher:generated:begin -->" + tail, encoding="utf-8")
    return head.count("\n") - prose.count("\n") - 1


@pytest.fixture
def promoted(wiki_run: tuple[Path, RunBuilder]) -> tuple[Path, RunBuilder, Path]:
    wiki, rb = wiki_run
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    return wiki, rb, wiki / "concepts" / "alpha.md"


@pytest.mark.parametrize("name", sorted(CONVENTIONS))
def test_concept_prose_refuses_a_forged_quotation(promoted: tuple[Path, RunBuilder, Path], name: str) -> None:
    wiki, _, concept = promoted
    prose = CONVENTIONS[name].format(q=FORGED)
    first = _with_prose(concept, prose)
    found = [f for f in check_wiki(wiki, policy=policy_of(wiki)).findings if f.check == "C-PAGE-PROSE"]
    assert _c_prose(found) == [("EXCERPT_MISMATCH", first + _line_of(prose, FORGED) - 1)]
    assert {f.file for f in found} == {"concepts/alpha.md"}


@pytest.mark.parametrize("name", ["curly-double", "same-mark", "cjk-corner", "alt-text", "plain-footnote"])
def test_concept_prose_names_the_span_of_a_sources_words(promoted: tuple[Path, RunBuilder, Path], name: str) -> None:
    wiki, rb, concept = promoted
    _with_prose(concept, CONVENTIONS[name].format(q=REAL.rstrip(".")))
    (finding,) = [f for f in check_wiki(wiki, policy=policy_of(wiki)).findings if f.check == "C-PAGE-PROSE"]
    sid = next(sid for sid, text in rb.texts.items() if REAL in text)
    assert (finding.reason, finding.source_id, finding.start) == (None, sid, rb.texts[sid].index(REAL))


def test_concept_prose_quoting_through_its_evidence_footnote_passes(promoted: tuple[Path, RunBuilder, Path]) -> None:
    wiki, rb, concept = promoted
    sid = next(sid for sid, text in rb.texts.items() if REAL in text)
    start = rb.texts[sid].index("Randomisation")
    label = re.search(rf"^\[\^([^\]]+)\]: {sid}#{start}-{start + 30} ", concept.read_text("utf-8"), re.MULTILINE)
    assert label is not None
    _with_prose(concept, f"> Randomisation was adequate and[^{label.group(1)}]")
    assert check_wiki(wiki, policy=policy_of(wiki)).ok


# -- hand-written pages -------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CONVENTIONS))
def test_a_hand_written_page_refuses_a_forged_quotation(wiki_run: tuple[Path, RunBuilder], name: str) -> None:
    _, rb = wiki_run
    prose = CONVENTIONS[name].format(q=FORGED)
    page = f"---\ntitle: \u201c{FORGED}\u201d\n---\n# Page\n\n{prose}\n"
    found = check_page_quotations(page, file="docs/page.md", texts=lambda: rb.texts)
    assert _c_prose(found) == [("EXCERPT_MISMATCH", 6 + _line_of(prose, FORGED) - 1)]


def test_a_hand_written_page_cannot_quote_a_source_at_all(wiki_run: tuple[Path, RunBuilder]) -> None:
    _, rb = wiki_run
    (finding,) = check_page_quotations(f"# P\n\n\u201c{REAL}\u201d\n", file="docs/p.md", texts=lambda: rb.texts)
    assert finding.reason is None and finding.source_id is not None and finding.line == 3


@pytest.mark.parametrize("name", ["same-mark", "cjk-corner", "alt-text", "plain-footnote"])
def test_the_build_refuses_a_page_that_forges_a_quotation(wiki_run: tuple[Path, RunBuilder], name: str) -> None:
    wiki, rb = wiki_run
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    build_wiki(wiki)
    before = tree_digest(wiki / "site")
    prose = CONVENTIONS[name].format(q=FORGED)
    (wiki / "docs" / "index.md").write_text(f"# Home\n\n{prose}\n", encoding="utf-8")
    findings = refused_build(wiki)
    assert tree_digest(wiki / "site") == before and leftovers(wiki) == []
    hits = {(f.check, f.reason, f.file, f.line) for f in findings}
    assert ("C-PAGE-PROSE", Reason.EXCERPT_MISMATCH, "docs/index.md", 2 + _line_of(prose, FORGED)) in hits, findings


# -- footnotes that cite a span are promotion's, byte for byte ----------------------------------


def _promoted_note(concept: Path) -> tuple[str, str]:
    match = re.search(r"^\[\^([^\]]+)\]: (src-.*)$", concept.read_text("utf-8"), re.MULTILINE)
    assert match is not None
    return match.group(1), match.group(2)


DOCTORED = {
    "sentence-after": "{body} The trial also found no harm at all.",
    "continued-line": "{body}\n    The trial also found no harm at all.",
    "no-excerpt": "{ref}",
    "two-references": "{body}; {body}",
    "comment-after": "{body} <!-- a note -->",
}


@pytest.mark.parametrize("name", sorted(DOCTORED))
def test_a_doctored_evidence_footnote_fails_the_build(promoted: tuple[Path, RunBuilder, Path], name: str) -> None:
    wiki, _, concept = promoted
    build_wiki(wiki)
    before = tree_digest(wiki / "site")
    _, body = _promoted_note(concept)
    ref = body.split(" ", 1)[0]
    note = DOCTORED[name].format(body=body, ref=ref)
    text = concept.read_text("utf-8")
    text += f"\nAs shown.[^doctored]\n\n[^doctored]: {note}\n"
    concept.write_text(text, encoding="utf-8")
    line = _line_of(text, "[^doctored]: ")
    findings = refused_build(wiki)
    assert tree_digest(wiki / "site") == before and leftovers(wiki) == []
    hits = {(f.check, f.reason, f.file, f.line, f.label) for f in findings}
    assert ("C-PAGE-PROSE", Reason.EXCERPT_MISMATCH, "concepts/alpha.md", line, "doctored") in hits, findings


def test_an_exact_copy_of_a_promoted_footnote_passes(promoted: tuple[Path, RunBuilder, Path]) -> None:
    wiki, _, concept = promoted
    _, body = _promoted_note(concept)
    concept.write_text(concept.read_text("utf-8") + f"\nAs shown.[^mine]\n\n[^mine]: {body}\n", encoding="utf-8")
    assert check_wiki(wiki, policy=policy_of(wiki)).ok


def test_a_plain_footnote_in_a_sources_words_must_be_cited(promoted: tuple[Path, RunBuilder, Path]) -> None:
    """A plain footnote is the author's note where its words are nobody else's; where they are a
    source's, it must cite the span that holds them."""
    wiki, rb, concept = promoted
    first = _with_prose(concept, f"See the note.[^p]\n\n[^p]: {REAL}")
    (finding,) = [f for f in check_wiki(wiki, policy=policy_of(wiki)).findings if f.check == "C-PAGE-PROSE"]
    sid = next(sid for sid, text in rb.texts.items() if REAL in text)
    assert (finding.reason, finding.source_id, finding.line) == (None, sid, first + 2)
    concept.write_text(concept.read_text("utf-8").replace(REAL, "The authors of this page chose the trials by hand."))
    assert check_wiki(wiki, policy=policy_of(wiki)).ok


def test_snapshots_are_read_only_where_prose_quotes(promoted: tuple[Path, RunBuilder, Path]) -> None:
    wiki, _, concept = promoted
    assert check_wiki(wiki, policy=policy_of(wiki))._texts is None
    _with_prose(concept, f"\u201c{FORGED}\u201d")
    assert check_wiki(wiki, policy=policy_of(wiki))._texts


def test_the_kept_normal_forms_count_the_texts_that_key_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cap on kept normal forms holds the snapshot texts too (they are the keys): two texts
    whose normal forms fit under the cap but whose texts and forms together do not are not both kept."""
    from publisher.gate import quotations as q

    monkeypatch.setattr(q, "_normal_texts", type(q._normal_texts)())
    monkeypatch.setattr(q, "NORMAL_TEXTS_CODE_POINTS", 500)
    first, second = "alpha " * 40, "beta " * 40  # 240 and 200 code points, forms about as long
    q._normal_text(first)
    q._normal_text(second)
    assert list(q._normal_texts) == [second]  # the forms alone (about 440) would fit; with their texts not
