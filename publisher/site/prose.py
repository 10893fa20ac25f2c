"""Prose that cannot act: the HTML of every page's Markdown, checked before any slot is filled.

Hand-written pages (``docs/*.md``) and concept prose are Markdown, and Markdown passes raw HTML
through. The hook checks what Python-Markdown made of each page, parsed as a browser parses it
(:func:`publisher.site.scan.parse_page`), so whatever route the markup took (a raw HTML block,
inline HTML, ``attr_list``, ``md_in_html``, a link) it is judged by what it will be:

* elements that run or load code or another document, change the page's base or policy, or
  draw outside HTML: ``script style iframe frame frameset object embed applet base meta link
  svg math template noscript portal fencedframe``;
* attributes that run or restyle: every ``on*`` event handler, ``style``, ``srcdoc``;
* URLs of a scheme that can run script or smuggle a document (``javascript: vbscript: data:
  blob:`` ...), in any attribute that takes a URL; a raster ``data:image`` in ``src`` is allowed;
* anything that looks like evidence: an evidence attribute, an ``evidence-*`` class, text of the
  span-reference form outside code (evidence footnotes are slot tokens at this point, so such
  text is a footnote no check read);
* markup that does not end where it started (an unclosed comment, raw-text element, tag or
  ``<select>``), which would swallow the theme's markup that follows it.

What trusted Markdown extensions generate themselves stays allowed:
:class:`publisher.site.trusted.TrustedOutput` records the HTML they put in Python-Markdown's
stash (Material's emoji SVG through ``pymdownx.emoji``), and a violation is forgiven only when
it is, serialised, one of those.
Each finding names the file and the line where its markup appears (check ``C-PROSE``).
"""

from __future__ import annotations

import html
import os
import re
import secrets
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..kernel import _fs
from ..kernel.findings import Finding
from ..kernel.reasons import Reason
from .markup import EVIDENCE_ATTRS
from .scan import ascii_lower, find_span_refs, parse_page

__all__ = [
    "CHECK",
    "Violation",
    "violations",
    "check_prose",
    "check_static",
    "source_text",
    "prose_file",
    "FORBIDDEN_ELEMENTS",
]

CHECK = "C-PROSE"

FORBIDDEN_ELEMENTS = (
    "script style iframe frame frameset object embed applet base meta link svg math template noscript "
    "portal fencedframe"
).split()
_URL_ATTRS = frozenset(
    "href src action formaction data poster background cite ping longdesc lowsrc dynsrc codebase manifest icon "
    "profile usemap xlink:href".split()
)
_LIST_URL_ATTRS = frozenset({"srcset", "imagesrcset"})
_BAD_SCHEMES = frozenset({"javascript", "vbscript", "livescript", "mocha", "data", "blob", "filesystem"})
_RASTER = re.compile(r"data:image/(?:png|gif|jpeg|jpg|webp|avif|bmp)[;,]", re.IGNORECASE)
_STRIP = "".join(chr(c) for c in range(0x21))
_TAB_NL = re.compile(r"[\t\n\r]")
_ASCII_WS = re.compile(r"[\t\n\f\r ]+")
_SCHEME = re.compile(r"([a-zA-Z][a-zA-Z0-9+.\-]*):")
_CODE = "pre, code, kbd, samp"


@dataclass(frozen=True)
class Violation:
    """One thing a page's prose may not carry: its kind, what to look for in the source (a tag or
    attribute name, a class, a URL), a description, and a signature that equal markup from a
    trusted extension would share."""

    kind: str
    name: str
    detail: str
    signature: tuple[str, ...]
    value: str = ""


def _scheme(url: str) -> str | None:
    """The scheme a browser's URL parser reads in ``url`` (lower case), if any."""
    cleaned = _TAB_NL.sub("", url.strip(_STRIP))
    match = _SCHEME.match(cleaned)
    return ascii_lower(match.group(1)) if match else None


def _url_problem(tag: str, name: str, value: str) -> str | None:
    urls = [part.strip().split(" ")[0] for part in value.split(",")] if name in _LIST_URL_ATTRS else [value]
    for url in urls:
        scheme = _scheme(url)
        if scheme not in _BAD_SCHEMES:
            continue
        if scheme == "data" and tag in {"img", "source", "image"} and _RASTER.match(url.strip()):
            continue
        return f"<{tag} {name}> holds a {scheme}: URL"
    return None


