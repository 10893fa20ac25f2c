"""A source page's text: the verified snapshot with every cited span highlighted, whole or in context windows.

The HTML is built from constants, integers and strings escaped by markupsafe (the snapshot's
text through :func:`.markup.escape_text`, the source id through ``escape``) and handed on as one
:class:`~markupsafe.Markup`; nothing else reaches it. The pieces are joined as plain strings and
wrapped once, since a page can hold a text of hundreds of thousands of code points in thousands
of marks (``Markup.format`` per mark would multiply the time of a source page by five).
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass

from markupsafe import Markup, escape

from ...kernel.canonical import sha256_hex
from ...kernel.errors import IntegrityError
from ...kernel.reasons import Reason
from ...kernel.sentences import Sentences
from ...kernel.store import read_snapshot
from ...wiki.evidence import SourceInfo
from .markup import ANCHOR_CLASS, MARK_CLASS, SNAPSHOT_CLASS, WINDOW_CLASS, WINDOWS_CLASS, escape_text

__all__ = [
    "WINDOWS_ABOVE",
    "SourceText",
    "SourceJob",
    "SourceBody",
    "source_job",
    "render_source_body",
    "snapshot_html",
    "window_bounds",
    "windows_html",
]


WINDOWS_ABOVE = 200_000
"""Code points above which a source page shows context windows, whatever ``source_text`` says
(``extra: evidence: windows_above``): past it a whole text makes a slow page and a large search
index (docs/performance.md, "Reading large sources")."""


@dataclass(frozen=True)
class SourceText:
    """How a source page shows its snapshot: the ``full`` text, or ``windows`` of ``context``
    code points around each cited span (``extra: evidence: source_text`` in mkdocs.yml). A text
    longer than ``windows_above`` code points is always shown in windows. ``proofs`` shows the
    windows too, and the site publishes the record without its text (excerpts verify through
    Merkle proofs, :mod:`publisher.site.pages.proofs`).

    ``overrides`` (``extra: evidence: source_text_for``) choose another mode for some sources:
    keys are a source id, ``origin:<origin>`` or ``access:<access>``, tried in that order.
    """

    mode: str = "full"
    context: int = 400
    windows_above: int = WINDOWS_ABOVE
    overrides: tuple[tuple[str, str], ...] = ()

    MODES = ("full", "windows", "proofs")

    def mode_for(
        self, length: int, source_id: str = "", *, origin: str | None = None, access: str | None = None
    ) -> str:
        """The display mode of a snapshot of ``length`` code points (``proofs``, ``windows`` or ``full``)."""
        chosen = dict(self.overrides)
        mode = next(
            (chosen[k] for k in (source_id, f"origin:{origin}", f"access:{access}") if k in chosen),
            self.mode,
        )
        if mode == "proofs":
            return "proofs"
        return "windows" if mode == "windows" or length > self.windows_above else "full"


@dataclass(frozen=True)
class SourceJob:
    """What a source page's text slot shows: one snapshot, its cited spans and the display mode."""

    source_id: str
    sources_dir: str
    content_hash: str
    spans: frozenset[tuple[int, int]]
    mode: str
    context: int
    index_limit: int | None = None


@dataclass(frozen=True)
class SourceBody:
    """A source page's text as HTML, and the context windows it holds (``windows`` mode)."""

    html: str
    windows: tuple[tuple[str, int, int, str], ...] = ()


def source_job(source_id: str, info: SourceInfo, options: SourceText) -> SourceJob:
    """The text slot of ``source_id``'s page."""
    return SourceJob(
        source_id,
        os.fspath(info.sources_dir),
        info.meta.content_hash or "",
        frozenset(info.spans),
        options.mode_for(info.meta.text_length, source_id, origin=info.meta.origin, access=info.meta.access),
        options.context,
        options.windows_above,
    )


def render_source_body(job: SourceJob) -> SourceBody:
    """Read and verify the snapshot again and render its text with the cited spans marked.

    The verified text must still be the one the wiki check verified (else SNAPSHOT_HASH_MISMATCH:
    it changed during the build).
    """
    sid = job.source_id
    snap = read_snapshot(job.sources_dir, sid)
    if snap.content_hash != job.content_hash:
        raise IntegrityError(f"snapshot {sid} changed during the build", reason=Reason.SNAPSHOT_HASH_MISMATCH)
    spans = set(job.spans)
    if job.mode in ("windows", "proofs"):
        sentences = Sentences(snap.text, wrapped=snap.pages is not None)  # each span inside its sentence
        windows = tuple(
            (sid, lo, hi, sha256_hex(snap.text[lo:hi].encode("utf-8")))
            for lo, hi in window_bounds(len(snap.text), spans, job.context, sentences)
        )
        return SourceBody(windows_html(sid, snap.text, spans, job.context, job.index_limit, sentences), windows)
    return SourceBody(snapshot_html(sid, snap.text, spans))


