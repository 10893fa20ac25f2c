"""A site handed over as a folder: opened from disk (``file://``) in a real Chromium.

The repository's example wiki is built with ``extra: evidence: offline: true``, as the README's
first reading step says: open ``site/index.html``, follow a footnote, land on the highlight and
verify it, with nothing fetched (a ``file://`` page cannot fetch) and nothing served. Search works
from disk too. The record a page verifies against comes from ``record.js``, and the verifier still
recomputes every digest: an edited ``record.js`` is a mismatch, a ``record.js`` that hands over
another source's record is refused.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _browser_helpers import (
    copy_example_wiki,
    guarded_page,
    in_viewport,
    launched_browser,
    make_astral_wiki,
    mkdocs_build,
    screenshot,
    wait_for_state,
)

pytestmark = pytest.mark.browser

OFFLINE = "extra:\n  evidence:\n    offline: true\n"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_browser() as b:
        yield b


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("offline-example")
    wiki = copy_example_wiki(root / "wiki")
    mkdocs_build(wiki, root / "site")
    return root / "site"


@pytest.fixture
def astral(tmp_path: Path) -> tuple[Path, str, list[tuple[int, int]]]:
    wiki, sid, ranges = make_astral_wiki(tmp_path / "wiki", extra=OFFLINE)
    mkdocs_build(wiki, tmp_path / "site")
    return tmp_path / "site", sid, ranges


def _button(sid: str, start: int, end: int) -> str:
    return (
        f'button.evidence-verify[data-kind="highlight"][data-source-id="{sid}"][data-start="{start}"][data-end="{end}"]'
    )


def _verify_on_source_page(page: Any, site: Path, sid: str, start: int, end: int) -> tuple[str, str]:
    """Open a source page from disk, click one span's verify button: its final state and label."""
    page.goto((site / "sources" / f"{sid}.html").as_uri())
    button = _button(sid, start, end)
    page.click(button)
    return wait_for_state(page, button), page.get_attribute(button, "data-label") or ""


def test_open_index_follow_a_footnote_and_verify_from_disk(example: Path, browser: Any) -> None:
    with guarded_page(browser) as guard:
        page = guard.page
        page.goto((example / "index.html").as_uri())
        with page.expect_navigation():
            page.locator('nav.md-nav--primary a[href="concepts/index.html"]').first.dispatch_event("click")
        assert page.url.endswith("/concepts/index.html")
        with page.expect_navigation():
            page.locator("article a[href$='.html']").first.click()
        assert re.search(r"/concepts/[a-z0-9-]+\.html$", page.url), page.url
        link = page.locator("a.evidence-link").first
        match = re.search(r"sources/(src-[0-9a-f]{64})\.html#span-(\d+)-(\d+)$", link.get_attribute("href") or "")
        assert match, link.get_attribute("href")
        with page.expect_navigation():
            link.click()
        sid, start, end = match[1], int(match[2]), int(match[3])
        assert page.url.startswith("file://") and page.url.endswith(f"{sid}.html#span-{start}-{end}")
        page.wait_for_selector(_button(sid, start, end))
        page.wait_for_timeout(200)
        assert in_viewport(page, f"#span-{start}-{end}")
        page.click(_button(sid, start, end))
        assert wait_for_state(page, _button(sid, start, end)) == "verified", page.get_attribute(
            _button(sid, start, end), "data-detail"
        )
        assert page.locator("input.evidence-verify-file").count() == 0  # no file to choose by hand
        screenshot(page, "offline-source-verified.png")
        assert any(r.endswith(f"/sources/{sid}/record.js") for r in guard.requests)
        assert all(r.startswith(("file://", "data:", "blob:")) for r in guard.requests), guard.requests
        guard.check_clean()


def test_search_works_from_disk(example: Path, browser: Any) -> None:
    with guarded_page(browser) as guard:
        page = guard.page
        page.goto((example / "concepts" / "index.html").as_uri())
        page.keyboard.press("s")
        page.keyboard.type("light")
        results = page.locator(".md-search-result__item")
        results.first.wait_for(state="visible", timeout=10_000)
        assert results.count() > 0
        href = page.locator(".md-search-result__link").first.get_attribute("href") or ""
        assert ".html" in href and not href.split("#")[0].endswith("/"), href
        screenshot(page, "offline-search.png")
        guard.check_clean()


def test_every_excerpt_of_a_concept_verifies_from_disk(
    astral: tuple[Path, str, list[tuple[int, int]]], browser: Any
) -> None:
    site, _, ranges = astral
    with guarded_page(browser) as guard:
        page = guard.page
        page.goto((site / "concepts" / "astral.html").as_uri())
        buttons = page.locator('button.evidence-verify[data-kind="excerpt"]')
        assert buttons.count() == len(ranges)
        for i in range(buttons.count()):
            buttons.nth(i).click()
        page.wait_for_function(
            "() => [...document.querySelectorAll('button.evidence-verify')]"
            ".every(b => ['verified','mismatch','error'].includes(b.dataset.state))"
        )
        assert buttons.evaluate_all("(bs) => bs.map(b => b.dataset.state)") == ["verified"] * len(ranges)
        guard.check_clean()


def test_an_edited_record_script_is_a_mismatch(astral: tuple[Path, str, list[tuple[int, int]]], browser: Any) -> None:
    site, sid, ranges = astral
    script = site / "sources" / sid / "record.js"
    record = json.loads((site / "sources" / sid / "record.json").read_bytes())
    record["text"] = record["text"].replace("significant", "insignificant")
    script.write_text(f"EvidenceVerify.register({json.dumps(sid)}, {json.dumps(json.dumps(record))});\n")
    start, end = ranges[1]
    with guarded_page(browser) as guard:
        state, label = _verify_on_source_page(guard.page, site, sid, start, end)
        assert state == "mismatch" and label.startswith("✗ source_id:")
        assert guard.errors == [] and guard.offsite == []


def test_a_record_script_for_another_source_is_refused(
    astral: tuple[Path, str, list[tuple[int, int]]], browser: Any
) -> None:
    site, sid, ranges = astral
    script = site / "sources" / sid / "record.js"
    other = "src-" + "0" * 64
    script.write_text(script.read_text(encoding="utf-8").replace(json.dumps(sid), json.dumps(other), 1))
    start, end = ranges[0]
    with guarded_page(browser) as guard:
        state, label = _verify_on_source_page(guard.page, site, sid, start, end)
        assert state == "error" and (site / "sources" / sid / "record.js").as_uri() in label  # the file at fault
