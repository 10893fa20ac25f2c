"""Hostile text in every field that becomes a title, label, URL or metadata shows literally in
Chromium and never runs (issue 11, class 1: one escaping boundary).

One wiki carries a different payload in each run's question (the concept title, the runs index),
its sources' titles (source pages, indexes, report source lists), its sources' URLs, the site
name, a hand-written page's front-matter title and description, and a navigation section. Every
page of the built site is opened in Debian's Chromium: no dialog fires, no payload runs, no link
has a ``javascript:`` target, and where a title is shown it is the exact text.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _browser_helpers import guarded_page, launched_browser, mkdocs_build, serve
from _policy import policy_of
from _wiki_helpers import make_wiki, sample_run

from publisher.kernel.lookalike import BIDI_CONTROLS
from publisher.wiki.promote import promote

pytestmark = [pytest.mark.browser, pytest.mark.slow]

MARK = "window.__pwned=1"
PAYLOADS = (
    f"<script>{MARK};alert(1)</script>",
    f"<img src=x onerror={MARK};alert(1)>",
    f"</title><script>{MARK};alert(1)</script>",
    f'"><svg onload={MARK};alert(1)>',
    f"' autofocus onfocus='{MARK};alert(1)' x='",
    f"&lt;script&gt;{MARK};alert(1)&lt;/script&gt;",
    f"&#x3C;img src=x onerror={MARK};alert(1)&#x3E;",
    f"]]><!--<img src=x onerror={MARK}>-->",
    "\u202e<b>bidi</b> ünïcödé 𝔘 — “quotes” & ampersand",
)
SHOWN = tuple(BIDI_CONTROLS.sub("", p) for p in PAYLOADS)
"""The payloads as a title shows them: text in another order than written is not shown so."""
URLS = (
    "javascript:alert(1)//",
    'https://example.org/x"><script>alert(1)</script>/',
    "https://example.org/?q=<img src=x onerror=alert(1)>&",
)


def _wiki(root: Path) -> Path:
    section = PAYLOADS[1]
    extra = (
        "nav:\n  - Home: index.md\n"
        f"  - {json.dumps(section)}:\n      - hostile.md\n"
        "  - Concepts: concepts/index.md\n  - Sources: sources/index.md\n  - Runs: runs/index.md\n"
    )
    wiki = make_wiki(root, extra=extra)
    yml = (wiki / "mkdocs.yml").read_text(encoding="utf-8")
    (wiki / "mkdocs.yml").write_text(yml.replace('"Test wiki"', json.dumps(PAYLOADS[2]), 1), encoding="utf-8")
    (wiki / "docs" / "hostile.md").write_text(
        f"---\ntitle: {json.dumps(PAYLOADS[0])}\ndescription: {json.dumps(PAYLOADS[3])}\n---\n\nA page.\n",
        encoding="utf-8",
    )
    for i, payload in enumerate(PAYLOADS):
        url = URLS[i % len(URLS)] + f"{i}/" if i < len(URLS) else f"https://example.org/{i}/"
        rb = sample_run(wiki, f"r{i}", question=payload, title=PAYLOADS[-1 - i], base_url=url)
        promote(rb.run.path, wiki, policy=policy_of(wiki))
    return wiki


def test_hostile_titles_show_literally_and_never_run(tmp_path: Path) -> None:
    wiki = _wiki(tmp_path / "wiki")
    site = tmp_path / "site"
    mkdocs_build(wiki, site)
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("index.html"))
    assert len(pages) >= 3 * len(PAYLOADS)
    for path in site.rglob("*.html"):
        assert 'href="javascript:' not in path.read_text(encoding="utf-8").lower(), path
    dialogs: list[str] = []
    with launched_browser() as browser, serve(site) as base, guarded_page(browser) as guard:
        page = guard.page
        page.on("dialog", lambda d: (dialogs.append(f"{page.url}: {d.message}"), d.dismiss()))
        for rel in pages:
            page.goto(base + rel.removesuffix("index.html"))
            page.wait_for_load_state("load")
            page.focus("body")
            assert page.evaluate("window.__pwned") is None, rel
            hrefs = page.eval_on_selector_all("a[href]", "els => els.map(a => a.protocol)")
            assert "javascript:" not in hrefs, rel
            heading = page.eval_on_selector("article h1", "h => h.textContent.trim()")
            title = page.evaluate("document.title")
            for i, payload in enumerate(SHOWN):
                if rel == f"concepts/r{i}/index.html":
                    assert heading == payload and title.startswith(payload + " - "), (rel, heading, title)
            if rel.startswith("sources/src-"):
                assert heading in (*SHOWN, "A title"), (rel, heading)  # the PDF keeps its fixed title
                assert title.startswith(heading + " - ") and title.endswith(PAYLOADS[2])
        page.goto(base + "hostile/")
        assert page.evaluate("document.title") == f"{PAYLOADS[0]} - {PAYLOADS[2]}"
        assert page.get_attribute("meta[name=description]", "content") == PAYLOADS[3]
        assert PAYLOADS[1] in page.inner_text("nav.md-nav--primary")
        header = page.eval_on_selector_all(
            ".md-header__topic .md-ellipsis", "els => els.map(e => e.textContent.trim())"
        )
        assert PAYLOADS[2] in header and PAYLOADS[0] in header
        assert page.evaluate("window.__pwned") is None
    assert dialogs == []
