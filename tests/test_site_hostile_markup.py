"""Hostile prose against the built HTML: whatever a page's Markdown holds, what the theme prints
around the page's content (its table of contents, its navigation) holds no live markup.

Real ``mkdocs build`` runs of a one-page wiki; the built page is read as a browser reads it.
"""

from __future__ import annotations

from pathlib import Path

from _wiki_helpers import EXTENSIONS, build_wiki, make_wiki

from publisher.site.checks.scan import parse_page

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
