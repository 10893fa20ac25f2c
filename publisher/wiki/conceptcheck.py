"""Concept files checked against the runs they name: every evidence footnote an accepted claim now.

Checks and the codes they emit: front matter valid, slug equals the file name, named runs exist
and are the runs they say (``SCHEMA_ERROR``); at least one evidence footnote (``NO_SPANS``); each
footnote reference well formed (``SCHEMA_ERROR``) and an accepted claim of a run the concept names,
as that run assembles now (``SOURCE_OUTSIDE_ACCEPTED``, or the reason its evidence failed:
``SNAPSHOT_HASH_MISMATCH`` ...); its excerpt as promoted equal to the re-slice
(``EXCERPT_MISMATCH``); the promoted block exactly what promotion writes from those runs now
(``C-PROMOTED``, :mod:`.promoted`); each footnote that cites a span exactly what promotion writes, nothing
before or after it (``C-PROSE``, ``EXCERPT_MISMATCH``); every quotation of the concept's own prose
located in the snapshots of the wiki's runs and cited through a covering span (``C-PROSE``: no
reason code where the words are a source's, ``EXCERPT_MISMATCH`` where they are in none).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from ..gate.quotations import Quotation, quotation_findings, quotations, quotations_around
from ..kernel import _fs
from ..kernel.checkids import CheckId
from ..kernel.errors import PublisherError
from ..kernel.findings import Finding
from ..kernel.reasons import Reason
from ..kernel.refs import SpanRef, format_ref
from .concepts import GENERATED_BEGIN, GENERATED_END, ConceptDoc, EvidenceFootnote, parse_concept
from .discover import relative
from .evidence import ConceptEvidence, RunEvidence, WikiCheck
from .promoted import BlockCache, promoted_findings, render_into

__all__ = [
    "PROSE_CHECK",
    "check_concept",
    "check_concept_text",
    "concept_folder",
    "concept_quotations",
    "parse_concept_text",
    "read_concept_file",
    "read_concepts",
    "render_ahead",
]

PROSE_CHECK = CheckId.PAGE_PROSE
"""The check of prose, as the site's allow-list of pages names it: quotations and the form of
footnotes that cite a span."""


def check_concept(
    ce: ConceptEvidence,
    wiki: WikiCheck,
    run_for: Callable[[str], RunEvidence | None],
    *,
    blocks: BlockCache | None = None,
) -> None:
    """Every check of one parsed concept; findings go to ``wiki.findings``. ``blocks`` shares the
    promoted blocks rendered for the other concepts of one pass (:class:`~.promoted.BlockCache`)."""
    doc = ce.doc
    if doc is None:
        return
    add = wiki.findings.append
    before = len(wiki.findings)
    if doc.front.concept != ce.slug:
        add(
            Finding(
                Reason.SCHEMA_ERROR, ce.rel, f"front matter names concept {doc.front.concept!r}, file is {ce.slug!r}"
            )
        )
    named: list[RunEvidence] = []
    complete = True
    for entry in doc.front.runs:
        ev = run_for(entry.path)
        if ev is None or not ev.assembled:
            why = (
                "which is not a run with an outputs/result.json inside the wiki"
                if ev is None
                else "which cannot be assembled (see its own finding)"
            )
            add(Finding(Reason.SCHEMA_ERROR, ce.rel, f"names run {entry.run!r} at {entry.path}, {why}"))
            complete = False
            continue
        if ev.slug != entry.run:
            add(Finding(Reason.SCHEMA_ERROR, ce.rel, f"run at {entry.path} is {ev.slug!r}, not {entry.run!r}"))
            complete = False
        if entry.inputs_hash is not None and entry.inputs_hash != ev.inputs_hash:
            wiki.notices.append(f"{ce.rel}: run {entry.run} was re-assembled since promotion; re-promote to refresh")
        named.append(ev)
    if not doc.footnotes:
        add(Finding(Reason.NO_SPANS, ce.rel, "no evidence footnote: an empty evidence set is not a pass"))
    lines = doc.body.split("\n")
    for note in doc.footnotes:
        line = doc.file_line(note.first)
        at_note = len(wiki.findings)
        if note.error is not None:
            add(Finding(Reason.SCHEMA_ERROR, ce.rel, note.error, label=note.label, line=line))
        for ref in note.refs:
            _check_ref(wiki, ce, named, note.label, line, ref)
        if len(wiki.findings) == at_note:
            _check_promoted_form(wiki, ce, note, lines[note.first : note.last], line, blocks)
    if complete and not any(_has_findings(wiki, ev) for ev in named):
        # C-PROMOTED: the block is what promotion writes now. Skipped while a named run is itself
        # refused: its findings name the cause, and a block rendered from it would differ anyway.
        here = {f.line: f.key for f in wiki.findings[before:] if f.file == ce.rel and f.line is not None}
        for finding in promoted_findings(doc, ce.rel, named, wiki, blocks=blocks):
            cause = here.get(finding.line) if finding.line is not None else None
            wiki.findings.append(replace(finding, cause=cause) if cause is not None else finding)
    _check_quotations(wiki, ce, doc)


def render_ahead(
    ce: ConceptEvidence, wiki: WikiCheck, run_for: Callable[[str], RunEvidence | None], blocks: BlockCache
) -> None:
    """Render into ``blocks`` the promoted block :func:`check_concept` compares for ``ce`` when
    every run it names is found, assembled, named by its slug and not refused (the block is
    compared only then); nothing else is read and no finding is made. The wiki check does this
    while its workers still parse other concepts, and hands ``blocks`` to the checks only while
    no other run has been checked since."""
    doc = ce.doc
    if doc is None or not doc.front.runs:
        return
    runs: list[RunEvidence] = []
    for entry in doc.front.runs:
        ev = run_for(entry.path)
        if ev is None or not ev.assembled or ev.slug != entry.run or _has_findings(wiki, ev):
            return
        runs.append(ev)
    render_into(runs, wiki, blocks)


def _has_findings(wiki: WikiCheck, ev: RunEvidence) -> bool:
    """Whether the wiki check already refuses ``ev`` (a finding on the run or a file in it)."""
    inside = ev.rel + "/"
    return any(f.run == ev.rel or f.file.startswith(inside) for f in wiki.findings)


def _check_promoted_form(
    wiki: WikiCheck,
    ce: ConceptEvidence,
    note: EvidenceFootnote,
    raw: list[str],
    line: int,
    blocks: BlockCache | None = None,
) -> None:
    """C-PROSE, ``EXCERPT_MISMATCH``: a footnote that cites a span is exactly what promotion
    writes, ``[^label]: src-…#start-end "excerpt"`` on one line with the excerpt as the re-slice,
    nothing before or after it. The page shows the sealed excerpt and its verified look in the
    footnote's place, so any words of the author's own there would stand beside it as verified.
    ``blocks`` keeps that line for the other concepts of the pass holding the same footnote."""
    if len(note.refs) == 1 and len(raw) == 1:
        ref = note.refs[0]
        form = (note.label, ref.source_id, ref.start, ref.end)
        promoted = blocks.forms.get(form) if blocks is not None else None
        if promoted is None and (ref.source_id, ref.start, ref.end) in wiki.excerpts:
            excerpt = wiki.excerpts[(ref.source_id, ref.start, ref.end)]
            promoted = f"[^{note.label}]: {format_ref(ref.source_id, ref.start, ref.end, excerpt)}"
            if blocks is not None:
                blocks.forms[form] = promoted
        if promoted is not None and raw[0].removesuffix("\r") == promoted:
            return
    detail = (
        "a footnote that cites a span must be exactly what promotion writes (one reference and "
        "its excerpt as promoted, on one line): nothing before or after it"
    )
    first = note.refs[0] if note.refs else None
    wiki.findings.append(
        Finding(
            Reason.EXCERPT_MISMATCH,
            ce.rel,
            detail,
            label=note.label,
            line=line,
            check=PROSE_CHECK,
            source_id=first.source_id if first else None,
            start=first.start if first else None,
            end=first.end if first else None,
        )
    )


def _generated_lines(body: str) -> range:
    """The 0-based body lines of the generated block (markers included), empty without one."""
    lines = body.split("\n")
    begin = next((n for n, text in enumerate(lines) if GENERATED_BEGIN in text), None)
    end = next((n for n, text in enumerate(lines) if GENERATED_END in text), None)
    return range(begin, end + 1) if begin is not None and end is not None and begin <= end else range(0)


def concept_quotations(doc: ConceptDoc) -> tuple[Quotation, ...]:
    """The quotations of a concept's own prose, its generated block (promotion's) left out (and
    not parsed where it stands apart from the prose: :func:`~publisher.gate.quotations.quotations_around`)."""
    block = _generated_lines(doc.body)
    if not block:
        return tuple(quotations(doc.body, skip=block.__contains__))
    return tuple(quotations_around(doc.body, block))


def _check_quotations(wiki: WikiCheck, ce: ConceptEvidence, doc: ConceptDoc) -> None:
    """C-PROSE over the concept's own prose (the generated block is promotion's): every quotation
    (:mod:`publisher.gate.quotations`) located in the snapshots of the wiki's runs, and cited
    through an evidence footnote whose span covers it, or refused."""
    found = ce.quotations if ce.quotations is not None else concept_quotations(doc)
    if not found:
        return
    cited: dict[str, list[tuple[str, int, int]]] = {}
    for note in doc.footnotes:
        cited.setdefault(note.label, []).extend((r.source_id, r.start, r.end) for r in note.refs)
    wiki.findings += quotation_findings(
        found,
        file=ce.rel,
        check=PROSE_CHECK,
        texts=wiki.snapshot_texts,
        cited=cited,
        line_offset=doc.body_line - 1,
        cite_in="an evidence footnote",
    )


def _failure(named: list[RunEvidence], ref: SpanRef) -> tuple[Reason, str | None] | None:
    """Why a quoted span is not accepted evidence of these runs now, when that is known.

    A claim the stored result accepted whose artifact the assembly now rejects carries that
    artifact's first finding (a tampered snapshot, a changed PDF, a broken log ...), grouped
    under the run's root finding; so does a span of a snapshot that fails to verify. A user reads
    the cause, not "not accepted".
    """
    key = (ref.source_id, ref.start, ref.end)
    for ev in named:
        rc = ev.check
        if rc is None:
            continue
        roots = {f.source_id: f.key for f in rc.findings if f.cause is None and f.check == CheckId.SNAPSHOT}
        artifacts = {
            entry["artifact_id"]
            for entry in (rc.stored or {}).get("accepted", ())
            for claim in entry["claims"]
            if (claim["source_id"], claim["start"], claim["end"]) == key
        }
        for finding in rc.assembly.findings:
            if finding.artifact_id in artifacts and finding.reason is not None:
                cause = roots.get(finding.source_id or "") or next(
                    (f.key for f in rc.findings if f.cause is None and f.check == CheckId.EVENT_LOG), None
                )
                return finding.reason, cause
        check = rc.assembly.reader.checks().get(ref.source_id)
        if check is not None and not check.ok and check.reason is not None:
            return check.reason, roots.get(ref.source_id)
    return None


def _check_ref(
    wiki: WikiCheck, ce: ConceptEvidence, named: list[RunEvidence], label: str, line: int, ref: SpanRef
) -> None:
    """One reference of a concept footnote: an accepted claim now, quoted exactly."""

    def add(reason: Reason, detail: str, cause: str | None = None) -> None:
        wiki.findings.append(
            Finding(
                reason,
                ce.rel,
                detail,
                label=label,
                source_id=ref.source_id,
                start=ref.start,
                end=ref.end,
                line=line,
                cause=cause,
            )
        )

    key = (ref.source_id, ref.start, ref.end)
    if not any(key in ev.accepted for ev in named):
        failed = _failure(named, ref)
        if failed is not None:
            add(failed[0], "quotes a claim whose evidence fails verification in its run", failed[1])
        else:
            add(
                Reason.SOURCE_OUTSIDE_ACCEPTED,
                "not an accepted claim of any run this concept names (as they assemble now)",
            )
        return
    if ref.quoted is not None and ref.quoted != wiki.excerpts[key]:
        add(Reason.EXCERPT_MISMATCH, "excerpt as promoted differs from the re-slice")


def check_concept_text(wiki: WikiCheck, text: str, rel: str, slug: str) -> list[Finding]:
    """The checks of a concept not yet on disk (promotion checks what it is about to write)."""
    before = len(wiki.findings)
    ce = parse_concept_text(text, rel, slug, wiki.wiki_root, wiki.findings)
    check_concept(ce, wiki, wiki.run_by_rel)
    found = wiki.findings[before:]
    del wiki.findings[before:]
    return found


def parse_concept_text(text: str, rel: str, slug: str, wiki_root: Path, out: list[Finding]) -> ConceptEvidence:
    """A concept's text parsed; a malformed file is a finding and a concept without a document."""
    path = wiki_root / rel
    try:
        doc: ConceptDoc | None = parse_concept(text, where=rel)
    except PublisherError as exc:
        out.append(Finding(exc.reason or Reason.SCHEMA_ERROR, rel, exc.message.removeprefix(f"{rel}: ")))
        doc = None
    return ConceptEvidence(path, rel, slug, doc)


