"""Page metadata the theme renders is allow-listed (check ``C-META``).

Material prints a page's ``status`` into a class attribute of the navigation unescaped, includes
``.icons/<icon>.svg`` as a template and takes ``template`` as the page's layout: each key has a
rule, every other key is refused with file, line and key, never a template traceback, and the
site stays as it was.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _wiki_helpers import build_wiki, make_wiki, refused_build, tree_digest

from publisher.site.checks.frontmatter import META_RULES, ThemeMeta, check_meta, meta_lines

MATERIAL = Path(__import__("material").__file__).parent / "templates"
THEME = ThemeMeta(frozenset({"new", "deprecated"}), (MATERIAL / ".icons",))


@pytest.mark.parametrize(
    ("meta", "field"),
    [
        ({"status": 'new"><img src=x onerror=alert(1)>'}, "status"),
        ({"status": "beta"}, "status"),  # not configured
        ({"status": ["new"]}, "status"),
        ({"icon": "../../../../etc/passwd"}, "icon"),
        ({"icon": "material/no-such-icon-here"}, "icon"),
        ({"icon": "material/../logo"}, "icon"),
        ({"template": "redirect.html"}, "template"),
        ({"template": "../base.html"}, "template"),
        ({"hide": "navigation"}, "hide"),
        ({"hide": ["navigation", "everything"]}, "hide"),
        ({"search": {"exclude": "yes"}}, "search"),
        ({"search": {"boost": "1e9"}}, "search"),
        ({"search": {"exclude": True, "onload": 1}}, "search"),
        ({"tags": ["<b>x</b>"]}, "tags"),
        ({"tags": "one"}, "tags"),
        ({"title": ["a list"]}, "title"),
        ({"description": "bell \x07 inside"}, "description"),
        ({"comments": "true"}, "comments"),
        ({"location": "https://example.org/"}, "location"),
        ({"extra_javascript": ["x.js"]}, "extra_javascript"),
        ({1: "a number as key"}, "1"),
    ],
)
def test_each_rule_refuses_what_it_does_not_allow(meta: dict[object, object], field: str) -> None:
    found = check_meta(meta, file="docs/p.md", source=None, theme=THEME)
    assert [(f.code, f.field, f.file) for f in found] == [("C-META", field, "docs/p.md")]


def test_what_the_theme_may_render_passes() -> None:
    meta = {
        "title": "A <title> & more",  # plain text: escaped by the build, never refused
        "description": "line one\nline two",
        "author": "Ana",
        "subtitle": "sub",
        "status": "new",
        "icon": "material/emoticon-happy",
        "template": "main.html",
        "hide": ["navigation", "toc", "footer", "feedback", "path", "tags"],
        "search": {"exclude": False, "boost": 2},
        "tags": ["Évidence", "C++", "v1.2"],
        "comments": True,
    }
    assert set(meta) == set(META_RULES)
    assert check_meta(meta, file="docs/p.md", source=None, theme=THEME) == []


def test_icons_are_files_of_the_icon_set(tmp_path: Path) -> None:
    icons = tmp_path / "overrides" / ".icons"
    (icons / "own").mkdir(parents=True)
    (icons / "own" / "mark.svg").write_text("<svg/>", encoding="utf-8")
    (tmp_path / "secret.svg").write_text("<svg/>", encoding="utf-8")
    (icons / "own" / "linked.svg").symlink_to(tmp_path / "secret.svg")
    (icons / "own" / "folder.svg").mkdir()
    theme = ThemeMeta.of({}, [tmp_path / "overrides", MATERIAL])
    assert theme.has_icon("own/mark") and theme.has_icon("material/emoticon-happy")
    assert not theme.has_icon("own/linked") and not theme.has_icon("own/folder")
    assert not theme.has_icon("own/missing")


def test_statuses_come_from_the_configuration() -> None:
    theme = ThemeMeta.of({"status": {"new": "Recently added", 3: "x"}}, [])
    assert theme.statuses == frozenset({"new"})
    assert ThemeMeta.of({"status": "new"}, []).statuses == frozenset()


def test_lines_of_yaml_and_multimarkdown_metadata() -> None:
    yaml_page = "---\ntitle: T\n# a comment\nstatus: x\n---\n# H\n"
    assert meta_lines(yaml_page) == {"title": 2, "status": 4}
    mmd_page = "Title: T\n    more title\nStatus: x\n\n# H\n"
    assert meta_lines(mmd_page) == {"title": 1, "status": 3}
    assert meta_lines("# H\n\nStatus: x\n") == {}
    assert meta_lines("---\n[unclosed\n---\n") == {}


# ---------------------------------------------------------------------------------------------
# a real build


def _wiki(tmp_path: Path) -> Path:
    extra = "extra:\n  status:\n    new: Recently added\n"
    wiki = make_wiki(tmp_path / "wiki", extra=extra)
    build_wiki(wiki)
    return wiki


BUILD_PAYLOADS = {
    "status-markup": ('---\nstatus: new"><img src=x onerror=alert(7)>\n---\n# P\n', "status", 2),
    "status-unconfigured": ("---\ntitle: P\nstatus: beta\n---\n# P\n", "status", 3),
    "icon-path": ("---\nicon: ../../../../../etc/hostname\n---\n# P\n", "icon", 2),
    "multimarkdown-status": ('Status: new"><svg onload=alert(8)>\n\n# P\n', "status", 1),
    "redirect-template": ('---\ntemplate: redirect.html\nlocation: x");alert(9);//\n---\n# P\n', "template", 2),
    "unknown-key": ("---\nextra_head: <script>alert(10)</script>\n---\n# P\n", "extra_head", 2),
}


def test_the_build_refuses_each_payload_and_the_site_stays(tmp_path: Path) -> None:
    wiki = _wiki(tmp_path)
    before = tree_digest(wiki / "site")
    for name, (page, field, line) in BUILD_PAYLOADS.items():
        (wiki / "docs" / "p.md").write_text(page, encoding="utf-8")
        found = [f for f in refused_build(wiki) if f.check == "C-META"]
        assert [(f.file, f.field, f.line) for f in found][:1] == [("docs/p.md", field, line)], name
        assert tree_digest(wiki / "site") == before, name


def test_allowed_metadata_builds_and_renders_escaped(tmp_path: Path) -> None:
    wiki = _wiki(tmp_path)
    page = (
        "---\ntitle: Fish & <chips>\nstatus: new\nicon: material/emoticon-happy\n"
        "hide:\n  - toc\nsearch:\n  boost: 2\ntags:\n  - fish\n---\n# P\n\nText.\n"
    )
    (wiki / "docs" / "p.md").write_text(page, encoding="utf-8")
    build_wiki(wiki)
    html = (wiki / "site" / "p" / "index.html").read_text(encoding="utf-8")
    assert 'class="md-status md-status--new"' in html
    assert "Fish &amp; &lt;chips&gt;" in html and "<chips>" not in html
