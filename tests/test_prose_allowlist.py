"""One allow-list for prose and inert files from docs/: what could clobber the DOM, imitate the
verified look or run as a document is refused with file and line (C-PROSE), and the published
site stays byte-identical. Payloads here are not those of test_prose_check.py."""

from __future__ import annotations

import zlib
from pathlib import Path

import markdown
import pytest
from _policy import policy_of
from _wiki_helpers import EXTENSIONS, build_wiki, leftovers, make_wiki, refused_build, sample_run, tree_digest

from publisher.kernel.findings import Finding
from publisher.site.checks.inert import check_static
from publisher.site.checks.prose import check_prose, violations
from publisher.wiki.promote import promote

SID = "c" * 64
MORE = (*EXTENSIONS, "admonition", "pymdownx.mark", "pymdownx.details", "pymdownx.tasklist", "toc")

# kind expected -> payloads (each one line of Markdown)
CLOBBER = [
    '<img name="currentScript" src="x.png" alt="">',
    '<div id="__config">{"base": ".", "search": "evil.js"}</div>',
    "## A heading {#__config}",
    '<a name="verifyButton" href="#x">a link</a>',
    'A paragraph that names itself.\n{: id="currentScript" }',
    '<p data-record="sources/x/record.json">data attributes</p>',
]
LOOKS = [
    "<button disabled>✓ verified</button>",
    '<input type="checkbox" checked disabled>',
    "<select><option>✓</option></select>",
    "<textarea>verified</textarea>",
    "Some ==highlighted quotation== in prose.",
    "<mark>a highlight</mark>",
    '<span class="md-typeset">the theme\'s class</span>',
    "A theme button.\n{: .md-button }",
    '<p class="evidence-report">a report look</p>',
    '<table><tr><td style="background: green">cell</td></tr></table>',
    '!!! success "✓ verified excerpt"',
    "### ✔ Verified",
]


def _render(text: str) -> str:
    return markdown.Markdown(extensions=list(MORE)).convert(text)


@pytest.mark.parametrize("payload", CLOBBER + LOOKS)
def test_each_payload_is_outside_the_allow_list(payload: str) -> None:
    body = payload + ("\n\n    invented text\n" if payload.startswith("!!!") else "\n")
    assert violations(_render(body)), payload


@pytest.mark.parametrize(
    "payload",
    [
        f"Cited as src-{SID}＃12-30 in fullwidth.",
        f"Cited as src-{SID}#12‐30 with a Unicode hyphen.",
        f"Cited as src-{SID}#12–30 with an en dash.",
        f"Cited as ｓｒｃ-{SID}#12-30 in fullwidth letters.",
    ],
)
def test_span_references_are_recognised_after_folding(payload: str) -> None:
    assert [v.kind for v in violations(_render(payload))] == ["reference"]


def test_the_verified_badge_in_concept_prose_is_refused_and_explained_in_a_page_is_not() -> None:
    text = _render("The button reads **✓ verified** once every digest matches.")
    assert violations(text, author="page") == []
    assert [v.kind for v in violations(text, author="concept")] == ["badge"]
    assert [v.kind for v in violations(text, author="report")] == ["badge"]


def test_what_markdown_makes_is_allowed() -> None:
    text = (
        "# Title\n\n## Second [link](https://example.org/)\n\nText[^a] with *em*, **strong**, `code`.\n\n"
        '| a | b |\n|:--|--:|\n| 1 | 2 |\n\n!!! note "A note"\n    Inside.\n\n'
        '??? tip "Details"\n    Hidden.\n\n- [x] done\n\n```python\nx = 1\n```\n\n[^a]: A footnote.\n'
    )
    rendered = markdown.Markdown(
        extensions=[
            *EXTENSIONS,
            "admonition",
            "pymdownx.details",
            "tables",
            "toc",
            "pymdownx.superfences",
            "def_list",
            "abbr",
        ]
    ).convert(text)
    assert violations(rendered) == []


def test_a_heading_that_slugs_to_the_themes_config_id_is_refused() -> None:
    assert [v.name for v in violations(_render("# __config\n"))] == ["id"]


def test_check_prose_names_the_line_of_an_attr_list_id() -> None:
    source = "# Page\n\nProse.\n\n## Heading {#__config}\n"
    found = check_prose(_render(source), file="docs/p.md", source=source)
    assert [(f.check, f.line) for f in found] == [("C-PAGE-PROSE", 5)]


def _wiki(tmp_path: Path) -> Path:
    wiki = make_wiki(tmp_path / "wiki", extensions=MORE)
    promote(sample_run(wiki).run.path, wiki, policy=policy_of(wiki))
    build_wiki(wiki)
    return wiki


def _refused(wiki: Path) -> list[Finding]:
    """Build, which must fail and leave the site as it was; the prose findings of the refusal."""
    before = tree_digest(wiki / "site")
    findings = refused_build(wiki)
    assert tree_digest(wiki / "site") == before and leftovers(wiki) == []
    return [f for f in findings if f.check == "C-PAGE-PROSE"]


def test_a_page_of_every_payload_is_refused_line_by_line(tmp_path: Path) -> None:
    wiki = _wiki(tmp_path)
    text, expected = "# Hostile\n\n", []
    for payload in CLOBBER + LOOKS:
        expected.append(text.count("\n") + 1 + payload.count("\n"))
        text += payload + ("\n\n    invented text" if payload.startswith("!!!") else "") + "\n\n"
    (wiki / "docs" / "hostile.md").write_text(text, encoding="utf-8")
    findings = _refused(wiki)
    lines = {f.line for f in findings if f.file == "docs/hostile.md"}
    missing = [n for n in expected if n not in lines and n - 1 not in lines]
    assert missing == [], findings


