"""Which snapshots of the wiki are superseded, and by which revision (CONTRACT section 18).

Read from the acquisition events of the wiki's runs: an event that records ``supersedes`` names a
newer revision of that snapshot. On a wiki that trusts keys only an event whose signature verifies
for its run counts, so nobody can mark another's source superseded by hand. A claim bound to an
older revision keeps its historical admissibility; its provenance now says which revision
superseded it, and the old source page shows how each cited window reads in the new one.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from ..acquire.signing import signature_problem
from ..kernel.errors import PublisherError
from ..kernel.models import EventType, Snapshot
from ..kernel.store import read_snapshot
from .evidence import WikiCheck

__all__ = ["Revision", "RevisionIndex", "revision_index", "window_change"]

_CONTEXT = 80
"""Code points of text either side of a cited span used to find it again in the new revision."""


@dataclass(frozen=True)
class Revision:
    """A newer revision of a snapshot: its id, the run holding it and its number in the chain."""

    source_id: str
    run: str
    number: int
    at: str


class RevisionIndex:
    """Successors and revision numbers of every snapshot the wiki's acquisition events revise."""

    def __init__(self, wiki: WikiCheck) -> None:
        self._wiki = wiki
        self._previous: dict[str, str] = {}
        self._next: dict[str, tuple[str, str, str]] = {}  # old -> (new, run slug, at)
        ring = wiki.policy.trusted_keys
        for ev in wiki.runs:
            name: str | None = None
            for event in ev.events:
                old, new = event.supersedes, event.source_id
                if old is None or new is None or event.type not in (EventType.FETCH, EventType.LOCAL_PDF):
                    continue
                if ring:
                    name = name if name is not None else ev.run.name()
                    if signature_problem(event, ring, name) is not None:
                        continue
                self._previous.setdefault(new, old)
                known = self._next.get(old)
                if known is None or (event.at, new) > (known[2], known[0]):
                    self._next[old] = (new, ev.slug, event.at)

    def number(self, source_id: str) -> int:
        """The revision number of ``source_id`` in its chain (1 for a first acquisition)."""
        n, seen = 1, {source_id}
        while (source_id := self._previous.get(source_id, "")) and source_id not in seen:
            seen.add(source_id)
            n += 1
        return n

    def successor(self, source_id: str) -> Revision | None:
        """The newest revision that directly supersedes ``source_id``, or None."""
        found = self._next.get(source_id)
        if found is None:
            return None
        return Revision(found[0], found[1], self.number(found[0]), found[2])

    def current(self, source_id: str) -> Revision | None:
        """The newest revision of ``source_id``'s chain when it is not ``source_id`` itself."""
        latest, seen = None, {source_id}
        while (nxt := self.successor(source_id)) is not None and nxt.source_id not in seen:
            latest, source_id = nxt, nxt.source_id
            seen.add(source_id)
        return latest

    def snapshot(self, revision: Revision) -> Snapshot | None:
        """The verified snapshot of ``revision`` (None when its run no longer holds a good one)."""
        ev = self._wiki.run_by_slug(revision.run)
        if ev is None:
            return None
        try:
            return read_snapshot(ev.run.sources_dir, revision.source_id)
        except (PublisherError, OSError, ValueError):
            return None


def revision_index(wiki: WikiCheck) -> RevisionIndex:
    """The wiki's revision index, built once per wiki check."""
    held = getattr(wiki, "_revision_index", None)
    if isinstance(held, RevisionIndex):
        return held
    index = RevisionIndex(wiki)
    setattr(wiki, "_revision_index", index)  # noqa: B010 (an attribute of the check, held for its lifetime)
    return index


def window_change(old_text: str, start: int, end: int, new_text: str) -> dict[str, object]:
    """How the cited window ``old_text[start:end]`` reads in ``new_text``.

    ``state`` is ``unchanged`` (the quoted text is found verbatim, ``start``/``end`` say where),
    ``changed`` (the text around it is found, the passage between differs: ``diff`` lists
    ``[op, text]`` pairs, op ``=``, ``-`` or ``+``) or ``gone`` (neither is found).
    """
    quote = old_text[start:end]
    at = new_text.find(quote) if quote else -1
    if at >= 0:
        return {"state": "unchanged", "start": at, "end": at + len(quote), "diff": []}
    before = old_text[max(0, start - _CONTEXT) : start]
    after = old_text[end : end + _CONTEXT]
    lo = 0
    if before:
        found = new_text.find(before)
        lo = found + len(before) if found >= 0 else -1
    hi = len(new_text) if lo >= 0 and not after else (new_text.find(after, lo) if lo >= 0 else -1)
    if lo < 0 or hi < 0:
        return {"state": "gone", "start": None, "end": None, "diff": []}
    now = new_text[lo:hi]
    diff: list[list[str]] = []
    matcher = difflib.SequenceMatcher(None, quote.split(" "), now.split(" "), autojunk=False)
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            diff.append(["=", " ".join(quote.split(" ")[a0:a1])])
            continue
        if a1 > a0:
            diff.append(["-", " ".join(quote.split(" ")[a0:a1])])
        if b1 > b0:
            diff.append(["+", " ".join(now.split(" ")[b0:b1])])
    return {"state": "changed", "start": lo, "end": hi, "diff": diff}
