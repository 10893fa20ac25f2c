"""Generated pages name their title in YAML front matter that reads back as the very title."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from mkdocs.utils.meta import get_data

from publisher.site.pages import SiteModel

_TITLES = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60)
_TRICKY = [
    'a "quoted" \\ title',
    "key: value # not a comment",
    "- item",
    "'single'",
    "\ufefftitle",
    "a\nb",
    "x\x85y",
    "\u2028",
    "  padded  ",
    "",
    "null",
    "true",
    "123",
    "[1, 2]",
    "{a: b}",
    "&anchor",
    "*alias",
    "!tag",
    "%",
    "@",
]


@settings(max_examples=500)
@given(_TITLES)
def test_any_title_reads_back_through_mkdocs(title: str) -> None:
    _, meta = get_data(f"---\n{SiteModel._front(title)}\n---\n\nbody\n")
    assert meta == {"title": title}


def test_tricky_titles_read_back_through_mkdocs() -> None:
    for title in _TRICKY:
        _, meta = get_data(f"---\n{SiteModel._front(title)}\n---\n\nbody\n")
        assert meta == {"title": title}, title
