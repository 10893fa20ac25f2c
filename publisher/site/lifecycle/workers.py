"""The build's helper processes: what the build does beside MkDocs' page rendering.

Source texts, reports and the concept pages' sentence contexts ahead of MkDocs; each page's prose
check and seal while MkDocs goes on; the excerpt proofs while the pages are rendered; the record
copies once they are built (:class:`BuildHelper`)."""

from __future__ import annotations

import itertools
import logging
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import CancelledError, Executor, Future
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...gate import render
from ...gate.render import ReportView
from ...kernel.canonical import sha256_hex
from ...kernel.errors import IntegrityError
from ...kernel.findings import Finding
from ...kernel.reasons import Reason
from ...kernel.trust import KeyRing
from ...parallel import default_workers, helper_pool
from ...wiki.evidence import RunEvidence, WikiCheck
from ..checks.manifest import check_record_copy
from ..checks.prose import Author, check_prose, source_text
from ..checks.seal import PageSeal
from ..pages.context import Context, ContextSource, keyed_contexts, source_contexts
from ..pages.highlight import SourceBody, SourceJob, render_source_body
from ..pages.offline import record_js
from ..pages.proofs import ProofSource, WrittenProofs, write_proofs
from ..pages.staged import write_staged
from .pageseal import BuiltPage, PagePolicy, seal_html

log = logging.getLogger("mkdocs.plugins.publisher")

__all__ = [
    "render_report_page",
    "render_report_job",
    "render_source_chunk",
    "check_record_chunk",
    "seal_chunk",
    "prose_chunk",
    "ProsePage",
    "context_chunk",
    "proof_chunk",
    "BuildHelper",
]


def render_report_page(
    view: ReportView,
    links: dict[str, str] | None = None,
    contexts: dict[str, tuple[str, str, bool, bool]] | None = None,
) -> str:
    """A run's report page body from the wiki check's verification of the run (no snapshot is
    read again), its "source" links to the wiki's source pages (``links``, by source id) and
    each excerpt's sentence context (``contexts``). Runs in the build's helper process or in-process."""
    return render.render_report_body(view, links, contexts)


_SEAL_STATE: dict[int, tuple[Mapping[tuple[str, int, int], str], Mapping[str, str]]] = {}
"""What the helpers seal pages against (the verified excerpts and content hashes), by build: set
before the helpers are forked, so that they hold it as this process did, never sent to them."""

_TOKENS = itertools.count(1)


def seal_chunk(token: int, pages: list[BuiltPage], policy: PagePolicy) -> list[tuple[PageSeal, str | None]]:
    """The seals of several pages (:func:`.pageseal.seal_html`) against the verified evidence of
    build ``token`` (a helper's unit of work; LookupError in a process that does not hold it)."""
    state = _SEAL_STATE.get(token)
    if state is None:
        raise LookupError("this process does not hold the build's verified evidence")
    return [seal_html(page, state[0], state[1], policy) for page in pages]


@dataclass(frozen=True)
class ProsePage:
    """One page's Markdown output and what its prose check needs (:func:`.prose.check_prose`)."""

    html: str
    file: str
    path: str | None
    """Its Markdown source, read for line numbers where a finding needs one."""
    trusted: tuple[str, ...]
    author: Author


def prose_chunk(pages: list[ProsePage]) -> list[list[Finding]]:
    """The prose findings of several pages (a helper's unit of work)."""
    return [
        check_prose(
            page.html,
            file=page.file,
            source=source_text(Path(page.path) if page.path else None),
            trusted=page.trusted,
            author=page.author,
        )
        for page in pages
    ]


def render_report_job(view: ReportView, links: dict[str, str] | None, contexts: list[ContextSource]) -> str:
    """:func:`render_report_page` on a helper, which reads the excerpts' sentence contexts itself
    (each snapshot verified against the wiki check's content hash, as in-process)."""
    return render_report_page(view, links, keyed_contexts(contexts))


def context_chunk(sources: list[ContextSource]) -> list[dict[tuple[int, int], Context]]:
    """The sentence contexts of several sources (a helper's unit of work)."""
    return [source_contexts(source) for source in sources]


def render_source_chunk(jobs: list[SourceJob]) -> list[SourceBody]:
    """Several source pages' texts (a helper's unit of work)."""
    return [render_source_body(job) for job in jobs]


