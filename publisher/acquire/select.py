"""Selecting what to cite: a phrase, the whole sentence(s) around it, or the text from one phrase to another.

The library behind ``publisher source spans``. Every selection is a half-open range of code points
into a verified snapshot's text, returned with its excerpt (``text[start:end]``), the section and
page its start falls in (derived from the snapshot's maps, as ``result.json`` derives them), and a
window of context. Nothing is logged and nothing is written: selecting reads like ``find_spans``.

Three ways to select (CONTRACT section 11 gives the JSON shape; the extra fields are ours):

* ``query``: every occurrence of the text.
* ``query`` and ``sentence``: the whole sentence or sentences holding each occurrence, found by
  :mod:`publisher.acquire.sentences`; ``match_start``/``match_end`` keep the occurrence itself.
* ``from_text`` and ``to_text``: for each occurrence of the first, the range from its start to the
  end of the nearest occurrence of the second that starts after it ends, if that range is at most
  :data:`~publisher.kernel.spans.MAX_SPAN` long; ``sentence`` widens it to whole sentences.

A selection longer than a span may be is still shown, marked ``too_long`` with a ``note``: it
cannot be cited as is, and the note says what to do instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ..kernel.errors import UsageError
from ..kernel.models import Snapshot
from ..kernel.spans import MAX_SPAN, locator
from ..runs import Run
from .sentences import Sentences

__all__ = ["occurrences", "select_spans", "MAX_MATCHES"]

MAX_MATCHES = 200
"""Most selections returned at once; ``truncated`` says when there were more."""


def _pattern(text: str, option: str, ignore_case: bool) -> re.Pattern[str]:
    if not text:
        raise UsageError(f"{option} must not be empty")
    if len(text) > MAX_SPAN:
        raise UsageError(f"{option} is longer than a span may be ({MAX_SPAN} code points)")
    return re.compile(re.escape(text), re.IGNORECASE if ignore_case else 0)


def occurrences(text: str, pattern: re.Pattern[str], start: int = 0) -> Iterator[tuple[int, int]]:
    """Every occurrence of ``pattern`` in ``text`` from ``start``, overlapping ones included."""
    pos = start
    while (found := pattern.search(text, pos)) is not None:
        yield found.start(), found.end()
        pos = found.start() + 1


class _Selector:
    """One snapshot's text with its section, page and sentence maps, built once per command."""

    def __init__(self, snap: Snapshot, context: int) -> None:
        self.text = snap.text
        self.context = context
        self.section_at = locator(snap.sections)
        self.page_at = locator(snap.pages)
        # A PDF's lines are wrapped inside sentences; every other extractor breaks lines between blocks.
        self.sentences = Sentences(snap.text, wrapped=snap.pages is not None)

    def entry(self, start: int, end: int, **extra: Any) -> dict[str, Any]:
        text = self.text
        ws, we = max(0, start - self.context), min(len(text), end + self.context)
        section, page = self.section_at(start), self.page_at(start)
        out: dict[str, Any] = {
            "start": start,
            "end": end,
            "window_start": ws,
            "window_end": we,
            "window": text[ws:we],
            "excerpt": text[start:end],
            "section": section.title if section is not None else None,
            "page": page.page if page is not None else None,
            **extra,
        }
        if end - start > MAX_SPAN:
            out["too_long"] = True
            out["note"] = (
                f"{end - start} code points, over the {MAX_SPAN} a span may be: "
                "cite part of it (--from TEXT --to TEXT), or several spans"
            )
        return out

    def widen(self, start: int, end: int) -> tuple[int, int] | None:
        return self.sentences.covering(start, end)


def _ranges(
    sel: _Selector, first: re.Pattern[str], second: re.Pattern[str]
) -> Iterator[tuple[int, int, int, int] | None]:
    """For each occurrence of ``first``: (start, end, first's end, second's start), or None if too far."""
    for start, first_end in occurrences(sel.text, first):
        found = second.search(sel.text, first_end, start + MAX_SPAN)
        yield (start, found.end(), first_end, found.start()) if found else None


def select_spans(
    run: Run,
    source_id: str,
    *,
    query: str | None = None,
    from_text: str | None = None,
    to_text: str | None = None,
    sentence: bool = False,
    context: int = 80,
    ignore_case: bool = False,
    limit: int = MAX_MATCHES,
) -> dict[str, Any]:
    """Selections in one snapshot with exact offsets, excerpts, sections and pages (see the module)."""
    if (query is None) == (from_text is None and to_text is None):
        raise UsageError("select with --query TEXT, or with --from TEXT --to TEXT (not both)")
    if query is None and (from_text is None or to_text is None):
        raise UsageError("--from and --to go together: the selection runs from one to the other")
    if context < 0:
        raise UsageError(f"--context {context} must not be negative")
    given = ((query, "--query"), (from_text, "--from"), (to_text, "--to"))
    patterns = [_pattern(text, option, ignore_case) for text, option in given if text is not None]
    sel = _Selector(run.store.read(source_id), context)
    out: dict[str, Any] = {"source_id": source_id, "mode": "range" if query is None else "query", "sentence": sentence}
    matches: list[dict[str, Any]] = []
    seen: set[tuple[int, int]] = set()
    skipped = 0
    found: Iterator[tuple[int, int, int, int] | None]
    if query is not None:
        out["query"] = query
        found = ((s, e, s, e) for s, e in occurrences(sel.text, patterns[0]))
    else:
        out["from"], out["to"] = from_text, to_text
        found = _ranges(sel, patterns[0], patterns[1])
    truncated = False
    for hit in found:
        if hit is None:
            skipped += 1
            continue
        start, end, first_end, second_start = hit
        extra: dict[str, Any] = {}
        if query is None:
            extra = {"from_end": first_end, "to_start": second_start}
        if sentence:
            widened = sel.widen(start, end)
            if widened is None:  # the match is only white space between sentences
                continue
            extra = {"match_start": start, "match_end": end, **extra}
            start, end = widened
        if (start, end) in seen:
            continue
        if len(matches) == limit:
            truncated = True
            break
        seen.add((start, end))
        matches.append(sel.entry(start, end, **extra))
    out["matches"] = matches
    if query is None:
        out["skipped"] = skipped
    out["truncated"] = truncated
    return out