def violations(content_html: str) -> list[Violation]:
    """Everything in an HTML fragment (a page's body content) that prose may not carry."""
    sentinel = f"publisher-end-{secrets.token_hex(8)}"
    tree = parse_page(f'<!DOCTYPE html><body>{content_html}<p id="{sentinel}"></p>')
    out: list[Violation] = []
    ends = tree.css(f'[id="{sentinel}"]')
    if len(ends) != 1 or ends[0].tag != "p" or len(ends[0].attributes) != 1:
        out.append(
            Violation(
                "unclosed",
                "",
                "the markup does not end where it started (an unclosed comment, raw-text element, tag or "
                "<select> would swallow what follows it)",
                ("unclosed",),
            )
        )
    forbidden = set(FORBIDDEN_ELEMENTS)
    inside: set[int] = set()
    for node in tree.css("*"):  # document order
        if node.mem_id in inside:
            continue
        if node.tag in forbidden:
            # the outermost one stands for everything it holds
            inside.update(n.mem_id for n in node.traverse(include_text=False))
            out.append(Violation("element", node.tag or "", f"<{node.tag}> element", ("element", node.html or "")))
            continue
        attrs = node.attributes
        if attrs:
            out.extend(_attribute_violations(node.tag or "", attrs))
    out.extend(_references(tree))
    return out


def _attribute_violations(tag: str, attrs: dict[str, str | None]) -> list[Violation]:
    out = []
    looks: list[str] = []
    for name, value in attrs.items():
        value = value or ""
        if name.startswith("on") or name in {"style", "srcdoc"}:
            detail = f"<{tag} {name}>: " + ("an event handler" if name.startswith("on") else f"a {name} attribute")
            out.append(Violation("attribute", name, detail, ("attribute", tag, name, value), value))
        elif name in _URL_ATTRS or name in _LIST_URL_ATTRS:
            problem = _url_problem(tag, name, value)
            if problem:
                out.append(Violation("url", name, problem, ("url", tag, name, value), value))
        if name in EVIDENCE_ATTRS:
            looks.append(name)
    classes = attrs.get("class")
    if classes and "evidence-" in ascii_lower(classes):
        looks += [t for t in _ASCII_WS.split(ascii_lower(classes)) if t.startswith("evidence-")]
    if looks:
        detail = f"<{tag} {' '.join(looks)}> looks like evidence"
        out.append(Violation("evidence", looks[0], detail, ("evidence", tag, *looks), tag))
    return out


def _references(tree: Any) -> list[Violation]:
    body = tree.body
    if body is None or not find_span_refs(body.text(deep=True)):
        return []
    skipped = {n.mem_id for root in tree.css(_CODE) for n in root.traverse(include_text=True)}
    text = "".join(
        n.text_content or "" for n in body.traverse(include_text=True) if n.is_text_node and n.mem_id not in skipped
    )
    return [
        Violation(
            "reference",
            ref,
            f"text {ref[:24]}… quotes a source that no evidence check read (evidence footnotes are "
            "read with CommonMark rules: not after an unclosed fence, nor inside a paragraph)",
            ("reference", ref),
        )
        for ref in find_span_refs(text)
    ]


def _forgiven(found: list[Violation], trusted: Iterable[str]) -> list[Violation]:
    """``found`` less the violations that markup from trusted extensions accounts for, one each."""
    allowance: Counter[tuple[str, ...]] = Counter()
    for chunk in trusted:
        allowance.update(v.signature for v in violations(chunk) if v.kind != "unclosed")
    left = []
    for v in found:
        if allowance[v.signature] > 0:
            allowance[v.signature] -= 1
        else:
            left.append(v)
    return left


def _body_start(lines: list[str]) -> int:
    """The index of the first line after a YAML front matter block (0 without one): front matter
    is data, rendered through the escaping boundary, never prose."""
    if not lines or lines[0].rstrip("\r") != "---":
        return 0
    for index in range(1, len(lines)):
        if lines[index].rstrip("\r") in ("---", "..."):
            return index + 1
    return 0


class _Locator:
    """Finds the source line of each violation, in document order: the n-th violation written
    the same way is looked for after the line of the one before it."""

    def __init__(self, source: str) -> None:
        self.lines = source.split("\n")
        self.decoded = [ascii_lower(_TAB_NL.sub("", html.unescape(line))) for line in self.lines]
        self.after: dict[tuple[str, ...], int] = {}
        self.body = _body_start(self.lines)

    def _needle(self, v: Violation) -> tuple[tuple[str, ...], Any]:
        """A key for violations written the same way, and a test of one line (its number)."""
        if v.kind == "element":
            pattern = re.compile(rf"<\s*{re.escape(v.name)}(?![\w-])", re.IGNORECASE)
            return ("element", v.name), lambda n: pattern.search(self.lines[n])
        if v.kind == "attribute":
            start = re.escape(v.value[:24])
            pattern = re.compile(rf"(?<![\w-]){re.escape(v.name)}\s*=\s*[\"']?{start}", re.IGNORECASE)
            return ("attribute", v.name, v.value), lambda n: pattern.search(self.lines[n])
        text = ascii_lower(_TAB_NL.sub("", v.value if v.kind == "url" else v.name))[:32]
        if v.kind == "reference":
            text = text[:20]
        if v.kind == "evidence":  # on the line that opens such an element, if it was written as HTML
            tag = re.compile(rf"<\s*{re.escape(v.value)}(?![\w-])", re.IGNORECASE)
            return (v.kind, v.value, text), lambda n: text in self.decoded[n] and tag.search(self.lines[n])
        return (v.kind, text), lambda n: text and text in self.decoded[n]

    def line(self, v: Violation) -> int | None:
        if v.kind == "unclosed":
            return None
        tries = [v] if v.kind != "evidence" else [v, Violation("any", v.name, v.detail, v.signature)]
        for attempt in tries:
            key, hit = self._needle(attempt)
            first = self.after.get(key, self.body)
            for n in [*range(first, len(self.lines)), *range(self.body, first)]:
                if hit(n):
                    self.after[key] = n + 1
                    return n + 1
        return None