def check_record_chunk(items: list[tuple[str, str]], scripts: bool = False) -> list[str]:
    """Re-verify published snapshot record copies ``(path, source_id)``; the sha256 of each file.

    With ``scripts`` (an offline site), also write each verified record's ``record.js`` beside it.
    """
    digests = []
    for path, sid in items:
        data = check_record_copy(Path(path), sid)
        if scripts:
            write_staged(Path(path).with_name("record.js"), record_js(sid, data))
        digests.append(sha256_hex(data))
    return digests


def proof_chunk(staging: str, sources: list[ProofSource], ring: KeyRing) -> list[WrittenProofs]:
    """Write the proofs of several sources into a site being built (:func:`.proofs.write_proofs`);
    the key ring travels pickled as raw keys with their roles (a helper's unit of work)."""
    return [write_proofs(Path(staging), source, ring) for source in sources]


_CHUNK_CHARS = 4 * 1024 * 1024


_CHUNK_PAGES = 64


_CHUNKS_AHEAD = 4


_PROOF_CHUNK = 32
"""Sources a chunk of excerpt proofs holds at most (with at most :data:`_CHUNK_CHARS` of text)."""


_PROSE_CHUNK = 8
"""Pages one helper job checks the prose of."""


_SEAL_CHUNK = 32
"""Pages one helper job seals."""


_SEALS_WAITING = 4
"""Chunks of pages waiting for a helper at most: beyond, they go out at once."""


@dataclass
class _SealChunk:
    """Pages whose seal a helper makes: ``handed`` once submitted (or left to this process)."""

    pages: list[BuiltPage]
    future: Future[list[tuple[PageSeal, str | None]]] | None = None
    handed: bool = False


_CONTEXT_CHUNK = 32
"""Sources whose sentence contexts one helper job reads."""


