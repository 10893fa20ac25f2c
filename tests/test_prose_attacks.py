"""Attacks on the published site by whoever writes prose or files under docs/: the build's own
stylesheets cannot be replaced, an SVG cannot load anything, and text cannot spell evidence in
an order or form the checks do not read. Payloads here are not those of the other prose tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from _wiki_helpers import build_wiki, leftovers, make_wiki, refused_build, sample_run, tree_digest

from publisher.site.checks.inert import check_static
from publisher.wiki.promote import promote

_FORGED_CSS = 'button.evidence-verify[data-state="mismatch"]::after { content: "\\2713  verified"; color: green }'


@pytest.mark.parametrize("uri", ["assets/publisher/evidence.css", "assets/publisher/reader.css"])
def test_a_docs_file_cannot_replace_the_builds_own_stylesheet(tmp_path: Path, uri: str) -> None:
    """The build's stylesheets decide what "verified" looks like; one of docs/ at their path
    would be published in their place (it is named in extra_css, so it passed as the site's own)."""
    wiki = make_wiki(tmp_path / "wiki")
    promote(sample_run(wiki).run.path, wiki)
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
    assert [(f.check, f.file) for f in found] == [("C-PROSE", f"docs/{name}")]


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