def _highlighted(text: str, spans: set[tuple[int, int]], lo: int, hi: int) -> list[str]:
    """HTML of ``text[lo:hi]`` with every span inside it marked; offsets stay those of ``text``."""
    inside = {(s, e) for s, e in spans if lo <= s and e <= hi}
    bounds = sorted({lo, hi} | {s for s, _ in inside} | {e for _, e in inside})
    starting: dict[int, list[tuple[int, int]]] = {}
    for span in sorted(inside, key=lambda se: (se[0], -se[1])):
        starting.setdefault(span[0], []).append(span)
    active: set[tuple[int, int]] = set()
    out: list[str] = []
    for a, b in itertools.pairwise(bounds):
        active = {span for span in active if span[1] > a}
        opening = starting.get(a, [])
        active.update(opening)
        segment = escape_text(text[a:b])
        if not active:
            out.append(segment)
            continue
        anchor = ""
        if opening:
            first, *others = opening
            out.extend(f'<span class="{ANCHOR_CLASS}" id="span-{s:d}-{e:d}"></span>' for s, e in others)
            anchor = f' id="span-{first[0]:d}-{first[1]:d}"'
        covering = " ".join(f"{s:d}-{e:d}" for s, e in sorted(active))
        out.append(
            f'<mark class="{MARK_CLASS}"{anchor} data-start="{a:d}" data-end="{b:d}" data-spans="{covering}">'
            f"{segment}</mark>"
        )
    return out


def snapshot_html(source_id: str, text: str, spans: set[tuple[int, int]]) -> Markup:
    """The snapshot text as ``<pre>``, every cited span highlighted and anchored.

    Overlapping spans are split into segments at every span boundary; each covered segment is
    one ``<mark>`` carrying its own offsets and the spans covering it, so the markup nests
    correctly whatever the overlaps. A span's anchor ``span-<start>-<end>`` is the id of the
    mark where it starts (an empty anchor element when several spans start there). A line feed
    follows the start tag: HTML drops one there, so a text that starts with one keeps it.
    """
    out = [f'<pre class="{SNAPSHOT_CLASS}" data-source-id="{escape(source_id)}">\n']
    out += _highlighted(text, spans, 0, len(text))
    out.append("</pre>")
    return Markup("".join(out))


SENTENCE_REACH = 240
"""How far past ``context`` a window reaches, each side, to hold the rest of a cited span's
sentence (the same bound as :data:`publisher.site.context.MOST`)."""


def window_bounds(
    length: int, spans: set[tuple[int, int]], context: int, sentences: Sentences | None = None
) -> list[tuple[int, int]]:
    """The context windows over a text of ``length`` code points: ``context`` either side of each
    span, and with ``sentences`` at least the rest of the span's sentence (up to
    :data:`SENTENCE_REACH` further), clipped to the text; windows that touch or overlap merge, so
    each span lies whole in one, inside its sentence."""
    reach: list[tuple[int, int]] = []
    for s, e in spans:
        lo, hi = s - context, e + context
        covered = sentences.covering(s, e) if sentences is not None else None
        if covered is not None:
            lo = min(lo, max(covered[0], s - context - SENTENCE_REACH))
            hi = max(hi, min(covered[1], e + context + SENTENCE_REACH))
        reach.append((max(0, lo), min(length, hi)))
    windows: list[list[int]] = []
    for lo, hi in sorted(reach):
        if windows and lo <= windows[-1][1]:
            windows[-1][1] = max(windows[-1][1], hi)
        else:
            windows.append([lo, hi])
    return [(lo, hi) for lo, hi in windows]


def windows_html(
    source_id: str,
    text: str,
    spans: set[tuple[int, int]],
    context: int,
    index_limit: int | None = None,
    sentences: Sentences | None = None,
) -> Markup:
    """Only the cited spans of a long snapshot, each with ``context`` code points either side.

    Windows come from :func:`window_bounds`; marks and anchors are those of
    :func:`snapshot_html` with offsets into the whole text. The omitted stretches are counted
    between windows. Each window names its source with ``data-window-of`` and its offsets with
    ``data-window-start``/``data-window-end``; the seal checks its text against that slice.

    Windows holding more than ``index_limit`` code points in all (a long text cited in many
    places) are kept out of the search index (Material's ``data-search-exclude``), so no source
    page adds more than that much text to it.
    """
    bounds = window_bounds(len(text), spans, context, sentences)
    unindexed = index_limit is not None and sum(hi - lo for lo, hi in bounds) > index_limit
    exclude = " data-search-exclude" if unindexed else ""
    sid = escape(source_id)
    out = [f'<div class="{WINDOWS_CLASS}" data-window-of="{sid}"{exclude}>']
    shown = 0
    for lo, hi in bounds:
        if lo > shown:
            out.append(f'<p class="evidence-gap">[… {lo - shown:d} code points not shown …]</p>')
        out.append(
            f'<pre class="{WINDOW_CLASS}" data-window-of="{sid}" data-window-start="{lo:d}" data-window-end="{hi:d}">\n'
        )
        out += _highlighted(text, spans, lo, hi)
        out.append("</pre>")
        shown = hi
    if shown < len(text):
        out.append(f'<p class="evidence-gap">[… {len(text) - shown:d} code points not shown …]</p>')
    out.append("</div>")
    return Markup("".join(out))
