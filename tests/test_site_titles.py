"""The one escaping boundary for titles: any text reaches the theme as HTML that shows it literally."""

from __future__ import annotations

import html
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st
from markupsafe import Markup

from publisher.kernel.lookalike import BIDI_CONTROLS
from publisher.kernel.refs import looks_like_evidence, neutral_text
from publisher.site.pages.titles import (
    escape_edit_url,
    escape_nav,
    escape_site_strings,
    escape_toc,
    html_text,
    plain_title,
    set_page_title,
)

_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=80)
PAYLOADS = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "</title><script>alert(1)</script>",
    '" onmouseover="alert(1)',
    "' autofocus onfocus='alert(1)",
    "&lt;script&gt;alert(1)&lt;/script&gt;",
    "&#60;img src=x onerror=alert(1)&#62;",
    "javascript:alert(1)",
    "\u202eevil\u202c <b>bold</b>",
    "<!--",
    "]]><svg onload=alert(1)>",
]


@settings(max_examples=500)
@given(_TEXT)
@example("\u202a")  # a lone bidi control shows as nothing
@example("x \u202eevil\u202c")
def test_any_text_becomes_html_that_shows_it(text: str) -> None:
    out = html_text(text)
    assert isinstance(out, Markup)
    assert not set("<>\"'") & set(str(out))
    # it shows the text a reader may be shown: bidi controls dropped, evidence look-alikes spelled out
    assert html.unescape(str(out)) == neutral_text(text)
    if not BIDI_CONTROLS.search(text) and looks_like_evidence(text) is None:
        assert html.unescape(str(out)) == text
    assert html_text(out) is out  # the boundary is applied once, whatever calls it twice


def _page(**kwargs: Any) -> Any:
    defaults: dict[str, Any] = {"meta": {}, "is_homepage": False, "title": None, "_title_from_render": None}
    defaults.update(kwargs)
    page = SimpleNamespace(**{k: v for k, v in defaults.items() if k != "title"})
    if defaults["title"] is not None:
        page.title = defaults["title"]
    return page


def test_every_way_a_title_arrives_is_escaped_once() -> None:
    for payload in PAYLOADS:
        shown = BIDI_CONTROLS.sub("", payload)  # bidi controls never reach a page
        # front matter, navigation, and the rendered heading (HTML text with entities kept)
        for page in (
            _page(meta={"title": payload, "description": payload}),
            _page(title=payload),
            _page(_title_from_render=str(html_text(payload))),
        ):
            assert plain_title(page) in (payload, shown)  # as stated, or as a rendered heading already shows it
            title = set_page_title(page)
            assert html.unescape(str(page.title)) == shown and "<" not in page.title
            assert page.meta["title"] is title  # Material's <title> branch prints meta.title, never striptags
        assert html.unescape(str(page.meta.get("description", ""))) in ("", shown)


def test_generated_title_wins_and_homepage_keeps_its_site_name_title() -> None:
    page = _page(meta={}, is_homepage=True, title="Home")
    set_page_title(page, "<b>x</b>")
    assert page.title == "&lt;b&gt;x&lt;/b&gt;" and "title" not in page.meta


def test_nav_sections_and_site_strings() -> None:
    child = SimpleNamespace(is_page=False, title="<i>link</i>", children=None)
    section = SimpleNamespace(is_page=False, title="A & <B>", children=[child])
    escape_nav([section])
    assert section.title == "A &amp; &lt;B&gt;" and child.title == "&lt;i&gt;link&lt;/i&gt;"
    config = {"site_name": "<script>", "site_description": None}
    escape_site_strings(config)
    assert config["site_name"] == "&lt;script&gt;" and config["site_description"] is None


def test_toc_titles_are_text_whatever_markup_the_heading_left() -> None:
    """Python-Markdown strips a heading's tags with a pattern: what it leaves is read as text."""
    split = SimpleNamespace(title="<img/src=x@ onerror=alert(1)>'>c", children=None)
    plain = SimpleNamespace(title="A &amp; B &lt;i&gt;", children=[split])
    escape_toc([plain])
    assert plain.title == "A &amp; B &lt;i&gt;" and isinstance(plain.title, Markup)
    assert split.title == "&#39;&gt;c"
    escape_toc([plain])  # once escaped, left as it is
    assert plain.title == "A &amp; B &lt;i&gt;"


def test_edit_link_holds_url_characters_only() -> None:
    page = SimpleNamespace(edit_url="https://x.org/edit/main/docs/a\" onclick='1' <b> é%20.md")
    escape_edit_url(page)
    assert page.edit_url == "https://x.org/edit/main/docs/a%22%20onclick=%271%27%20%3Cb%3E%20%C3%A9%20.md"
    none = SimpleNamespace(edit_url=None)
    escape_edit_url(none)
    assert none.edit_url is None


def test_generated_page_markdown_holds_no_title() -> None:
    """Titles never pass through Markdown or YAML: the templates take a heading slot instead."""
    templates = Path(__file__).resolve().parents[1] / "templates" / "site" / "pages"
    for template in templates.glob("*.md.j2"):
        text = template.read_text(encoding="utf-8")
        assert "front_matter" not in text and "{{ title }}" not in text and "heading_slot" in text, template.name
