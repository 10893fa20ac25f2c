"""Theme metadata and scripts, attacked in a real Chromium.

Each payload tries to run a script on the pages of an evidence site: through front matter the
theme prints (a status, MultiMarkdown metadata, an icon path, a page template), through a theme
override's inline script, through a font named as a script, or through a script written into a
built page's header. Each ends one of two ways: the build refuses it (no traceback) and the
published site stays byte-identical, or ``check-site`` refuses the edited site. Either way no
dialog opens and the payload's console marker never shows on any page.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _browser_helpers import guarded_page, launched_browser, serve
from _policy import policy_of
from _wiki_helpers import tree_digest
from mkdocs.utils.meta import get_data
from test_site_files import make_cr_wiki

from publisher.site.checks.checksite import check_site

pytestmark = pytest.mark.browser

MARKER = "theme-payload-ran"
RUN = f"console.log(`{MARKER}`);alert(`{MARKER}`)"
"""The payload's script: no quote of any kind, so it survives every quoting it is put in."""


def _build(wiki: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(wiki / "mkdocs.yml"), "-d", str(site)],
        cwd=wiki,
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "/usr/bin:/bin", "NO_MKDOCS_2_WARNING": "1", "HOME": str(wiki)},
    )


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_browser() as b:
        yield b


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("theme")
    wiki, _, _ = make_cr_wiki(root / "wiki")
    with (wiki / "mkdocs.yml").open("a", encoding="utf-8") as f:
        f.write("  status:\n    new: Recently added\n")  # under extra:, beside evidence:
    (wiki / "docs" / "page.md").write_text("---\nstatus: new\n---\n# A page\n\nText.\n", encoding="utf-8")
    done = _build(wiki, root / "site")
    assert done.returncode == 0, done.stderr
    return wiki, root / "site"


def _pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


def _visit(browser: Any, site: Path) -> tuple[list[str], list[str]]:
    """Every page of ``site`` opened: the dialogs and the console lines naming the marker."""
    dialogs: list[str] = []
    marked: list[str] = []
    with serve(site) as base, guarded_page(browser) as guard:
        page = guard.page
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.on("console", lambda m: marked.append(m.text) if MARKER in m.text else None)
        for path in _pages(site):
            page.goto(base + path.relative_to(site).as_posix())
            page.wait_for_timeout(150)
        assert guard.offsite == []
    return dialogs, marked


def _with_override(wiki: Path, template: str) -> None:
    text = (wiki / "mkdocs.yml").read_text(encoding="utf-8")
    (wiki / "mkdocs.yml").write_text(
        text.replace("theme:\n  name: material\n", "theme:\n  name: material\n  custom_dir: overrides\n"),
        encoding="utf-8",
    )
    (wiki / "overrides").mkdir()
    (wiki / "overrides" / "main.html").write_text(template, encoding="utf-8")


def _payloads() -> dict[str, Any]:
    def page(text: str) -> Any:
        data = get_data(text)[1]  # MkDocs reads it as metadata: the payload is live
        assert (data and MARKER in json.dumps(data)) or "icon" in data, text

        return lambda wiki: (wiki / "docs" / "page.md").write_text(text, encoding="utf-8")

    def font(wiki: Path) -> None:
        (wiki / "docs" / "fonts").mkdir()
        (wiki / "docs" / "fonts" / "face.woff").write_bytes(f"wOFF=0;{RUN}//".encode() + bytes(range(16)))
        with (wiki / "mkdocs.yml").open("a", encoding="utf-8") as f:
            f.write("extra_javascript:\n  - fonts/face.woff\n")

    return {
        "status-breaks-out": page(f"---\nstatus: 'new x\"><script>{RUN}</script>'\n---\n# A page\n"),
        "multimarkdown-status": page(f'Status: new"><img src=x onerror="{RUN}">\nTitle: A page\n\nText.\n'),
        "icon-path": page("---\nicon: ../../../../404\n---\n# A page\n"),
        "icon-of-the-docs": page("---\nicon: material/../../../wiki/docs/x\n---\n# A page\n"),
        "redirect-template": page(f'---\ntemplate: redirect.html\nlocation: >-\n  x"]);{RUN};(["\n---\n# A page\n'),
        "override-inline-script": lambda wiki: _with_override(
            wiki, '{% extends "base.html" %}{% block footer %}{{ super() }}<script>' + RUN + "</script>{% endblock %}"
        ),
        "font-named-as-script": font,
    }


@pytest.mark.parametrize("name", sorted(_payloads()))
def test_a_build_time_payload_is_refused_and_runs_nowhere(
    built: tuple[Path, Path], browser: Any, tmp_path: Path, name: str
) -> None:
    wiki0, site0 = built
    wiki = tmp_path / "wiki"
    shutil.copytree(wiki0, wiki, symlinks=True)
    site = tmp_path / "site"
    shutil.copytree(site0, site, symlinks=True)
    before = tree_digest(site)
    _payloads()[name](wiki)
    done = _build(wiki, site)
    assert done.returncode != 0, name
    assert "Traceback" not in done.stderr and "TemplateNotFound" not in done.stderr, done.stderr[-2000:]
    assert tree_digest(site) == before
    assert _visit(browser, site) == ([], [])


def test_a_script_written_into_a_page_header_fails_check_site(
    built: tuple[Path, Path], browser: Any, tmp_path: Path
) -> None:
    wiki, site0 = built
    site = tmp_path / "site"
    shutil.copytree(site0, site, symlinks=True)
    for path in site.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    page = site / "page" / "index.html"
    html = page.read_text(encoding="utf-8")
    page.write_text(html.replace("<header", f"<script>{RUN}</script><header", 1), encoding="utf-8")
    assert _visit(browser, site) == ([], [])
    found = check_site(site, wiki, policy=policy_of(wiki)).findings
    assert ("C-CSP", "page/index.html") in {(f.code, f.file) for f in found}
