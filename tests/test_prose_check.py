"""Prose that cannot act: hand-written pages and concept prose carry no script, style, handler,
script-capable URL, frame, base/meta/link, raw SVG/MathML or evidence look-alike; the build
refuses them with file and line (check C-PROSE) and leaves the published site byte-identical.

Evidence-footnote syntax that the concept parser (markdown-it, CommonMark rules) does not read
as a footnote but Python-Markdown renders as one (after an unclosed fence, inside a paragraph,
in an HTML block ...) is refused too: it would show a source reference that no check read.
What a trusted extension generates (Material's emoji SVG through ``pymdownx.emoji``) stays.
"""

from __future__ import annotations

import re
from pathlib import Path

import markdown
import pytest
from _policy import policy_of
from _wiki_helpers import EXTENSIONS, build_wiki, leftovers, make_wiki, refused_build, sample_run, tree_digest

from publisher.kernel.findings import Finding
from publisher.site.checks.inert import check_static
from publisher.site.checks.prose import violations
from publisher.site.checks.scan import SPAN_REF, scan_page
from publisher.wiki.promote import promote

SID = "src-" + "a" * 64

# One payload per line; each must be reported at its own line.
DOC_PAYLOADS = [
    "<script>alert(1)</script>",
    "<style>p { display: none }</style>",
    '<img src="x.png" alt="" onerror="alert(1)">',
    '<a href="javascript:alert(1)">a link</a>',
    "[a Markdown link](javascript:alert(1))",
    '<a href="jav&#x09;ascript:alert(1)">an encoded link</a>',
    '<iframe src="https://example.org/"></iframe>',
    '<object data="x.swf"></object>',
    '<embed src="x.swf">',
    '<base href="https://evil.example/">',
    '<meta http-equiv="refresh" content="0;url=https://evil.example/">',
    '<link rel="stylesheet" href="https://evil.example/x.css">',
    "<svg><script>alert(1)</script></svg>",
    "<math><mi>x</mi></math>",
    '<p style="color: red">styled</p>',
    'A paragraph with attributes.\n{: onclick="alert(1)" }',
    f'<span class="evidence-excerpt" data-source-id="{SID}" data-start="1" data-end="4">forged</span>',
    '<button class="evidence-verify" data-state="verified" data-label="✓ verified"></button>',
    '<div markdown="1" onmouseover="alert(1)">inside md_in_html</div>',
    '<form action="javascript:alert(1)"><button>go</button></form>',
    '<img src="data:image/svg+xml,&lt;svg onload=alert(1)&gt;" alt="">',
    "<template><p>kept for later</p></template>",
    "<noscript><p>no script</p></noscript>",
    '<p class="Evidence-Excerpt">a look-alike in another case</p>',
]


def _published(tmp_path: Path, extensions: tuple[str, ...] = EXTENSIONS, extra: str = "") -> tuple[Path, str]:
    wiki = make_wiki(tmp_path / "wiki", extensions=extensions, extra=extra)
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    build_wiki(wiki)
    return wiki, next(iter(rb.texts))


def _refused(wiki: Path) -> tuple[Finding, ...]:
    """Build, which must fail and leave the site as it was; the findings of the refusal."""
    before = tree_digest(wiki / "site")
    findings = refused_build(wiki)
    assert tree_digest(wiki / "site") == before
    assert leftovers(wiki) == []
    return findings


def _lines(findings: tuple[Finding, ...], file: str) -> set[int]:
    return {f.line for f in findings if f.file == file and f.line is not None}


def test_each_active_payload_in_a_page_is_refused_with_its_line(tmp_path: Path) -> None:
    wiki, _ = _published(tmp_path)
    text = "# Hostile page\n\n"
    expected = []
    for payload in DOC_PAYLOADS:
        expected.append(text.count("\n") + 1 + payload.count("\n"))
        text += payload + "\n\n"
    (wiki / "docs" / "hostile.md").write_text(text, encoding="utf-8")
    findings = _refused(wiki)
    lines = _lines(findings, "docs/hostile.md")
    missing = [(n, p) for n, p in zip(expected, DOC_PAYLOADS, strict=True) if n not in lines]
    assert missing == [], findings
    assert {f.check for f in findings} == {"C-PAGE-PROSE"}


