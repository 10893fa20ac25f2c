"""Each excerpt in its sentence: the words of the same sentence before and after a cited span.

A span that does not start and end on sentence boundaries can mislead while being verbatim: one
that starts three code points late drops the "No" of "No significant differences were found".
Wherever a page shows an excerpt outside the snapshot text (a concept's footnote, and the
footnote's tooltip, which is a copy of it), it also shows the rest of the excerpt's sentence
before and after it, set visibly apart from the highlighted citation (``evidence-context``), so
a reader sees what the excerpt was cut from. Sentences come from the one splitter
(:class:`publisher.kernel.sentences.Sentences`); the snapshot is read and verified again, once
per source, and must still be the one the wiki check verified. What that takes is a
:class:`ContextSource`, small enough to hand to a build's helper process: a report's contexts are
read there, beside the report they go into, not on the core MkDocs renders pages on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ...kernel.errors import IntegrityError
from ...kernel.reasons import Reason
from ...kernel.sentences import Sentences
from ...kernel.store import read_snapshot
from ...wiki.evidence import WikiCheck

__all__ = [
    "Context",
    "ContextSource",
    "SentenceContexts",
    "MOST",
    "context_around",
    "context_source",
    "keyed_contexts",
    "source_contexts",
]

MOST = 240  # the same bound as publisher.site.highlight.SENTENCE_REACH
"""The most code points of context shown on either side; a longer rest of the sentence is cut at
a space and marked with an ellipsis outside the citation."""


@dataclass(frozen=True)
class Context:
    """The rest of an excerpt's sentence: ``before`` and ``after`` it (empty when the excerpt starts
    or ends on a sentence boundary), and whether either side was shortened to :data:`MOST`."""

    before: str = ""
    after: str = ""
    cut_before: bool = False
    cut_after: bool = False

    def shown(self) -> tuple[str, str]:
        """The text of the context before and after the excerpt as the templates show it, a cut
        side marked with an ellipsis outside the citation (empty where nothing is shown)."""
        return ("…" if self.cut_before else "") + self.before, self.after + ("…" if self.cut_after else "")


def context_around(sentences: Sentences, text: str, start: int, end: int) -> Context:
    """The context of ``text[start:end]`` (``sentences`` split ``text``): what a page shows beside it."""
    covered = sentences.covering(start, end)
    if covered is None:
        return Context()
    lo, hi = covered
    before, after = text[min(lo, start) : start], text[end : max(hi, end)]
    cut_before = cut_after = False
    if len(before) > MOST:
        tail = before[-MOST:]
        space = tail.find(" ")
        before, cut_before = (tail[space + 1 :] if 0 <= space < MOST // 2 else tail), True
    if len(after) > MOST:
        head = after[:MOST]
        space = head.rfind(" ")
        after, cut_after = (head[:space] if space > MOST // 2 else head), True
    return Context(before, after, cut_before, cut_after)


@dataclass(frozen=True)
class ContextSource:
    """What the contexts of one source's spans are read from: its stored snapshot and the content
    hash the wiki check verified (small and picklable: a build's helper reads them itself)."""

    source_id: str
    sources_dir: str
    content_hash: str
    spans: tuple[tuple[int, int], ...]


def context_source(pre: WikiCheck, source_id: str, spans: Iterable[tuple[int, int]] | None = None) -> ContextSource:
    """The :class:`ContextSource` of a verified source, for ``spans`` (default: every cited span)."""
    info = pre.sources.get(source_id)
    if info is None:
        raise IntegrityError(f"source {source_id} is not among the verified sources", reason=Reason.UNKNOWN_SOURCE)
    chosen = sorted(set(info.spans if spans is None else spans))
    outside = [span for span in chosen if span not in info.spans]
    if outside:
        start, end = outside[0]
        raise IntegrityError(
            f"span {source_id}#{start}-{end} is not among the verified spans", reason=Reason.SOURCE_OUTSIDE_ACCEPTED
        )
    return ContextSource(source_id, str(info.sources_dir), info.meta.content_hash or "", tuple(chosen))


def source_contexts(source: ContextSource) -> dict[tuple[int, int], Context]:
    """The context of each span of ``source``: its snapshot read and verified once more, and
    refused (SNAPSHOT_HASH_MISMATCH) unless it is still the text the wiki check verified."""
    snap = read_snapshot(source.sources_dir, source.source_id)
    if not source.content_hash or snap.content_hash != source.content_hash:
        raise IntegrityError(
            f"snapshot {source.source_id} changed during the build", reason=Reason.SNAPSHOT_HASH_MISMATCH
        )
    sentences = Sentences(snap.text, wrapped=snap.pages is not None)
    return {(s, e): context_around(sentences, snap.text, s, e) for s, e in source.spans}


def keyed_contexts(sources: Iterable[ContextSource]) -> dict[str, tuple[str, str, bool, bool]]:
    """The contexts of every span of ``sources`` as a report shows them: keyed
    ``source_id#start-end``, each ``(before, after, cut_before, cut_after)``."""
    out = {}
    for source in sources:
        for (start, end), c in sorted(source_contexts(source).items()):
            out[f"{source.source_id}#{start}-{end}"] = (c.before, c.after, c.cut_before, c.cut_after)
    return out


class SentenceContexts:
    """The sentence context of every cited span of a wiki, read on demand, one source at a time.

    ``reader`` reads one source's contexts (default :func:`source_contexts`, here): a build sets
    one that takes them from its helpers where they were handed out.
    """

    def __init__(self, pre: WikiCheck) -> None:
        self.pre = pre
        self.reader: Callable[[ContextSource], dict[tuple[int, int], Context]] = source_contexts
        self._done: dict[str, dict[tuple[int, int], Context]] = {}

    def around(self, source_id: str, start: int, end: int) -> Context:
        """The context of ``text[start:end]`` of ``source_id`` (raises IntegrityError if the
        snapshot changed since the wiki check verified it)."""
        found = self._done.get(source_id)
        if found is None:
            found = self._done[source_id] = self.reader(context_source(self.pre, source_id))
        context = found.get((start, end))
        if context is None:
            raise IntegrityError(
                f"span {source_id}#{start}-{end} is not among the verified spans", reason=Reason.SOURCE_OUTSIDE_ACCEPTED
            )
        return context
