"""Helpers for tests that drive a real Chromium: Debian's /usr/bin/chromium through Playwright.

No browser is ever downloaded. Tests skip (with "chromium" in the message) when the browser or
Playwright is missing; CI sets PUBLISHER_REQUIRE_BROWSER=1, which turns that skip into a failure.
Sites are served from a loopback ``http.server`` in a thread, and every request a page makes is
routed through :class:`GuardedPage`, which lets only 127.0.0.1 through and records the rest.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlsplit

import pytest
from _policy import policy_of

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / "test-artifacts"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
STATIC = REPO / "publisher" / "site" / "static"
VERIFY_JS = STATIC / "verify.js"


def require_browser() -> Any:
    """The sync Playwright module, or a skip naming chromium when the browser cannot run here."""
    if not CHROMIUM.is_file():
        pytest.skip(f"chromium not installed at {CHROMIUM} (apt-get install chromium); browser tests skipped")
    try:
        from playwright import sync_api
    except ImportError as exc:  # pragma: no cover - playwright is in the test extra
        pytest.skip(f"playwright for Python is missing ({exc}); chromium browser tests skipped")
    return sync_api


@contextmanager
def launched_browser() -> Iterator[Any]:
    """Debian's Chromium, headless, launched through Playwright (never a downloaded browser)."""
    sync_api = require_browser()
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=list(CHROMIUM_ARGS), headless=True)
        try:
            yield browser
        finally:
            browser.close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves a folder; no request logging, no caching, JSON served as JSON."""

    extensions_map: ClassVar[dict[str, str]] = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".json": "application/json",
    }

    def log_message(self, format: str, *args: Any) -> None:
        return

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()


@contextmanager
def serve(folder: Path) -> Iterator[str]:
    """Serve ``folder`` on 127.0.0.1 (a free port) from a thread; yields the base URL with a slash."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="test-site-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@dataclass
class GuardedPage:
    """A page whose requests may only go to 127.0.0.1; console errors and page errors are kept."""

    page: Any
    offsite: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def check_clean(self) -> None:
        """No request left 127.0.0.1 and nothing was logged as an error."""
        assert self.offsite == [], f"requests left 127.0.0.1: {self.offsite}"
        assert self.errors == [], f"console errors: {self.errors}"


@contextmanager
def guarded_page(browser: Any, *, viewport: dict[str, int] | None = None) -> Iterator[GuardedPage]:
    """A fresh context and page; every request is routed and refused unless it stays on this machine
    (127.0.0.1, or a file:// page and its files)."""
    context = browser.new_context(viewport=viewport or {"width": 1280, "height": 800}, service_workers="block")
    page = context.new_page()
    guard = GuardedPage(page)

    def route(route: Any) -> None:
        url = route.request.url
        guard.requests.append(url)
        parts = urlsplit(url)
        if parts.scheme in ("data", "blob", "file") or (parts.scheme == "http" and parts.hostname == "127.0.0.1"):
            route.continue_()
        else:
            guard.offsite.append(url)
            route.abort("blockedbyclient")

    context.route("**/*", route)
    page.on("console", lambda msg: guard.errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: guard.errors.append(f"page error: {exc}"))
    try:
        yield guard
    finally:
        context.close()


def screenshot(page: Any, name: str, **kwargs: Any) -> Path:
    """Save a screenshot under test-artifacts/ (gitignored) and return its path."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    page.screenshot(path=str(path), **kwargs)
    return path


def mkdocs_build(wiki: Path, site: Path) -> None:
    """``mkdocs build`` of ``wiki`` into ``site`` in a subprocess; fails the test with its output."""
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-f", str(wiki / "mkdocs.yml"), "-d", str(site)],
        cwd=wiki,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    if done.returncode != 0 or not (site / "index.html").is_file():
        pytest.fail(f"mkdocs build of {wiki} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")


_SKIPPED_TOP = frozenset({".git", ".venv", "site", "tests", "test-artifacts", "build", "dist", "benchmarks"})


def copy_example_wiki(target: Path) -> Path:
    """A copy of the repository's example wiki (what ``mkdocs build`` at the root reads)."""
    if not (REPO / "mkdocs.yml").is_file() or not (REPO / "concepts").is_dir():
        pytest.fail(f"the example wiki is missing at {REPO}")

    def ignored(folder: str, names: list[str]) -> set[str]:
        skipped = {n for n in names if n in {"__pycache__", ".pytest_cache", ".ruff_cache", ".mypy_cache"}}
        skipped |= {n for n in names if n.startswith(".site-") or n.endswith(".egg-info")}
        if Path(folder) == REPO:
            skipped |= _SKIPPED_TOP & set(names)
        return skipped

    shutil.copytree(REPO, target, ignore=ignored, symlinks=True)
    return target


