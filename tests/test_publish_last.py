"""The site is published only once MkDocs has finished the whole build without error.

Every failing build here first changes the wiki's content, so a kept site and a republished one
differ: the previous site must stay byte-identical, with no staging folder left. Failures come
from plugins that run after the evidence build (``on_post_build`` at a lower priority, strict-mode
warnings logged after our checks, ``on_build_error`` and ``on_shutdown`` handlers that raise),
through the real ``mkdocs build`` command and in-process.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _policy import policy_of
from _wiki_helpers import build_wiki, leftovers, make_wiki, sample_run, tree_digest
from mkdocs.exceptions import Abort

from publisher.site.checks.manifest import MANIFEST_NAME
from publisher.wiki.promote import promote

_AFTER_OURS_RAISES = """
from mkdocs.plugins import event_priority

@event_priority(-5000)
def on_post_build(config):
    raise RuntimeError("injected failure after the evidence build")
"""

_AFTER_OURS_WARNS = """
import logging
from mkdocs.plugins import event_priority
log = logging.getLogger("mkdocs.hooks.late")

@event_priority(-5000)
def on_post_build(config):
    log.warning("a late warning that --strict turns into an abort")
"""

_BUILD_ERROR_RAISES = """
from mkdocs.plugins import event_priority

@event_priority(-5000)
def on_post_build(config):
    raise RuntimeError("injected failure after the evidence build")

@event_priority(100)
def on_build_error(error):
    raise RuntimeError("and the error handler fails too, before ours runs")
"""

_SHUTDOWN_RAISES = """
def on_shutdown():
    raise RuntimeError("injected failure at shutdown, before ours")
"""


def _published(tmp_path: Path, extra_hook: str | None = None) -> tuple[Path, dict[str, str]]:
    hooks = {"late.py": extra_hook} if extra_hook else None
    wiki = make_wiki(tmp_path / "wiki", hooks=hooks)
    promote(sample_run(wiki).run.path, wiki, policy=policy_of(wiki))
    if extra_hook:  # publish the first site without the failing plugin
        yml = (wiki / "mkdocs.yml").read_text(encoding="utf-8")
        (wiki / "mkdocs.yml").write_text(yml.replace("  - hooks/late.py\n", ""), encoding="utf-8")
        build_wiki(wiki)
        (wiki / "mkdocs.yml").write_text(yml, encoding="utf-8")
    else:
        build_wiki(wiki)
    assert (wiki / "site" / MANIFEST_NAME).is_file()
    _change_content(wiki)
    return wiki, tree_digest(wiki / "site")


def _change_content(wiki: Path) -> None:
    (wiki / "docs" / "index.md").write_text("# Home\n\nA second edition.\n", encoding="utf-8")


def _mkdocs(wiki: Path, *args: str) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("mkdocs")
    return subprocess.run(
        [str(exe), "build", *args], cwd=wiki, capture_output=True, text=True, check=False, timeout=300
    )


def _kept(wiki: Path, before: dict[str, str]) -> None:
    assert tree_digest(wiki / "site") == before
    assert "A second edition." not in (wiki / "site" / "index.html").read_text(encoding="utf-8")
    assert leftovers(wiki) == []


@pytest.mark.parametrize(
    "hook",
    [_AFTER_OURS_RAISES, _BUILD_ERROR_RAISES],
    ids=["post_build_after_ours", "build_error_handler_raises"],
)
def test_plugin_failing_after_ours_keeps_the_site(tmp_path: Path, hook: str) -> None:
    wiki, before = _published(tmp_path, hook)
    with pytest.raises(RuntimeError, match=r"injected failure|error handler fails"):
        build_wiki(wiki)
    _kept(wiki, before)
    done = _mkdocs(wiki)
    assert done.returncode != 0
    _kept(wiki, before)


def test_late_strict_warning_keeps_the_site_and_plain_build_publishes(tmp_path: Path) -> None:
    wiki, before = _published(tmp_path, _AFTER_OURS_WARNS)
    with pytest.raises(Abort, match="strict"):
        build_wiki(wiki, strict=True)
    _kept(wiki, before)
    done = _mkdocs(wiki, "--strict")
    assert done.returncode == 1 and "strict" in done.stderr
    _kept(wiki, before)
    done = _mkdocs(wiki)  # the same warning without --strict does not stop publication
    assert done.returncode == 0, done.stderr
    assert "A second edition." in (wiki / "site" / "index.html").read_text(encoding="utf-8")
    assert leftovers(wiki) == []


def test_shutdown_handler_failing_before_ours_keeps_the_site(tmp_path: Path) -> None:
    wiki, before = _published(tmp_path, _SHUTDOWN_RAISES)
    done = _mkdocs(wiki)
    assert done.returncode != 0
    assert tree_digest(wiki / "site") == before


def test_strict_build_that_succeeds_publishes_new_content(tmp_path: Path) -> None:
    wiki, before = _published(tmp_path)
    done = _mkdocs(wiki, "--strict")
    assert done.returncode == 0, done.stderr
    assert tree_digest(wiki / "site") != before
    assert "A second edition." in (wiki / "site" / "index.html").read_text(encoding="utf-8")
    assert leftovers(wiki) == []


def test_build_not_yet_shut_down_has_not_published(tmp_path: Path) -> None:
    """Under ``mkdocs build`` the swap waits for ``on_shutdown``: the build function alone publishes nothing."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    wiki, before = _published(tmp_path)
    config = load_config(str(wiki / "mkdocs.yml"))
    config.plugins.on_startup(command="build", dirty=False)
    build(config)
    assert tree_digest(wiki / "site") == before
    assert len(leftovers(wiki)) == 1  # the sealed, fsynced staging folder, ready
    config.plugins.on_shutdown()
    assert "A second edition." in (wiki / "site" / "index.html").read_text(encoding="utf-8")
    assert leftovers(wiki) == []


