"""The seal's scanner against Chromium: the same pages, the same evidence-looking elements, the same text.

Each page (hostile markup, the site's own elements, and several hundred random mutations of
them) is served to Chromium as a real navigation (scripting on, as for a reader, but a
Content-Security-Policy header keeps the page's scripts from running) and read in the browser:
every element that looks like evidence, its tag, offsets, class and text content, and whatever
shows content the DOM does not expose to a query (templates, shadow roots, frames, noscript).
The scanner's parser must see exactly the same; where it does not, the scanner must refuse the
page. Either way no text reaches a published page unless the browser shows that very text.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from _browser_helpers import launched_browser
from test_seal_scan import _NOISE, EX, HOSTILE, OTHER, SID, _page

from publisher.site.checks.scan import ascii_lower, class_tokens, parse_page, scan_page
from publisher.site.checks.seal import seal_page
from publisher.site.pages.highlight import snapshot_html, windows_html
from publisher.site.pages.markup import EVIDENCE_ATTRS, excerpt_html

pytestmark = pytest.mark.browser

_READ = """(attrs) => {
  const lower = (s) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());
  const looks = (el) => attrs.some((a) => el.hasAttribute(a))
    || lower(el.getAttribute("class") || "").split(/[\\t\\n\\f\\r ]+/).some((c) => c.startsWith("evidence-"));
  const all = Array.from(document.querySelectorAll("*"));
  const out = all.filter(looks).map((el) => [
    lower(el.localName), el.getAttribute("data-source-id"), el.getAttribute("data-start"),
    el.getAttribute("data-end"), el.getAttribute("class"), el.textContent, el.children.length,
  ]);
  const hidden = all.filter((el) => el.shadowRoot).length
    + document.querySelectorAll("template, noscript, iframe, frame, frameset, object, embed").length;
  return { out, hidden };
}"""


def _lexbor_view(page: str) -> dict[str, Any]:
    """What the scanner's parser makes of the page, in the shape the browser reports."""
    tree = parse_page(page)
    out = []
    for node in tree.css("*"):
        attrs = node.attributes
        if not (any(a in attrs for a in EVIDENCE_ATTRS) or any(c.startswith("evidence-") for c in class_tokens(node))):
            continue
        children = sum(1 for c in node.iter(include_text=False) if c.is_element_node)
        out.append(
            [
                ascii_lower(node.tag or ""),
                attrs.get("data-source-id"),
                attrs.get("data-start"),
                attrs.get("data-end"),
                attrs.get("class"),
                node.text(deep=True),
                children,
            ]
        )
    hidden = len(tree.css("template, noscript, iframe, frame, frameset, object, embed"))
    return {"out": out, "hidden": hidden}


def _refused(page: str) -> bool:
    return bool(seal_page(scan_page(page), "p/index.html", {}, {}, None, Counter()).findings)


class _Chromium:
    """One browser page that loads any HTML as a real navigation from http://scan.test/."""

    def __init__(self, browser: Any) -> None:
        self.context = browser.new_context(service_workers="block")
        self.page = self.context.new_page()
        self.body = ""
        self.dialogs: list[str] = []
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))

        def fulfil(route: Any) -> None:
            if route.request.url == "http://scan.test/page.html":
                route.fulfill(
                    status=200,
                    headers={
                        "Content-Type": "text/html; charset=utf-8",
                        "Content-Security-Policy": "script-src 'none'; default-src 'none'",
                    },
                    body=self.body.encode("utf-8", errors="surrogatepass"),
                )
            else:
                route.abort("blockedbyclient")

        self.context.route("**/*", fulfil)

    def read(self, page: str) -> dict[str, Any]:
        self.body = page
        self.page.goto("http://scan.test/page.html", wait_until="domcontentloaded")
        return dict(self.page.evaluate(_READ, list(EVIDENCE_ATTRS)))


@pytest.fixture(scope="module")
def chromium() -> Iterator[_Chromium]:
    with launched_browser() as browser:
        reader = _Chromium(browser)
        yield reader
        reader.context.close()


def _agree(chromium: _Chromium, page: str) -> None:
    browser = chromium.read(page)
    ours = _lexbor_view(page)
    if browser == ours:
        return
    assert _refused(page), f"browser and scanner disagree, the page was not refused:\n{page}\n{browser}\n{ours}"


def test_hostile_markup_reads_the_same_in_chromium(chromium: _Chromium) -> None:
    for markup, _ in HOSTILE:
        _agree(chromium, _page(markup))
    assert chromium.dialogs == []


def test_the_sites_own_elements_read_the_same_in_chromium(chromium: _Chromium) -> None:
    text = "Line one\r\nline two\rthree & <four> \"five\" 'six' 𝛼👍🏽 e\u0301\n\n\tend"
    page = _page(
        "<p>"
        + str(excerpt_html(SID, 0, len(text), text))
        + "</p>"
        + str(snapshot_html(SID, text, {(0, 9), (5, 20), (21, len(text))}))
        + str(windows_html(OTHER, text, {(10, 14)}, 3))
    )
    browser = chromium.read(page)
    assert browser == _lexbor_view(page)
    texts = [row[5] for row in browser["out"] if row[1] == SID and row[0] == "span"]
    assert texts == [text]


def test_mutated_pages_read_the_same_in_chromium_or_are_refused(chromium: _Chromium) -> None:
    rng = random.Random(20261201)
    base = _page(
        "<p>"
        + str(excerpt_html(SID, 1, 4, "a\rc"))
        + f"</p><p><span {EX}>abc</span></p>"
        + str(snapshot_html(SID, "x\r\nyz" * 3, {(1, 4)}))
        + str(windows_html(OTHER, "0123456789", {(2, 5)}, 1))
        + "".join(m for m, _ in HOSTILE[:12])
    )
    for _ in range(400):
        chars = list(base)
        for _ in range(rng.randint(1, 6)):
            at = rng.randrange(len(chars))
            if rng.random() < 0.5:
                del chars[at]
            else:
                chars.insert(at, rng.choice(_NOISE))
        _agree(chromium, "".join(chars))
    assert chromium.dialogs == []
