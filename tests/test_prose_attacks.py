"""Attacks on the published site by whoever writes prose or files under docs/: the build's own
stylesheets cannot be replaced, an SVG cannot load anything, and text cannot spell evidence in
an order or form the checks do not read. Payloads here are not those of the other prose tests."""

from __future__ import annotations

import json
import re
from pathlib import Path

import markdown
import pytest
from _policy import policy_of
from _wiki_helpers import build_wiki, leftovers, make_wiki, refused_build, sample_run, tree_digest

from publisher.kernel.reasons import Reason
from publisher.site.checks.inert import check_static
from publisher.site.checks.prose import check_prose, violations
from publisher.site.checks.scan import scan_page
from publisher.wiki.promote import promote

_FORGED_CSS = 'button.evidence-verify[data-state="mismatch"]::after { content: "\\2713  verified"; color: green }'


@pytest.mark.parametrize("uri", ["assets/publisher/evidence.css", "assets/publisher/reader.css"])
def test_a_docs_file_cannot_replace_the_builds_own_stylesheet(tmp_path: Path, uri: str) -> None:
    """The build's stylesheets decide what "verified" looks like; one of docs/ at their path
    would be published in their place (it is named in extra_css, so it passed as the site's own)."""
    wiki = make_wiki(tmp_path / "wiki")
    promote(sample_run(wiki).run.path, wiki, policy=policy_of(wiki))
    build_wiki(wiki)
    before = tree_digest(wiki / "site")
    forged = wiki / "docs" / uri
    forged.parent.mkdir(parents=True)
    forged.write_text(_FORGED_CSS, encoding="utf-8")
    findings = refused_build(wiki)
    assert ("C-BUILD", f"docs/{uri}") in {(f.check, f.file) for f in findings}, findings
    assert tree_digest(wiki / "site") == before and leftovers(wiki) == []


# -- SVG values: only functions that draw -------------------------------------------------------

_SVG_OPEN = '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"'
LOADING_SVG = {
    # image-set() takes a plain string as its URL: no url( in sight (a browser fetches it when the
    # file is opened on its own, where no page policy applies); a comment or escape hides a name
    "image-set.svg": f"{_SVG_OPEN} style=\"background-image: image-set('https://evil.example/a.png' 1x)\"/>",
    "webkit.svg": f"{_SVG_OPEN}><rect style=\"mask-image: -webkit-image-set('//evil.example/m' 1x)\"/></svg>",
    "cursor.svg": f"{_SVG_OPEN}><g style=\"cursor: image-set('https://evil.example/c.png' 1x), auto\"/></svg>",
    "cross-fade.svg": f"{_SVG_OPEN} style=\"background: cross-fade(url(#a), image-set('https://e.example/' 1x))\"/>",
    "comment.svg": f"{_SVG_OPEN} style=\"background-image: image-set/**/('https://evil.example/a.png' 1x)\"/>",
}


