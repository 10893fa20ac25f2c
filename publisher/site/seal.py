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
import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from ..kernel.canonical import SOURCE_ID_RE, StrictJSONError, loads_record, sha256_hex
from ..kernel.errors import IntegrityError, PublisherError
from ..kernel.reasons import Reason
from ..kernel.spans import check_range
from ..kernel.store import SnapshotStore, verify_record
from ..runs import Run
from ..wiki.preflight import Finding, discover

__all__ = [
    "MANIFEST_NAME",
    "EXCERPT_CLASS",
    "SNAPSHOT_CLASS",
    "WINDOW_CLASS",
    "escape_text",
    "excerpt_html",
    "Excerpt",
    "SnapshotBlock",
    "PageScan",
    "scan_page",
    "manifest_bytes",
    "SiteCheck",
    "check_site",
    "check_record_copy",
    "record_uri",
]

MANIFEST_NAME = "evidence-manifest.json"
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


def manifest_bytes(
    entries: Iterable[dict[str, Any]],
    snapshots: Iterable[dict[str, Any]],
    generator: str,
    *,
    windows: Iterable[dict[str, Any]] = (),
    records: Iterable[dict[str, Any]] = (),
) -> bytes:
    """The manifest file: sorted entries, so an unchanged wiki seals to the same bytes.

    ``excerpts``, ``snapshots`` and ``windows`` entries name the page, the source id, the offsets
    (a window's are its start and end in the whole text) and the sha256 of the text shown;
    ``records`` name each published ``sources/<id>/record.json`` and the sha256 of its bytes.
    """

    def key(e: dict[str, Any]) -> tuple[Any, ...]:
        return (e["page"], e["source_id"], e.get("start", -1), e.get("end", -1), e["sha256"])

    doc = {
        "schema_version": 1,
        "generator": generator,
        "excerpts": sorted(entries, key=key),
        "snapshots": sorted(snapshots, key=key),
        "windows": sorted(windows, key=key),
        "records": sorted(records, key=lambda e: (e["source_id"], e["sha256"])),
    }
    return (json.dumps(doc, ensure_ascii=False, indent=1, sort_keys=True) + "\n").encode("utf-8")


def record_uri(source_id: str) -> str:
    """Where the site publishes a snapshot record, byte for byte, for readers to verify."""
    return f"sources/{source_id}/record.json"


def check_record_copy(path: Path, source_id: str) -> bytes:
    """Re-verify a published record file (every digest, its name); returns its bytes.

    Raises IntegrityError (SNAPSHOT_HASH_MISMATCH) when it is not strict JSON or does not verify.
    """
    data = path.read_bytes()
    try:
        raw, canonical = loads_record(data)
    except (StrictJSONError, ValueError) as exc:
        raise IntegrityError(
            f"published record of {source_id} is not strict JSON", reason=Reason.SNAPSHOT_HASH_MISMATCH
        ) from exc
    verify_record(raw, source_id, canonical_body=data if canonical else None)
    return data


# ---------------------------------------------------------------------------------------------
# check-site


@dataclass
class SiteCheck:
    """Outcome of ``check-site``: findings, and how much was checked."""

    findings: list[Finding] = field(default_factory=list)
    pages: int = 0
    excerpts: int = 0
    snapshots: int = 0
    windows: int = 0
    records: int = 0

    @property
    def ok(self) -> bool:
        return not self.findings

    def summary(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "pages": self.pages,
            "excerpts": self.excerpts,
            "snapshots": self.snapshots,
            "windows": self.windows,
            "records": self.records,
            "findings": [f.to_dict() for f in self.findings],
        }


class _Texts:
    """Verified snapshot texts by source id, read once each from whichever run holds the file."""

    def __init__(self, wiki_root: Path) -> None:
        runs, _ = discover(wiki_root)
        self._dirs: dict[str, list[Path]] = {}
        for path in runs:
            store = Run(path).store
            for sid in store.ids():
                self._dirs.setdefault(sid, []).append(store.folder)
        self._cache: dict[str, str | PublisherError] = {}

    def get(self, source_id: str) -> str:
        hit = self._cache.get(source_id)
        if hit is None:
            folders = self._dirs.get(source_id)
            if not SOURCE_ID_RE.fullmatch(source_id) or not folders:
                hit = PublisherError(f"no snapshot {source_id} in any run of the wiki", reason=Reason.UNKNOWN_SOURCE)
            else:
                try:
                    hit = SnapshotStore(folders[0]).read(source_id).text
                except PublisherError as exc:
                    hit = exc
            self._cache[source_id] = hit
        if isinstance(hit, PublisherError):
            raise hit
        return hit

    def stored_files(self, source_id: str) -> list[Path]:
        """The snapshot file of ``source_id`` in each run that holds it (after :meth:`get`)."""
        return [SnapshotStore(folder).path_for(source_id) for folder in self._dirs.get(source_id, [])]