def read_concept_file(
    path: Path, wiki_root: Path, out: list[Finding], folder_rel: str | None = None
) -> ConceptEvidence:
    """A concept file read through the fail-closed reader (no links, no FIFOs) and parsed, with
    the quotations of its prose found here too (:func:`concept_quotations`): where many concepts
    are read on the workers, the check's main process then parses nothing again."""
    rel = (folder_rel if folder_rel is not None else relative(path.parent, wiki_root)) + "/" + path.name
    try:
        text = _fs.read_regular(path, follow_symlinks=False).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        out.append(Finding(Reason.SCHEMA_ERROR, rel, f"cannot be read as UTF-8 ({exc})"))
        return ConceptEvidence(path, rel, path.stem, None)
    ce = parse_concept_text(text, rel, path.stem, wiki_root, out)
    if ce.doc is not None:
        ce.quotations = concept_quotations(ce.doc)
    return ce


def read_concepts(paths: list[str], wiki_root: str, folders: list[str]) -> list[tuple[ConceptEvidence, list[Finding]]]:
    """Read and parse concept files (a worker's unit of work); each with its own findings.

    ``folders`` holds each file's folder relative to the wiki root.
    """
    out = []
    for path, folder in zip(paths, folders, strict=True):
        findings: list[Finding] = []
        out.append((read_concept_file(Path(path), Path(wiki_root), findings, folder), findings))
    return out


def concept_folder(path: Path, wiki_root: Path, cache: dict[Path, str]) -> str:
    """The folder of a concept file relative to the wiki root, resolved once per folder."""
    folder = cache.get(path.parent)
    if folder is None:
        folder = cache[path.parent] = relative(path.parent, wiki_root)
    return folder
