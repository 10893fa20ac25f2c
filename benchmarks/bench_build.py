"""MkDocs build time at N and 2N pages (linearity) and the evidence hook's overhead.

For each size a wiki is generated (small snapshots, one concept per ten sources) and built four
ways, same theme and extensions:

- *with hook*: the evidence hook (preflight, generated source/concept/report pages, slot
  filling, seal, atomic publication);
- *same pages*: the very pages the hook generates for that wiki, written out beforehand with
  their HTML (metadata tables, event lists, highlighted texts, report bodies) in the Markdown,
  built without the hook. This is the target's baseline ("the same generated pages without
  it"); *overhead* is the hooked build over this one;
- *same, slots*: the same pages keeping the hook's slot tokens, filled after Markdown by a
  ten-line hook from a file: the hook's page mechanism with none of its work (*vs slots*);
- *plain*: the old comparison, as many shorter hand-written pages (source text with marked
  excerpts, concept files as written), no tables or report bodies (*vs plain*).

The HTML columns compare the bytes of the built pages with the hooked build's (1.000: the same
pages). Linearity is the time at 2N over the time at N. Builds are interleaved, one of each
per round, so load changes weigh on all four alike. Each ratio is given twice: from the fastest
build of each variant, then as the median over the rounds of the hooked build over the variant
built just before it in the same round (the paired figure, which load changes move least).

With ``--claims-per-concept K`` every concept of each wiki gets K claims admitted through the
library (:func:`benchmarks.bench_claims.add_claims`: S on two labels and P on three labels with
a condition, alternately, each appended to ``assessments.jsonl``) after it is generated and
before it is built, so the hook publishes claim sections, the evidence matrix and
``claims.json``; with one concept per ten sources, K = 1 puts 838 claims on the 9,238 pages of
``--pages 10000`` and 1,670 on 18,408. A fifth variant, *no claims*, is then the hooked build of
the same wiki as generated, before its claims (a copy): the hooked build over it is the claims'
share of the build (the hook keeps no timing breakdown of its own). ``--variants`` limits the
builds (the full set at 20,000 pages takes over ten minutes a round).

    python benchmarks/bench_build.py                 # 10,000 and 20,000 pages
    python benchmarks/bench_build.py --pages 200     # 200 and 400
    python benchmarks/bench_build.py --pages 1000 --repeat 3   # fastest of three rounds
    python benchmarks/bench_build.py --claims-per-concept 1 --variants hook,bare --repeat 2
"""

from __future__ import annotations

import argparse
import html
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import run_dirs, table
from benchmarks.bench_claims import add_claims
from benchmarks.generate import WikiSpec, generate_wiki
from publisher.kernel.store import SnapshotStore

REPO = Path(__file__).resolve().parents[1]

_CONFIG = """site_name: Benchmark wiki
docs_dir: docs
site_dir: site
theme:
  name: material
  features: [navigation.prune]
markdown_extensions: [footnotes, attr_list, md_in_html, tables]
nav: [index.md]
"""
# An explicit nav keeps thousands of source pages out of the navigation that Material renders
# on every page; with an automatic nav each page carries every link and the build is quadratic.


def make_wiki(root: Path, pages: int, seed: int) -> Path:
    """A generated wiki with about ``pages`` pages once the hook adds its own."""
    sources = max(2, int(pages / 1.1))
    generate_wiki(
        WikiSpec(
            root=root,
            seed=seed,
            total_bytes=sources * 6 * 1024,
            min_bytes=3 * 1024,
            max_bytes=12 * 1024,
            sources_per_run=500,
            spans_per_source=2,
        )
    )
    return root


def _hooked(root: Path) -> None:
    (root / "hooks").mkdir(exist_ok=True)
    shutil.copy(REPO / "hooks" / "evidence.py", root / "hooks" / "evidence.py")
    (root / "mkdocs.yml").write_text(_CONFIG + "hooks:\n  - hooks/evidence.py\n", encoding="utf-8")


