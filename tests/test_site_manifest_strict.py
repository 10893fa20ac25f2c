"""A strict manifest: it names each file once (and is strict JSON), ``check-site`` reports
extra folders as well as extra files, and every published file is read through the kernel's
fail-closed reader, so a FIFO, a link or an oversized file is reported, never read or waited on."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from _policy import policy_of
from _wiki_helpers import build_wiki, make_wiki, sample_run

import publisher.site.checks.checksite as checksite
from publisher.kernel import _fs
from publisher.site.checks.checksite import check_site
from publisher.site.checks.manifest import MANIFEST_NAME
from publisher.wiki.promote import promote


@pytest.fixture
def wiki(tmp_path: Path) -> Path:
    root = make_wiki(tmp_path / "wiki")
    promote(sample_run(root).run.path, root, policy=policy_of(root))
    build_wiki(root)
    return root


@pytest.fixture(autouse=True)
def _no_stall() -> Iterator[None]:
    """A check that waits on a FIFO fails the test instead of hanging it."""

    def stalled(signum: int, frame: object) -> None:
        raise TimeoutError("check-site stalled")

    old = signal.signal(signal.SIGALRM, stalled)
    signal.alarm(120)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _findings(wiki: Path) -> list[tuple[str, str]]:
    return [(f.code, f.file) for f in check_site(wiki / "site", wiki, policy=policy_of(wiki)).findings]


def _edit_manifest(wiki: Path, change: object) -> None:
    path = wiki / "site" / MANIFEST_NAME
    doc = json.loads(path.read_text(encoding="utf-8"))
    change(doc)  # type: ignore[operator]
    path.write_text(json.dumps(doc), encoding="utf-8")


def test_a_path_listed_twice_fails(wiki: Path) -> None:
    def twice(doc: dict) -> None:  # type: ignore[type-arg]
        first = dict(doc["files"][0])
        doc["files"].append({**first, "sha256": "0" * 64})

    _edit_manifest(wiki, twice)
    assert ("C-SITE-FILE", json.loads((wiki / "site" / MANIFEST_NAME).read_text())["files"][0]["path"]) in _findings(
        wiki
    )


def test_the_same_path_listed_twice_with_equal_entries_fails_too(wiki: Path) -> None:
    _edit_manifest(wiki, lambda doc: doc["files"].append(dict(doc["files"][-1])))
    assert [c for c, _ in _findings(wiki)] == ["C-SITE-FILE"]


def test_a_record_listed_twice_fails(wiki: Path) -> None:
    _edit_manifest(wiki, lambda doc: doc["records"].append(dict(doc["records"][0])))
    assert ("C-SITE-FILE", MANIFEST_NAME) in _findings(wiki)


def test_a_manifest_with_a_duplicate_key_is_refused(wiki: Path) -> None:
    path = wiki / "site" / MANIFEST_NAME
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('"files": [', '"files": [], "files": [', 1), encoding="utf-8")
    assert [c for c, _ in _findings(wiki)] == ["SCHEMA_ERROR"]


@pytest.mark.parametrize("folder", ["extra", "sources/extra", "a/b/c"])
def test_an_empty_folder_added_after_the_build_fails(wiki: Path, folder: str) -> None:
    assert check_site(wiki / "site", wiki, policy=policy_of(wiki)).ok
    (wiki / "site" / folder).mkdir(parents=True)
    found = _findings(wiki)
    assert ("C-SITE-FILE", folder + "/") in found, found


def test_a_fifo_in_place_of_a_page_is_reported_without_waiting(wiki: Path) -> None:
    page = wiki / "site" / "index.html"
    page.unlink()
    os.mkfifo(page)
    assert ("C-SITE-FILE", "index.html") in _findings(wiki)


def test_a_fifo_in_place_of_a_published_record_is_reported_without_waiting(wiki: Path) -> None:
    (record,) = list((wiki / "site" / "sources").glob("*/record.json"))[:1]
    record.unlink()
    os.mkfifo(record)
    codes = {c for c, _ in _findings(wiki)}
    assert {"C-SITE-FILE", "SNAPSHOT_HASH_MISMATCH"} <= codes


def test_a_link_in_place_of_a_published_record_is_reported(wiki: Path) -> None:
    (record,) = list((wiki / "site" / "sources").glob("*/record.json"))[:1]
    data = record.read_bytes()
    record.unlink()
    (wiki / "elsewhere.json").write_bytes(data)
    record.symlink_to(wiki / "elsewhere.json")
    assert "SNAPSHOT_HASH_MISMATCH" in {c for c, _ in _findings(wiki)}


def test_an_oversized_file_is_refused_unread(wiki: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = wiki / "site"
    largest = max(p.stat().st_size for p in site.rglob("*") if p.is_file())
    (site / "big.bin").write_bytes(b"x" * (largest + 1))
    monkeypatch.setattr(checksite, "SITE_FILE_LIMIT", largest)
    outcome = check_site(site, wiki, policy=policy_of(wiki))
    assert [(f.code, f.file) for f in outcome.findings] == [("C-SITE-FILE", "big.bin")]
    files = sum(1 for p in site.rglob("*") if p.is_file() and p.name != MANIFEST_NAME)
    assert outcome.files == files - 1  # every file read but the oversized one


def test_the_reader_refuses_a_file_past_its_limit(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 10)
    assert _fs.read_regular(path, limit=10) == b"x" * 10
    with pytest.raises(_fs.FileTooLargeError):
        _fs.read_regular(path, limit=9)
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(_fs.NotRegularFileError):
        _fs.read_regular(tmp_path / "fifo", limit=9)


def test_the_site_tree_lists_files_folders_and_everything_else_without_following_links(tmp_path: Path) -> None:
    from publisher.site.checks.manifest import site_tree

    site = tmp_path / "site"
    (site / "a" / "b").mkdir(parents=True)
    (site / "a" / "b" / "page.html").write_text("x", encoding="utf-8")
    (site / "top.css").write_text("x", encoding="utf-8")
    (site / MANIFEST_NAME).write_text("{}", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("x", encoding="utf-8")
    (site / "a" / "linked").symlink_to(outside, target_is_directory=True)
    (site / "file-link").symlink_to(site / "top.css")
    os.mkfifo(site / "a" / "pipe")
    files, odd, folders = site_tree(site)
    assert files == ["a/b/page.html", "top.css"]  # the manifest itself left out
    assert odd == ["a/linked", "a/pipe", "file-link"]
    assert folders == ["a", "a/b"]


_HOSTILE_ENTRIES = [
    ("excerpts", 0, "source_id", ["src"]),
    ("excerpts", 0, "start", {}),
    ("excerpts", 0, "end", "46"),
    ("excerpts", 0, "start", True),
    ("snapshots", 0, "source_id", {"a": 1}),
    ("records", 0, "sha256", None),
    ("files", 0, "size", True),
    ("files", 0, "size", -1),
    ("files", 0, "unknown", 1),
    ("proofs", 0, "path", [1]),
    ("proofs", 0, "start", 1.5),
]


@pytest.mark.parametrize(("section", "index", "key", "value"), _HOSTILE_ENTRIES)
def test_a_manifest_entry_of_the_wrong_shape_is_one_schema_finding(
    wiki: Path, section: str, index: int, key: str, value: object
) -> None:
    """Any value of the wrong type in any entry (a list where a source id goes, a flag for a size,
    a key the build never writes) makes the manifest malformed: one SCHEMA_ERROR, never an
    internal error or a size of ``true`` taken for 1."""
    _edit_manifest(wiki, lambda doc: doc[section][index].update({key: value}))
    findings = check_site(wiki / "site", wiki, policy=policy_of(wiki)).findings
    assert [(f.code, f.file) for f in findings] == [("SCHEMA_ERROR", MANIFEST_NAME)], findings


@pytest.mark.parametrize("section", ["excerpts", "snapshots", "windows", "records", "files", "proofs"])
def test_a_manifest_section_that_is_not_a_list_of_entries_is_a_schema_finding(wiki: Path, section: str) -> None:
    _edit_manifest(wiki, lambda doc: doc.update({section: [1]}))
    assert _findings(wiki) == [("SCHEMA_ERROR", MANIFEST_NAME)]


def test_a_malformed_manifest_is_exit_1_on_the_command_line(wiki: Path, cli) -> None:  # type: ignore[no-untyped-def]
    _edit_manifest(wiki, lambda doc: doc["windows"].append({"page": "index.html", "source_id": [1]}))
    result = cli("check-site", wiki / "site", "--wiki", wiki, "--json")
    assert result.status == 1, result.err
    assert [f["code"] for f in result.json()["findings"]] == ["SCHEMA_ERROR"]
    assert "Traceback" not in result.err and "internal error" not in result.err
