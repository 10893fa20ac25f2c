"""Escaping one way: every HTML builder of the site package escapes data with markupsafe, the same
function Jinja's autoescaping applies in the templates, so hostile text (a ``<script>``, a ``"``
that would close an attribute, an ``&`` that would start an entity) reaches a page as text."""

from __future__ import annotations

import jinja2
import pytest
from hypothesis import given
from hypothesis import strategies as st
from markupsafe import Markup
from selectolax.lexbor import LexborHTMLParser

from publisher.site.checks.scan import scan_page
from publisher.site.pages.generate import SiteModel
from publisher.site.pages.highlight import snapshot_html, windows_html
from publisher.site.pages.markup import escape_text, excerpt_html
from publisher.site.pages.model import GeneratedPage
from publisher.site.pages.titles import html_text

SID = "src-" + "c" * 64
SCRIPT = "<script>alert(1)</script>"
ATTRIBUTE = '" onmouseover="alert(1)" x="'
ENTITY = "&amp; &lt;b&gt; &#60;"
HOSTILE = f"a {SCRIPT} b {ATTRIBUTE} c {ENTITY} d 'e'"


def _tree(page: str) -> LexborHTMLParser:
    return LexborHTMLParser(f"<!DOCTYPE html><body>{page}</body>")


def _assert_inert(page: str) -> LexborHTMLParser:
    """No element or attribute came from the data: only those the builder writes."""
    tree = _tree(page)
    assert tree.css("script") == [] and tree.css("b") == []
    for node in tree.body.traverse() if tree.body else []:
        assert not any(name in ("onmouseover", "x") for name in node.attributes), node.html
    return tree


# --- each builder ----------------------------------------------------------------------------


def test_escape_text_keeps_hostile_text_as_text() -> None:
    out = escape_text(HOSTILE)
    assert isinstance(out, Markup)
    assert "<" not in out and '"' not in out and "'" not in out
    assert "&amp;amp;" in out  # an entity in the text is shown, not decoded
    assert _tree(f"<p>{out}</p>").css_first("p").text() == HOSTILE  # type: ignore[union-attr]


def test_escape_text_escapes_markup_it_is_handed() -> None:
    assert escape_text(Markup(SCRIPT)) == "&lt;script&gt;alert(1)&lt;/script&gt;"


def test_excerpt_keeps_hostile_text_and_attributes_inert() -> None:
    text = HOSTILE + "\r\x00"
    element = excerpt_html(SID, 1, 1 + len(text), text)
    assert isinstance(element, Markup)
    _assert_inert(element)
    (found,) = scan_page(f"<p>{element}</p>").excerpts
    assert found.text == HOSTILE + "\r\ufffd"  # a NUL cannot be carried: the seal sees U+FFFD
    hostile_id = excerpt_html(ATTRIBUTE, 1, 2, "x")
    node = _assert_inert(hostile_id).css_first("span")
    assert node is not None and node.attributes["data-source-id"] == ATTRIBUTE


def test_excerpt_refuses_a_tag_or_offset_that_is_not_allowed() -> None:
    with pytest.raises(ValueError):
        excerpt_html(SID, 1, 2, "x", tag="span onclick=alert(1)")
    with pytest.raises(ValueError):
        excerpt_html(SID, '1" onclick="alert(1)', 2, "x")  # type: ignore[arg-type]


def test_snapshot_keeps_hostile_text_and_attributes_inert() -> None:
    spans = {(2, 10), (5, 40), (len(HOSTILE) - 5, len(HOSTILE))}
    page = snapshot_html(SID, HOSTILE, spans)
    assert isinstance(page, Markup)
    _assert_inert(page)
    (block,) = scan_page(page).snapshots
    assert block.text == HOSTILE and not block.misplaced_marks()
    node = _assert_inert(snapshot_html(ATTRIBUTE, HOSTILE, spans)).css_first("pre")
    assert node is not None and node.attributes["data-source-id"] == ATTRIBUTE


def test_windows_keep_hostile_text_and_attributes_inert() -> None:
    text = "x" * 100 + HOSTILE + "y" * 100
    spans = {(102, 110), (120, 140)}
    page = windows_html(SID, text, spans, 5)
    assert isinstance(page, Markup)
    _assert_inert(page)
    (block,) = scan_page(page).windows
    assert block.text == text[block.window_start : block.window_end]  # type: ignore[index]
    tree = _assert_inert(windows_html(ATTRIBUTE, text, spans, 5))
    assert {n.attributes["data-window-of"] for n in tree.css("[data-window-of]")} == {ATTRIBUTE}


def test_titles_keep_hostile_text_inert() -> None:
    title = html_text(HOSTILE)
    assert title == escape_text(HOSTILE)
    assert _assert_inert(f'<h1 title="{title}">{title}</h1>').css_first("h1").text() == HOSTILE  # type: ignore[union-attr]


# --- one way ---------------------------------------------------------------------------------

_autoescape = jinja2.Environment(autoescape=True).from_string("{{ text }}")


@given(st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\r\x00"), max_size=80))
def test_python_and_templates_escape_alike(text: str) -> None:
    assert escape_text(text) == _autoescape.render(text=text) == html_text(text)


def test_normal_text_is_written_as_before() -> None:
    assert excerpt_html(SID, 3, 14, "a < b & c\nd") == (
        f'<span class="evidence-excerpt" data-source-id="{SID}" data-start="3" data-end="14">a &lt; b &amp; c\nd</span>'
    )
    assert snapshot_html(SID, "ab\r\ncd", {(1, 3)}) == (
        f'<pre class="evidence-snapshot" data-source-id="{SID}">\na<mark class="evidence-span" id="span-1-3" '
        'data-start="1" data-end="3" data-spans="1-3">b&#13;</mark>\ncd</pre>'
    )


def test_a_built_fragment_fills_its_slot_without_escaping_the_page_around_it() -> None:
    model = SiteModel.__new__(SiteModel)  # fill() needs only the pages and the slot token
    model._token, model._count = "t0", 0
    page = GeneratedPage("sources/x.md", "source", "")
    model.pages = {page.src_uri: page}
    alone, inline = model.slot(page, snapshot_html(SID, SCRIPT, {(0, 8)})), model.slot(page, escape_text(SCRIPT))
    filled = model.fill(page.src_uri, f"<p>{alone}</p><p>{inline} and more</p>")
    assert filled == f"{snapshot_html(SID, SCRIPT, {(0, 8)})}<p>{escape_text(SCRIPT)} and more</p>"
