"""A wiki that cites a source it may not republish (``extra: evidence: source_text: proofs``), in a
real Chromium, served and from disk: no published file holds a sentence far from every citation,
yet every excerpt verifies, against a signed root, with a few kilobytes per excerpt (CONTRACT
section 16). Also: clobbering prose in a concept runs no foreign script and forges no verification.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _browser_helpers import guarded_page, launched_browser, mkdocs_build, promote_one_source, serve, wait_for_state
from _policy import policy_of

from publisher.acquire.signing import new_key_pair
from publisher.site.checks.checksite import check_site

pytestmark = [pytest.mark.browser]

LINE = "Participants were followed for a year; the outcome was measured by assessors blind to arm.\n"
NEAR = "The primary outcome improved by 9.4 minutes (95% CI 4.7 to 14.1) 😀."
FAR = "A sentence far from every citation that no published file may hold."
CLOBBER = (
    '\n\n<img name="currentScript" src="evil/assets/publisher/verify.js" alt="">\n'
    '<div id="document$">y</div><div id="EvidenceVerify">z</div><div id="__evidenceSearchWorker">w</div>\n'
)


def _text() -> tuple[str, list[tuple[int, int]]]:
    filler = LINE * (300_000 // len(LINE))
    half = len(filler) // 2
    text = filler[:half] + NEAR + "\n" + filler[half:] + FAR + "\n" + filler + "The end 𝔘.\n"
    s = text.index(NEAR)
    boundary = (len(text) // 1024) * 1024 - 1024
    return text, [(s, s + len(NEAR)), (boundary - 10, boundary + 10), (len(text) - 10, len(text) - 1)]


@pytest.fixture(scope="module")
def proofs_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path, str, list[tuple[int, int]]]]:
    from _wiki_helpers import make_wiki

    root = tmp_path_factory.mktemp("proofs")
    text, ranges = _text()
    wiki = make_wiki(root / "wiki")
    private, public, _ = new_key_pair(root / "keys", "ci")
    (wiki / "keys").mkdir()
    shutil.copyfile(public, wiki / "keys" / "ci.pub")
    config = wiki / "mkdocs.yml"
    config.write_text(
        config.read_text(encoding="utf-8").replace("plugins: []", "plugins:\n  - search")
        + "extra:\n  evidence:\n    offline: true\n    source_text: proofs\n    trusted_keys: [keys/ci.pub]\n",
        encoding="utf-8",
    )
    sid = promote_one_source(
        wiki,
        "licensed",
        "https://example.org/licensed-trial",
        text,
        ranges,
        pmid="6161",
        title="A licensed trial report",
        question="Does the licensed trial report its outcome?",
        key=private,
    )
    mkdocs_build(wiki, root / "site")
    yield root / "site", wiki, sid, ranges


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_browser() as b:
        yield b


def test_no_published_file_holds_text_far_from_the_citations(
    proofs_site: tuple[Path, Path, str, list[tuple[int, int]]],
) -> None:
    site, wiki, sid, _ = proofs_site
    needle = FAR.encode("utf-8")
    files = [p for p in site.rglob("*") if p.is_file()]
    assert len(files) > 20
    assert [p for p in files if needle in p.read_bytes()] == []
    near = NEAR.encode("utf-8")
    assert any(near in p.read_bytes() for p in files)  # the cited window is published
    record = json.loads((site / "sources" / sid / "record.json").read_bytes())
    assert "text" not in record and record["merkle_root"].startswith("sha256:")
    assert not (site / "sources" / sid / "record.js").exists()
    assert check_site(site, wiki, policy=policy_of(wiki)).ok


_ALL = "(sel) => [...Document.prototype.querySelectorAll.call(document, sel)]"


def _verify_every_button(page: Any, selector: str) -> list[tuple[str, str | None, str]]:
    """Click every matching verify button and wait for all; (state, anchor, detail) of each. Only
    the DOM's prototypes are used (the page's prose may shadow document.querySelectorAll, which
    Playwright's own locators rely on)."""
    count = page.evaluate(
        f"(sel) => {{ const bs = ({_ALL})(sel); bs.forEach(b => b.click()); return bs.length; }}", selector
    )
    assert count > 0
    page.wait_for_function(
        f"(sel) => ({_ALL})(sel).every(b => ['verified','mismatch','error'].includes(b.dataset.state))",
        arg=selector,
        timeout=15_000,
    )
    got = page.evaluate(
        f"(sel) => ({_ALL})(sel).map(b => [b.dataset.state, b.dataset.anchor || null, b.dataset.detail])", selector
    )
    return [(state, anchor, detail) for state, anchor, detail in got]