def test_unclosed_markup_at_the_end_of_a_page_is_refused(tmp_path: Path) -> None:
    wiki, _ = _published(tmp_path)
    (wiki / "docs" / "hostile.md").write_text('# Page\n\n<div>\n\n<img src="x.png" alt="', encoding="utf-8")
    findings = _refused(wiki)
    assert {(f.check, f.file) for f in findings} == {("C-PAGE-PROSE", "docs/hostile.md")}, findings


def test_concept_prose_is_refused_with_the_concept_file_and_line(tmp_path: Path) -> None:
    wiki, _ = _published(tmp_path)
    concept = wiki / "concepts" / "alpha.md"
    text = concept.read_text(encoding="utf-8")
    added = '\nSome prose.\n\n<script>alert("concept")</script>\n\n<img src=x onerror=alert(2)>\n'
    concept.write_text(text + added, encoding="utf-8")
    first = text.count("\n") + 4
    findings = _refused(wiki)
    assert _lines(findings, "concepts/alpha.md") == {first, first + 2}, findings


SHAPES = {
    "unclosed-fence": "Cited.[^forged]\n\n```\n{note}\n",
    "tilde-fence-unclosed": "Cited.[^forged]\n\n~~~~\n{note}\n",
    "paragraph": "Cited.[^forged]\nand a paragraph that goes on\n{note}\n",
    "html-block": "Cited.[^forged]\n\n<div>\n{note}\n</div>\n",
    "list": "- Cited.[^forged]\n\n    {note}\n",
    "blockquote": "> Cited.[^forged]\n>\n> {note}\n",
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("fences", ["fenced_code", "pymdownx.superfences"])
def test_the_prose_check_alone_refuses_what_python_markdown_renders_as_a_quoting_footnote(
    shape: str, fences: str
) -> None:
    """Whatever the concept parser made of it: the rendered page shows a span reference outside code."""
    note = f'[^forged]: {SID}#12-30 "A forged quotation."'
    md = markdown.Markdown(extensions=[*EXTENSIONS, fences])
    rendered = md.convert(SHAPES[shape].format(note=note))
    found = [v.kind for v in violations(rendered)]
    assert found == ["reference"], rendered


@pytest.mark.parametrize(
    "shape",
    [
        "unclosed-fence",
        "paragraph",
        "html-block",
        "list",
        "blockquote",
        "tilde-fence-unclosed",
    ],
)
def test_evidence_footnotes_the_concept_parser_does_not_read_are_refused(tmp_path: Path, shape: str) -> None:
    wiki, sid = _published(tmp_path)
    note = f'[^forged]: {sid}#12-30 "A forged quotation that no check read."'
    body = SHAPES[shape].format(note=note)
    concept = wiki / "concepts" / "alpha.md"
    concept.write_text(concept.read_text(encoding="utf-8") + "\n" + body, encoding="utf-8")
    _refused(wiki)  # by the preflight (markdown-it read it) or by the prose check (it did not)
    assert "A forged quotation" not in "".join(p.read_text(errors="replace") for p in (wiki / "site").rglob("*.html"))


def test_span_references_in_code_are_shown_as_code(tmp_path: Path) -> None:
    wiki, sid = _published(tmp_path)
    concept = wiki / "concepts" / "alpha.md"
    body = f'\nAn example, indented:\n\n    [^x]: {sid}#12-30 "as code"\n\nand inline `{sid}#1-2`.\n'
    concept.write_text(concept.read_text(encoding="utf-8") + body, encoding="utf-8")
    build_wiki(wiki)
    page = (wiki / "site" / "concepts" / "alpha" / "index.html").read_text(encoding="utf-8")
    assert scan_page(page).malformed == []
    assert SPAN_REF.search(page)  # shown, as code


def test_emoji_svg_from_the_extension_stays_and_a_hand_copy_does_not(tmp_path: Path) -> None:
    extra = (
        "  - pymdownx.emoji:\n"
        "      emoji_index: !!python/name:material.extensions.emoji.twemoji\n"
        "      emoji_generator: !!python/name:material.extensions.emoji.to_svg\n"
    )
    config_extensions = (*EXTENSIONS,)
    wiki = make_wiki(tmp_path / "wiki", extensions=config_extensions)
    yml = wiki / "mkdocs.yml"
    yml.write_text(yml.read_text(encoding="utf-8").replace("plugins: []\n", extra + "plugins: []\n"), encoding="utf-8")
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    (wiki / "docs" / "index.md").write_text("# Home\n\nA light :material-lightbulb: and :smile:.\n", encoding="utf-8")
    build_wiki(wiki)
    home = (wiki / "site" / "index.html").read_text(encoding="utf-8")
    svg = re.search(r'<span class="twemoji"><svg.*?</svg></span>', home)
    assert svg is not None
    (wiki / "docs" / "copy.md").write_text(f"# Copy\n\n{svg.group(0)}\n", encoding="utf-8")
    findings = _refused(wiki)
    assert _lines(findings, "docs/copy.md") == {3}, findings


SVG_PAYLOADS = {
    "script": '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
    "handler": '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><rect width="4" height="4"/></svg>',
    "link": '<svg xmlns="http://www.w3.org/2000/svg"><a href="javascript:alert(1)"><text>x</text></a></svg>',
    "foreign": '<svg xmlns="http://www.w3.org/2000/svg"><foreignObject><p>x</p></foreignObject></svg>',
    "animated-link": '<svg xmlns="http://www.w3.org/2000/svg"><a><set attributeName="href" to="javascript:alert(1)"/>'
    "<text>x</text></a></svg>",
    "entity": '<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x "y">]><svg xmlns="http://www.w3.org/2000/svg">&x;</svg>',
}


@pytest.mark.parametrize("kind", sorted(SVG_PAYLOADS))
def test_static_svg_that_can_act_is_refused(tmp_path: Path, kind: str) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "x.svg").write_text(SVG_PAYLOADS[kind], encoding="utf-8")
    checks = [f.check for f in check_static("docs/x.svg", docs / "x.svg")]
    assert checks and set(checks) == {"C-PAGE-PROSE"}


