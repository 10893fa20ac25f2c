"""Concept files checked against the runs they name: every evidence footnote an accepted claim now.

Checks and the codes they emit: front matter valid, slug equals the file name, named runs exist
and are the runs they say (``SCHEMA_ERROR``); at least one evidence footnote (``NO_SPANS``); each
footnote reference well formed (``SCHEMA_ERROR``) and an accepted claim of a run the concept names,
as that run assembles now (``SOURCE_OUTSIDE_ACCEPTED``, or the reason its evidence failed:
``SNAPSHOT_HASH_MISMATCH`` ...); its excerpt as promoted equal to the re-slice
(``EXCERPT_MISMATCH``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..kernel import _fs
from ..kernel.checkids import CheckId
from ..kernel.errors import PublisherError
from ..kernel.findings import Finding
from ..kernel.reasons import Reason
from ..kernel.refs import SpanRef
from .concepts import ConceptDoc, parse_concept
from .discover import relative
from .evidence import ConceptEvidence, RunEvidence, WikiCheck

__all__ = [
    "check_concept",
    "check_concept_text",
    "concept_folder",
    "parse_concept_text",
    "read_concept_file",
    "read_concepts",
]


def check_concept(ce: ConceptEvidence, wiki: WikiCheck, run_for: Callable[[str], RunEvidence | None]) -> None:
    """Every check of one parsed concept; findings go to ``wiki.findings``."""
    doc = ce.doc
    if doc is None:
        return
    add = wiki.findings.append
    if doc.front.concept != ce.slug:
        add(
            Finding(
                Reason.SCHEMA_ERROR, ce.rel, f"front matter names concept {doc.front.concept!r}, file is {ce.slug!r}"
            )
        )
    named: list[RunEvidence] = []
    for entry in doc.front.runs:
        ev = run_for(entry.path)
        if ev is None or not ev.assembled:
            why = (
                "which is not a run with an outputs/result.json inside the wiki"
                if ev is None
                else "which cannot be assembled (see its own finding)"
            )
            add(Finding(Reason.SCHEMA_ERROR, ce.rel, f"names run {entry.run!r} at {entry.path}, {why}"))
            continue
        if ev.slug != entry.run:
            add(Finding(Reason.SCHEMA_ERROR, ce.rel, f"run at {entry.path} is {ev.slug!r}, not {entry.run!r}"))
        if entry.inputs_hash is not None and entry.inputs_hash != ev.inputs_hash:
            wiki.notices.append(f"{ce.rel}: run {entry.run} was re-assembled since promotion; re-promote to refresh")
        named.append(ev)
    if not doc.footnotes:
        add(Finding(Reason.NO_SPANS, ce.rel, "no evidence footnote: an empty evidence set is not a pass"))
    for note in doc.footnotes:
        line = doc.file_line(note.first)
        if note.error is not None:
            add(Finding(Reason.SCHEMA_ERROR, ce.rel, note.error, label=note.label, line=line))
        for ref in note.refs:
            _check_ref(wiki, ce, named, note.label, line, ref)


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
    """A concept file read through the fail-closed reader (no links, no FIFOs) and parsed."""
    rel = (folder_rel if folder_rel is not None else relative(path.parent, wiki_root)) + "/" + path.name
    try:
        text = _fs.read_regular(path, follow_symlinks=False).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        out.append(Finding(Reason.SCHEMA_ERROR, rel, f"cannot be read as UTF-8 ({exc})"))
        return ConceptEvidence(path, rel, path.stem, None)
    return parse_concept_text(text, rel, path.stem, wiki_root, out)


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