def plain_twin(wiki: Path, root: Path) -> int:
    """Write the same pages as plain Markdown under ``root``; the number of pages written."""
    docs = root / "docs"
    (docs / "sources").mkdir(parents=True)
    (docs / "concepts").mkdir()
    (root / "mkdocs.yml").write_text(_CONFIG, encoding="utf-8")
    shutil.copy(wiki / "docs" / "index.md", docs / "index.md")
    count = 1
    for run in run_dirs(wiki):
        spans: dict[str, list[tuple[int, int]]] = {}
        result = run / "outputs" / "result.json"
        if result.is_file():
            for art in json.loads(result.read_bytes()).get("accepted", []):
                for claim in art["claims"]:
                    spans.setdefault(claim["source_id"], []).append((claim["start"], claim["end"]))
        store = SnapshotStore(run / "sources")
        for sid in store.ids():
            snap = store.read(sid)
            parts, at = [], 0
            for start, end in sorted(spans.get(sid, [])):
                if start < at:
                    continue
                parts.append(html.escape(snap.text[at:start]))
                parts.append(f'<mark id="e-{start}-{end}">{html.escape(snap.text[start:end])}</mark>')
                at = end
            parts.append(html.escape(snap.text[at:]))
            body = (
                f'# {html.escape(snap.title or sid)}\n\n<{snap.url}>\n\n<pre class="snapshot">{"".join(parts)}</pre>\n'
            )
            (docs / "sources" / f"{sid}.md").write_text(body, encoding="utf-8")
            count += 1
    for concept in sorted((wiki / "concepts").glob("*.md")):
        shutil.copy(concept, docs / "concepts" / concept.name)
        count += 1
    return count


_HOOK_ASSETS = ("assets/publisher/evidence.css", "assets/publisher/reader.css", "assets/publisher/verify.js")

_FILL_HOOK = """\"\"\"The evidence hook's slot filling from slots.json, none of its checks.\"\"\"

import json
import re
from pathlib import Path

_SLOTS = {}
_TOKEN = re.compile(r"(<p>)?(pubslot[0-9a-f]{12}n[0-9]{6}x)(</p>)?")


def on_config(config):
    _SLOTS.clear()
    _SLOTS.update(json.loads((Path(config.config_file_path).parent / "slots.json").read_text("utf-8")))
    return config


def on_page_content(html, page, config, files):
    slots = _SLOTS.get(page.file.src_uri)
    if not slots:
        return html

    def fill(match):
        content = slots[match.group(2)]
        if match.group(1) and match.group(3):
            return content
        return (match.group(1) or "") + content + (match.group(3) or "")

    return _TOKEN.sub(fill, html)
"""


