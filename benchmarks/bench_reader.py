"""What a reader pays for a large source: page, record and search-index bytes, and time in Chromium.

For each source size a wiki with one source (20 cited spans, one concept quoting one of them) is
built twice with the real hook:

* ``before``: the whole text on the source page and in the search index, whatever its size (the
  publisher before ``windows_above``; reproduced here with ``windows_above`` set past any size);
* ``after``: the defaults (a source longer than ``windows_above`` code points shows context
  windows, so the page and the search index hold only the windows).

Each site is served from 127.0.0.1 and opened in Debian's Chromium (headless, through
Playwright) at a footnote's address (``#span-…``). *Interactive* is the time from navigation to
the page being loaded, its verify buttons in place and the main thread free (a frame and a
task later); *verify* is the time from clicking the landed highlight's verify button to
"✓ verified" (the whole record fetched, parsed and its three digests recomputed with
WebCrypto). The ``fallback`` column verifies once more with WebCrypto hidden, as on a plain-http
page: the built-in SHA-256 hashes a mebibyte at a time, yielding between chunks; ``longest
task`` is the longest stretch the page's main thread was blocked during that verification (the
longest gap between the ticks of a 10 ms timer).

The proof mode (``--proofs``) measures one excerpt verified through its Merkle proof (CONTRACT
section 16) on a wiki whose acquisitions are signed, built twice: ``signed``, the defaults
(offline); ``proofs``, ``source_text: proofs`` (no text published but the windows). Each site is
opened at its concept page, served from 127.0.0.1 and from disk (``file://``); *bytes* are the
bytes of every file the page loaded between the click on the first excerpt's verify button and
"✓ verified" (the proof script: the record is never loaded), *verified ms* that time, measured
in the page.

    python benchmarks/bench_reader.py                 # 1, 10 and 50 MB sources (several minutes)
    python benchmarks/bench_reader.py --sizes 0.2 0.5 # other sizes, in MB of UTF-8 text
    python benchmarks/bench_reader.py --quick         # tiny sizes, a smoke run
    python benchmarks/bench_reader.py --proofs        # the proof mode, 1, 10 and 50 MB
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import MB, table
from benchmarks.generate import WikiSpec, generate_wiki

# The browser tests' loopback server and Chromium settings (the test extra is needed here anyway).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from _browser_helpers import CHROMIUM, CHROMIUM_ARGS, serve

REPO = Path(__file__).resolve().parents[1]
VARIANTS = {
    "before": "extra:\n  evidence:\n    windows_above: 9007199254740992\n",
    "after": "",
}
_CONFIG = """site_name: Reader benchmark
docs_dir: docs
theme:
  name: material
  features:
    - content.footnote.tooltips
    - search.highlight
plugins:
  - search
hooks:
  - hooks/evidence.py
markdown_extensions:
  - footnotes
  - attr_list
  - md_in_html
nav:
  - Home: index.md
  - Concepts: concepts/index.md
  - Sources: sources/index.md
  - Runs: runs/index.md
"""


def make_wiki(root: Path, size: int) -> Path:
    """A wiki with one source of about ``size`` bytes of UTF-8 text and 20 cited spans."""
    generate_wiki(
        WikiSpec(
            root=root,
            seed=7,
            total_bytes=1,  # one source: the first one reaches the total
            min_bytes=size,
            max_bytes=size,
            sources_per_run=1,
            spans_per_source=20,
            sources_per_concept=1,
        )
    )
    (root / "hooks").mkdir(exist_ok=True)
    (root / "hooks" / "evidence.py").write_bytes((REPO / "hooks" / "evidence.py").read_bytes())
    return root


def build(wiki: Path, variant: str) -> tuple[Path, float]:
    """Build ``wiki`` with the variant's options into ``site-<variant>``; the site and the seconds."""
    (wiki / "mkdocs.yml").write_text(_CONFIG + VARIANTS[variant], encoding="utf-8")
    site = wiki / f"site-{variant}"
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(wiki / "mkdocs.yml"), "-d", str(site)],
        cwd=wiki,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    if done.returncode != 0:
        raise SystemExit(f"bench_reader: build failed:\n{done.stderr[-3000:]}")
    return site, time.perf_counter() - began


_LONG_TASKS = """window.__longest = 0; window.__tick = performance.now();
setInterval(() => { const now = performance.now();
  window.__longest = Math.max(window.__longest, now - window.__tick); window.__tick = now; }, 10);"""
_SETTLED = "() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)))"


def _verify(page: Any, button: str) -> float:
    began = time.perf_counter()
    page.click(button)
    page.wait_for_function(
        "(sel) => ['verified','mismatch','error'].includes(document.querySelector(sel).dataset.state)",
        arg=button,
        timeout=600_000,
        polling=50,
    )
    state = page.get_attribute(button, "data-state")
    if state != "verified":
        raise SystemExit(f"bench_reader: verification ended {state}: {page.get_attribute(button, 'data-detail')}")
    return time.perf_counter() - began