@pytest.mark.parametrize("name", sorted(LOADING_SVG))
def test_an_svg_value_that_loads_through_a_css_function_is_refused(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text(LOADING_SVG[name], encoding="utf-8")
    found = check_static(f"docs/{name}", path, dest=name)
    assert [(f.check, f.file) for f in found] == [("C-PAGE-PROSE", f"docs/{name}")]


def test_an_svg_that_only_draws_keeps_its_functions(tmp_path: Path) -> None:
    path = tmp_path / "ok.svg"
    path.write_text(
        f'{_SVG_OPEN} viewBox="0 0 4 4"><defs><clipPath id="c"><rect width="2" height="2"/></clipPath></defs>'
        '<g transform="translate(1, 1) rotate(45) scale(0.5) matrix(1 0 0 1 0 0) skewX(3)" clip-path="url(#c)">'
        '<rect width="4" height="4" style="fill: rgb(10, 20, 30); stroke: hsla(120, 50%, 50%, 0.5); '
        'stroke-width: calc(1px + 0.1em); opacity: 0.5"/></g></svg>',
        encoding="utf-8",
    )
    assert check_static("docs/ok.svg", path, dest="ok.svg") == []


# -- text that spells evidence in a form the checks did not read -----------------------------------

SID = "d" * 64
HIDDEN_FORMS = {
    # displayed "✓ verified" / a span reference, written reversed under a bidi override
    "bdo-badge": '<bdo dir="rtl">deifirev \u2713</bdo>',
    "bdo-reference": f'Cited as <bdo dir="rtl">03-21#{SID}-crs</bdo> here.',
    "rlo-badge": "Checked \u202edeifirev \u2713\u202c today.",
    "rli-reference": f"Cited as \u2067{'03-21#' + SID + '-crs'}\u2069 here.",
    # invisible format characters inside the word
    "soft-hyphen": "Checked: \u2713 veri\u00adfied.",
    "zero-width": "Checked: \u2713 ver\u200bi\u200dfied.",
    "reference-zwsp": f"Cited as src-{SID}#12\u200b-30 here.",
    # text a reader sees where an image does not load, or on hovering
    "alt-badge": "![\u2713 verified](missing.png)",
    "alt-reference": f"![src-{SID}#12-30](missing.png)",
    "title-reference": f'[a link](https://example.org/ "src-{SID}#12-30")',
}


def _render(text: str) -> str:
    return markdown.Markdown(extensions=["footnotes", "attr_list", "md_in_html", "tables"]).convert(text)


@pytest.mark.parametrize("name", sorted(HIDDEN_FORMS))
def test_evidence_spelled_out_of_sight_of_the_checks_is_refused(name: str) -> None:
    found = violations(_render(HIDDEN_FORMS[name] + "\n"), author="report")
    assert found, name
    assert {v.kind for v in found} <= {"element", "bidi", "badge", "reference"}


def test_text_in_another_order_names_its_line(tmp_path: Path) -> None:
    source = "# Page\n\nPlain prose.\n\nChecked \u202edeifirev \u2713\u202c today.\n"
    found = check_prose(_render(source), file="concepts/a.md", source=source, author="concept")
    assert found and {(f.check, f.line) for f in found} == {("C-PAGE-PROSE", 5)}


def test_a_report_with_a_hidden_badge_is_refused_by_the_build(tmp_path: Path) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    build_wiki(wiki)
    before = tree_digest(wiki / "site")
    rb.run.report_md.write_text("# R\n\nPlain prose.\n\nChecked: \u2713 veri\u00adfied.\n", encoding="utf-8")
    rb.assemble()
    findings = refused_build(wiki)
    assert tree_digest(wiki / "site") == before and leftovers(wiki) == []
    hits = {(f.check, f.reason, f.file, f.line) for f in findings if f.file.endswith("report.md")}
    assert ("C-PROSE", Reason.EXCERPT_MISMATCH, "runs/alpha/outputs/report.md", 5) in hits, findings


@pytest.mark.parametrize("name", ["soft-hyphen", "zero-width", "reference-zwsp"])
def test_the_run_check_reads_a_report_through_invisible_characters(name: str) -> None:
    from publisher.gate.checks.prose import quotations

    found = quotations(f"# R\n\nPlain prose.\n\n{HIDDEN_FORMS[name]}\n")
    assert [(q.kind, q.line) for q in found] == [("cite-line", 5)]


# -- ids: one element each ----------------------------------------------------------------------


def test_an_id_given_twice_is_refused() -> None:
    """The second element with an id shadows or is shadowed: a footnote link, its tooltip and
    the table of contents land on whichever comes first."""
    text = "## Checked {#fn:a}\n\nA claim.[^a]\n\n[^a]: A note.\n"
    found = violations(_render(text + "\n"))
    assert [(v.kind, v.name, v.value) for v in found] == [("attribute", "id", "fn:a")]
    assert violations(_render("## Checked {#checked-here}\n\nA claim.[^a]\n\n[^a]: A note.\n")) == []


def test_a_concept_heading_cannot_take_an_evidence_footnotes_id(tmp_path: Path) -> None:
    """A heading in concept prose named like an evidence footnote's item takes the footnote's
    link and tooltip: the reader lands on the author's text instead of the sealed excerpt."""
    wiki = make_wiki(tmp_path / "wiki", extensions=("footnotes", "attr_list", "md_in_html", "toc"))
    promote(sample_run(wiki).run.path, wiki, policy=policy_of(wiki))
    build_wiki(wiki)
    before = tree_digest(wiki / "site")
    concept = wiki / "concepts" / "alpha.md"
    text = concept.read_text(encoding="utf-8")
    label = re.search(r"^\[\^([^\]]+)\]: src-", text, re.MULTILINE)
    assert label is not None
    head, tail = text.split("<!-- publisher:generated:begin -->", 1)
    head += f"## Checked: all excerpts hold {{#fn:{label.group(1)}}}\n\nTrust this section.\n\n"
    concept.write_text(head + "<!-- publisher:generated:begin -->" + tail, encoding="utf-8")
    line = head.count("\n") - 3
    findings = refused_build(wiki)
    assert tree_digest(wiki / "site") == before and leftovers(wiki) == []
    assert ("C-PAGE-PROSE", "concepts/alpha.md", line) in {(f.check, f.file, f.line) for f in findings}, findings


@pytest.mark.parametrize(
    "text",
    [
        '!!! success "Verified"\n    No harm was found in any trial.\n',
        '??? done "verified excerpt"\n    No harm was found.\n',
        '<div class="admonition check" markdown>\n<p class="admonition-title">Verified</p>\n</div>\n',
    ],
)
@pytest.mark.parametrize("author", ["page", "concept"])
def test_a_title_the_theme_draws_after_a_check_mark_cannot_read_verified(text: str, author: str) -> None:
    found = violations(
        markdown.Markdown(extensions=["admonition", "pymdownx.details", "attr_list", "md_in_html"]).convert(text),
        author=author,  # type: ignore[arg-type]
    )
    assert [v.kind for v in found] == ["badge"]
    source = "# Page\n\nProse.\n\n" + text
    lines = {f.line for f in check_prose(_render_all(source), file="docs/p.md", source=source, author=author)}  # type: ignore[arg-type]
    assert lines == {5 + text[: text.index("erified")].count("\n")}


def test_a_success_admonition_with_other_words_stays_prose() -> None:
    html = markdown.Markdown(extensions=["admonition"]).convert('!!! success "All checks passed"\n    Done.\n')
    assert violations(html, author="concept") == []


def _render_all(text: str) -> str:
    return markdown.Markdown(extensions=["admonition", "pymdownx.details", "attr_list", "md_in_html"]).convert(text)


# -- markup that closes the page around it ----------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Intro.\n\n</article></div></div></div>\n\nText outside the article.\n",
        "Intro </div> inline.\n",
        "</main>\n\nAfter the main element.\n",
        "</article></div><div><article>\n\nA new article of the author's.\n",
    ],
)
def test_a_stray_end_tag_that_closes_the_themes_elements_is_refused(text: str) -> None:
    assert [v.kind for v in violations(_render(text))] == ["unclosed"]