def generated_twin(wiki: Path, root: Path, *, slots: bool = False) -> int:
    """Write the very pages the hook generates for ``wiki`` as files MkDocs builds without it.

    By default each page is the hook's Markdown with every slot replaced by the HTML the hook
    puts there (a slot alone in its paragraph becomes a raw HTML block, as the hook makes it; an
    inline slot, a footnote's excerpts, has its line breaks written as ``&#10;`` so the footnote
    stays one paragraph), so the twin holds the same metadata tables, event lists, highlighted
    texts and report bodies, and the built pages carry the same HTML as the hooked build's.
    With ``slots`` the pages keep the hook's tokens and a ten-line hook replaces them from
    ``slots.json`` after Markdown, as the evidence hook does: the same pages through the same
    mechanism, without preflight, page generation, seal or atomic publication. Either way the
    hook's stylesheets, script and per-source ``record.json`` files are copied beside the pages
    and the theme uses the system fonts, as under the hook. Returns the number of pages written.
    """
    from publisher.site import STATIC_DIR, TEMPLATES_DIR
    from publisher.site.checks.manifest import record_uri
    from publisher.site.lifecycle.policy import resolve_policy
    from publisher.site.lifecycle.workers import BuildHelper
    from publisher.site.pages.generate import SiteModel
    from publisher.wiki.check import check_wiki as run_preflight

    pre = run_preflight(wiki, policy=resolve_policy(wiki))
    if not pre.ok:
        raise SystemExit(f"the benchmark wiki failed its preflight: {len(pre.findings)} finding(s)")
    model = SiteModel(pre, use_directory_urls=True, report_body=BuildHelper(wiki, pre))
    docs = root / "docs"
    docs.mkdir(parents=True)
    shutil.copy(wiki / "docs" / "index.md", docs / "index.md")
    count = 1
    filled: dict[str, dict[str, str]] = {}
    for page in model.build():
        markdown = page.markdown
        for token, value in page.slots.items():
            content = value() if callable(value) else value
            if slots:
                filled.setdefault(page.src_uri, {})[token] = content
            elif f"\n{token}\n" in markdown:
                markdown = markdown.replace(f"\n{token}\n", f"\n{content}\n", 1)
            else:
                markdown = markdown.replace(token, content.replace("\n", "&#10;"), 1)
        target = docs / page.src_uri
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(markdown, encoding="utf-8")
        count += 1
    for sid, info in pre.sources.items():
        target = docs / record_uri(sid)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(Path(info.sources_dir) / f"{sid}.json", target)
    (docs / "assets" / "publisher").mkdir(parents=True, exist_ok=True)
    shutil.copy(TEMPLATES_DIR / "evidence.css", docs / _HOOK_ASSETS[0])
    for uri in _HOOK_ASSETS[1:]:
        shutil.copy(STATIC_DIR / Path(uri).name, docs / uri)
    assets = "".join(f"\n  - {uri}" for uri in _HOOK_ASSETS[:2])
    config = _CONFIG.replace("  features:", "  font: false\n  features:")
    config += f"extra_css:{assets}\nextra_javascript:\n  - {_HOOK_ASSETS[2]}\n"
    if slots:
        (root / "slots.json").write_text(json.dumps(filled), encoding="utf-8")
        (root / "fill.py").write_text(_FILL_HOOK, encoding="utf-8")
        config += "hooks:\n  - fill.py\n"
    (root / "mkdocs.yml").write_text(config, encoding="utf-8")
    return count


def timed_build(root: Path) -> tuple[float, int, str]:
    """Wall time of ``mkdocs build`` in a fresh interpreter, its exit status and last stderr line."""
    began = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-q", "-f", os.fspath(root / "mkdocs.yml")],
        capture_output=True,
        text=True,
        env={**os.environ, "CI": "true"},
    )
    elapsed = time.perf_counter() - began
    tail = (proc.stderr.strip().splitlines() or [""])[-1][:160]
    return elapsed, proc.returncode, tail


def _site_pages(root: Path) -> int:
    return sum(1 for _ in (root / "site").rglob("index.html")) if (root / "site").is_dir() else 0


def _site_bytes(root: Path) -> int:
    """Bytes of every page of the built site (how much HTML the build produced)."""
    site = root / "site"
    return sum(p.stat().st_size for p in site.rglob("index.html")) if site.is_dir() else 0


def _rounds(roots: dict[str, Path], repeat: int) -> dict[str, list[tuple[float, int, str]]]:
    """``repeat`` builds of each root (each from scratch), interleaved: each root once per round,
    so a change in the machine's load during the run weighs on every variant alike. A root
    whose build failed is not built again."""
    got: dict[str, list[tuple[float, int, str]]] = {key: [] for key in roots}
    for _ in range(repeat):
        for key, root in roots.items():
            if got[key] and got[key][-1][1]:
                continue
            shutil.rmtree(root / "site", ignore_errors=True)
            got[key].append(timed_build(root))
            print(f"bench_build: {root.name} {key} {got[key][-1][0]:.1f} s", file=sys.stderr, flush=True)
    return got


VARIANTS = ("plain", "same", "slot", "hook", "bare")
"""Every build the benchmark knows: ``bare`` is the hooked build of the wiki before its claims."""


