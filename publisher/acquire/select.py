"""Selecting what to cite: a phrase, the whole sentence(s) around it, or the text from one phrase to another.

The library behind ``publisher source spans``. Every selection is a half-open range of code points
into a verified snapshot's text, returned with its excerpt (``text[start:end]``), the section and
page its start falls in (derived from the snapshot's maps, as ``result.json`` derives them), and a
window of context. Nothing is logged and nothing is written: selecting reads like ``find_spans``.

Three ways to select (CONTRACT section 11 gives the JSON shape; the extra fields are ours):

* ``query``: every occurrence of the text.
* ``query`` and ``sentence``: the whole sentence or sentences holding each occurrence, found by
  :mod:`publisher.kernel.sentences`; ``match_start``/``match_end`` keep the occurrence itself.
* ``from_text`` and ``to_text``: for each occurrence of the first, the range from its start to the
  end of the nearest occurrence of the second that starts after it ends, if that range is at most
  :data:`~publisher.kernel.spans.MAX_SPAN` long; ``sentence`` widens it to whole sentences.

A selection longer than a span may be is still shown, marked ``too_long`` with a ``note``: it
cannot be cited as is, and the note says what to do instead.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator
from typing import Any

from ..kernel.canonical import SOURCE_ID_RE
from ..kernel.errors import UsageError
from ..kernel.locate import LOCATE_BUDGET, MAX_CANDIDATES, Candidate, Text, search_quote, search_terms
from ..kernel.sentences import Sentences
from ..kernel.shapes import SnapshotView
from ..kernel.spans import MAX_SPAN, locator
from ..runs import Run

__all__ = [
    "select_spans",
    "locate_quote",
    "locate_in",
    "located_json",
    "stopped_empty",
    "MAX_MATCHES",
    "MAX_QUOTE",
    "SEARCH_BUDGET",
]

MAX_MATCHES = 200
"""Most selections returned at once; ``truncated`` says when there were more."""


def _checked(text: str, option: str) -> str:
    if not text.strip():
        raise UsageError(f"{option} must not be empty")
    if len(text) > MAX_SPAN:
        raise UsageError(f"{option} is longer than a span may be ({MAX_SPAN} code points)")
    return text


SEARCH_BUDGET = 2_000_000
"""The work one search of a selection may do (see :class:`~publisher.kernel.locate.Budget`): each
occurrence found after normalisation is checked against its raw slice (never assumed), which costs
the slice's length, and finding each occurrence costs too, so a long term repeated all over a
repetitive text would otherwise take minutes. ``truncated`` says when a search stopped at it; a
search that stopped before finding anything is refused (:func:`stopped_empty`), never reported as
finding nothing."""


def stopped_empty(what: str, source_id: str, budget: int, option: str) -> UsageError:
    """The refusal of a search that stopped at its budget having found nothing yet: it did not
    finish, so it cannot say that nothing is there (one line, naming the option at fault)."""
    return UsageError(
        f"searching {what} in {source_id} stopped at its budget ({budget:,} units of search work) before it "
        "finished, with nothing found so far (which does not show it absent): search a longer or more specific text",
        source_id=source_id,
        field=option,
    )


def _found(text: Text, terms: list[str], ignore_case: bool) -> list[tuple[list[tuple[int, int]], bool]]:
    """The occurrences of each term, exact or normalised (:func:`~publisher.kernel.locate.search_terms`),
    the first ones within :data:`SEARCH_BUDGET` each; and whether its search stopped there."""
    # --from and --to are searched together: a long text's blocks are normalised once for both.
    answers = search_terms(text, terms, fold_case=ignore_case, limit=len(text) + 1, budget=SEARCH_BUDGET)
    return [([(hit.start, hit.end) for hit in hits], stopped) for hits, stopped in answers]


class _Selector:
    """One snapshot's text with its section, page and sentence maps, built once per command."""

    def __init__(self, snap: SnapshotView, text: Text, context: int) -> None:
        self.source_id = snap.source_id
        self.text = text  # a long one is read a piece at a time (see ``SnapshotStore.read_searchable``)
        self.context = context
        self.section_at = locator(snap.sections)
        self.page_at = locator(snap.pages)
        # A PDF's lines are wrapped inside sentences; every other extractor breaks lines between blocks.
        self.sentences = Sentences(text, wrapped=snap.pages is not None)

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
    first: list[tuple[int, int]], second: list[tuple[int, int]], frontier: int | None = None
) -> Iterator[tuple[int, int, int, int] | None]:
    """For each occurrence of ``first``: (start, end, first's end, second's start), or None if too far.

    ``frontier``: where the search for ``second`` stopped at its budget (the start of the last
    occurrence it found, -1 for none), None when it finished. An occurrence of ``first`` without a
    range whose span could reach past the frontier is not known to be too far, and yields nothing."""
    second_starts = [s for s, _ in second]
    for start, first_end in first:
        limit = start + MAX_SPAN
        hit = None
        # The nearest occurrence of the second text that starts after the first ends, within a span.
        for i in range(bisect_left(second_starts, first_end), len(second)):
            if second[i][0] >= limit:
                break
            if second[i][1] <= limit:
                hit = second[i]
                break
        if hit is None and frontier is not None and limit > frontier + 1:
            continue  # its second text may lie where the search did not reach
        yield (start, hit[1], first_end, hit[0]) if hit else None


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
    terms = [_checked(text, option) for text, option in given if text is not None]
    sel = _Selector(*run.store.read_searchable(source_id), context)
    out: dict[str, Any] = {"source_id": source_id, "mode": "range" if query is None else "query", "sentence": sentence}
    matches: list[dict[str, Any]] = []
    seen: set[tuple[int, int]] = set()
    skipped = 0
    found: Iterator[tuple[int, int, int, int] | None]
    if query is not None:
        out["query"] = query
        ((hits, truncated),) = _found(sel.text, terms, ignore_case)
        found = ((s, e, s, e) for s, e in hits)
    else:
        out["from"], out["to"] = from_text, to_text
        (firsts, more_firsts), (seconds, more_seconds) = _found(sel.text, terms, ignore_case)
        truncated = more_firsts or more_seconds  # the searches stopped at their budget
        frontier = (seconds[-1][0] if seconds else -1) if more_seconds else None
        found = _ranges(firsts, seconds, frontier)
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
    if truncated and not matches:  # the searches stopped at their budget, with nothing to show
        what, field = ("the --query text", "query") if query is not None else ("the --from and --to texts", "from_text")
        raise stopped_empty(what, sel.source_id, SEARCH_BUDGET, field)
    out["matches"] = matches
    if query is None:
        out["skipped"] = skipped
    out["truncated"] = truncated
    return out


