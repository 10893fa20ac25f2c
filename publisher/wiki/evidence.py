"""What the wiki check hands its callers: verified runs, concepts, sources, excerpts and findings.

Everything here comes from assembling each run NOW and from re-slicing the snapshots in this
command; nothing is taken from a stored ``result.json`` (the check requires that file to equal
the assembly, so the two agree whenever anything is published).
"""

from __future__ import annotations

import io
import pickle
import posixpath
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast
from urllib.parse import unquote, urlsplit

from ..gate.checks.runcheck import RunCheck, from_compact_json
from ..gate.quotations import Quotation
from ..gate.resultshape import AcceptedArtifactView, ResultView, accepted_views, result_view
from ..kernel._fs import real_path
from ..kernel.errors import PublisherError
from ..kernel.eventviews import EventView
from ..kernel.findings import Finding, counts_by_code
from ..kernel.refs import neutral_text
from ..kernel.store import read_snapshot
from ..parallel import SnapshotCheck
from ..runs import Run
from .concepts import ConceptDoc
from .policy import Policy
from .spantables import AcceptedSpans, ExcerptTable, SpanSet

__all__ = [
    "pack_pair",
    "unpack_part",
    "VerifiedClaim",
    "RunEvidence",
    "ConceptEvidence",
    "SourceInfo",
    "WikiCheck",
    "source_label",
]


def pack_pair(first: object, second: object) -> bytes:
    """What a worker ships and a wiki check holds of a checked run (its check and its event log),
    deflated in one stream at zlib's fastest level (about half the bytes).

    ``second`` is pickled alone and ``first`` after it, against what ``second``'s pickle holds
    already: what both name (the check holds the same events) is written once, as a reference
    into the second pickle, not pickled and deflated again. So :func:`unpack_part` reads the
    second value without the first, and the first with the second read before it. A wiki check
    only ever unpacks bytes its own workers packed, never a file's."""
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dump(second)
    cut = buffer.tell()
    pickler.dump(first)  # the same pickler: its memo still holds what ``second`` wrote
    return zlib.compress(cut.to_bytes(_LENGTH, "little") + buffer.getbuffer(), 1)


_LENGTH = 8
"""Bytes of the second value's pickle length at the start of a :func:`pack_pair` stream."""


def unpack_part(packed: bytes, part: int) -> Any:
    """The first (``part`` 0) or second (1) value :func:`pack_pair` packed, as a fresh copy (the
    first is read against the second's pickle, read before it)."""
    data = memoryview(zlib.decompress(packed))
    cut = _LENGTH + int.from_bytes(data[:_LENGTH], "little")
    unpickler = pickle.Unpickler(io.BytesIO(data[_LENGTH:] if part == 0 else data[_LENGTH:cut]))
    second = unpickler.load()
    return second if part == 1 else unpickler.load()  # the same unpickler: its memo holds the second's


@dataclass(frozen=True)
class VerifiedClaim:
    """One accepted claim whose excerpt was re-sliced in this command."""

    artifact_id: str
    index: int
    claim: str | None
    field: str
    source_id: str
    start: int
    end: int
    excerpt: str
    access: str
    section: str | None
    page: int | None


