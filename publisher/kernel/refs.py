"""The span-reference grammar of footnotes (CONTRACT section 7), parsed and written in one place.

A reference is ``src-<64 hex>#<start>-<end>``, optionally followed by the excerpt as its author
believes it reads, written as a JSON string. Several references separated by ``;`` are
alternatives. Reports and concept files use the same grammar.
"""

from __future__ import annotations

import json
import re
import unicodedata

from .frozen import FrozenValue

__all__ = [
    "SpanRef",
    "ParsedRefs",
    "parse_refs",
    "format_ref",
    "starts_with_ref",
    "READ_AS_REF",
    "VERIFIED_BADGE",
    "as_read",
    "looks_like_evidence",
    "neutral_text",
]

_REF_RE = re.compile(r"(src-[0-9a-f]{64})#(-?[0-9]+)-(-?[0-9]+)")
_LOOSE_START_RE = re.compile(r"\s*src-\S*#")
_DECODER = json.JSONDecoder()

READ_AS_REF = re.compile(r"src-[0-9a-f]{64}\s*#\s*[0-9]+\s*-\s*[0-9]+", re.IGNORECASE)
"""The span-reference form as a reader recognises it (any case, spaces around ``#`` and ``-``),
matched in :func:`as_read` form, so fullwidth ``＃`` and Unicode dashes count too."""

VERIFIED_BADGE = re.compile(
    r"[\u2713\u2714\u2611\u2705\U0001f5f8]\ufe0f?\s*verified|verified\s*[\u2713\u2714\u2705]", re.IGNORECASE
)
"""The site's verified badge ("✓ verified", "✔ Verified" ...), matched in :func:`as_read` form."""


def as_read(text: str) -> str:
    """``text`` as a reader takes it in: without the format characters a reader does not see
    (Unicode category ``Cf``: a soft hyphen, zero-width space or joiner, a bidi control, inside
    "veri\u00adfied" or a span reference), in the quote locator's normal form
    (:func:`publisher.kernel.locate.normalize`: NFKC, dashes as ``-``, white space collapsed)."""
    if text.isascii():
        return text
    from .locate import normalize  # the quote locator's tables, loaded where non-ASCII text is read

    return normalize("".join(c for c in text if c.isascii() or unicodedata.category(c) != "Cf"))


def looks_like_evidence(text: str) -> str | None:
    """The first span reference or verified badge a reader would see in ``text``, else None: as
    written (:func:`as_read` form), or spelled with look-alike letters and marks (compared by
    confusable skeleton, :mod:`publisher.kernel.lookalike`: a Cyrillic "ѕrс-…" reference, "√ vеrified")."""
    read = as_read(text)
    match = READ_AS_REF.search(read) or VERIFIED_BADGE.search(read)
    if match:
        return match.group(0)
    from .lookalike import badge_lookalike, ref_lookalikes  # only the prose checks ask: not a footnote's parse

    refs = ref_lookalikes(text)
    return refs[0] if refs else badge_lookalike(text)


def neutral_text(text: str) -> str:
    """``text`` from outside (a fetched page's ``<title>``, a run's question, a claim's statement)
    made unable to pass for evidence where the site shows it: bidi controls dropped and, when what
    is left reads as a span reference or the verified badge, invisible characters dropped and every
    symbol and ``#`` spelled out as its code point (``[U+2713]``), so the words stay readable and
    the look is gone."""
    from .lookalike import BIDI_CONTROLS, check_mark_like, invisible, symbol_like

    shown = BIDI_CONTROLS.sub("", text)
    if looks_like_evidence(shown) is None:
        return shown  # a joiner inside an emoji sequence stays
    shown = "".join(ch for ch in shown if ch.isspace() or not invisible(ch))
    spelled = "".join(
        f"[U+{ord(ch):04X}]" if symbol_like(ch) or check_mark_like(ch) or as_read(ch) == "#" else ch for ch in shown
    )
    return spelled if looks_like_evidence(spelled) is None else "[a title that reads as evidence]"


class SpanRef(FrozenValue):
    """One parsed reference; ``quoted`` is the author's excerpt, compared but never used. Frozen,
    equal and hashed by its fields (:class:`~.frozen.FrozenValue`)."""

    __slots__ = ("end", "quoted", "source_id", "start")
    _fields = ("source_id", "start", "end", "quoted")
    source_id: str
    start: int
    end: int
    quoted: str | None

    def __init__(self, source_id: str, start: int, end: int, quoted: str | None = None) -> None:
        self._init(source_id, start, end, quoted)


class ParsedRefs(FrozenValue):
    """References at the start of a footnote body, what follows them, and any grammar error.
    Frozen, equal and hashed by its fields (:class:`~.frozen.FrozenValue`)."""

    __slots__ = ("error", "refs", "rest")
    _fields = ("refs", "rest", "error")
    refs: tuple[SpanRef, ...]
    rest: str
    error: str | None

    def __init__(self, refs: tuple[SpanRef, ...], rest: str, error: str | None = None) -> None:
        self._init(refs, rest, error)


def starts_with_ref(body: str) -> bool:
    """Whether a footnote body claims to start with a span reference (well formed or not)."""
    return bool(_LOOSE_START_RE.match(body))


def parse_refs(body: str) -> ParsedRefs:
    """Parse the references a footnote body starts with.

    Returns every well-formed reference up to the first thing that is not one. A body that
    looks like a reference but is malformed (short or uppercase hex, bad offsets, a broken
    JSON excerpt) yields an ``error`` naming the problem instead of being silently skipped.
    """
    refs: list[SpanRef] = []
    pos = 0
    n = len(body)
    while True:
        while pos < n and body[pos].isspace():
            pos += 1
        match = _REF_RE.match(body, pos)
        if match is None:
            if _LOOSE_START_RE.match(body, pos):
                bad = body[pos:].split()[0][:90]
                return ParsedRefs(tuple(refs), body[pos:], f"malformed span reference {bad!r}")
            break
        source_id, start, end = match.group(1), int(match.group(2)), int(match.group(3))
        pos = match.end()
        quoted: str | None = None
        probe = pos
        while probe < n and body[probe] in " \t":
            probe += 1
        if probe < n and body[probe] == '"':
            try:
                value, after = _DECODER.raw_decode(body, probe)
            except json.JSONDecodeError as exc:
                return ParsedRefs(
                    tuple(refs), body[pos:], f"excerpt after {source_id}#{start}-{end} is not a JSON string ({exc.msg})"
                )
            if not isinstance(value, str):
                return ParsedRefs(tuple(refs), body[pos:], "excerpt is not a JSON string")
            quoted, pos = value, after
        elif probe < n and body[probe] not in ";\r\n" and not body[probe].isspace():
            if pos < n and not body[pos].isspace():
                return ParsedRefs(tuple(refs), body[pos:], f"unexpected text right after {source_id}#{start}-{end}")
        refs.append(SpanRef(source_id, start, end, quoted))
        probe = pos
        while probe < n and body[probe] in " \t":
            probe += 1
        if probe < n and body[probe] == ";":
            pos = probe + 1
            continue
        break
    return ParsedRefs(tuple(refs), body[pos:].strip())


def format_ref(source_id: str, start: int, end: int, excerpt: str | None = None) -> str:
    """Write one reference in the canonical form: the excerpt as a one-line JSON string."""
    ref = f"{source_id}#{start}-{end}"
    if excerpt is None:
        return ref
    return ref + " " + json.dumps(excerpt, ensure_ascii=False)
