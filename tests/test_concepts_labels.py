"""Claim labels and titles in generated Markdown render as exactly their text under any extension set.

Each label is encoded with :func:`publisher.concepts.markdown_text`, rendered by Python-Markdown
with plain Markdown, with the example wiki's extensions and with a set of extensions that would
each like to rewrite some character, and the rendered text is compared with the label.
"""

from __future__ import annotations

import html
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import markdown
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from publisher.wiki.markdown import markdown_text

REPO = Path(__file__).resolve().parents[1]


def _example_extensions() -> tuple[list[str], dict[str, Any]]:
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    names: list[str] = []
    configs: dict[str, Any] = {}
    for item in config["markdown_extensions"]:
        if isinstance(item, dict):
            ((name, options),) = item.items()
            names.append(name)
            configs[name] = options or {}
        else:
            names.append(item)
    return names, configs


_HOSTILE = [
    "footnotes",
    "attr_list",
    "md_in_html",
    "tables",
    "abbr",
    "def_list",
    "admonition",
    "smarty",
    "sane_lists",
    "wikilinks",
    "pymdownx.arithmatex",
    "pymdownx.smartsymbols",
    "pymdownx.emoji",
    "pymdownx.betterem",
    "pymdownx.magiclink",
    "pymdownx.critic",
    "pymdownx.keys",
    "pymdownx.caret",
    "pymdownx.mark",
    "pymdownx.tilde",
    "pymdownx.inlinehilite",
    "pymdownx.tasklist",
    "pymdownx.details",
    "pymdownx.superfences",
    "pymdownx.progressbar",
    "pymdownx.escapeall",
]

EXTENSION_SETS = {
    "plain": ([], {}),
    "example": _example_extensions(),
    "hostile": (_HOSTILE, {}),
}

LABELS = [
    "p = 0.07",
    "costs $5 | $6",
    "*stars* and **bold** and _under_ and __dunder__",
    "`tick` and ``two``",
    "[x](y) and [^1] and [[wiki]] and ![img](z)",
    "<b>bold</b> & <i> &amp; &#61; &copy",
    "$x$ and $$y$$ and \\(z\\) and \\[w\\]",
    "a | b | c",
    "x == y, ==mark==, ~~del~~, ~sub~, ^^ins^^, ^sup^, H~2~O",
    ":smile: :+1: time 10:30:45",
    "-- and --- and ... and -> and --> and <-- and +/- and =/= and 1/2 and c/o",
    "(c) (r) (tm) (C) (ITT) (95% CI 0.1 to 0.5)",
    "\\ and \\\\ and a trailing backslash \\",
    "# not a heading",
    "#1 and issue #12 and @user and user/repo#3 and user@example.org",
    "- not a list",
    "+ not a list",
    "* not a list",
    "1. not a list",
    "12) not a list",
    "> not a quote",
    ": not a definition",
    "??? not details",
    "!!! note not an admonition",
    "[ ] not a task",
    "[x] not a task either",
    "{++ins++} {--del--} {~~a~>b~~} {==hl==} {>>comment<<}",
    "++ctrl+alt+del++",
    "www.example.com and https://example.org/a?b=c&d=e#f and ftp://x.y",
    "e.g. i.e. U.S. v1.2 3.x",
    "\"double\" and 'single' and it's",
    "<<angle>> and << and >>",
    "{: .class } and {#id}",
    "*[HTML]: Hyper",
    "[=50% progress]",
    "1st 2nd 3rd 4th",
    "MD −6.2 min (95% CI −12.9 to 0.5), p = 0.07 [results]",
    "≥ 8 night shifts; 日本語のラベル; café; naïve; Ωμέγα; emoji 😀",
    "trailing colon:",
    "a\ttab and\nnewline  and   spaces",
    "control\x00char\x07s\x02and\x03placeholders \x00 between spaces",
    "&",
    "x",
    "-",
    ".",
    "...",
]