@dataclass
class RunEvidence:
    """One run of the wiki: where it is, its check, and what it accepts now."""

    run: Run
    rel: str
    slug: str
    config: dict[str, Any]
    accepted: AcceptedSpans = field(default_factory=AcceptedSpans)
    """Every accepted claim's span -> (artifact id, claim index) of the claims citing it."""
    inputs_hash: str | None = None
    """The assembly's ``inputs_hash`` now (None when the run could not be assembled)."""
    verdict: str | None = None
    """The gate's verdict now (None when the run could not be assembled)."""
    accepted_count: int | None = None
    """How many artifacts the result now accepts (None when the run could not be assembled)."""
    _result: ResultView | None = field(default=None, init=False, repr=False, compare=False)
    _check: RunCheck | bytes | None = field(default=None, init=False, repr=False, compare=False)
    _events: list[EventView] | bytes = field(default_factory=list, init=False, repr=False, compare=False)
    _accepted: bytes | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def events(self) -> list[EventView]:
        """The run's event log as assembled now (empty when the run could not be read); held as a
        worker's pickle beside :attr:`check`'s, a fresh copy on each reading."""
        held = self._events
        return cast(list[EventView], unpack_part(held, 1)) if isinstance(held, bytes) else held

    @events.setter
    def events(self, value: list[EventView]) -> None:
        self._events = value

    @property
    def check(self) -> RunCheck | None:
        """The pipeline's check of the run; None when the run could not be read at all.

        A run checked on a worker is held as the bytes the worker packed its check and events
        into (:func:`pack_pair`: a few KB where the objects take several times that, and a wiki
        check holds every run until its site is built); each reading unpacks a fresh copy, so
        bind it once where it is read twice.
        """
        held = self._check
        return cast(RunCheck, unpack_part(held, 0)) if isinstance(held, bytes) else held

    @check.setter
    def check(self, value: RunCheck | None) -> None:
        self._check = value

    def hold_packed(self, packed: bytes) -> None:
        """Hold the check and the event log as a worker of this wiki check packed them, together
        (:func:`pack_pair`: the check first, then the events)."""
        self._check = self._events = packed

    @property
    def assembled(self) -> bool:
        """Whether the run was assembled now (its inputs could be read)."""
        return self._check is not None

    @property
    def result(self) -> ResultView | None:
        """The result assembling the run now produces, as the model holds it (None when the run could not be
        assembled). Validated from the check's assembly when first read: a checked run is kept as
        JSON (compact: :meth:`~publisher.gate.checks.runcheck.RunCheck.pack`), and the wiki check
        itself never reads the model (:attr:`assembled` and :attr:`inputs_hash` say what it
        needs)."""
        if self._result is None:
            check = self.check
            if check is not None:
                self._result = result_view(check.result)
        return self._result

    @result.setter
    def result(self, value: ResultView | None) -> None:
        self._result = value

    @property
    def title(self) -> str:
        """The run's question when it states one, else its slug."""
        question = self.config.get("question")
        return question.strip() if isinstance(question, str) and question.strip() else self.slug

    def hold_accepted(self, data: bytes | None) -> None:
        """Hold the accepted artifacts of the run's assembly now as compact JSON (what the check
        that assembled it wrote out: :class:`~publisher.wiki.runchecks.RunIndex`), which
        :meth:`claims` reads; None: :meth:`claims` reads :attr:`result`."""
        self._accepted = data

    def accepted_artifacts(self) -> tuple[AcceptedArtifactView, ...]:
        """The accepted artifacts of the run's assembly now, in result order (none when the run
        could not be assembled). Validated from the JSON the check held (:meth:`hold_accepted`),
        a fresh copy on each call, as the whole result validates them; else from :attr:`result`."""
        if self._result is None and self._accepted is not None:
            return accepted_views(from_compact_json(self._accepted))
        result = self.result
        return result.accepted if result is not None else ()

    def claims(self, wiki: WikiCheck) -> Iterator[tuple[AcceptedArtifactView, list[VerifiedClaim]]]:
        """Accepted artifacts in result order with their verified claims."""
        for artifact in self.accepted_artifacts():
            verified = []
            for index, claim in enumerate(artifact.claims):
                excerpt = wiki.excerpts.get((claim.source_id, claim.start, claim.end))
                if excerpt is None:
                    continue
                verified.append(
                    VerifiedClaim(
                        artifact.artifact_id,
                        index,
                        claim.claim,
                        claim.field,
                        claim.source_id,
                        claim.start,
                        claim.end,
                        excerpt,
                        claim.access.value,
                        claim.section,
                        claim.page,
                    )
                )
            yield artifact, verified


@dataclass
class ConceptEvidence:
    """One concept file and its parsed document (None when it failed to parse)."""

    path: Path
    rel: str
    slug: str
    doc: ConceptDoc | None
    quotations: tuple[Quotation, ...] | None = None
    """The quotations of the concept's own prose, found where the file was read and parsed (on a
    worker when there are many concepts), so the check does not parse the text again; None when
    not looked for yet."""

    @property
    def label(self) -> str:
        """What a reader calls the concept where a page names it (an index row, a source's
        citations, the claims page): its title, which comes from a run's question, as
        :func:`publisher.kernel.refs.neutral_text` gives it (no bidi control, never the verified
        badge's or a span reference's look); its slug when it did not parse."""
        return neutral_text(self.doc.front.title) if self.doc is not None else self.slug


@dataclass
class SourceInfo:
    """A source behind accepted evidence: its verified check, the runs holding it, cited spans."""

    meta: SnapshotCheck
    sources_dir: Path
    holders: list[str] = field(default_factory=list)
    spans: SpanSet = field(default_factory=lambda: SpanSet({}))
    """The spans the wiki publishes of it (a live view of :attr:`WikiCheck.excerpts`)."""

    @property
    def label(self) -> str:
        """What a reader calls the source: see :func:`source_label`."""
        return source_label(self.meta.title, self.meta.url, self.meta.source_id)