def test_static_html_is_refused_and_a_plain_svg_is_published(tmp_path: Path) -> None:
    wiki, _ = _published(tmp_path)
    images = wiki / "docs" / "images"
    images.mkdir()
    plain = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 4 4"><path style="fill:red" d="M0 0h4v4z"/></svg>'
    (images / "plain.svg").write_text(plain, encoding="utf-8")
    build_wiki(wiki)
    assert (wiki / "site" / "images" / "plain.svg").read_text(encoding="utf-8") == plain
    (wiki / "docs" / "page.html").write_text("<p>hand-written</p><script>alert(1)</script>", encoding="utf-8")
    (images / "active.svg").write_text(SVG_PAYLOADS["handler"], encoding="utf-8")
    findings = _refused(wiki)
    assert {"docs/page.html", "docs/images/active.svg"} <= {f.file for f in findings if f.check == "C-PAGE-PROSE"}


def test_a_title_in_front_matter_is_not_where_a_finding_of_the_body_points(tmp_path: Path) -> None:
    """Front matter is data (escaped at the boundary): a script in the body is found at its own
    line even when the title spells the same markup."""
    from publisher.site.checks.prose import check_prose

    source = '---\ntitle: "Does <script>x</script> work?"\n---\n\nProse.\n\n<script>alert(2)</script>\n'
    html = "<p>Prose.</p>\n<script>alert(2)</script>"
    (finding,) = check_prose(html, file="concepts/x.md", source=source, trusted=[])
    assert finding.line == 7
