"""The one boundary where titles and page metadata reach the theme's HTML.

MkDocs renders the theme with a Jinja environment that does not autoescape, and Material prints
``page.title``, ``page.meta.title``, ``page.meta.description``, navigation and section titles, the
titles of a page's table of contents and ``config.site_name`` as they are (into ``<title>``, the
header, the navigation, tabs, the footer's previous/next links and attributes). Those strings
come from data people outside the maintainers control: a fetched page's ``<title>``, a run's
question (a concept's title), a slug, front matter, a heading of prose. A page's edit link,
joined from the configuration and the page's file name, is made a URL of URL characters only
(:func:`escape_edit_url`).

Every such string is therefore handed to the theme as :class:`markupsafe.Markup` made by
:func:`html_text` from the plain text, here and nowhere else (without bidi controls, and with the
symbols of a title that reads as a span reference or the verified badge spelled out, as prose may
not show them either): printed raw it shows the text literally, and the theme's own ``| e`` leaves
it as it is. The page's ``meta.title`` is set to the same value, so Material takes its ``<title>``
branch that prints ``meta.title`` and never the one that pipes ``page.title`` through ``striptags``
(which unescapes entities). The search index takes the same value (Material indexes section titles
as HTML). Nothing here imports MkDocs.
"""

from __future__ import annotations

from collections.abc import Iterable, MutableMapping
from typing import Any
from urllib.parse import quote

from markupsafe import Markup, escape

from ...kernel.refs import neutral_text

__all__ = [
    "html_text",
    "plain_title",
    "set_page_title",
    "escape_nav",
    "escape_toc",
    "escape_edit_url",
    "escape_site_strings",
    "META_TEXT_KEYS",
]

META_TEXT_KEYS = ("title", "description", "author", "subtitle")
"""Front-matter keys the theme prints into HTML as they are."""


def html_text(text: object) -> Markup:
    """Plain text as HTML that shows it literally (``Markup`` passes through unchanged), without
    bidi controls and never with the look of evidence (:func:`publisher.kernel.refs.neutral_text`)."""
    if isinstance(text, Markup):
        return text
    return escape(neutral_text(str(text)))


def plain_title(page: Any) -> str:
    """The plain text of a page's title, whichever way MkDocs found it.

    A title given in the navigation, in front matter or taken from the file name is plain text; a
    title MkDocs took from the rendered first heading is HTML text (tags stripped, entities kept),
    so its entities are decoded first. A title this module already set is returned decoded.
    """
    own = vars(page).get("title")
    if isinstance(own, Markup):
        return own.unescape()
    if own is not None:
        return str(own)
    meta = page.meta if isinstance(page.meta, MutableMapping) else {}
    if meta.get("title") is not None:
        value = meta["title"]
        return value.unescape() if isinstance(value, Markup) else str(value)
    rendered = getattr(page, "_title_from_render", None)
    if rendered:
        return Markup(rendered).unescape()
    return str(page.title or "")


def set_page_title(page: Any, text: str | None = None) -> Markup:
    """Give ``page`` its title (``text``, else its own) as HTML-safe text, and its meta strings too."""
    title = html_text(plain_title(page) if text is None else text)
    meta = page.meta
    if not isinstance(meta, MutableMapping):
        meta = page.meta = {}
    for key in META_TEXT_KEYS[1:]:
        value = meta.get(key)
        if isinstance(value, str):
            meta[key] = html_text(value)
    if "title" in meta or not getattr(page, "is_homepage", False):
        meta["title"] = title
    page.title = title
    return title


def escape_nav(items: Iterable[Any]) -> None:
    """Section and link titles of the navigation as HTML-safe text (pages get theirs per page)."""
    for item in items:
        if getattr(item, "is_page", False):
            continue
        title = getattr(item, "title", None)
        if isinstance(title, str):
            item.title = html_text(title)
        children = getattr(item, "children", None)
        if children:
            escape_nav(children)


def escape_toc(items: Iterable[Any]) -> None:
    """The titles of a page's table of contents as HTML-safe text.

    Python-Markdown hands each heading's title over as its HTML with the tags removed by a
    pattern, not by a parser: a tag split across two inert attribute values by a comment the
    pattern strips (``<i title="<!--">…<b title='-->"><img … onerror=…>'>``), or one it does not
    read as a tag, comes out as live markup, which Material prints as it is. Each title is taken
    as text (its tags dropped, its entities decoded) and handed over escaped."""
    for item in items:
        title = getattr(item, "title", None)
        if isinstance(title, str) and not isinstance(title, Markup):
            item.title = html_text(Markup(title).striptags())
        children = getattr(item, "children", None)
        if children:
            escape_toc(children)


_URL_SAFE = "/:?#[]@!$&()*+,;=%~"
"""What a URL may hold as it is (RFC 3986's reserved and unreserved characters, ``%`` of an
escape already made); anything else (a quote, ``<``, a space, any non-ASCII) is percent-encoded."""


def escape_edit_url(page: Any) -> None:
    """The page's edit link (``repo_url`` and ``edit_uri`` joined with the file's name as it is,
    which Material prints into ``href="..."``) as a URL whose every character is a URL's: a
    quote in a file name of ``docs/`` can no longer close the attribute."""
    url = getattr(page, "edit_url", None)
    if isinstance(url, str) and not isinstance(url, Markup):
        page.edit_url = Markup(escape(quote(url, safe=_URL_SAFE)))


def escape_site_strings(config: MutableMapping[str, Any]) -> None:
    """``site_name``, ``site_description`` and ``site_author`` as HTML-safe text for the theme."""
    for key in ("site_name", "site_description", "site_author"):
        value = config.get(key)
        if isinstance(value, str):
            config[key] = html_text(value)