def _load_manifest(site: Path, out: list[Finding]) -> dict[str, Any] | None:
    path = site / MANIFEST_NAME
    try:
        raw = json.loads(path.read_bytes())
    except FileNotFoundError:
        out.append(
            Finding(Reason.SCHEMA_ERROR, MANIFEST_NAME, "no evidence manifest: the site was not built by the hook")
        )
        return None
    except (OSError, ValueError) as exc:
        out.append(Finding(Reason.SCHEMA_ERROR, MANIFEST_NAME, f"unreadable manifest ({exc})"))
        return None
    ok = (
        isinstance(raw, dict)
        and raw.get("schema_version") == 1
        and isinstance(raw.get("excerpts"), list)
        and isinstance(raw.get("snapshots"), list)
        and isinstance(raw.setdefault("windows", []), list)
        and isinstance(raw.setdefault("records", []), list)
        and all(
            isinstance(e, dict) and isinstance(e.get("page"), str)
            for e in raw["excerpts"] + raw["snapshots"] + raw["windows"]
        )
        and all(isinstance(e, dict) and isinstance(e.get("source_id"), str) for e in raw["records"])
    )
    if not ok:
        out.append(Finding(Reason.SCHEMA_ERROR, MANIFEST_NAME, "manifest does not have the expected shape"))
        return None
    return raw


def _entry_key(e: dict[str, Any]) -> tuple[Any, ...]:
    return (e.get("source_id"), e.get("start"), e.get("end"), e.get("sha256"))


def _by_page(entries: list[dict[str, Any]], key: Any) -> dict[str, Counter[tuple[Any, ...]]]:
    out: dict[str, Counter[tuple[Any, ...]]] = {}
    for entry in entries:
        out.setdefault(entry["page"], Counter())[key(entry)] += 1
    return out


def check_site(site_dir: Path | str, wiki_root: Path | str) -> SiteCheck:
    """Re-read a built site and compare every evidence element with the seal and the snapshots.

    Findings: a missing or malformed manifest (SCHEMA_ERROR); an element that is not sealed, a
    sealed element missing from its page, markup inside an excerpt, text that differs from the
    re-slice, or a highlight off its offsets (EXCERPT_MISMATCH); a snapshot that no longer
    verifies, or a published ``record.json`` that is missing, differs from the stored snapshot
    file or does not verify (SNAPSHOT_HASH_MISMATCH); a snapshot that is gone (UNKNOWN_SOURCE);
    offsets outside the text (SPAN_OUT_OF_RANGE / SPAN_TOO_LONG).
    """
    site = Path(site_dir)
    check = SiteCheck()
    add = check.findings.append
    manifest = _load_manifest(site, check.findings)
    if manifest is None:
        return check
    texts = _Texts(Path(wiki_root))
    sealed = _by_page(manifest["excerpts"], _entry_key)
    sealed_snaps = _by_page(manifest["snapshots"], lambda e: (e.get("source_id"), e.get("sha256")))
    sealed_windows = _by_page(manifest["windows"], _entry_key)
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html") if p.is_file())
    for page in sorted(set(sealed) | set(sealed_snaps) | set(sealed_windows)):
        if page not in pages:
            add(Finding(Reason.EXCERPT_MISMATCH, page, "sealed page is missing from the site"))
    for page in pages:
        scan = scan_page((site / page).read_text(encoding="utf-8", errors="replace"))
        if not (
            scan.excerpts
            or scan.snapshots
            or scan.windows
            or scan.malformed
            or page in sealed
            or page in sealed_snaps
            or page in sealed_windows
        ):
            continue
        check.pages += 1
        if scan.malformed:
            add(Finding(Reason.EXCERPT_MISMATCH, page, f"{scan.malformed} malformed evidence element(s)"))
        found: Counter[tuple[Any, ...]] = Counter()
        for ex in scan.excerpts:
            check.excerpts += 1
            found[(ex.source_id, ex.start, ex.end, ex.sha256)] += 1
            _check_excerpt(ex, page, texts, add)
        _compare_seal(found, sealed.get(page, Counter()), page, "excerpt", add)
        snaps: Counter[tuple[Any, ...]] = Counter()
        for block in scan.snapshots:
            check.snapshots += 1
            text = block.text
            snaps[(block.source_id, sha256_hex(text.encode("utf-8")))] += 1
            _check_snapshot(block, text, page, texts, add)
        if snaps != sealed_snaps.get(page, Counter()):
            add(Finding(Reason.EXCERPT_MISMATCH, page, "snapshot text on the page differs from the seal"))
        windows: Counter[tuple[Any, ...]] = Counter()
        for block in scan.windows:
            check.windows += 1
            text = block.text
            windows[(block.source_id, block.window_start, block.window_end, sha256_hex(text.encode("utf-8")))] += 1
            _check_window(block, text, page, texts, add)
        _compare_seal(windows, sealed_windows.get(page, Counter()), page, "window", add)
    _check_records(site, manifest, texts, check)
    return check


def _compare_seal(
    found: Counter[tuple[Any, ...]], sealed: Counter[tuple[Any, ...]], page: str, what: str, add: Any
) -> None:
    """One finding per element on the page but not in the seal, and per sealed one not on the page."""
    extra, missing = found - sealed, sealed - found
    for detail, keys in ((f"{what} not in the seal", extra), (f"sealed {what} not on the page", missing)):
        for sid, start, end, _ in keys:
            add(Finding(Reason.EXCERPT_MISMATCH, page, detail, source_id=sid, start=start, end=end))


