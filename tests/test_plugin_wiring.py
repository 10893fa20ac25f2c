"""One implementation behind ``plugins: - evidence`` and ``hooks/evidence.py``, under MkDocs and
under ProperDocs (the maintained MkDocs 1.x fork, installed beside MkDocs by the test extra)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from _wiki_helpers import leftovers, tree_digest
from test_example_wiki import _copy_wiki

from publisher.site.checks.manifest import MANIFEST_NAME

BIN = Path(sys.executable).parent


def _run(tool: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    exe = BIN / tool
    if not exe.exists():
        pytest.fail(f"{tool} is not installed beside this Python; the test extra installs it")
    return subprocess.run([str(exe), *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=600)


def _as_plugin(wiki: Path) -> None:
    """Wire the evidence build as a plugin by name and drop the hook file."""
    yml = (wiki / "mkdocs.yml").read_text(encoding="utf-8")
    assert "hooks:\n  - hooks/evidence.py\n" in yml and "plugins:\n  - search\n" in yml
    yml = yml.replace("hooks:\n  - hooks/evidence.py\n", "").replace(
        "plugins:\n  - search\n", "plugins:\n  - search\n  - evidence\n"
    )
    (wiki / "mkdocs.yml").write_text(yml, encoding="utf-8")
    (wiki / "hooks" / "evidence.py").unlink()


_CLOCK = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def _pages(site: Path) -> dict[str, bytes]:
    """Every file of a site but the sitemap, with the report's assembly time masked (both are
    the build's clock, not its content)."""
    return {
        path.relative_to(site).as_posix(): _CLOCK.sub(b"<time>", path.read_bytes())
        for path in sorted(site.rglob("*"))
        if path.is_file() and not path.name.startswith("sitemap.xml")
    }


def _check_site(wiki: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "publisher", "check-site", str(wiki / "site"), "--wiki", str(wiki)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
def test_plugin_and_hook_build_the_same_site(tmp_path: Path) -> None:
    hooked = _copy_wiki(tmp_path / "a")
    plugged = _copy_wiki(tmp_path / "b")
    _as_plugin(plugged)
    for wiki in (hooked, plugged):
        done = _run("mkdocs", "build", "--strict", cwd=wiki)
        assert done.returncode == 0, done.stderr
        assert (wiki / "site" / MANIFEST_NAME).is_file() and leftovers(wiki) == []
    assert _pages(hooked / "site") == _pages(plugged / "site")
    _check_site(plugged)


@pytest.mark.slow
@pytest.mark.parametrize("wiring", ["hook", "plugin"])
def test_properdocs_builds_the_example(tmp_path: Path, wiring: str) -> None:
    wiki = _copy_wiki(tmp_path)
    if wiring == "plugin":
        _as_plugin(wiki)
    done = _run("properdocs", "build", "--strict", "-f", "mkdocs.yml", cwd=wiki)
    assert done.returncode == 0, done.stderr
    assert json.loads((wiki / "site" / MANIFEST_NAME).read_text(encoding="utf-8"))["excerpts"]  # the hook sealed it
    _check_site(wiki)
    before = tree_digest(wiki / "site")

    # a strict-mode warning logged after the evidence build keeps the site under ProperDocs too
    (wiki / "hooks" / "late.py").write_text(
        "import logging\nfrom mkdocs.plugins import event_priority\n\n"
        "@event_priority(-5000)\ndef on_post_build(config):\n"
        "    logging.getLogger('mkdocs.hooks.late').warning('late warning')\n",
        encoding="utf-8",
    )
    yml = (wiki / "mkdocs.yml").read_text(encoding="utf-8")
    yml = (
        yml.replace("hooks:\n", "hooks:\n  - hooks/late.py\n")
        if "hooks:\n" in yml
        else yml + "hooks:\n  - hooks/late.py\n"
    )
    (wiki / "mkdocs.yml").write_text(yml, encoding="utf-8")
    index = wiki / "docs" / "index.md"
    index.write_text(index.read_text(encoding="utf-8") + "\nA second edition.\n", encoding="utf-8")
    done = _run("properdocs", "build", "--strict", "-f", "mkdocs.yml", cwd=wiki)
    assert done.returncode != 0
    assert tree_digest(wiki / "site") == before and leftovers(wiki) == []


def test_entry_point_names_the_plugin() -> None:
    from importlib.metadata import entry_points

    from publisher.cli.plugin import EvidencePlugin
    from publisher.cli.progress import terminal_progress
    from publisher.site.lifecycle.plugin import EvidencePlugin as Build

    (point,) = [p for p in entry_points(group="mkdocs.plugins") if p.name == "evidence"]
    assert point.load() is EvidencePlugin
    # The build draws nothing of its own: the plugin MkDocs loads hands it the terminal's bar.
    assert issubclass(EvidencePlugin, Build) and EvidencePlugin().reporter is terminal_progress
    assert shutil.which("properdocs", path=str(BIN)) is not None
