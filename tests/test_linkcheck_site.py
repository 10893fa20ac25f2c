"""Link check of the built example wiki: no broken link, no missing anchor, nothing fetched off-site.

Every ``href``/``src`` of every built page that points inside the site must name a file that
exists, and every ``#fragment`` must be an ``id`` (or ``<a name>``) in the page it points to: the
footnote links of concept pages land on ``span-<start>-<end>`` highlights, so a drifted offset
shows up here as a missing anchor. Scripts, styles, images and fonts must come from the site itself.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from _browser_helpers import copy_example_wiki, mkdocs_build

from publisher.kernel.reasons import Reason

_LINK_ATTRS = {"a": "href", "link": "href", "script": "src", "img": "src", "iframe": "src", "source": "src"}
_ASSETS = frozenset({"link", "script", "img", "iframe", "source"})


@dataclass
class _Page:
    ids: set[str] = field(default_factory=set)
    links: list[tuple[str, str]] = field(default_factory=list)  # (tag, url)


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = _Page()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if values.get("id"):
            self.page.ids.add(str(values["id"]))
        if tag == "a" and values.get("name"):
            self.page.ids.add(str(values["name"]))
        attr = _LINK_ATTRS.get(tag)
        if attr and values.get(attr) is not None:
            if tag == "link" and (values.get("rel") or "") in ("canonical",):
                return
            self.page.links.append((tag, str(values[attr])))


def parse_site(site: Path) -> dict[str, _Page]:
    """Every HTML page of a built site by its path relative to the site root."""
    pages = {}
    for path in sorted(site.rglob("*.html")):
        parser = _Links()
        parser.feed(path.read_text(encoding="utf-8"))
        parser.close()
        pages[path.relative_to(site).as_posix()] = parser.page
    return pages


def _target(site: Path, page: str, url: str, *, from_disk: bool = False) -> tuple[str | None, str]:
    """(file relative to the site root, or None when it does not exist; fragment).

    ``from_disk``: the site is read as ``file://``, where a link to a folder shows a directory
    listing rather than its ``index.html``; such a link names no page.
    """
    parts = urlsplit(url)
    path = unquote(parts.path)
    if not path:
        return page, parts.fragment
    relative = path.lstrip("/") if path.startswith("/") else posixpath.join(posixpath.dirname(page), path)
    joined = posixpath.normpath(relative)
    if joined.startswith("../") or joined == "..":
        return None, parts.fragment
    candidate = site / joined
    if candidate.is_dir():
        if from_disk:
            return None, parts.fragment
        candidate = candidate / "index.html"
    if not candidate.is_file():
        return None, parts.fragment
    return candidate.relative_to(site).as_posix(), parts.fragment


def check_links(site: Path, *, from_disk: bool = False) -> Iterator[str]:
    """Every broken local link, missing anchor and off-site asset, one line each."""
    pages = parse_site(site)
    for page, info in pages.items():
        for tag, url in info.links:
            parts = urlsplit(url)
            if parts.scheme in ("mailto", "javascript", "data", "tel"):
                continue
            if parts.scheme or parts.netloc:
                if tag in _ASSETS:
                    yield f"{page}: <{tag}> loads {url} from outside the site"
                continue
            target, fragment = _target(site, page, url, from_disk=from_disk)
            if target is None:
                yield f"{page}: <{tag}> {url} names no file of the site"
                continue
            if fragment and target.endswith(".html") and unquote(fragment) not in pages[target].ids:
                yield f"{page}: <{tag}> {url}: no id {fragment!r} in {target}"


@pytest.fixture(scope="module")
def example_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    wiki = copy_example_wiki(tmp_path_factory.mktemp("linkcheck") / "wiki")
    site = wiki.parent / "built"
    mkdocs_build(wiki, site)
    return site


def test_example_site_has_no_broken_link_or_anchor(example_site: Path) -> None:
    assert list(check_links(example_site)) == []


def test_example_site_reads_from_disk(example_site: Path) -> None:
    """``extra: evidence: offline: true``: every link names a file (none a folder that a browser
    reading from disk would list), each source page has its record as a script, and search has
    its index and worker as scripts."""
    assert list(check_links(example_site, from_disk=True)) == []
    for record in example_site.glob("sources/src-*/record.json"):
        assert (record.parent / "record.js").is_file()
    assert (example_site / "search" / "search_index.js").is_file()
    assert (example_site / "assets" / "publisher" / "search-worker.js").is_file()


def test_checker_refuses_folder_links_from_disk(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "index.html").write_text("<p>a</p>", encoding="utf-8")
    (tmp_path / "index.html").write_text('<a href="a/">a</a> <a href="a/index.html">a</a>', encoding="utf-8")
    assert list(check_links(tmp_path)) == []
    assert list(check_links(tmp_path, from_disk=True)) == ["index.html: <a> a/ names no file of the site"]


def test_every_footnote_lands_on_a_highlight(example_site: Path) -> None:
    pages = parse_site(example_site)
    landed = 0
    for page, info in pages.items():
        if not page.startswith("concepts/"):
            continue
        for _, url in info.links:
            if "#span-" not in url:
                continue
            target, fragment = _target(example_site, page, url)
            assert target is not None and target.startswith("sources/src-"), url
            assert fragment in pages[target].ids, url
            landed += 1
    assert landed > 0, "no concept footnote links to a source highlight"


def test_checker_finds_a_missing_anchor_and_a_missing_file(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "index.html").write_text(
        '<p id="here"><a href="../b/#there">b</a> <a href="../c/">c</a> <a href="#here">self</a>'
        '<script src="https://cdn.example.org/x.js"></script> <a href="https://example.org/">out</a>',
        encoding="utf-8",
    )
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "index.html").write_text('<p id="elsewhere">b</p>', encoding="utf-8")
    problems = list(check_links(tmp_path))
    assert len(problems) == 3
    assert any("'there'" in p for p in problems)
    assert any("../c/" in p for p in problems)
    assert any("cdn.example.org" in p for p in problems)


def test_every_source_page_publishes_its_record_byte_for_byte(example_site: Path) -> None:
    from publisher.kernel.store import SnapshotStore

    wiki = example_site.parent / "wiki"
    stored = {p.stem: p for p in wiki.glob("runs/*/sources/src-*.json")}
    pages = sorted(example_site.glob("sources/src-*.html"))
    assert pages
    for page in pages:
        sid = page.stem
        published = page.parent / sid / "record.json"
        assert published.read_bytes() == stored[sid].read_bytes()
        assert SnapshotStore(stored[sid].parent).read(sid).source_id == sid


def test_site_loads_the_reader_assets_from_itself(example_site: Path) -> None:
    for name in ("verify.js", "reader.css", "evidence.css"):
        assert (example_site / "assets" / "publisher" / name).is_file()
    html = (example_site / "concepts" / "index.html").read_text(encoding="utf-8")
    assert 'src="../assets/publisher/verify.js"' in html
    assert 'src="../assets/publisher/offline.js"' in html
    assert "fonts.googleapis.com" not in html


@pytest.mark.parametrize(
    "extra",
    [
        "extra:\n  evidence:\n    source_text: excerpts\n",
        "extra:\n  evidence:\n    context: -1\n",
        "extra:\n  evidence:\n    context: lots\n",
        "extra:\n  evidence: windows\n",
    ],
)
def test_bad_reader_options_fail_the_build_before_anything_is_written(tmp_path: Path, extra: str) -> None:
    import subprocess
    import sys

    from _wiki_helpers import leftovers, logged_findings, make_wiki

    wiki = make_wiki(tmp_path / "wiki", extra=extra)
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-v", "-f", str(wiki / "mkdocs.yml")],
        cwd=wiki,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode != 0
    found = [(f.reason, f.check, f.file) for f in logged_findings(done.stderr)]
    assert found == [(Reason.SCHEMA_ERROR, "C-CONFIG", "mkdocs.yml")], done.stderr
    assert not (wiki / "site").exists()
    assert leftovers(wiki) == []


def test_a_published_record_that_no_longer_verifies_is_refused(example_site: Path, tmp_path: Path) -> None:
    from publisher.kernel.errors import IntegrityError
    from publisher.kernel.reasons import Reason
    from publisher.site.checks.manifest import check_record_copy

    record = sorted(example_site.glob("sources/src-*/record.json"))[0]
    sid = record.parent.name
    good = record.read_bytes()
    copy = tmp_path / "record.json"
    copy.write_bytes(good)
    check_record_copy(copy, sid)
    at = good.index(b'"text":"') + 20
    copy.write_bytes(good[:at] + (b"X" if good[at : at + 1] != b"X" else b"Y") + good[at + 1 :])
    with pytest.raises(IntegrityError) as caught:
        check_record_copy(copy, sid)
    assert caught.value.reason == Reason.SNAPSHOT_HASH_MISMATCH
