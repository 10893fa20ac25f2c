"""A large source in a real Chromium: a small page, a small search index, and a record that verifies.

A source longer than ``windows_above`` (200,000 code points by default) is shown as context
windows whatever ``source_text`` says, so its page and the search index stay small however long
the text is; the verify button still checks each excerpt against the whole published record
(with WebCrypto, and with the built-in SHA-256 that hashes it a mebibyte at a time). The
benchmark (benchmarks/bench_reader.py) measures the same at 1, 10 and 50 MB.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _browser_helpers import guarded_page, launched_browser, mkdocs_build, promote_one_source, serve, wait_for_state
from _policy import policy_of

from publisher.site.checks.checksite import check_site
from publisher.site.pages.highlight import WINDOWS_ABOVE

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LINE = "Participants were followed for a year; the outcome was measured by assessors blind to arm.\n"
NEEDLE_NEAR = "The primary outcome improved by 9.4 minutes (95% CI 4.7 to 14.1)."
NEEDLE_FAR = "A sentence far from every citation that no page should show."


def _large_wiki(root: Path) -> tuple[Path, str, list[tuple[int, int]]]:
    from _wiki_helpers import make_wiki

    filler = LINE * (1_600_000 // len(LINE))  # about 1.6 MB, eight times windows_above
    half = len(filler) // 2
    text = filler[:half] + NEEDLE_NEAR + "\n" + filler[half:] + NEEDLE_FAR + "\n" + filler + "The end.\n"
    assert len(text) > 8 * WINDOWS_ABOVE
    wiki = make_wiki(root)
    config = wiki / "mkdocs.yml"
    config.write_text(config.read_text(encoding="utf-8").replace("plugins: []", "plugins:\n  - search"))
    start = text.index(NEEDLE_NEAR)
    ranges = [(start, start + len(NEEDLE_NEAR)), (len(text) - 9, len(text) - 1)]
    sid = promote_one_source(
        wiki,
        "large",
        "https://example.org/large-trial",
        text,
        ranges,
        pmid="5151",
        title="A very long trial report",
        question="Does the long trial report its outcome?",
    )
    return wiki, sid, ranges


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str, list[tuple[int, int]], str]]:
    root = tmp_path_factory.mktemp("large")
    wiki, sid, ranges = _large_wiki(root / "wiki")
    mkdocs_build(wiki, root / "site")
    assert check_site(root / "site", wiki, policy=policy_of(wiki)).ok
    with serve(root / "site") as base:
        yield root / "site", sid, ranges, base


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_browser() as b:
        yield b


def test_the_page_and_the_search_index_stay_small(large: tuple[Path, str, list[tuple[int, int]], str]) -> None:
    site, sid, _, _ = large
    record = site / "sources" / sid / "record.json"
    page = (site / "sources" / sid / "index.html").read_text(encoding="utf-8")
    assert record.stat().st_size > 3_000_000  # the record stays whole: verification needs every character
    assert len(page.encode("utf-8")) < 100_000
    assert "evidence-window" in page and "evidence-snapshot" not in page
    assert NEEDLE_NEAR in page and NEEDLE_FAR not in page
    index = (site / "search" / "search_index.json").read_text(encoding="utf-8")
    assert len(index.encode("utf-8")) < 100_000 and NEEDLE_FAR not in index


@pytest.mark.parametrize("fallback", [False, True], ids=["webcrypto", "built-in sha256"])
def test_the_page_is_quick_and_its_excerpts_verify(
    large: tuple[Path, str, list[tuple[int, int]], str], browser: Any, fallback: bool
) -> None:
    _, sid, ranges, base = large
    start, end = ranges[0]
    button = f'button.evidence-verify[data-kind="highlight"][data-start="{start}"][data-end="{end}"]'
    with guarded_page(browser) as guard:
        page = guard.page
        if fallback:
            page.add_init_script("Object.defineProperty(window, 'isSecureContext', {value: false});")
        page.goto(f"{base}sources/{sid}/#span-{start}-{end}")
        page.wait_for_selector(button, state="attached")
        # Quick by structure, not by a stopwatch (benchmarks/bench_reader.py measures it): the page
        # opens on its small window and never loads the multi-megabyte record until a reader asks.
        record = f"{base}sources/{sid}/record.json"
        assert not [url for url in guard.requests if url.startswith(f"{base}sources/{sid}/record")]
        page.click(button)
        assert wait_for_state(page, button) == "verified", page.get_attribute(button, "data-detail")
        assert guard.requests.count(record) == 1  # fetched once, on the reader's click
        how = page.get_attribute(button, "data-detail") or ""
        assert ("built-in SHA-256" in how) == fallback
        guard.check_clean()