def test_stray_end_tags_the_page_would_ignore_stay_prose() -> None:
    assert violations(_render("A paragraph.</p></p>\n\n</span> and </em> text.\n")) == []


def test_the_build_refuses_a_page_that_closes_the_article(tmp_path: Path) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    promote(sample_run(wiki).run.path, wiki, policy=policy_of(wiki))
    build_wiki(wiki)
    before = tree_digest(wiki / "site")
    page = "# Escape\n\nIntro.\n\n</article></div></div></div>\n\nText outside the article.\n"
    (wiki / "docs" / "escape.md").write_text(page, encoding="utf-8")
    findings = refused_build(wiki)
    assert tree_digest(wiki / "site") == before and leftovers(wiki) == []
    assert ("C-PAGE-PROSE", "docs/escape.md") in {(f.check, f.file) for f in findings}, findings


@pytest.mark.parametrize(
    "text", ['Click <a href="https://evil.example/">here\n', "Some <b>bold\n", "A list\n\n- item <s>struck\n"]
)
def test_a_formatting_element_left_open_at_the_end_is_refused(text: str) -> None:
    """The parser reopens it around every text after it: the theme's footer and navigation."""
    assert [v.kind for v in violations(_render(text))] == ["unclosed"]


_FULL = "7e4fd0d27c979a87a7395b63a7fa0d5b9d782e2fca87fae0531b83c7ebb5c894"