def in_chromium(site: Path, browser: Any, *, fallback_too: bool = True) -> dict[str, float]:
    """Seconds to interactive at a footnote's address, to verify (WebCrypto, then fallback)."""
    (page_file,) = [p for p in (site / "sources").glob("src-*") if p.is_dir()]
    sid = page_file.name
    concept = next(p for p in (site / "concepts").glob("*/index.html"))
    anchor = concept.read_text(encoding="utf-8").split(f"{sid}/#span-", 1)[1].split('"', 1)[0]
    start, end = anchor.split("-")
    button = f'button.evidence-verify[data-kind="highlight"][data-start="{start}"][data-end="{end}"]'
    out: dict[str, float] = {}
    with serve(site) as base:
        for fallback in (False, True) if fallback_too else (False,):
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            page = context.new_page()
            if fallback:
                page.add_init_script("Object.defineProperty(window, 'isSecureContext', {value: false});")
            page.add_init_script(_LONG_TASKS)
            page.set_default_timeout(600_000)
            began = time.perf_counter()
            page.goto(f"{base}sources/{sid}/#span-{anchor}", wait_until="load")
            page.wait_for_selector(button, state="attached")
            page.evaluate(_SETTLED)
            if not fallback:
                out["interactive"] = time.perf_counter() - began
            page.evaluate("() => { window.__longest = 0; window.__tick = performance.now(); }")
            out["fallback" if fallback else "verify"] = _verify(page, button)
            if fallback:
                out["longest"] = float(page.evaluate("() => window.__longest")) / 1000
            context.close()
    return out


def measure(sizes: list[float], work: Path, fallback_max: float) -> list[list[Any]]:
    from playwright.sync_api import sync_playwright

    rows: list[list[Any]] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=list(CHROMIUM_ARGS), headless=True)
        try:
            for mb in sizes:
                wiki = make_wiki(work / f"wiki-{mb:g}", int(mb * MB))
                for variant in VARIANTS:
                    site, seconds = build(wiki, variant)
                    (sid,) = [p.name for p in (site / "sources").glob("src-*") if p.is_dir()]
                    page = site / "sources" / sid / "index.html"
                    fallback_too = page.stat().st_size <= fallback_max * MB
                    timing = in_chromium(site, browser, fallback_too=fallback_too)
                    rows.append(
                        [
                            f"{mb:g} MB {variant}",
                            page.stat().st_size / MB,
                            (site / "sources" / sid / "record.json").stat().st_size / MB,
                            (site / "search" / "search_index.json").stat().st_size / MB,
                            seconds,
                            timing["interactive"],
                            timing["verify"],
                            timing.get("fallback", "-"),
                            timing.get("longest", "-"),
                        ]
                    )
                    figures = "  ".join(f"{v:.2f}" if isinstance(v, float) else str(v) for v in rows[-1])
                    print(f"bench_reader: {figures}", file=sys.stderr, flush=True)
        finally:
            browser.close()
    return rows


PROOF_VARIANTS = {
    "signed": "extra:\n  evidence:\n    offline: true\n    trusted_keys: [keys/bench.pub]\n",
    "proofs": "extra:\n  evidence:\n    offline: true\n    source_text: proofs\n    trusted_keys: [keys/bench.pub]\n",
}

# Click one verify button and wait for its outcome, timed inside the page (the DOM's prototypes
# only, as a page's prose could shadow document.querySelector).
_CLICK_AND_TIME = """async (sel) => {
  const b = Document.prototype.querySelector.call(document, sel);
  const done = () => ['verified', 'mismatch', 'error'].includes(b.dataset.state);
  const t0 = performance.now();
  b.click();
  await new Promise((resolve) => {
    if (done()) return resolve();
    const o = new MutationObserver(() => { if (done()) { o.disconnect(); resolve(); } });
    o.observe(b, { attributes: true });
  });
  return [performance.now() - t0, b.dataset.state, b.dataset.anchor || '', b.dataset.detail];
}"""


def make_signed_wiki(root: Path, size: int) -> Path:
    """:func:`make_wiki`, every acquisition signed by a key the wiki lists under ``trusted_keys``."""
    from publisher.acquire.signing import new_key_pair

    private, public, _ = new_key_pair(root.parent / f"{root.name}-keys", "bench")
    generate_wiki(
        WikiSpec(
            root=root,
            seed=7,
            total_bytes=1,
            min_bytes=size,
            max_bytes=size,
            sources_per_run=1,
            spans_per_source=20,
            sources_per_concept=1,
            signing_key=private,
        )
    )
    (root / "keys").mkdir(exist_ok=True)
    (root / "keys" / "bench.pub").write_bytes(public.read_bytes())
    (root / "hooks").mkdir(exist_ok=True)
    (root / "hooks" / "evidence.py").write_bytes((REPO / "hooks" / "evidence.py").read_bytes())
    # The trusted keys are an input of each result: assemble again now that the wiki lists one.
    from publisher.gate.assemble import assemble_run
    from publisher.gate.inputs import RunOptions
    from publisher.runs import Run
    from publisher.site.lifecycle.policy import resolve_policy

    (root / "mkdocs.yml").write_text(_CONFIG + PROOF_VARIANTS["signed"], encoding="utf-8")
    for run in sorted((root / "runs").iterdir()):
        assemble_run(Run(run), RunOptions(resolve_policy(root).trusted_keys, wiki_root=root), write=True)
    return root