MAX_QUOTE = 2 * MAX_SPAN
"""Longest quote the locator is asked about (white space and ellipses may make a quote of a span
longer than the span)."""


def locate_in(
    run: Run, source_id: str, quote: str, *, limit: int = MAX_CANDIDATES
) -> tuple[SnapshotView, list[Candidate], bool]:
    """The verified snapshot, the candidate offsets of ``quote`` in it (see :func:`locate_quote`),
    and whether the search stopped at :data:`~publisher.kernel.locate.LOCATE_BUDGET` (its
    candidates then genuine but maybe not all). A search that stopped before finding any is
    refused (:class:`UsageError`, field ``quote``): it cannot say the quote is nowhere."""
    if not isinstance(source_id, str) or not SOURCE_ID_RE.fullmatch(source_id):
        raise UsageError(f"--source-id {str(source_id)[:80]!r} is not a source id (src-<64 hex>)")
    if not isinstance(quote, str) or not quote.strip():
        raise UsageError("--quote must not be empty")
    if len(quote) > MAX_QUOTE:
        raise UsageError(f"--quote is {len(quote)} code points, over the {MAX_QUOTE} a quote of a span may be")
    snap = run.store.read_view(source_id)
    found, stopped = search_quote(snap.text, quote, limit=limit, budget=LOCATE_BUDGET)
    if stopped and not found:
        raise stopped_empty("the quote", snap.source_id, LOCATE_BUDGET, "quote")
    return snap, found, stopped


def locate_quote(run: Run, source_id: str, quote: str, *, limit: int = MAX_CANDIDATES) -> dict[str, Any]:
    """Candidate offsets of ``quote`` in one verified snapshot: CONTRACT section 15's shape.

    ``{"source_id", "quote", "candidates": [...]}`` with each candidate's ``kind``, ``start``, ``end``
    (and ``fragments`` for kind ``fragments``), from :func:`publisher.kernel.locate.search_quote`,
    and ``truncated: true`` when the search stopped at its budget. A suggestion only: nothing is
    logged, written or accepted. A malformed source id, an empty or over-long quote is a
    :class:`UsageError` raised before any file is read; so is a search that stopped having found
    nothing.
    """
    snap, candidates, stopped = locate_in(run, source_id, quote, limit=limit)
    return located_json(snap.source_id, quote, candidates, truncated=stopped)


def located_json(source_id: str, quote: str, candidates: list[Candidate], *, truncated: bool = False) -> dict[str, Any]:
    """``source locate --json``'s object (CONTRACT section 15), with ``truncated: true`` (only) when
    the search stopped at its budget: the candidates are genuine, but there may be more."""
    out: dict[str, Any] = {"source_id": source_id, "quote": quote, "candidates": [c.as_json() for c in candidates]}
    if truncated:
        out["truncated"] = True
    return out