def check_prose(content_html: str, *, file: str, source: str | None, trusted: Iterable[str] = ()) -> list[Finding]:
    """Findings for one page's Markdown output: ``file`` names it (relative to the wiki), ``source``
    is its Markdown as written (for line numbers), ``trusted`` the stash chunks of trusted
    extensions during its conversion."""
    found = violations(content_html)
    if not found:
        return []
    out = []
    locate = _Locator(source) if source is not None else None
    for v in _forgiven(found, trusted):
        line = locate.line(v) if locate is not None else None
        reason = Reason.EXCERPT_MISMATCH if v.kind in {"evidence", "reference"} else None
        out.append(Finding(reason, file, v.detail, line=line, check=CHECK))
    return out


# ---------------------------------------------------------------------------------------------
# Files of docs/ that MkDocs copies as they are

_STATIC_PAGES = (".html", ".htm", ".xhtml", ".xht", ".shtml", ".mht", ".mhtml")
_SVG_ACTIVE = frozenset({"script", "foreignobject", "iframe", "embed", "object", "handler", "listener"})


def check_static(file: str, path: Path) -> list[Finding]:
    """A file of ``docs/`` published byte for byte: a page in HTML skips the prose check and the
    policy (refused); an SVG, which runs its own script when opened, may carry none (the checks
    of :func:`violations`, plus the XML constructs that could bring markup in: entities,
    style sheets)."""
    lower = path.name.lower()
    if lower.endswith(_STATIC_PAGES):
        detail = "an HTML file is published as it is, without the prose check or the policy; write it in Markdown"
        return [Finding(None, file, detail, check=CHECK)]
    if not lower.endswith((".svg", ".svgz")):
        return []
    try:
        data = _fs.read_regular(path)
    except OSError as exc:
        return [Finding(None, file, f"unreadable ({exc.strerror})", check=CHECK)]
    if lower.endswith(".svgz") or data[:2] == b"\x1f\x8b":
        return [Finding(None, file, "a compressed SVG cannot be checked; publish it uncompressed", check=CHECK)]
    text = data.decode("utf-8", errors="replace")
    problems = []
    if re.search(r"<!ENTITY|<\?xml-stylesheet", text, re.IGNORECASE):
        problems.append("an XML entity or style sheet declaration")
    tree = parse_page("<!DOCTYPE html><body>" + text)
    for node in tree.css("*"):
        tag = ascii_lower(node.tag or "")
        attrs = {ascii_lower(k): v or "" for k, v in node.attributes.items()}
        if tag in _SVG_ACTIVE:
            problems.append(f"<{tag}>")
        elif tag in {"set", "animate"} and ascii_lower(attrs.get("attributename", "")).endswith("href"):
            problems.append(f"<{tag}> of a link")
        problems += [
            v.detail
            for v in _attribute_violations(tag, node.attributes)
            if v.kind in {"attribute", "url"} and v.name != "style"
        ]
    return [Finding(None, file, f"SVG with {p}", check=CHECK) for p in dict.fromkeys(problems)]


def source_text(path: Path | None) -> str | None:
    """A page's Markdown source for line numbers (None when it cannot be read)."""
    if path is None:
        return None
    try:
        return _fs.read_regular(path).decode("utf-8", errors="replace")
    except OSError:
        return None


def prose_file(wiki_root: Path, src_uri: str, abs_src_path: str | None, origin: Path | None) -> tuple[str, Path | None]:
    """Where a page's prose comes from: the file to name in findings (relative to the wiki) and
    its path for line numbers. ``origin`` is the concept file of a generated concept page; other
    generated pages (``abs_src_path`` None) hold no prose of their own."""
    path = origin or (Path(abs_src_path) if abs_src_path else None)
    if path is None:
        return f"(generated page) {src_uri}", None
    return os.path.relpath(path, wiki_root).replace(os.sep, "/"), path