def wait_for_state(page: Any, selector: str, states: tuple[str, ...] = ("verified", "mismatch", "error")) -> str:
    """Wait until the verify control at ``selector`` has finished; returns its state."""
    page.wait_for_function(
        "([sel, states]) => { const b = document.querySelector(sel);"
        " return b && states.includes(b.getAttribute('data-state')); }",
        arg=[selector, list(states)],
        timeout=15_000,
    )
    return str(page.get_attribute(selector, "data-state"))


def in_viewport(page: Any, selector: str) -> bool:
    """Whether the element's bounding box lies inside the viewport and below the sticky header."""
    box = page.locator(selector).first.bounding_box()
    size = page.viewport_size
    if box is None or size is None:
        return False
    header = page.evaluate(
        "() => { const h = document.querySelector('header.md-header');"
        " return h ? h.getBoundingClientRect().bottom : 0; }"
    )
    return bool(box["y"] >= header - 1 and box["y"] + min(box["height"], 40) <= size["height"] and box["x"] >= 0)


FILLER = "".join(f"Line {n:03d} of filler text; the cited passages sit well below the fold.\n" for n in range(160))
ASTRAL_TEXT = (
    "A 𝒯𝓇𝒾𝒶𝓁 of morning light ☀️\n"
    "Background: 😀😀 participants with e\u0301 and a\u0308\u0323 in their names (田中健二).\n"
    + FILLER
    + 'Results: the 𝛼-level 👍🏽 result was significant (p < 0.05) & robust "here".\n'
    + FILLER
    + "Conclusion: 🇫🇷 café, done.\n"
)
ASTRAL_SPANS = (
    'the 𝛼-level 👍🏽 result was significant (p < 0.05) & robust "here".',
    "👍🏽 result was significant",
    "😀😀 participants with e\u0301 and a\u0308\u0323",
)


def astral_config(extra: str = "") -> str:
    """mkdocs.yml of the astral test wiki: Material with footnote tooltips, the evidence hook."""
    return (
        'site_name: "Astral test wiki"\n'
        "docs_dir: docs\n"
        "theme:\n  name: material\n  features:\n    - content.footnote.tooltips\n"
        "hooks:\n  - hooks/evidence.py\n"
        "markdown_extensions:\n  - footnotes\n  - attr_list\n  - md_in_html\n"
        "plugins: []\n"
        f"{extra}"
    )


def make_astral_wiki(root: Path, extra: str = "") -> tuple[Path, str, list[tuple[int, int]]]:
    """A wiki whose one concept cites (overlapping) spans with astral characters and combining marks.

    Returns the wiki, the source id and the cited (start, end) code-point ranges.
    """
    from _wiki_helpers import make_wiki

    wiki = make_wiki(root)
    (wiki / "mkdocs.yml").write_text(astral_config(extra), encoding="utf-8")
    ranges = [(ASTRAL_TEXT.index(s), ASTRAL_TEXT.index(s) + len(s)) for s in ASTRAL_SPANS]
    sid = promote_one_source(
        wiki,
        "astral",
        "https://example.org/𝛼/trial?lang=fr&x=1",
        ASTRAL_TEXT,
        ranges,
        pmid="4242",
        title="A 𝒯𝓇𝒾𝒶𝓁 of morning light",
        question="Does morning light help?",
    )
    return wiki, sid, ranges


def promote_one_source(
    wiki: Path,
    run: str,
    url: str,
    text: str,
    ranges: list[tuple[int, int]],
    *,
    pmid: str,
    title: str,
    question: str,
    key: Path | None = None,
) -> str:
    """A run of ``wiki`` with one fetched source whose extraction cites ``ranges`` of ``text``,
    assembled and promoted (its concept is named after the run); returns the source id. With
    ``key``, its acquisition event is signed with that private key."""
    from _wiki_helpers import RunBuilder

    from publisher.wiki.promote import promote

    rb = RunBuilder(wiki, run, question=question, key=key)
    sid = rb.source(url, text, paper={"pmid": pmid, "doi": None, "pmcid": None}, title=title)
    rb.record(
        "extraction",
        f"pmid-{pmid}",
        {
            "schema_version": 1,
            "evidence_id": f"pmid:{pmid}",
            "pmid": pmid,
            "design": "randomised trial",
            "spans": [
                {"claim": f"Claim {n}.", "source_id": sid, "start": s, "end": e} for n, (s, e) in enumerate(ranges)
            ],
        },
    )
    rb.assemble()
    promote(rb.run.path, wiki, policy=policy_of(wiki))
    return sid
