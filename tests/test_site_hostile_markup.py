"""Hostile prose against the built HTML: whatever a page's Markdown holds, what the theme prints
around the page's content (its table of contents, its navigation) holds no live markup.

Real ``mkdocs build`` runs of a one-page wiki; the built page is read as a browser reads it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _policy import policy_of
from _wiki_helpers import EXTENSIONS, build_wiki, leftovers, make_wiki, refused_build, sample_run

from publisher.kernel.canonical import sha256_hex
from publisher.kernel.eventlog import append_event
from publisher.kernel.lookalike import BIDI_CONTROLS
from publisher.kernel.reasons import Reason
from publisher.kernel.refs import looks_like_evidence
from publisher.site.checks.prose import check_prose
from publisher.site.checks.scan import parse_page, scan_page
from publisher.site.checks.seal import check_scripts
from publisher.wiki.evidence import source_label
from publisher.wiki.promote import promote

SPLIT_TAG = '<i title="<!--">a</i><b title=\'-->"><img/src=x@ onerror=alert(1)>\'>c</b>'
"""A heading whose two inert titles, read by Python-Markdown's tag-stripping pattern, join into a
tag it does not recognise (the comment it strips runs from one title into the other): the table
of contents once printed ``<img/src=x@ onerror=alert(1)>`` as it was."""


def _live(page: Path) -> list[str]:
    """Every element of a built page that carries an event handler, as ``tag attribute``."""
    tree = parse_page(page.read_text(encoding="utf-8"))
    return [f"{node.tag} {name}" for node in tree.css("*") for name in node.attributes if name.lower().startswith("on")]


def test_heading_that_splits_a_tag_across_titles_reaches_the_toc_as_text(tmp_path: Path) -> None:
    wiki = make_wiki(tmp_path / "wiki", extensions=(*EXTENSIONS, "toc"))
    (wiki / "docs" / "index.md").write_text(f"# Home\n\n## {SPLIT_TAG}\n\ntext\n", encoding="utf-8")
    build_wiki(wiki)
    page = wiki / "site" / "index.html"
    assert _live(page) == []
    tree = parse_page(page.read_text(encoding="utf-8"))
    assert {n.text(deep=True).strip() for n in tree.css("nav.md-nav--secondary a.md-nav__link")} == {"'>c"}


BADGE_TITLE = "\u202edeifirev \u2713 \u2713 verified"
"""A concept title (a run's question, an agent's words) that reads as the verified badge, and
shows the text after it in another order than written."""


def test_concept_title_reads_as_no_evidence_wherever_a_page_names_the_concept(tmp_path: Path) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    concept = wiki / "concepts" / "alpha.md"
    text = concept.read_text(encoding="utf-8")
    concept.write_text(text.replace("title: Does CBT help?", f"title: {json.dumps(BADGE_TITLE)}"), encoding="utf-8")
    build_wiki(wiki)
    pages = sorted((wiki / "site").rglob("*.html"))
    named = 0
    for page in pages:  # the concept index, each source page's "cited by", the concept page
        tree = parse_page(page.read_text(encoding="utf-8"))
        for node in tree.css("a"):
            shown = node.text(deep=True)
            if "deifirev" in shown:
                named += 1
                assert not BIDI_CONTROLS.search(shown), page
                assert looks_like_evidence(shown) is None, (page, shown)
    assert named >= 2


def test_source_label_from_a_url_reads_as_no_evidence() -> None:
    sid = "a" * 64
    label = source_label(None, "https://example.org/%E2%80%AEdeifirev%20%E2%9C%93%20verified", sid)
    assert not BIDI_CONTROLS.search(label) and looks_like_evidence(label) is None
    assert label.startswith("example.org/")


MARKED = "\u2713 verified \u202e end"
"""Outside text that reads as the verified badge and reorders what follows it."""


def test_run_and_source_fields_read_as_no_evidence_on_generated_pages(tmp_path: Path) -> None:
    """A run's question, an artifact's claim label, a snapshot's URL and a retrieval event's actor
    and detail are written by agents or fetched: each page shows them without a bidi control and
    never as the verified badge (as titles, and as prose is refused)."""
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki, question=f"QX {MARKED}", base_url=f"https://example.org/URLX {MARKED}/")
    sid = next(iter(rb.texts))
    url = rb.records[sid]["url"]
    digest = sha256_hex(rb.texts[sid].encode("utf-8"))
    append_event(
        rb.run.events_path, type="read", source_id=sid, url=url, fresh=False, sha256=digest,
        actor=f"ACTX {MARKED}", detail=f"DETX {MARKED}",
    )  # fmt: skip
    record = rb.run.extractions_dir / "pmid-111.json"
    data = json.loads(record.read_text(encoding="utf-8"))
    data["spans"][0]["claim"] = f"LBX {MARKED}"
    record.write_text(json.dumps(data), encoding="utf-8")
    rb.assemble()
    build_wiki(wiki)
    seen: set[str] = set()
    for page in sorted((wiki / "site").rglob("*.html")):
        tree = parse_page(page.read_text(encoding="utf-8"))
        for node in tree.body.traverse(include_text=True) if tree.body is not None else ():
            text = node.text_content or "" if node.is_text_node else ""
            for marker in ("QX", "LBX", "URLX", "ACTX", "DETX"):
                if marker in text:
                    seen.add(marker)
                    assert not BIDI_CONTROLS.search(text), (page, text)
                    assert looks_like_evidence(text) is None, (page, text)
    assert seen == {"QX", "LBX", "URLX", "ACTX", "DETX"}


def test_file_name_of_a_page_reaches_its_edit_link_as_a_url(tmp_path: Path) -> None:
    """MkDocs joins a page's edit link from ``repo_url``, ``edit_uri`` and the file's name as it
    is; Material prints it into ``href="..."``: a quote in the name once closed the attribute."""
    extra = "repo_url: https://github.com/example/wiki\nedit_uri: edit/main/docs/\n"
    wiki = make_wiki(tmp_path / "wiki", extra=extra)
    config = wiki / "mkdocs.yml"
    features = "  name: material\n  features:\n    - content.action.edit\n    - content.action.view\n"
    config.write_text(config.read_text(encoding="utf-8").replace("  name: material\n", features), encoding="utf-8")
    name = 'a" onmouseover="alert(1)" x=\'<b>.md'
    (wiki / "docs" / name).write_text("# Page\n\ntext\n", encoding="utf-8")
    build_wiki(wiki)
    pages = sorted((wiki / "site").rglob("*.html"))
    assert len(pages) > 2 and all(_live(page) == [] for page in pages)
    built = next(p for p in pages if "onmouseover" in p.parent.name)
    tree = parse_page(built.read_text(encoding="utf-8"))
    edits = [n.attributes.get("href") or "" for n in tree.css("a[rel=edit]")]
    assert edits == [
        "https://github.com/example/wiki/edit/main/docs/a%22%20onmouseover=%22alert(1)%22%20x=%27%3Cb%3E.md"
    ]


def test_navigation_link_of_a_script_scheme_is_refused(tmp_path: Path) -> None:
    """A link of ``nav:`` reaches every page's navigation: it keeps to the URLs prose may hold
    (no ``javascript:``, ``data:`` or ``vbscript:``, in any case or with any white space)."""
    extra = (
        "nav:\n  - Home: index.md\n  - Elsewhere: https://example.org/\n"
        '  - Evil: " JaVa\\tScript:alert(1)"\n  - Data: "data:text/html,<b>x</b>"\n'
    )
    wiki = make_wiki(tmp_path / "wiki", extra=extra)
    findings = refused_build(wiki)
    assert [(f.code, f.field) for f in findings] == [("C-CONFIG", "nav"), ("C-CONFIG", "nav")]
    assert not (wiki / "site").exists() and leftovers(wiki) == []


def test_configured_markup_and_links_keep_to_the_prose_allow_list(tmp_path: Path) -> None:
    """The theme prints ``copyright`` as HTML into every page's footer, and ``repo_url`` and each
    social link into ``href``: held to the prose allow-list, or refused before anything is written
    (a ``<meta http-equiv=refresh>`` there sent every page elsewhere; a policy does not stop it)."""
    extra = (
        'copyright: "&copy; 2026 <a href=\\"https://example.org/\\">Us</a><img src=x onerror=alert(1)>'
        '<meta http-equiv=refresh content=\\"0;url=https://example.net/\\">"\n'
        'repo_url: "javascript://%0aalert(1)"\n'
        "extra:\n  social:\n    - icon: fontawesome/brands/github\n      link: ' javascript:alert(1)'\n"
    )
    wiki = make_wiki(tmp_path / "wiki", extra=extra)
    findings = refused_build(wiki)
    assert sorted((f.code, f.field) for f in findings) == [
        ("C-CONFIG", "copyright"),
        ("C-CONFIG", "copyright"),
        ("C-CONFIG", "extra.social"),
        ("C-CONFIG", "repo_url"),
    ]
    assert not (wiki / "site").exists() and leftovers(wiki) == []
    config = wiki / "mkdocs.yml"
    plain = 'copyright: "&copy; 2026 <a href=\\"https://example.org/\\">Us</a>"\nrepo_url: https://example.org/wiki\n'
    config.write_text(config.read_text(encoding="utf-8").split("copyright:")[0] + plain, encoding="utf-8")
    build_wiki(wiki)
    assert "Us</a>" in (wiki / "site" / "index.html").read_text(encoding="utf-8")


def test_seal_refuses_markup_that_acts_without_a_script_anywhere_on_a_page(tmp_path: Path) -> None:
    """Whatever route put it there (the theme prints many configured strings as HTML, such as
    the cookie consent's description), an event handler or a ``<meta http-equiv>`` other than
    the page's policy on a built page fails the seal (``C-CSP``), and the site is not published."""
    extra = (
        "extra:\n  consent:\n    title: Cookies\n"
        '    description: "<span onmouseover=alert(1)>x</span><meta http-equiv=Refresh content=0;url=https://example.net>"\n'
    )
    wiki = make_wiki(tmp_path / "wiki", extra=extra)
    findings = refused_build(wiki)
    assert findings and {f.code for f in findings} == {"C-CSP"}
    assert not (wiki / "site").exists() and leftovers(wiki) == []
    page = (
        '<html><head><meta http-equiv="content-security-policy" content="x"><meta http-equiv="X-UA-Compatible">'
        '</head><body><p ONclick="1">a</p><svg><g onload="1"></g></svg><meta http-equiv="refresh" content="0">'
        '<p data-onx="1" title="onclick=1">b</p></body></html>'
    )
    scan = scan_page(page)
    assert sorted(scan.actions) == ["<g onload>", "<meta http-equiv=refresh>", "<p onclick>"]
    assert [f.code for f in check_scripts(scan, "x.html")] == ["C-CSP"] * 3


def test_concept_heading_cannot_take_the_anchor_of_a_claim_or_review() -> None:
    """A concept page's claims and reviews carry ``claim-<id>`` and ``review-<id>`` anchors, which
    the claims page and the evidence matrix link to: a heading of the concept's prose with such an
    id (``## Claim: CBT helps`` slugifies to ``claim-cbt-helps``) would take those links."""
    for html in ('<h2 id="claim-cbt-helps">Claim: CBT helps</h2>', "<h3 id='review-r1'>x</h3>"):
        found = check_prose(html, file="concepts/a.md", source=None, author="concept")
        assert [(f.code, f.reason) for f in found] == [("C-PAGE-PROSE", None)], html
        assert check_prose(html, file="docs/a.md", source=None, author="page") == []
    assert check_prose('<h2 id="claims">x</h2>', file="concepts/a.md", source=None, author="concept") == []


def test_section_title_of_a_snapshot_reads_as_no_evidence_in_a_cite_line() -> None:
    """A section title is read from the fetched document: the cite line under a verified excerpt
    shows it without a bidi control and never as the verified badge."""
    from publisher.gate.render import _environment

    macros = _environment().get_template("report.html.j2").make_module({"page": False})
    claim = {"source_id": "a" * 64, "start": 1, "end": 2, "access": "full_text", "page": None}
    line = str(macros.cite({**claim, "section": f"SECX {MARKED}"}, "https://example.org/", {}))
    text = parse_page(line).body.text(deep=True)  # type: ignore[union-attr]
    assert "SECX" in text and not BIDI_CONTROLS.search(text) and looks_like_evidence(text) is None


def test_source_link_spelled_with_other_dots_or_sharps_reads_as_the_build_s() -> None:
    """The build's source link under an excerpt reads ``src-7e4fd0d2…#176-188``; prose that shows
    the same with another ellipsis (a midline one, a two-dot leader, middle dots) or a music sharp
    for the ``#`` is the link too (``EXCERPT_MISMATCH``, as the other look-alikes are)."""
    for text in (
        "source src-7e4fd0d2\u22ef#176-188",
        "source src-7e4fd0d2\u2025#176-188",
        "source src-7e4fd0d2 \u00b7\u00b7\u00b7 #176-188",
        "source src-7e4fd0d2\u2026\u266f176-188",
    ):
        found = check_prose(f"<p>{text}</p>", file="concepts/a.md", source=None, author="concept")
        assert [f.reason for f in found] == [Reason.EXCERPT_MISMATCH], text
    assert check_prose("<p>source 7e4fd0d2, pages 176-188</p>", file="concepts/a.md", source=None) == []


def test_snippets_read_only_inside_the_wiki(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``pymdownx.snippets`` pastes a file into a page's Markdown, relative to the folder the build
    runs in by default: built from elsewhere (``mkdocs build -f wiki/mkdocs.yml`` in a home
    folder), concept prose could publish any file there. It is refused unless every base path lies
    inside the wiki, restricted to it, with no download (``C-CONFIG``, field
    ``markdown_extensions``); ``pymdownx.b64`` likewise."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "secret.txt").write_text("SECRET-KEY-MATERIAL\n", encoding="utf-8")
    wiki = make_wiki(tmp_path / "wiki", extensions=(*EXTENSIONS, "pymdownx.snippets", "pymdownx.b64"))
    (wiki / "docs" / "index.md").write_text('# Home\n\n--8<-- "secret.txt"\n', encoding="utf-8")
    monkeypatch.chdir(home)
    findings = refused_build(wiki)
    assert [(f.code, f.field) for f in findings] == [("C-CONFIG", "markdown_extensions")] * 2
    assert not (wiki / "site").exists()
    (wiki / "snippets").mkdir()
    (wiki / "snippets" / "part.txt").write_text("A pasted part.\n", encoding="utf-8")
    (wiki / "docs" / "index.md").write_text('# Home\n\n--8<-- "snippets/part.txt"\n', encoding="utf-8")
    monkeypatch.chdir(wiki)
    build_wiki(wiki)
    assert "A pasted part." in (wiki / "site" / "index.html").read_text(encoding="utf-8")


def test_a_source_pages_id_basis_reads_as_no_evidence() -> None:
    """Where a paper id and the title were read (``via``) is sealed text of the record, written at
    acquisition from the document: the source page shows it neutralised, like the title."""
    from publisher.kernel.snapshots import SnapshotCheck
    from publisher.kernel.views import IdentityView, PaperView
    from publisher.site.pages import source as source_page

    hostile = f"VIAX {MARKED}"
    entry = {"value": "12345", "basis": "document", "via": hostile}
    meta = SnapshotCheck(
        "sources",
        "src-" + "a" * 64,
        True,
        None,
        "sealed",
        paper=PaperView.of({"pmid": "12345"}),
        title="A trial",
        identity=IdentityView.of({"pmid": entry, "title": entry | {"value": "A trial"}}),
    )
    shown = [row["via"] for row in source_page._paper_ids(meta)] + [
        source_page._neutral(source_page._title_basis(meta))
    ]
    assert len(shown) == 2
    for text in shown:
        assert text is not None and "VIAX" in text
        assert not BIDI_CONTROLS.search(text) and looks_like_evidence(text) is None
