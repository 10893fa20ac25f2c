"""Scripts on an evidence site: only those the site ships.

The seal reads every script of the whole page, not only of its article: an inline script must be
one the installed theme writes (matched in full against its templates), a script file must be a
``.js``/``.mjs`` file of the site; a script the configuration names must be the build's own or a
``.js``/``.mjs`` file of ``docs/`` whose bytes are JavaScript text and nothing else (no font or
image that also parses as a script). Build-time refusals leave the site byte-identical;
``check-site`` refuses a page changed afterwards even when its policy and manifest were redone.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from _policy import policy_of
from _wiki_helpers import build_wiki, refused_build, tree_digest
from test_site_files import make_cr_wiki

from publisher.site.checks import csp
from publisher.site.checks.checksite import check_site
from publisher.site.checks.inert import script_problem
from publisher.site.checks.manifest import MANIFEST_NAME, seal_files
from publisher.site.checks.scan import scan_page
from publisher.site.checks.seal import check_scripts, script_source_problem
from publisher.site.checks.themescripts import HOLE, is_theme_script, known_scripts

BASE_SCRIPT = next(p for p in known_scripts() if p.pattern.startswith(re.escape("__md_scope=new URL(")))


def _filled(pattern: re.Pattern[str], value: str) -> str:
    """The script text of a theme pattern with ``value`` in each of its holes."""
    return value.join(re.sub(r"\\(.)", r"\1", part, flags=re.DOTALL) for part in pattern.pattern.split(HOLE))


def test_the_theme_scripts_are_read_from_its_templates() -> None:
    patterns = known_scripts()
    assert len(patterns) >= 8
    # the one script of a page filled from its own data (redirect.html's location) is not among them
    assert not any("location.replace" in p.pattern for p in patterns)
    filled = _filled(BASE_SCRIPT, "../..")
    assert is_theme_script(filled) and is_theme_script(_filled(BASE_SCRIPT, "https://example.org/wiki/"))
    for value in ('..",location),alert(1),("', "../..\\u0022", "x y", "a'b", "</script>"):
        assert not is_theme_script(_filled(BASE_SCRIPT, value)), value
    assert not is_theme_script("alert(1)")
    assert not is_theme_script(filled + ";alert(1)")


@pytest.mark.parametrize(
    "data",
    [
        b"wOF2=1;alert(1)//",  # a woff2 whose first bytes are a statement
        b"wOFF=1;alert(1)",
        b"true;alert(1)",  # a TrueType header
        b"GIF89a=1;alert(1)",
        b"\x89PNG\r\n\x1a\nalert(1)",
        b"BM=1;alert(1)",
        b"%PDF-1.7",
        b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
        b"\xef\xbb\xbf  <!-- -->alert(1)",
        b"RIFF\x00\x00\x00\x00WEBPalert(1)",
        b"alert(1)\x00\x01\x02",
        b"alert('\xff')",
    ],
)
def test_a_script_file_is_javascript_text_alone(data: bytes) -> None:
    assert script_problem(data) is not None


def test_plain_javascript_passes() -> None:
    assert script_problem(b"\xef\xbb\xbf// a comment\nconsole.log('\xc3\xa9');\r\n\tvar x = 1;\f\n") is None


@pytest.mark.parametrize(
    ("src", "ok"),
    [
        ("assets/javascripts/bundle.min.js", True),
        ("../js/own.mjs?v=2#x", True),
        ("https://cdn.example/x.js", False),
        ("//cdn.example/x.js", False),
        ("\\/cdn.example/x.js", False),
        (" \tjavascript:alert(1)//.js", False),
        ("data:text/javascript,alert(1)//.js", False),
        ("fonts/x.woff2", False),
        ("x.js.png", False),
    ],
)
def test_a_script_address_names_a_script_file_of_the_site(src: str, ok: bool) -> None:
    assert (script_source_problem(src) is None) is ok


def test_the_seal_reads_scripts_anywhere_on_the_page() -> None:
    page = (
        "<!doctype html><html><head><script>alert('head')</script></head><body>"
        '<header><script src="../fonts/f.woff2"></script></header>'
        '<script type="application/json">{"not": "run"}</script>'
        '<footer><script type="module">alert("footer")</script></footer></body></html>'
    )
    found = check_scripts(scan_page(page), "p/index.html")
    assert [f.code for f in found] == ["C-CSP"] * 3
    assert all(f.file == "p/index.html" for f in found)


# ---------------------------------------------------------------------------------------------
# real builds


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    wiki, _, _ = make_cr_wiki(tmp_path_factory.mktemp("scripts") / "wiki")
    build_wiki(wiki)
    return wiki


def _copy(wiki: Path, target: Path) -> Path:
    shutil.copytree(wiki, target, symlinks=True)
    return target


def _override(wiki: Path, block: str) -> None:
    text = (wiki / "mkdocs.yml").read_text(encoding="utf-8")
    text = text.replace("theme:\n  name: material\n", "theme:\n  name: material\n  custom_dir: overrides\n")
    (wiki / "mkdocs.yml").write_text(text, encoding="utf-8")
    (wiki / "overrides").mkdir(exist_ok=True)
    main = '{% extends "base.html" %}{% block scripts %}{{ super() }}' + block + "{% endblock %}"
    (wiki / "overrides" / "main.html").write_text(main, encoding="utf-8")


def _scripts(wiki: Path, *names: str) -> None:
    listed = "".join(f"  - {n}\n" for n in names)
    with (wiki / "mkdocs.yml").open("a", encoding="utf-8") as f:
        f.write(f"extra_javascript:\n{listed}")


def test_a_theme_override_with_its_own_inline_script_is_refused(built: Path, tmp_path: Path) -> None:
    wiki = _copy(built, tmp_path / "wiki")
    before = tree_digest(wiki / "site")
    _override(wiki, "<script>console.log('own')</script>")
    found = refused_build(wiki)
    assert {f.check for f in found} == {"C-CSP"} and "index.html" in {f.file for f in found}
    assert tree_digest(wiki / "site") == before


def test_a_theme_override_loading_a_font_as_a_script_is_refused(built: Path, tmp_path: Path) -> None:
    wiki = _copy(built, tmp_path / "wiki")
    (wiki / "docs" / "f.woff2").write_bytes(b"wOF2=1;console.log('font')//" + bytes(8))
    before = tree_digest(wiki / "site")
    _override(wiki, "<script src=\"{{ 'f.woff2' | url }}\"></script>")
    assert {f.check for f in refused_build(wiki)} == {"C-CSP"}
    assert tree_digest(wiki / "site") == before


@pytest.mark.parametrize(
    ("name", "data", "check", "field"),
    [
        ("fonts/f.woff2", b"wOF2=1;console.log('font')//" + bytes(8), "C-CONFIG", "extra_javascript"),
        ("js/f.js", b"wOF2=1;console.log('font')//", "C-PAGE-PROSE", None),
        ("https://cdn.example/x.js", None, "C-CONFIG", "extra_javascript"),
        ("js/missing.js", None, "C-CONFIG", "extra_javascript"),
    ],
)
def test_a_configured_script_must_be_javascript_the_site_ships(
    built: Path, tmp_path: Path, name: str, data: bytes | None, check: str, field: str | None
) -> None:
    wiki = _copy(built, tmp_path / "wiki")
    before = tree_digest(wiki / "site")
    if data is not None:
        (wiki / "docs" / name).parent.mkdir(parents=True, exist_ok=True)
        (wiki / "docs" / name).write_bytes(data)
    _scripts(wiki, name)
    found = refused_build(wiki)
    assert [(f.check, f.field) for f in found] == [(check, field)]
    assert tree_digest(wiki / "site") == before


def test_a_script_of_docs_named_in_the_configuration_is_published(built: Path, tmp_path: Path) -> None:
    wiki = _copy(built, tmp_path / "wiki")
    (wiki / "docs" / "js").mkdir()
    (wiki / "docs" / "js" / "own.js").write_bytes(b"console.log('own');\n")
    _scripts(wiki, "js/own.js")
    build_wiki(wiki)
    assert (wiki / "site" / "js" / "own.js").read_bytes() == b"console.log('own');\n"
    assert 'src="js/own.js"' in (wiki / "site" / "index.html").read_text(encoding="utf-8")
    assert check_site(wiki / "site", wiki, policy=policy_of(wiki)).ok


def test_check_site_refuses_a_script_whose_policy_and_manifest_were_redone(built: Path, tmp_path: Path) -> None:
    wiki = _copy(built, tmp_path / "wiki")
    site = wiki / "site"
    for path in site.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    page = site / "index.html"
    html = page.read_text(encoding="utf-8")
    injected = "console.log('header')"
    scan = scan_page(html)
    old = scan.policies[0]
    new = csp.policy([*scan.scripts, injected], scan.styles, offline=False)
    html = html.replace(old, new).replace("<header", f"<script>{injected}</script><header", 1)
    page.write_text(html, encoding="utf-8")
    manifest = json.loads((site / MANIFEST_NAME).read_text(encoding="utf-8"))
    manifest["files"] = seal_files(site)
    (site / MANIFEST_NAME).write_text(json.dumps(manifest), encoding="utf-8")
    found = check_site(site, wiki, policy=policy_of(wiki)).findings
    assert ("C-CSP", "index.html") in {(f.code, f.file) for f in found}, [f.one_line() for f in found]