@pytest.mark.parametrize(
    "text",
    [
        f'"No harm was found." [source src-7e4fd0d2\u2026#176-188](../../sources/src-{_FULL}/#span-176-188)',
        "No harm was found (source src-7e4fd0d2...#176-188).",
        "No harm was found, src-7E4F \u2026 \uff03 176 \u2013 188.",
    ],
)
@pytest.mark.parametrize("author", ["page", "concept", "report"])
def test_the_builds_shortened_source_link_is_a_reference(text: str, author: str) -> None:
    found = violations(_render(text + "\n"), author=author)  # type: ignore[arg-type]
    assert [v.kind for v in found] == ["reference"]


def test_a_shortened_reference_in_code_stays_prose() -> None:
    assert violations(_render("The link reads `source src-7e4fd0d2\u2026#176-188`.\n"), author="concept") == []


# -- site_dir over what the build runs or reads beside its folders -----------------------------


@pytest.mark.parametrize("site_dir", ["hooks", "overrides", "overrides/site", "trust"])
def test_a_site_dir_over_the_hook_theme_or_a_key_is_refused(tmp_path: Path, site_dir: str) -> None:
    """Publication replaces the site folder whole: over the hook file it deletes the code the
    next build runs, over the theme's custom_dir it hands the next build the site's pages as
    templates, over a trusted key it deletes what signed acquisition is checked against."""
    wiki = make_wiki(tmp_path / "wiki")
    promote(sample_run(wiki).run.path, wiki, policy=policy_of(wiki))
    (wiki / "overrides").mkdir()
    (wiki / "trust").mkdir()
    (wiki / "trust" / "k.pub").write_bytes((Path(__file__).resolve().parents[1] / "keys" / "example.pub").read_bytes())
    yml = wiki / "mkdocs.yml"
    text = yml.read_text(encoding="utf-8").replace(
        "theme:\n  name: material\n", "theme:\n  name: material\n  custom_dir: overrides\n"
    )
    text += f"site_dir: {site_dir}\nextra:\n  evidence:\n    trusted_keys:\n      - trust/k.pub\n"
    yml.write_text(text, encoding="utf-8")
    before = tree_digest(wiki)
    findings = refused_build(wiki)
    assert [(f.check, f.field) for f in findings] == [("C-CONFIG", "site_dir")], findings
    assert tree_digest(wiki) == before and leftovers(wiki) == []


# -- what a trusted extension generates: trusted only when it is inert -------------------------


