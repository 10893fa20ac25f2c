"""Bounded, logged reads of stored snapshots for agents: a window of a source's text, the
occurrences of a phrase, a source's summary.

The read-only side of :mod:`.sources` (which re-exports it), kept apart so the commands agents call
hundreds of times a session (``source read``, ``source spans``) load none of acquisition's
extractors, metadata or receipts. A read is logged as a ``read`` event (never ``fresh``); the
append refuses a torn or invalid last line of the log, and nothing is written then.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..kernel.errors import UsageError
from ..kernel.eventlog import append_read
from ..kernel.reasons import Reason
from ..kernel.spans import MAX_SPAN
from ..runs import Run

if TYPE_CHECKING:
    from ..kernel.models import Snapshot

__all__ = ["MAX_READ_WINDOW", "read_window", "find_spans", "snapshot_summary"]

MAX_READ_WINDOW = 20_000
"""Longest window ``source read`` returns at once, in code points."""


def snapshot_summary(snap: Snapshot) -> dict[str, Any]:
    """What a stored snapshot is, for a listing or ``--json``: its id, metadata, identity, length
    in code points (``chars``) and counts of sections and pages. One summary for every caller
    (``source fetch --json``, the agents' ``list_sources``), so they can never disagree."""
    return {
        "source_id": snap.source_id,
        "url": snap.url,
        "title": snap.title,
        "access": snap.access.value,
        "origin": snap.origin.value,
        "paper": snap.paper.model_dump() if snap.paper else None,
        "identity": snap.identity.model_dump(mode="json", exclude_none=True) if snap.identity else None,
        "supersedes": snap.supersedes,
        "chars": len(snap.text),
        "sections": len(snap.sections or ()),
        "pages": len(snap.pages or ()),
        "surface": snap.surface.model_dump(mode="json") if snap.surface else None,
    }


def read_window(
    run: Run,
    source_id: str,
    start: int | None = None,
    end: int | None = None,
    *,
    actor: str = "main",
    log: bool = True,
) -> dict[str, Any]:
    """A verified, bounded window of a snapshot's text with its offsets; logs a ``read`` event
    unless ``log`` is false (the agents' server writes nothing).

    A window reaching past the end of the text is clamped to it, and the result's ``note`` says
    so (an agent that guessed the length still gets the text and the true offsets); a negative or
    reversed window is refused (``SPAN_OUT_OF_RANGE``), and so is one longer than
    :data:`MAX_READ_WINDOW` (``SPAN_TOO_LONG``): never cut short silently.
    """
    snap, text = run.store.read_searchable(source_id)  # a long text is read a piece at a time
    n = len(text)
    lo = 0 if start is None else start
    hi = lo + MAX_READ_WINDOW if end is None else end
    facts = {"source_id": snap.source_id, "start": lo, "end": hi}
    if lo < 0 or hi < lo:
        why = "is not a window: start must be >= 0 and end >= start"
        raise UsageError(f"window [{lo}, {hi}) {why}", reason=Reason.SPAN_OUT_OF_RANGE, **facts)
    note = None
    if hi > n:
        if end is not None or lo > n:
            asked = f"[{lo}, {hi})" if end is not None else f"from {lo}"
            note = f"the text has {n} code points: window {asked} clamped to [{min(lo, n)}, {n})"
        lo, hi = min(lo, n), n
    if hi - lo > MAX_READ_WINDOW:
        why = f"is over the {MAX_READ_WINDOW} limit; read it in parts"
        raise UsageError(f"window of {hi - lo} code points {why}", reason=Reason.SPAN_TOO_LONG, **facts)
    if log:  # a torn or invalid last line refuses the append, and nothing is written
        append_read(
            run.events_path,
            source_id=snap.source_id,
            url=snap.url,
            sha256=snap.content_hash[7:],
            actor=actor,
            detail=f"window {lo}-{hi} of {n}" + ("; clamped" if note else ""),
        )
    window = {"source_id": snap.source_id, "start": lo, "end": hi, "text": text[lo:hi], "length": n}
    return window | ({"note": note} if note else {})


def find_spans(
    run: Run,
    source_id: str,
    query: str,
    *,
    context: int = 80,
    ignore_case: bool = False,
    limit: int = 200,
) -> dict[str, Any]:
    """Every occurrence of ``query`` with exact offsets and a window of context around it.

    The CONTRACT's shape, with ``truncated: true`` added (only) when the search stopped at
    :data:`~publisher.acquire.select.SEARCH_BUDGET`: its matches are genuine, but there may be
    more; a search that stopped having found nothing is refused (:class:`UsageError`, field
    ``query``), never reported as finding nothing. Occurrences are found by the quote locator's term
    search (:func:`publisher.kernel.locate.search_term`), verbatim or after its normalisation
    (typographic marks and white space runs folded), always as raw offsets: ``text[start:end]`` is
    the raw text. :func:`publisher.acquire.select.select_spans` adds sentences, from-to ranges,
    excerpts, sections and pages.
    """
    from ..kernel.locate import search_term  # the search's modules for a search only, not a read
    from .select import SEARCH_BUDGET, stopped_empty

    if not query.strip():
        raise UsageError("--query must not be empty")
    if len(query) > MAX_SPAN:
        raise UsageError(f"--query is longer than a span may be ({MAX_SPAN} code points)")
    snap, text = run.store.read_searchable(source_id)  # a long text is read a piece at a time
    matches: list[dict[str, Any]] = []
    found, stopped = search_term(text, query, fold_case=ignore_case, limit=limit, budget=SEARCH_BUDGET)
    if stopped and not found:
        raise stopped_empty("the --query text", snap.source_id, SEARCH_BUDGET, "query")
    for hit in found:
        s, e = hit.start, hit.end
        ws, we = max(0, s - context), min(len(text), e + context)
        matches.append({"start": s, "end": e, "window_start": ws, "window_end": we, "window": text[ws:we]})
    out = {"source_id": snap.source_id, "query": query, "matches": matches}
    return out | ({"truncated": True} if stopped else {})