def _check_excerpt(ex: Excerpt, page: str, texts: _Texts, add: Any) -> None:

    def found(reason: Reason, detail: str) -> Finding:
        return Finding(reason, page, detail, source_id=ex.source_id or None, start=ex.start, end=ex.end)

    if ex.nested:
        add(found(Reason.EXCERPT_MISMATCH, "markup inside an excerpt element"))
    if ex.start is None or ex.end is None:
        add(found(Reason.SPAN_OUT_OF_RANGE, "excerpt offsets are not numbers"))
        return
    try:
        text = texts.get(ex.source_id)
    except PublisherError as exc:
        add(found(exc.reason or Reason.SNAPSHOT_HASH_MISMATCH, exc.one_line()))
        return
    problem = check_range(ex.start, ex.end, len(text))
    if problem is not None:
        add(found(problem, f"[{ex.start}, {ex.end}) on a text of {len(text)}"))
    elif text[ex.start : ex.end] != ex.text:
        add(found(Reason.EXCERPT_MISMATCH, "shown excerpt differs from the re-slice"))


def _check_marks(block: SnapshotBlock, page: str, add: Any) -> None:
    if block.nested_excerpt:
        add(Finding(Reason.EXCERPT_MISMATCH, page, "an excerpt element inside a snapshot", source_id=block.source_id))
    for problem in block.misplaced_marks():
        add(Finding(Reason.EXCERPT_MISMATCH, page, problem, source_id=block.source_id))


def _check_snapshot(block: SnapshotBlock, text: str, page: str, texts: _Texts, add: Any) -> None:
    try:
        expected = texts.get(block.source_id)
    except PublisherError as exc:
        add(Finding(exc.reason or Reason.SNAPSHOT_HASH_MISMATCH, page, exc.one_line(), source_id=block.source_id))
        return
    if text != expected:
        add(
            Finding(Reason.EXCERPT_MISMATCH, page, "snapshot text differs from the snapshot", source_id=block.source_id)
        )
    _check_marks(block, page, add)


def _check_window(block: SnapshotBlock, text: str, page: str, texts: _Texts, add: Any) -> None:
    """A window's text is ``text[start:end]`` of the verified snapshot and its marks sit right."""
    start, end = block.window_start, block.window_end

    def found(reason: Reason, detail: str) -> Finding:
        return Finding(reason, page, detail, source_id=block.source_id or None, start=start, end=end)

    try:
        expected = texts.get(block.source_id)
    except PublisherError as exc:
        add(found(exc.reason or Reason.SNAPSHOT_HASH_MISMATCH, exc.one_line()))
        return
    if start is None or end is None or not 0 <= start <= end <= len(expected):
        add(found(Reason.SPAN_OUT_OF_RANGE, f"window [{start}, {end}) on a text of {len(expected)}"))
        return
    if expected[start:end] != text:
        add(found(Reason.EXCERPT_MISMATCH, "window text differs from the re-slice"))
    _check_marks(block, page, add)


def _check_records(site: Path, manifest: dict[str, Any], texts: _Texts, check: SiteCheck) -> None:
    """Every published ``sources/<id>/record.json`` is the stored snapshot file, byte for byte, and verifies.

    Expected: each record the manifest names, and one for every source whose text or excerpts
    the site shows. Any record file found in the site is checked as well.
    """
    add = check.findings.append
    expected = {e["source_id"] for e in manifest["records"]}
    for entry in manifest["excerpts"] + manifest["snapshots"] + manifest["windows"]:
        if isinstance(entry.get("source_id"), str):
            expected.add(entry["source_id"])
    folder = site / "sources"
    present = {p.parent.name for p in folder.glob("*/record.json")} if folder.is_dir() else set()
    sealed = {e["source_id"]: e.get("sha256") for e in manifest["records"]}
    for sid in sorted(expected | present):
        rel = record_uri(sid)

        def finding(detail: str, sid: str = sid, rel: str = rel) -> Finding:
            return Finding(Reason.SNAPSHOT_HASH_MISMATCH, rel, detail, source_id=sid)

        path = site / rel
        if sid not in present or path.is_symlink() or not path.is_file():
            add(finding("published snapshot record is missing or not a plain file"))
            continue
        check.records += 1
        try:
            texts.get(sid)
            data = check_record_copy(path, sid)
        except PublisherError as exc:
            add(Finding(exc.reason or Reason.SNAPSHOT_HASH_MISMATCH, rel, exc.one_line(), source_id=sid))
            continue
        except OSError as exc:
            add(finding(f"cannot read the published record ({exc.strerror})"))
            continue
        stored = [p.read_bytes() for p in texts.stored_files(sid)]
        if data not in stored:
            add(finding("published record differs from the stored snapshot file"))
        elif sid in sealed and sealed[sid] != sha256_hex(data):
            add(finding("published record differs from the seal"))
        elif sid not in sealed:
            add(finding("published record is not in the seal"))
