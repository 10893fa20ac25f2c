"""Accessibility of every generated page type, checked with axe-core in a real Chromium.

axe-core comes from the ``axe-playwright-python`` package (its bundled ``axe.min.js``, injected
through Playwright; nothing is downloaded). Every page type the publisher generates or wraps is
checked: the home page and a hand-written page, the three indexes, a concept, a source page
showing its whole text and one showing context windows, a run's report, a concept showing claims
and the evidence matrix. No violation of
impact "serious" or "critical" may remain; the test names each by its rule id.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _browser_helpers import (
    copy_example_wiki,
    guarded_page,
    launched_browser,
    make_astral_wiki,
    mkdocs_build,
    serve,
)
from _policy import policy_of

pytestmark = pytest.mark.browser

BLOCKING = ("serious", "critical")


def _axe() -> Any:
    try:
        from axe_playwright_python.sync_playwright import Axe
    except ImportError as exc:  # pragma: no cover - in the test extra
        pytest.skip(f"axe-playwright-python is missing ({exc}); chromium accessibility tests skipped")
    return Axe()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_browser() as b:
        yield b


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The example wiki (whole source texts) and a wiki whose source page shows windows, served."""
    root = tmp_path_factory.mktemp("a11y")
    wiki = copy_example_wiki(root / "example")
    mkdocs_build(wiki, root / "example-site")
    windows, _, _ = make_astral_wiki(root / "windows", extra="extra:\n  evidence:\n    source_text: windows\n")
    mkdocs_build(windows, root / "windows-site")
    claimed = _claims_wiki(root / "claims")
    mkdocs_build(claimed, root / "claims-site")
    with (
        serve(root / "example-site") as example,
        serve(root / "windows-site") as windowed,
        serve(root / "claims-site") as claims,
    ):
        yield {
            "example": example,
            "windows": windowed,
            "claims": claims,
            "example_dir": str(root / "example-site"),
            "windows_dir": str(root / "windows-site"),
        }


def _claims_wiki(root: Path) -> Path:
    """A wiki of two real articles with one claim of each evidence status (the claims' pages)."""
    from _claims_helpers import CONCEPT, claims_wiki
    from _wiki_helpers import SHARED

    from publisher.wiki.assess import assess
    from publisher.wiki.claims.admission import Proposal
    from publisher.wiki.concepts import EpistemicStatus

    if not (SHARED / "corpus" / "evidence-inference" / "texts").is_dir():
        pytest.skip(f"../shared/corpus not present: expected {SHARED}/corpus")
    cw = claims_wiki(root, SHARED / "corpus")
    label = cw.labels[0]
    assess(
        cw.wiki,
        CONCEPT,
        Proposal("s1", "It helps.", EpistemicStatus.SUPPORTED, evidence=(label,)),
        signer=None,
        policy=policy_of(cw.wiki),
    )
    assess(
        cw.wiki,
        CONCEPT,
        Proposal("c1", "It harms.", EpistemicStatus.CONTRADICTED, evidence=(label,)),
        signer=None,
        policy=policy_of(cw.wiki),
    )
    partial = Proposal("p1", "It helps some.", EpistemicStatus.PARTIALLY_SUPPORTED, ("in adults",), (label,))
    assess(cw.wiki, CONCEPT, partial, signer=None, policy=policy_of(cw.wiki))
    return cw.wiki


def _pages(sites: dict[str, str]) -> dict[str, str]:
    example = Path(sites["example_dir"])
    windows = Path(sites["windows_dir"])

    def first(folder: Path, pattern: str) -> str:
        hits = sorted(p for p in folder.glob(pattern) if p.name != "index.html")
        assert hits, f"no {pattern} under {folder}"
        return hits[0].relative_to(folder).as_posix()

    window_page = sorted(windows.glob("sources/src-*/index.html"))[0].relative_to(windows).as_posix()
    return {
        "home": sites["example"] + "index.html",
        "hand-written": sites["example"] + "reading.html",
        "concepts index": sites["example"] + "concepts/index.html",
        "sources index": sites["example"] + "sources/index.html",
        "runs index": sites["example"] + "runs/index.html",
        "concept": sites["example"] + first(example, "concepts/*.html"),
        "source (whole text)": sites["example"] + first(example, "sources/src-*.html"),
        "source (windows)": sites["windows"] + window_page.removesuffix("index.html"),
        "report": sites["example"] + first(example, "runs/*/report.html"),
        "concept with claims": sites["claims"] + "concepts/trials/",
        "evidence matrix": sites["claims"] + "claims/",
    }


KINDS = [
    "home",
    "hand-written",
    "concepts index",
    "sources index",
    "runs index",
    "concept",
    "source (whole text)",
    "source (windows)",
    "report",
    "concept with claims",
    "evidence matrix",
]


@pytest.mark.parametrize("kind", KINDS)
def test_no_serious_accessibility_violation(kind: str, sites: dict[str, str], browser: Any) -> None:
    axe = _axe()
    url = _pages(sites)[kind]
    with guarded_page(browser) as guard:
        page = guard.page
        page.goto(url)
        page.wait_for_load_state("load")
        if kind.startswith("source (") or kind in ("concept", "report", "concept with claims"):
            page.wait_for_selector("button.evidence-verify", state="attached")
        if kind == "source (windows)":
            assert page.locator("pre.evidence-window").count() > 0
        results = axe.run(page)
        blocking = [
            f"{v['id']} ({v['impact']}): {len(v['nodes'])} node(s), e.g. {v['nodes'][0]['html'][:120]}"
            for v in results.response["violations"]
            if v["impact"] in BLOCKING
        ]
        assert blocking == [], f"{kind} {url}:\n" + "\n".join(blocking)
        guard.check_clean()


def test_the_check_finds_a_serious_violation(sites: dict[str, str], browser: Any) -> None:
    """The check is live: a button without a name, added to a page, is reported."""
    axe = _axe()
    with guarded_page(browser) as guard:
        page = guard.page
        page.goto(_pages(sites)["concept"])
        page.evaluate(
            "() => { const b = document.createElement('button'); document.querySelector('article').append(b); }"
        )
        ids = {v["id"] for v in axe.run(page).response["violations"] if v["impact"] in BLOCKING}
        assert "button-name" in ids