_LABEL_MAX = 90


def source_label(title: str | None, url: str | None, source_id: str) -> str:
    """A readable name for a source: its title; else its site and path (``example.org/a/b``) or,
    for a local file, the file name; else its short id. Never the bare 64-hex id, which makes an
    unreadable page title, search entry and table cell. The title comes from outside (a fetched
    page's ``<title>``): it is shown as :func:`publisher.kernel.refs.neutral_text` gives it, never
    with a verified badge or a span reference's look."""
    title = neutral_text(title) if title else title
    if title and title.strip():
        return " ".join(title.split())
    if url:
        parts = urlsplit(url)
        if parts.scheme in ("http", "https") and parts.hostname:
            shown = (parts.hostname + parts.path.rstrip("/")).removeprefix("www.")
        else:
            shown = posixpath.basename(parts.path.rstrip("/")) or url
        shown = " ".join(neutral_text(unquote(shown)).split())  # a path decodes to any text
        if shown:
            return shown if len(shown) <= _LABEL_MAX else shown[: _LABEL_MAX - 1] + "…"
    return source_id[:16] + "…"


@dataclass
class WikiCheck:
    """Everything the wiki check verified, and every finding that blocks publication."""

    wiki_root: Path
    policy: Policy
    """The wiki's evidence options, resolved once (:mod:`.policy`)."""
    runs: list[RunEvidence] = field(default_factory=list)
    concepts: list[ConceptEvidence] = field(default_factory=list)
    sources: dict[str, SourceInfo] = field(default_factory=dict)
    excerpts: ExcerptTable = field(default_factory=ExcerptTable)
    findings: list[Finding] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    claims: list[Any] = field(default_factory=list)
    """Every concept claim as the claim guards found it (:class:`publisher.wiki.claims.provenance.ClaimState`)."""
    _by_rel: tuple[int, dict[str, RunEvidence]] | None = field(default=None, init=False, repr=False, compare=False)
    _reals: dict[Path, Path] = field(default_factory=dict, init=False, repr=False, compare=False)
    _texts: dict[str, str] | None = field(default=None, init=False, repr=False, compare=False)

    def snapshot_texts(self) -> dict[str, str]:
        """The verified text of every snapshot the wiki's runs hold, by source id: what concept
        prose and hand-written pages may quote (read once, when some prose quotes)."""
        if self._texts is None:
            texts: dict[str, str] = {}
            for ev in self.runs:
                folder = ev.run.sources_dir
                for path in sorted(folder.glob("src-*.json")) if folder.is_dir() else ():
                    if path.stem in texts:
                        continue
                    try:
                        texts[path.stem] = read_snapshot(folder, path.stem).text
                    except PublisherError:
                        continue  # its run's check reports it; nothing is found in a snapshot that fails
            self._texts = texts
        return self._texts

    def real_path(self, path: Path) -> Path:
        """``path`` resolved, once per path while the wiki is checked (a run's folder is named by
        discovery, by its record, by the concepts: resolving it each time walked every folder of
        its path again, thousands of times in a large wiki). Dropped when the check ends
        (:meth:`forget_real_paths`): a later reading resolves again."""
        hit = self._reals.get(path)
        if hit is None:
            hit = self._reals[path] = real_path(path)
        return hit

    def forget_real_paths(self) -> None:
        """Drop the paths :meth:`real_path` resolved."""
        self._reals.clear()

    @property
    def ok(self) -> bool:
        """No finding at all."""
        return not self.findings

    def run_by_slug(self, slug: str) -> RunEvidence | None:
        """The run with that slug, if any."""
        return next((r for r in self.runs if r.slug == slug), None)

    def run_by_rel(self, rel: str) -> RunEvidence | None:
        """The run at that wiki-relative path, if any (the first, as listed)."""
        index = self._by_rel
        if index is None or index[0] != len(self.runs):  # runs are only ever appended
            by_rel: dict[str, RunEvidence] = {}
            for run in self.runs:
                by_rel.setdefault(run.rel, run)
            index = self._by_rel = (len(self.runs), by_rel)
        return index[1].get(rel)

    def counts_by_reason(self) -> dict[str, int]:
        """How many findings carry each reason code or check id."""
        return counts_by_code(self.findings)