def one_excerpt(site: Path, browser: Any, how: str) -> tuple[int, float]:
    """Bytes loaded and milliseconds from the click to "verified" for the first excerpt of the
    concept page, served (``http``) or from disk (``file``)."""
    concept = next(p for p in sorted((site / "concepts").glob("*.html")) if p.name != "index.html")
    rel = concept.relative_to(site).as_posix()
    button = 'button.evidence-verify[data-kind="excerpt"]'
    with serve(site) as base:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.set_default_timeout(600_000)
        loaded: list[str] = []
        page.goto(f"{base}{rel}" if how == "http" else concept.as_uri(), wait_until="load")
        page.wait_for_selector(button, state="attached")
        page.evaluate(_SETTLED)
        page.on("request", lambda request: loaded.append(request.url))
        ms, state, anchor, detail = page.evaluate(_CLICK_AND_TIME, button)
        context.close()
    if state != "verified" or anchor != "signed-root":
        raise SystemExit(f"bench_reader: proof verification ended {state} ({anchor}): {detail}")
    prefix = base if how == "http" else site.as_uri() + "/"
    total = 0
    for url in loaded:
        path = site / url[len(prefix) :].split("?", 1)[0].split("#", 1)[0] if url.startswith(prefix) else None
        total += path.stat().st_size if path is not None and path.is_file() else 0
    return total, ms


def measure_proofs(sizes: list[float], work: Path) -> list[list[Any]]:
    from playwright.sync_api import sync_playwright

    rows: list[list[Any]] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=list(CHROMIUM_ARGS), headless=True)
        try:
            for mb in sizes:
                wiki = make_signed_wiki(work / f"signed-{mb:g}", int(mb * MB))
                for variant, extra in PROOF_VARIANTS.items():
                    (wiki / "mkdocs.yml").write_text(_CONFIG + extra, encoding="utf-8")
                    site = wiki / f"site-{variant}"
                    began = time.perf_counter()
                    done = subprocess.run(
                        [
                            sys.executable,
                            "-m",
                            "mkdocs",
                            "build",
                            "-q",
                            "-f",
                            str(wiki / "mkdocs.yml"),
                            "-d",
                            str(site),
                        ],
                        cwd=wiki,
                        capture_output=True,
                        text=True,
                        check=False,
                        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
                    )
                    if done.returncode != 0:
                        raise SystemExit(f"bench_reader: build failed:\n{done.stderr[-3000:]}")
                    seconds = time.perf_counter() - began
                    site_mb = sum(p.stat().st_size for p in site.rglob("*") if p.is_file()) / MB
                    row: list[Any] = [f"{mb:g} MB {variant}", site_mb, seconds]
                    for how in ("http", "file"):
                        size, ms = one_excerpt(site, browser, how)
                        row += [size / 1000, ms]
                    rows.append(row)
                    figures = "  ".join(f"{v:.2f}" if isinstance(v, float) else str(v) for v in row)
                    print(f"bench_reader: {figures}", file=sys.stderr, flush=True)
        finally:
            browser.close()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1, 10, 50], help="source sizes in MB")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, for a smoke run")
    parser.add_argument(
        "--fallback-max-mb",
        type=float,
        default=12,
        help="skip the fallback verification on pages larger than this (a 50 MB page takes many minutes)",
    )
    parser.add_argument("--proofs", action="store_true", help="the proof mode: one excerpt through its proof")
    args = parser.parse_args(argv)
    if not CHROMIUM.is_file():
        print(f"bench_reader: no Chromium at {CHROMIUM}; skipped")
        return 0
    sizes = [0.05, 0.3] if args.quick else args.sizes
    if args.proofs:
        with tempfile.TemporaryDirectory(prefix="bench-reader-") as tmp:
            rows = measure_proofs(sizes, Path(tmp))
        header = ["source", "site MB", "build s", "http KB", "http ms", "disk KB", "disk ms"]
        print(table("One excerpt verified through its proof (Chromium; signed roots)", header, rows))
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-reader-") as tmp:
        rows = measure(sizes, Path(tmp), args.fallback_max_mb)
    header = [
        "source",
        "page MB",
        "record MB",
        "search MB",
        "build s",
        "interactive s",
        "verify s",
        "fallback s",
        "longest task s",
    ]
    print(table("Reading a large source (Chromium, served from 127.0.0.1)", header, rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