def measure(
    base: Path,
    pages: int,
    with_hook: bool,
    repeat: int = 1,
    *,
    claims_per_concept: int = 0,
    variants: tuple[str, ...] = VARIANTS,
) -> dict[str, Any]:
    """Generate a wiki of about ``pages`` pages (with its claims) and time the chosen builds."""
    wiki = make_wiki(base / f"wiki-{pages}", pages, seed=pages)
    row: dict[str, Any] = {"claims": 0}
    roots: dict[str, Path] = {}
    if claims_per_concept:
        if with_hook and "bare" in variants:
            roots["bare"] = base / f"bare-{pages}"
            shutil.copytree(wiki, roots["bare"])
            _hooked(roots["bare"])
        began = time.perf_counter()
        row["claims"] = add_claims(wiki, claims_per_concept)
        row["admit_s"] = time.perf_counter() - began
        print(f"bench_build: {row['claims']} claims admitted in {row['admit_s']:.1f} s", file=sys.stderr, flush=True)
    written = 0
    if "plain" in variants:
        roots["plain"] = base / f"plain-{pages}"
        written = plain_twin(wiki, roots["plain"])
    if with_hook:
        if "same" in variants:
            roots["same"] = base / f"generated-{pages}"
            generated_twin(wiki, roots["same"])
        if "slot" in variants:
            roots["slot"] = base / f"slots-{pages}"
            generated_twin(wiki, roots["slot"], slots=True)
        if "hook" in variants:
            _hooked(wiki)
            roots["hook"] = wiki
    # Built in VARIANTS order each round: the claim-free build follows the hooked one.
    roots = {key: roots[key] for key in VARIANTS if key in roots}
    row["pages"] = written
    runs = _rounds(roots, repeat)
    for key, builds in runs.items():
        failed = next((b for b in builds if b[1]), None)
        seconds, rc, err = failed or min(builds)
        row.update({f"{key}_s": seconds, f"{key}_rc": rc, f"{key}_err": err, f"{key}_bytes": _site_bytes(roots[key])})
        row[f"{key}_all"] = [b[0] for b in builds]
        row[f"{key}_pages"] = _site_pages(roots[key])
    if "hook" in runs:
        row["hook_pages"] = _site_pages(wiki)
        row["pages"] = row["pages"] or row["hook_pages"]
        # The hooked build over the baseline built just before it, round by round (the
        # claim-free build is built just after it).
        for key in ("same", "slot", "plain", "bare"):
            if key in runs:
                pairs = zip(row["hook_all"], row[f"{key}_all"], strict=False)
                row[f"{key}_paired"] = median(h / b - 1 for h, b in pairs)
    for root in roots.values():
        shutil.rmtree(root, ignore_errors=True)
    return row


def _hook_available() -> bool:
    try:
        import publisher.site.lifecycle.hook  # noqa: F401
    except ImportError:
        return False
    return (REPO / "hooks" / "evidence.py").is_file()


def _pct(best: float, paired: float) -> str:
    """The overhead from the fastest builds, then the median of the per-round ratios."""
    return f"{best * 100:+.1f} % / {paired * 100:+.1f} %"


def _secs(got: dict[str, Any], key: str) -> Any:
    return got[f"{key}_s"] if f"{key}_s" in got else "-"


def _over(got: dict[str, Any], key: str) -> str:
    """The hooked build over variant ``key``, best / paired, or ``-`` where either is missing."""
    if f"{key}_s" not in got or "hook_s" not in got:
        return "-"
    return _pct(got["hook_s"] / got[f"{key}_s"] - 1, got[f"{key}_paired"])


