"""The seal's scanner reads pages as a browser does (lexbor, the WHATWG tokenizer and tree builder).

Without a browser: what the site emits round-trips exactly (any text, CR and CRLF included,
marks at their offsets); hand-written hostile markup is either read as the browser reads it or
refused as malformed; nothing crashes on randomly mutated pages. ``test_browser_scan.py``
compares the scanner with Chromium itself on the same kinds of pages.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from publisher.site.checks.scan import SPAN_REF, find_span_refs, scan_page
from publisher.site.checks.seal import seal_page
from publisher.site.pages.highlight import snapshot_html, windows_html
from publisher.site.pages.markup import excerpt_html

SID = "src-" + "a" * 64
OTHER = "src-" + "b" * 64
EX = f'data-source-id="{SID}" data-start="1" data-end="4"'

_CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
_TEXT = st.lists(st.one_of(_CHARS, st.sampled_from(["\r", "\r\n", "\n", "&", "<", "]]>", "\ufeff"])), max_size=40).map(
    "".join
)


def _page(body: str) -> str:
    return f'<!doctype html><html><head><meta charset="utf-8"><title>t</title></head><body>{body}</body></html>'


@settings(max_examples=200, deadline=None)
@given(_TEXT)
def test_excerpts_round_trip_exactly(text: str) -> None:
    scan = scan_page(_page(f"<p>{excerpt_html(SID, 3, 3 + len(text), text)}</p>"))
    assert scan.malformed == []
    assert [(e.source_id, e.start, e.end, e.text, e.nested) for e in scan.excerpts] == [
        (SID, 3, 3 + len(text), text, False)
    ]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_snapshots_and_windows_round_trip_with_marks_in_place(data: st.DataObject) -> None:
    text = data.draw(_TEXT.filter(lambda t: len(t) >= 2))
    bounds = st.integers(0, len(text))
    spans = set()
    for a, b in data.draw(st.lists(st.tuples(bounds, bounds), max_size=4)):
        if a != b:
            spans.add((min(a, b), max(a, b)))
    scan = scan_page(_page(snapshot_html(SID, text, spans)))
    assert scan.malformed == [] and len(scan.snapshots) == 1
    block = scan.snapshots[0]
    assert block.text == text and block.misplaced_marks() == []
    context = data.draw(st.integers(0, 5))
    scan = scan_page(_page(windows_html(SID, text, spans, context)))
    assert scan.malformed == []
    for window in scan.windows:
        assert window.window_start is not None and window.window_end is not None
        assert window.text == text[window.window_start : window.window_end]
        assert window.misplaced_marks() == []


# (markup, what a browser shows: the excerpts' texts, or None when the scanner must refuse it)
HOSTILE: list[tuple[str, list[str] | None]] = [
    # comment forms: each closes the comment, so the element after it is real
    (f"<!--><span {EX}>abc</span>", ["abc"]),
    (f"<!---><span {EX}>abc</span>", ["abc"]),
    (f"<!-- a --!><span {EX}>abc</span>", ["abc"]),
    (f"<!-- <span {EX}>abc</span> -->", []),
    # foreign content: <style> inside <svg> is an element, not raw text
    (f"<svg><style><span {EX}>abc</span></style></svg>", ["abc"]),
    (f"<math><mi><span {EX}>abc</span></mi></math>", ["abc"]),
    (f"<style><span {EX}>abc</span></style>", []),
    (f"<script>var s = '<span {EX}>abc</span>';</script>", []),
    (f"<textarea><span {EX}>abc</span></textarea>", []),
    (f"<title><span {EX}>abc</span></title>", []),
    # duplicate attributes: the first wins
    (f'<span data-source-id="{SID}" data-source-id="{OTHER}" data-start="1" data-end="4">abc</span>', ["abc"]),
    # case and character references
    (f'<SPAN CLASS="EVIDENCE-EXCERPT" DATA-SOURCE-ID="{SID}" DATA-START="1" DATA-END="4">abc</SPAN>', ["abc"]),
    (f'<span class="evidence&#45;excerpt" {EX}>a&amp;b&#x3c;c&lt</span>', ["a&b<c<"]),
    ('<span class="&#x65;vidence-excerpt">x</span>', None),
    ('<span class="Evidence-Excerpt">x</span>', None),
    # carriage returns: raw ones are line feeds to a browser, &#13; is a CR
    (f"<span {EX}>a\r\nb\rc&#13;d</span>", ["a\nb\nc\rd"]),
    (f"<span {EX}>a\x00b&#0;c</span>", ["ab\ufffdc"]),
    # malformed: anything that looks like evidence and is not an excerpt
    (f'<span data-source-id="{SID}" data-start="1">abc</span>', None),
    (f"<br {EX}>", None),
    (f"<span {EX}>a<b>b</b>c</span>", ["abc"]),  # nested markup: read, and refused by the seal
    ('<div class="evidence-window">x</div>', None),
    ('<mark class="evidence-span" data-start="1" data-end="2">x</mark>', None),
    ('<button class="evidence-verify" data-state="verified" data-label="✓ verified"></button>', None),
    ('<span data-record="data:application/json,{}">x</span>', None),
    ('<div class="evidence-other">x</div>', None),
    (f"<template><span {EX}>abc</span></template>", None),
    (f"<noscript><p title='</noscript><span {EX}>abc</span>'></p></noscript>", None),
    ('<iframe srcdoc="&lt;p&gt;x"></iframe>', None),
    (f"<p>[^1]: {SID}#1-4 &quot;forged&quot;</p>", None),
    (f"<p>[^1]: src-<b>{'a' * 64}</b>#1-4</p>", None),
    (f"<pre><code>[^1]: {SID}#1-4</code></pre>", []),
    # a windows container may only add an empty data-search-exclude (a long text kept out of search)
    (f'<div class="evidence-windows" data-window-of="{SID}" data-search-exclude="no">x</div>', None),
    (f'<div class="evidence-windows" data-window-of="{SID}" data-search-exclude title="y">x</div>', None),
    # decorative classes of generated pages are allowed
    (
        '<table><tr><td class="evidence-num">1</td><td><code class="evidence-id" title="x">x</code></td></tr></table>',
        [],
    ),
]


@pytest.mark.parametrize(("markup", "shown"), HOSTILE, ids=[str(i) for i in range(len(HOSTILE))])
def test_hostile_markup_is_read_as_a_browser_reads_it_or_refused(markup: str, shown: list[str] | None) -> None:
    scan = scan_page(_page(markup))
    if shown is None:
        # refused: by the scanner, or by the seal, which knows no verified excerpt here
        found = seal_page(scan, "p/index.html", {}, {}, None, Counter()).findings
        assert found and {f.file for f in found} == {"p/index.html"}, markup
    else:
        assert scan.malformed == [], markup
        assert [e.text for e in scan.excerpts] == shown


def test_inline_scripts_and_styles_are_collected_as_the_browser_reads_them() -> None:
    page = _page(
        "<script>a()\r\n</script><script type=module>b()</script><script src=x.js></script>"
        '<script type="application/json">{"x": 1}</script><style>p{}</style><svg><style>q{}</style></svg>'
    )
    scan = scan_page(page.replace("<title>", '<meta http-equiv="content-security-policy" content="x"><title>'))
    assert scan.scripts == ["a()\n", "b()"]
    assert scan.styles == ["p{}", "q{}"]
    assert scan.policies == ["x"]


_NOISE = [*"<>/\"'=&#;!-[] \t\r\n", "<!--", "-->", "</span>", "<svg>", "<span ", "&#45;", "evidence-", "data-start="]


def test_mutated_pages_never_crash_the_scanner() -> None:
    rng = random.Random(11)
    base = _page(
        "<p>"
        + str(excerpt_html(SID, 1, 4, "abc"))
        + "</p>"
        + str(snapshot_html(SID, "x\r\nyz" * 3, {(1, 4)}))
        + str(windows_html(OTHER, "0123456789", {(2, 5)}, 1))
        + "".join(m for m, _ in HOSTILE)
    )
    refused = 0
    for _ in range(300):
        chars = list(base)
        for _ in range(rng.randint(1, 8)):
            at = rng.randrange(len(chars))
            if rng.random() < 0.5:
                del chars[at]
            else:
                chars.insert(at, rng.choice(_NOISE))
        scan = scan_page("".join(chars))
        # Whatever the damage, the seal never passes a page whose excerpts are not exactly the
        # verified one (the page carries look-alikes too, so a pass would be a scanner blind spot).
        sealed = seal_page(scan, "p/index.html", {(SID, 1, 4): "abc"}, {}, None, Counter())
        assert sealed.findings, "a mutated page passed the seal"
        refused += bool(scan.malformed)
    assert refused > 0  # the look-alikes are seen in the mutated pages


_REFISH = st.lists(
    st.one_of(
        st.sampled_from(["src-", "SRC-", "#", "-", " ", "\n", "\u3000", "12", "a" * 64, "A" * 63, "f", "x"]),
        st.characters(),
    ),
    max_size=30,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(_REFISH)
def test_the_quick_span_reference_finder_finds_what_the_pattern_finds(text: str) -> None:
    assert bool(find_span_refs(text)) == bool(SPAN_REF.search(text))
    assert all(SPAN_REF.fullmatch(ref) for ref in find_span_refs(text))
