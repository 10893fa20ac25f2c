"""A reader in a real Chromium: follow a footnote, land on the highlight, verify it in the browser.

Sites are built with the real hook (``mkdocs build``) and served from a loopback ``http.server``;
every request is routed and any that leaves 127.0.0.1 fails the test, as does any console error.
The verify control recomputes the snapshot's digests from the published ``record.json``; tampering
with that file (one character of the text, or the URL) must turn "verified" into the exact mismatch.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from _browser_helpers import (
    ASTRAL_SPANS,
    ASTRAL_TEXT,
    copy_example_wiki,
    guarded_page,
    in_viewport,
    launched_browser,
    make_astral_wiki,
    mkdocs_build,
    screenshot,
    serve,
    wait_for_state,
)

pytestmark = pytest.mark.browser


@dataclass
class Site:
    folder: Path
    base: str
    source_id: str | None = None
    ranges: tuple[tuple[int, int], ...] = ()

    def record(self, source_id: str) -> Path:
        return self.folder / "sources" / source_id / "record.json"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_browser() as b:
        yield b


@pytest.fixture(scope="module")
def astral_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    root = tmp_path_factory.mktemp("astral")
    wiki, sid, ranges = make_astral_wiki(root / "wiki")
    mkdocs_build(wiki, root / "site")
    with serve(root / "site") as base:
        yield Site(root / "site", base, sid, tuple(ranges))


@pytest.fixture(scope="module")
def example_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    root = tmp_path_factory.mktemp("example")
    wiki = copy_example_wiki(root / "wiki")
    mkdocs_build(wiki, root / "site")
    with serve(root / "site") as base:
        yield Site(root / "site", base)


@pytest.fixture
def tampered(astral_site: Site) -> Iterator[Any]:
    """Edit the served record.json of the astral source; the original bytes come back afterwards."""
    assert astral_site.source_id is not None
    path = astral_site.record(astral_site.source_id)
    original = path.read_bytes()

    def edit(change: Any) -> dict[str, Any]:
        record = json.loads(original)
        change(record)
        path.chmod(0o644)
        path.write_bytes(json.dumps(record, ensure_ascii=False).encode("utf-8"))
        return record

    yield edit
    path.write_bytes(original)


def _concept_url(site: Site) -> str:
    folders = sorted((site.folder / "concepts").glob("*/index.html"))  # directory URLs
    files = sorted(p for p in (site.folder / "concepts").glob("*.html") if p.name != "index.html")  # offline
    assert folders or files, f"no concept page under {site.folder}/concepts"
    if folders:
        return site.base + folders[0].parent.relative_to(site.folder).as_posix() + "/"
    return site.base + files[0].relative_to(site.folder).as_posix()


def _follow_first_footnote(page: Any, site: Site) -> tuple[str, int, int]:
    """Open the concept page, click the first evidence link, return (source_id, start, end) landed on."""
    page.goto(_concept_url(site))
    link = page.locator("a.evidence-link").first
    href = link.get_attribute("href")
    match = re.search(r"sources/(src-[0-9a-f]{64})(?:/|\.html)?#span-(\d+)-(\d+)$", href or "")
    assert match, href
    with page.expect_navigation():
        link.click()
    assert page.url.endswith(f"#span-{match[2]}-{match[3]}")
    page.wait_for_function("() => document.querySelector('button.evidence-verify') !== null")
    return match[1], int(match[2]), int(match[3])


def _assert_landed(page: Any, start: int, end: int) -> None:
    target = f"#span-{start}-{end}"
    assert page.evaluate("() => document.querySelector(':target') && document.querySelector(':target').id") == (
        f"span-{start}-{end}"
    )
    page.wait_for_timeout(200)  # Material adjusts the scroll position once its header is laid out
    assert in_viewport(page, target), f"{target} is not inside the viewport below the header"
    outline = page.evaluate(f"() => getComputedStyle(document.querySelector('{target}')).outlineStyle")
    assert outline == "solid"


def _highlight_button(source_id: str, start: int, end: int) -> str:
    return (
        f'button.evidence-verify[data-kind="highlight"][data-source-id="{source_id}"]'
        f'[data-start="{start}"][data-end="{end}"]'
    )


# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["example_site", "astral_site"])
def test_footnote_lands_on_highlight_which_verifies(which: str, browser: Any, request: pytest.FixtureRequest) -> None:
    site: Site = request.getfixturevalue(which)
    with guarded_page(browser) as guard:
        page = guard.page
        sid, start, end = _follow_first_footnote(page, site)
        _assert_landed(page, start, end)
        button = _highlight_button(sid, start, end)
        page.click(button)
        assert wait_for_state(page, button) == "verified", page.get_attribute(button, "title")
        screenshot(page, f"source-page-verified-{which}.png")
        guard.check_clean()


def test_every_excerpt_on_the_concept_page_verifies(astral_site: Site, browser: Any) -> None:
    with guarded_page(browser) as guard:
        page = guard.page
        page.goto(_concept_url(astral_site))
        buttons = page.locator('button.evidence-verify[data-kind="excerpt"]')
        count = buttons.count()
        assert count == len(ASTRAL_SPANS)
        shown = page.locator(".evidence-excerpt").all_text_contents()
        assert sorted(shown) == sorted(ASTRAL_SPANS)
        for i in range(count):
            buttons.nth(i).click()
        page.wait_for_function(
            "() => [...document.querySelectorAll('button.evidence-verify')]"
            ".every(b => ['verified','mismatch','error'].includes(b.dataset.state))"
        )
        states = buttons.evaluate_all("(bs) => bs.map(b => b.dataset.state)")
        assert states == ["verified"] * count
        screenshot(page, "concept-page-verified.png", full_page=True)
        guard.check_clean()


def test_every_highlight_on_the_source_page_verifies(astral_site: Site, browser: Any) -> None:
    sid = astral_site.source_id
    with guarded_page(browser) as guard:
        page = guard.page
        page.goto(f"{astral_site.base}sources/{sid}/")
        for start, end in astral_site.ranges:
            button = _highlight_button(str(sid), start, end)
            page.click(button)
            assert wait_for_state(page, button) == "verified"
        # The snapshot's text content is still exactly the snapshot: labels are drawn by CSS.
        text = page.evaluate("() => document.querySelector('pre.evidence-snapshot').textContent")
        assert text == ASTRAL_TEXT
        guard.check_clean()


def test_tampered_text_reports_the_digest_and_the_first_differing_code_point(
    astral_site: Site, browser: Any, tampered: Any
) -> None:
    start, end = astral_site.ranges[0]
    inside = ASTRAL_TEXT.index("👍🏽")  # a code point inside the first cited span
    tampered(lambda r: r.update(text=r["text"][:inside] + "👎" + r["text"][inside + 1 :]))
    with guarded_page(browser) as guard:
        page = guard.page
        page.goto(f"{astral_site.base}sources/{astral_site.source_id}/#span-{start}-{end}")
        button = _highlight_button(str(astral_site.source_id), start, end)
        page.click(button)
        assert wait_for_state(page, button) == "mismatch"
        problems = json.loads(page.get_attribute(button, "data-problems") or "[]")
        changed = ASTRAL_TEXT[:inside] + "👎" + ASTRAL_TEXT[inside + 1 :]
        url = "https://example.org/𝛼/trial?lang=fr&x=1"
        got = "src-" + hashlib.sha256(url.encode() + b"\x00" + changed.encode()).hexdigest()
        by_check = {p["check"]: p for p in problems}
        assert [p["check"] for p in problems][:1] == ["source_id"]  # the first one is the label's
        assert (by_check["source_id"]["expected"], by_check["source_id"]["got"]) == (astral_site.source_id, got)
        assert by_check["content_hash"]["got"] == "sha256:" + hashlib.sha256(changed.encode()).hexdigest()
        excerpt = by_check["excerpt"]  # the first differing code point, counted from the span's start
        assert excerpt["index"] == inside - start
        assert (excerpt["expected"].split()[0], excerpt["got"].split()[0]) == ("U+1F44E", "U+1F44D")  # record, page
        screenshot(page, "source-page-tampered-text.png")
        guard.check_clean()


def test_tampered_url_reports_the_source_id_mismatch(astral_site: Site, browser: Any, tampered: Any) -> None:
    tampered(lambda r: r.update(url=r["url"] + "&y=2"))
    start, end = astral_site.ranges[2]
    with guarded_page(browser) as guard:
        page = guard.page
        page.goto(_concept_url(astral_site))
        button = f'button.evidence-verify[data-kind="excerpt"][data-start="{start}"][data-end="{end}"]'
        page.click(button)
        assert wait_for_state(page, button) == "mismatch"
        detail = (page.get_attribute(button, "data-detail") or "").splitlines()
        assert detail[0].startswith(f"source_id mismatch: expected {astral_site.source_id}, got src-")
        assert any(line.startswith("record_hash mismatch") for line in detail)
        assert not any(line.startswith(("content_hash", "excerpt")) for line in detail)
        guard.check_clean()


def test_missing_record_is_an_error_not_a_pass(astral_site: Site, browser: Any, tampered: Any) -> None:
    astral_site.record(str(astral_site.source_id)).unlink()  # the fixture puts it back
    with guarded_page(browser) as guard:
        page = guard.page
        page.goto(f"{astral_site.base}sources/{astral_site.source_id}/")
        start, end = astral_site.ranges[1]
        button = _highlight_button(str(astral_site.source_id), start, end)
        page.click(button)
        assert wait_for_state(page, button) == "error"
        assert "HTTP 404" in (page.get_attribute(button, "data-label") or "")
        assert guard.offsite == []


def test_fallback_sha256_when_webcrypto_is_unavailable(astral_site: Site, browser: Any) -> None:
    with guarded_page(browser) as guard:
        page = guard.page
        page.add_init_script("Object.defineProperty(window, 'isSecureContext', {value: false});")
        page.goto(f"{astral_site.base}sources/{astral_site.source_id}/")
        start, end = astral_site.ranges[0]
        button = _highlight_button(str(astral_site.source_id), start, end)
        page.click(button)
        assert wait_for_state(page, button) == "verified"
        assert "built-in SHA-256" in (page.get_attribute(button, "data-detail") or "")
        guard.check_clean()


def test_footnote_tooltip_shows_the_verified_excerpt(astral_site: Site, browser: Any) -> None:
    with guarded_page(browser) as guard:
        page = guard.page
        page.goto(_concept_url(astral_site))
        page.locator(".footnote-ref").first.hover()
        tooltip = page.locator(".md-tooltip2").first
        tooltip.wait_for(state="visible", timeout=5000)
        text = tooltip.inner_text()
        assert any(span in text for span in ASTRAL_SPANS), text
        guard.check_clean()


def test_print_hides_controls_and_keeps_highlights(astral_site: Site, browser: Any) -> None:
    with guarded_page(browser) as guard:
        page = guard.page
        page.goto(f"{astral_site.base}sources/{astral_site.source_id}/")
        page.emulate_media(media="print")
        hidden = page.evaluate("() => getComputedStyle(document.querySelector('button.evidence-verify')).display")
        assert hidden == "none"
        decoration = page.evaluate(
            "() => getComputedStyle(document.querySelector('mark.evidence-span')).textDecorationLine"
        )
        assert decoration == "underline"
        guard.check_clean()


def test_windows_mode_shows_context_around_each_span_and_verifies(tmp_path: Path, browser: Any) -> None:
    wiki, sid, ranges = make_astral_wiki(
        tmp_path / "wiki", extra="extra:\n  evidence:\n    source_text: windows\n    context: 40\n"
    )
    mkdocs_build(wiki, tmp_path / "site")
    html = (tmp_path / "site" / "sources" / sid / "index.html").read_text(encoding="utf-8")
    assert "evidence-snapshot" not in html and "evidence-window" in html
    assert "Line 080 of filler" not in html  # far from every span: not shown
    with serve(tmp_path / "site") as base, guarded_page(browser) as guard:
        page = guard.page
        site = Site(tmp_path / "site", base, sid, tuple(ranges))
        _, start, end = _follow_first_footnote(page, site)
        _assert_landed(page, start, end)
        for s, e in ranges:
            button = _highlight_button(sid, s, e)
            page.click(button)
            assert wait_for_state(page, button) == "verified"
        screenshot(page, "source-page-windows.png")
        guard.check_clean()


def test_file_url_lets_the_reader_choose_the_record(astral_site: Site, browser: Any) -> None:
    copy = astral_site.folder.parent / "file-copy"
    if not copy.exists():
        shutil.copytree(astral_site.folder, copy)
    page_path = copy / "sources" / str(astral_site.source_id) / "index.html"
    with guarded_page(browser) as guard:
        page = guard.page
        page.goto(page_path.as_uri())
        start, end = astral_site.ranges[0]
        button = _highlight_button(str(astral_site.source_id), start, end)
        page.click(button)
        assert wait_for_state(page, button) == "error"
        page.set_input_files("input.evidence-verify-file", str(page_path.parent / "record.json"))
        assert wait_for_state(page, button, ("verified", "mismatch")) == "verified"


def test_report_excerpts_verify_too(example_site: Site, browser: Any) -> None:
    reports = sorted((example_site.folder / "runs").glob("*/report.html"))
    assert reports
    with guarded_page(browser) as guard:
        page = guard.page
        page.goto(example_site.base + reports[0].relative_to(example_site.folder).as_posix())
        buttons = page.locator('button.evidence-verify[data-kind="excerpt"]')
        assert buttons.count() > 0
        buttons.first.click()
        assert wait_for_state(page, 'button.evidence-verify[data-kind="excerpt"]') == "verified"
        guard.check_clean()