class _Server:
    """What the evidence plugin uses of MkDocs' LiveReloadServer."""

    def __init__(self, builder: Any) -> None:
        self.builder = builder
        self.watched: list[str] = []

    def watch(self, path: str) -> None:
        self.watched.append(path)


def test_serve_rebuilds_publish_only_after_the_builder_returned(tmp_path: Path) -> None:
    """``mkdocs serve`` as its code runs it: first build, on_serve, then rebuilds through the builder."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    wiki, _ = _published(tmp_path)
    served = tmp_path / "mkdocs_preview"
    served.mkdir()

    def get_config() -> Any:
        return load_config(str(wiki / "mkdocs.yml"), site_dir=str(served))

    def builder(config: Any = None) -> None:
        build(config or get_config(), serve_url="http://127.0.0.1:8000/")

    config = get_config()
    config.plugins.on_startup(command="serve", dirty=False)
    builder(config)
    assert "A second edition." in (served / "index.html").read_text(encoding="utf-8")
    server = config.plugins.on_serve(_Server(builder), config=config, builder=builder)
    assert str(wiki / "concepts") in server.watched

    (wiki / "docs" / "index.md").write_text("# Home\n\nA third edition.\n", encoding="utf-8")
    server.builder()
    assert "A third edition." in (served / "index.html").read_text(encoding="utf-8")
    preview = tree_digest(served)

    (wiki / "hooks" / "late.py").write_text(_AFTER_OURS_RAISES, encoding="utf-8")
    yml = (wiki / "mkdocs.yml").read_text(encoding="utf-8")
    (wiki / "mkdocs.yml").write_text(
        yml.replace("  - hooks/evidence.py\n", "  - hooks/evidence.py\n  - hooks/late.py\n")
    )
    (wiki / "docs" / "index.md").write_text("# Home\n\nA fourth edition.\n", encoding="utf-8")
    with pytest.raises(RuntimeError, match="injected failure"):
        server.builder()
    assert tree_digest(served) == preview
    config.plugins.on_shutdown()
    assert leftovers(tmp_path) == []  # its retired previews removed too
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".mkdocs_preview-")]
