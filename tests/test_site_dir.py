"""A site folder that deletes nothing it did not make.

Publication replaces the site folder whole, so a build publishes only into a ``site_dir`` that is
absent, holds nothing but dot-entries, or is a site an evidence build made (its manifest there);
any other folder is refused (``C-CONFIG``, field ``site_dir``) before anything is read or written,
and it stays exactly as it was. Entries of the site folder whose names start with a dot are kept
across builds, as MkDocs keeps them, and are no part of the manifest or of ``check-site``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from _policy import policy_of
from _wiki_helpers import build_wiki, leftovers, make_wiki, refused_build, tree_digest

from publisher.runs import init_run
from publisher.site.checks.checksite import check_site
from publisher.site.checks.manifest import MANIFEST_NAME
from publisher.site.lifecycle import publish


def _git_folder(at: Path) -> Path:
    (at / "objects" / "ab").mkdir(parents=True)
    (at / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    (at / "config").write_text("[core]\n\tbare = false\n", encoding="utf-8")
    (at / "objects" / "ab" / "cdef").write_bytes(b"\x78\x01object")
    return at


def _key_folder(at: Path) -> Path:
    at.mkdir(parents=True)
    (at / "signing.key").write_text("-----BEGIN PRIVATE KEY-----\nsecret\n-----END PRIVATE KEY-----\n")
    (at / "signing.pub").write_text("-----BEGIN PUBLIC KEY-----\npublic\n-----END PUBLIC KEY-----\n")
    return at


def _run_folder(at: Path) -> Path:
    init_run(at, "elsewhere")
    return at


def _any_folder(at: Path) -> Path:
    at.mkdir(parents=True)
    (at / "notes.md").write_text("my notes\n", encoding="utf-8")
    (at / ".hidden").write_text("hidden\n", encoding="utf-8")
    return at


def _fake_manifest(at: Path) -> Path:
    at.mkdir(parents=True)
    (at / "notes.md").write_text("my notes\n", encoding="utf-8")
    (at / MANIFEST_NAME).write_text('"not a manifest"', encoding="utf-8")
    return at


def _linked_manifest(at: Path) -> Path:
    at.mkdir(parents=True)
    (at / "notes.md").write_text("my notes\n", encoding="utf-8")
    real = at.parent / "real-manifest.json"
    real.write_text(json.dumps({"schema_version": 2, "generator": "x", "files": []}), encoding="utf-8")
    (at / MANIFEST_NAME).symlink_to(real)
    return at


DANGEROUS = {
    "run": _run_folder,
    "git": _git_folder,
    "keys": _key_folder,
    "notes": _any_folder,
    "fake-manifest": _fake_manifest,
    "linked-manifest": _linked_manifest,
}


@pytest.mark.parametrize("kind", sorted(DANGEROUS))
def test_a_folder_no_build_made_is_refused_and_kept(tmp_path: Path, kind: str) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    target = DANGEROUS[kind](tmp_path / "elsewhere" / kind)
    before = tree_digest(tmp_path / "elsewhere")
    found = refused_build(wiki, site_dir=str(target))
    assert [(f.check, f.field) for f in found] == [("C-CONFIG", "site_dir")]
    assert tree_digest(tmp_path / "elsewhere") == before
    assert leftovers(target.parent, settle=0) == [] and not any(p.name.startswith(".") for p in target.parent.iterdir())


def test_the_wikis_own_git_folder_is_refused(tmp_path: Path) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    _git_folder(wiki / ".git")
    before = tree_digest(wiki)
    found = refused_build(wiki, site_dir=str(wiki / ".git"))
    assert [(f.check, f.field) for f in found] == [("C-CONFIG", "site_dir")]
    assert tree_digest(wiki) == before


def test_a_file_as_site_dir_is_refused(tmp_path: Path) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    (tmp_path / "site").write_text("a file\n", encoding="utf-8")
    found = refused_build(wiki, site_dir=str(tmp_path / "site"))
    assert [(f.check, f.field) for f in found] == [("C-CONFIG", "site_dir")]
    assert (tmp_path / "site").read_text(encoding="utf-8") == "a file\n"


@pytest.mark.parametrize("method", ["exchange", "link"])
def test_dot_entries_are_kept_across_builds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, method: str) -> None:
    monkeypatch.setenv(publish.METHOD_ENV, method)
    wiki = make_wiki(tmp_path / "wiki")
    site = tmp_path / "site"
    _git_folder(site / ".git")  # a gh-pages checkout: only dot-entries, so it may become the site
    (site / ".nojekyll").write_text("", encoding="utf-8")
    if method == "link":  # a real folder cannot become a link in one step: start from a link
        real = tmp_path / ".site-v-000000000000"
        site.rename(real)
        site.symlink_to(real.name, target_is_directory=True)
    kept = {k: v for k, v in tree_digest(site).items() if k.startswith((".git", ".nojekyll"))}
    build_wiki(wiki, site_dir=str(site))
    assert check_site(site, wiki, policy=policy_of(wiki)).ok
    (site / ".well-known").mkdir()
    (site / ".well-known" / "security.txt").write_text("Contact: x\n", encoding="utf-8")
    kept = {k: v for k, v in tree_digest(site).items() if k.startswith((".git", ".nojekyll", ".well-known"))}
    (wiki / "docs" / "index.md").write_text("# Home\n\nChanged.\n", encoding="utf-8")
    build_wiki(wiki, site_dir=str(site))
    after = tree_digest(site)
    assert {k: v for k, v in after.items() if k.startswith((".git", ".nojekyll", ".well-known"))} == kept
    assert "Changed." in (site / "index.html").read_text(encoding="utf-8")
    listed = {e["path"] for e in json.loads((site / MANIFEST_NAME).read_text(encoding="utf-8"))["files"]}
    assert not any(p.startswith(".") for p in listed)
    assert check_site(site, wiki, policy=policy_of(wiki)).ok
    current = [os.readlink(site)] if site.is_symlink() else []
    assert leftovers(tmp_path) == current


def test_a_failed_swap_leaves_the_dot_entries_in_the_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("old", encoding="utf-8")
    (site / ".nojekyll").write_text("", encoding="utf-8")
    staging = publish.new_staging(site)
    (staging / "index.html").write_text("new", encoding="utf-8")
    monkeypatch.setenv(publish.METHOD_ENV, "link")  # a real folder cannot become a link: refused
    with pytest.raises(publish.NotAtomicError):
        publish.publish(staging, site)
    assert sorted(os.listdir(site)) == [".nojekyll", "index.html"]
    assert sorted(os.listdir(staging)) == ["index.html"]
    publish.discard(staging)


def test_a_site_built_before_is_rebuilt_even_with_a_file_added(tmp_path: Path) -> None:
    wiki = make_wiki(tmp_path / "wiki")
    build_wiki(wiki)
    (wiki / "site" / "CNAME").write_text("wiki.example.org\n", encoding="utf-8")
    build_wiki(wiki)  # the manifest says it is a site a build made: the swap may replace it
    assert not (wiki / "site" / "CNAME").exists()
    assert check_site(wiki / "site", wiki, policy=policy_of(wiki)).ok