def _variants(text: str) -> tuple[str, ...]:
    chosen = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    unknown = [v for v in chosen if v not in VARIANTS]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(f"variants are a comma-separated subset of {','.join(VARIANTS)}")
    return chosen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=10_000, help="N (the second size is 2N)")
    parser.add_argument("--quick", action="store_true", help="N = 20")
    parser.add_argument(
        "--repeat", type=int, default=1, help="rounds (one build of each variant per round); the fastest is kept"
    )
    parser.add_argument(
        "--claims-per-concept",
        type=int,
        default=0,
        metavar="K",
        help="admit K claims in every concept before building (one concept per ten sources)",
    )
    parser.add_argument(
        "--variants",
        type=_variants,
        default=VARIANTS,
        help=f"comma-separated builds to time, of {','.join(VARIANTS)} (default: all; bare needs claims)",
    )
    args = parser.parse_args(argv)
    if args.claims_per_concept < 0:
        parser.error("--claims-per-concept must be 0 or more")
    n = 20 if args.quick else args.pages
    hook = _hook_available()
    variants = args.variants if args.claims_per_concept else tuple(v for v in args.variants if v != "bare")
    if not variants:
        parser.error("the bare build needs --claims-per-concept")
    if not hook and "plain" not in variants:
        parser.error("the evidence hook is not importable here: only the plain build can be timed")
    rows = []
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-build-") as tmp:
        for pages in (n, 2 * n):
            got = measure(
                Path(tmp),
                pages,
                hook,
                max(1, args.repeat),
                claims_per_concept=args.claims_per_concept,
                variants=variants,
            )
            results.append(got)
            built = [key for key in VARIANTS if f"{key}_rc" in got]
            if hook:
                rows.append(
                    [
                        got["pages"],
                        _secs(got, "plain"),
                        _secs(got, "same"),
                        _secs(got, "slot"),
                        _secs(got, "hook"),
                        _over(got, "same"),
                        _over(got, "slot"),
                        _over(got, "plain"),
                        got.get("hook_pages", "-"),
                        f"{got['same_bytes'] / max(1, got['hook_bytes']):.3f}"
                        if "same_s" in got and "hook_s" in got
                        else "-",
                        f"{got['slot_bytes'] / max(1, got['hook_bytes']):.3f}"
                        if "slot_s" in got and "hook_s" in got
                        else "-",
                        "/".join(str(got[f"{key}_rc"]) for key in built),
                    ]
                )
            else:
                rows.append([got["pages"], got["plain_s"], *["-"] * 9, f"{got['plain_rc']}"])
    header = [
        "pages",
        "plain",
        "same pages",
        "same, slots",
        "with hook",
        "overhead best / paired",
        "vs slots",
        "vs plain",
        "hook site pages",
        "HTML same/hook",
        "slots/hook",
        "rc",
    ]
    print(table("MkDocs build (s)", header, rows))
    if args.claims_per_concept and "hook_s" in results[0]:
        claim_rows = []
        for got in results:
            share = "-"
            if "bare_s" in got:
                share = _pct(1 - got["bare_s"] / got["hook_s"], 1 - 1 / (1 + got["bare_paired"]))
            claim_rows.append(
                [
                    got["hook_pages"],
                    got["claims"],
                    f"{got['admit_s']:.1f}",
                    got["hook_s"],
                    f"{got['hook_s'] / max(1, got['hook_pages']) * 1000:.2f}",
                    _secs(got, "bare"),
                    got.get("bare_pages", "-"),
                    share,
                ]
            )
        print(
            table(
                "Build with claims (s)",
                [
                    "hook site pages",
                    "claims",
                    "admitting",
                    "with hook",
                    "ms / page",
                    "no claims",
                    "its pages",
                    "claims' share best / paired",
                ],
                claim_rows,
            )
        )
    lin = []
    for key, name in (
        ("plain", "plain"),
        ("same", "same pages"),
        ("slot", "same, slots"),
        ("hook", "with hook"),
        ("bare", "with hook, no claims"),
    ):
        if f"{key}_s" in results[0] and f"{key}_s" in results[1]:
            lin.append([name, results[1][f"{key}_s"] / results[0][f"{key}_s"]])
    if "hook_s" in results[0]:
        lin.append(
            [
                "with hook, per page",
                (results[1]["hook_s"] / results[1]["hook_pages"]) / (results[0]["hook_s"] / results[0]["hook_pages"]),
            ]
        )
        lin.append(["(hook site pages)", results[1]["hook_pages"] / max(1, results[0]["hook_pages"])])
        if args.claims_per_concept:
            lin.append(["(claims)", results[1]["claims"] / max(1, results[0]["claims"])])
    print(table("Linearity: time at 2N / time at N (target <= 2.2)", ["build", "ratio"], lin))
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    if load is not None:
        print(f"load average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    for got in results:
        for key in VARIANTS:
            if got.get(f"{key}_rc"):
                print(f"{key} build of {got['pages']} pages failed: {got[f'{key}_err']}")
    if not hook:
        print("the evidence hook is not importable here: only plain builds were timed")
    return 1 if any(got.get(f"{key}_rc") for got in results for key in VARIANTS) else 0


if __name__ == "__main__":
    raise SystemExit(main())