@pytest.mark.parametrize("how", ["http", "file"])
def test_every_excerpt_verifies_against_the_signed_root(
    proofs_site: tuple[Path, Path, str, list[tuple[int, int]]], browser: Any, how: str
) -> None:
    site, _, sid, ranges = proofs_site
    with serve(site) as base, guarded_page(browser) as guard:
        page = guard.page
        for rel in ("concepts/licensed.html", f"sources/{sid}.html"):
            url = f"{base}{rel}" if how == "http" else (site / rel).as_uri()
            page.goto(url)
            results = _verify_every_button(page, 'button.evidence-verify:not([data-kind="record"])')
            assert results and all(state == "verified" for state, _, _ in results), results
            assert {anchor for _, anchor, _ in results} == {"signed-root"}
            assert all("a signed root" in detail for _, _, detail in results)
        # Only the proof files were loaded for the excerpts: never the record.
        assert not any(r.endswith(("record.js", "record.json")) for r in guard.requests)
        proofs = [r for r in guard.requests if "/proofs/" in r]
        assert {r.rsplit("/", 1)[1] for r in proofs} == {f"{s}-{e}.js" for s, e in ranges}
        # Whole-record verification stays an explicit action; here the text is not published
        # (served: the record says so; from disk: there is no record script to load).
        whole = 'button.evidence-verify[data-kind="record"]'
        page.click(whole)
        state = wait_for_state(page, whole)
        assert state == ("mismatch" if how == "http" else "error"), page.get_attribute(whole, "data-label")
        _clean(guard)


def _clean(guard: Any) -> None:
    """Nothing left 127.0.0.1 and nothing failed to load but the prose's own image (missing by design)
    and, from disk, the record script a site without the text does not have."""
    assert guard.offsite == []
    assert [e for e in guard.errors if "404" not in e and "ERR_FILE_NOT_FOUND" not in e] == [], guard.errors


def test_a_tampered_proof_is_a_mismatch(
    proofs_site: tuple[Path, Path, str, list[tuple[int, int]]], browser: Any, tmp_path: Path
) -> None:
    site, wiki, sid, ranges = proofs_site
    copy = tmp_path / "site"
    shutil.copytree(site, copy)
    start, end = ranges[0]
    path = copy / "sources" / sid / "proofs" / f"{start}-{end}.js"
    path.write_text(path.read_text(encoding="utf-8").replace("9.4 minutes", "9.9 minutes"), encoding="utf-8")
    assert not check_site(copy, wiki, policy=policy_of(wiki)).ok
    with serve(copy) as base, guarded_page(browser) as guard:
        guard.page.goto(f"{base}sources/{sid}.html")
        button = f'button.evidence-verify[data-kind="highlight"][data-start="{start}"][data-end="{end}"]'
        guard.page.click(button)
        assert wait_for_state(guard.page, button) == "mismatch"
        assert (guard.page.get_attribute(button, "data-label") or "").startswith("✗ merkle_root")


def test_clobbering_prose_runs_no_foreign_script(
    proofs_site: tuple[Path, Path, str, list[tuple[int, int]]], browser: Any, tmp_path: Path
) -> None:
    """A page holding <img name="currentScript" src="evil/…/verify.js"> and elements whose ids are
    the globals the scripts define or read: the verifier still finds its own script, loads nothing
    from elsewhere, and verifies as usual. The prose allow-list refuses such prose at build time;
    here it is written into the built page, so the scripts are put to the test on their own.
    (Names that shadow document.querySelectorAll or createElement break the theme's own bundle
    before ours runs: the allow-list is what keeps those out; the scripts never read them.)"""
    site, _, _, _ = proofs_site
    copy = tmp_path / "site"
    shutil.copytree(site, copy)
    page_path = copy / "concepts" / "licensed.html"
    page_html = page_path.read_text(encoding="utf-8")
    assert "</article>" in page_html
    page_path.write_text(page_html.replace("</article>", CLOBBER + "</article>", 1), encoding="utf-8")
    with serve(copy) as base, guarded_page(browser) as guard:
        page = guard.page
        page.goto(f"{base}concepts/licensed.html")
        assert page.evaluate("() => document.getElementsByName('currentScript').length") == 1
        results = _verify_every_button(page, "button.evidence-verify")
        assert results and all(state == "verified" for state, _, _ in results), results
        scripts = page.evaluate(
            "() => performance.getEntriesByType('resource').filter(e => e.initiatorType === 'script').map(e => e.name)"
            ".concat([...Document.prototype.querySelectorAll.call(document, 'script[src]')].map(s => s.src))"
        )
        assert scripts and not any("/evil/" in src for src in scripts)
        _clean(guard)