class BuildHelper:
    """Renders the costliest slots of a build in helper processes, ahead of MkDocs.

    MkDocs builds pages one at a time on one core. Two kinds of slot cost far more than the rest:
    a source page's text (the snapshot read and verified again, its spans marked) and a report
    (its run re-assembled: the report's "result.json equals assembling it now" check). With a
    second core and a process that may fork (a single thread, as under ``mkdocs build``),
    :meth:`start` forks two helper processes once the pages are known (both at once, before any
    thread of the pool starts) and hands them the source texts, in the order MkDocs builds the
    pages and a few chunks ahead (so memory holds a few chunks, not the wiki), and the reports,
    one at a time (so one helper is always free for the next chunk of texts; report pages come
    last). Each page takes its slot when MkDocs reaches it. Without fork (``mkdocs serve``),
    with one core, for a page MkDocs asks for out of turn, for a report not started yet, or if
    a helper dies, the slot is rendered in-process when its page is filled. Either way the same
    functions render it, and an error in them fails the build as before; the seal then checks
    every page's output against the preflight, wherever it was rendered.

    The same helpers read the concept pages' sentence contexts (:meth:`context_of`), check each
    page's prose (:meth:`check_later`), seal each rendered page (:meth:`seal_later`) and write
    the excerpt proofs (:meth:`start_proofs`) while MkDocs goes on; during the rendering, one job
    at a time per core beside MkDocs' (:meth:`pump`). Each result is taken back in page order,
    and where a helper is gone the same function runs here.
    """

    def __init__(self, wiki_root: Path, pre: WikiCheck) -> None:
        self.wiki_root = wiki_root
        self.pre = pre
        self._pool: Executor | None = None
        self._waiting: deque[list[SourceJob]] = deque()
        self._chunks: deque[tuple[list[SourceJob], Future[list[SourceBody]]]] = deque()
        self._ready: dict[SourceJob, SourceBody] = {}
        self._queued: deque[RunEvidence] = deque()
        self._reports: dict[str, Future[str]] = {}
        self._report: Future[str] | None = None
        self.links: Callable[[RunEvidence], dict[str, str]] | None = None
        """Where each source of a run is shown, from its report page (set by the build)."""
        self.contexts: Callable[[RunEvidence], dict[str, tuple[str, str, bool, bool]]] | None = None
        """The sentence context of each excerpt a run's report shows (set by the build)."""
        self.context_sources: Callable[[RunEvidence], list[ContextSource]] | None = None
        """Where a helper reads those contexts from (set by the build): the report's helper reads
        them, rather than this process before handing the report over."""
        self._proofs: list[tuple[list[ProofSource], Future[list[WrittenProofs]]]] = []
        self._proof_queue: deque[list[ProofSource]] = deque()
        self._proofs_for: list[ProofSource] | None = None
        self._proof_args: tuple[str, KeyRing] | None = None
        self._contexts: dict[str, tuple[ContextSource, Future[list[dict[tuple[int, int], Context]]], int]] = {}
        self._seal_token = next(_TOKENS)
        hashes = {sid: info.meta.content_hash or "" for sid, info in pre.sources.items()}
        self._seal_state: tuple[Mapping[tuple[str, int, int], str], Mapping[str, str]] = (pre.excerpts, hashes)
        self._seal_waiting: list[BuiltPage] = []
        self._seals: deque[_SealChunk] = deque()
        """Every chunk of pages handed to :meth:`seal_later`, in page order, until it is taken."""
        self._seal_queue: deque[_SealChunk] = deque()
        """Those not handed to the helpers yet."""
        self._inflight: list[Future[Any]] = []
        self._lanes = 1
        self._seal_policy = PagePolicy(None, False, False)
        self._prose_waiting: list[ProsePage] = []
        self._prose: list[tuple[list[ProsePage], Future[list[list[Finding]]] | None]] = []
        self._prose_count = 0

    def _report_job(
        self, ev: RunEvidence, *, contexts: bool = True
    ) -> tuple[ReportView, dict[str, str] | None, dict[str, tuple[str, str, bool, bool]] | None]:
        check = ev.check
        if check is None:
            raise IntegrityError(f"run {ev.rel} was not checked", reason=Reason.SCHEMA_ERROR)
        links = self.links(ev) if self.links is not None else None
        keyed = self.contexts(ev) if contexts and self.contexts is not None else None
        return ReportView.of(check), links, keyed

    def start(self, sources: list[SourceJob], runs: list[RunEvidence], contexts: Sequence[ContextSource] = ()) -> None:
        """Start rendering these source texts and reports in helper processes, when that pays.

        ``contexts`` are the sources whose sentence contexts the concept pages and the reports
        show, in the order those pages ask for them: they go out first, all of them (small
        results; the concept pages come before the source pages), :meth:`context_of` takes them
        and each report is handed its own once they are read (a report waits for them).
        """
        self.close()
        if not (sources or runs) or default_workers() < 2:
            return
        _SEAL_STATE[self._seal_token] = self._seal_state  # before the helpers are forked
        self._pool = helper_pool(2 if sources and runs else 1)
        if self._pool is None:
            return
        self._lanes = max(1, min(2, default_workers() - 1))
        try:
            for i in range(0, len(contexts), _CONTEXT_CHUNK):
                part = list(contexts[i : i + _CONTEXT_CHUNK])
                future = self._pool.submit(context_chunk, part)
                self._contexts.update((c.source_id, (c, future, n)) for n, c in enumerate(part))
        except (BrokenProcessPool, RuntimeError, OSError):
            pass  # the helpers are gone: what was not handed over is read here
        chunk: list[SourceJob] = []
        weight = 0
        for job in sources:
            size = self.pre.sources[job.source_id].meta.text_length if job.source_id in self.pre.sources else 0
            if chunk and (weight + size > _CHUNK_CHARS or len(chunk) >= _CHUNK_PAGES):
                self._waiting.append(chunk)
                chunk, weight = [], 0
            chunk.append(job)
            weight += size
        if chunk:
            self._waiting.append(chunk)
        self._queued = deque(runs)
        if not self._pump():
            return
        log.debug(f"evidence hook: rendering {len(sources)} source text(s), {len(runs)} report(s) in helper processes")

    def check_later(self, page: ProsePage) -> int | None:
        """Hand a page's prose check to the helpers (in chunks); its ticket in
        :meth:`prose_findings`, or None where there are no helpers (the caller checks it here)."""
        if self._pool is None:
            return None
        ticket = self._prose_count
        self._prose_count += 1
        self._prose_waiting.append(page)
        if len(self._prose_waiting) >= _PROSE_CHUNK:
            self._hand_prose()
        return ticket

    def _hand_prose(self) -> None:
        pages, self._prose_waiting = self._prose_waiting, []
        if not pages:
            return
        future = None
        if self._pool is not None:
            try:
                future = self._pool.submit(prose_chunk, pages)
            except (BrokenProcessPool, RuntimeError, OSError):
                future = None  # the helpers are gone: checked here
        self._prose.append((pages, future))

    def prose_findings(self) -> list[list[Finding]]:
        """The findings of every page handed to :meth:`check_later`, by ticket (those a dead
        helper left are checked here; any other error is raised here)."""
        self._hand_prose()
        out: list[list[Finding]] = []
        for pages, future in self._prose:
            results = None
            if future is not None:
                try:
                    results = future.result()
                except (BrokenProcessPool, CancelledError):
                    results = None
            out += results if results is not None else prose_chunk(pages)
        self._prose, self._prose_count = [], 0
        return out

    @property
    def content_hashes(self) -> Mapping[str, str]:
        """The verified content hash of every source (what a page's snapshot text is held to)."""
        return self._seal_state[1]

    def seal_later(self, page: BuiltPage, policy: PagePolicy) -> bool:
        """Hand a rendered page's seal to the helpers (in chunks); False where there are none
        (the caller seals it here). :meth:`sealed` gives the seals back, in page order."""
        if self._pool is None:
            return False
        self._seal_policy = policy
        self._seal_waiting.append(page)
        if len(self._seal_waiting) >= _SEAL_CHUNK:
            self._hand_seals()
        return True

    def _hand_seals(self) -> None:
        pages, self._seal_waiting = self._seal_waiting, []
        if pages:
            chunk = _SealChunk(pages)
            self._seals.append(chunk)
            self._seal_queue.append(chunk)
        self.pump()

    def sealed(self, *, wait: bool) -> list[tuple[BuiltPage, PageSeal, str | None]]:
        """The pages handed to :meth:`seal_later` whose seals are done, in page order, each with
        its seal and its policy's value (:func:`.pageseal.seal_html`): with ``wait``, every one
        (what is left is handed over first), else those ready now. A chunk whose helper died,
        or that a helper could not seal, is sealed here; any other error is raised here."""
        if wait:
            self._hand_seals()
            self.pump(lanes=len(self._seal_queue) + len(self._proof_queue) + 2)
        out: list[tuple[BuiltPage, PageSeal, str | None]] = []
        while self._seals:
            chunk = self._seals[0]
            future = chunk.future
            if not wait and (not chunk.handed or (future is not None and not future.done())):
                break
            self._seals.popleft()
            results = None
            if future is not None:
                try:
                    results = future.result()
                except (BrokenProcessPool, CancelledError, LookupError):
                    results = None  # sealed here instead
            if results is None:
                results = [seal_html(page, *self._seal_state, self._seal_policy) for page in chunk.pages]
            out += [(page, seal, value) for page, (seal, value) in zip(chunk.pages, results, strict=True)]
        return out

    def pump(self, lanes: int | None = None) -> None:
        """Hand the helpers what waits for them while MkDocs renders the pages (the pages' seals
        first, then the excerpt proofs), keeping ``lanes`` jobs in their hands (by default one
        per core beside the one MkDocs renders on: the pages' core stays theirs). Seals waiting
        beyond a few chunks go out at once (their pages are held in memory until then)."""
        pool = self._pool
        if pool is None:
            return
        self._inflight = [future for future in self._inflight if not future.done()]
        limit = lanes or self._lanes
        try:
            while len(self._inflight) < limit or len(self._seal_queue) > _SEALS_WAITING:
                if self._seal_queue:
                    chunk = self._seal_queue.popleft()
                    chunk.handed = True
                    chunk.future = pool.submit(seal_chunk, self._seal_token, chunk.pages, self._seal_policy)
                    self._inflight.append(chunk.future)
                elif self._proof_queue and self._proof_args is not None:
                    part = self._proof_queue.popleft()
                    future = pool.submit(proof_chunk, self._proof_args[0], part, self._proof_args[1])
                    self._proofs.append((part, future))
                    self._inflight.append(future)
                else:
                    break
        except (BrokenProcessPool, RuntimeError, OSError):
            for chunk in self._seal_queue:  # the helpers are gone: sealed and written here
                chunk.handed = True
            self._seal_queue.clear()
            self._proof_queue.clear()

    def context_of(self, source: ContextSource) -> dict[tuple[int, int], Context]:
        """A source's sentence contexts (the reader of the model's
        :class:`~publisher.site.pages.context.SentenceContexts`): from the helper it was handed
        to, exactly as asked, else read here. An error in the helper is raised here."""
        handed = self._contexts.get(source.source_id)  # kept: the reports take theirs too
        if handed is not None and handed[0] == source:
            try:
                return handed[1].result()[handed[2]]
            except (BrokenProcessPool, CancelledError):
                pass  # the helper died: read it here
        return source_contexts(source)

    def _handed_contexts(self, ev: RunEvidence) -> tuple[bool, dict[str, tuple[str, str, bool, bool]] | None]:
        """The sentence contexts of ``ev``'s report from the chunks :meth:`start` handed out
        (each source's snapshot read and verified once a build, for the concept pages and the
        reports alike): ``(False, None)`` while one of them is still being read; ``(True,
        None)`` where they cannot serve (a source not handed out, a chunk that failed or whose
        helper died): the report's own helper reads its contexts, and meets the same error."""
        if self.context_sources is None:
            return True, None
        keyed: dict[str, tuple[str, str, bool, bool]] = {}
        for source in self.context_sources(ev):
            handed = self._contexts.get(source.source_id)
            if handed is None or not set(source.spans) <= set(handed[0].spans):
                return True, None
            future = handed[1]
            if not future.done():
                return False, None
            try:
                failed = future.exception() is not None
            except CancelledError:
                failed = True
            if failed:
                return True, None
            found = future.result()[handed[2]]
            for start, end in sorted(source.spans):
                c = found[(start, end)]
                keyed[f"{source.source_id}#{start}-{end}"] = (c.before, c.after, c.cut_before, c.cut_after)
        return True, keyed

    def _pump(self) -> bool:
        """Keep a few chunks of texts and one report in the helpers' hands; False if they are gone."""
        pool = self._pool
        if pool is None:
            return False
        try:
            while self._waiting and len(self._chunks) < _CHUNKS_AHEAD:
                jobs = self._waiting.popleft()
                self._chunks.append((jobs, pool.submit(render_source_chunk, jobs)))
            if self._queued and (self._report is None or self._report.done()):
                ev = self._queued[0]
                read, keyed = self._handed_contexts(ev)
                if read:  # else wait: its sources' contexts are still being read
                    self._queued.popleft()
                    if keyed is not None:  # read once this build, for the concept pages and reports
                        view, links, _ = self._report_job(ev, contexts=False)
                        job = pool.submit(render_report_page, view, links, keyed)
                    elif self.context_sources is not None:
                        view, links, _ = self._report_job(ev, contexts=False)
                        job = pool.submit(render_report_job, view, links, self.context_sources(ev))
                    else:
                        job = pool.submit(render_report_page, *self._report_job(ev))
                    self._report = self._reports[ev.rel] = job
        except (BrokenProcessPool, RuntimeError, OSError):
            self._waiting.clear()  # the helpers are gone: what is left is rendered in-process
            self._queued.clear()
            return False
        return True

    def source(self, job: SourceJob) -> SourceBody:
        """The text slot of a source page: from the helper when it is next in line, else rendered here."""
        body = self._ready.pop(job, None)
        if body is None and self._chunks and job in self._chunks[0][0]:
            jobs, future = self._chunks.popleft()
            try:
                bodies = future.result()
            except BrokenProcessPool:
                bodies = None  # the helper died (killed, out of memory): render here instead
            if bodies is not None:
                self._ready = dict(zip(jobs, bodies, strict=True))
                body = self._ready.pop(job)
        self._pump()
        return body if body is not None else render_source_body(job)

    def __call__(self, ev: RunEvidence) -> str:
        """A report page's body: the helper's when it has started it, else rendered here."""
        future = self._reports.pop(ev.rel, None)
        if future is None:
            self._queued = deque(q for q in self._queued if q is not ev)
        self._pump()
        body = None
        if future is not None:
            try:
                body = future.result()
            except BrokenProcessPool:
                pass  # the helper died: render it here instead
            self._pump()  # the next report goes out at once
        return body if body is not None else render_report_page(*self._report_job(ev))

    def record_digests(self, items: list[tuple[str, str]], scripts: bool = False) -> list[str]:
        """:func:`check_record_chunk` over ``items``, on the helpers when they are still there.

        Called once every page is built, when the helpers have nothing else to do. An error
        inside (a copy that does not verify) is raised here, as in-process.
        """
        pool = self._pool
        if pool is not None and len(items) > _CHUNK_PAGES:
            chunks = [items[i : i + _CHUNK_PAGES] for i in range(0, len(items), _CHUNK_PAGES)]
            try:
                futures = [pool.submit(check_record_chunk, chunk, scripts) for chunk in chunks]
                return [digest for future in futures for digest in future.result()]
            except (BrokenProcessPool, RuntimeError):
                pass  # the helpers are gone: check them here
        return check_record_chunk(items, scripts)

    def start_proofs(self, staging: Path, sources: list[ProofSource], ring: KeyRing) -> None:
        """Hand the excerpt proofs of ``sources`` to the helpers while MkDocs renders the pages
        (they write them into the staging folder); :meth:`proofs` collects them.

        Called once every page's slots are filled (the source texts and reports are all taken).
        The proofs go out in small chunks, after the pages' seals, as many at a time as there
        are cores beside the one MkDocs renders on (at most the two helpers), each next one when
        MkDocs has rendered a page (:meth:`pump`): the pages' core stays theirs, and a failed
        build waits for at most one small chunk per helper before its staging folder goes.
        """
        self.close_proofs()
        if self._pool is None or not sources:
            return
        chunk: list[ProofSource] = []
        weight = 0
        for source in sources:
            info = self.pre.sources.get(source.source_id)
            size = info.meta.text_length if info is not None else 0
            if chunk and (weight + size > _CHUNK_CHARS or len(chunk) >= _PROOF_CHUNK):
                self._proof_queue.append(chunk)
                chunk, weight = [], 0
            chunk.append(source)
            weight += size
        self._proof_queue.append(chunk)
        self._proof_args = (str(staging), ring)
        self._proofs_for = sources
        self.pump()

    def proofs(self, staging: Path, sources: list[ProofSource], ring: KeyRing) -> list[WrittenProofs]:
        """:func:`proof_chunk` over ``sources`` (in their order): on the helpers where they are
        still there (those :meth:`start_proofs` handed over, the rest now, all at once), else
        here; each snapshot is read, verified and hashed into its tree once.

        A helper's error (a snapshot that does not verify) is raised here, as in-process. Where
        a helper died, the helpers are stopped and waited for before what it left is written
        here (the same bytes; no dead helper's write can follow them).
        """
        if self._proofs_for is not sources:  # not handed over before: all of them now
            self.start_proofs(staging, sources, ring)
        self.pump(lanes=len(self._seal_queue) + len(self._proof_queue) + 2)
        started, self._proofs = self._proofs, []
        self.close_proofs()
        out: list[WrittenProofs] = []
        for _, future in started:
            try:
                out += future.result()
            except (BrokenProcessPool, CancelledError):
                self.close(wait=True)  # no dead helper's write may come after ours
                break
        if len(out) < len(sources):
            out += proof_chunk(str(staging), sources[len(out) :], ring)
        return out

    def close_proofs(self) -> None:
        """Forget the proofs handed over or queued (their jobs are cancelled where not begun)."""
        for _, future in self._proofs:
            future.cancel()
        self._proofs, self._proof_queue, self._proofs_for, self._proof_args = [], deque(), None, None

    def close(self, *, wait: bool = False) -> None:
        """Stop the helpers (idempotent); whatever was not taken yet is dropped. With ``wait``,
        return once every job a helper had begun has ended (none writes into the staging folder
        after this)."""
        pool, self._pool = self._pool, None
        _SEAL_STATE.pop(self._seal_token, None)
        for report in self._reports.values():
            report.cancel()
        for _, chunk in self._chunks:
            chunk.cancel()
        self.close_proofs()
        for _, future, _ in self._contexts.values():
            future.cancel()
        self._contexts = {}
        self._chunks, self._waiting, self._ready = deque(), deque(), {}
        self._queued, self._reports, self._report = deque(), {}, None
        if pool is not None:
            pool.shutdown(wait=wait, cancel_futures=True)