class _Text(HTMLParser):
    """Text of the first block of a fragment, without heading permalinks and footnote references."""

    SKIP_CLASSES = frozenset({"headerlink"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.depth = 0
        self.skip = 0
        self.done = False
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if self.done:
            return
        self.depth += 1
        self.tags.append(tag)
        classes = set((values.get("class") or "").split())
        if self.skip or classes & self.SKIP_CLASSES or (values.get("id") or "").startswith("fnref"):
            self.skip += 1

    def handle_endtag(self, tag: str) -> None:
        if self.done:
            return
        self.depth -= 1
        if self.skip:
            self.skip -= 1
        if self.depth == 0:
            self.done = True

    def handle_data(self, data: str) -> None:
        if not self.done and self.depth and not self.skip:
            self.parts.append(data)


def _render(source: str, extensions: tuple[list[str], dict[str, Any]]) -> tuple[str, list[str]]:
    names, configs = extensions
    html = markdown.markdown(source, extensions=names, extension_configs=configs)
    parser = _Text()
    parser.feed(html)
    parser.close()
    return "".join(parser.parts).strip(), parser.tags


def _expected(label: str) -> str:
    shown = "".join(ch for ch in label if ch.isspace() or not (ch < " " or "\x7f" <= ch <= "\x9f"))
    return " ".join(shown.split())


@pytest.mark.parametrize("extensions", list(EXTENSION_SETS), ids=list(EXTENSION_SETS))
@pytest.mark.parametrize("label", LABELS)
def test_label_renders_as_itself(label: str, extensions: str) -> None:
    ext = EXTENSION_SETS[extensions]
    encoded = markdown_text(label)
    assert "\n" not in encoded and "\\" not in encoded
    want = _expected(label)
    # as promotion writes it: a list item, then a footnote reference
    text, tags = _render(f"- {encoded}[^n]\n\n[^n]: note\n", ext)
    if "footnotes" in ext[0]:
        assert text == want
        assert tags[:2] == ["ul", "li"]
    # a line of prose, and a heading (a page title)
    assert _render(f"Question: {encoded}\n", ext)[0] == f"Question: {want}".strip()
    heading, tags = _render(f"# {encoded}\n", ext)
    assert heading == want and tags[0] == "h1"
    alone, tags = _render(f"- {encoded}\n", ext)
    # only smartsymbols' ordinals (1<sup>st</sup>) may add markup, and they keep the text
    assert alone == want and tags[:2] == ["ul", "li"] and set(tags[2:]) <= {"sup"}


def test_ordinary_labels_stay_readable() -> None:
    label = "sleep-onset latency (diary), 8 weeks: MD −6.2 min (95% CI −12.9 to 0.5); n? 45%."
    assert markdown_text(label) == label
    assert markdown_text("p = 0.07 [results]") == "p &#61; 0.07 &#91;results&#93;"
    assert markdown_text("A & B <C>") == "A &amp; B &lt;C&gt;"


_ALPHABET = st.sampled_from(
    list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~") + list("acimorstwx019 ") + ["é", "−", "日", "😀", "\t", "\n"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_ALPHABET, min_size=1, max_size=24).map("".join))
def test_any_label_renders_as_itself_under_hostile_extensions(label: str) -> None:
    want = _expected(label)
    text, _ = _render(f"- {markdown_text(label)}\n", EXTENSION_SETS["hostile"])
    assert text == want
    text, _ = _render(f"Question: {markdown_text(label)}\n", EXTENSION_SETS["hostile"])
    assert text == f"Question: {want}".strip()


def test_presentational_text_drops_the_bidi_controls_prose_may_not_hold() -> None:
    """A title or label with an override, an isolate or an implicit mark would show in another
    order than written (a mark moves a check mark to the other side of a word), and the prose
    check refuses such text (C-PROSE): written into Markdown, those controls are dropped, every
    visible character kept."""
    from publisher.kernel.lookalike import BIDI_CONTROLS
    from publisher.wiki.markdown import markdown_text

    text = "\u202e<b>bidi</b>\u2066 isolated\u2069 \u200fmarked \u061cünïcödé"
    written = markdown_text(text)
    assert not BIDI_CONTROLS.search(written)
    assert html.unescape(written) == "<b>bidi</b> isolated marked ünïcödé"


def _markdown_text_by_position(text: str) -> str:
    """The encoding asked of every position: what :func:`markdown_text` must equal."""
    import unicodedata

    from publisher.kernel.lookalike import BIDI_CONTROLS
    from publisher.wiki import markdown as md

    shown = "".join(ch for ch in BIDI_CONTROLS.sub("", text) if ch.isspace() or unicodedata.category(ch) != "Cc")
    flat = " ".join(shown.split())
    lead_match = md._LEADING_NUMBER_RE.match(flat)
    lead = lead_match.end() if lead_match else -1
    return "".join(md._char_ref(ch) if md._needs_ref(flat, i, lead) else ch for i, ch in enumerate(flat))


_LABEL_CHARS = st.sampled_from(
    list(" \t\n\x0b\x85\xa0\u2028\u202e\u200f\x00\x7f!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~aZ09é字")
)


@settings(max_examples=2000, deadline=None)
@given(st.text(_LABEL_CHARS, max_size=24) | st.text(max_size=24))
def test_markdown_text_looks_only_where_markup_can_be(text: str) -> None:
    """Only the characters that can need a reference are looked at past the first: the same
    encoding as asking every position."""
    assert markdown_text(text) == _markdown_text_by_position(text)


def test_a_printable_text_holds_nothing_markdown_text_drops() -> None:
    """What lets a printable text skip the filter: no code point Python calls printable is a
    control character or a bidi control."""
    import sys
    import unicodedata

    from publisher.kernel.lookalike import BIDI_CONTROLS

    for code in range(sys.maxunicode + 1):
        ch = chr(code)
        if ch.isprintable():
            assert unicodedata.category(ch) != "Cc" and BIDI_CONTROLS.match(ch) is None, hex(code)