@pytest.mark.slow
def test_the_proof_benchmark_runs() -> None:
    """benchmarks/bench_reader.py --proofs at a tiny size: every excerpt it clicks verifies against
    a signed root (it stops otherwise), within the 64 KB the proof mode promises."""
    import subprocess
    import sys

    from _browser_helpers import REPO, require_browser

    require_browser()
    proc = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "bench_reader.py"), "--proofs", "--sizes", "0.05"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    rows = [line.split() for line in proc.stdout.splitlines() if line.startswith("0.05 MB")]
    assert [row[2] for row in rows] == ["signed", "proofs"]
    for row in rows:
        http_kb, disk_kb = float(row[5]), float(row[7])
        assert 0 < http_kb < 64 and 0 < disk_kb < 64


def _tampered_bundle(site: Path, sid: str, span: tuple[int, int], change: Any, tmp_path: Path) -> Path:
    from publisher.site.pages.proofs import _bundle_of, proof_script

    copy = tmp_path / "site"
    shutil.copytree(site, copy)
    path = copy / "sources" / sid / "proofs" / f"{span[0]}-{span[1]}.js"
    bundle = _bundle_of(path.read_bytes())
    change(bundle)
    path.write_bytes(proof_script(bundle))
    return copy


def _one_highlight(site: Path, sid: str, span: tuple[int, int], browser: Any) -> tuple[str, str]:
    button = f'button.evidence-verify[data-kind="highlight"][data-start="{span[0]}"][data-end="{span[1]}"]'
    with serve(site) as base, guarded_page(browser) as guard:
        guard.page.goto(f"{base}sources/{sid}.html")
        guard.page.click(button)
        state = wait_for_state(guard.page, button)
        return state, guard.page.get_attribute(button, "data-label") or ""


def _resign_nothing(bundle: dict[str, Any]) -> None:
    bundle["anchors"][0]["event"]["at"] = "2031-01-01T00:00:00Z"  # the signature no longer covers it


def _other_key(bundle: dict[str, Any]) -> None:
    import base64

    bundle["anchors"][0]["key"] = base64.b64encode(b"\x01" * 32).decode()


def _swap_path(bundle: dict[str, Any]) -> None:
    path = bundle["proof"]["paths"][0]
    path[0], path[1] = path[1], path[0]


def _wrong_size(bundle: dict[str, Any]) -> None:
    bundle["proof"]["tree_size"] += 1


def _other_record(bundle: dict[str, Any]) -> None:
    bundle["record"]["record_hash"] = "sha256:" + "0" * 64


@pytest.mark.parametrize(
    "change,label",
    [
        (_resign_nothing, "✗ anchor"),
        (_other_key, "✗ anchor"),
        (_other_record, "✗ anchor"),
        (_swap_path, "✗ merkle_root"),
        (_wrong_size, "✗ "),
    ],
    ids=["event edited", "another key", "another record", "swapped path", "wrong tree size"],
)
def test_a_forged_anchor_or_path_is_refused(
    proofs_site: tuple[Path, Path, str, list[tuple[int, int]]], browser: Any, tmp_path: Path, change: Any, label: str
) -> None:
    site, _, sid, ranges = proofs_site
    copy = _tampered_bundle(site, sid, ranges[0], change, tmp_path)
    state, got = _one_highlight(copy, sid, ranges[0], browser)
    assert state == "mismatch" and got.startswith(label), got


def test_without_a_signed_root_the_full_text_anchors_and_the_whole_record_verifies(
    tmp_path: Path, browser: Any
) -> None:
    """The default mode, unsigned: an excerpt's proof holds, nothing signs its root, so the button
    checks the whole record ("the full text"); "verify the whole record" also recomputes the root."""
    from _browser_helpers import make_astral_wiki

    wiki, sid, ranges = make_astral_wiki(tmp_path / "wiki")
    mkdocs_build(wiki, tmp_path / "site")
    with serve(tmp_path / "site") as base, guarded_page(browser) as guard:
        guard.page.goto(f"{base}sources/{sid}/")
        results = _verify_every_button(guard.page, "button.evidence-verify")
        # One button per highlight and the whole record's, and one per row of the cited-spans table.
        states = [state for state, _, _ in results]
        assert len(states) >= len(ranges) + 1 and set(states) == {"verified"}
        assert {anchor for _, anchor, _ in results} == {"full-text"}
        assert any("merkle_root matches" in detail for _, _, detail in results)
        guard.check_clean()
