"""The site seal: which verified excerpts a built site shows, and a check that it still shows them.

At build time the hook scans every page it writes for evidence elements and records each in
``evidence-manifest.json`` at the site root: the page, the source id, the offsets and the sha256 of
the excerpt. ``publisher check-site`` later re-reads the built pages, extracts every evidence
element again, and compares it with the manifest and with a fresh re-slice of the snapshot.

Evidence elements (the one markup contract between page generation, the report renderer and
this module):

* an excerpt: any element with ``data-source-id``, ``data-start`` and ``data-end`` whose text
  content is exactly ``text[start:end]`` and which holds no child elements;
* a snapshot: ``<pre class="evidence-snapshot" data-source-id=...>`` whose text content is the
  whole snapshot text; its ``<mark data-start data-end>`` children highlight cited spans and
  must sit at those offsets;
* a window (``extra: evidence: source_text: windows``): ``<pre class="evidence-window"
  data-window-of=... data-window-start=... data-window-end=...>`` whose text content is
  ``text[window_start:window_end]``; its marks carry offsets into the whole text, so a mark at
  position ``p`` of the window must claim ``window_start + p``.

As browsers do, one line feed right after a ``<pre>`` start tag is not part of its text, so the
page generator writes one there and a text that starts with a line feed keeps it.

An element with class ``evidence-excerpt`` but without the data attributes is malformed. This
module does not import MkDocs.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

from ..kernel.canonical import sha256_hex

__all__ = [
    "EXCERPT_CLASS",
    "SNAPSHOT_CLASS",
    "WINDOW_CLASS",
    "escape_text",
    "excerpt_html",
    "Excerpt",
    "SnapshotBlock",
    "PageScan",
    "scan_page",
]

EXCERPT_CLASS = "evidence-excerpt"
SNAPSHOT_CLASS = "evidence-snapshot"
WINDOW_CLASS = "evidence-window"
_WINDOW_OF = "data-window-of"
_MARKER = "data-source-id"
_VOID = frozenset("area base br col embed hr img input link meta source track wbr".split())


def escape_text(text: str) -> str:
    """``text`` as HTML character data that every HTML parser reads back unchanged.

    ``& < > " '`` become entities; a carriage return becomes ``&#13;`` (a raw one would be
    normalised to a line feed by a browser). A NUL becomes ``&#0;``, which every parser reads as
    U+FFFD: HTML cannot carry a NUL, so such an excerpt fails the seal instead of being shown
    altered. Nothing else is touched, so the page holds the excerpt as is.
    """
    return html.escape(text, quote=True).replace("\r", "&#13;").replace("\x00", "&#0;")


def excerpt_html(source_id: str, start: int, end: int, text: str, *, tag: str = "span") -> str:
    """The excerpt element: offsets in attributes, the verified text escaped as character data."""
    return (
        f'<{tag} class="{EXCERPT_CLASS}" data-source-id="{source_id}" data-start="{start}" '
        f'data-end="{end}">{escape_text(text)}</{tag}>'
    )


@dataclass(frozen=True)
class Excerpt:
    """An excerpt element found on a page."""

    source_id: str
    start: int | None
    end: int | None
    text: str
    nested: bool

    @property
    def sha256(self) -> str:
        return sha256_hex(self.text.encode("utf-8"))


@dataclass
class SnapshotBlock:
    """A snapshot (or window) element found on a page, with the marks it holds and where they sit.

    ``marks`` are ``(claimed start, claimed end, opened at, closed at)``, the last two counted in
    code points from the start of the block's text. A window's ``window_start``/``window_end``
    are its claimed offsets into the whole text (None when missing or not numbers).
    """

    source_id: str
    parts: list[str] = field(default_factory=list)
    marks: list[tuple[int | None, int | None, int, int]] = field(default_factory=list)
    nested_excerpt: bool = False
    window: bool = False
    window_start: int | None = None
    window_end: int | None = None
    _pre_newline: bool = False

    @property
    def text(self) -> str:
        return "".join(self.parts)

    @property
    def base(self) -> int:
        """Offset into the whole text of the block's first character."""
        return self.window_start or 0

    def misplaced_marks(self) -> list[str]:
        """Each highlight whose claimed offsets are not where it sits, as a short description."""
        base = self.base
        return [
            f"highlight [{start}, {end}) sits at [{base + opened}, {base + closed})"
            for start, end, opened, closed in self.marks
            if start != base + opened or end != base + closed
        ]


