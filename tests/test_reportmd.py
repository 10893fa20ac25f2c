"""Report claims parsed from raw footnote lines (CONTRACT section 7)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from publisher.gate.reportmd import _Marks, paper_ids_in, parse_report
from publisher.kernel.refs import format_ref

SID = "src-" + "ab" * 32
OTHER = "src-" + "cd" * 32


def test_excerpt_escapes_survive_because_raw_lines_are_parsed() -> None:
    excerpt = 'He said "no" \\ then\nleft'
    report = f"Claim one.[^x]\n\n[^x]: {format_ref(SID, 3, 30, excerpt)}\n"
    (note,) = parse_report(report)
    assert note.kind == "report_claim"
    assert note.refs[0].quoted == excerpt
    assert (note.refs[0].source_id, note.refs[0].start, note.refs[0].end) == (SID, 3, 30)
    assert note.claim == "Claim one."


def test_several_references_are_alternatives() -> None:
    body = f"{SID}#1-5 {json.dumps('a')}; {OTHER}#7-9"
    (note,) = parse_report(f"A.[^y]\n\n[^y]: {body}\n")
    assert [(r.source_id, r.start, r.end, r.quoted) for r in note.refs] == [(SID, 1, 5, "a"), (OTHER, 7, 9, None)]


def test_sentence_is_the_one_that_cites_the_footnote() -> None:
    report = "First sentence. Second one cites it[^z] and goes on. Third.[^w]\n\n[^z]: PMID 1.\n[^w]: PMID 2.\n"
    notes = {n.label: n for n in parse_report(report)}
    assert notes["z"].claim == "Second one cites it"
    assert notes["w"].claim == "Third."


def test_unreferenced_and_duplicate_definitions_are_all_kept() -> None:
    report = f"Cited.[^a]\n\n[^a]: {SID}#1-2\n[^a]: again\n[^lonely]: {SID}#3-4\n"
    notes = parse_report(report)
    assert [(n.label, n.ordinal, n.line) for n in notes] == [("a", 0, 3), ("a", 1, 4), ("lonely", 0, 5)]
    assert notes[2].claim is None and notes[2].kind == "report_claim"


def test_malformed_reference_is_an_error_not_a_note() -> None:
    (note,) = parse_report("X.[^m]\n\n[^m]: src-abc#1-2 trailing\n")
    assert note.kind == "report_claim" and note.ref_error is not None and note.refs == ()


def test_links_paper_ids_and_bare_keys_are_all_citations() -> None:
    report = (
        "A.[^l] B.[^p] C.[^n]\n\n"
        "[^l]: See [the trial](https://example.org/t) and [local](notes.md).\n"
        "[^p]: PMID 12345678. DOI 10.1000/Example. PMCID pmc42.\n"
        "[^n]: Just a remark.\n"
    )
    notes = {n.label: n for n in parse_report(report)}
    assert notes["l"].links == ("https://example.org/t",) and notes["l"].kind == "report_claim"
    assert notes["p"].kind == "synthesis_claim"
    assert notes["p"].paper_ids == (("pmid", "12345678"), ("doi", "10.1000/Example"), ("pmcid", "PMC42"))
    assert notes["n"].kind == "synthesis_claim"  # as upstream, every footnote cites something


def test_paper_ids_ignore_urls_and_bare_pmc_words() -> None:
    assert paper_ids_in("see https://doi.org/10.1000/x and PMC123 at pmc") == ()


class _Inline:
    """An inline token's two fields the mark index reads."""

    def __init__(self, content: str, first_line: int | None) -> None:
        self.content = content
        self.map = None if first_line is None else [first_line, first_line + content.count("\n") + 1]


def _marks_by_find(token: _Inline, label: str) -> tuple[int, list[int]]:
    """What the index must give for ``label``: the first ``content.find`` of ``[^label]`` and the
    lines of every literal occurrence, each once, counted from the token's first line."""
    mark, content, lines = f"[^{label}]", token.content, []
    at = content.find(mark)
    first = at
    while at >= 0 and token.map is not None:
        line = token.map[0] + 1 + content.count("\n", 0, at)
        if not lines or lines[-1] != line:
            lines.append(line)
        at = content.find(mark, at + len(mark))
    return first, lines


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.sampled_from(["[^a]", "[^ab]", "[^b]", "[^", "]", "[^[^a]", "[^a]]", "\n", "x. ", "[^a b]", "^"]),
        max_size=30,
    ),
    st.sets(st.sampled_from(["a", "ab", "b", "a b", "[^a", "a]", "", "zz"]), min_size=1),
    st.sampled_from([None, 0, 7]),
)
def test_the_mark_index_finds_what_find_finds(pieces: list[str], labels: set[str], first_line: int | None) -> None:
    """One pass for all labels (linear in a paragraph citing thousands of footnotes) finds each
    label where searching the content for it does, overlapping and bracketed look-alikes too."""
    token = _Inline("".join(pieces), first_line)
    marks = _Marks(token, labels)  # type: ignore[arg-type]
    for label in labels:
        first, lines = _marks_by_find(token, label)
        assert marks.first.get(label, -1) == first, label
        assert marks.lines.get(label, []) == lines, label
