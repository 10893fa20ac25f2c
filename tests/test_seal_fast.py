"""The seal's fast scan reads every page exactly as the strict ``html.parser`` scan does.

``scan_page`` skips pages that cannot hold an evidence element, tokenizes the rest with one
regular expression and hands anything outside its plain subset to the strict scan. These tests
generate pages from the elements the site emits, Material-like chrome and hand-written hostile
markup (attribute order, quoting, case and whitespace variations, character references, nested
tags, comments, CDATA-looking text, ``<script>``/``<style>``/``<textarea>``/``<title>``
contexts, stray ``<``, unclosed elements), mutate them at random, and compare the fast path and
``scan_page`` with the strict scan.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from publisher.site.highlight import snapshot_html, windows_html
from publisher.site.scan import (
    PageScan,
    _may_hold_evidence,
    _scan_fast,
    _scan_strict,
    _Scanner,
    excerpt_html,
    scan_page,
)

SID = "src-" + "a" * 64
OTHER = "src-" + "b" * 64

_CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
_TEXT = st.text(alphabet=_CHARS, max_size=40)
_HTMLISH = st.lists(
    st.sampled_from(
        [*"<>/\"'=&#;!-[] \t\nabcdeiklmnoprstuvxy0123456789", "evidence-", "data-source-id", "script", "&#45;"]
    ),
    max_size=20,
).map("".join)

CHROME = [
    "<!doctype html>",
    '<html lang="en" class="no-js">',
    "<head>",
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width,initial-scale=1">',
    "<title>A page - wiki</title>",
    '<link rel="stylesheet" href="../assets/stylesheets/main.css">',
    '<script>__md_scope=new URL("..",location),__md_get=(e,_=localStorage)=>JSON.parse(_.getItem(e))&&e<3</script>',
    "<style>:root{--md-text:x}a>b{}</style>",
    '<script id="__config" type="application/json">{"base": "..", "tags": null}</script>',
    "</head>",
    '<body dir="ltr" data-md-color-scheme="default">',
    '<input class="md-toggle" data-md-toggle="drawer" type="checkbox" id="__drawer" autocomplete="off">',
    '<label class="md-header__button md-icon" for="__drawer"><svg xmlns="http://www.w3.org/2000/svg" '
    'viewBox="0 0 24 24"><path d="M3 6h18v2H3V6m0 5h18v2H3v-2m0 5h18v2H3v-2Z"/></svg></label>',
    "<!-- publisher:generated:begin -->",
    "<!-- publisher:generated:end -->",
    '<div class="md-content" data-md-component="content">',
    '<article class="md-content__inner md-typeset">',
    '<h1 id="t">Title &amp; more &lt;b&gt; &#x27;q&#39;</h1>',
    "<p>Text with a mention of data-source-id and evidence-excerpt in prose.</p>",
    '<table class="evidence-table evidence-meta"><tr><th>Id</th><td><code>x</code></td></tr></table>',
    '<ul class="evidence-spans"><li><a href="#span-1-4">[1, 4)</a></li></ul>',
    '<a href="../sources/?q=a&amp;b=c" title="x">link</a>',
    "<br>",
    "<br/>",
    "<hr />",
    '<img src=x.png alt="">',
    "</article>",
    "</div>",
    "<textarea>plain text only</textarea>",
    "</body>",
    "</html>",
    "\n",
]

HOSTILE = [
    # attribute order, quoting, case, whitespace
    f'<span data-start="1" data-end=\'4\' class=evidence-excerpt data-source-id="{SID}">abc</span>',
    f'<SPAN CLASS="evidence-excerpt" DATA-SOURCE-ID="{SID}" DATA-START="1" DATA-END="4">abc</SPAN>',
    f'<span DATA-SOURCE-ID="{SID}" data-start="1" data-end="4">abc</span>',
    f'<span\tclass = "evidence-excerpt"\ndata-source-id="{SID}"  data-start=1 data-end=4 >abc</span >',
    f'<span class="evidence-excerpt"data-source-id="{SID}" data-start="1" data-end="4">abc</span>',
    f'<span class=="evidence-excerpt" data-source-id="{SID}" data-start="1" data-end="4">abc</span>',
    f'<span data-source-id="{SID}" data-start="1" data-end="4"/>',
    f'<br data-source-id="{SID}" data-start="1" data-end="4">',
    f'<span data-source-id="{SID}" data-start="1" data-end="4" data-source-id="{OTHER}">abc</span>',
    f'<span class="x evidence-excerpt" data-source-id={SID} data-start=1 data-end=4/>abc</span>',
    # character references in values and text
    f'<span class="evidence&#45;excerpt" data-source-id="{SID}" data-start="1" data-end="4">abc</span>',
    '<span class="&#x65;vidence-excerpt">x</span>',
    '<pre class="evidence&#x2D;snapshot" data-source-id="src-x">\ntext</pre>',
    '<div class="evidence&#45window">x</div>',
    f'<span class="evidence-excerpt" data-source-id="{SID}" data-start="1" data-end="4">a&amp;b&#x3c;c&lt</span>',
    '<span class="a&nbsp;evidence-excerpt">x</span>',
    # nesting
    f'<span class="evidence-excerpt" data-source-id="{SID}" data-start="1" data-end="4">a<b>b</b>c</span>',
    f'<pre class="evidence-snapshot" data-source-id="{SID}">\nab<mark data-start="2" data-end="3">c</mark>'
    f'<span data-source-id="{SID}" data-start="0" data-end="1">a</span></pre>',
    f'<pre class="evidence-snapshot" data-source-id="{SID}"><mark data-start=0 data-end=1><mark>x</mark></mark></pre>',
    # other contexts
    f'<!-- <span class="evidence-excerpt" data-source-id="{SID}" data-start="1" data-end="4">abc</span> -->',
    f'<script>var s = \'<span data-source-id="{SID}" data-start="1" data-end="4">abc</span>\';</script>',
    f'<script>if (a</b) x = "<span data-source-id={SID}>";</script>',
    f'<textarea><span data-source-id="{SID}" data-start="1" data-end="4">abc</span></textarea>',
    f'<title><span data-source-id="{SID}" data-start="1" data-end="4">abc</span></title>',
    f'<style>/* <span data-source-id="{SID}"> */</style>',
    f'<![CDATA[<span data-source-id="{SID}" data-start="1" data-end="4">abc</span>]]>',
    f'<div title=\'<span data-source-id="{SID}" data-start="1" data-end="4">abc</span>\'>x</div>',
    f'<noscript><span data-source-id="{SID}" data-start="1" data-end="4">abc</span></noscript>',
    f'<xmp><span data-source-id="{SID}">abc</span></xmp>',
    f'<script data-source-id="{SID}" data-start="1" data-end="4">abc</script>',
    f'<![DATA[<span data-source-id="{SID}" data-start="1" data-end="4">abc</span>]]>',
    "<![<CDATA[x]]>",
    "<![if !IE]>x<![endif]>",
    "<?php echo 1 ?>",
    "<!DOCTYPE html>",
    "<!-->",
    "<!--->",
    "<!-- a -- b -->",
    "<!-- a --!>",
    # stray and broken markup
    "a < b",
    "<3",
    "</>",
    "< span>",
    "<span",
    f'<span data-source-id="{SID}" data-start="1" data-end="4">unclosed',
    f'<pre class="evidence-window" data-window-of="{SID}" data-window-start="0" data-window-end="3">\nabc',
    "</span>",
    "</pre>",
    "<a href=x/>y</a>",
    "<p a=b'c>",
    "<p\xa0class=evidence-excerpt>",
]


@st.composite
def emitted(draw: st.DrawFn) -> str:
    """One element exactly as the site emits it."""
    text = draw(_TEXT)
    kind = draw(st.sampled_from(["excerpt", "snapshot", "windows"]))
    if kind == "excerpt":
        start = draw(st.integers(0, 10**6))
        return excerpt_html(SID, start, start + len(text), text, tag=draw(st.sampled_from(["span", "q", "code"])))
    spans: set[tuple[int, int]] = set()
    if text:
        for _ in range(draw(st.integers(0, 3))):
            a = draw(st.integers(0, len(text) - 1))
            spans.add((a, draw(st.integers(a + 1, len(text)))))
    if kind == "snapshot":
        return snapshot_html(SID, text, spans)
    return windows_html(SID, text, spans, draw(st.integers(0, 5)))


_FRAGMENT = st.one_of(
    st.sampled_from(CHROME),
    emitted(),
    _TEXT,
    st.sampled_from(HOSTILE),
    _HTMLISH,
)
_SAFE_FRAGMENT = st.one_of(st.sampled_from(CHROME), emitted())


def assert_same_scan(page: str) -> None:
    """Fast and strict scans agree on ``page``, and the pre-filter never skips evidence."""
    if not _may_hold_evidence(page):
        # The pre-filter is sound: html.parser finds nothing on a page it lets through.
        raw = _Scanner()
        try:
            raw.feed(page)
            raw.close()
        except AssertionError:
            pass  # html.parser gave up; with evidence possible this would count as malformed
        else:
            assert raw._excerpt is None and raw._snapshot is None
        assert raw.scan == PageScan()
    strict = _scan_strict(page)
    fast = _scan_fast(page)
    if fast is not None:
        assert fast == strict
    assert scan_page(page) == strict


@settings(max_examples=600, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_FRAGMENT, max_size=12))
def test_fast_scan_equals_strict_scan_on_generated_pages(fragments: list[str]) -> None:
    assert_same_scan("".join(fragments))


@st.composite
def mutated(draw: st.DrawFn) -> str:
    page = "".join(draw(st.lists(_SAFE_FRAGMENT, min_size=1, max_size=8)))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(page)))
        how = draw(st.sampled_from(["insert", "delete", "replace", "fragment", "upper"]))
        if how == "insert":
            page = page[:at] + draw(st.sampled_from(list("<>/\"'=&#;!- \t\n\xa0"))) + page[at:]
        elif how == "delete":
            page = page[:at] + page[at + draw(st.integers(1, 8)) :]
        elif how == "replace":
            page = page[:at] + draw(_HTMLISH) + page[at + draw(st.integers(0, 4)) :]
        elif how == "fragment":
            page = page[:at] + draw(st.sampled_from(HOSTILE)) + page[at:]
        else:
            page = page[:at] + page[at : at + 12].upper() + page[at + 12 :]
    return page


@settings(max_examples=600, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_fast_scan_equals_strict_scan_on_mutated_pages(page: str) -> None:
    assert_same_scan(page)


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_SAFE_FRAGMENT, max_size=12))
def test_pages_the_site_emits_take_the_fast_path(fragments: list[str]) -> None:
    page = "".join(fragments)
    fast = _scan_fast(page)
    assert fast is not None and fast == _scan_strict(page)


def test_each_hostile_fragment_alone_and_inside_a_page() -> None:
    head, tail = "".join(CHROME[:13]), "".join(CHROME[13:])
    for fragment in HOSTILE:
        assert_same_scan(fragment)
        assert_same_scan(head + fragment + tail)
        assert_same_scan(head + excerpt_html(SID, 0, 3, "a<b") + fragment + snapshot_html(SID, "xyz", {(0, 1)}) + tail)


def test_hand_written_elements_the_old_prefilter_missed_are_found() -> None:
    """Attribute names are read lower-cased and class values decoded: both are evidence elements."""
    upper = scan_page(f'<p><span DATA-SOURCE-ID="{SID}" data-start="1" data-end="4">abc</span></p>')
    assert [(e.source_id, e.start, e.end, e.text) for e in upper.excerpts] == [(SID, 1, 4, "abc")]
    encoded = scan_page('<p><span class="evidence&#45;excerpt">abc</span></p>')
    assert encoded.malformed == 1
    snapshot = scan_page(f'<pre class="evidence&#x2d;snapshot" data-source-id="{SID}">\nabc</pre>')
    assert [b.text for b in snapshot.snapshots] == ["abc"]


def test_pages_without_evidence_are_empty_scans() -> None:
    assert scan_page("".join(CHROME)) == PageScan()
    assert _scan_fast("".join(CHROME)) == PageScan()


def test_a_page_html_parser_gives_up_on_is_malformed_not_a_crash() -> None:
    for page in (f'<![DATA[<span data-source-id="{SID}">x</span>]]>', '<p><![<CDATA[<span class="evidence-excerpt">'):
        assert scan_page(page).malformed >= 1
