"""Page building blocks: excerpt escaping, overlapping highlights, the scanner, publication, ``new``."""

from __future__ import annotations

import html
import os
from html.parser import HTMLParser
from pathlib import Path

import pytest
from _policy import policy_of
from _wiki_helpers import HOOK_SHIM, build_wiki, leftovers
from hypothesis import given, settings
from hypothesis import strategies as st

from publisher.kernel.errors import UsageError
from publisher.site.checks.checksite import check_site
from publisher.site.checks.manifest import MANIFEST_NAME
from publisher.site.checks.scan import scan_page
from publisher.site.lifecycle import publish
from publisher.site.pages.highlight import snapshot_html
from publisher.site.pages.markup import excerpt_html
from publisher.site.scaffold import new_wiki

SID = "src-" + "c" * 64

_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=200)


@given(_TEXT)
def test_excerpt_element_round_trips_through_html_parsing(text: str) -> None:
    element = excerpt_html(SID, 1, 1 + len(text), text)
    (found,) = scan_page(f"<p>{element}</p>").excerpts
    assert found.text == text and not found.nested
    assert (found.source_id, found.start, found.end) == (SID, 1, 1 + len(text))
    inner = element[element.index(">") + 1 : element.rindex("<")]
    assert "<" not in inner and html.unescape(inner) == text


class _Balance(HTMLParser):
    """Fails on any end tag that does not close the innermost open element."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack.pop() == tag


@settings(max_examples=200)
@given(
    st.text(alphabet="ab<&\r\n\"' c", min_size=1, max_size=60).flatmap(
        lambda t: st.tuples(
            st.just(t),
            st.sets(
                st.tuples(st.integers(0, len(t) - 1), st.integers(1, len(t))).filter(lambda se: se[0] < se[1]),
                max_size=6,
            ),
        )
    )
)
def test_overlapping_highlights_are_valid_html_and_keep_the_text(case: tuple[str, set[tuple[int, int]]]) -> None:
    text, spans = case
    page = snapshot_html(SID, text, spans)
    balance = _Balance()
    balance.feed(page)
    assert balance.stack == []
    (block,) = scan_page(page).snapshots
    assert block.text == text
    for start, end, opened, closed in block.marks:
        assert (start, end) == (opened, closed)
    for start, end in spans:
        assert page.count(f'id="span-{start}-{end}"') == 1
    covered = set()
    for start, end, _, _ in block.marks:
        covered.update(range(start, end))  # type: ignore[arg-type]
    assert covered == {i for s, e in spans for i in range(s, e)}


def test_scan_flags_malformed_and_nested_elements() -> None:
    page = (
        '<span class="evidence-excerpt">no offsets</span>'
        f'<span data-source-id="{SID}" data-start="1" data-end="4">a<b>b</b>c</span>'
    )
    scan = scan_page(page)
    assert len(scan.malformed) == 1  # the excerpt class without offsets is not an excerpt at all
    assert [e.nested for e in scan.excerpts] == [True]


def test_publish_swaps_and_removes_old(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "old.html").write_text("old", encoding="utf-8")
    staging = publish.new_staging(site)
    (staging / "new.html").write_text("new", encoding="utf-8")
    publish.publish(staging, site)
    assert sorted(p.name for p in site.iterdir()) == ["new.html"]
    assert leftovers(tmp_path) == []
    staging = publish.new_staging(tmp_path / "fresh")
    publish.publish(staging, tmp_path / "fresh")
    assert (tmp_path / "fresh").is_dir() and leftovers(tmp_path) == []


def test_sweep_keeps_live_and_foreign_folders(tmp_path: Path) -> None:
    site = tmp_path / "site"
    mine = publish.new_staging(site)
    unrelated = tmp_path / ".site-staging-notes"
    unrelated.mkdir()
    publish.sweep_stale(site)
    assert mine.is_dir() and unrelated.is_dir()
    assert str(os.getpid()) in mine.name


def test_new_wiki_builds_and_checks(tmp_path: Path) -> None:
    wiki = tmp_path / "fresh"
    written = new_wiki(wiki)
    assert "mkdocs.yml" in written and (wiki / "docs" / "index.md").is_file()
    for folder in ("concepts", "runs", "assets/papers"):
        assert (wiki / folder).is_dir()
    assert (wiki / "hooks" / "evidence.py").read_bytes() == HOOK_SHIM.read_bytes()
    build_wiki(wiki, strict=True)
    assert (wiki / "site" / MANIFEST_NAME).is_file()
    assert (wiki / "site" / "concepts" / "index.html").is_file()
    assert check_site(wiki / "site", wiki, policy=policy_of(wiki)).ok
    assert leftovers(wiki) == []


def test_new_refuses_an_existing_wiki(tmp_path: Path) -> None:
    wiki = tmp_path / "w"
    new_wiki(wiki)
    before = (wiki / "mkdocs.yml").read_bytes()
    with pytest.raises(UsageError):
        new_wiki(wiki)
    assert (wiki / "mkdocs.yml").read_bytes() == before
    other = tmp_path / "other"
    (other / "docs").mkdir(parents=True)
    (other / "docs" / "index.md").write_text("mine", encoding="utf-8")
    with pytest.raises(UsageError):
        new_wiki(other)
    assert (other / "docs" / "index.md").read_text(encoding="utf-8") == "mine"
    assert not (other / "mkdocs.yml").exists()


def test_cli_new(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = cli("new", str(tmp_path / "w"), "--title", "My wiki", "--json")
    assert result.status == 0 and result.json()["ok"]
    assert 'site_name: "My wiki"' in (tmp_path / "w" / "mkdocs.yml").read_text(encoding="utf-8")
    result = cli("new", str(tmp_path / "w"))
    assert result.status == 2 and len(result.err_lines) == 1