def test_an_icon_the_emoji_extension_reads_from_docs_is_judged(tmp_path: Path) -> None:
    """pymdownx.emoji inlines an icon file as it is: an icon set in a folder of docs/ that MkDocs
    does not publish (``.icons``) went onto the page whole, script included, and the page's
    policy then allowed that script by its hash like the theme's own."""
    wiki = make_wiki(tmp_path / "wiki")
    icons = wiki / "docs" / ".icons"
    extra = (
        "  - pymdownx.emoji:\n"
        "      emoji_index: !!python/name:material.extensions.emoji.twemoji\n"
        "      emoji_generator: !!python/name:material.extensions.emoji.to_svg\n"
        f"      options:\n        custom_icons: [{json.dumps(str(icons))}]\n"
    )
    yml = wiki / "mkdocs.yml"
    yml.write_text(yml.read_text(encoding="utf-8").replace("plugins: []\n", extra + "plugins: []\n"), encoding="utf-8")
    promote(sample_run(wiki).run.path, wiki, policy=policy_of(wiki))
    (icons / "own").mkdir(parents=True)
    (icons / "own" / "dot.svg").write_text(
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 4 4"><circle cx="2" cy="2" r="2"/></svg>',
        encoding="utf-8",
    )
    (icons / "own" / "run.svg").write_text(
        '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(document.domain)</script></svg>', encoding="utf-8"
    )
    (wiki / "docs" / "index.md").write_text("# Home\n\nA dot :own-dot: and :material-lightbulb:.\n", encoding="utf-8")
    build_wiki(wiki)  # an inert icon of the wiki's own, and the theme's, stay trusted
    assert '<span class="twemoji"><svg' in (wiki / "site" / "index.html").read_text(encoding="utf-8")
    before = tree_digest(wiki / "site")
    (wiki / "docs" / "page.md").write_text("# Page\n\nPlain.\n\nAn icon :own-run: here.\n", encoding="utf-8")
    findings = refused_build(wiki)
    assert tree_digest(wiki / "site") == before and leftovers(wiki) == []
    assert ("C-PAGE-PROSE", "docs/page.md") in {(f.check, f.file) for f in findings}, findings


# -- the page's policy hashes only the theme's inline code ---------------------------------------

_PAGE = (
    "<!DOCTYPE html><html><head><meta charset=utf-8><script>var theme = 1</script></head><body>"
    '<div class="md-container"><main class="md-main"><div class="md-main__inner"><div class="md-content">'
    '<article class="md-content__inner md-typeset">{content}</article></div></div></main></div>'
    "<script>var bundle = 2</script></body></html>"
)


@pytest.mark.parametrize(
    "content",
    [
        "<p>Prose</p><script>alert(1)</script>",
        '<p>An icon <span class="twemoji"><svg><script>alert(1)</script></svg></span></p>',
        "<div><style>.md-header { display: none }</style></div>",
        '<script src="../assets/publisher/verify.js"></script>',
    ],
)
def test_inline_code_in_the_pages_content_is_never_given_a_hash(content: str) -> None:
    """Every script or style in the content can only be the author's (the prose check refuses
    them; this is the seal's own line should one slip through): it is malformed, not hashed."""
    scan = scan_page(_PAGE.format(content=content))
    assert scan.malformed and scan.scripts == ["var theme = 1", "var bundle = 2"] and scan.styles == []


def test_the_themes_inline_code_outside_the_content_is_hashed() -> None:
    scan = scan_page(_PAGE.format(content="<p>Prose</p>"))
    assert scan.malformed == [] and scan.scripts == ["var theme = 1", "var bundle = 2"]


# -- links out of docs/ -------------------------------------------------------------------------

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + b"\x00" * 17


@pytest.mark.parametrize("name", ["leak.md", "leak.png", "linked/leak.png"])
def test_a_link_from_docs_to_a_file_outside_it_is_refused(tmp_path: Path, name: str) -> None:
    """MkDocs publishes what a link points to: a page or an image linked to a file outside
    docs/ (the PDF library, the keys, the machine's own files) would publish that file."""
    wiki = make_wiki(tmp_path / "wiki")
    promote(sample_run(wiki).run.path, wiki, policy=policy_of(wiki))
    build_wiki(wiki)
    before = tree_digest(wiki / "site")
    outside = tmp_path / "private"
    outside.mkdir()
    (outside / "leak.md").write_text("# Private\n\nNot for publication.\n", encoding="utf-8")
    (outside / "leak.png").write_bytes(PNG)
    if name.startswith("linked/"):
        (wiki / "docs" / "linked").symlink_to(outside, target_is_directory=True)
    else:
        (wiki / "docs" / name).symlink_to(outside / name)
    findings = refused_build(wiki)
    assert tree_digest(wiki / "site") == before and leftovers(wiki) == []
    assert ("C-PAGE-PROSE", f"docs/{name}") in {(f.check, f.file) for f in findings}, findings