@dataclass
class PageScan:
    """Every evidence element of one page, plus malformed ones."""

    excerpts: list[Excerpt] = field(default_factory=list)
    snapshots: list[SnapshotBlock] = field(default_factory=list)
    windows: list[SnapshotBlock] = field(default_factory=list)
    malformed: int = 0


def _int(value: str | None) -> int | None:
    if value is None or not re.fullmatch(r"\d{1,12}", value):
        return None
    return int(value)


class _Scanner(HTMLParser):
    """Collects evidence elements; text is read with HTML character references decoded."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.scan = PageScan()
        self._excerpt: dict[str, Any] | None = None
        self._snapshot: SnapshotBlock | None = None
        self._snapshot_depth = 0
        self._mark: list[Any] | None = None
        self._mark_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        classes = (values.get("class") or "").split()
        if self._excerpt is not None:
            self._excerpt["nested"] = True
            if tag not in _VOID:
                self._excerpt["depth"] += 1
            return
        if self._snapshot is not None:
            self._snapshot._pre_newline = False
            if tag in _VOID:
                return
            self._snapshot_depth += 1
            if _MARKER in values or EXCERPT_CLASS in classes:
                self._snapshot.nested_excerpt = True
            if tag == "mark" and self._mark is None:
                pos = sum(len(p) for p in self._snapshot.parts)
                self._mark = [_int(values.get("data-start")), _int(values.get("data-end")), pos]
                self._mark_depth = self._snapshot_depth
            return
        if WINDOW_CLASS in classes and tag not in _VOID:
            self._snapshot = SnapshotBlock(
                str(values.get(_WINDOW_OF) or ""),
                window=True,
                window_start=_int(values.get("data-window-start")),
                window_end=_int(values.get("data-window-end")),
                _pre_newline=tag == "pre",
            )
            self._snapshot_depth = 1
            return
        if SNAPSHOT_CLASS in classes and tag not in _VOID:
            self._snapshot = SnapshotBlock(str(values.get(_MARKER) or ""), _pre_newline=tag == "pre")
            self._snapshot_depth = 1
            return
        if _MARKER in values or EXCERPT_CLASS in classes:
            if _MARKER not in values or "data-start" not in values or "data-end" not in values:
                self.scan.malformed += 1
            if tag in _VOID:
                self.scan.malformed += 1
                return
            self._excerpt = {"attrs": values, "parts": [], "depth": 1, "nested": False}

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if self._excerpt is not None:
            self._excerpt["nested"] = True
        elif self._snapshot is None and (_MARKER in values or EXCERPT_CLASS in (values.get("class") or "").split()):
            self.scan.malformed += 1

    def handle_endtag(self, tag: str) -> None:
        if self._excerpt is not None:
            self._excerpt["depth"] -= 1
            if self._excerpt["depth"] == 0:
                attrs = self._excerpt["attrs"]
                self.scan.excerpts.append(
                    Excerpt(
                        str(attrs.get(_MARKER) or ""),
                        _int(attrs.get("data-start")),
                        _int(attrs.get("data-end")),
                        "".join(self._excerpt["parts"]),
                        self._excerpt["nested"],
                    )
                )
                self._excerpt = None
            return
        if self._snapshot is not None and tag not in _VOID:
            if self._mark is not None and self._snapshot_depth == self._mark_depth:
                pos = sum(len(p) for p in self._snapshot.parts)
                start, end, opened = self._mark
                self._snapshot.marks.append((start, end, opened, pos))
                self._mark = None
            self._snapshot_depth -= 1
            if self._snapshot_depth == 0:
                (self.scan.windows if self._snapshot.window else self.scan.snapshots).append(self._snapshot)
                self._snapshot = None

    def handle_data(self, data: str) -> None:
        if self._excerpt is not None:
            self._excerpt["parts"].append(data)
        elif self._snapshot is not None:
            if self._snapshot._pre_newline:
                self._snapshot._pre_newline = False
                if data.startswith("\n"):
                    data = data[1:]
            self._snapshot.parts.append(data)


def _may_hold_evidence(page_html: str) -> bool:
    """Whether the strict parser could find any evidence element (or malformed one) on the page.

    ``html.parser`` lower-cases attribute names and decodes character references in values, so
    the marker is looked for in the lower-cased page, and the class names in the decoded page
    too (each decoded attribute value is a substring of the decoded page).
    """
    if _MARKER in page_html or _CLASS_TRIGGER.search(page_html) or _MARKER in page_html.lower():
        return True
    return "&" in page_html and _CLASS_TRIGGER.search(html.unescape(page_html)) is not None


def scan_page(page_html: str) -> PageScan:
    """Every evidence element of a page.

    Pages that cannot hold one are skipped; the rest go through the fast scanner, and through
    the strict ``html.parser`` scan wherever the fast one does not prove that it reads the page
    exactly as the strict one does. Both give the same result on every page.
    """
    if not _may_hold_evidence(page_html):
        return PageScan()
    fast = _scan_fast(page_html)
    return fast if fast is not None else _scan_strict(page_html)


def _scan_strict(page_html: str) -> PageScan:
    """The reference scan: ``html.parser`` over the whole page, unless it cannot hold evidence.

    ``html.parser`` gives up (AssertionError) on some declarations, such as ``<![DATA[``: a page
    it cannot read cannot be sealed, so that counts as a malformed element, never as a crash.
    """
    if not _may_hold_evidence(page_html):
        return PageScan()
    scanner = _Scanner()
    try:
        scanner.feed(page_html)
        scanner.close()
    except AssertionError:
        scanner.scan.malformed += 1
        return scanner.scan
    if scanner._excerpt is not None or scanner._snapshot is not None:
        scanner.scan.malformed += 1
    return scanner.scan


# ---------------------------------------------------------------------------------------------
# The fast scan
#
# A tokenizer for a plain subset of HTML, on which ``html.parser`` (the strict scan) is known to
# produce the events below: text without "<"; start tags whose name and attribute names are
# ASCII words, attributes separated by whitespace, values double- or single-quoted or bare
# ASCII words ended by whitespace or ">"; end tags ``</name>``; comments without "--" inside;
# ``<!doctype ...>``; script and style elements whose text holds no "</"; title and textarea
# elements whose text holds no "<". Anything else (a stray "<", ``<![CDATA[``, ``<?``, other
# raw-text elements, a page ending inside an evidence element ...) hands the page to the strict
# scan. Tokens that cannot change the scanner's state (text, end tags, tags without the marker
# attribute, a class value holding "evidence-" or a character reference) are skipped by one
# regular expression in C while no evidence element is open; the others are fed, with the same
# tag names, attributes and decoded text ``html.parser`` would give, to the strict scan's own
# handlers, so both scans share one definition of what an evidence element is.

_CLASS_TRIGGER = re.compile(r"evidence-(?:excerpt|snapshot|window)")
_WS = r"[ \t\n\r\f]"
_NAME = r"[a-zA-Z][a-zA-Z0-9-]*"
_ANAME = r"[a-zA-Z_:][-a-zA-Z0-9_:.]*"
_BARE = r"[-a-zA-Z0-9_.:#%+,;!?~]+(?=[ \t\n\r\f>])"
_VALUE = rf"""(?:"[^"]*+"|'[^']*+'|{_BARE})"""
_ATTRS = rf"(?:{_WS}+{_ANAME}(?:={_VALUE})?)*+{_WS}*+"
# Names html.parser (in some Python version) or a browser reads as raw or escapable raw text.
_RAW_NAMES = "script|style|title|textarea|xmp|iframe|noembed|noframes|noscript|plaintext"
_SPECIAL = frozenset(_RAW_NAMES.split("|"))
# A value that holds neither "evidence-" nor "&"; an attribute name other than the marker.
_PLAIN_VALUE = (
    rf"""(?:"[^"&e]*+(?:e(?!vidence-)[^"&e]*+)*+"|'[^'&e]*+(?:e(?!vidence-)[^'&e]*+)*+'|(?!evidence-){_BARE})"""
)
_PLAIN_ATTRS = rf"(?:{_WS}+(?!(?i:data-source-id)){_ANAME}(?:={_PLAIN_VALUE})?)*+{_WS}*+"
_SKIP = re.compile(
    "(?:"
    + "|".join(
        (
            r"[^<]++",
            r"<!--(?!-?>)(?:[^-]|-(?!-))*+-->",
            r"<![dD][oO][cC][tT][yY][pP][eE][^<>]*+>",
            rf"<[sS][cC][rR][iI][pP][tT](?={_WS}|>){_PLAIN_ATTRS}>(?:[^<]|<(?!/))*+</[sS][cC][rR][iI][pP][tT]>",
            rf"<[sS][tT][yY][lL][eE](?={_WS}|>){_PLAIN_ATTRS}>(?:[^<]|<(?!/))*+</[sS][tT][yY][lL][eE]>",
            rf"<[tT][iI][tT][lL][eE](?={_WS}|>){_PLAIN_ATTRS}>[^<]*+</[tT][iI][tT][lL][eE]>",
            rf"<[tT][eE][xX][tT][aA][rR][eE][aA](?={_WS}|>){_PLAIN_ATTRS}>[^<]*+</[tT][eE][xX][tT][aA][rR][eE][aA]>",
            rf"<(?!(?i:{_RAW_NAMES})(?![a-zA-Z0-9-])){_NAME}{_PLAIN_ATTRS}/?>",
            rf"</{_NAME}{_WS}*+>",
        )
    )
    + ")*+",
    re.ASCII,
)
_STEP = re.compile(rf"([^<]++)|<({_NAME})({_ATTRS})(/?)>|</({_NAME}){_WS}*+>", re.ASCII)
_ATTR = re.compile(rf"{_WS}+({_ANAME})(?:=({_VALUE}))?", re.ASCII)


def _attrs(source: str) -> list[tuple[str, str | None]]:
    """Attributes as ``html.parser`` gives them: names lower-cased, values unquoted and decoded."""
    out: list[tuple[str, str | None]] = []
    for m in _ATTR.finditer(source + ">"):  # a bare value ends at ">" or whitespace
        value = m.group(2)
        if value is not None and value[:1] in ('"', "'"):
            value = value[1:-1]
        out.append((m.group(1).lower(), html.unescape(value) if value else value))
    return out


def _scan_fast(page_html: str) -> PageScan | None:
    """The strict scan's result, or None where the page is outside the plain subset."""
    scanner = _Scanner()
    pos, end = 0, len(page_html)
    while True:
        if scanner._excerpt is None and scanner._snapshot is None:
            pos = _SKIP.match(page_html, pos).end()  # type: ignore[union-attr]
            if pos == end:
                return scanner.scan
        token = _STEP.match(page_html, pos)
        if token is None:
            return None
        text, tag, attrs, slash, closing = token.groups()
        if text is not None:
            scanner.handle_data(html.unescape(text))
        elif closing is not None:
            scanner.handle_endtag(closing.lower())
        else:
            tag = tag.lower()
            if tag in _SPECIAL:
                return None
            if slash:
                scanner.handle_startendtag(tag, _attrs(attrs))
            else:
                scanner.handle_starttag(tag, _attrs(attrs))
        pos = token.end()
        if pos == end and (scanner._excerpt is not None or scanner._snapshot is not None):
            return None


# ---------------------------------------------------------------------------------------------
# check-site
