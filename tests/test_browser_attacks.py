"""Attacks on a published evidence site, in a real Chromium.

Each class is attacked with several payloads, and each attack must end one of two ways: the
build refuses it and the published site stays byte-identical, or check-site refuses the edited
site. Either way no dialog fires in the browser and no forged text is shown as verified:

* build time: script, handlers and look-alikes in concept prose, a footnote quoting a source
  after an unclosed fence, a forged verify control;
* after the build: injected scripts, handlers, ``javascript:`` links, ``<base>``, style rules
  (the page's Content-Security-Policy stops them);
* the in-browser verifier: a ``data-record`` pointing at a forged record, an unsealed record, a
  record answered by a redirect, a verifier loaded from elsewhere;
* exact characters: every excerpt, highlight, window and report excerpt shows exactly the
  snapshot slice, CR and CRLF included.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from _browser_helpers import guarded_page, launched_browser, serve, wait_for_state
from _policy import policy_of
from _wiki_helpers import tree_digest
from test_site_files import CR_TEXT, make_cr_wiki

from publisher.kernel.store import build_record
from publisher.site.checks.checksite import check_site

pytestmark = pytest.mark.browser

EXCERPTS = "[data-source-id][data-start][data-end]:not(button)"


@dataclass
class Built:
    wiki: Path
    site: Path
    source_id: str
    ranges: list[tuple[int, int]]


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
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Built]:
    out = {}
    for mode in ("full", "windows"):
        root = tmp_path_factory.mktemp(f"cr-{mode}")
        wiki, sid, ranges = make_cr_wiki(root / "wiki", mode)
        done = _build(wiki, root / "site")
        assert done.returncode == 0, done.stderr
        out[mode] = Built(wiki, root / "site", sid, ranges)
    return out


def _copy(site: Path, target: Path) -> Path:
    shutil.copytree(site, target)
    for path in target.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    return target


def _concept(site: Path) -> Path:
    return next(site.glob("concepts/*/index.html"))


def _url(base: str, site: Path, page: Path) -> str:
    return base + page.parent.relative_to(site).as_posix() + "/"


def _watch(page: Any) -> list[str]:
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    return dialogs


def _verify_all(page: Any) -> list[tuple[str, str]]:
    """Click every verify control of the page; (its label, the text it verified) once settled."""
    buttons = page.locator("button.evidence-verify")
    out = []
    for i in range(buttons.count()):
        button = buttons.nth(i)
        button.click()
        page.wait_for_function(
            "(b) => ['verified', 'mismatch', 'error'].includes(b.getAttribute('data-state'))",
            arg=button.element_handle(),
            timeout=15_000,
        )
        out.append((str(button.get_attribute("data-state")), str(button.get_attribute("data-source-id"))))
    return out


# ---------------------------------------------------------------------------------------------
# exact characters


@pytest.mark.parametrize("mode", ["full", "windows"])
def test_every_page_type_shows_exactly_the_snapshot_slice(built: dict[str, Built], browser: Any, mode: str) -> None:
    b = built[mode]
    slices = {(s, e): CR_TEXT[s:e] for s, e in b.ranges}
    with serve(b.site) as base, guarded_page(browser) as guard:
        page = guard.page
        for target in (_concept(b.site), b.site / "runs" / "cr" / "report" / "index.html"):
            page.goto(_url(base, b.site, target))
            shown = page.evaluate(
                f"""() => Array.from(document.querySelectorAll("{EXCERPTS}"), (el) =>
                    [Number(el.getAttribute('data-start')), Number(el.getAttribute('data-end')), el.textContent])"""
            )
            assert shown and all(text == CR_TEXT[s:e] for s, e, text in shown), shown
            assert {(s, e) for s, e, _ in shown} == set(slices)
            assert {state for state, _ in _verify_all(page)} == {"verified"}
        source = b.site / "sources" / b.source_id / "index.html"
        page.goto(_url(base, b.site, source))
        for (s, e), text in slices.items():
            joined = page.evaluate(
                """(token) => Array.from(document.querySelectorAll('mark.evidence-span'))
                    .filter((m) => (m.getAttribute('data-spans') || '').split(' ').includes(token))
                    .map((m) => m.textContent).join('')""",
                f"{s}-{e}",
            )
            assert joined == text
        blocks = page.evaluate(
            """() => Array.from(document.querySelectorAll('pre.evidence-snapshot, pre.evidence-window'), (p) =>
                [Number(p.getAttribute('data-window-start') || 0), p.textContent])"""
        )
        if mode == "full":
            assert blocks == [[0, CR_TEXT]]
        else:
            assert blocks and all(CR_TEXT[start : start + len(text)] == text for start, text in blocks)
        assert {state for state, _ in _verify_all(page)} == {"verified"}
        guard.check_clean()


# ---------------------------------------------------------------------------------------------
# after the build: the Content-Security-Policy

SCRIPT_PAYLOADS = [
    "<script>alert('inline'); document.title = 'pwned';</script>",
    '<img src="x.png" alt="" onerror="alert(\'onerror\'); document.title = \'pwned\'">',
    '<svg><script>alert("svg")</script><animate onbegin="alert(\'animate\')" attributeName="x" dur="1s"/></svg>',
    "<a id=\"js-link\" href=\"javascript:alert('link');document.title='pwned'\">click me</a>",
    "<iframe srcdoc=\"&lt;script&gt;parent.alert('frame')&lt;/script&gt;\"></iframe>",
    "<object data=\"data:text/html,&lt;script&gt;alert('object')&lt;/script&gt;\"></object>",
    '<base href="https://evil.example/">',
    "<details open ontoggle=\"alert('toggle')\"><summary>x</summary></details>",
]


def test_injected_code_does_not_run_and_check_site_refuses_it(
    built: dict[str, Built], browser: Any, tmp_path: Path
) -> None:
    b = built["full"]
    site = _copy(b.site, tmp_path / "site")
    concept = _concept(site)
    html = concept.read_text(encoding="utf-8")
    concept.write_text(html.replace("</article>", "".join(SCRIPT_PAYLOADS) + "</article>", 1), encoding="utf-8")
    with serve(site) as base, guarded_page(browser) as guard:
        page = guard.page
        dialogs = _watch(page)
        page.goto(_url(base, site, concept))
        page.wait_for_timeout(600)
        page.locator("#js-link").click()
        page.wait_for_timeout(300)
        assert dialogs == []
        assert page.title() != "pwned"
        assert any("Content Security Policy" in e for e in guard.errors)
        # the verifier still loads from this site, and still verifies the true excerpts
        assert {state for state, _ in _verify_all(page)} == {"verified"}
        assert guard.offsite == []
    found = check_site(site, b.wiki, policy=policy_of(b.wiki)).findings
    codes = {f.code for f in found}
    # The file no longer matches the manifest, and a script inside the page's content is malformed
    # markup the seal refuses (it is never hashed into a policy, so the policy itself still matches).
    assert "C-SITE-FILE" in codes and "EXCERPT_MISMATCH" in codes, found


def test_injected_style_rules_do_not_apply(built: dict[str, Built], browser: Any, tmp_path: Path) -> None:
    b = built["full"]
    site = _copy(b.site, tmp_path / "site")
    concept = _concept(site)
    forged = '.evidence-excerpt{visibility:hidden}.evidence-excerpt::after{content:"forged text"}'
    html = concept.read_text(encoding="utf-8").replace("</head>", f"<style>{forged}</style></head>", 1)
    html = html.replace('class="evidence-excerpt"', 'style="display:none" class="evidence-excerpt"', 1)
    concept.write_text(html, encoding="utf-8")
    with serve(site) as base, guarded_page(browser) as guard:
        page = guard.page
        page.goto(_url(base, site, concept))
        styles = page.evaluate(
            """() => Array.from(document.querySelectorAll('.evidence-excerpt'), (el) => [
                getComputedStyle(el).visibility, getComputedStyle(el).display,
                getComputedStyle(el, '::after').content])"""
        )
        assert styles and all(v == "visible" and d != "none" and c in ("none", "normal") for v, d, c in styles)
    codes = {f.code for f in check_site(site, b.wiki, policy=policy_of(b.wiki)).findings}
    assert {"C-SITE-FILE", "C-CSP"} <= codes


# ---------------------------------------------------------------------------------------------
# the in-browser verifier


def _forged_record(text: str) -> dict[str, Any]:
    return build_record(
        url="https://example.org/cr",
        text=text,
        title="A title",
        retrieved_at="2030-01-02T03:04:05Z",
        access="full_text",
        origin="pmc",
        paper={"pmid": "77", "doi": None, "pmcid": None},
        asset=None,
        sections=None,
        pages=None,
    )


def test_a_data_record_attribute_cannot_bring_its_own_record(
    built: dict[str, Built], browser: Any, tmp_path: Path
) -> None:
    b = built["full"]
    site = _copy(b.site, tmp_path / "site")
    concept = _concept(site)
    s, e = b.ranges[0]
    forged_text = CR_TEXT[:s] + "Forged, self-consistent text".ljust(e - s, ".") + CR_TEXT[e:]
    record = _forged_record(forged_text)
    data_url = "data:application/json," + urllib.parse.quote(json.dumps(record))
    html = concept.read_text(encoding="utf-8")
    element = f'data-source-id="{b.source_id}" data-start="{s}" data-end="{e}">'
    assert element in html
    start = html.index(element) + len(element)
    stop = html.index("</span>", start)
    html = (
        html[:start].replace(
            f'<span class="evidence-excerpt" {element}',
            f'<span data-record="{data_url}"><span class="evidence-excerpt" '
            f'data-source-id="{record["source_id"]}" data-start="{s}" data-end="{e}">',
        )
        + forged_text[s:e]
        + "</span></span>"
        + html[stop + len("</span>") :]
    )
    # whoever edits the page can drop its policy too (which would refuse a data: fetch itself)
    html = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html, count=1)
    concept.write_text(html, encoding="utf-8")
    with serve(site) as base, guarded_page(browser) as guard:
        page = guard.page
        page.goto(_url(base, site, concept))
        selector = f'button.evidence-verify[data-source-id="{record["source_id"]}"]'
        page.locator(selector).click()
        assert wait_for_state(page, selector) == "error"
        assert not any(r.startswith("data:") for r in guard.requests)
    assert not check_site(site, b.wiki, policy=policy_of(b.wiki)).ok


def test_an_unsealed_record_is_never_verified(built: dict[str, Built], browser: Any, tmp_path: Path) -> None:
    b = built["full"]
    site = _copy(b.site, tmp_path / "site")
    path = site / "sources" / b.source_id / "record.json"
    record = json.loads(path.read_bytes())
    del record["record_hash"]
    path.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
    with serve(site) as base, guarded_page(browser) as guard:
        guard.page.goto(_url(base, site, _concept(site)))
        states = _verify_all(guard.page)
        assert states and {state for state, _ in states} == {"mismatch"}
    assert not check_site(site, b.wiki, policy=policy_of(b.wiki)).ok


def test_a_record_answered_by_a_redirect_is_refused(built: dict[str, Built], browser: Any, tmp_path: Path) -> None:
    b = built["full"]
    site = _copy(b.site, tmp_path / "site")
    path = site / "sources" / b.source_id / "record.json"
    path.unlink()
    path.mkdir()  # the test server answers a folder without its slash with a redirect
    (path / "index.html").write_text(json.dumps(_forged_record(CR_TEXT)), encoding="utf-8")
    with serve(site) as base, guarded_page(browser) as guard:
        guard.page.goto(_url(base, site, _concept(site)))
        states = _verify_all(guard.page)
        assert states and {state for state, _ in states} == {"error"}
    assert not check_site(site, b.wiki, policy=policy_of(b.wiki)).ok


def test_a_verifier_loaded_from_elsewhere_refuses_to_fetch(
    built: dict[str, Built], browser: Any, tmp_path: Path
) -> None:
    b = built["full"]
    site = _copy(b.site, tmp_path / "site")
    (site / "elsewhere").mkdir()
    shutil.copyfile(site / "assets" / "publisher" / "verify.js", site / "elsewhere" / "verify.js")
    concept = _concept(site)
    html = concept.read_text(encoding="utf-8")
    concept.write_text(html.replace("../../assets/publisher/verify.js", "../../elsewhere/verify.js"), encoding="utf-8")
    with serve(site) as base, guarded_page(browser) as guard:
        guard.page.goto(_url(base, site, concept))
        states = _verify_all(guard.page)
        assert states and {state for state, _ in states} == {"error"}
        assert not any(r.endswith("record.json") for r in guard.requests)
    assert not check_site(site, b.wiki, policy=policy_of(b.wiki)).ok


# ---------------------------------------------------------------------------------------------
# build time


def _build_time_payloads(sid: str, start: int, end: int) -> dict[str, str]:
    note = f'[^forged]: {sid}#{start}-{end} "Forged quotation."'
    return {
        "script": "\n<script>alert('built')</script>\n",
        "handler": '\n<img src="x.png" alt="" onerror="alert(\'built\')">\n',
        "look-alike": f'\n<span class="evidence-excerpt" data-source-id="{sid}" data-start="{start}" '
        f'data-end="{end}">Forged quotation.</span>\n',
        "verify-control": '\n<button class="evidence-verify" data-state="verified" data-label="✓ verified"></button>\n',
        "unclosed-fence": f"\nCited.[^forged]\n\n```\n{note}\n",
        "svg": '\n<svg onload="alert(\'built\')"><circle r="4"/></svg>\n',
    }


def test_build_time_attacks_are_refused_and_the_site_stays(
    built: dict[str, Built], browser: Any, tmp_path: Path
) -> None:
    b = built["full"]
    wiki = tmp_path / "wiki"
    shutil.copytree(b.wiki, wiki, symlinks=True)
    site = _copy(b.site, tmp_path / "site")
    before = tree_digest(site)
    concept_file = next((wiki / "concepts").glob("*.md"))
    original = concept_file.read_text(encoding="utf-8")
    s, e = b.ranges[0]
    for name, payload in _build_time_payloads(b.source_id, s, e).items():
        concept_file.write_text(original + payload, encoding="utf-8")
        done = _build(wiki, site)
        assert done.returncode != 0, name
        assert tree_digest(site) == before, name
    with serve(site) as base, guarded_page(browser) as guard:
        page = guard.page
        dialogs = _watch(page)
        page.goto(_url(base, site, _concept(site)))
        assert "Forged quotation" not in page.content()
        assert {state for state, _ in _verify_all(page)} == {"verified"}
        assert dialogs == []
        guard.check_clean()