def test_a_link_inside_docs_is_published(tmp_path: Path) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    promote(sample_run(wiki).run.path, wiki, policy=policy_of(wiki))
    (wiki / "docs" / "a.png").write_bytes(PNG)
    (wiki / "docs" / "b.png").symlink_to(wiki / "docs" / "a.png")
    build_wiki(wiki)
    assert (wiki / "site" / "b.png").read_bytes() == PNG


_ICON = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><path d="M21 7 9 19l-5.5-5.5"/></svg>'


@pytest.mark.parametrize(
    ("html", "author"),
    [
        (f'<p>Checked <span class="twemoji">{_ICON}</span> verified.</p>', "concept"),
        (f'<h2 id="x"><span class="twemoji">{_ICON}</span> Verified</h2>', "page"),
    ],
)
def test_an_icon_before_verified_reads_as_the_badge(html: str, author: str) -> None:
    """The emoji extension's icon is set aside as trusted, but a reader sees it: a check mark
    icon (``:white_check_mark:``, ``:material-check:``) and the word make the badge."""
    found = violations(html, author=author, trusted=[_ICON])  # type: ignore[arg-type]
    assert [v.kind for v in found] == ["badge"]


def test_an_icon_in_other_words_stays_prose() -> None:
    html = f'<p>A light <span class="twemoji">{_ICON}</span> and some text.</p>'
    assert violations(html, author="concept", trusted=[_ICON]) == []


def test_an_icon_badge_names_the_line_of_its_shortcode() -> None:
    source = "# Page\n\nA light :material-lightbulb: here.\n\n## :white_check_mark: Verified\n"
    html = f'<h1 id="page">Page</h1><p>A light <span class="twemoji">{_ICON}</span> here.</p>'
    html += f'<h2 id="verified"><span class="twemoji">{_ICON}</span> Verified</h2>'
    found = check_prose(html, file="docs/p.md", source=source, trusted=[_ICON, _ICON])
    assert [(f.check, f.line) for f in found] == [("C-PAGE-PROSE", 5)]


@pytest.mark.parametrize(
    "text", ["Checked: \u2713 v\u0435rified.", "Checked \u2714\ufe0f against the source.", "Status: \u2705"]
)
def test_a_check_mark_in_concept_or_report_prose_is_refused(text: str) -> None:
    """A homoglyph spells "verified" past any reading of the word: the mark itself is the badge's."""
    for author in ("concept", "report"):
        assert [v.kind for v in violations(_render(text + "\n"), author=author)] == ["badge"]  # type: ignore[arg-type]
    assert violations(_render(text + "\n"), author="page") == []
    assert violations(_render(f"`{text}`\n"), author="concept") == []


def test_a_code_lines_anchor_names_its_element_once() -> None:
    """pymdownx.highlight's line anchors carry the same id and name: one element, one name."""
    md = markdown.Markdown(
        extensions=["pymdownx.superfences", "pymdownx.highlight"],
        extension_configs={"pymdownx.highlight": {"anchor_linenums": True}},
    )
    fence = '``` py linenums="1"\nx = 1\ny = 2\n```\n\n'
    assert violations(md.convert(fence + fence)) == []
    html = md.reset().convert(fence)
    assert [v.value for v in violations(html + '<a id="__codelineno-0-1"></a>')] == ["__codelineno-0-1"]
