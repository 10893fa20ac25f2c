"""A ``site_dir`` that contains, equals or lies inside an input of the build (docs, concepts,
runs, the PDF library, keys) is refused before anything is read or written, under the hook, the
plugin form and ProperDocs alike: publication replaces the site folder whole and would delete the
files the build had just read."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from _policy import policy_of
from _wiki_helpers import build_findings, build_wiki, leftovers, logged_findings, make_wiki, sample_run, tree_digest
from mkdocs.exceptions import Abort, PluginError

from publisher.kernel.reasons import Reason
from publisher.wiki.promote import promote

BIN = Path(sys.executable).parent

OVERLAPS = ["concepts", "runs", "docs", "docs/site", "concepts/site", ".", "assets", "assets/papers/site", "keys"]
MKDOCS_REFUSES = {"docs", "docs/site", "."}
"""Overlaps with ``docs_dir`` that MkDocs' own configuration check refuses before any plugin runs."""
REFUSED = (Reason.SCHEMA_ERROR, "C-CONFIG", "site_dir", "mkdocs.yml")
"""Our refusal: reason code, check, field and file of each finding."""


def _wiki(tmp_path: Path) -> Path:
    wiki = make_wiki(tmp_path / "wiki")
    rb = sample_run(wiki)
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    (wiki / "assets" / "papers").mkdir(parents=True, exist_ok=True)
    (wiki / "keys").mkdir(exist_ok=True)
    return wiki


def _set_site_dir(wiki: Path, site_dir: str) -> None:
    yml = wiki / "mkdocs.yml"
    yml.write_text(yml.read_text(encoding="utf-8") + f"site_dir: {site_dir}\n", encoding="utf-8")


@pytest.mark.parametrize("site_dir", OVERLAPS)
def test_a_site_dir_over_an_input_is_refused_before_anything_is_read(
    tmp_path: Path, site_dir: str, monkeypatch: pytest.MonkeyPatch, mkdocs_log: list[str]
) -> None:
    wiki = _wiki(tmp_path)
    _set_site_dir(wiki, site_dir)
    before = tree_digest(wiki)
    import publisher.site.lifecycle.hook as hook

    def no_check(*args: object, **kwargs: object) -> None:
        raise AssertionError("the wiki was read before site_dir was judged")

    monkeypatch.setattr(hook, "check_wiki", no_check)
    with pytest.raises((PluginError, Abort)) as refused:
        build_wiki(wiki)
    if site_dir in MKDOCS_REFUSES:  # MkDocs' own configuration check, before any plugin
        assert any(line.startswith("Config value 'site_dir'") for line in mkdocs_log), mkdocs_log
    else:
        assert [(f.reason, f.check, f.field, f.file) for f in build_findings(refused.value)] == [REFUSED]
    assert tree_digest(wiki) == before and leftovers(wiki) == []


def test_a_symlinked_site_dir_into_concepts_is_refused(tmp_path: Path) -> None:
    wiki = _wiki(tmp_path)
    (wiki / "out").symlink_to(wiki / "concepts")
    _set_site_dir(wiki, "out/site")
    before = tree_digest(wiki / "concepts")
    with pytest.raises((PluginError, Abort)) as refused:
        build_wiki(wiki)
    assert [(f.reason, f.check, f.field, f.file) for f in build_findings(refused.value)] == [REFUSED]
    assert tree_digest(wiki / "concepts") == before


def test_a_site_dir_beside_the_inputs_builds(tmp_path: Path) -> None:
    wiki = _wiki(tmp_path)
    _set_site_dir(wiki, "public/site")
    build_wiki(wiki)
    assert (wiki / "public" / "site" / "evidence-manifest.json").is_file()


@pytest.mark.slow
@pytest.mark.parametrize("tool", ["mkdocs", "properdocs"])
@pytest.mark.parametrize("wiring", ["hook", "plugin"])
def test_every_wiring_refuses_the_site_dir_over_concepts(tmp_path: Path, tool: str, wiring: str) -> None:
    wiki = _wiki(tmp_path)
    if wiring == "plugin":
        yml = (wiki / "mkdocs.yml").read_text(encoding="utf-8")
        yml = yml.replace("hooks:\n  - hooks/evidence.py\n", "").replace("plugins: []\n", "plugins:\n  - evidence\n")
        (wiki / "mkdocs.yml").write_text(yml, encoding="utf-8")
        (wiki / "hooks" / "evidence.py").unlink()
    _set_site_dir(wiki, "concepts")
    before = tree_digest(wiki)
    exe = shutil.which(tool, path=str(BIN))
    assert exe is not None, f"{tool} is not installed beside this Python"
    done = subprocess.run(
        [exe, "build", "-v", "-f", "mkdocs.yml"], cwd=wiki, capture_output=True, text=True, timeout=600
    )
    assert done.returncode != 0, done.stderr
    assert [(f.reason, f.check, f.field, f.file) for f in logged_findings(done.stderr)] == [REFUSED], done.stderr
    assert tree_digest(wiki) == before and leftovers(wiki) == []
