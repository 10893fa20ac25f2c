"""No forged words beside a verified look, in a real Chromium.

A concept's author copies a promoted evidence footnote and adds a sentence of their own after it,
or quotes invented words in prose in a quotation-mark convention of another language: each build
is refused and the published site stays byte-identical. In the browser, every footnote that shows
a verified excerpt holds the excerpt, its sentence context and its source link only, every verify
control reads verified, none of the forged words is on the page, and no dialog fires.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _browser_helpers import guarded_page, launched_browser, serve
from _policy import policy_of
from _wiki_helpers import make_wiki, sample_run, tree_digest

from publisher.wiki.promote import promote

pytestmark = pytest.mark.browser

FORGED = "Both arms reported far fewer relapses at every later visit"

_LEFTOVER = """(item) => {
    const copy = item.cloneNode(true);
    copy.querySelectorAll(
        '.evidence-excerpt, .evidence-context, a.evidence-link, a.footnote-backref, button'
    ).forEach((n) => n.remove());
    return copy.textContent.replace(/[\\s\\u00a0]+/g, '');
}"""
"""What a footnote item shows beside its excerpt, context, source link and controls."""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_browser() as b:
        yield b


def _build(wiki: Path, site: Path) -> int:
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(wiki / "mkdocs.yml"), "-d", str(site)],
        cwd=wiki,
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "/usr/bin:/bin", "NO_MKDOCS_2_WARNING": "1", "HOME": str(wiki)},
    )
    return done.returncode


def _payloads(concept: str) -> dict[str, str]:
    match = re.search(r"^\[\^[^\]]+\]: (src-.*)$", concept, re.MULTILINE)
    assert match is not None
    body = match.group(1)
    return {
        "sentence-after-a-real-reference": f"\nAs shown.[^forged]\n\n[^forged]: {body} {FORGED}.\n",
        "continuation-line": f"\nAs shown.[^forged]\n\n[^forged]: {body}\n    {FORGED}.\n",
        "finnish-quotes": f"\nTekij\u00e4t kirjoittivat \u201d{FORGED}\u201d.\n",
        "corner-brackets": f"\n\u8457\u8005\u306f\u300c{FORGED}\u300d\u3068\u66f8\u3044\u305f\u3002\n",
        "q-element": f"\nThe trial: <q>{FORGED}</q>\n",
        "low-single-quotes": f"\nNote.[^n]\n\n[^n]: Die Studie: \u201a{FORGED}\u2018\n",
    }


def test_no_forged_words_stand_beside_a_verified_excerpt(tmp_path: Path, browser: Any) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    promote(sample_run(wiki).run.path, wiki, policy=policy_of(wiki))
    site = tmp_path / "site"
    assert _build(wiki, site) == 0
    before = tree_digest(site)
    concept = wiki / "concepts" / "alpha.md"
    original = concept.read_text(encoding="utf-8")
    for name, payload in _payloads(original).items():
        concept.write_text(original + payload, encoding="utf-8")
        assert _build(wiki, site) != 0, name
        assert tree_digest(site) == before, name
    page_path = next(site.glob("concepts/*/index.html"))
    with serve(site) as base, guarded_page(browser) as guard:
        page = guard.page
        dialogs: list[str] = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(base + page_path.parent.relative_to(site).as_posix() + "/")
        assert "fewer relapses" not in page.content()
        items = page.locator(".footnote li:has(.evidence-excerpt)")
        assert items.count() > 0
        for i in range(items.count()):
            assert items.nth(i).evaluate(_LEFTOVER) == ""
        buttons = page.locator("button.evidence-verify")
        assert buttons.count() > 0
        for i in range(buttons.count()):
            button = buttons.nth(i)
            button.click()
            page.wait_for_function(
                "(b) => ['verified', 'mismatch', 'error'].includes(b.getAttribute('data-state'))",
                arg=button.element_handle(),
                timeout=15_000,
            )
            assert button.get_attribute("data-state") == "verified"
        assert dialogs == []
        guard.check_clean()
