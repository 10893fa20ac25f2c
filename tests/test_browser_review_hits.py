"""A not_supported claim on its concept page, in a real Chromium: the review's terms with their hit
counts, each hit shown in its sentence (the term marked) and linked to the source page, and the
adjudication that decided it (CONTRACT section 14)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _browser_helpers import guarded_page, launched_browser, mkdocs_build, serve
from _claims_helpers import CONCEPT, claims_wiki
from test_claims_adjudicate import CLAIM, a_word, adjudicate, review
from test_claims_assess import assess

pytestmark = [pytest.mark.browser]


def test_the_reviews_hits_are_shown_in_their_sentences_with_their_adjudications(
    cli: Any, tmp_path: Path, corpus_dir: Path
) -> None:
    cw = claims_wiki(tmp_path / "wiki", corpus_dir)
    word = a_word(cw)
    done = review(cli, cw, word, "zzzunfoundzzz")
    rid, hits = done["review_id"], done["record"]["hits"]
    for number in range(1, len(hits) + 1):
        assert adjudicate(cli, cw, rid, number).status == 0
    assert assess(cli, cw, "ns1", CLAIM, "NS", "--review", rid).status == 0
    site = tmp_path / "site"
    mkdocs_build(cw.wiki, site)
    with launched_browser() as browser, serve(site) as base, guarded_page(browser) as guard:
        page = guard.page
        page.goto(f"{base}concepts/{CONCEPT}/")
        box = page.locator("#review-ns1")
        rows = box.locator("table.pub-review-terms tbody tr")
        assert rows.count() == 2
        assert rows.nth(0).locator("td").all_inner_texts() == [word, str(len(hits))]
        assert rows.nth(1).locator("td").all_inner_texts() == ["zzzunfoundzzz", "0"]
        shown = box.locator("li.pub-review-hit")
        assert shown.count() == len(hits)
        for i, hit in enumerate(hits):
            item = shown.nth(i)
            assert item.get_attribute("data-hit") == str(i + 1)
            assert f"{hit['start']}–{hit['end']}" in item.locator("blockquote a").get_attribute("title")
            assert item.locator("blockquote").inner_text().split() == hit["sentence"]["text"].split()
            assert item.locator("mark").inner_text() == cw.a_text[hit["start"] : hit["end"]]
            assert "the sentence names the term, not the claim" in item.locator("p").inner_text()  # its adjudication
        # Each sentence links to the source page of the reviewed snapshot.
        link = shown.first.locator("blockquote a")
        link.click()
        page.wait_for_load_state()
        assert f"sources/{cw.a_full}/" in page.url
        assert page.locator("pre").first.is_visible()
        guard.check_clean()