def test_concept_prose_that_imitates_evidence_is_refused(tmp_path: Path) -> None:
    wiki = _wiki(tmp_path)
    concept = wiki / "concepts" / "alpha.md"
    sid = next(p.stem for p in wiki.rglob("sources/src-*.json"))
    added = f"\n==No significant differences were found.== [source](../../sources/{sid}/#span-1-20)\n"
    concept.write_text(concept.read_text(encoding="utf-8") + added, encoding="utf-8")
    assert any(f.file == "concepts/alpha.md" and f.line for f in _refused(wiki))


# -- files of docs/ ---------------------------------------------------------------------------

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + b"\x00" * 17
XHTML_SCRIPT = '<html xmlns="http://www.w3.org/1999/xhtml"><script>alert(1)</script></html>'
REFUSED_FILES = {
    "record.js": "window.alert(1)",
    "feed.xml": XHTML_SCRIPT,
    "page.xhtml": XHTML_SCRIPT,
    "page.xht": XHTML_SCRIPT,
    "page.xhtm": XHTML_SCRIPT,
    "page.shtml": "<script>alert(1)</script>",
    "page.htm": "<p>x</p>",
    "notes.txt": "plain text",
    "CNAME": "example.org",
    "fake.png": "<html><script>alert(1)</script></html>",
    "theme.css": "body { color: red }",
    "prefixed.svg": '<svg xmlns="http://www.w3.org/2000/svg"><s:script xmlns:s="http://www.w3.org/2000/svg">'
    "alert(1)</s:script></svg>",
    "xhtml-in.svg": '<svg xmlns="http://www.w3.org/2000/svg"><h:script xmlns:h="http://www.w3.org/1999/xhtml">'
    "alert(1)</h:script></svg>",
    "use.svg": '<svg xmlns="http://www.w3.org/2000/svg" xmlns:x="http://www.w3.org/1999/xlink">'
    '<use x:href="https://evil.example/a.svg#b"/></svg>',
    "style.svg": '<svg xmlns="http://www.w3.org/2000/svg"><style>@import url(https://evil.example/x.css)</style></svg>',
    "url.svg": '<svg xmlns="http://www.w3.org/2000/svg"><rect fill="url(https://evil.example/#x)"/></svg>',
    "escaped.svg": '<svg xmlns="http://www.w3.org/2000/svg"><rect style="fill: u\\72l(https://e.example/)"/></svg>',
    "pi.svg": '<?xml-stylesheet href="x.css"?><svg xmlns="http://www.w3.org/2000/svg"/>',
    "html.svg": "<svg><script>alert(1)</script>",
    "nons.svg": "<svg><rect/></svg>",
    "handler.svg": '<svg xmlns="http://www.w3.org/2000/svg"><rect onmouseover="alert(1)"/></svg>',
}


@pytest.mark.parametrize("name", sorted(REFUSED_FILES))
def test_a_file_of_docs_outside_the_inert_types_is_refused(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text(REFUSED_FILES[name], encoding="utf-8")
    found = check_static(f"docs/{name}", path, own_css=frozenset({"extra.css"}), dest=name)
    assert found and {(f.check, f.file) for f in found} == {("C-PAGE-PROSE", f"docs/{name}")}


def test_inert_files_are_published(tmp_path: Path) -> None:
    files = {
        "a.png": PNG,
        "b.pdf": b"%PDF-1.7\n%\xe2\xe3\n",
        "c.woff2": b"wOF2" + b"\x00" * 12,
        "extra.css": b"body { color: #333 }",
        "d.svg": b'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
        b'viewBox="0 0 4 4">'
        b'<defs><linearGradient id="g"><stop offset="0" stop-color="red"/></linearGradient></defs>'
        b'<rect width="4" height="4" fill="url(#g)"/><use xlink:href="#g"/><title>T</title></svg>',
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
        assert check_static(f"docs/{name}", tmp_path / name, own_css=frozenset({"extra.css"}), dest=name) == []
    (tmp_path / "z.svgz").write_bytes(zlib.compress(files["d.svg"]))
    assert check_static("docs/z.svgz", tmp_path / "z.svgz")


def test_the_build_refuses_active_files_and_keeps_the_site(tmp_path: Path) -> None:
    wiki = _wiki(tmp_path)
    (wiki / "docs" / "images").mkdir()
    (wiki / "docs" / "images" / "a.png").write_bytes(PNG)
    build_wiki(wiki)  # a real raster image is published
    assert (wiki / "site" / "images" / "a.png").read_bytes() == PNG
    for name in ("record.js", "feed.xml", "prefixed.svg"):
        (wiki / "docs" / name).write_text(REFUSED_FILES[name], encoding="utf-8")
    findings = _refused(wiki)
    for name in ("record.js", "feed.xml", "prefixed.svg"):
        assert f"docs/{name}" in {f.file for f in findings}, findings


def test_the_sites_own_css_named_in_extra_css_is_published(tmp_path: Path) -> None:
    wiki = make_wiki(tmp_path / "wiki", extra="extra_css:\n  - extra.css\n")
    promote(sample_run(wiki).run.path, wiki, policy=policy_of(wiki))
    (wiki / "docs" / "extra.css").write_text("body { color: #333 }", encoding="utf-8")
    build_wiki(wiki)
    assert (wiki / "site" / "extra.css").is_file()


def test_markup_the_sanitiser_reads_otherwise_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """The two parsers must agree: where nh3's reading differs and the walk named nothing, the
    page is refused all the same."""
    import publisher.site.checks.prose as prose

    html = _render("Plain prose.\n")
    assert violations(html) == []
    monkeypatch.setattr(prose, "sanitised", lambda content: [("p",), ("#text", "something else")])
    assert [v.kind for v in violations(html)] == ["sanitiser"]
