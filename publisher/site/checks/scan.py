"""The site seal's scanner: every evidence element of a built page, read as a browser reads it.

At build time the hook scans every page it writes and records each evidence element in
``evidence-manifest.json``; ``publisher check-site`` scans the built pages again and compares
them with the manifest and with a fresh re-slice of the snapshots. Both read a page with lexbor
(through ``selectolax``), an implementation of the WHATWG HTML tokenizer and tree builder, so
comments (``<!-->``, ``--!>``), foreign content (``<svg><style>``), duplicate attributes (the
first wins), character references, carriage returns and NULs come out as they do in a browser.

Evidence elements are those of :mod:`publisher.site.pages.markup` (the one markup contract between
page generation, the report renderer and this module).

Anything else that looks like evidence is *malformed*, and a malformed element fails the build
and ``check-site``: an element with any of the evidence attributes or an ``evidence-*`` class
(compared without regard to ASCII case) that is not one of the above, a highlight outside a
snapshot, a verify control (the in-browser verifier adds those; a page never carries one),
text of the span-reference form ``src-<64 hex>#<start>-<end>`` outside code and outside a
verified element (a footnote quoting a source that no check read), and the constructs whose
content a browser shows while a parser with scripting off does not see it the same way
(``<template>``, ``<noscript>``) or that show another document (``<iframe>``, ``<object>`` ...).
Decorative classes of generated pages (``evidence-link``, ``evidence-id`` ...) are allowed.

A page also yields, wherever on the page they are, its inline scripts and style elements as the
browser reads them, for the Content-Security-Policy (:mod:`publisher.site.checks.csp`), and the
address of each script it loads from a file; the seal holds every one of them to the scripts the
site ships (:mod:`publisher.site.checks.seal`). A script or style inside the page's content
(:data:`CONTENT_CLASS`) is malformed: only an author could have put it there. This module does
not import MkDocs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from selectolax.lexbor import LexborHTMLParser, LexborNode

from ...kernel.canonical import SOURCE_ID_RE, sha256_hex
from ...kernel.refs import READ_AS_REF
from ..pages.markup import (
    ANCHOR_CLASS,
    CONTEXT_CLASS,
    CONTROL_ATTRS,
    DECORATIVE_CLASSES,
    EVIDENCE_ATTRS,
    EXCERPT_ATTRS,
    EXCERPT_CLASS,
    MARK_CLASS,
    SNAPSHOT_CLASS,
    WINDOW_ATTRS,
    WINDOW_CLASS,
    WINDOWS_CLASS,
)

__all__ = [
    "SPAN_REF",
    "CONTENT_CLASS",
    "META_EQUIV",
    "find_span_refs",
    "ascii_lower",
    "class_tokens",
    "Excerpt",
    "SnapshotBlock",
    "PageScan",
    "parse_page",
    "scan_page",
    "is_script",
]

_EVIDENCE_SET = frozenset(EVIDENCE_ATTRS)

_VOID = frozenset("area base br col embed hr img input link meta source track wbr".split())
_LOOKS = ", ".join([*(f"[{a}]" for a in EVIDENCE_ATTRS), '[class*="evidence-" i]'])
_ELSEWHERE_TAGS = frozenset("template noscript iframe frame frameset object embed portal fencedframe".split())
_ONE_PASS = ", ".join(["script", "style", "meta[http-equiv]", *sorted(_ELSEWHERE_TAGS), _LOOKS])
_CODE = "pre, code, kbd, samp, script, style"

META_EQUIV = frozenset({"content-security-policy", "content-type", "x-ua-compatible"})
"""The ``http-equiv`` values a page may carry: its policy and what only describes the document."""

CONTENT_CLASS = "md-content__inner"
"""The class of the element Material puts a page's content in; a script or style element inside
it is malformed, never given a hash by the page's policy."""

