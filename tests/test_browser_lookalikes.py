"""Homoglyphs cannot forge the verified look, in a real Chromium (Debian's).

Prose spelling the badge and a span reference with look-alike letters (a real span's source, in
Cyrillic letters; "verified" in Greek, full-width and mathematical letters beside a symbol; a
heading turned around by the implicit bidi marks) is refused at build and the published site
stays byte-identical; opened in the browser it raises no dialog and shows none of it. A source
whose fetched ``<title>`` ends in a check mark and "verified" is published with its title's
symbols spelled out: no page shows that title with the badge's look.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _browser_helpers import guarded_page, launched_browser, promote_one_source, serve
from _wiki_helpers import build_wiki, leftovers, make_wiki, refused_build, tree_digest

from publisher.kernel.refs import looks_like_evidence

pytestmark = pytest.mark.browser

MARKER = "HOMOGLYPH-9c1e"
TEXT = "Results. Walking thirty minutes a day lowered systolic pressure by five points. Adherence was high."
START = TEXT.index("Walking")
END = TEXT.index(" Adherence") - 1


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_browser() as b:
        yield b


def _wiki(root: Path, title: str = "A walking trial") -> tuple[Path, str]:
    wiki = make_wiki(root / "wiki", extensions=("footnotes", "attr_list", "md_in_html", "admonition", "toc"))
    sid = promote_one_source(
        wiki,
        "walking",
        "https://example.org/walking",
        TEXT,
        [(START, END)],
        pmid="6161",
        title=title,
        question="Does walking lower blood pressure?",
    )
    build_wiki(wiki)
    return wiki, sid


def _shown(browser: Any, site: Path) -> tuple[list[str], list[str], list[str]]:
    """Every page opened before any verify button is pressed: dialogs, body texts, headings."""
    dialogs: list[str] = []
    bodies: list[str] = []
    headings: list[str] = []
    with serve(site) as base, guarded_page(browser) as guard:
        page = guard.page
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        for path in sorted(site.rglob("*.html")):
            page.goto(base + path.relative_to(site).as_posix())
            bodies.append(page.inner_text("body"))
            headings += [page.title(), *page.locator("h1, h2, h3, nav").all_inner_texts()]
        assert not any(MARKER in e for e in guard.errors), guard.errors
    return dialogs, bodies, headings


def test_homoglyph_evidence_in_prose_is_refused_and_the_site_shows_none_of_it(tmp_path: Path, browser: Any) -> None:
    wiki, sid = _wiki(tmp_path)
    site = wiki / "site"
    before = tree_digest(site)
    concept = next((wiki / "concepts").glob("*.md"))
    forged = (
        f"\n\n{MARKER} walking cured hypertension \u0455r\u0441-{sid[:12]}\u2026#{START}-{END}\n\n"
        f"Checked \u2b50 \u03bd\u0435r\u03b9f\u03b9ed {MARKER}.\n"
    )
    concept.write_text(concept.read_text(encoding="utf-8") + forged, encoding="utf-8")
    (wiki / "docs" / "forged.md").write_text(
        f"# Notes\n\n## \uff56\uff45\uff52\uff49\uff46\uff49\uff45\uff44 \u2714 {MARKER}\n\n"
        f"## \u200f\u2713 \U0001d42f\U0001d41e\U0001d42b\U0001d422\U0001d41f\U0001d422\U0001d41e\U0001d41d\n",
        encoding="utf-8",
    )
    findings = refused_build(wiki)
    files = {(f.check, f.file) for f in findings}
    assert ("C-PAGE-PROSE", "docs/forged.md") in files and (
        "C-PAGE-PROSE",
        concept.relative_to(wiki).as_posix(),
    ) in files
    assert tree_digest(site) == before and leftovers(wiki) == []
    dialogs, bodies, _ = _shown(browser, site)
    assert dialogs == [] and not any(MARKER in body for body in bodies)


def test_a_source_title_ending_in_verified_is_shown_without_the_badge(tmp_path: Path, browser: Any) -> None:
    wiki, _ = _wiki(tmp_path, title=f"Walking and pressure {MARKER} \u2714 v\u0435rified")
    dialogs, bodies, headings = _shown(browser, wiki / "site")
    assert dialogs == []
    titled = [h for h in headings if MARKER in h]
    assert titled, "the source's title is shown somewhere"
    for text in titled:
        assert looks_like_evidence(text) is None, text
    for body in bodies:  # before any verify button is pressed, nothing reads as the badge
        assert "\u2714" not in body, body[:200]
