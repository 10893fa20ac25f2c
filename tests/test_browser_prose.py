"""Nothing on a page can pass for verified evidence, in a real Chromium (Debian's).

Per class, several payloads: DOM clobbering (an ``id``/``name`` that would shadow the theme's
``#__config`` or ``document.currentScript``), active files from ``docs/`` (a script, an XML
document with XHTML script, a namespace-prefixed SVG script), prose that imitates the verified
look (``==highlight==``, a ``✓ verified`` button or badge, a span reference in fullwidth form),
and a ``site_dir`` over the concepts. Each build is refused and the published site stays
byte-identical; the site, opened in the browser, raises no dialog, logs no marker and shows no
forged text. And an honest span cut after a negation is published with the negation shown,
unhighlighted, outside the citation.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _browser_helpers import guarded_page, launched_browser, promote_one_source, serve
from _wiki_helpers import build_wiki, leftovers, make_wiki, refused_build, tree_digest

pytestmark = pytest.mark.browser

MARKER = "PWNED-7f3a"
TEXT = (
    "Methods. Adolescents were randomised to group CBT or waiting list. "
    "No significant differences were found between the two groups at 12 weeks. "
    "Follow-up was complete."
)
CUT = TEXT.index("significant")
CUT_END = TEXT.index(" at 12 weeks")

CLASSES: dict[str, dict[str, str]] = {
    "clobbering": {
        "docs/clobber.md": "# Clobber\n\n"
        f'<img name="currentScript" src="x.png" alt="">\n\n'
        f'<div id="__config">{{"base": ".", "search": "clobber.js", "x": "{MARKER}"}}</div>\n\n'
        "## Config {#__config}\n\n"
        f'<form name="verify"><p>{MARKER}</p></form>\n',
    },
    "active-files": {
        "docs/record.js": f"alert('{MARKER}')",
        "docs/feed.xml": f'<html xmlns="http://www.w3.org/1999/xhtml"><script>alert("{MARKER}")</script></html>',
        "docs/page.xht": f'<html xmlns="http://www.w3.org/1999/xhtml"><script>alert("{MARKER}")</script></html>',
        "docs/logo.svg": '<svg xmlns="http://www.w3.org/2000/svg"><s:script xmlns:s="http://www.w3.org/2000/svg">'
        f"alert('{MARKER}')</s:script></svg>",
    },
    "looks-verified": {
        "docs/forged.md": "# Forged\n\n"
        f"=={MARKER} no harm was found in any trial.== [source](sources/)\n\n"
        f"<button disabled>✓ verified {MARKER}</button>\n\n"
        f'!!! success "✓ verified excerpt"\n\n    {MARKER} invented text.\n\n'
        f"Cited as src-{'d' * 64}＃12‐30 {MARKER}.\n",
    },
}


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_browser() as b:
        yield b


def _wiki(root: Path) -> tuple[Path, str]:
    extensions = ("footnotes", "attr_list", "md_in_html", "admonition", "pymdownx.mark", "toc")
    wiki = make_wiki(root / "wiki", extensions=extensions)
    yml = wiki / "mkdocs.yml"
    yml.write_text(
        yml.read_text(encoding="utf-8").replace(
            "  name: material\n", "  name: material\n  features:\n    - content.footnote.tooltips\n"
        ),
        encoding="utf-8",
    )
    sid = promote_one_source(
        wiki,
        "negation",
        "https://example.org/trial",
        TEXT,
        [(CUT, CUT_END)],
        pmid="5151",
        title="A trial",
        question="Does group CBT help?",
    )
    build_wiki(wiki)
    return wiki, sid


def _open_everything(browser: Any, site: Path) -> tuple[list[str], str]:
    """Every page of the site opened in turn: dialogs raised, and all text shown."""
    dialogs: list[str] = []
    shown = []
    with serve(site) as base, guarded_page(browser) as guard:
        page = guard.page
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        for path in sorted(site.rglob("*.html")):
            page.goto(base + path.relative_to(site).as_posix())
            for button in page.locator("button.evidence-verify").all():
                button.click()
            page.wait_for_timeout(50)
            shown.append(page.inner_text("body"))
        assert not any(MARKER in e for e in guard.errors), guard.errors
    return dialogs, "\n".join(shown)


@pytest.mark.parametrize("kind", sorted(CLASSES))
def test_each_class_is_refused_at_build_and_the_site_shows_nothing_of_it(
    tmp_path: Path, browser: Any, kind: str
) -> None:
    wiki, _ = _wiki(tmp_path)
    before = tree_digest(wiki / "site")
    for rel, content in CLASSES[kind].items():
        (wiki / rel).write_text(content, encoding="utf-8")
    findings = refused_build(wiki)
    assert {(f.check, f.file) for f in findings} == {("C-PAGE-PROSE", rel) for rel in CLASSES[kind]}
    assert tree_digest(wiki / "site") == before and leftovers(wiki) == []
    dialogs, shown = _open_everything(browser, wiki / "site")
    assert dialogs == [] and MARKER not in shown


def test_a_site_dir_over_the_concepts_is_refused_and_keeps_them(tmp_path: Path, browser: Any) -> None:
    wiki, _ = _wiki(tmp_path)
    concepts = tree_digest(wiki / "concepts")
    yml = wiki / "mkdocs.yml"
    yml.write_text(yml.read_text(encoding="utf-8") + "site_dir: concepts\n", encoding="utf-8")
    assert [(f.check, f.field) for f in refused_build(wiki)] == [("C-CONFIG", "site_dir")]
    assert tree_digest(wiki / "concepts") == concepts
    dialogs, _ = _open_everything(browser, wiki / "site")
    assert dialogs == []


def test_a_span_cut_after_a_negation_shows_the_negation_outside_the_highlight(tmp_path: Path, browser: Any) -> None:
    wiki, sid = _wiki(tmp_path)
    site = wiki / "site"
    concept = next(site.glob("concepts/*/index.html"))
    with serve(site) as base, guarded_page(browser) as guard:
        page = guard.page
        page.goto(base + concept.parent.relative_to(site).as_posix() + "/")
        found = page.evaluate(
            """(sid) => {
                const el = document.querySelector(`.evidence-excerpt[data-source-id="${sid}"]`);
                const before = el.previousElementSibling;
                const after = [...el.parentElement.querySelectorAll(".evidence-context")].find(
                    (n) => el.compareDocumentPosition(n) & Node.DOCUMENT_POSITION_FOLLOWING);
                const bg = (n) => getComputedStyle(n).backgroundColor;
                const visible = (n) => { const r = n.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
                return {
                    excerpt: el.textContent,
                    before: before && before.className,
                    beforeText: before && before.textContent,
                    after: after && after.className, afterText: after && after.textContent,
                    excerptBg: bg(el), beforeBg: before && bg(before), shown: visible(before),
                    inside: el.contains(before),
                    footnote: el.closest("li") ? el.closest("li").textContent : "",
                };
            }""",
            sid,
        )
        guard.check_clean()
    assert found["excerpt"] == TEXT[CUT:CUT_END]
    assert found["before"] == "evidence-context" and found["beforeText"].endswith("No ")
    assert found["after"] == "evidence-context" and found["afterText"] == " at 12 weeks."
    assert found["shown"] and not found["inside"]
    assert "No significant differences" in found["footnote"]  # the footnote, which the tooltip shows
    assert found["excerptBg"] != found["beforeBg"]  # the citation is highlighted, its context is not


def test_the_report_page_shows_the_negation_outside_the_highlight(tmp_path: Path, browser: Any) -> None:
    wiki, sid = _wiki(tmp_path)
    site = wiki / "site"
    report = next(site.glob("runs/negation/**/index.html"))
    with serve(site) as base, guarded_page(browser) as guard:
        page = guard.page
        page.goto(base + report.parent.relative_to(site).as_posix() + "/")
        shown = page.evaluate(
            """(sid) => Array.from(
              document.querySelectorAll(`[data-source-id="${sid}"][data-start]:not(button)`), (el) => {
                const before = el.previousElementSibling;
                return [el.textContent, before ? before.className : null, before ? before.textContent : null,
                        getComputedStyle(el).backgroundColor, before ? getComputedStyle(before).backgroundColor : null];
            })""",
            sid,
        )
        guard.check_clean()
    assert shown
    for excerpt, kind, before, excerpt_bg, before_bg in shown:
        assert excerpt == TEXT[CUT:CUT_END] and kind == "evidence-context" and before.endswith("No ")
        assert excerpt_bg != before_bg
