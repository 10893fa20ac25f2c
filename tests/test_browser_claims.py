"""A claim's evidence in a real Chromium: shown as its excerpt inside its sentence, linked to the
source page where it is highlighted, and verifiable there and then; never as a raw footnote label.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from _browser_helpers import VERIFY_JS, guarded_page, launched_browser, mkdocs_build, serve, wait_for_state
from _claims_helpers import claims_wiki
from conftest import CliResult
from test_claims_assess import assess

from publisher.wiki.concepts import parse_concept

pytestmark = pytest.mark.browser

Cli = Callable[..., CliResult]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_browser() as b:
        yield b


def test_a_claims_evidence_is_its_excerpt_in_its_sentence(
    browser: Any, cli: Cli, tmp_path: Path, corpus_dir: Path
) -> None:
    cw = claims_wiki(tmp_path / "wiki", corpus_dir)
    label = cw.labels_of(cw.a_full)[0]
    assert assess(cli, cw, "c1", "The first trial reports an effect.", "S", "--evidence", label).status == 0
    (note,) = [n for n in parse_concept(cw.concept.read_text(encoding="utf-8")).footnotes if n.label == label]
    (ref,) = note.refs
    site = tmp_path / "site"
    mkdocs_build(cw.wiki, site)
    with serve(site) as base, guarded_page(browser) as guard:
        page = guard.page
        page.goto(base + "concepts/trials/")
        # The navigation marks the section of the page being read (concept pages are not in it).
        active = page.locator("nav.md-nav--primary .md-nav__item--active > .md-nav__link").all_inner_texts()
        assert any("Concepts" in text for text in active), active
        claim = page.locator("#claim-c1")
        shown = claim.inner_text()
        assert label not in shown and "[^" not in shown  # no raw label
        item = claim.locator(".pub-claim-evidence li").first
        excerpt = item.locator(".evidence-excerpt")
        assert excerpt.inner_text() == ref.quoted
        assert (excerpt.get_attribute("data-start"), excerpt.get_attribute("data-end")) == (
            str(ref.start),
            str(ref.end),
        )
        # In its sentence, as the footnote shows it: the same words around the same excerpt.
        footnote = page.locator(f'[id="fn:{label}"]').inner_text()
        sentence = item.inner_text()
        assert excerpt.inner_text() in sentence
        assert sentence.split(" source src-")[0] == footnote.split(" source src-")[0]
        # Verifiable where it is shown, and its control never splits a word of the sentence.
        item.locator("button.evidence-verify").click()
        assert wait_for_state(page, "#claim-c1 .pub-claim-evidence li button.evidence-verify") == "verified"
        before_button = item.locator("button.evidence-verify").evaluate(
            "b => (b.previousSibling && b.previousSibling.textContent || '').slice(-1)"
        )
        assert not before_button.isalnum() or item.locator("a.evidence-link").count() == 1
        # Linked to the source page, landing on the highlight of the same span.
        item.locator("a.evidence-link").click()
        page.wait_for_load_state()
        assert page.url.endswith(f"#span-{ref.start}-{ref.end}")
        assert f"sources/{ref.source_id}/" in page.url
        target = page.locator(f'[id="span-{ref.start}-{ref.end}"]')
        assert target.count() == 1
        # The source page's table of cited spans shows the excerpt text itself.
        cells = page.locator("td.pub-span-excerpt .evidence-excerpt").all_text_contents()
        assert ref.quoted in cells
        guard.check_clean()

        # The wiki's claims page shows the same evidence, and the navigation names it.
        page.goto(base + "claims/all/")
        assert page.locator(f"#trials-claim-c1 .evidence-excerpt[data-start='{ref.start}']").count() == 1
        guard.check_clean()


def test_a_new_wiki_names_the_claims_page_and_the_matrix_in_its_navigation(
    browser: Any, tmp_path: Path, cli: Cli
) -> None:
    wiki = tmp_path / "wiki"
    assert cli("new", wiki, "--unsigned").status == 0
    yml = (wiki / "mkdocs.yml").read_text(encoding="utf-8")
    assert "  - Claims: claims/all.md\n" in yml and "  - Evidence matrix: claims/index.md\n" in yml
    site = tmp_path / "site"
    mkdocs_build(wiki, site)
    with serve(site) as base, guarded_page(browser) as guard:
        page = guard.page
        shown = "claims/all/" if (site / "claims" / "all" / "index.html").is_file() else "claims/all.html"
        page.goto(base + shown)
        titles = page.locator("nav.md-nav--primary .md-nav__link").all_inner_texts()
        assert any("Claims" in t for t in titles) and any("Evidence matrix" in t for t in titles)
        guard.check_clean()


def test_a_verify_control_never_splits_a_word_or_a_number(browser: Any, tmp_path: Path) -> None:
    sid = "src-" + "a" * 64
    folder = tmp_path / "page"
    (folder / "assets" / "publisher").mkdir(parents=True)
    shutil.copyfile(VERIFY_JS, folder / "assets" / "publisher" / "verify.js")
    (folder / "index.html").write_text(
        '<!doctype html><meta charset="utf-8"><title>controls</title>'
        '<script src="assets/publisher/verify.js"></script><body>'
        f'<pre class="evidence-snapshot" data-source-id="{sid}">The trial '
        '<mark class="evidence-span" data-spans="10-18">randomis</mark>ed 120 nurses, p = 0.'
        '<mark class="evidence-span" data-spans="40-42">00</mark>3 in all.</pre>'
        f'<p id="note"><span class="evidence-context">Of </span><span class="evidence-excerpt" data-source-id="{sid}"'
        ' data-start="50" data-end="55">120 r</span><span class="evidence-context">andomised</span> '
        '<a class="evidence-link" href="#x">source</a></p></body>',
        encoding="utf-8",
    )
    with serve(folder) as base, guarded_page(browser) as guard:
        page = guard.page
        page.goto(base + "index.html")
        page.wait_for_function("() => document.querySelectorAll('button.evidence-verify').length >= 3")
        around = page.evaluate(
            """() => [...document.querySelectorAll('button.evidence-verify')].map(b => [
                (b.previousSibling && b.previousSibling.textContent || ''),
                (b.nextSibling && b.nextSibling.textContent || '')])"""
        )
        for before, after in around:
            # Never between two characters of one word or number.
            assert not (before[-1:].isalnum() and after[:1].isalnum()), (before, after)
        texts = page.evaluate("() => document.querySelector('pre').textContent")
        assert texts == "The trial randomised 120 nurses, p = 0.003 in all."  # the text is untouched
        assert page.evaluate("() => document.querySelector('#note button').previousElementSibling.className") == (
            "evidence-link"
        )