SPAN_REF = READ_AS_REF
"""The span-reference form, as a reader would recognise it (any case, spaces around # and -)."""
_REF_TAIL = re.compile(r"#\s*[0-9]+\s*-\s*[0-9]+")
_REF_HEAD = re.compile(r"src-[0-9a-f]{64}", re.IGNORECASE)
_SPACE = frozenset(
    " \t\n\r\f\v\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
"""What ``\\s`` matches in a str pattern."""

_ASCII_UPPER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_ASCII_WS = re.compile(r"[\t\n\f\r ]+")
_JS_TYPES = frozenset(
    {"", "module", "text/javascript", "application/javascript", "application/ecmascript", "text/ecmascript"}
    | {f"text/javascript1.{n}" for n in range(6)}
    | {"application/x-ecmascript", "application/x-javascript", "text/jscript", "text/livescript"}
    | {"text/x-ecmascript", "text/x-javascript"}
)


def ascii_lower(value: str) -> str:
    """``value`` with ASCII letters lower-cased only (HTML's case-insensitive comparisons)."""
    return value.translate(_ASCII_UPPER)


def class_tokens(node: LexborNode) -> list[str]:
    """The element's class names as a browser splits them, ASCII-lower-cased."""
    return _tokens(node.attributes.get("class"))


def _tokens(value: str | None) -> list[str]:
    return [t for t in _ASCII_WS.split(ascii_lower(value)) if t] if value else []


@dataclass(frozen=True)
class Excerpt:
    """An excerpt element found on a page."""

    source_id: str
    start: int | None
    end: int | None
    text: str
    nested: bool
    before: str | None = None
    """The text of the ``evidence-context`` element just before it (the rest of its sentence, as
    :mod:`publisher.site.pages.context` shows it), or None when there is none."""
    after: str | None = None
    """The same, just after it."""

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
    text: str = ""
    marks: list[tuple[int | None, int | None, int, int]] = field(default_factory=list)
    nested_excerpt: bool = False
    window: bool = False
    window_start: int | None = None
    window_end: int | None = None

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
    """Every evidence element of one page, what only looks like one, and its inline code."""

    excerpts: list[Excerpt] = field(default_factory=list)
    snapshots: list[SnapshotBlock] = field(default_factory=list)
    windows: list[SnapshotBlock] = field(default_factory=list)
    malformed: list[str] = field(default_factory=list)
    """One short description per element (or text) that looks like evidence and is not."""
    scripts: list[str] = field(default_factory=list)
    """Text of each inline classic or module script, as the browser hashes it for the CSP."""
    script_sources: list[str] = field(default_factory=list)
    """The ``src`` of each classic or module script loaded from a file."""
    styles: list[str] = field(default_factory=list)
    """Text of each ``<style>`` element (HTML or SVG)."""
    policies: list[str] = field(default_factory=list)
    """Content of each ``<meta http-equiv="Content-Security-Policy">``."""
    actions: list[str] = field(default_factory=list)
    """Markup that acts without any script of the site, wherever on the page: each event handler
    attribute (``<p onclick>``) and each ``<meta http-equiv>`` outside :data:`META_EQUIV` (a
    refresh sends the reader elsewhere, and no policy stops it)."""
    contexts_beside: set[int] = field(default_factory=set)
    """The ``mem_id`` of each sentence context found beside an excerpt (any other is malformed)."""


def _int(value: str | None) -> int | None:
    if value is None or not re.fullmatch(r"[0-9]{1,12}", value):
        return None
    return int(value)


def _describe(node: LexborNode) -> str:
    attrs = " ".join(f"{k}" for k in node.attributes if k == "class" or k in EVIDENCE_ATTRS)
    return f"<{node.tag}{' ' + attrs if attrs else ''}>"


def is_script(node: LexborNode) -> bool:
    """Whether a ``<script>`` element without ``src`` runs as JavaScript (classic or module)."""
    attrs = node.attributes
    kind = attrs.get("type")
    if kind is None:
        language = attrs.get("language")
        return not language or ascii_lower(language) in {"javascript", "ecmascript", "jscript", "livescript"}
    return ascii_lower(kind.strip(" \t\n\f\r")) in _JS_TYPES


def parse_page(page_html: str) -> LexborHTMLParser:
    """The page's document tree, as a browser builds it (one leading byte order mark dropped)."""
    return LexborHTMLParser(page_html.removeprefix("\ufeff"))


def _block(node: LexborNode, *, window: bool) -> SnapshotBlock:
    """A snapshot or window: its text content and where each of its marks sits."""
    attrs = node.attributes
    block = SnapshotBlock(
        str(attrs.get("data-window-of" if window else "data-source-id") or ""),
        window=window,
        window_start=_int(attrs.get("data-window-start")) if window else None,
        window_end=_int(attrs.get("data-window-end")) if window else None,
    )
    if node.tag != "pre":
        block.nested_excerpt = True  # a snapshot is a <pre>: elsewhere, white space is not kept
    parts: list[str] = []
    at = 0
    for child in node.traverse(include_text=True):
        if child is node or child.mem_id == node.mem_id:
            continue
        if child.is_text_node:
            text = child.text_content or ""
            parts.append(text)
            at += len(text)
            continue
        if not child.is_element_node:
            continue
        classes = class_tokens(child)
        child_attrs = child.attributes
        if child.tag == "mark" and MARK_CLASS in classes:
            length = len(child.text(deep=True))
            block.marks.append(
                (_int(child_attrs.get("data-start")), _int(child_attrs.get("data-end")), at, at + length)
            )
            if "data-source-id" in child_attrs or any(a in child_attrs for a in WINDOW_ATTRS + CONTROL_ATTRS):
                block.nested_excerpt = True
        elif child.tag == "span" and classes == [ANCHOR_CLASS] and set(child_attrs) <= {"class", "id"}:
            if child.child is not None:
                block.nested_excerpt = True
        elif any(c.startswith("evidence-") for c in classes) or any(a in child_attrs for a in EVIDENCE_ATTRS):
            block.nested_excerpt = True
    block.text = "".join(parts)
    return block


def _in_content(node: LexborNode) -> bool:
    """Whether ``node`` lies in the element that holds the page's content (Material's
    ``article.md-content__inner``): the theme writes its own scripts and styles elsewhere."""
    parent = node.parent
    while parent is not None:
        if parent.tag == "article" and CONTENT_CLASS in _tokens(parent.attributes.get("class")):
            return True
        parent = parent.parent
    return False


def scan_page(page_html: str, tree: LexborHTMLParser | None = None) -> PageScan:
    """Every evidence element of a page, each thing that only looks like one, and its inline code."""
    tree = tree if tree is not None else parse_page(page_html)
    scan = PageScan()
    looks: list[tuple[LexborNode, dict[str, str | None], list[str]]] = []
    # One pass of the selector engine over the page; a node matching several selectors comes
    # back once per selector.
    for node in {n.mem_id: n for n in tree.css(_ONE_PASS)}.values():
        tag = node.tag
        attrs = node.attributes
        if tag in ("script", "style") and _in_content(node):
            scan.malformed.append(f"<{tag}> in the page's content, where only an author could have put it")
        elif tag == "script":
            if is_script(node):
                src = attrs.get("src")
                if src is None:
                    scan.scripts.append(node.text(deep=True))
                else:
                    scan.script_sources.append(src)
        elif tag == "style":
            scan.styles.append(node.text(deep=True))
        elif tag == "meta":
            equiv = ascii_lower((attrs.get("http-equiv") or "").strip(" \t\n\f\r"))
            if equiv == "content-security-policy":
                scan.policies.append(attrs.get("content") or "")
            elif equiv not in META_EQUIV:
                scan.actions.append(f"<meta http-equiv={equiv[:40]}>")
        elif tag in _ELSEWHERE_TAGS:
            scan.malformed.append(f"<{tag}> shows content the seal cannot read as the browser does")
        classes = _tokens(attrs.get("class"))
        if not _EVIDENCE_SET.isdisjoint(attrs) or any(c.startswith("evidence-") for c in classes):
            looks.append((node, attrs, classes))
    blocks: list[LexborNode] = []
    for node, _, classes in looks:
        if SNAPSHOT_CLASS in classes or WINDOW_CLASS in classes:
            if SNAPSHOT_CLASS in classes and WINDOW_CLASS in classes:
                scan.malformed.append(f"{_describe(node)} is both a snapshot and a window")
                continue
            window = WINDOW_CLASS in classes
            block = _block(node, window=window)
            (scan.windows if window else scan.snapshots).append(block)
            blocks.append(node)
    inside = {n.mem_id for b in blocks for n in b.traverse(include_text=False)}
    shown: list[LexborNode] = list(blocks)
    for node, attrs, classes in looks:
        if node.mem_id in inside:
            continue  # a block, or a mark or anchor inside one (judged with its block)
        problem = _judge(node, attrs, classes, scan)
        if problem is None:
            if attrs.get("data-source-id") is not None:
                shown.append(node)
        else:
            scan.malformed.append(problem)
    for node, _, classes in looks:
        if CONTEXT_CLASS in classes and node.mem_id not in scan.contexts_beside and node.mem_id not in inside:
            scan.malformed.append(f"{_describe(node)} is a sentence context beside no excerpt")

    _span_refs(tree, shown, scan)
    _handlers(tree, scan)
    return scan


def _handlers(tree: LexborHTMLParser, scan: PageScan) -> None:
    """Each event handler attribute of the page (the parser has lower-cased every name), in HTML,
    SVG and MathML alike: none of the theme's templates writes one, and the prose check refuses
    an author's, so one here came another way (a configured string printed as HTML)."""
    for node in tree.css("*"):
        for name in node.attributes:
            if name.startswith("on"):
                scan.actions.append(f"<{node.tag} {name[:40]}>")


def _judge(node: LexborNode, attrs: dict[str, str | None], classes: list[str], scan: PageScan) -> str | None:
    """An element outside any snapshot that looks like evidence: recorded if an excerpt, else a problem."""
    evidence = [c for c in classes if c.startswith("evidence-")]
    if any(a in attrs for a in CONTROL_ATTRS) or any(c.startswith("evidence-verify") for c in evidence):
        return f"{_describe(node)} is a verify control, which only the in-browser verifier adds"
    if MARK_CLASS in evidence or ANCHOR_CLASS in evidence or "data-spans" in attrs:
        return f"{_describe(node)} is a highlight outside a snapshot text"
    if WINDOWS_CLASS in evidence or "data-window-of" in attrs:
        sid = attrs.get("data-window-of") or ""
        ok = (
            node.tag == "div"
            and evidence == [WINDOWS_CLASS]
            and set(attrs) - {"data-search-exclude"} == {"class", "data-window-of"}
            and not attrs.get("data-search-exclude")  # the search index may skip long windows
            and SOURCE_ID_RE.fullmatch(sid) is not None
            and all(w.attributes.get("data-window-of") == sid for w in node.css("[data-window-of]"))
        )
        return None if ok else f"{_describe(node)} is not a container of verified windows"
    if any(a in attrs for a in WINDOW_ATTRS):
        return f"{_describe(node)} carries window offsets outside a window"
    if any(a in attrs for a in EXCERPT_ATTRS) or EXCERPT_CLASS in evidence:
        if not all(a in attrs for a in EXCERPT_ATTRS):
            return f"{_describe(node)} lacks one of data-source-id, data-start, data-end"
        if node.tag in _VOID:
            return f"{_describe(node)} is an empty element"
        unknown = [c for c in evidence if c != EXCERPT_CLASS and c not in DECORATIVE_CLASSES]
        if unknown:
            return f"{_describe(node)} carries an unknown evidence class {unknown[0]}"
        # Exactly what excerpt_html writes (an allow-list): any other attribute or class could
        # hide the verified text or change how it reads (hidden, style, inert, dir, a class that
        # the theme styles away) while the text itself still matches the re-slice.
        foreign = sorted(set(attrs) - _EXCERPT_OWN)
        if foreign or not set(classes) <= _EXCERPT_LOOKS or len(classes) > 1:
            what = f"attribute {foreign[0][:40]}" if foreign else "a class other than " + EXCERPT_CLASS
            return f"{_describe(node)} carries {what}, which no excerpt the build writes has"
        nested = any(child.is_element_node for child in node.iter(include_text=False))
        before, after = _context_beside(node.prev), _context_beside(node.next)
        scan.excerpts.append(
            Excerpt(
                str(attrs.get("data-source-id") or ""),
                _int(attrs.get("data-start")),
                _int(attrs.get("data-end")),
                node.text(deep=True),
                nested,
                None if before is None else before.text(deep=True),
                None if after is None else after.text(deep=True),
            )
        )
        scan.contexts_beside.update(n.mem_id for n in (before, after) if n is not None)
        return None
    unknown = [c for c in evidence if c not in DECORATIVE_CLASSES]
    if unknown:
        return f"{_describe(node)} carries an unknown evidence class {unknown[0]}"
    return None


def _context_beside(node: LexborNode | None) -> LexborNode | None:
    """``node`` if it is a sentence context as the templates write one beside an excerpt (a
    ``<span class="evidence-context">`` with no other attribute and nothing but text)."""
    if node is None or node.tag != "span" or set(node.attributes) != {"class"}:
        return None
    if class_tokens(node) != [CONTEXT_CLASS] or any(c.is_element_node for c in node.iter(include_text=False)):
        return None
    return node


_EXCERPT_OWN = frozenset({"class", "id", *EXCERPT_ATTRS})
"""The attributes an excerpt element is written with: :func:`publisher.site.pages.markup.excerpt_html`,
and the report template's (``report.html.j2``), whose block quote may carry an ``id`` to link to."""

_EXCERPT_LOOKS = frozenset({EXCERPT_CLASS, "excerpt"})
"""The class an excerpt element carries, if any: ``excerpt_html``'s, or the report template's."""


def find_span_refs(text: str) -> list[str]:
    """Every span reference in ``text`` (:data:`SPAN_REF`), found from its ``#<start>-<end>`` tail,
    which a literal ``#`` makes quick to find, then the ``src-<64 hex>`` before it."""
    found = []
    for tail in _REF_TAIL.finditer(text):
        at = tail.start()
        while at > 0 and text[at - 1] in _SPACE:
            at -= 1
        if at >= 68 and _REF_HEAD.fullmatch(text, at - 68, at):
            found.append(text[at - 68 : tail.end()])
    return found


def _span_refs(tree: LexborHTMLParser, shown: list[LexborNode], scan: PageScan) -> None:
    """Text of the span-reference form outside code and outside verified elements is malformed.

    A verified excerpt never shows its reference in full (its link is abbreviated), so such text
    is a footnote quoting a source that no check read: e.g. evidence-footnote syntax that
    Python-Markdown renders as a footnote while the concept parser read it as code. The text is
    read in document order across elements, as a reader sees ``src-<b>…</b>#1-2``.
    """
    body = tree.body
    if body is None or not find_span_refs(body.text(deep=True)):
        return
    roots = [*shown, *tree.css(_CODE)]
    skipped = {n.mem_id for root in roots for n in root.traverse(include_text=True)}
    text = "".join(
        n.text_content or "" for n in body.traverse(include_text=True) if n.is_text_node and n.mem_id not in skipped
    )
    for ref in find_span_refs(text):
        scan.malformed.append(f"text {ref[:24]}… quotes a source outside any verified excerpt")
